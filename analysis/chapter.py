"""What a chapter notebook calls: load its datasets, run its grids, say how it ran, and summarise comparisons.

A chapter names its runs as (dataset, sampler) pairs. :func:`simulate` runs them through :func:`analysis.grid.run`
(with the cell cache) and concatenates the tables; :func:`banner` says visibly when the chapter ran on synthetic
stand-ins or with parameters smaller than the paper's; :func:`record_provenance` leaves a JSON note of the data
and parameters under ``$BOOK_BUILD_DIR/provenance`` for the book's provenance page.
"""

from __future__ import annotations

import html
import json
import re
import os
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import __version__, datasets
from analysis.data import BATCHED, FULLY_CROSSED, AnnotationDataset, keep_raters
from analysis.errors import ParameterError, TopologyError
from analysis.metrics import METRIC_LABELS, METRICS
from analysis.grid import PAPER_BUDGETS, PAPER_EPSILONS, PAPER_KS, run, table1, write_atomic

PAPER_N_SAMPLES = 1000
BUILD_ENV = "BOOK_BUILD_DIR"


def samplers_for(ds: AnnotationDataset) -> list[str]:
    """The samplers a dataset's design allows: S1 and S2 when fully crossed, S2 and S3 when batched, else S2."""
    kind = ds.topology.kind
    return ["S1", "S2"] if kind == FULLY_CROSSED else ["S2", "S3"] if kind == BATCHED else ["S2"]


def sampler_comparisons(data: list[AnnotationDataset]) -> list[tuple[AnnotationDataset, str, str]]:
    """(dataset, sampler that models raters across items, sampler that does not) for each dataset that has one:
    S1 against S2 on fully crossed data, S3 against S2 on batched data; sparse data have none."""
    pairs = []
    for ds in data:
        samplers = samplers_for(ds)
        if len(samplers) == 2:
            modelled = "S1" if "S1" in samplers else "S3"
            pairs.append((ds, modelled, "S2"))
    if data and not pairs:
        raise TopologyError(f"no sampler comparison is possible: {', '.join(ds.name for ds in data)} "
                            f"{'is' if len(data) == 1 else 'are'} sparse, which only S2 can sample; use a fully "
                            "crossed dataset (S1 against S2) or a batched one (S3 against S2)")
    return pairs


def load(name_or_path: str, **columns) -> AnnotationDataset:
    """A registered dataset or a file; ``columns`` are item=, rater=, label=, batch= for files."""
    return datasets.load(name_or_path, **{k: v for k, v in columns.items() if v is not None})


def load_available(names: list[str]) -> tuple[list[AnnotationDataset], list[str]]:
    """Load the named datasets that are in the cache; return them and the names that are not."""
    loaded, missing = [], []
    for name in names:
        (loaded.append(datasets.load(name)) if datasets.available(name) else missing.append(name))
    return loaded, missing


def missing_banner(missing: list[str]) -> Banner | str:
    """A note naming the datasets a section could not use and how to get them (empty when none is missing)."""
    if not missing:
        return ""
    return Banner("Not in the dataset cache", [
        f"{', '.join(missing)}: not found under ${datasets.DATA_ENV} ({datasets.data_dir()}).",
        "Run `make data` (or `python -m analysis datasets fetch NAME`) to download and verify them, "
        f"or point {datasets.DATA_ENV} at a folder that holds them; this section skips them until then."])


def cut_raters(ds: AnnotationDataset, n_raters: int, seed: int) -> AnnotationDataset:
    """The dataset with all its items and ``n_raters`` raters (RQ4)."""
    return keep_raters(ds, n_raters, seed)


def simulate(pairs, budgets, ks, epsilons, metrics="all", n_samples=PAPER_N_SAMPLES, seed=0, n_jobs=1,
             cache_dir=None, perturbation="dirichlet") -> pd.DataFrame:
    """Run every (dataset, sampler) pair over the grid and return one tidy table."""
    tables = [run(ds, sampler, budgets=budgets, ks=ks, epsilons=epsilons, metrics=metrics, n_samples=n_samples,
                  seed=seed, n_jobs=n_jobs, cache_dir=cache_dir, perturbation=perturbation)
              for ds, sampler in pairs]
    return pd.concat(tables, ignore_index=True)


def scale_notes(budgets, ks, epsilons, n_samples) -> list[str]:
    """How the parameters fall short of the paper's grid (empty when they match or exceed it)."""
    notes = []
    if n_samples < PAPER_N_SAMPLES:
        notes.append(f"{n_samples} replicates per hypothesis instead of {PAPER_N_SAMPLES}")
    for name, ours, paper in (("budgets", budgets, PAPER_BUDGETS), ("K values", ks, PAPER_KS),
                              ("epsilons", epsilons, PAPER_EPSILONS)):
        missing = sorted(set(paper) - set(ours))
        if missing:
            notes.append(f"{name} without {', '.join(f'{v:g}' for v in missing)}")
    return notes


class Banner:
    """A visible note at the top of a chapter (renders as an admonition in HTML, as text elsewhere)."""

    def __init__(self, title: str, lines: list[str], kind: str = "warning"):
        self.title, self.lines, self.kind = title, lines, kind

    def _repr_html_(self) -> str:
        items = "".join(f"<li>{html.escape(line)}</li>" for line in self.lines)
        return (f'<div class="admonition {self.kind}"><p class="admonition-title">{html.escape(self.title)}</p>'
                f"<ul>{items}</ul></div>")

    def __repr__(self) -> str:
        return "\n".join([self.title] + [f"- {line}" for line in self.lines])


class BoldTable:
    """A table whose ``**value**`` cells render in bold in HTML and keep their marks as plain text."""

    def __init__(self, table: pd.DataFrame):
        self.table = table

    def _repr_html_(self) -> str:
        text = self.table.to_html(escape=True)
        return re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", text)

    def __repr__(self) -> str:
        return self.table.to_string()


def banner(data: list[AnnotationDataset], budgets, ks, epsilons, n_samples) -> Banner:
    """Say whether the chapter ran on stand-ins and at less than the paper's scale, and on which data."""
    lines = []
    synthetic = [ds.name for ds in data if "synthetic" in ds.provenance]
    if synthetic:
        lines.append(f"Synthetic stand-ins, not the paper's data: {', '.join(dict.fromkeys(synthetic))}. "
                     "Compare patterns with the paper, not numbers.")
    notes = scale_notes(budgets, ks, epsilons, n_samples)
    if notes:
        lines.append("Smaller than the paper's grid, so these numbers are not results: " + "; ".join(notes) + ".")
    for ds in dict.fromkeys(data):
        lines.append(f"{ds.name}: {ds.n_ratings:,} ratings, {ds.n_items:,} items, {ds.n_raters:,} raters, "
                     f"{ds.topology.kind}; sha256 {ds.sha256[:16]}…; {ds.provenance}")
    if synthetic or notes:
        return Banner("How this chapter ran", lines, "warning")
    return Banner("Data used", lines, "note")


def record_provenance(chapter: str, data: list[AnnotationDataset], **parameters) -> Path | None:
    """Write the chapter's data summaries and parameters to ``$BOOK_BUILD_DIR/provenance/<chapter>.json``."""
    build = os.environ.get(BUILD_ENV)
    if not build:
        return None
    note = {"chapter": chapter, "version": __version__, "parameters": parameters,
            "datasets": [{**ds.summary(), "provenance": ds.provenance} for ds in dict.fromkeys(data)]}
    path = Path(build) / "provenance" / f"{chapter}.json"
    write_atomic(path, json.dumps(note, indent=2, default=str))
    return path


def read_provenance() -> pd.DataFrame:
    """Every chapter's recorded datasets, one row per (chapter, dataset)."""
    build = os.environ.get(BUILD_ENV)
    rows = []
    for path in sorted(Path(build).glob("provenance/*.json")) if build else []:
        note = json.loads(path.read_text())
        params = note["parameters"]
        for ds in note["datasets"]:
            rows.append({"chapter": note["chapter"], "dataset": ds["name"], "ratings": ds["ratings"],
                         "items": ds["items"], "raters": ds["raters"],
                         "raters/item (min–median–max)": f"{ds['raters_per_item_min']}–"
                                                         f"{ds['raters_per_item_median']:g}–{ds['raters_per_item_max']}",
                         "topology": ds["topology"], "sha256": ds["sha256"],
                         "n_samples": params.get("n_samples"), "seed": params.get("seed")})
    return pd.DataFrame(rows)


def compare_runs(results: pd.DataFrame, first: str, second: str, epsilon: float) -> dict:
    """Cell-by-cell comparison of two runs (``dataset:sampler``) at one epsilon.

    Returns the number of shared (NK, K, metric) cells, the share where ``first`` has the higher p-value, the
    median p-value difference, and how many cells each run finds significant.
    """
    chosen = results[results["epsilon"] == epsilon].assign(run=lambda t: t["dataset"] + ":" + t["sampler"])
    a = chosen[chosen["run"] == first].set_index(["NK", "K", "metric"])["p_value"]
    b = chosen[chosen["run"] == second].set_index(["NK", "K", "metric"])["p_value"]
    shared = a.index.intersection(b.index)
    if len(shared) == 0:
        raise ParameterError(f"runs {first!r} and {second!r} share no cell at epsilon {epsilon}")
    a, b = a.loc[shared], b.loc[shared]
    differ = a != b
    return {"cells": int(len(shared)),
            "share_higher": float((a[differ] > b[differ]).mean()) if differ.any() else 0.5,
            "median_difference": float(np.median(a - b)),
            "significant_first": int((a < 0.05).sum()),
            "significant_second": int((b < 0.05).sum())}


def budget_ratios(results: pd.DataFrame, first: str, second: str, epsilon: float) -> pd.DataFrame:
    """Per metric, the smallest significant budget of two runs and their ratio (``first / second``)."""
    summary = table1(results[results["epsilon"] == epsilon])
    summary["run"] = summary["dataset"] + ":" + summary["sampler"]
    wide = summary.pivot(index="metric", columns="run", values="NK")[[first, second]].astype("Float64")
    wide["ratio"] = wide[first] / wide[second]
    wide = wide.reindex([m for m in METRICS if m in wide.index])
    wide.index = wide.index.map(METRIC_LABELS).rename("metric")
    return wide.rename(columns={first: f"smallest NK, {first}", second: f"smallest NK, {second}"})


def null_spread_ratio(results: pd.DataFrame, first: str, second: str, epsilon: float) -> pd.Series:
    """Per metric, the median over shared cells of the null standard deviation of ``first`` over ``second``."""
    chosen = results[results["epsilon"] == epsilon].assign(run=lambda t: t["dataset"] + ":" + t["sampler"])
    wide = chosen.pivot_table(index=["metric", "NK", "K"], columns="run", values="null_sd")
    ratio = (wide[first] / wide[second]).groupby("metric").median()
    ratio = ratio.reindex([m for m in METRICS if m in ratio.index])
    ratio.index = ratio.index.map(METRIC_LABELS).rename("metric")
    return ratio.rename(f"null sd {first} / {second}")


def curve_spread(results: pd.DataFrame, run_label: str, epsilon: float) -> float:
    """Median over (metric, budget) of the range of p-values across K: how far apart a run's K curves lie."""
    chosen = results[(results["epsilon"] == epsilon)
                     & (results["dataset"] + ":" + results["sampler"] == run_label)]
    ranges = chosen.groupby(["metric", "NK"])["p_value"].agg(lambda p: p.max() - p.min())
    return float(ranges.median())
