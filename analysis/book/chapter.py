"""What a chapter notebook calls: load its datasets, run its grids, say how it ran, and summarise comparisons.

A chapter names its runs as (dataset, sampler) pairs. :func:`simulate` runs them through :func:`analysis.experiment.grid.run`
(with the cell cache) and concatenates the tables; :func:`banner` says visibly when the chapter ran on synthetic
stand-ins or with parameters smaller than the paper's; :func:`record_provenance` leaves a JSON note of the data
and parameters under ``$BOOK_BUILD_DIR/provenance`` for the book's provenance page.
"""

from __future__ import annotations

import html
import json
from dataclasses import fields, replace
import re
import os
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import __version__
from analysis.data import datasets
from analysis.paper import tables
from analysis.data.annotations import AnnotationDataset, keep_raters
from analysis.data.synthetic import base_name
from analysis.errors import TopologyError
from analysis.book.glue import PlainText, glue_text  # noqa: F401 (chapters glue through chapter)
from analysis.experiment.grid import PAPER_BUDGETS, PAPER_EPSILONS, PAPER_KS, PAPER_N_SAMPLES
from analysis.experiment.workers import one_blas_thread
from analysis.io import write_atomic
from analysis.engine.samplers import allowed_samplers, default_sampler, raters_available
from analysis.experiment.choices import BOOK, Choices
from analysis.paper.tables import (Table, budget_ratios, compare_runs, curve_spread, imitates,  # noqa: F401
                             null_spread_ratio)
from analysis.wording import counted, listed

BUILD_ENV = "BOOK_BUILD_DIR"


def samplers_for(ds: AnnotationDataset) -> list[str]:
    """The samplers a chapter runs on a dataset: those its design allows
    (:func:`analysis.engine.samplers.allowed_samplers`), S4 only where it is the one that keeps raters across items
    (on a fully crossed table it is S1's law, on batches S3 keeps them per batch)."""
    return [s for s in allowed_samplers(ds) if s != "S4" or default_sampler(ds) == "S4"]


def sampler_comparisons(data: list[AnnotationDataset]) -> list[tuple[AnnotationDataset, str, str]]:
    """(dataset, sampler that models raters across items, sampler that does not) for each dataset that has one:
    S1 against S2 on fully crossed data, S3 against S2 on batched data, S4 against S2 on any other design where
    raters rate several items; none where every rater rated a single item."""
    pairs = []
    for ds in data:
        modelled = default_sampler(ds)
        if modelled != "S2":
            pairs.append((ds, modelled, "S2"))
    if data and not pairs:
        raise TopologyError(f"no sampler comparison is possible: in {', '.join(ds.name for ds in data)} every rater "
                            "rated a single item, so no sampler can keep raters across items")
    return pairs


def load(name_or_path: str, **columns) -> AnnotationDataset:
    """A registered dataset or a file; ``columns`` are item=, rater=, label=, batch= for files. A missing column is
    named with the chapter's parameters (``-p item COLUMN``), not the command line's flags."""
    from analysis.data.reading import COLUMN_FLAGS
    from analysis.errors import DataError

    parameters = ("Name the right ones with the chapter's parameters: "
                  'PARAMS="-p item COLUMN -p rater COLUMN -p label COLUMN".')
    try:
        return datasets.load(name_or_path, **{k: v for k, v in columns.items() if v is not None})
    except DataError as err:
        if COLUMN_FLAGS not in str(err):
            raise
        raise DataError(str(err).replace(COLUMN_FLAGS, parameters)) from None


def load_available(names: list[str]) -> tuple[list[AnnotationDataset], list[str]]:
    """Load the named datasets that are in the cache; return them and the names that are not."""
    loaded, missing = [], []
    for name in names:
        (loaded.append(datasets.load(name)) if datasets.available(name) else missing.append(name))
    return loaded, missing


def cut_raters(ds: AnnotationDataset, n_raters: int, seed: int) -> AnnotationDataset:
    """The dataset with all its items and ``n_raters`` raters (RQ4)."""
    return keep_raters(ds, n_raters, seed)


def scale_notes(budgets, ks, n_samples) -> list[str]:
    """How the parameters fall short of the paper's grid at the ε simulated (empty when they match or exceed it)."""
    notes = []
    if n_samples < PAPER_N_SAMPLES:
        notes.append(f"{n_samples} replicates per hypothesis instead of {PAPER_N_SAMPLES}")
    for name, ours, paper in (("budgets", budgets, PAPER_BUDGETS), ("K values", ks, PAPER_KS)):
        missing = sorted(set(paper) - set(ours))
        if missing:
            notes.append(f"{name} without {', '.join(f'{v:g}' for v in missing)}")
    return notes


class Banner:
    """A visible note at the top of a chapter (renders as an admonition in HTML, as text elsewhere)."""

    def __init__(self, title: str, lines: list[str], kind: str = "warning"):
        self.title, self.lines, self.kind = title, lines, kind

    def _repr_html_(self) -> str:
        items = "".join(f"<li>{tables.code_html(html.escape(line))}</li>" for line in self.lines)
        return (f'<div class="admonition {self.kind}"><p class="admonition-title">{html.escape(self.title)}</p>'
                f"<ul>{items}</ul></div>")

    def __repr__(self) -> str:
        return "\n".join([self.title] + [f"- {line}" for line in self.lines])


def _values(values) -> str:
    values = list(values)
    return ", ".join(f"{v:g}" for v in values) if len(values) <= 6 else \
        f"{len(values)} values from {min(values):g} to {max(values):g}"


def margin_note(seed: int, n_samples: int) -> str:
    """The banner's line on the further seeds behind the verdicts' margins
    (:func:`analysis.paper.findings.margin_results`)."""
    from analysis.paper.findings import MARGIN_SEEDS, MARGIN_SHRINK

    others = [seed + i for i in range(1, MARGIN_SEEDS + 1)]
    return (f"Each verdict also reads seed{'s' if len(others) > 1 else ''} {listed(others)} (its margin over the "
            f"seeds), at the chapter's ε with {max(1, n_samples // MARGIN_SHRINK):,} replicates per hypothesis.")


def short_hashes(text: str) -> str:
    """``text`` with every sha256 cut to its first 12 hex digits and an ellipsis, as the banners show hashes (the
    provenance record keeps all 64)."""
    return re.sub(r"\b([0-9a-f]{12})[0-9a-f]{52}\b", "\\1…", text)


def banner(data: list[AnnotationDataset], budgets, ks, epsilons, n_samples, seed, perturbation: str,
           epsilon=None) -> Banner:
    """Say what the chapter ran with (ε, grid, replicates, seed, perturbation), on which data, and how it falls
    short of the paper (stand-ins, a smaller grid)."""
    lines = []
    synthetic = [ds.name for ds in data if "synthetic" in ds.provenance]
    if synthetic:
        lines.append(f"Synthetic stand-ins, not the paper's data: {', '.join(dict.fromkeys(synthetic))}. "
                     "Compare patterns with the paper, not numbers.")
        absent = [real for real, stand_in in datasets.PAPER_STAND_INS.items()
                  if any(base_name(name) == stand_in for name in synthetic) and not datasets.available(real)]
        if absent:
            lines.append(missing_sentence(absent, "this chapter runs on " + ("its stand-in" if len(absent) == 1
                                                                             else "their stand-ins")))
    paper = [ds.name for ds in data if ds.name in datasets.PAPER_STAND_INS]
    if paper:
        lines.append(f"The paper's data, from the dataset cache: {', '.join(dict.fromkeys(paper))}.")
    notes = scale_notes(budgets, ks, n_samples)
    if notes:
        lines.append("Smaller than the paper's grid, so budgets and K read off it are coarser than the paper's and "
                     "its verdicts provisional: " + "; ".join(notes) + ".")
    left_out = sorted(set(PAPER_EPSILONS) - set(epsilons))
    if left_out:
        lines.append(f"Simulated at ε = {', '.join(f'{e:g}' for e in epsilons)} only, the ε this chapter shows; the "
                     f"paper's grid adds {', '.join(f'{e:g}' for e in left_out)} (the `epsilons` parameter runs them).")
    if epsilon is not None:
        paper = "the paper's Table 1 value" if np.isclose(epsilon, tables.PAPER_EPSILON) else \
            f"the paper's Table 1 uses ε = {tables.PAPER_EPSILON:g}"
        lines.append(f"Tables and figures at ε = {epsilon:g} ({paper}).")
    lines.append(f"Grid: ε in {{{_values(epsilons)}}}; budgets N×K in {{{_values(budgets)}}}; K in {{{_values(ks)}}}; "
                 f"{n_samples:,} replicates per hypothesis" + (f"; seed {seed}" if seed is not None else "") +
                 f"; perturbation of B: {perturbation}.")
    for ds in dict.fromkeys(data):
        lines.append(f"{ds.name}: {ds.n_ratings:,} ratings, {ds.n_items:,} items, {ds.n_raters:,} raters, "
                     f"{ds.topology.kind}; sha256 {ds.sha256[:12]}; {short_hashes(ds.provenance)}")
    if synthetic or notes:
        return Banner("How this chapter ran", lines, "warning")
    return Banner("Data used", lines, "note")


def record_provenance(chapter: str, data: list[AnnotationDataset], **parameters) -> Path | None:
    """Write the chapter's data summaries and parameters to ``$BOOK_BUILD_DIR/provenance/<chapter>.json``."""
    from analysis.book import missing as gaps

    gaps.clear(chapter)  # a chapter's first record: the gaps of an earlier run of it are gone
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
                         "design": ds["topology"], "sha256": ds["sha256"],
                         "replicates": params.get("n_samples"), "seed": params.get("seed"),
                         "perturbation": params.get("perturbation", "–")})
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------------------------ chapter setup

SWITCH_NAMES = tuple(f.name for f in fields(Choices))  # the paper comparison's switches, declared once
PARAMETER_NAMES = ("epsilon", "epsilons", "appendix_epsilon", "budgets", "ks", "metrics", "n_samples", "seed",
                   "n_jobs", *SWITCH_NAMES, "scheduler", "item", "rater", "label", "batch")
COLUMN_NAMES = ("item", "rater", "label", "batch")


def parameters(namespace: dict) -> dict:
    """The grid and file parameters a chapter's ``parameters`` cell defined (pass ``globals()``)."""
    return {name: namespace[name] for name in PARAMETER_NAMES if name in namespace}


def grid_epsilons(epsilons, shown) -> list[float]:
    """The epsilons a chapter simulates: ``epsilons`` where given, else the ones it shows (``shown``: its ε, and
    RQ2's appendix ε); no table or figure reads the paper's others, and the banner names them."""
    return sorted({*(shown if epsilons is None else epsilons)})


class Setup:
    """A chapter's data and parameters: what every RQ chapter's first code cell used to spell out.

    ``setup.data`` holds the loaded datasets, ``setup.missing`` the names of optional registered datasets that are
    not in the cache, ``setup.grid_epsilons`` the epsilons simulated (:func:`grid_epsilons`; the chapter's ε always
    included), ``setup.choices`` the global switches (:class:`analysis.experiment.choices.Choices`, from the parameters
    named in :data:`SWITCH_NAMES`, the book's :data:`analysis.experiment.choices.BOOK` where a chapter does not name one):
    a stand-in is replaced by the variant they name (binary labels, v3).
    """

    def __init__(self, chapter: str, names: list[str], optional: bool = False, extra_data=(), **params):
        self.chapter = chapter
        self.params = {"metrics": "all", "n_jobs": 1, "seed": 0, "n_samples": PAPER_N_SAMPLES, **params}
        self.choices = replace(BOOK, **{k: self.params[k] for k in SWITCH_NAMES if self.params.get(k) is not None})
        self.params.update({k: getattr(self.choices, k) for k in SWITCH_NAMES})
        names = [self.choices.dataset(name) for name in names]
        columns = {k: self.params.get(k) for k in COLUMN_NAMES}
        if optional:
            self.data, self.missing = load_available(names)
        else:
            self.data, self.missing = [load(name, **columns) for name in names], []
        self.data += list(extra_data)
        p = self.params
        self.epsilon = p["epsilon"]
        # the appendix's ε is shown only beside the paper's appendix, for data that are or imitate the paper's
        appendix = p.get("appendix_epsilon") is not None and any(imitates(ds.name) for ds in self.data)
        shown = [p["epsilon"]] + ([p["appendix_epsilon"]] if appendix else [])
        self.grid_epsilons = sorted({*grid_epsilons(p.get("epsilons"), shown), p["epsilon"]})
        self.perturbation = p["perturbation"]
        self.ks_note = self._stop_at_raters()

    def _stop_at_raters(self) -> str | None:
        """On a user's own file the K grid stops at the raters its data have (a larger K would only redraw the same
        people, and a finding resting on it would describe no study the data can speak for); the banner's line
        saying so, or None where nothing is cut."""
        own = [ds for ds in self.data if ds.provenance.startswith("file ")]
        if not own or "ks" not in self.params:
            return None
        most = max(raters_available(ds, s) for ds in own for s in samplers_for(ds))
        ks = list(self.params["ks"])
        kept = [k for k in ks if k <= most]
        if not kept or kept == ks:
            return None
        self.params["ks"] = kept
        return (f"K stops at {most}, the most raters a drawn item of {', '.join(ds.name for ds in own)} comes from: "
                f"K = {', '.join(str(k) for k in ks if k > most)} of the `ks` parameter would redraw the same people.")

    def add(self, ds: AnnotationDataset) -> AnnotationDataset:
        self.data.append(ds)
        return ds

    def record(self, **extra) -> None:
        p = self.params
        record_provenance(self.chapter, self.data, budgets=p["budgets"], ks=p["ks"], epsilons=self.grid_epsilons,
                          n_samples=p["n_samples"], seed=p["seed"],
                          **{k: getattr(self.choices, k) for k in SWITCH_NAMES}, **extra)
        from analysis.book import missing as gaps

        gaps.record(self.chapter, gaps.WHOLE, gaps.paper_data_missing(self.data))

    def banner(self, margins: bool = True, runs: str = "") -> Banner:
        """The chapter's banner (:func:`banner`) with its choices, and the further seeds of its verdicts' margins
        where it has verdicts (``margins``); ``runs`` says what else the page runs, where the grid line does not."""
        p = self.params
        found = banner(self.data, p["budgets"], p["ks"], self.grid_epsilons, p["n_samples"], p["seed"],
                       self.perturbation, self.epsilon)
        at = -len(dict.fromkeys(self.data)) or len(found.lines)
        found.lines[at:at] = [f"Choices the paper leaves unstated (methods page): {self.choices.label()}.",
                              *([margin_note(p["seed"], p["n_samples"])] if margins else []), *([runs] if runs else [])]
        if self.ks_note:
            found.lines.insert(0, self.ks_note)
        return found

    def figure_caption(self, results: pd.DataFrame, runs, paper_dataset: str, paper_figure: str,
                       regenerated: bool | None = None) -> str:
        """:func:`analysis.paper.tables.figure_caption` under the chapter's averaging."""
        return tables.figure_caption(results, runs, paper_dataset, paper_figure, regenerated, self.choices.averaging)

    def glue_notes(self, prefix: str, results: pd.DataFrame, appendix_epsilon: float | None = None,
                   data: list[AnnotationDataset] | None = None) -> None:
        """See :func:`glue_notes`; ``data``: the datasets behind ``results``, where not all of the chapter's."""
        glue_notes(prefix, results, self.data if data is None else data, self.epsilon, appendix_epsilon)

    def simulate(self, pairs, perturbation=None, epsilons=None, budgets=None, ks=None, seed=None,
                 n_samples=None) -> pd.DataFrame:
        """Run (dataset, sampler) pairs on the chapter's grid (or a part of it, for an extra comparison; another
        seed or fewer replicates, for the verdicts' margins), under the chapter's switches: with
        ``metrics = "all"``, precision, recall and F1 are the chosen averaging's, under the paper's column names
        (:func:`analysis.paper.effect_sizes.select`), read from cells that hold every averaging, as the why-chapter
        simulates them: a cell both draw is drawn once (its cache key names the metrics it holds)."""
        from analysis.paper.effect_sizes import ALL_AVERAGINGS, select

        p = self.params
        every = p["metrics"] in (None, "all") or list(p["metrics"]) == ["all"]
        found = tables.simulate(pairs, budgets or p["budgets"], ks or p["ks"], epsilons or self.grid_epsilons,
                         ALL_AVERAGINGS if every else p["metrics"], n_samples or p["n_samples"],
                         p["seed"] if seed is None else seed, p["n_jobs"],
                         choices=replace(self.choices, perturbation=perturbation or self.perturbation),
                         scheduler=p.get("scheduler"))
        return select(found, self.choices.averaging) if every else found

    def effect_sizes(self, seeds, n_samples: int, appendix_epsilon: float):
        """Our Δ at the paper's own cells (both tables) for the datasets that are or imitate the paper's, under the
        chapter's switches, for each seed (:mod:`analysis.paper.effect_sizes`), from cells that hold every averaging
        (:meth:`simulate`); None when no dataset does. Returns the :func:`analysis.paper.effect_sizes.effect_sizes`
        frame."""
        from analysis.paper import effect_sizes as es

        data = {imitates(ds.name): ds.name for ds in self.data if imitates(ds.name)}
        cells = es.paper_cells(appendix_epsilon=appendix_epsilon)
        cells = cells[cells["dataset"].isin(list(data))]
        if cells.empty:
            return None
        found = es.simulate(cells, seeds=seeds, n_samples=n_samples,
                            choices=replace(self.choices, perturbation=self.perturbation), data=data,
                            n_jobs=self.params["n_jobs"],
                            metrics=es.ALL_AVERAGINGS, loaded={ds.name: ds for ds in self.data})
        return es.effect_sizes(cells, es.select(found, self.choices.averaging))

    def comparisons(self, data=None) -> list[tuple[tuple[str, str], tuple[str, str]]]:
        """((dataset, modelled sampler), (dataset, S2)) for each dataset whose design allows a comparison
        (none for sparse data, which only S2 can sample)."""
        chosen = self.data if data is None else data
        try:
            found = sampler_comparisons(chosen) if chosen else []
        except TopologyError:
            found = []
        return [((ds.name, modelled), (ds.name, independent)) for ds, modelled, independent in found]

    def dataset(self, name: str) -> AnnotationDataset:
        """A loaded dataset by its name, or by the name of the stand-in the switches replaced."""
        return next(ds for ds in self.data if ds.name in (name, self.choices.dataset(name)))

    def pairs(self, comparisons=None, data=None) -> list[tuple[AnnotationDataset, str]]:
        """The (dataset, sampler) runs: both samplers of each comparison, else every sampler each design allows."""
        chosen = self.data if data is None else data
        if comparisons:
            runs = dict.fromkeys(run for comparison in comparisons for run in comparison)
            return [(self.dataset(name), sampler) for name, sampler in runs]
        return [(ds, sampler) for ds in chosen for sampler in samplers_for(ds)]


def missing_sentence(missing: list[str], consequence: str = "this section has nothing to show") -> str:
    """One sentence: which datasets are missing from the cache, what that means, and how to get them."""
    names = ", ".join(f"`{m}`" for m in missing)
    one = len(missing) == 1
    return (f"{names} {'is' if one else 'are'} not in the dataset cache, so {consequence}; "
            f"run `make data` to download and verify {'it' if one else 'them'}.")


def setup(chapter: str, names: list[str], namespace: dict | None = None, optional: bool = False, **params) -> Setup:
    """Load a chapter's datasets with the parameters of its ``parameters`` cell (``namespace=globals()``). The
    chapter's process runs BLAS on one thread from then on (:func:`analysis.experiment.workers.one_blas_thread`)."""
    one_blas_thread()
    return Setup(chapter, names, optional=optional, **{**parameters(namespace or {}), **params})


def effects_note(effects, seeds, n_samples: int, appendix_epsilon: float) -> str:
    """One paragraph on the effect-size comparison: the count of cells within the factor per table, as median
    (min–max) over seeds; without paper cells, what is missing and no count."""
    from analysis.paper import effect_sizes as es

    if effects is None:
        return ("None of these datasets is one of the paper's or its stand-in, so no cell of the paper's tables "
                "can be set beside ours.")
    found = es.summary(effects).query("by == 'all'").set_index("table")["spread"]
    appendix = (f" and {found['appendix']} of the appendix's (read at ε = {appendix_epsilon:g}, the ε the "
                "identities infer, {ref}`chapter-why`)") if "appendix" in found else ""
    return (f"Over {counted(len(seeds), 'seed')} of {n_samples} replicates each, our Δ lies within "
            f"×{es.FACTOR:g} of the paper's in {found.get('table1', 'none')} of Table 1's cells{appendix}, as median (smallest–largest) "
            "over the seeds; the tables give the count per run and per metric.")


def effects_tables(effects) -> list:
    """The effect-size counts per run and per metric, Table 1 beside the appendix (two tables), then each table's
    cells one by one (:func:`analysis.paper.effect_sizes.cells_table`)."""
    from analysis.paper import effect_sizes as es

    if effects is None:
        return []
    counts = es.summary(effects)
    out = []
    for by, title in (("run", "run"), ("metric", "metric")):
        wide = counts[counts["by"] == by].pivot(index="group", columns="table", values="spread")
        wide = wide.reindex(list(dict.fromkeys(counts.loc[counts["by"] == by, "group"])))
        wide = wide[[t for t in es.TABLES if t in wide.columns]].rename_axis(columns=None)
        wide = wide.rename(columns={"table1": "Table 1", "appendix": "appendix"}).reset_index()
        out.append(Table(wide.rename(columns={"group": title}), f"cells with Δ within ×{es.FACTOR:g}, per {title}: "
                                                                "median (min–max) over seeds"))
    return out + [es.cells_table(effects, which) for which in es.TABLES]


def recall_note(averaging: str) -> str:
    """What the figures' Recall panel shows under the chapter's averaging (weighted and micro recall are accuracy)."""
    if averaging == "macro":
        return "Recall (c) is macro-averaged, so it differs from Accuracy (a)."
    return "Recall (c) equals Accuracy (a)."


def smoothing_note(smoothing: float) -> str:
    """What the chosen KL smoothing makes of one differing label at K = 1."""
    return (f"This chapter adds s = {smoothing:g}, so a differing label costs ln(1/s) = {np.log(1 / smoothing):.1f} "
            "nats.")


# ------------------------------------------------------------------------------------------ provenance page

def read_runs() -> pd.DataFrame:
    """One row per executed chapter of the book build: its papermill parameters and when it ran."""
    build = os.environ.get(BUILD_ENV)
    rows = []
    for path in sorted(Path(build).glob("src/notebooks/*.ipynb")) if build else []:
        if path.stem == "provenance" or path.name.startswith("."):  # a chapter still executing (execute_chapter)
            continue
        meta = json.loads(path.read_text()).get("metadata", {}).get("papermill", {})
        params = meta.get("parameters") or {}
        rows.append({"chapter": path.stem,
                     "parameters changed from the defaults": "; ".join(f"{k} = {v}" for k, v in params.items())
                     or "none (the chapter's own defaults)",
                     "executed": str(meta.get("end_time") or "").replace("T", " ")[:19] or "–",
                     "seconds": round(float(meta["duration"])) if meta.get("duration") is not None else None})
    return pd.DataFrame(rows, columns=["chapter", "parameters changed from the defaults", "executed", "seconds"])


WATERMARK_PACKAGES = ("numpy", "numba", "pandas", "scipy", "matplotlib", "seaborn", "jupyter-book", "myst-nb",
                      "papermill", "jupytext")


def watermark() -> pd.DataFrame:
    """The versions of Python and of the packages that decide the book's numbers and pages."""
    import platform
    from importlib.metadata import PackageNotFoundError, version

    rows = [{"package": "python", "version": platform.python_version()},
            {"package": "analysis (this book)", "version": __version__}]
    for name in WATERMARK_PACKAGES:
        try:
            rows.append({"package": name, "version": version(name)})
        except PackageNotFoundError:
            rows.append({"package": name, "version": "not installed"})
    rows.append({"package": "platform", "version": platform.platform()})
    return pd.DataFrame(rows)


def data_note(data: list[AnnotationDataset]) -> str:
    """Why our numbers may differ from the paper's, as far as the data go (Markdown for ``{glue:md}``)."""
    synthetic = [ds.name for ds in dict.fromkeys(data) if "synthetic" in ds.provenance]
    other = [ds.name for ds in dict.fromkeys(data) if "synthetic" not in ds.provenance and imitates(ds.name) is None]
    notes = []
    if synthetic:
        notes.append(f"These runs use synthetic stand-ins ({', '.join(synthetic)}), not the paper's data, so their "
                     "numbers can only agree with the paper's in direction; where they differ, the stand-ins' "
                     "rater and item effects are the first suspect.")
    if other:
        notes.append(f"{', '.join(other)} {'is' if len(other) == 1 else 'are'} not one of the paper's datasets, "
                     "so there are no paper values to set beside these numbers.")
    notes.append("The perturbation rule, the null and the metric definitions also move numbers; "
                 "{doc}`../book/differences` lists each with its direction and, where measured, its size.")
    return " ".join(notes)


def nearest(values, target: int) -> int:
    """The value of a grid closest to ``target`` (on a log scale; the smaller one on ties)."""
    values = sorted(values)
    return min(values, key=lambda v: (abs(np.log(v) - np.log(target)), v))


def glue_notes(prefix: str, results: pd.DataFrame, data: list[AnnotationDataset], epsilon: float,
               appendix_epsilon: float | None = None) -> None:
    """Glue the sentences every RQ chapter uses: ``<prefix>_paper_note`` (what the Table 1 comparison shows),
    ``<prefix>_appendix_note`` (ours at ``appendix_epsilon``, by default ``epsilon``), ``<prefix>_data_note``
    (why our numbers may differ) and ``<prefix>_data`` (plain text: what the run used, for the intro's table)."""
    at = epsilon if appendix_epsilon is None else appendix_epsilon
    glue_text(**{f"{prefix}_paper_note": tables.paper_note(results, epsilon),
                 f"{prefix}_appendix_note": tables.paper_note(results, at, "appendix"),
                 f"{prefix}_data_note": data_note(data), f"{prefix}_data": PlainText(data_kind(data))})


def data_kind(data: list[AnnotationDataset]) -> str:
    """What a run used, in words: synthetic stand-ins, the paper's data, other real data or a user's file, with the
    dataset names; "no data" where nothing ran."""
    kinds = {"stand-in": "synthetic stand-ins", "registry": "real data", "file": "a user's file"}
    found: dict[str, list[str]] = {}
    for ds in dict.fromkeys(data):
        kind = kinds[tables.origin(ds)]
        if kind == "real data" and imitates(ds.name):
            kind = "the paper's data"
        found.setdefault(kind, []).append(ds.name)
    return "; ".join(f"{kind} ({', '.join(names)})" for kind, names in found.items()) or "no data"


# ------------------------------------------------------------------------------------------ public text

def redact(text: str) -> str:
    """``text`` without the paths of the machine that built the book: the dataset cache becomes
    ``$ANNOTATION_DATA_DIR``, the cell cache ``$ANALYSIS_CACHE_DIR``, the build folder ``$BOOK_BUILD_DIR``, the
    home folder ``~`` (for messages shown on a page)."""
    places = [(str(datasets.data_dir()), f"${datasets.DATA_ENV}"), (os.environ.get("ANALYSIS_CACHE_DIR"),
              "$ANALYSIS_CACHE_DIR"), (os.environ.get(BUILD_ENV), f"${BUILD_ENV}"),
              (str(Path(__file__).resolve().parents[2]), "."), (str(Path.home()), "~")]
    for path, name in sorted(((p, n) for p, n in places if p and len(p) > 1), key=lambda pn: -len(pn[0])):
        text = text.replace(path, name)
    return text


