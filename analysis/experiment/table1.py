"""The paper's Table 1 rule (the methods page): per metric, the smallest budget at which some K is significant; and
Table 1 of a results file as the command line prints it."""

from __future__ import annotations

import json

import pandas as pd

from analysis.errors import ParameterError
from analysis.experiment.grid import ALPHA
from analysis.engine.metrics import ALL_METRICS, METRIC_LABELS


def table1(results: pd.DataFrame, alpha: float = ALPHA) -> pd.DataFrame:
    """The paper's Table 1 rule, one row per (dataset, sampler, epsilon, metric).

    For each metric, the smallest budget ``NK`` at which some ``K`` has ``p < alpha``; at that budget, the smallest
    p-value, its ``K`` (the smallest ``K`` on ties) and its effect size. ``NK`` is missing where no budget qualifies.

    Columns: dataset, sampler, epsilon, metric, NK, p_value, K, delta (NK and K as nullable integers), and
    ``beyond_data`` where the results have it (the chosen design is one the data cannot supply).
    """
    need = {"dataset", "sampler", "epsilon", "NK", "K", "metric", "p_value", "delta"}
    if need - set(results.columns):
        raise ParameterError(f"results lack column(s) {sorted(need - set(results.columns))}")
    keys = ["dataset", "sampler", "epsilon", "metric"]
    every = results.groupby(keys, sort=False).size().index  # in the order of first appearance
    budget = results[results["p_value"] < alpha].groupby(keys, sort=False)["NK"].min().rename("_budget")
    at = results.join(budget, on=keys, how="inner")  # the rows of the smallest significant budget, in their order
    at = at[at["NK"] == at["_budget"]]
    columns = ["NK", "p_value", "K", "delta"] + (["beyond_data"] if "beyond_data" in results else [])
    # the smallest p there, the smallest K on ties (a stable sort), the first row on ties of both
    best = at.sort_values(["p_value", "K"], kind="stable").groupby(keys, sort=False).head(1).set_index(keys)
    out = best[columns].reindex(every).reset_index()
    if "beyond_data" in out:
        out["beyond_data"] = out["beyond_data"].astype("boolean").fillna(False).astype(bool)
    # runs keep the order in which they appear in ``results``; metrics follow the paper's order
    run_order = {run: i for i, run in enumerate(dict.fromkeys(zip(out["dataset"], out["sampler"])))}
    out["_run"] = [run_order[run] for run in zip(out["dataset"], out["sampler"])]
    out["_metric"] = out["metric"].map(ALL_METRICS.index)
    out = out.sort_values(["_run", "epsilon", "_metric"]).drop(columns=["_run", "_metric"])
    return out.reset_index(drop=True).astype({"NK": "Int64", "K": "Int64"})


def table1_wide(summary: pd.DataFrame, digits: int = 3) -> pd.DataFrame:
    """Table 1 in the paper's layout, as text: the index is (run, stat), a run being ``dataset:sampler (ε=…)`` and
    stat one of NK, p-value, K, Δ; one column per metric label; '–' where no budget qualifies."""
    def fmt(value, kind):
        if pd.isna(value):
            return "–"
        return str(int(value)) if kind in ("NK", "K") else f"{value:.{digits}f}"

    rows = {}
    for (dataset, sampler, epsilon), group in summary.groupby(["dataset", "sampler", "epsilon"], sort=False):
        by_metric = group.set_index("metric")
        for stat, label in (("NK", "NK"), ("p_value", "p-value"), ("K", "K"), ("delta", "Δ")):
            rows[(f"{dataset}:{sampler} (ε={epsilon:g})", label)] = {
                METRIC_LABELS[m]: fmt(by_metric.loc[m, stat], stat) for m in by_metric.index}
    wide = pd.DataFrame.from_dict(rows, orient="index")
    wide.index = pd.MultiIndex.from_tuples(wide.index, names=["run", "stat"])
    return wide


def data_size(results_path: str) -> dict | None:
    """The data's item count and largest rater pool, from the provenance 'run' writes beside its results (None
    when that file or those fields are missing)."""
    try:
        note = json.loads(open(f"{results_path}.json", encoding="utf-8").read())
        return {"items": int(note["data_items"]), "raters": int(note["data_raters_per_item_max"])}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def table1_text(results: pd.DataFrame, alpha: float = ALPHA, data: dict | None = None) -> str:
    """Table 1 of a results table as the command line prints it: p below 0.001 as "< 0.001"; where a "–" appears,
    its legend and per run a hint (larger budgets, unless under S1 the grid's K already reaches the data's raters,
    which then bound the power); per run and metric the cheapest significant design (the smallest budget N x K,
    then the smallest p); and, given the data's size (:func:`data_size`), a note on every reported design with
    more items than the data have or more ratings per item than an item has."""
    summary = table1(results, alpha=alpha)
    wide = table1_wide(summary)
    is_p = wide.index.get_level_values("stat") == "p-value"
    wide[is_p] = wide[is_p].replace("0.000", "< 0.001")
    lines = [wide.to_string(), ""]
    missing = summary[summary["NK"].isna()]
    if len(missing):
        lines.append(f"–: no budget of the grid reaches p < {alpha:g} for that metric.")
    for (dataset, sampler, epsilon), _ in missing.groupby(["dataset", "sampler", "epsilon"], sort=False):
        run = results[(results["dataset"] == dataset) & (results["sampler"] == sampler)
                      & (results["epsilon"] == epsilon)]
        bounded = sampler == "S1" and data is not None and run["K"].max() >= data["raters"]
        lines.append(f"  {dataset}:{sampler} (ε={epsilon:g}): " + (
            f"the grid's K reaches the data's {data['raters']} raters, and under S1 every replicate redraws those "
            "same raters, which bound the power: larger --budgets would add items, not raters, and are unlikely "
            "to help" if bounded else "try larger --budgets (or more --ks)"))
    lines.append(f"Cheapest significant design per metric (smallest budget N x K with p < {alpha:g}):")
    for (dataset, sampler, epsilon), run in summary.groupby(["dataset", "sampler", "epsilon"], sort=False):
        designs = [f"{METRIC_LABELS[r.metric]} " + ("none" if pd.isna(r.NK) else f"{r.NK // r.K} x {r.K}")
                   for r in run.itertuples()]
        lines.append(f"  {dataset}:{sampler} (ε={epsilon:g}): " + "; ".join(designs))
    found = summary.dropna(subset=["NK"])
    for r in found.itertuples() if data else ():
        n = r.NK // r.K
        if n > data["items"]:
            lines.append(f"note: {METRIC_LABELS[r.metric]} at NK {r.NK}, K {r.K} means N = {n:,} items, "
                         f"{n / data['items']:.3g} times the {data['items']:,} of the data: items are drawn with "
                         "replacement, so this design is an extrapolation")
        if r.K > data["raters"]:
            lines.append(f"note: {METRIC_LABELS[r.metric]} at K {r.K} asks for more ratings per item than any item "
                         f"has ({data['raters']}): raters are drawn with replacement")
    return "\n".join(lines)
