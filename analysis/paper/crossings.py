"""Where p crosses 0.05 at the paper's own cells, and the spread that sets it (the methods page, "The null hypothesis
and the p-value").

The paper's tables print, per metric, the smallest budget of its grid at which some K reaches p < 0.05, with that
cell's K, p and Δ. So at each printed cell (NK, K) the paper's p lies below 0.05 (a printed 0.050 included), and one
budget step below on its grid, at the same K, it lies at or above 0.05, or the rule would have printed the smaller
budget. :func:`crossings` sets our p beside the paper's at both cells, seed by seed, and :func:`counts` counts the
cells on the paper's side of 0.05 at each. Which side a p lies on is decided on its integer count of pairs
(:func:`below`), never on a float sum.

Where Δ agrees and the crossings do not, the spread differs. The p of the paper and ours is the share of (null,
alternative) replicate pairs whose null difference δ₀ is at least the alternative's δ: one-sided, "A is better", the
side the paper knows by construction. With δ and δ₀ normal and the null centred on 0 (its two halves are
exchangeable), p = 1 − Φ(Δ / s), where s, the standard deviation of δ − δ₀, is √(sd_null² + sd_alt²). The paper's
printed (Δ, p) therefore imply s = Δ / z(1 − p) (:func:`implied_sd`). Ours comes from the two standard deviations
every grid cell stores (``null_sd`` and ``delta_sd``, over its replicates, ddof 1); no replicate's δ is kept or
needed. :func:`spreads` sets the two side by side per cell, and :func:`spread_verdicts` names the runs and metric
families where ours is too narrow or too wide.
"""

from __future__ import annotations

import math

from fractions import Fraction
from typing import Iterable, Mapping

import numpy as np
import pandas as pd
from scipy.stats import norm

from analysis.data import datasets
from analysis.engine.metrics import BY_NAME, METRIC_LABELS
from analysis.errors import ParameterError
from analysis.experiment import grid
from analysis.experiment.choices import BOOK, Choices
from analysis.experiment.grid import ALPHA
from analysis.paper import effect_sizes, tables
from analysis.paper.effect_sizes import CELL, FACTOR, TABLE_NAMES
from analysis.paper.marks import on_its_side
from analysis.wording import counted

AT, BELOW = "at the paper's cell", "one step below"  # the two cells of each printed cell, as the counts name them
ROUNDING = 0.0005  # the paper prints p and Δ with three decimals
FAMILY_WORDS = {"vote": "the vote metrics", "distribution": "the distribution metrics"}
NARROW, WIDE = "too narrow", "too wide"


def step_below(nk: int) -> int | None:
    """The budget one step below ``nk`` on the paper's grid of budgets; None below its smallest."""
    if int(nk) not in grid.PAPER_BUDGETS:
        raise ParameterError(f"budget {nk} is not on the paper's grid {grid.PAPER_BUDGETS}")
    i = grid.PAPER_BUDGETS.index(int(nk))
    return grid.PAPER_BUDGETS[i - 1] if i else None


def below(p_value, n_samples, alpha: float = ALPHA) -> np.ndarray:
    """Whether pairwise p-values lie below ``alpha``, decided on integers: each p is a count of (null, alternative)
    pairs over ``n_samples`` squared (both sides draw ``n_samples`` replicates), so the count is recovered by
    rounding and compared with ``alpha`` as a fraction."""
    n = np.asarray(n_samples, dtype=np.int64)
    pairs = np.rint(np.asarray(p_value, dtype=float) * n * n).astype(np.int64)
    share = Fraction(str(alpha))
    return pairs * share.denominator < share.numerator * n * n


def with_step_below(cells: pd.DataFrame) -> pd.DataFrame:
    """``cells`` (an :func:`analysis.paper.effect_sizes.paper_cells` frame) with ``NK_below``: the budget one step
    below each on the paper's grid, missing where there is none or it holds no item at the cell's K."""
    nk = [step_below(v) for v in cells["NK"]]
    nk = [v if v is not None and v // k >= 1 else None for v, k in zip(nk, cells["K"])]
    return cells.assign(NK_below=pd.array(nk, dtype="Int64"))


def cells_to_simulate(cells: pd.DataFrame) -> pd.DataFrame:
    """The distinct cells (columns :data:`analysis.paper.effect_sizes.CELL`) of ``cells`` and of each one step
    below (:func:`with_step_below`)."""
    steps = with_step_below(cells).dropna(subset=["NK_below"])
    lower = steps.assign(NK=steps["NK_below"].astype(int))[CELL]
    return pd.concat([cells[CELL], lower], ignore_index=True).drop_duplicates().reset_index(drop=True)


def simulate(cells: pd.DataFrame, choices: Choices = BOOK, seeds: Iterable[int] = (0, 1, 2), n_samples: int = 1000,
             n_jobs: int = 1, loaded: dict | None = None) -> pd.DataFrame:
    """Our results at the paper's cells and one step below each (:func:`cells_to_simulate`), under ``choices``,
    for each seed, through the cell cache (:func:`analysis.paper.effect_sizes.simulate`). The data, the grid
    settings and the metrics are the ones the why-chapter simulates the same choices with, so each cell it has
    computed is read back, not drawn again; precision, recall and F1 come back as ``choices`` average them, under
    the paper's names. ``loaded``: datasets already loaded, by name."""
    data = {paper: choices.dataset(datasets.paper_or_stand_in(effect_sizes.REGISTRY_NAMES[paper]))
            for paper in set(cells["dataset"])}
    found = effect_sizes.simulate(cells_to_simulate(cells), seeds=seeds, n_samples=n_samples, choices=choices,
                                  data=data, n_jobs=n_jobs, metrics=effect_sizes.ALL_AVERAGINGS, loaded=loaded)
    return effect_sizes.select(found, choices.averaging)


def crossings(cells: pd.DataFrame, results: pd.DataFrame, alpha: float = ALPHA) -> pd.DataFrame:
    """One row per (paper cell, seed of ``results``): our p at the paper's cell and one step below, beside the paper's.

    ``cells``: an :func:`analysis.paper.effect_sizes.paper_cells` frame; ``results``: grid results holding every
    cell of :func:`cells_to_simulate` (as :func:`simulate` returns), matched by the paper dataset the data are or
    imitate. Columns: those of ``cells``, ``NK_below`` (:func:`with_step_below`), ``seed``; ours at the paper's cell
    ``delta``, ``p_value``, ``null_sd``, ``delta_sd``, ``n_samples``; ``p_below`` (ours one step below, at the same
    K); ``crosses`` (ours below ``alpha`` at the paper's cell, as the paper's) and ``holds_below`` (ours at or above
    ``alpha`` one step below, as the paper's must be; missing where there is no such cell).
    """
    key = ["dataset", "sampler", "metric", "_eps", "K"]
    ours = results.assign(dataset=results["dataset"].map(effect_sizes.paper_name), _eps=results["epsilon"].round(9))
    ours = ours[[*key, "NK", "seed", "p_value", "delta", "null_sd", "delta_sd", "n_samples"]]
    if ours.duplicated([*key, "NK", "seed"]).any():
        raise ParameterError("results hold two datasets for one paper dataset (or a cell twice): pass one of them")
    frame = with_step_below(cells).assign(_eps=cells["epsilon"].round(9))
    merged = frame.merge(ours, on=[*key, "NK"], how="left")
    lower = ours.rename(columns={"NK": "NK_below", "p_value": "p_below", "n_samples": "_n_below"})
    merged = merged.merge(lower[[*key, "NK_below", "seed", "p_below", "_n_below"]].astype({"NK_below": "Int64"}),
                          on=[*key, "NK_below", "seed"], how="left")
    lacking = merged["p_value"].isna() | (merged["NK_below"].notna() & merged["p_below"].isna())
    if lacking.any():
        names = ", ".join(f"{r.dataset} {r.sampler} {r.metric} (ε {r.epsilon:g}, NK {r.NK}, K {r.K})"
                          for r in merged[lacking].head(5).itertuples())
        raise ParameterError(f"{int(lacking.sum())} cell(s) lack our results at the paper's budget or one step "
                             f"below, e.g. {names}: simulate them first (crossings.simulate)")
    merged["seed"] = merged["seed"].astype(int)
    merged["crosses"] = below(merged["p_value"], merged["n_samples"], alpha)
    has = merged["NK_below"].notna().to_numpy()
    holds = pd.array([pd.NA] * len(merged), dtype="boolean")
    holds[has] = ~below(merged.loc[has, "p_below"], merged.loc[has, "_n_below"].astype(int), alpha)
    merged["holds_below"] = holds
    return merged.drop(columns=["_eps", "_n_below"]).reset_index(drop=True)


def counts(frame: pd.DataFrame) -> pd.DataFrame:
    """The cells on the paper's side of 0.05 per table, per seed, summarised over seeds: :data:`AT` (ours below it
    at the paper's cell) over every cell, :data:`BELOW` (ours at or above it one step below) over the cells that
    have such a step; every cell, by run and by metric. ``frame``: a :func:`crossings` frame. Columns as
    :func:`analysis.paper.effect_sizes.counts_frame`'s."""
    stepped = frame.dropna(subset=["holds_below"]).astype({"holds_below": bool})
    return effect_sizes.counts_frame(effect_sizes.seed_counts(frame, "crosses", AT)
                                     + effect_sizes.seed_counts(stepped, "holds_below", BELOW))


def _title(which: str) -> str:
    """A table's name as a heading or caption begins with it ("The appendix")."""
    return TABLE_NAMES[which][0].upper() + TABLE_NAMES[which][1:]


def counts_table(counted_: pd.DataFrame) -> tables.Table:
    """:func:`counts` per run (and every cell) as a table: one column per table and cell of the two."""
    chosen = counted_[counted_["by"].isin(["all", "run"])]
    wide = chosen.assign(column=chosen["table"].map(_title) + ", " + chosen["count"]).pivot(
        index="group", columns="column", values="spread")
    order = [f"{_title(t)}, {c}" for t in effect_sizes.TABLES for c in (AT, BELOW)]
    wide = wide.reindex(index=list(dict.fromkeys(chosen["group"])), columns=[c for c in order if c in wide.columns])
    return tables.Table(wide.rename_axis(index="run", columns=None).reset_index(),
                        f"cells on the paper's side of {ALPHA:g}: our p below it at the paper's own cell, at or "
                        "above it one budget step below; median (min–max) over seeds")


def crossing_sentence(counted_: pd.DataFrame) -> str:
    """:func:`counts`' totals in one sentence, per table at the paper's cell and one step below."""
    every = counted_[counted_["by"] == "all"].set_index(["table", "count"])
    present = [t for t in effect_sizes.TABLES if (t, AT) in every.index]
    if not present:
        return "No cell of the paper's tables was simulated here."
    seeds = int(every["seeds"].max())

    def listed(count):
        return " and ".join(f"{every.loc[(t, count), 'spread']} cells of {TABLE_NAMES[t]}" for t in present
                            if (t, count) in every.index)
    return (f"At the paper's own cells our p lies below {ALPHA:g}, as the paper's does, in {listed(AT)}; one budget "
            f"step below, at the same K, it lies at or above {ALPHA:g}, as the paper's must, in {listed(BELOW)} "
            f"(median, smallest–largest over {counted(seeds, 'seed')}).")


# ------------------------------------------------------------------------------------------ the spread

def implied_sd(delta, p_value) -> np.ndarray:
    """The standard deviation of δ − δ₀ that a one-sided (Δ, p) implies under the normal approximation:
    Δ / z(1 − p); missing where p lies outside (0, 0.5), which implies no finite positive spread."""
    delta, p = np.asarray(delta, dtype=float), np.asarray(p_value, dtype=float)
    inside = (p > 0) & (p < 0.5)
    z = norm.isf(np.where(inside, p, 0.25))
    return np.where(inside, delta / z, np.nan)


def spreads(frame: pd.DataFrame, factor: float = FACTOR) -> pd.DataFrame:
    """Per paper cell, ours and the paper's spread of δ − δ₀, medians over seeds.

    ``frame``: a :func:`crossings` frame. Columns: ``table``, ``run``, ``metric``, ``family`` (``vote`` or
    ``distribution``), ``NK``, ``K``, ``null_sd``, ``delta_sd``, ``sd`` (ours, √(null_sd² + delta_sd²)),
    ``paper_sd`` (:func:`implied_sd` of the printed Δ and p), ``ratio`` (ours / the paper's), ``normal`` (our sd
    over the one our own Δ and p imply: how well the approximation holds on our side) and ``verdict``:
    :data:`NARROW` where ours lies more than ``factor`` below the smallest sd the printed pair allows (p and Δ each
    ± :data:`ROUNDING`), :data:`WIDE` where it lies more than ``factor`` above the largest, else empty.
    """
    keys = ["table", "dataset", "sampler", "metric"]
    seeds = frame.assign(sd=np.hypot(frame["null_sd"], frame["delta_sd"]),
                         paper_sd=implied_sd(frame["paper_delta"], frame["paper_p"]),
                         own_sd=implied_sd(frame["delta"], frame["p_value"]))
    seeds = seeds.assign(ratio=seeds["sd"] / seeds["paper_sd"], normal=seeds["sd"] / seeds["own_sd"])
    out = seeds.groupby(keys, sort=False).agg(
        NK=("NK", "first"), K=("K", "first"), paper_delta=("paper_delta", "first"), paper_p=("paper_p", "first"),
        null_sd=("null_sd", "median"), delta_sd=("delta_sd", "median"), sd=("sd", "median"),
        paper_sd=("paper_sd", "first"), ratio=("ratio", "median"), normal=("normal", "median")).reset_index()
    smallest = implied_sd(out["paper_delta"] - ROUNDING, out["paper_p"] - ROUNDING)
    largest = implied_sd(out["paper_delta"] + ROUNDING, out["paper_p"] + ROUNDING)
    out["verdict"] = np.select([out["sd"] * factor < smallest, out["sd"] > largest * factor], [NARROW, WIDE], "")
    out.insert(1, "run", out["dataset"] + " " + out["sampler"])
    out.insert(4, "family", out["metric"].map(lambda m: BY_NAME[m].family))
    return out.drop(columns=["dataset", "sampler", "paper_delta", "paper_p"])


def spread_verdicts(spread: pd.DataFrame, by: Iterable[str] = ("run", "family")) -> pd.DataFrame:
    """Per table and group of ``by`` (``run``, ``family`` or both, columns of :func:`spreads`): ``cells``, how many
    are too ``narrow`` and too ``wide``, the ``median_ratio``, and the ``verdict``, :data:`NARROW` or :data:`WIDE`
    where more than half of the group's cells are, else empty. Columns: ``table``, those of ``by`` and these."""
    by = list(by)
    rows = []
    for key, part in spread.groupby(["table", *by], sort=False):
        narrow, wide = int((part["verdict"] == NARROW).sum()), int((part["verdict"] == WIDE).sum())
        verdict = NARROW if 2 * narrow > len(part) else WIDE if 2 * wide > len(part) else ""
        rows.append({**dict(zip(["table", *by], key)), "cells": len(part), "narrow": narrow, "wide": wide,
                     "median_ratio": float(part["ratio"].median()), "verdict": verdict})
    return pd.DataFrame(rows, columns=["table", *by, "cells", "narrow", "wide", "median_ratio", "verdict"])


def _group_words(row) -> str:
    """A (run, family) group of :func:`spread_verdicts` in words: "the distribution metrics of DICES S1"."""
    return f"{FAMILY_WORDS[row.family]} of {row.run}"


def verdicts_table(spread: pd.DataFrame) -> tables.Table:
    """Per run (rows) and table and metric family (columns), our spread over the paper's as the median ratio, with
    the verdict where most of the group's cells share it (:func:`spread_verdicts`)."""
    verdicts = spread_verdicts(spread)
    verdicts["column"] = [f"{_title(t)}, {FAMILY_WORDS[f].removeprefix('the ')}"
                          for t, f in zip(verdicts["table"], verdicts["family"])]
    verdicts["shown"] = [f"{r.median_ratio:.2f}" + (f" ({r.narrow if r.verdict == NARROW else r.wide} of {r.cells} "
                                                     f"{r.verdict})" if r.verdict else "")
                         for r in verdicts.itertuples()]
    wide = verdicts.pivot(index="run", columns="column", values="shown")
    order = [f"{_title(t)}, {FAMILY_WORDS[f].removeprefix('the ')}" for t in effect_sizes.TABLES for f in FAMILY_WORDS]
    wide = wide.reindex(index=list(dict.fromkeys(verdicts["run"])), columns=[c for c in order if c in wide.columns])
    return tables.Table(wide.fillna("–").rename_axis(columns=None).reset_index(),
                        "our sd of δ − δ₀ over the one the paper's Δ and p imply, median over the group's cells; in "
                        "brackets, the cells too narrow or too wide where they are most of the group")


def spread_sentence(spread: pd.DataFrame, factor: float = FACTOR) -> str:
    """:func:`spreads` in words: per table, the cells where our spread is too narrow and too wide; the metric families
    of each run where most cells are (:func:`spread_verdicts`), with their median ratio; and how well the normal
    approximation recovers our own spread."""
    if spread.empty:
        return "No cell of the paper's tables was simulated here."
    by_table = spread.groupby("table", sort=False)["verdict"]

    def listed(verdict):
        return " and ".join(f"{(v == verdict).sum()} of {len(v)} cells of {TABLE_NAMES[t]}" for t, v in by_table)
    lines = [f"Our spread of δ − δ₀ is {NARROW} (more than ×{factor:g} below the one the paper's printed Δ and p "
             f"imply, each ± {ROUNDING:g}) in {listed(NARROW)}, and {WIDE} (more than ×{factor:g} above it) in "
             f"{listed(WIDE)}."]
    verdicts = spread_verdicts(spread, ("run", "family"))
    for verdict, column in ((NARROW, "narrow"), (WIDE, "wide")):
        named = verdicts[verdicts["verdict"] == verdict]
        per_table = [f"in {TABLE_NAMES[t]}, " + ", ".join(
            f"{_group_words(r)} ({getattr(r, column)} of {r.cells} cells, median ratio {r.median_ratio:.2f})"
            for r in part.itertuples()) for t, part in named.groupby("table", sort=False)]
        if per_table:
            lines.append(f"{verdict.capitalize()} in most of their cells: " + "; ".join(per_table) + ".")
    if not (verdicts["verdict"] != "").any():
        lines.append("No metric family of any run is too narrow or too wide in most of its cells.")
    ok = spread["normal"].between(1 / factor, factor)
    lines.append(f"On our own cells, the normal approximation recovers our measured spread within ×{factor:g} "
                 f"in {int(ok.sum())} of {int(spread['normal'].notna().sum())} cells where our p lies inside (0, 0.5).")
    return " ".join(lines)


def cells_table(frame: pd.DataFrame, spread: pd.DataFrame, which: str = "table1") -> tables.Table:
    """The paper's printed cells of ``which`` one by one: the paper's p and ours (median over seeds) at its own
    (N×K, K) and ours one step below, with the seeds on the paper's side of 0.05; our null's and alternative's sd,
    and ours over the spread the paper's pair implies (:func:`spreads`), with its verdict."""
    keys = ["table", "dataset", "sampler", "metric"]
    chosen = frame[frame["table"] == which]
    per_cell = chosen.groupby(keys, sort=False).agg(
        NK=("NK", "first"), K=("K", "first"), NK_below=("NK_below", "first"), paper_p=("paper_p", "first"),
        p=("p_value", "median"), p_below=("p_below", "median"), at=("crosses", "sum"),
        under=("holds_below", "sum"), seeds=("seed", "nunique"), n_samples=("n_samples", "min")).reset_index()
    per_cell["run"] = per_cell["dataset"] + " " + per_cell["sampler"]
    per_cell = per_cell.merge(spread, on=["table", "run", "metric"], how="left", suffixes=("", "_spread"))

    def side(x):
        return x < ALPHA

    def shown(p, agreeing, seeds, n_samples):  # as many decimals as n² pairs resolve, at most 3 ("0.05" of 100)
        digits = min(3, max(1, math.ceil(math.log10(n_samples * n_samples))))
        return f"{on_its_side(p, side, digits)} ({agreeing}/{seeds})"
    table = pd.DataFrame({
        "run": per_cell["run"], "metric": per_cell["metric"].map(METRIC_LABELS),
        "N×K, K": [f"{nk:,}, {k}" for nk, k in zip(per_cell["NK"], per_cell["K"])],
        "p: the paper's": [f"{p:.3f}" for p in per_cell["paper_p"]],
        "p: ours": [shown(r.p, r.at, r.seeds, r.n_samples) for r in per_cell.itertuples()],
        "one step below: N×K, our p": [
            "–" if pd.isna(r.NK_below) else f"{int(r.NK_below):,}, " + shown(r.p_below, r.under, r.seeds, r.n_samples)
            for r in per_cell.itertuples()],
        "sd: null, alternative": [f"{a:.3f}, {b:.3f}" for a, b in zip(per_cell["null_sd"], per_cell["delta_sd"])],
        "sd: ours / the paper's": [f"{r:.2f}" + (f" ({v})" if v else "") for r, v in
                                   zip(per_cell["ratio"], per_cell["verdict"])]})
    return tables.Table(table, f"{_title(which)}: p at the paper's own cell and one budget step below "
                        "(median over seeds; in brackets, the seeds on the paper's side of 0.05: below it at the "
                        "cell, at or above it one step below); our sd of δ₀ and of δ, and our sd of δ − δ₀ over "
                        "the one the paper's Δ and p imply")


# ------------------------------------------------------------------------------------------ the null's mixing

#: How the null mixes A's and B's columns, in the words of every page (the why page's switch values among them).
MIXING_WORDS = {"half": "a uniform half", "pairs": "a coin per pair of columns",
                "half per item": "a uniform half per item", "pooled with replacement": "pooled with replacement",
                "coin per response": "a coin per response (VET's parametric)"}


def mixing_words(reading: str) -> str:
    """A reading of the null in words, the book's own marked as such (a table's row or column)."""
    return MIXING_WORDS[reading] + (" (the book's)" if reading == BOOK.null_mixing else "")


def mixing_table(counted: Mapping[str, pd.DataFrame], spread: Mapping[str, pd.DataFrame]) -> tables.Table:
    """Per way the null mixes A's and B's columns (keys of :data:`MIXING_WORDS`): :func:`counts`' totals over every
    cell, and the median of our spread over the paper's (:func:`spreads`) per metric family, both tables' cells."""
    rows = []
    for mixing, counts_ in counted.items():
        every = counts_[counts_["by"] == "all"]
        row = {"the null's columns": mixing_words(mixing)}
        row.update({f"{_title(r.table)}, {r.count}": r.spread for r in every.itertuples()})
        for family, part in spread[mixing].groupby("family", sort=False):
            row[f"spread ratio, {FAMILY_WORDS[family].removeprefix('the ')}"] = f"{part['ratio'].median():.2f}"
        rows.append(row)
    order = [f"{_title(t)}, {c}" for t in effect_sizes.TABLES for c in (AT, BELOW)]
    frame = pd.DataFrame(rows)
    frame = frame[["the null's columns", *[c for c in order if c in frame.columns],
                   *[c for c in frame.columns if c.startswith("spread ratio")]]]
    return tables.Table(frame, "the null's mixing: cells on the paper's side of 0.05 (median "
                                            "(min–max) over seeds) and our spread over the paper's, median over cells")


def readings_summary(readings: pd.DataFrame) -> pd.DataFrame:
    """Per run, metric family and reading of the null (``benchmarks/null_readings.py``'s CSV): the median of our
    spread over the paper's, ``ratio``, over the cells, and ``book``, the same group's ratio under the book's null
    (``"half"``). Columns ``run``, ``family``, ``reading``, ``cells``, ``ratio``, ``book``."""
    out = readings.groupby(["run", "family", "reading"], sort=False).agg(
        cells=("ratio", "size"), ratio=("ratio", "median")).reset_index()
    book = out[out["reading"] == "half"].set_index(["run", "family"])["ratio"]
    return out.assign(book=book.reindex(list(zip(out["run"], out["family"]))).to_numpy())


def readings_table(readings: pd.DataFrame) -> tables.Table:
    """:func:`readings_summary` with one column per reading, one row per (run, family)."""
    summary = readings_summary(readings)
    wide = summary.pivot(index=["run", "family"], columns="reading", values="ratio")
    wide = wide.reindex(index=list(dict.fromkeys(zip(summary["run"], summary["family"]))),
                        columns=[r for r in MIXING_WORDS if r in wide.columns])
    wide = wide.map(lambda x: f"{x:.2f}").rename(columns=mixing_words).reset_index()
    wide["family"] = wide["family"].map(lambda f: FAMILY_WORDS[f].removeprefix("the "))
    return tables.Table(wide.rename(columns={"family": "metrics"}).rename_axis(columns=None),
                        "our spread of δ − δ₀ over the paper's, median over each group's Table 1 cells, by how the "
                        "null mixes A and B (the slow reference)")


def readings_sentence(readings: pd.DataFrame, factor: float = FACTOR) -> str:
    """What the readings of the null can and cannot close, in words: the largest move of a (run, family) median
    ratio away from the book's null, and per metric family the book's median ratio over the runs measured, the
    range of the other readings' and how many of them lie within ×``factor`` of the paper's spread."""
    summary = readings_summary(readings)
    n_samples = int(readings["n_samples"].min())
    others = summary[summary["reading"] != "half"]
    top = others.loc[(others["ratio"] - others["book"]).abs().idxmax()]
    parts = []
    for family, part in summary.groupby("family", sort=False):
        by_reading = part.groupby("reading", sort=False)["ratio"].median()
        rest = by_reading.drop("half")
        inside = rest[(rest >= 1 / factor) & (rest <= factor)]
        parts.append(f"for {FAMILY_WORDS[family]}, the median ratio over the runs is {by_reading['half']:.2f} under "
                     f"the book's null and {rest.min():.2f} to {rest.max():.2f} under the others, "
                     f"{counted(len(inside), 'reading') if len(inside) else 'none'} of {len(rest)} within "
                     f"×{factor:g} of the paper's spread")
    runs = ", ".join(dict.fromkeys(readings["run"]))
    return (f"Over the Table 1 cells of {runs} ({n_samples} replicates per hypothesis and reading), no reading moves "
            f"a run's median ratio for a metric family by more than {abs(top['ratio'] - top['book']):.2f} from the "
            "book's null (the "
            f"largest: {FAMILY_WORDS[top['family']]} of {top['run']}, {MIXING_WORDS[top['reading']]}); "
            + "; ".join(parts) + ".")


def readings_verdict(readings: pd.DataFrame, factor: float = FACTOR) -> str:
    """Whether some reading of the null closes the gap: it brings a (run, family) whose median ratio lies beyond
    ×``factor`` under the book's null to within ×``factor`` of the paper's spread, moving it by more than twice
    its Monte Carlo error (a ratio's relative error is about 1/√n at ``n`` replicates per hypothesis). The groups it
    closes are named; else the sentence says that no reading does."""
    summary = readings_summary(readings)
    noise = 2 / np.sqrt(readings["n_samples"].min())
    beyond = ~summary["book"].between(1 / factor, factor)
    closed = summary[(summary["reading"] != "half") & summary["ratio"].between(1 / factor, factor) & beyond
                     & ((summary["ratio"] - summary["book"]).abs() > noise * summary["book"])]
    gap = int((beyond & (summary["reading"] == "half")).sum())
    if closed.empty:
        return (f"Of the {counted(gap, 'group')} of runs and metric families whose spread lies beyond ×{factor:g} of "
                f"the paper's under the book's null, no reading of the null brings one within ×{factor:g} by more "
                f"than twice its Monte Carlo error ({noise:.0%} of the ratio): the null's mixing is not what "
                "separates our crossings from the paper's.")
    named = "; ".join(f"{FAMILY_WORDS[r.family]} of {r.run} under {MIXING_WORDS[r.reading]} ({r.ratio:.2f})"
                      for r in closed.itertuples())
    return f"Some readings close part of the gap: {named}."


def halves_sentence(readings: pd.DataFrame, factor: float = FACTOR) -> str:
    """Which of our two spreads falls short, in words: under the book's null, per run and metric family, the median
    of our alternative's and our null's sd over the paper's spread shared equally between its two (the paper's
    implied sd over √2: its null as wide as its alternative, as a calibrated null nearly is)."""
    book = readings[readings["reading"] == "half"]
    share = np.sqrt(2) / book["paper_sd"]
    per = book.assign(alt=book["delta_sd"] * share, null=book["null_sd"] * share).groupby(
        ["family", "run"], sort=False)[["alt", "null"]].median()
    parts = []
    for family, part in per.groupby(level="family", sort=False):
        short = part[(part["alt"] < 1 / factor)]
        parts.append(f"for {FAMILY_WORDS[family]}, our alternative's sd is {part['alt'].min():.2f} to "
                     f"{part['alt'].max():.2f} of that and our null's {part['null'].min():.2f} to "
                     f"{part['null'].max():.2f}, the alternative's more than ×{factor:g} short in "
                     + ("none" if short.empty else "all" if len(short) == len(part) else str(len(short)))
                     + f" of the {counted(len(part), 'run')}")
    return ("With the paper's spread shared equally between its null and its alternative (a calibrated null is "
            "nearly as wide as the alternative), under the book's null: " + "; ".join(parts) + ".")


def load_readings(path) -> pd.DataFrame | None:
    """``benchmarks/null_readings.py``'s CSV, or None where it is missing (a checkout without the benchmarks)."""
    from pathlib import Path

    return pd.read_csv(path) if Path(path).is_file() else None
