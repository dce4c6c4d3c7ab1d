"""RQ2's notes on the numbers themselves: cells where our p departs from the paper's by more than a factor, what
the noise law does to Δ, and where KL-Div's Δ turns negative. Words for the chapter, not verdicts
(:mod:`analysis.paper.findings` holds those)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.engine.metrics import METRIC_LABELS, VOTE_METRICS
from analysis.experiment.table1 import table1
from analysis.paper import tables
from analysis.paper.verdicts import _label
from analysis.wording import law_name


def departures_note(results: pd.DataFrame | None, epsilon: float, factor: float = 4.0) -> str:
    """Where our Table 1 departs from the paper's by ``factor`` or more, as Markdown ("" when there are no paper
    values to depart from). It names the departures and says which causes are known and which are not."""
    if results is None or not len(results) or not tables.has_paper_values(results):
        return ""
    if not np.isclose(epsilon, tables.PAPER_EPSILON):
        return (f"At ε = {epsilon:g} the paper's Table 1 (ε = {tables.PAPER_EPSILON:g}) is not comparable cell by cell, "
                "so departures from it are not counted.")
    found = tables.departures(results, epsilon, factor)
    summary = table1(results[np.isclose(results["epsilon"], epsilon)])
    total = sum(tables.paper_value_exists(tables.imitated(results, d), s, m)
                for d, s, m in zip(summary["dataset"], summary["sampler"], summary["metric"])
                if tables.imitated(results, d) is not None)
    if found.empty:
        return (f"None of the {total} (run, metric) pairs the paper's Table 1 reports (its dashes included) departs "
                f"from it by a factor of {factor:g} or more in budget or best K.")
    parts = []
    for (dataset, sampler), group in found.groupby(["dataset", "sampler"], sort=False):
        parts.append(f"{tables.run_label(dataset, sampler)}: {len(group)} metric{'' if len(group) == 1 else 's'}, e.g. "
                     f"{METRIC_LABELS[group['metric'].iloc[0]]} ({group['how'].iloc[0]})")
    return (f"{len(found)} of the {total} (run, metric) pairs the paper's Table 1 reports (its dashes included) "
            f"depart from it by a factor of {factor:g} or more in budget or best K, or reach significance on one "
            "side only (the regenerated Table 1 shows each): " + "; ".join(parts) +
            ". Known causes that move these numbers are the stand-ins (fitted to published statistics of the data, "
            "never to its ratings), the perturbation rule and the permutation null "
            "({doc}`../book/differences`); {ref}`chapter-why` reruns the departures under alternatives to each and "
            "says which cause explains which.")


def rule_effects(by_rule: dict[str, pd.DataFrame], epsilon: float, budget: int) -> dict[str, float]:
    """Per perturbation rule, the median over runs and vote metrics of Δ at the largest K over Δ at the smallest K
    (at one budget): above 1, a large K helps the vote metrics; below 1, their effect fades with K."""
    out = {}
    for rule, results in by_rule.items():
        chosen = results[np.isclose(results["epsilon"], epsilon) & (results["NK"] == budget)
                         & results["metric"].isin(VOTE_METRICS)]
        ratios = []
        for _, group in chosen.groupby(["dataset", "sampler", "metric"]):
            group = group.sort_values("K")
            first, last = group["delta"].iloc[0], group["delta"].iloc[-1]
            if len(group) > 1 and first > 0:
                ratios.append(last / first)
        out[rule] = float(np.median(ratios)) if ratios else float("nan")
    return out


def rule_effect_note(by_rule: dict[str, pd.DataFrame], epsilon: float, budget: int) -> str:
    """One sentence measuring :func:`rule_effects` for the page."""
    effects = rule_effects(by_rule, epsilon, budget)
    first = next(iter(by_rule.values()))
    ks = sorted(set(first.loc[first["NK"] == budget, "K"]))
    if len(ks) < 2 or any(np.isnan(v) for v in effects.values()):
        return "The grid has too few K at this budget to measure how Δ changes with K."
    parts = [f"{ratio:.2f} times its K = {ks[0]} value under the {law_name(rule)} rule"
             for rule, ratio in effects.items()]
    return (f"At N×K = {budget:,} and ε = {epsilon:g}, the vote metrics' Δ at K = {ks[-1]} is " + ", and ".join(parts)
            + " (median over runs and vote metrics).")


def kl_note(results: pd.DataFrame | None, epsilon: float) -> str:
    """What KL-Div's smoothing does to this run, measured, as one Markdown paragraph ("" without KL-Div cells).

    A label that G's responses on an item hold and X's lack costs about ``ln(1/1e-12)`` = 27.6 nats times G's
    share of it, so at small K KL-Div counts mostly such misses; the note gives Δ at the smallest K and the cells
    where B scores better (Δ < 0) with their p-values.
    """
    if results is None or not len(results):
        return ""
    kl = results[np.isclose(results["epsilon"], epsilon) & (results["metric"] == "kl_div")]
    if not len(kl):
        return ""
    k0 = int(kl["K"].min())
    at_k0 = float(kl.loc[kl["K"] == k0, "delta"].median())
    negative = kl[kl["delta"] < 0]
    runs = ", ".join(_label(r) for r in tables.runs(negative))
    return (f"In this run KL-Div's Δ at K = {k0} is {at_k0:.2f} (median over runs and budgets). "
            + (f"{len(negative)} of its {len(kl)} cells {'has' if len(negative) == 1 else 'have'} a negative Δ, B "
               f"scoring better than A, at K = {_k_span(negative['K'])} ({runs}); "
               + (f"its p-value is {negative['p_value'].iloc[0]:.2f}." if len(negative) == 1 else
                  f"their median p-value is {negative['p_value'].median():.2f}.")
               if len(negative) else "No cell has a negative Δ."))


def _k_span(ks: pd.Series) -> str:
    """``"20"`` for one K, ``"5–20"`` for several."""
    low, high = int(ks.min()), int(ks.max())
    return f"{low}" if low == high else f"{low}–{high}"


def departures_count(results: pd.DataFrame | None, epsilon: float, factor: float = 4.0) -> str:
    """One plain sentence: how many (run, metric) pairs depart from the paper's Table 1 by ``factor`` or more."""
    if results is None or not len(results) or not tables.has_paper_values(results):
        return "This build ran on no dataset with paper values, so no departure was measured."
    if not np.isclose(epsilon, tables.PAPER_EPSILON):
        return f"This build's RQ2 ran at ε = {epsilon:g}, where the paper's Table 1 does not apply cell by cell."
    found = tables.departures(results, epsilon, factor)
    summary = table1(results[np.isclose(results["epsilon"], epsilon)])
    total = sum(tables.paper_value_exists(tables.imitated(results, d), s, m)
                for d, s, m in zip(summary["dataset"], summary["sampler"], summary["metric"])
                if tables.imitated(results, d) is not None)
    return (f"In this build, {len(found)} of the {total} (run, metric) pairs the paper's Table 1 reports (its dashes "
            f"included) depart from it by a factor of {factor:g} or more in budget or best K, or reach significance on "
            "one side only.")


def widest_null_note(results: pd.DataFrame | None, first, second, epsilon: float) -> str:
    """Why the metric whose null widens most under ``first`` (S3) need not need the larger budget, as Markdown from
    the run's own numbers: its spread ratio, its smallest significant budgets under both runs and, where they are
    equal, its best p at that budget and at the grid's next smaller one under each ("" without a comparison)."""
    if results is None or first is None or second is None:
        return ""
    spread = tables.null_spread_ratio(results, first, second, epsilon).dropna()
    budgets = tables.smallest_budgets(results, first, second, epsilon).set_index("metric")
    if spread.empty:
        return ""
    metric = spread.idxmax()
    name, a, b = METRIC_LABELS[metric], tables.as_run(first)[1], tables.as_run(second)[1]
    opening = f"{name}'s null widens most under {a} (×{spread[metric]:.2f} {b}'s spread)"
    if metric not in budgets.index or pd.isna(budgets.loc[metric, "NK_first"]) or pd.isna(
            budgets.loc[metric, "NK_second"]):
        return f"{opening}, and it does not reach p < 0.05 under both samplers, so no budget ratio is read for it."
    nk_a, nk_b = float(budgets.loc[metric, "NK_first"]), float(budgets.loc[metric, "NK_second"])
    if nk_a != nk_b:
        return (f"{opening}, and its smallest significant budget moves from {nk_b:,.0f} under {b} to {nk_a:,.0f} "
                f"under {a} (×{nk_a / nk_b:.3g}).")
    grid = sorted(tables.select(results, first, epsilon)["NK"].unique())

    def best_p(run, nk):
        cells = tables.select(results, run, epsilon)
        return float(cells[(cells["metric"] == metric) & (cells["NK"] == nk)]["p_value"].min())
    text = (f"{opening}, yet its smallest significant budget is the same under both, {nk_a:,.0f}: there its best p "
            f"is {tables.on_its_side(best_p(second, nk_a), lambda x: x < tables.ALPHA, 3)} under {b} and "
            f"{tables.on_its_side(best_p(first, nk_a), lambda x: x < tables.ALPHA, 3)} under {a}, so the wider null "
            "raises the p without carrying it past 0.05")
    below = [nk for nk in grid if nk < nk_a]
    if not below:
        return text + (f"; and {nk_a:,.0f} is the grid's smallest budget, so the grid cannot show whether {a} would "
                       "need more below it.")
    lower = below[-1]
    return text + (f"; at the grid's next smaller budget, {lower:,.0f}, neither reaches it (best p "
                   f"{best_p(second, lower):.3f} and {best_p(first, lower):.3f}). A budget moves only in the grid's "
                   "steps, and a wider null moves it only where it carries a p across 0.05 at one of them.")
