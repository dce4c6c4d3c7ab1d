"""Several grids' kernels compiled side by side: before grids that run one after another (a chapter's samplers,
say), one cell of each kernel each grid needs is simulated in worker processes at once, into the cell cache.

A grid usually needs one kernel, and its workers would all compile that one at the same time; the next grid then
compiles its own. Run first side by side, the compilations overlap instead (a chapter on a user's file: about a
minute of compiling on a fresh install, roughly halved on two cores). The cells are the grids' own and are cached,
so the grids read them back: nothing is simulated twice, and every number is the one the grid alone gives.
"""

from __future__ import annotations

from functools import partial

from analysis.data.annotations import AnnotationDataset
from analysis.experiment.grid import cells, in_workers, run


def kernel_cells(dataset: AnnotationDataset, sampler: str, budgets, ks, epsilons, perturbation: str,
                 smoothing: float) -> list:
    """One cell of the grid for each distinct pair of kernels its cells run (alternative, null)."""
    from analysis.engine import Simulator

    simulator = Simulator(dataset, sampler, smoothing=smoothing)
    chosen = {}
    for cell in cells(sampler, budgets, ks, epsilons, perturbation):
        kernels = tuple(simulator.path(cell.N, cell.K, cell.epsilon, null, perturbation).kernel
                        for null in (False, True))
        chosen.setdefault(kernels, cell)
    return list(chosen.values())


def warm(pairs, budgets, ks, epsilons, n_jobs: int, perturbation: str, smoothing: float, **options) -> None:
    """Simulate, ``n_jobs`` at a time, one cell of each kernel that the grids of ``pairs`` ((dataset, sampler)) run,
    into the cell cache (``options``: :func:`analysis.experiment.grid.run`'s, ``use_cache`` among them). Nothing to
    do with one job, one call, or without the cache (the cells would be simulated twice)."""
    if n_jobs < 2 or not options.get("use_cache", True):
        return
    calls = {}
    for i, (ds, sampler) in enumerate(pairs):
        for cell in kernel_cells(ds, sampler, budgets, ks, epsilons, perturbation, smoothing):
            calls[(i, cell)] = partial(run, ds, sampler, budgets=[cell.NK], ks=[cell.K], epsilons=[cell.epsilon],
                                       n_jobs=1, progress=False, perturbation=perturbation, smoothing=smoothing,
                                       **options)
    if len(calls) > 1:
        in_workers(calls, n_jobs)
