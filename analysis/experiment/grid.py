"""The experiment grid (the methods page): every (epsilon, NK, K) cell simulated, cached on disk, and tabulated.

:func:`run` simulates each cell's alternative and null replicates, turns them into one row per metric, and returns
a tidy table. Each cell draws from its own random streams, derived from the run's seed and the cell's own
coordinates (sampler, epsilon, NK, K) with ``numpy.random.SeedSequence``; the numbers of a cell therefore do not
depend on the number of worker processes, on how cells are chunked, or on which other cells the grid holds.

Finished cells are written to a cache directory (:mod:`analysis.experiment.cache`), one small JSON file per cell,
atomically (written to a temporary file, then renamed), keyed by a hash of everything that determines the cell's numbers (the methods page): the
data's sha256, the cell (sampler, perturbation rule, epsilon, NK, K), ``n_samples``, the seed and the engine's
fingerprint, a hash of the simulating modules' source and of the numpy and numba versions. An interrupted run
keeps its finished cells; a rerun with the same parameters reads them back; a rerun after any change to the engine
computes afresh, and every cached summary carries its fingerprint, so an old entry is never mixed into a new table.
"""

from __future__ import annotations

import functools
import json
import sys
import time
from concurrent.futures import as_completed
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterable, Sequence

import numba
import numpy as np
import pandas as pd
from tqdm import tqdm

from analysis import __version__
from analysis.data.annotations import AnnotationDataset
from analysis.errors import Interrupted, ParameterError
from analysis.experiment.cache import CLAIM_POLL_SECONDS, ResultCache, default_cache_dir, engine_fingerprint
from analysis.engine.exact import settle
from analysis.io import write_atomic
from analysis.engine.metrics import BY_NAME, METRICS
from analysis.experiment.choices import BOOK, REFERENCE, selected
from analysis.experiment.workers import check_jobs, sigint_held, worker_pool
from analysis.experiment.pvalues import p_values, replicate_p_values
from analysis.engine.samplers import SAMPLERS, check_sampler, raters_available
from analysis.engine import PERTURBATIONS, Simulator, check_perturbation
from analysis.engine.path import estimated_seconds

PAPER_BUDGETS = (100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000)
PAPER_KS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 40, 60, 80, 100)
PAPER_EPSILONS = (0.1, 0.2, 0.3, 0.4)
PAPER_N_SAMPLES = 1000  # replicates per hypothesis (section 4.3)
ALPHA = 0.05
RESULT_COLUMNS = ("dataset", "sampler", "perturbation", "epsilon", "NK", "K", "N", "n_drawn", "beyond_data", "metric",
                  "p_value", "delta", "delta_sd", "null_mean", "null_sd", "share_below_alpha", "n_samples", "seed",
                  "data_sha256", "engine", "version")


@dataclass(frozen=True)
class Cell:
    """One grid cell: a sampler, a perturbation rule and strength, and a budget split into N items x K responses."""

    sampler: str
    perturbation: str
    epsilon: float
    NK: int
    K: int

    @property
    def N(self) -> int:
        return self.NK // self.K

    def seed_sequence(self, seed: int) -> np.random.SeedSequence:
        """The cell's own stream: keyed by the cell's coordinates, never by worker or chunk."""
        key = (SAMPLERS.index(self.sampler), PERTURBATIONS.index(self.perturbation), round(self.epsilon * 1_000_000),
               self.NK, self.K)
        return np.random.SeedSequence(seed, spawn_key=key)


def unique(values: Iterable) -> list:
    """The values in their first order, each once."""
    return list(dict.fromkeys(values))


def cells(sampler: str, budgets: Iterable[int], ks: Iterable[int], epsilons: Iterable[float],
          perturbation: str = BOOK.perturbation) -> list[Cell]:
    """All cells of the grid, each once, skipping those with fewer than one item (``NK // K < 1``)."""
    sampler = check_sampler(sampler)
    perturbation = check_perturbation(perturbation)
    budgets, ks = list(budgets), list(ks)
    for value in budgets + ks:
        if int(value) != value or value < 1:
            raise ParameterError(f"budgets and K values must be integers >= 1, got {value!r}")
    out = []
    for epsilon in unique(float(e) for e in epsilons):
        if not 0.0 <= epsilon <= 1.0:
            raise ParameterError(f"epsilon must lie in [0, 1], got {epsilon}")
        for nk in unique(int(v) for v in budgets):
            for k in unique(int(v) for v in ks):
                if nk // k >= 1:
                    out.append(Cell(sampler, perturbation, epsilon, nk, k))
    if not out:
        raise ParameterError("the grid is empty: every budget is smaller than every K")
    return out


def settle_cell(alt: np.ndarray, null: np.ndarray, alt_confusion: np.ndarray, null_confusion: np.ndarray,
                metrics: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(alternative, null) deltas (replicates x metrics, ``metrics`` order) with the ties of sums of quotients
    settled together, across both sets, so that the p-value compares them exactly (:mod:`analysis.engine.exact`)."""
    alt, null = alt.copy(), null.copy()
    confusion = np.concatenate([alt_confusion, null_confusion])
    for m, metric in enumerate(metrics):
        if BY_NAME[metric].quotients:
            both = settle(np.concatenate([alt[:, m], null[:, m]]), confusion, metric)
            alt[:, m], null[:, m] = both[:len(alt)], both[len(alt):]
    return alt, null


def simulate_cell(simulator: Simulator, cell: Cell, n_samples: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(alternative, null) deltas of one cell, each (n_samples, metrics), with ties exact (:func:`settle_cell`)."""
    alt_seq, null_seq = cell.seed_sequence(seed).spawn(2)
    alt = simulator.draw(cell.N, cell.K, cell.epsilon, n_samples, np.random.Generator(np.random.PCG64(alt_seq)),
                         null=False, perturbation=cell.perturbation)
    null = simulator.draw(cell.N, cell.K, cell.epsilon, n_samples, np.random.Generator(np.random.PCG64(null_seq)),
                          null=True, perturbation=cell.perturbation)
    return settle_cell(alt.deltas, null.deltas, alt.confusion, null.confusion, simulator.metrics)


def explain(simulator: Simulator, cells_: list[Cell], n_samples: int) -> pd.DataFrame:
    """Each cell's plans (alternative and null) and a rough estimate of its cost (``run --explain``).

    Columns: epsilon, NK, K, N, alternative and null (each plan described), responses (simulated in all), seconds
    (rough) (one core, once compiled).
    """
    rows = []
    for cell in cells_:
        plans = [simulator.path(cell.N, cell.K, cell.epsilon, null, cell.perturbation) for null in (False, True)]
        seconds = sum(estimated_seconds(p, simulator.design, cell.N, cell.K, n_samples) for p in plans)
        rows.append({"epsilon": cell.epsilon, "NK": cell.NK, "K": cell.K, "N": cell.N,
                     "alternative": plans[0].describe(), "null": plans[1].describe(),
                     "responses": 2 * n_samples * 3 * simulator.design.slots(cell.N) * cell.K,
                     "seconds (rough)": round(seconds, 3)})
    return pd.DataFrame(rows)


def summarise_cell(alt: np.ndarray, null: np.ndarray, alpha: float = ALPHA,
                   metrics: tuple[str, ...] = METRICS) -> dict[str, dict[str, float]]:
    """Per metric: p-value, effect size, the spread of both distributions, and the share of alternative
    replicates whose own p-value ``p_j`` lies below ``alpha`` (about ``alpha`` at epsilon 0 when calibrated)."""
    pv = p_values(null, alt)
    return {
        metric: {
            "p_value": float(pv[m]),
            "delta": float(alt[:, m].mean()),
            "delta_sd": float(alt[:, m].std(ddof=1)) if len(alt) > 1 else 0.0,
            "null_mean": float(null[:, m].mean()),
            "null_sd": float(null[:, m].std(ddof=1)) if len(null) > 1 else 0.0,
            "share_below_alpha": float((replicate_p_values(null[:, m], alt[:, m]) < alpha).mean()),
        }
        for m, metric in enumerate(metrics)
    }


def variant_fingerprint(simulator: Simulator) -> str:
    """The engine fingerprint and every setting of the simulator that is not its default (:meth:`Simulator.settings`,
    read from its constructor): with the data's hash and the cell's every field, a cell's key covers all that sets its
    numbers. With every setting at its default (those the choices set at the reference choices'), the fingerprint
    alone."""
    reference = REFERENCE.engine()
    changed = {name: value for name, value in simulator.settings(changed=True).items()
               if name not in reference or value != reference[name]}
    return f"{engine_fingerprint()}|{json.dumps(changed, sort_keys=True)}" if changed else engine_fingerprint()


_WORKER: dict = {}


def _init_worker(simulator: Simulator, n_samples: int, seed: int) -> None:
    _WORKER.update(simulator=simulator, n_samples=n_samples, seed=seed)


def simulate_chunk(simulator: Simulator, cells_: list[Cell], n_samples: int, seed: int) -> list[tuple[Cell, dict]]:
    """Simulate and summarise a chunk of cells (what a local worker or a Dask task runs)."""
    return [(cell, summarise_cell(*simulate_cell(simulator, cell, n_samples, seed), metrics=simulator.metrics))
            for cell in cells_]


def _work(cells_: list[Cell]) -> list[tuple[Cell, dict]]:
    return simulate_chunk(_WORKER["simulator"], cells_, _WORKER["n_samples"], _WORKER["seed"])


DASK_TIMEOUT = "20s"  # how long to wait for a Dask scheduler before giving up
MODELS_PER_PAIR = 8  # simulated models per replicate pair: G, A, B (alternative) and G, A, B, A*, B* (null)
POOL_FROM = 2_000_000_000  # simulated responses from which worker processes pay for their start (a few seconds)


def cell_responses(cell: Cell, n_samples: int) -> int:
    """Simulated responses of a cell: its cost, for progress bars and ETAs."""
    return MODELS_PER_PAIR * cell.N * cell.K * n_samples


def _dask_client(scheduler: str):
    """A client of the Dask scheduler at ``scheduler`` (for example ``tcp://host:8786``)."""
    try:
        from distributed import Client
    except ImportError:
        raise ParameterError("--scheduler needs Dask: pip install 'annotator-bootstrap[dask]'") from None
    try:
        return Client(scheduler, timeout=DASK_TIMEOUT)
    except (OSError, TimeoutError, ValueError) as err:
        raise ParameterError(f"cannot reach the Dask scheduler at {scheduler!r}: {err}") from None


def _dask_results(client, simulator: Simulator, chunks: list[list[Cell]], n_samples: int, seed: int):
    """Send the chunks to the cluster and yield (cell, summary) pairs as chunks finish."""
    from distributed import as_completed as dask_completed

    remote = client.scatter(simulator, broadcast=True)
    futures = [client.submit(simulate_chunk, remote, chunk, n_samples, seed, pure=False) for chunk in chunks]
    try:
        for future in dask_completed(futures):
            yield from future.result()
    finally:
        client.cancel(futures)


def _in_this_process(todo: list[Cell], n_samples: int, n_jobs: int, chunk_size: int, scheduler: str | None) -> bool:
    """Whether cells are simulated here: one job, one chunk, or too little work to pay for starting workers."""
    return not scheduler and (n_jobs == 1 or len(todo) <= chunk_size
                              or sum(cell_responses(c, n_samples) for c in todo) < POOL_FROM)


def _computed(simulator: Simulator, todo: list[Cell], n_samples: int, seed: int, chunk_size: int,
              n_jobs: int | None, scheduler: str | None):
    """Yield (cell, summary) for every cell of ``todo`` as it finishes: on a Dask cluster (``scheduler``), in
    ``n_jobs`` worker processes, or in this process (``n_jobs`` None). On Ctrl-C, an error or an early close, the
    workers are killed, not awaited."""
    chunks = [todo[i:i + chunk_size] for i in range(0, len(todo), chunk_size)]
    if not chunks:
        return
    if scheduler:
        client = _dask_client(scheduler)
        finished = _dask_results(client, simulator, chunks, n_samples, seed)
        try:
            yield from finished
        finally:
            finished.close()
            client.close()
        return
    if n_jobs is None:
        _init_worker(simulator, n_samples, seed)
        for chunk in chunks:
            yield from _work(chunk)
        return
    with worker_pool(n_jobs, [functools.partial(_work, chunk) for chunk in chunks],
                     _init_worker, (simulator, n_samples, seed)) as futures:
        for future in as_completed(futures):
            yield from future.result()


def _claimed(cache: ResultCache | None, keys: dict, todo: list[Cell], finish) -> list[Cell]:
    """The cells of ``todo`` this run claims to compute (all of them without a cache); a claimed cell that another
    run finished meanwhile is read back with ``finish(cell, summary)`` instead."""
    mine = []
    for cell in todo:
        if cache is None:
            mine.append(cell)
        elif cache.claim(keys[cell]):
            summary = cache.get(keys[cell])
            if summary is None:
                mine.append(cell)
            else:
                cache.release(keys[cell])
                finish(cell, summary)
    return mine


def _await_others(cache: ResultCache | None, keys: dict, cells_: list[Cell], finish) -> list[Cell]:
    """Wait for the cells that other runs claimed, ``finish(cell, summary)`` each as its file appears. As soon as
    a claim is given up or goes stale without a result, return the cells still to do (the freed ones claimed)."""
    waiting = list(cells_) if cache else []
    if waiting:
        tqdm.write(f"note: {len(waiting)} cell(s) are being computed by another run on {cache.directory}; waiting "
                   "for them", file=sys.stderr)
    while waiting:
        still, freed = [], False
        for cell in waiting:
            summary = cache.get(keys[cell])
            if summary is not None:
                finish(cell, summary)
            else:
                freed |= cache.claim(keys[cell])
                still.append(cell)
        if freed:
            return still
        waiting = still
        if waiting:
            time.sleep(CLAIM_POLL_SECONDS)
    return []


# simulators kept for the next run of the same data, sampler and choices, each a few MB (10 at most measured, the
# Toxicity stand-in under S3): the why chapter cycles through about 40, of which 4 kept rebuilt 210
SIMULATORS_KEPT = 16
_SIMULATORS: dict = {}


def _simulator(dataset: AnnotationDataset, sampler: str, engine: dict, metrics: tuple) -> Simulator:
    """The simulator of a run, kept for the next runs on the same data (by its sha256), sampler, the engine's
    settings of the run's choices (:meth:`~analysis.experiment.choices.Choices.engine`) and metrics: a chapter that
    runs the grid budget by budget, or cell by cell, builds its layout and tables once. A
    simulator holds only tables that its inputs determine; every draw takes its own seeded generator."""
    key = (dataset.sha256, check_sampler(sampler), tuple(sorted(engine.items())), tuple(metrics))
    if key not in _SIMULATORS:
        while len(_SIMULATORS) >= SIMULATORS_KEPT:
            del _SIMULATORS[next(iter(_SIMULATORS))]
        _SIMULATORS[key] = Simulator(dataset, sampler, **engine, metrics=metrics)
    return _SIMULATORS[key]


def run(
    dataset: AnnotationDataset,
    sampler: str,
    budgets: Sequence[int] = PAPER_BUDGETS,
    ks: Sequence[int] = PAPER_KS,
    epsilons: Sequence[float] = PAPER_EPSILONS,
    metrics: Sequence[str] | str = "all",
    n_samples: int = 1000,
    seed: int = 0,
    n_jobs: int = 1,
    chunk_size: int = 1,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    progress: bool = True,
    perturbation: str = BOOK.perturbation,
    scheduler: str | None = None,
    smoothing: float = BOOK.smoothing,
    averaging: str = BOOK.averaging,
    null_mixing: str = BOOK.null_mixing,
) -> pd.DataFrame:
    """Simulate the grid for one dataset and sampler and return the tidy results table. The defaults of
    ``perturbation``, ``smoothing`` and ``averaging`` are the book's choices (:data:`analysis.experiment.choices.BOOK`),
    as in the chapters and ``python -m analysis run``, as is ``null_mixing``.

    Parameters
    ----------
    dataset : AnnotationDataset
        The annotation dataset.
    sampler : str
        ``"S1"``, ``"S2"``, ``"S3"`` or ``"S4"`` (the methods page).
    budgets : sequence of int
        The total budgets N × K of the grid (default the paper's nine).
    ks : sequence of int
        The ratings per item K (default the paper's fifteen); a cell with ``NK // K < 1`` items is skipped.
    epsilons : sequence of float
        The perturbation strengths of model B (default the paper's four, 0.1 to 0.4).
    metrics : sequence of str or "all"
        Metric names of :data:`analysis.engine.metrics.REGISTRY` (``"all"``: the eight the paper reports, with
        precision, recall and F1 averaged by ``averaging``); the weighted eight are always simulated, with any other
        metric asked for.
    n_samples : int
        Replicates for the alternative and, separately, for the null.
    seed : int
        The run's seed; the same seed gives identical tables for any ``n_jobs`` and ``chunk_size``.
    n_jobs : int
        Worker processes (1 runs in this process, as does a grid too small to repay starting workers).
    chunk_size : int
        Cells handed to a worker at a time.
    cache_dir : str or Path, optional
        Where finished cells are kept (default ``$ANALYSIS_CACHE_DIR``, else a folder of the user's cache).
    use_cache : bool
        Read finished cells back from ``cache_dir`` and store new ones there.
    progress : bool
        Show a progress bar on the standard error stream (stderr).
    perturbation : str
        How B is perturbed: ``"one-label"`` (the default: one random label per item slot,
        which each of its responses takes with probability epsilon), ``"dirichlet"`` (Dirichlet(1/C) noise, the
        rule of the authors' toolkit), ``"uniform"`` or ``"dirichlet-shares"`` (Dirichlet noise centred on the
        label shares).
    scheduler : str, optional
        The address of a ``dask.distributed`` scheduler (``tcp://host:8786``); the cells then run on that
        cluster, in chunks, with the same per-cell seeds, so the table is identical to a local run's.
    smoothing : float
        The constant added to every count before KL and JSD, ``1e-9`` (the default) or ``1e-12`` (the authors'
        toolkit's).
    averaging : str
        How ``metrics="all"`` averages precision, recall and F1 over the labels (``"macro"``, the default;
        ``"weighted"``, ``"micro"`` or ``"macro-all"``).
    null_mixing : str
        How the null mixes A's and B's rater columns: ``"half"`` (the default, a uniform half of them goes to A*)
        or ``"pairs"`` (a coin per pair of A's and B's columns).

    Returns
    -------
    pandas.DataFrame
        One row per (epsilon, budget NK, K, metric): the p-value, the mean
        effect ``delta`` and the null's spread, ``beyond_data`` (a design the data cannot supply: K above the raters a
        drawn item comes from, :func:`~analysis.engine.samplers.raters_available`, or N above the items: an
        extrapolation), and what reproduces the row (seed, data sha256, engine, version).
    """
    choices = replace(BOOK, averaging=averaging, smoothing=smoothing, perturbation=perturbation,
                      null_mixing=null_mixing)
    chosen = selected(metrics, choices)
    if int(n_samples) != n_samples or n_samples < 2:
        raise ParameterError(f"n_samples must be an integer >= 2, got {n_samples!r}")
    n_jobs = check_jobs(n_jobs)
    if int(chunk_size) != chunk_size or chunk_size < 1:
        raise ParameterError(f"chunk_size must be an integer >= 1, got {chunk_size!r}")
    chunk_size = int(chunk_size)
    grid = cells(sampler, budgets, ks, epsilons, perturbation)
    simulator = _simulator(dataset, sampler, choices.engine(), METRICS + tuple(m for m in chosen if m not in METRICS))
    cache = ResultCache(cache_dir or default_cache_dir(), engine=variant_fingerprint(simulator),
                        metrics=simulator.metrics) if use_cache else None
    keys = {cell: cache.key(dataset.sha256, cell, int(n_samples), int(seed)) for cell in grid} if cache else {}
    done = {cell: cache.get(keys[cell]) for cell in grid} if cache else {}
    done = {cell: summary for cell, summary in done.items() if summary is not None}
    todo = [cell for cell in grid if cell not in done]

    # progress in simulated responses, so that the ETA weighs every cell by its cost; cells in the postfix
    bar = tqdm(total=sum(cell_responses(c, n_samples) for c in grid),
               initial=sum(cell_responses(c, n_samples) for c in done), desc=f"{dataset.name} {simulator.sampler}",
               bar_format="{desc}: {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}{postfix}]", disable=not progress,
               postfix=f"{len(done)}/{len(grid)} cells")  # no count of responses: a weight, not a rate to read

    def finish(cell: Cell, summary: dict) -> None:
        done[cell] = summary
        bar.update(cell_responses(cell, n_samples))
        bar.set_postfix_str(f"{len(done)}/{len(grid)} cells", refresh=False)

    # the most expensive cells go first so that workers finish together. In this process cells are claimed a chunk
    # at a time, so that runs sharing the cache share the work; a pool or a cluster claims its cells at once.
    todo.sort(key=lambda cell: -cell_responses(cell, n_samples))
    local = _in_this_process(todo, n_samples, n_jobs, chunk_size, scheduler)
    computing, offered = None, set()
    try:
        while todo:
            ahead = [cell for cell in todo if cell not in offered][:chunk_size if local else None]
            offered.update(ahead)
            computing = _computed(simulator, _claimed(cache, keys, ahead, finish), int(n_samples), int(seed),
                                  chunk_size, None if local else n_jobs, scheduler)
            for cell, summary in computing:
                with sigint_held():  # stored and counted as one step: Ctrl-C's message counts what is cached
                    if cache:
                        cache.put(keys[cell], summary)
                    finish(cell, summary)
            todo = [cell for cell in todo if cell not in done]
            if offered.issuperset(todo):  # the rest is claimed by other runs: wait for it, or until some is freed
                todo, offered = _await_others(cache, keys, todo, finish), set()
    except KeyboardInterrupt:
        raise Interrupted(len(done), len(grid), str(cache.directory) if cache else None) from None
    finally:
        if computing:
            computing.close()  # on Ctrl-C or an error: the workers are killed, not awaited
        bar.close()
        if cache:
            cache.release_all()

    rows = []
    raters = raters_available(dataset, simulator.sampler)
    for cell in grid:
        n_drawn = simulator.design.slots(cell.N)
        beyond = bool(cell.K > raters or cell.N > dataset.n_items)  # a design the data cannot supply (extrapolated)
        for metric in chosen:
            rows.append({"dataset": dataset.name, "sampler": cell.sampler, "perturbation": cell.perturbation,
                         "epsilon": cell.epsilon, "NK": cell.NK, "K": cell.K, "N": cell.N, "n_drawn": n_drawn,
                         "beyond_data": beyond,
                         "metric": metric, **done[cell][metric], "n_samples": int(n_samples), "seed": int(seed),
                         "data_sha256": dataset.sha256, "engine": engine_fingerprint(), "version": __version__})
    table = pd.DataFrame(rows, columns=list(RESULT_COLUMNS))
    table.attrs["provenance"] = provenance(dataset, sampler=simulator.sampler, perturbation=perturbation,
                                           smoothing=simulator.smoothing, null_mixing=simulator.null_mixing,
                                           budgets=unique(budgets), ks=unique(ks), epsilons=unique(epsilons),
                                           metrics=list(chosen), n_samples=int(n_samples), seed=int(seed))
    return table


def provenance(dataset: AnnotationDataset, **parameters) -> dict:
    """What produced a result: package version, engine fingerprint, parameters, seed and the data's hash and origin."""
    return {"version": __version__, "engine": engine_fingerprint(), "numpy": np.__version__,
            "numba": numba.__version__, "dataset": dataset.name, "data_sha256": dataset.sha256,
            "data_provenance": dataset.provenance, "data_items": dataset.n_items,
            "data_raters_per_item_max": int(dataset.raters_per_item.max()), "parameters": parameters}


def save_results(table: pd.DataFrame, path: str | Path) -> None:
    """Write the table as CSV and its provenance as ``<path>.json`` beside it, both atomically."""
    write_atomic(path, table.to_csv(index=False))
    write_atomic(f"{path}.json", json.dumps(table.attrs.get("provenance", {}), indent=2, default=str))


def paper_grid_size(budgets=PAPER_BUDGETS, ks=PAPER_KS, epsilons=PAPER_EPSILONS) -> dict:
    """Cells and simulated responses per model and replicate of a grid (for benchmarks and banners)."""
    grid = [(nk, k) for nk in budgets for k in ks if nk // k >= 1]
    return {"cells": len(grid) * len(epsilons),
            "responses_per_replicate": sum((nk // k) * k for nk, k in grid) * len(epsilons),
            "items_per_replicate": sum(nk // k for nk, k in grid) * len(epsilons)}

