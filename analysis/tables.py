"""Tables for the book: the paper's reference values and our regenerated tables set beside them.

The paper's Table 1 (epsilon = 0.3) and its appendix table were typed in once into
``analysis/resources/paper_tables.csv``, one row per (table, dataset, sampler, metric), and are only read here.
"""

from __future__ import annotations

from importlib.resources import files

import numpy as np
import pandas as pd

from analysis.grid import table1
from analysis.metrics import METRIC_LABELS, METRICS

PAPER_DATASETS = {"dices-synthetic": "DICES", "d3code-synthetic": "D3code", "toxicity-synthetic": "Toxicity"}
STATS = (("NK", "NK"), ("p_value", "p-value"), ("K", "K"), ("delta", "Δ"))


def paper_table(which: str = "table1") -> pd.DataFrame:
    """The paper's values: ``"table1"`` (epsilon 0.3) or ``"appendix"`` (epsilon not stated in the paper)."""
    table = pd.read_csv(files("analysis") / "resources" / "paper_tables.csv", comment="#")
    if which not in set(table["table"]):
        raise ValueError(f"unknown paper table {which!r}; choose 'table1' or 'appendix'")
    return table[table["table"] == which].drop(columns="table").astype({"NK": "Int64", "K": "Int64"})


def _fmt(value, stat: str, digits: int = 3) -> str:
    if pd.isna(value):
        return "–"
    return str(int(value)) if stat in ("NK", "K") else f"{value:.{digits}f}"


def compare_with_paper(results: pd.DataFrame, epsilon: float, which: str = "table1") -> pd.DataFrame:
    """Our Table 1 at ``epsilon`` beside the paper's: each cell reads ``ours (paper)``.

    Runs on a dataset that is not one of the paper's (or its stand-in) show ``ours`` alone.
    """
    ours = table1(results[results["epsilon"] == epsilon])
    paper = paper_table(which).set_index(["dataset", "sampler", "metric"])
    rows = {}
    for (dataset, sampler), group in ours.groupby(["dataset", "sampler"], sort=False):
        by_metric = group.set_index("metric")
        paper_name = PAPER_DATASETS.get(dataset)
        for stat, label in STATS:
            row = {}
            for metric in METRICS:
                if metric not in by_metric.index:
                    continue
                cell = _fmt(by_metric.loc[metric, stat], stat)
                key = (paper_name, sampler, metric)
                if key in paper.index:
                    cell += f" ({_fmt(paper.loc[key, stat], stat)})"
                row[METRIC_LABELS[metric]] = cell
            rows[(f"{dataset}:{sampler}", label)] = row
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index = pd.MultiIndex.from_tuples(table.index, names=["run", "stat"])
    return table


def p_value_table(results: pd.DataFrame, epsilon: float, metric: str) -> pd.DataFrame:
    """p-values of one metric at one epsilon: rows the runs and K, columns the budgets."""
    chosen = results[(results["epsilon"] == epsilon) & (results["metric"] == metric)].copy()
    chosen["run"] = chosen["dataset"] + ":" + chosen["sampler"]
    wide = chosen.pivot_table(index=["run", "K"], columns="NK", values="p_value", sort=False)
    return wide.round(3)


def best_k(results: pd.DataFrame, epsilon: float, metrics=("accuracy", "mae", "jsd")) -> pd.DataFrame:
    """The K with the smallest p-value at each budget (smallest K on ties): rows (run, metric), columns NK.

    A budget at which no K reaches p < 0.05 is marked with a trailing ``*``.
    """
    chosen = results[(results["epsilon"] == epsilon) & (results["metric"].isin(metrics))].copy()
    chosen["run"] = chosen["dataset"] + ":" + chosen["sampler"]
    best = chosen.sort_values(["p_value", "K"]).groupby(["run", "metric", "NK"], sort=False).first().reset_index()
    best["cell"] = best["K"].astype(str) + np.where(best["p_value"] < 0.05, "", "*")
    best["metric"] = best["metric"].map(METRIC_LABELS)
    wide = best.pivot(index=["run", "metric"], columns="NK", values="cell")
    runs = list(dict.fromkeys(chosen["run"]))
    order = [METRIC_LABELS[m] for m in METRICS if m in metrics]
    return wide.reindex(pd.MultiIndex.from_product([runs, order], names=["run", "metric"]))
