"""Effect-size agreement with the paper (the methods page): our mean Δ at each of the paper's own cells.

Every cell of the paper's Table 1 (ε = 0.3) and of its appendix table (ε not stated; the caller gives the one
:func:`analysis.paper.identities.appendix_epsilon` infers) prints (NK, K, p, Δ). Δ is a mean over 1000 replicates, so it
is far less noisy than the budget at which p first crosses 0.05; a cell is judged by the ratio of our Δ to the
paper's at exactly the paper's (N = NK // K, K).

:func:`paper_cells` lists the paper's cells, :func:`cells_to_simulate` the distinct (data, sampler, ε, NK, K) they
need (the paper's data where its files are cached, else the stand-in), :func:`simulate` runs those cells alone
through :func:`analysis.experiment.grid.run` for several seeds, :func:`effect_sizes` sets ours beside the paper's cell by cell,
and :func:`summary` counts the cells within a factor 1.25 by run and by metric, per seed, as min / median / max over
seeds, beside the best-K-class and budget-step counts of :func:`agreement` when full grids are given;
:func:`measure` does all of it in one call.
"""

from __future__ import annotations

from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from analysis.data import datasets
from analysis.experiment import grid
from analysis.paper import tables
# noqa: F401: FACTOR, FEW_K, ratio_mark and ratio_text are used here and, through this module, by others
from analysis.paper.marks import (FACTOR, FEW_K, budget_step as _step, ratio_mark, ratio_text,  # noqa: F401
                                  within_factor)
from analysis.errors import ParameterError
from analysis.experiment.table1 import table1
from analysis.engine.metrics import AVERAGINGS, BY_NAME, METRIC_LABELS, METRICS, averaged
from analysis.experiment.choices import BOOK, Choices


TABLES = ("table1", "appendix")
TABLE_NAMES = {"table1": "Table 1", "appendix": "the appendix"}  # the tables as a reader names them in a sentence
# the paper's dataset names -> their registry names (the stand-in is chosen by datasets.paper_or_stand_in)
REGISTRY_NAMES = {tables.imitates(name): name for name in datasets.PAPER_STAND_INS}
CELL = ["dataset", "sampler", "epsilon", "NK", "K"]
WITHIN = f"Δ within ×{FACTOR:g}"


ALL_AVERAGINGS = tuple(dict.fromkeys(m for a in AVERAGINGS for m in averaged(a)))  # every variant, simulated once


def select(results: pd.DataFrame, averaging: str) -> pd.DataFrame:
    """The rows of the eight metrics under ``averaging``, each renamed to the paper's column it stands for
    (``recall_macro`` -> ``recall``) and in the paper's column order within each cell, so the paper's tables
    compare with them; columns as ``results``'s."""
    chosen = results[results["metric"].isin(averaged(averaging))]
    chosen = chosen.assign(metric=chosen["metric"].map(lambda m: BY_NAME[m].column))
    cell = [c for c in ("dataset", "sampler", "perturbation", "epsilon", "NK", "K", "seed") if c in chosen.columns]
    order = chosen.assign(_cell=chosen.groupby(cell, sort=False).ngroup() if cell else 0,
                          _metric=chosen["metric"].map({m: i for i, m in enumerate(METRICS)}))
    return chosen.loc[order.sort_values(["_cell", "_metric"], kind="stable").index].reset_index(drop=True)


def paper_name(dataset: str) -> str:
    """The paper's name (``DICES``, ``D3code``, ``Toxicity``) of a dataset given by that name, its registry name or
    the name of a stand-in of either version; any other name is kept as it is (hand-made tables)."""
    return dataset if dataset in REGISTRY_NAMES else tables.imitates(dataset) or dataset


def paper_table(which: Iterable[str] = TABLES) -> pd.DataFrame:
    """The paper's tables stacked, with a ``table`` column; columns as :func:`analysis.paper.tables.paper_table`'s."""
    return pd.concat([tables.paper_table(w).assign(table=w) for w in which], ignore_index=True)


def paper_cells(which: Iterable[str] = TABLES, appendix_epsilon: float | None = None) -> pd.DataFrame:
    """One row per printed cell of the paper's tables (dashes left out).

    Columns: ``table``, ``dataset`` (the paper's name), ``sampler``, ``metric``, ``epsilon``, ``NK``, ``K``, ``N``
    (``NK // K``, as the grid splits a budget), ``paper_delta``, ``paper_p``. The appendix needs ``appendix_epsilon``,
    which the paper does not state.
    """
    which = tuple(which)
    if "appendix" in which and appendix_epsilon is None:
        raise ParameterError("the paper does not state the appendix's epsilon: pass appendix_epsilon (see "
                             "analysis.paper.identities.appendix_epsilon, which infers it)")
    table = paper_table(which).dropna(subset=["NK"])
    epsilon = np.where(table["table"] == "appendix", appendix_epsilon if appendix_epsilon is not None else np.nan,
                       tables.PAPER_EPSILON)
    out = pd.DataFrame({"table": table["table"], "dataset": table["dataset"], "sampler": table["sampler"],
                        "metric": table["metric"], "epsilon": epsilon.astype(float), "NK": table["NK"].astype(int),
                        "K": table["K"].astype(int)})
    out["N"] = out["NK"] // out["K"]
    out["paper_delta"], out["paper_p"] = table["delta"].to_numpy(float), table["p_value"].to_numpy(float)
    return out.reset_index(drop=True)


def data_for(dataset: str, data: Mapping[str, str] | None = None) -> str:
    """The data that simulate a paper dataset: ``data[dataset]`` when given, else the paper's files when cached,
    else the default stand-in."""
    if data and dataset in data:
        return data[dataset]
    return datasets.paper_or_stand_in(REGISTRY_NAMES[dataset])


def cells_to_simulate(cells: pd.DataFrame, data: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The distinct cells that ``cells`` (a :func:`paper_cells` frame) need, each once.

    Columns: ``data`` (the dataset to load, see :func:`data_for`), ``dataset`` (the paper's name), ``sampler``,
    ``epsilon``, ``NK``, ``K``, ``N``.
    """
    out = cells[CELL].drop_duplicates().reset_index(drop=True)
    out.insert(0, "data", [data_for(d, data) for d in out["dataset"]])
    out["N"] = out["NK"] // out["K"]
    return out


def simulate(cells: pd.DataFrame, seeds: Iterable[int] = (0, 1, 2), n_samples: int = 300, choices: Choices = BOOK,
             data: Mapping[str, str] | None = None, n_jobs: int = 1, cache_dir=None, use_cache: bool = True,
             metrics="all", loaded: dict | None = None) -> pd.DataFrame:
    """Our results at exactly the cells of ``cells`` (a :func:`paper_cells` or :func:`cells_to_simulate` frame),
    for each seed, through :func:`analysis.experiment.grid.run` (its cell cache included), never the full grid.

    Cells are grouped by (data, sampler, ε, NK) and each group runs its own K values, so no other cell is simulated.
    ``metrics`` and ``choices`` (the global switches, by default the book's,
    :data:`analysis.experiment.choices.BOOK`) go to the grid (:data:`ALL_AVERAGINGS` simulates every averaging at
    once, for :func:`select`); with ``metrics="all"`` the eight under the choices' averaging come back under the
    paper's names (:func:`select`). ``loaded`` holds
    datasets already loaded, by name (those loaded here are added). Columns:
    :data:`analysis.experiment.grid.RESULT_COLUMNS` and ``imitates`` (the paper's dataset name, :func:`paper_name`).
    """
    todo = cells if "data" in cells.columns else cells_to_simulate(cells, data)
    loaded = {} if loaded is None else loaded
    parts = []
    for seed in seeds:
        for (name, sampler, epsilon, nk), group in todo.groupby(["data", "sampler", "epsilon", "NK"], sort=False):
            if name not in loaded:
                loaded[name] = datasets.load(name)
            ds = loaded[name]
            parts.append(grid.run(ds, sampler, budgets=[int(nk)], ks=sorted(set(group["K"].astype(int))),
                                  epsilons=[float(epsilon)], n_samples=n_samples, seed=int(seed), n_jobs=n_jobs,
                                  cache_dir=cache_dir, use_cache=use_cache, progress=False, metrics=metrics,
                                  **choices.grid()))
    if not parts:
        raise ParameterError("no cell to simulate")
    results = pd.concat(parts, ignore_index=True)
    if metrics == "all":
        results = select(results, choices.averaging)
    return results.assign(imitates=results["dataset"].map(paper_name))


def effect_sizes(cells: pd.DataFrame, results: pd.DataFrame, factor: float = FACTOR) -> pd.DataFrame:
    """Ours beside the paper's Δ at each of the paper's cells, one row per (cell, seed of ``results``).

    ``cells``: a :func:`paper_cells` frame; ``results``: grid results (as :func:`simulate` returns) holding every
    cell, with ``delta``, ``delta_sd`` and ``n_samples``. Runs are matched by the paper dataset the data are or
    imitate. Columns: ``table``, ``dataset``, ``sampler``, ``metric``, ``epsilon``, ``NK``, ``K``, ``N``,
    ``paper_delta``, ``paper_p``, ``seed``, ``data`` (our dataset), ``delta``, ``se`` (Monte Carlo standard error,
    ``delta_sd / sqrt(n_samples)``), ``p_value`` (ours), ``ratio`` (ours / paper's) and ``within`` (the ratio lies
    in ``[1 / factor, factor]``; a negative ratio never does).
    """
    ours = results.assign(dataset=results["dataset"].map(paper_name), data=results["dataset"],
                          se=results["delta_sd"] / np.sqrt(results["n_samples"]),
                          _eps=results["epsilon"].round(9))
    key = ["dataset", "sampler", "metric", "_eps", "NK", "K"]
    ours = ours[[*key, "seed", "data", "delta", "se", "p_value"]]
    if ours.duplicated([*key, "seed"]).any():
        raise ParameterError("results hold two datasets for one paper dataset (or a cell twice): pass one of them")
    merged = cells.assign(_eps=cells["epsilon"].round(9)).merge(ours, on=key, how="left")
    missing = merged[merged["delta"].isna()]
    if len(missing):
        names = ", ".join(f"{r.dataset} {r.sampler} {r.metric} (ε {r.epsilon:g}, NK {r.NK}, K {r.K})"
                          for r in missing.head(5).itertuples())
        raise ParameterError(f"{len(missing)} paper cell(s) lack our results, e.g. {names}: simulate them first")
    merged["seed"] = merged["seed"].astype(int)
    merged["ratio"] = merged["delta"] / merged["paper_delta"]
    merged["within"] = (merged["ratio"] >= 1 / factor) & (merged["ratio"] <= factor)
    return merged.drop(columns="_eps").reset_index(drop=True)


def seed_counts(frame: pd.DataFrame, flag: str, name: str) -> list[dict]:
    """Per table and grouping (every cell, by run, by metric in the paper's order): cells and the per-seed count
    of ``flag`` (a boolean column of ``frame``, one row per cell and seed, beside ``table``, ``dataset``,
    ``sampler``, ``metric`` and ``seed``), as rows of :func:`counts_frame`."""
    rows = []
    frame = frame.assign(run=frame["dataset"] + " " + frame["sampler"],
                         metric_label=frame["metric"].map(METRIC_LABELS), all="every cell")
    table_order = {t: i for i, t in enumerate(dict.fromkeys(frame["table"]))}
    metric_order = {label: i for i, label in enumerate(METRIC_LABELS.values())}
    for by, column in (("all", "all"), ("run", "run"), ("metric", "metric_label")):
        groups = frame.groupby(["table", column], sort=False)
        keys = sorted(groups.groups, key=lambda key: (table_order[key[0]], metric_order.get(key[1], 0)
                                                      if by == "metric" else 0))
        for table, group in keys:
            per_seed = groups.get_group((table, group)).groupby("seed")[flag].agg(["sum", "size"])
            counts = per_seed["sum"].to_numpy()
            rows.append({"table": table, "by": by, "group": group, "count": name,
                         "cells": int(per_seed["size"].max()), "seeds": len(per_seed),
                         "min": int(counts.min()), "median": float(np.median(counts)), "max": int(counts.max())})
    return rows


def summary(effects: pd.DataFrame, grids: Mapping[int, pd.DataFrame] | None = None,
            epsilon: float = tables.PAPER_EPSILON) -> pd.DataFrame:
    """Counts of agreeing cells, per seed, summarised over seeds.

    ``effects``: an :func:`effect_sizes` frame (its ``within`` count); ``grids``: optionally, full grid results
    per seed, whose Table 1 gives the best-K-class and budget-step counts of :func:`agreement`
    (Table 1 only). Columns: ``table``, ``by`` (``all``, ``run`` or ``metric``), ``group``, ``count`` (which
    count), ``cells``, ``seeds``, ``min``, ``median``, ``max`` (over seeds) and ``spread`` (``median (min–max)``).
    """
    rows = seed_counts(effects, "within", WITHIN)
    if grids:
        cells = pd.concat([agreement(results, epsilon).assign(seed=seed) for seed, results in grids.items()],
                          ignore_index=True).assign(table="table1")
        for rule, label in RULES.items():
            rows += seed_counts(cells, rule, label)
    return counts_frame(rows)


def counts_frame(rows: list[dict]) -> pd.DataFrame:
    """:func:`seed_counts`' rows as :func:`summary`'s frame, ``spread`` (``median (min–max) of cells``) added."""
    out = pd.DataFrame(rows, columns=["table", "by", "group", "count", "cells", "seeds", "min", "median", "max"])
    out["spread"] = [f"{m:g} ({lo}–{hi}) of {n}" for m, lo, hi, n in
                     zip(out["median"], out["min"], out["max"], out["cells"])]
    return out


def measure(which: Iterable[str] = TABLES, appendix_epsilon: float | None = None, seeds: Iterable[int] = (0, 1, 2),
            n_samples: int = 300, grids: Mapping[int, pd.DataFrame] | None = None,
            **simulate_options) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The comparison in one call: the paper's cells (:func:`paper_cells`), simulated for each seed
    (:func:`simulate`, with ``simulate_options``), set beside the paper's (:func:`effect_sizes`) and counted
    (:func:`summary`, with ``grids``). Returns (effects, summary)."""
    cells = paper_cells(which, appendix_epsilon)
    effects = effect_sizes(cells, simulate(cells, seeds=seeds, n_samples=n_samples, **simulate_options))
    return effects, summary(effects, grids)


# ------------------------------------------------------------------------------------------ best K and budget

RULES = {"k_class": "best-K class", "budget": "budget within one step"}


def paper_dataset(name: str) -> str | None:
    """The paper dataset a dataset is or imitates, stand-ins of every version and variant included."""
    return tables.imitates(name)


def agreement(results: pd.DataFrame, epsilon: float = tables.PAPER_EPSILON, which: str = "table1") -> pd.DataFrame:
    """One row per cell of the paper's ``which`` table the runs cover: ours and the paper's budget and K, and
    whether each rule holds. Columns: ``dataset``, ``sampler``, ``metric``, ``NK``, ``paper NK``, ``K``,
    ``paper K``, ``k_class``, ``budget``, ``smaller`` (ours significant at a smaller budget), ``comparable`` (both
    significant)."""
    ours = table1(results[np.isclose(results["epsilon"], epsilon)])
    published = tables.paper_table(which).set_index(["dataset", "sampler", "metric"])
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


def cell_text(ours: float, paper: float, ratio: float) -> str:
    """``ours vs paper mark``: the paper's Δ as it prints it (three decimals), ours with as many more decimals as it
    takes for the printed numbers' ratio to fall on the same side of the factor as the ratio itself, so that
    "0.0713 vs 0.057 ×1.251" shows a departure that "0.071 vs 0.057" (×1.246) would hide."""
    digits = 3
    if paper and ratio == ratio:
        while digits < 6 and within_factor(round(ours, digits) / paper) != within_factor(ratio):
            digits += 1
    return f"{ours:.{digits}f} vs {paper:.3f} {ratio_mark(ratio)}"


def cells_table(effects: pd.DataFrame, which: str = "table1") -> tables.Table:
    """The paper's printed cells one by one: per run (rows) and metric (columns), our Δ at exactly the paper's
    (N×K, K) beside the paper's, with the ratio and ✓ where it lies within the factor (medians over seeds)."""
    chosen = effects[effects["table"] == which]
    cells = chosen.groupby(["dataset", "sampler", "metric"], sort=False).agg(
        ours=("delta", "median"), paper=("paper_delta", "first"), ratio=("ratio", "median"),
        NK=("NK", "first"), K=("K", "first")).reset_index()
    cells["cell"] = [cell_text(r.ours, r.paper, r.ratio) for r in cells.itertuples()]
    wide = cells.assign(run=cells["dataset"] + " " + cells["sampler"]).pivot(index="run", columns="metric",
                                                                            values="cell")
    wide = wide[[m for m in METRICS if m in wide.columns]].rename(columns=METRIC_LABELS)
    wide = wide.reindex(list(dict.fromkeys(cells["dataset"] + " " + cells["sampler"]))).fillna("–")
    name = TABLE_NAMES[which]
    return tables.Table(wide.rename_axis(columns=None).reset_index(),
                 f"{name} cell by cell: our Δ vs the paper's at the paper's own (N×K, K), median over seeds; ✓: "
                 f"within ×{FACTOR:g}, else the ratio ours / the paper's; –: no printed cell")
