"""Why our Table 1 differs from the paper's: agreement counts per cell and the departures each alternative moves.

A cell is one (paper dataset, sampler, metric) of the paper's Table 1 (ε = 0.3): 40 cells over DICES S1 and S2,
D3code S2 and Toxicity S2 and S3. Two rules say whether our cell agrees with the paper's:

* **best-K class**: both K at most 10, or both at least 20 (or neither side reaches p < 0.05);
* **budget**: both smallest significant budgets within one step of the paper's budget grid (or neither reaches it).

A departure is a (cell, rule) that fails. Running Table 1 under alternatives (stand-in version 1 or 2, the
Dirichlet or the uniform perturbation rule) and comparing the sets of departures says which cause moves which
departure (:func:`moved`, :func:`finding`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis import tables
from analysis.grid import PAPER_BUDGETS
from analysis.metrics import METRIC_LABELS, METRICS
from analysis.synthetic import V1

FEW_K = 10  # the best-K classes: K <= FEW_K against K > FEW_K (the paper's grid has no K between 10 and 20)
RULES = {"k_class": "best-K class", "budget": "budget within one step"}
RUNS = (("dices-synthetic", "S1"), ("dices-synthetic", "S2"), ("d3code-synthetic", "S2"),
        ("toxicity-synthetic", "S2"), ("toxicity-synthetic", "S3"))
BASELINE = "stand-ins v2, Dirichlet rule"
ALTERNATIVES = {BASELINE: ("", "dirichlet"),  # name -> (stand-in suffix, perturbation rule)
                "stand-ins v1, Dirichlet rule": (V1, "dirichlet"),
                "stand-ins v2, uniform rule": ("", "uniform")}


def paper_dataset(name: str) -> str | None:
    """The paper dataset a dataset is or imitates, stand-ins of either version included."""
    return tables.imitates(name) or tables.imitates(str(name).removesuffix(V1))


def _step(budget) -> int | None:
    return None if budget is None or pd.isna(budget) else int(np.searchsorted(PAPER_BUDGETS, int(budget)))


def agreement(results: pd.DataFrame, epsilon: float = tables.PAPER_EPSILON) -> pd.DataFrame:
    """One row per Table 1 cell the runs cover: ours and the paper's budget and K, and whether each rule holds."""
    ours = tables.table1(results[np.isclose(results["epsilon"], epsilon)])
    published = tables.paper_table().set_index(["dataset", "sampler", "metric"])
    rows = []
    for r in ours.itertuples():
        paper = paper_dataset(r.dataset)
        if (paper, r.sampler, r.metric) not in published.index:
            continue
        nk, k, pnk, pk = (None if pd.isna(v) else int(v)
                          for v in (r.NK, r.K, *published.loc[(paper, r.sampler, r.metric), ["NK", "K"]]))
        both = nk is not None and pnk is not None
        rows.append({"dataset": paper, "sampler": r.sampler, "metric": r.metric, "NK": nk, "paper NK": pnk,
                     "K": k, "paper K": pk,
                     "k_class": (k <= FEW_K) == (pk <= FEW_K) if both else nk is None and pnk is None,
                     "budget": abs(_step(nk) - _step(pnk)) <= 1 if both else nk is None and pnk is None,
                     "smaller": both and nk < pnk, "comparable": both})
    return pd.DataFrame(rows, columns=["dataset", "sampler", "metric", "NK", "paper NK", "K", "paper K", *RULES,
                                       "smaller", "comparable"])


def counts(results: pd.DataFrame, epsilon: float = tables.PAPER_EPSILON) -> dict[str, tuple[int, int]]:
    """(agreeing, cells) per rule, and (our budget smaller, cells where both reach significance)."""
    cells = agreement(results, epsilon)
    out = {label: (int(cells[rule].sum()), len(cells)) for rule, label in RULES.items()}
    out["our budget smaller"] = (int(cells["smaller"].sum()), int(cells["comparable"].sum()))
    return out


def departures(results: pd.DataFrame, epsilon: float = tables.PAPER_EPSILON) -> set[tuple[str, str, str, str]]:
    """The failing (dataset, sampler, metric, rule) of the runs' Table 1."""
    cells = agreement(results, epsilon)
    return {(c.dataset, c.sampler, c.metric, rule) for c in cells.itertuples() for rule in RULES
            if not getattr(c, rule)}


def counts_table(by_alternative: dict[str, pd.DataFrame], epsilon: float = tables.PAPER_EPSILON) -> pd.DataFrame:
    """One row per alternative: its agreement counts with the paper's Table 1, as "agreeing of cells"."""
    rows = []
    for name, results in by_alternative.items():
        found = counts(results, epsilon)
        rows.append({"alternative": name, **{rule: f"{a} of {n}" for rule, (a, n) in found.items()}})
    return pd.DataFrame(rows)


def moved(base: pd.DataFrame, other: pd.DataFrame, epsilon: float = tables.PAPER_EPSILON) -> dict[str, set]:
    """Departures of ``base`` that ``other`` removes, and those it adds."""
    first, second = departures(base, epsilon), departures(other, epsilon)
    return {"removes": first - second, "adds": second - first}


def _names(found: set) -> str:
    """Departures as text, grouped by run: ``DICES S2: Accuracy (budget), MAE (best-K class)``."""
    if not found:
        return "none"
    by_run: dict[str, list[str]] = {}
    for dataset, sampler, metric, rule in sorted(found, key=lambda d: (d[0], d[1], METRICS.index(d[2]), d[3])):
        by_run.setdefault(f"{dataset} {sampler}", []).append(f"{METRIC_LABELS[metric]} ({RULES[rule]})")
    return "; ".join(f"{run}: {', '.join(items)}" for run, items in by_run.items())


def moved_table(by_alternative: dict[str, pd.DataFrame], baseline: str = BASELINE,
                epsilon: float = tables.PAPER_EPSILON) -> pd.DataFrame:
    """For each alternative to ``baseline``: the baseline's departures it removes and those it adds."""
    base = by_alternative[baseline]
    rows = []
    for name, results in by_alternative.items():
        if name != baseline:
            change = moved(base, results, epsilon)
            rows.append({"alternative": name, "departures it removes": _names(change["removes"]),
                         "departures it adds": _names(change["adds"])})
    return pd.DataFrame(rows, columns=["alternative", "departures it removes", "departures it adds"])


def finding(by_alternative: dict[str, pd.DataFrame], baseline: str = BASELINE,
            epsilon: float = tables.PAPER_EPSILON) -> str:
    """Which cause explains which departure, and what stays unexplained, as Markdown.

    A departure of the baseline is explained by an alternative cause when switching to that alternative removes
    it; it stays unexplained when it departs under every alternative run.
    """
    base = departures(by_alternative[baseline], epsilon)
    n_cells = len(agreement(by_alternative[baseline], epsilon))
    lines = [f"Under {baseline}, {len(base)} (cell, rule) pairs of the {n_cells} cells depart from the paper's "
             f"Table 1 ({2 * n_cells} pairs in all)."]
    explained: set = set()
    for name, results in by_alternative.items():
        if name == baseline:
            continue
        change = moved(by_alternative[baseline], results, epsilon)
        explained |= change["removes"]
        lines.append(f"Switching to {name} removes {len(change['removes'])} of them "
                     f"({_names(change['removes'])}) and adds {len(change['adds'])} ({_names(change['adds'])}).")
    rest = base - explained
    one = len(rest) == 1
    lines.append(f"{len(rest)} departure{' stays' if one else 's stay'} under every alternative run, so no cause "
                 f"measured here explains {'it' if one else 'them'}: {_names(rest)}.")
    return " ".join(lines)
