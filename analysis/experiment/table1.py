"""The paper's Table 1 rule (METHOD section 6): per metric, the smallest budget at which some K is significant."""

from __future__ import annotations

import numpy as np
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
    rows = []
    for (dataset, sampler, epsilon, metric), group in results.groupby(
            ["dataset", "sampler", "epsilon", "metric"], sort=False):
        hits = group[group["p_value"] < alpha]
        row = {"dataset": dataset, "sampler": sampler, "epsilon": epsilon, "metric": metric,
               "NK": np.nan, "p_value": np.nan, "K": np.nan, "delta": np.nan}
        if "beyond_data" in group:
            row["beyond_data"] = False
        if len(hits):
            budget = hits["NK"].min()
            best = group[group["NK"] == budget].sort_values(["p_value", "K"]).iloc[0]
            row.update(NK=budget, p_value=best["p_value"], K=best["K"], delta=best["delta"])
            if "beyond_data" in row:
                row["beyond_data"] = bool(best["beyond_data"])
        rows.append(row)
    out = pd.DataFrame(rows)
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
