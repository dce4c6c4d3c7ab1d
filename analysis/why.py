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

from analysis import chapter, datasets, tables
from analysis.grid import PAPER_BUDGETS
from analysis.metrics import METRIC_LABELS, METRICS
from analysis.synthetic import V1

FEW_K = 10  # the best-K classes: K <= FEW_K against K > FEW_K (the paper's grid has no K between 10 and 20)
RULES = {"k_class": "best-K class", "budget": "budget within one step"}
SHORT = {"k_class": "K", "budget": "budget"}
RUNS = (("dices-synthetic", "S1"), ("dices-synthetic", "S2"), ("d3code-synthetic", "S2"),
        ("toxicity-synthetic", "S2"), ("toxicity-synthetic", "S3"))
BASELINE = "stand-ins v2, Dirichlet rule"
RESEEDED = "the same, another seed"
PAPER_DATA = "the paper's data, Dirichlet rule"
VERSION_1 = "stand-ins v1, Dirichlet rule"
ALTERNATIVES = {BASELINE: ("v2", "dirichlet", 0),  # name -> (data, perturbation rule, seed offset)
                VERSION_1: ("v1", "dirichlet", 0),
                "stand-ins v2, uniform rule": ("v2", "uniform", 0),
                RESEEDED: ("v2", "dirichlet", 1)}
PAPER_NAMES = {stand_in: paper for paper, stand_in in datasets.PAPER_STAND_INS.items()}


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
        rows.append({"alternative": name,
                     **{rule: f"{a} of {n}" if n else "no cell" for rule, (a, n) in found.items()}})
    return pd.DataFrame(rows)


def moved(base: pd.DataFrame, other: pd.DataFrame, epsilon: float = tables.PAPER_EPSILON) -> dict[str, set]:
    """Departures of ``base`` that ``other`` removes, and those it adds."""
    first, second = departures(base, epsilon), departures(other, epsilon)
    return {"removes": first - second, "adds": second - first}


def _names(found: set) -> str:
    """Departures as text, grouped by run: ``DICES S2: Accuracy (budget), MAE (K, budget)``."""
    if not found:
        return "none"
    by_cell: dict[tuple, list[str]] = {}
    order = list(RULES)
    for dataset, sampler, metric, rule in sorted(found, key=lambda d: (d[0], d[1], METRICS.index(d[2]),
                                                                       order.index(d[3]))):
        by_cell.setdefault((dataset, sampler, metric), []).append(SHORT[rule])
    by_run: dict[str, list[str]] = {}
    for (dataset, sampler, metric), rules in by_cell.items():
        by_run.setdefault(f"{dataset} {sampler}", []).append(f"{METRIC_LABELS[metric]} ({', '.join(rules)})")
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


def finding(by_alternative: dict[str, pd.DataFrame], baseline: str = BASELINE, control: str = RESEEDED,
            epsilon: float = tables.PAPER_EPSILON) -> str:
    """Which cause explains which departure, and what stays unexplained, as Markdown.

    ``control`` reruns the baseline with another seed: the departures it moves are Monte Carlo noise. A departure
    of the baseline is explained by a cause when switching that cause removes it and the control does not; it
    stays unexplained when no switch removes it.
    """
    base = departures(by_alternative[baseline], epsilon)
    noise = set().union(*moved(by_alternative[baseline], by_alternative[control], epsilon).values())
    n_cells = len(agreement(by_alternative[baseline], epsilon))
    lines = [f"Under {baseline}, {len(base)} of the {2 * n_cells} (cell, rule) pairs of the paper's Table 1 "
             f"depart from it. Rerun with another seed, {_count(len(noise), 'pair')} "
             f"{'moves' if len(noise) == 1 else 'move'}: at this grid's "
             f"replicates that much is Monte Carlo noise ({_names(noise)})."]
    removed: set = set()
    for name, results in by_alternative.items():
        if name in (baseline, control):
            continue
        change = {key: found - noise for key, found in moved(by_alternative[baseline], results, epsilon).items()}
        removed |= change["removes"]
        lines.append(f"Switching to {name} removes {_count(len(change['removes']), 'departure')} beyond that "
                     f"noise ({_names(change['removes'])}) and adds {len(change['adds'])} "
                     f"({_names(change['adds'])}).")
    rest = base - removed - noise
    one = len(rest) == 1
    lines.append(f"{_count(len(rest), 'departure')} of the baseline {'stays' if one else 'stay'} under every "
                 f"alternative, so no cause measured here explains {'it' if one else 'them'}: {_names(rest)}.")
    return " ".join(lines)


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def alternatives() -> dict[str, tuple[str, str, int]]:
    """:data:`ALTERNATIVES`, and the paper's data under the Dirichlet rule when its three files are in the cache."""
    cached = all(datasets.paper_or_stand_in(name) == name for name in datasets.PAPER_STAND_INS)
    return {**ALTERNATIVES, PAPER_DATA: ("paper", "dirichlet", 0)} if cached else dict(ALTERNATIVES)


def _dataset(stand_in: str, data: str) -> str:
    return {"v2": stand_in, "v1": stand_in + V1, "paper": PAPER_NAMES[stand_in]}[data]


def dataset_names() -> list[str]:
    """Every dataset the alternatives use."""
    return list(dict.fromkeys(_dataset(name, data) for data, *_ in alternatives().values() for name, _ in RUNS))


def simulate(book) -> dict[str, pd.DataFrame]:
    """Table 1's five runs under each alternative, at the chapter's ε only (``book``: a :class:`chapter.Setup`
    holding :func:`dataset_names`)."""
    p = book.params
    out = {}
    for name, (data, rule, offset) in alternatives().items():
        pairs = [(book.dataset(_dataset(stand_in, data)), sampler) for stand_in, sampler in RUNS]
        results = chapter.simulate(pairs, budgets=p["budgets"], ks=p["ks"], epsilons=[book.epsilon],
                                   metrics=p["metrics"], n_samples=p["n_samples"], seed=p["seed"] + offset,
                                   n_jobs=p["n_jobs"], perturbation=rule, scheduler=p.get("scheduler"))
        out[name] = results.assign(imitates=results["dataset"].map(paper_dataset))
    return out


def effect_growth(by_alternative: dict[str, pd.DataFrame], metric: str = "accuracy", budget: int = 10_000,
                  epsilon: float = tables.PAPER_EPSILON) -> pd.DataFrame:
    """Δ of ``metric`` at the smallest and the largest K of the grid, at ``budget`` (the nearest in the grid), per
    alternative and S2 run: how the effect grows with ratings per item, which the per-item dispersion decides."""
    rows = []
    for name, results in by_alternative.items():
        chosen = results[np.isclose(results["epsilon"], epsilon) & (results["sampler"] == "S2")
                         & (results["metric"] == metric)]
        at = chapter.nearest(sorted(set(chosen["NK"])), budget)
        for dataset, group in chosen[chosen["NK"] == at].groupby("dataset", sort=False):
            group = group.sort_values("K")
            rows.append({"alternative": name, "run": f"{paper_dataset(dataset)} S2", "N×K": at,
                         f"Δ at K = {group['K'].iloc[0]}": group["delta"].iloc[0],
                         f"Δ at K = {group['K'].iloc[-1]}": group["delta"].iloc[-1]})
    return pd.DataFrame(rows).round(3)


def growth_figure(by_alternative: dict[str, pd.DataFrame], epsilon: float = tables.PAPER_EPSILON,
                  metrics=("accuracy", "f1")):
    """Δ against K under S2 for the stand-ins of both versions (one line per stand-in): the effect of the
    per-item dispersion on the vote metrics, drawn."""
    from analysis import plots

    both = pd.concat([by_alternative[name] for name in (BASELINE, VERSION_1) if name in by_alternative])
    return plots.effect_sizes(both[both["sampler"] == "S2"], epsilon, metrics=list(metrics))

