"""Tables for the book: Table 1, run comparisons, and the paper's reference values set beside ours.

The paper's Table 1 (epsilon = 0.3) and its appendix table (epsilon not stated) were typed in once into
``analysis/resources/paper_tables.csv``, one row per (table, dataset, sampler, metric), and are only read here.
Paper values follow the dataset, not its name: :func:`imitates` says which paper dataset a dataset is or imitates
(``None`` for any other data, a user's own file included), and only those runs get paper values.

A run is identified by the columns of the results table (``dataset``, ``sampler``, ``perturbation`` and, when the
chapter added them, ``origin`` and ``imitates``), never by a hand-built label. :class:`Table` renders a frame
without its pandas index, with human headers, integers as integers and long hashes wrapped.
"""

from __future__ import annotations

import functools
import html
import math
import re
from importlib.resources import files

import numpy as np
import pandas as pd

from analysis.data import datasets
from analysis.data.annotations import AnnotationDataset
from analysis.wording import listed
from analysis.errors import ParameterError
from analysis.experiment.grid import ALPHA, PAPER_N_SAMPLES, run
from analysis.paper.marks import MARKS_WORDS, agreement_mark, on_its_side  # noqa: F401 (on_its_side: others read it here)
from analysis.engine.metrics import DISTRIBUTION_METRICS, METRIC_LABELS, METRICS, VOTE_METRICS
from analysis.experiment.choices import BOOK, REFERENCE, Choices
from analysis.experiment import warmup
from analysis.experiment.table1 import table1

PAPER_EPSILON = 0.3
BEYOND_MARK = "†"
#: whose raters bound K in a design the data can supply, by sampler (:func:`analysis.engine.samplers.raters_available`)
WHOSE_RATERS = "the median item's, the median batch's under S3, the pool's under S1"
BEYOND_WORDS = (f"a design these data cannot supply (K above the raters a drawn item comes from: {WHOSE_RATERS}; or N "
                "above the items): an extrapolation that redraws the same people or items")
STATS = (("NK", "NK"), ("p_value", "p-value"), ("K", "K"), ("delta", "Δ"))
# registry and stand-in names of the paper's three datasets -> the paper's name for them
_IMITATES = {"dices-synthetic": "DICES", "dices350": "DICES", "d3code-synthetic": "D3code", "d3code": "D3code",
             "toxicity-synthetic": "Toxicity", "toxicity_kumar2021": "Toxicity"}
PAPER_DATASET_NAMES = {"DICES": "DICES-350", "D3code": "D3code", "Toxicity": "Toxicity (Kumar et al.)",
                       "DICES-5": "DICES-350 cut to 5 raters"}


def imitates(name: str | None) -> str | None:
    """The paper dataset (``"DICES"``, ``"D3code"``, ``"Toxicity"``) that a dataset is or imitates, else ``None``.

    Only the registry names of the paper's files and of their stand-ins (of every version and variant,
    ``toxicity-synthetic-binary``) map to a paper dataset; a dataset cut or derived from one
    (``dices-synthetic-5raters``) and any user's file map to ``None``.
    """
    from analysis.data.synthetic import base_name

    return _IMITATES.get(base_name(str(name))) if name is not None else None


# --------------------------------------------------------------------------------------------- run identity

def as_run(run) -> tuple[str, str]:
    """A run's ``(dataset, sampler)``, from that pair or a longer key that starts with it."""
    return tuple(run)[:2]


def run_label(dataset: str, sampler: str) -> str:
    """How a run is named on the page: ``dices-synthetic, S1``."""
    return f"{dataset}, {sampler}"


def runs(results: pd.DataFrame) -> list[tuple[str, str]]:
    """The (dataset, sampler) runs of a results table, in order of appearance."""
    return list(dict.fromkeys(zip(results["dataset"], results["sampler"])))


def select(results: pd.DataFrame, run, epsilon: float | None = None) -> pd.DataFrame:
    dataset, sampler = as_run(run)
    chosen = results[(results["dataset"] == dataset) & (results["sampler"] == sampler)]
    if epsilon is not None:
        chosen = chosen[np.isclose(chosen["epsilon"], epsilon)]
    return chosen


def origin(ds: AnnotationDataset) -> str:
    """Where a dataset came from: ``"stand-in"`` (generated), ``"registry"`` (a registered real set) or ``"file"``."""
    if "synthetic" in ds.provenance:
        return "stand-in"
    if ds.name in datasets.names():
        return "registry"
    return "file"


def simulate(pairs, budgets, ks, epsilons, metrics="all", n_samples=PAPER_N_SAMPLES, seed=0, n_jobs=1,
             cache_dir=None, choices: Choices = BOOK, scheduler=None) -> pd.DataFrame:
    """Run every (dataset, sampler) pair over the grid and return one tidy table.

    The table carries each run's identity in its columns: ``dataset``, ``sampler``, ``perturbation``, ``origin``
    (:func:`origin`) and ``imitates`` (the paper dataset the data are or imitate, see :func:`imitates`).
    No progress bar is drawn, so executed notebooks hold none. ``scheduler`` sends the cells to a Dask cluster;
    ``choices`` are the global switches the grid runs under (:meth:`~analysis.experiment.choices.Choices.grid`), by
    default the book's (:data:`analysis.experiment.choices.BOOK`). With several jobs, the kernels the grids need are
    compiled side by side first (:mod:`analysis.experiment.warmup`).
    """
    if scheduler is None:
        warmup.warm(pairs, budgets, ks, epsilons, n_jobs, choices, metrics=metrics,
                    n_samples=n_samples, seed=seed, cache_dir=cache_dir)
    tables_ = []
    for ds, sampler in pairs:
        table = run(ds, sampler, budgets=budgets, ks=ks, epsilons=epsilons, metrics=metrics, n_samples=n_samples,
                    seed=seed, n_jobs=n_jobs, cache_dir=cache_dir, progress=False, scheduler=scheduler,
                    **choices.grid())
        if "perturbation" not in table.columns or table["perturbation"].isna().all():
            table["perturbation"] = choices.perturbation
        tables_.append(table.assign(origin=origin(ds), imitates=imitates(ds.name)))
    if not tables_:
        return pd.DataFrame(columns=["dataset", "sampler", "perturbation", "epsilon", "NK", "K", "metric",
                                     "p_value", "delta", "null_sd", "origin", "imitates"])
    return pd.concat(tables_, ignore_index=True)


def perturbation_of(results: pd.DataFrame) -> str:
    """The perturbation rule(s) of a results table, as text (``dirichlet`` when the table predates the column)."""
    if "perturbation" not in results.columns or results["perturbation"].isna().all():
        return REFERENCE.perturbation
    return ", ".join(dict.fromkeys(results["perturbation"].dropna().astype(str)))


def _rule(results: pd.DataFrame) -> str:
    return f"B perturbed by the {perturbation_of(results)} rule"


# --------------------------------------------------------------------------------------------- rendering

def code_html(text: str) -> str:
    """An escaped text with its Markdown inline code (a word between backticks) as HTML code elements."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", text)


class Table:
    """A table for the page: no pandas index, escaped cells, ``**bold**`` marks, long tokens wrapped.

    ``caption`` is shown above the table. The plain-text form (what nbval compares) is the frame without index.
    """

    def __init__(self, frame: pd.DataFrame, caption: str = "", empty: str = "There is nothing to compare here."):
        self.frame = frame.reset_index(drop=True)
        self.caption = caption
        self.empty = empty

    def __len__(self) -> int:
        return len(self.frame)

    @staticmethod
    def _cell(value) -> str:
        if value is None or (not isinstance(value, str) and pd.isna(value)):
            return "–"
        if isinstance(value, (bool, np.bool_)):
            return "yes" if value else "no"
        if isinstance(value, (int, np.integer)):
            return f"{int(value):,}"
        if isinstance(value, (float, np.floating)):
            return f"{int(value):,}" if float(value).is_integer() and abs(value) >= 1 else f"{value:.3f}"
        text = html.escape(str(value))
        text = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", text)
        # long tokens (hashes) get break opportunities so they wrap instead of being cut off
        return re.sub(r"([0-9a-f]{16})(?=[0-9a-f])", r"\1<wbr>", text)

    def _repr_html_(self) -> str:
        if self.frame.empty:
            return f"<p>{code_html(html.escape(self.empty))}</p>"
        head = "".join(f"<th>{html.escape(str(c))}</th>" for c in self.frame.columns)
        body = "".join("<tr>" + "".join(f"<td>{self._cell(v)}</td>" for v in row) + "</tr>"
                       for row in self.frame.itertuples(index=False))
        caption = f"<caption>{code_html(html.escape(self.caption))}</caption>" if self.caption else ""
        return (f'<table class="table book-table">{caption}<thead><tr>{head}</tr></thead>'
                f"<tbody>{body}</tbody></table>")

    def __repr__(self) -> str:
        if self.frame.empty:
            return self.empty
        text = self.frame.to_string(index=False)
        return (self.caption + "\n" if self.caption else "") + text


# --------------------------------------------------------------------------------------------- paper values

def paper_table(which: str = "table1") -> pd.DataFrame:
    """The paper's values: ``"table1"`` (epsilon 0.3) or ``"appendix"`` (epsilon not stated in the paper).

    Columns: epsilon, dataset, sampler, metric, NK, p_value, K, delta, as the paper prints them.
    """
    return _paper_tables(which).copy()


@functools.cache
def _paper_tables(which: str) -> pd.DataFrame:
    """One table of the packaged ``paper_tables.csv``, read once (:func:`paper_table` hands out copies)."""
    table = pd.read_csv(files("analysis") / "resources" / "paper_tables.csv", comment="#")
    if which not in set(table["table"]):
        raise ValueError(f"unknown paper table {which!r}; choose 'table1' or 'appendix'")
    return table[table["table"] == which].drop(columns="table").astype({"NK": "Int64", "K": "Int64"})


@functools.cache
def _by_cell(which: str) -> pd.DataFrame:
    return _paper_tables(which).set_index(["dataset", "sampler", "metric"])


def paper_value(paper_dataset: str, sampler: str, metric: str, stat: str, which: str = "table1"):
    """One value of the paper's table, or ``None`` where the paper has no such cell (or a dash)."""
    table = _by_cell(which)
    key = (paper_dataset, sampler, metric)
    if key not in table.index:
        return None
    value = table.loc[key, stat]
    return None if pd.isna(value) else value


def _fmt(value, stat: str, digits: int = 3) -> str:
    """A table cell's number: budgets and K whole; a p-value with three decimals like every other number, rounded
    down where rounding would carry a p below 0.05 to 0.050 (0.0497 prints as 0.049), since the table counts it as
    significant."""
    if value is None or pd.isna(value):
        return "–"
    if stat in ("NK", "K"):
        return str(int(value))
    if stat == "p_value" and value < ALPHA <= round(value, digits):
        return f"{math.floor(value * 10 ** digits) / 10 ** digits:.{digits}f}"
    return f"{value:.{digits}f}"


def imitated(results: pd.DataFrame, dataset: str) -> str | None:
    """The paper dataset that ``dataset`` imitates, as the results table records it (``None`` where it records none)."""
    if "imitates" in results.columns:
        values = results.loc[results["dataset"] == dataset, "imitates"].dropna()
        return str(values.iloc[0]) if len(values) else None
    return imitates(dataset)


def has_paper_values(results: pd.DataFrame | None, which: str = "table1") -> bool:
    """Whether any run of the table is one of the paper's datasets (or its stand-in) with paper values."""
    if results is None or not len(results):
        return False
    paper = paper_table(which)
    return any(((paper["dataset"] == imitated(results, d)) & (paper["sampler"] == s)).any()
               for d, s in runs(results))


def epsilon_label(epsilon: float, which: str = "table1") -> str:
    """How a comparison labels the two epsilons: equal, different, or unknown (the appendix)."""
    if which == "appendix":
        return f"ours at ε = {epsilon:g}; the paper's appendix table does not state its ε"
    if np.isclose(epsilon, PAPER_EPSILON):
        return f"ours and the paper's both at ε = {epsilon:g}"
    return f"ours at ε = {epsilon:g}, the paper's at ε = {PAPER_EPSILON:g}: different perturbations"


def paper_note(results: pd.DataFrame | None, epsilon: float, which: str = "table1") -> str:
    """One sentence for the page saying what a Table-1 comparison shows (and never announcing absent values)."""
    if results is not None and not np.isclose(results["epsilon"], epsilon).any():
        return (f"This run has no grid at ε = {epsilon:g}, so there is no table to set beside the paper's; the "
                f"chapter's `epsilons` parameter must include {epsilon:g}.")
    if not has_paper_values(results, which):
        return ("None of these runs is one of the paper's datasets or its stand-in, so the table shows our values "
                "only.")
    name = "Table 1" if which == "table1" else "the appendix table"
    return (f"Each cell reads *ours (paper)*: the paper's value is from {name} {{cite}}`pandita2026multilevel`, for the "
            f"dataset each run is or imitates; {epsilon_label(epsilon, which)}.")


def compare_with_paper(results: pd.DataFrame, epsilon: float, which: str = "table1") -> Table:
    """Our Table 1 at ``epsilon`` beside the paper's: one row per (run, statistic); cells read ``ours (paper)``.

    Runs on a dataset that is not one of the paper's (nor its stand-in) show ``ours`` alone. ``None`` without results
    or without a run at ``epsilon`` (:func:`paper_note` then says so).
    """
    if results is None or not np.isclose(results["epsilon"], epsilon).any():
        return None
    at = results[np.isclose(results["epsilon"], epsilon)]
    ours = table1(at)
    cells = at.set_index(["dataset", "sampler", "metric", "NK", "K"])["delta"]
    cells = cells.groupby(level=cells.index.names).mean()  # one Δ per cell (several seeds: their mean)
    paper = paper_table(which).set_index(["dataset", "sampler", "metric"])
    rows, alone = [], []  # alone: the runs the paper has no value for (a sampler it did not run on that data)
    for (dataset, sampler), group in ours.groupby(["dataset", "sampler"], sort=False):
        by_metric = group.set_index("metric")
        paper_name = imitated(results, dataset)
        if not any((paper_name, sampler, metric) in paper.index for metric in by_metric.index):
            alone.append(run_label(dataset, sampler))
        for stat, label in STATS:
            row = {"run": run_label(dataset, sampler), "statistic": label}
            for metric in METRICS:
                if metric not in by_metric.index:
                    continue
                cell = _fmt(by_metric.loc[metric, stat], stat)
                if stat == "K" and by_metric.get("beyond_data", pd.Series(dtype=bool)).get(metric, False):
                    cell += BEYOND_MARK
                key = (paper_name, sampler, metric)
                if paper_name is not None and key in paper.index:
                    theirs = paper.loc[key]
                    if stat == "delta":  # Δ at the paper's own cell where the grid has it, as the Δ tables read it
                        like = cells.get((dataset, sampler, metric, theirs["NK"], theirs["K"]))
                        cell = cell if like is None or pd.isna(like) else _fmt(like, stat)
                    else:
                        like = by_metric.loc[metric, stat]
                    cell += f" ({_fmt(theirs[stat], stat)})" + agreement_mark(stat, like, theirs[stat])
                row[METRIC_LABELS[metric]] = cell
            rows.append(row)
    rule = _rule(results)
    seeds = sorted(int(s) for s in at["seed"].unique()) if "seed" in at else []
    plural = "s" if len(seeds) > 1 else ""
    run = f", from the run{plural} of seed{plural} {listed(seeds)}" if seeds else ""
    if has_paper_values(results, which):
        caption = (f"ours (paper){run}; {epsilon_label(epsilon, which)}; {rule}; – : no budget reaches p < 0.05; "
                   f"{MARKS_WORDS}")
        if alone:
            caption += f"; ours alone in the rows of {' and '.join(alone)}, which the paper did not run"
    else:
        caption = f"ours at ε = {epsilon:g}; {rule}; – : no budget of the grid reaches p < 0.05"
    if ours.get("beyond_data", pd.Series(dtype=bool)).any():
        caption += f"; {BEYOND_MARK}: {BEYOND_WORDS}"
    return Table(pd.DataFrame(rows), caption)


def best_k(results: pd.DataFrame, epsilon: float, metrics=("accuracy", "mae", "jsd")) -> Table:
    """The K with the smallest p-value at each budget (smallest K on ties): rows (run, metric), columns NK.

    A budget at which no K reaches p < 0.05 is marked with a trailing ``*``. ``None`` without results.
    """
    if results is None:
        return None
    chosen = results[np.isclose(results["epsilon"], epsilon) & (results["metric"].isin(metrics))].copy()
    best = chosen.sort_values(["p_value", "K"]).groupby(["dataset", "sampler", "metric", "NK"], sort=False).first()
    best = best.reset_index()
    best["cell"] = best["K"].astype(int).astype(str) + np.where(best["p_value"] < ALPHA, "", "*")
    wide = best.pivot(index=["dataset", "sampler", "metric"], columns="NK", values="cell")
    order = [(d, s, m) for d, s in runs(chosen) for m in METRICS if m in metrics]
    wide = wide.reindex(pd.MultiIndex.from_tuples(order, names=["dataset", "sampler", "metric"]))
    wide.columns = [f"NK = {c}" for c in wide.columns]
    wide = wide.reset_index()
    wide.insert(0, "run", [run_label(d, s) for d, s in zip(wide.pop("dataset"), wide.pop("sampler"))])
    wide["metric"] = wide["metric"].map(METRIC_LABELS)
    return Table(wide, f"best K at each budget (the smallest K on ties), ε = {epsilon:g}; {_rule(results)}; "
                       "* : no K reaches p < 0.05 there")


# --------------------------------------------------------------------------------------------- run comparisons

def _p_values(results: pd.DataFrame, run, epsilon: float) -> pd.Series:
    return select(results, run, epsilon).set_index(["NK", "K", "metric"])["p_value"]


def compare_runs(results: pd.DataFrame, first, second, epsilon: float) -> dict:
    """Cell-by-cell comparison of two runs (``(dataset, sampler)``) at one epsilon.

    Returns the number of shared (NK, K, metric) cells, the number where the p-values differ, the share of those
    where ``first`` has the higher p-value (0.5 when none differ), the median p-value difference, and how many
    cells each run finds significant.
    """
    a, b = _p_values(results, first, epsilon), _p_values(results, second, epsilon)
    shared = a.index.intersection(b.index)
    if len(shared) == 0:
        raise ParameterError(f"runs {first!r} and {second!r} share no cell at epsilon {epsilon}")
    a, b = a.loc[shared], b.loc[shared]
    differ = a != b
    return {"cells": int(len(shared)), "differing": int(differ.sum()),
            "share_higher": float((a[differ] > b[differ]).mean()) if differ.any() else 0.5,
            "median_difference": float(np.median(a - b)),
            "significant_first": int((a < ALPHA).sum()),
            "significant_second": int((b < ALPHA).sum())}


def comparison_table(results: pd.DataFrame, comparisons, epsilon: float) -> Table:
    """One row per sampler comparison: how often the modelled run's p-value is the higher one, cell by cell
    (``None`` without results or comparisons)."""
    if results is None or not comparisons:
        return None
    rows = []
    for modelled, independent in comparisons:
        stats = compare_runs(results, modelled, independent, epsilon)
        rows.append({"dataset": as_run(modelled)[0], "samplers": f"{as_run(modelled)[1]} vs {as_run(independent)[1]}",
                     "cells": stats["cells"], "cells that differ": stats["differing"],
                     "modelled sampler higher (share of differing cells)": round(stats["share_higher"], 3),
                     "median p difference": round(stats["median_difference"], 3),
                     "significant cells, modelled": stats["significant_first"],
                     "significant cells, S2": stats["significant_second"]})
    frame = pd.DataFrame(rows)
    return Table(frame, f"ε = {epsilon:g}; {_rule(results)}; cells are (budget, K, metric) points of the grid")


def smallest_budgets(results: pd.DataFrame, first, second, epsilon: float) -> pd.DataFrame:
    """Per metric, the smallest significant budget and its best K under two runs, and the budget ratio.

    Columns: ``metric``, ``NK_first``, ``NK_second``, ``K_first``, ``K_second``, ``ratio`` (first / second; missing
    unless both runs reach significance), ``beyond_first``, ``beyond_second`` (that K asks for more raters per item
    than the data hold, the Table 1 rule's ``beyond_data``). Metrics follow the registry's order.
    """
    summary = table1(pd.concat([select(results, first, epsilon), select(results, second, epsilon)]))
    out = []
    for metric in METRICS:
        rows = [summary[(summary["dataset"] == d) & (summary["sampler"] == s) & (summary["metric"] == metric)]
                for d, s in (as_run(first), as_run(second))]
        if any(r.empty for r in rows):
            continue
        f, s = rows[0].iloc[0], rows[1].iloc[0]
        out.append({"metric": metric, "NK_first": f["NK"], "NK_second": s["NK"], "K_first": f["K"],
                    "K_second": s["K"], "beyond_first": bool(f.get("beyond_data", False)),
                    "beyond_second": bool(s.get("beyond_data", False))})
    table = pd.DataFrame(out, columns=["metric", "NK_first", "NK_second", "K_first", "K_second", "beyond_first",
                                       "beyond_second"])
    for col in ("NK_first", "NK_second", "K_first", "K_second"):
        table[col] = table[col].astype("Float64")
    table["ratio"] = table["NK_first"] / table["NK_second"]
    return table


def budget_ratios(results: pd.DataFrame, first, second, epsilon: float) -> Table:
    """Per metric, the smallest significant budget of two runs and their ratio (``first / second``), for the page
    (``None`` without results or runs)."""
    if results is None or first is None or second is None:
        return None
    table = smallest_budgets(results, first, second, epsilon)
    f, s = run_label(*as_run(first)), run_label(*as_run(second))
    page = pd.DataFrame({"metric": table["metric"].map(METRIC_LABELS),
                         f"smallest NK, {f}": table["NK_first"].astype("Int64"),
                         f"smallest NK, {s}": table["NK_second"].astype("Int64"),
                         "ratio": table["ratio"].map(lambda r: f"{r:.3g}" if pd.notna(r) else None)})
    return Table(page, f"ε = {epsilon:g}; {_rule(results)}; – : no budget of the grid reaches p < 0.05")


def null_spread_ratio(results: pd.DataFrame, first, second, epsilon: float) -> pd.Series:
    """Per metric, the median over shared cells of the null standard deviation of ``first`` over ``second``."""
    a = select(results, first, epsilon).set_index(["metric", "NK", "K"])["null_sd"]
    b = select(results, second, epsilon).set_index(["metric", "NK", "K"])["null_sd"]
    shared = a.index.intersection(b.index)
    ratio = (a.loc[shared] / b.loc[shared]).replace([np.inf, -np.inf], np.nan).groupby(level="metric").median()
    return ratio.reindex([m for m in METRICS if m in ratio.index]).rename("null sd ratio")


def nothing(text: str) -> Table:
    """A table with no rows, shown as the sentence ``text`` (never as an empty table)."""
    return Table(pd.DataFrame(), empty=text)


def spread_table(results: pd.DataFrame, first, second, epsilon: float) -> Table:
    """Per metric, the median ratio of null standard deviations (``first`` over ``second``), for the page."""
    ratio = null_spread_ratio(results, first, second, epsilon)
    frame = pd.DataFrame({"metric": [METRIC_LABELS[m] for m in ratio.index],
                          f"null sd, {as_run(first)[1]} / {as_run(second)[1]} (median over cells)":
                              ratio.round(3).to_numpy()})
    return Table(frame, f"ε = {epsilon:g}; {_rule(results)}; above 1: the null is wider under {as_run(first)[1]}")


def spread_by_run(results: pd.DataFrame, epsilon: float) -> Table:
    """Per run, how far apart its K curves lie (:func:`curve_spread`)."""
    frame = pd.DataFrame([{"run": run_label(*run), "p-value range across K (median over metrics and budgets)":
                           round(curve_spread(results, run, epsilon), 3)} for run in runs(results)])
    return Table(frame, f"ε = {epsilon:g}; {_rule(results)}")


def curve_spread(results: pd.DataFrame, run, epsilon: float) -> float:
    """Median over (metric, budget) of the range of p-values across K: how far apart a run's K curves lie."""
    chosen = select(results, run, epsilon)
    ranges = chosen.groupby(["metric", "NK"])["p_value"].agg(lambda p: p.max() - p.min())
    return float(ranges.median()) if len(ranges) else float("nan")


def family_medians(results: pd.DataFrame, epsilon: float) -> dict:
    """Median best K and median smallest budget of the vote and the distribution metrics (Table 1 rule).

    Only (run, metric) pairs that reach significance count; a family with none gets ``None``.
    """
    summary = table1(results[np.isclose(results["epsilon"], epsilon)]).dropna(subset=["NK"])
    out = {}
    for family, members in (("vote", VOTE_METRICS), ("distribution", DISTRIBUTION_METRICS)):
        chosen = summary[summary["metric"].isin(members)]
        out[family] = {"n": int(len(chosen)),
                       "K": float(chosen["K"].astype(float).median()) if len(chosen) else None,
                       "NK": float(chosen["NK"].astype(float).median()) if len(chosen) else None}
    out["pairs"] = int(len(table1(results[np.isclose(results["epsilon"], epsilon)])))
    return out


def figure_caption(results: pd.DataFrame, runs, paper_dataset: str, paper_figure: str,
                   regenerated: bool | None = None, averaging: str | None = None) -> str:
    """A caption's first sentence: "Regenerates the paper's Figure N" only when the runs are that figure's data
    (``regenerated`` overrides the check, for derived data such as the cut DICES); under an ``averaging`` whose
    recall is accuracy (weighted, micro), a sentence that says so."""
    runs = [as_run(r) for r in runs]
    names = " against ".join(run_label(*r) for r in runs)
    if regenerated is None:
        regenerated = bool(runs) and all(imitated(results, d) == paper_dataset for d, _ in runs)
    chosen = pd.concat([select(results, r) for r in runs]) if runs and results is not None else pd.DataFrame()
    beyond = "beyond_data" in chosen and chosen["beyond_data"].astype(bool).any()
    hollow = f" Hollow markers are {BEYOND_WORDS}." if beyond else ""
    if averaging in ("weighted", "micro"):
        hollow += (f" Under {averaging} averaging Recall (e) equals Accuracy (a) by construction (both count the "
                   f"items whose votes agree).")
    if regenerated:
        return (f"The paper's {paper_figure} regenerated {{cite}}`pandita2026multilevel` on {names}: p-value against budget "
                f"for a few K, one panel per metric, panel (a) Accuracy; log p-axis, dashed line p = 0.05.{hollow}")
    return (f"p-value against budget for a few K on {names}, one panel per metric; log p-axis, dashed line p = 0.05 "
            f"(the paper's {paper_figure} shows {PAPER_DATASET_NAMES[paper_dataset]}, which these data are not).{hollow}")


def shift_table(results: pd.DataFrame, comparisons, epsilon: float) -> Table:
    """Per comparison and metric: the smallest significant budget and its best K with and without rater modelling,
    with the paper's values in brackets where the dataset is or imitates one of the paper's."""
    rows = []
    for modelled, independent in comparisons:
        (dataset, m_s), (_, i_s) = as_run(modelled), as_run(independent)
        paper_name = imitated(results, dataset)
        table = smallest_budgets(results, modelled, independent, epsilon)
        for row in table.itertuples():
            def cell(value, sampler, stat, beyond=False):
                text = _fmt(value, stat) + (BEYOND_MARK if beyond else "")
                paper = paper_value(paper_name, sampler, row.metric, stat) if paper_name else None
                return text + (f" ({_fmt(paper, stat)})" if paper_name and np.isclose(epsilon, PAPER_EPSILON)
                               and paper_value_exists(paper_name, sampler, row.metric) else "")
            rows.append({"dataset": dataset, "metric": METRIC_LABELS[row.metric],
                         "NK, modelled": cell(row.NK_first, m_s, "NK"), "NK, S2": cell(row.NK_second, i_s, "NK"),
                         "best K, modelled": cell(row.K_first, m_s, "K", row.beyond_first),
                         "best K, S2": cell(row.K_second, i_s, "K", row.beyond_second),
                         "modelled sampler": m_s})
    frame = pd.DataFrame(rows)
    if len(frame):
        frame = frame[["dataset", "modelled sampler", "metric", "NK, modelled", "NK, S2", "best K, modelled",
                       "best K, S2"]]
    note = "ours (paper)" if has_paper_values(results) and np.isclose(epsilon, PAPER_EPSILON) else "ours"
    caption = f"{note} at ε = {epsilon:g}; {_rule(results)}; – : no budget of the grid reaches p < 0.05"
    if any(BEYOND_MARK in str(v) for v in frame.to_numpy().ravel()):
        caption += f"; {BEYOND_MARK}: {BEYOND_WORDS}"
    return Table(frame, caption)


def paper_value_exists(paper_dataset: str, sampler: str, metric: str, which: str = "table1") -> bool:
    return (paper_dataset, sampler, metric) in _by_cell(which).index


def departures(results: pd.DataFrame, epsilon: float, factor: float = 4.0) -> pd.DataFrame:
    """(run, metric) pairs whose smallest significant budget or best K differs from the paper's by ``factor`` or
    more, or that reach significance where the paper does not (or the reverse). Only runs with paper values count.

    Columns: dataset, sampler, metric, how (what departs, in words).
    """
    ours = table1(results[np.isclose(results["epsilon"], epsilon)])
    rows = []
    for r in ours.itertuples():
        paper_name = imitated(results, r.dataset)
        if paper_name is None or not paper_value_exists(paper_name, r.sampler, r.metric):
            continue
        pk, pnk = paper_value(paper_name, r.sampler, r.metric, "K"), paper_value(paper_name, r.sampler, r.metric, "NK")
        reasons = []
        if pd.isna(r.NK) != (pnk is None):
            reasons.append("significant here only" if pnk is None else "significant in the paper only")
        else:
            if pnk is not None and max(r.NK / pnk, pnk / r.NK) >= factor:
                reasons.append(f"budget {int(r.NK):,} against {int(pnk):,}")
            if pk is not None and not pd.isna(r.K) and max(r.K / pk, pk / r.K) >= factor:
                reasons.append(f"best K {int(r.K)} against {int(pk)}")
        if reasons:
            rows.append({"dataset": r.dataset, "sampler": r.sampler, "metric": r.metric, "how": "; ".join(reasons)})
    return pd.DataFrame(rows, columns=["dataset", "sampler", "metric", "how"])
