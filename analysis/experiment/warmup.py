"""Kernels compiled before they are needed, side by side.

Before grids that run one after another (a chapter's samplers, say), :func:`warm` simulates one cell of each kernel
each grid needs in worker processes at once, into the cell cache.

A grid usually needs one kernel, and its workers would all compile that one at the same time; the next grid then
compiles its own. Run first side by side, the compilations overlap instead (a chapter on a user's file: about a
minute of compiling on a fresh install, roughly halved on two cores). The cells are the grids' own and are cached,
so the grids read them back: nothing is simulated twice, and every number is the one the grid alone gives.

Before several chapters run side by side (``make book``), :func:`compile_kernels` compiles every kernel once into
numba's cache, the kernels split between processes: otherwise each chapter's processes compile the same kernels at
the same time on a fresh install (about 80 s of one core each time). It draws a single replicate of each plan, and
writes no result.
"""

from __future__ import annotations

import argparse
import time
from functools import partial

import numpy as np

from analysis.data.annotations import AnnotationDataset
from analysis.experiment.choices import BOOK, Choices
from analysis.experiment.grid import PAPER_BUDGETS, PAPER_KS, cells, run
from analysis.experiment.workers import in_workers

# the kernels split into groups of about equal compile time (45 s and 33 s on one core of the development machine,
# the shared helpers compiled in each; the pigeonhole kernel calls the by-item kernel's item loops), each group
# compiled in a process of its own
KERNEL_GROUPS = (("by_item", "pigeonhole"), ("direct", "law", "counts"))
DESIGNS = ("dices-synthetic", "toxicity-synthetic", "d3code-synthetic")  # crossed, batched, sparse stand-ins


def kernel_cells(dataset: AnnotationDataset, sampler: str, budgets, ks, epsilons, choices: Choices) -> list:
    """One cell of the grid for each distinct pair of kernels its cells run (alternative, null)."""
    from analysis.engine import Simulator

    simulator = Simulator(dataset, sampler, **choices.engine())
    chosen = {}
    for cell in cells(sampler, budgets, ks, epsilons, choices.perturbation):
        kernels = tuple(simulator.path(cell.N, cell.K, cell.epsilon, null, choices.perturbation).kernel
                        for null in (False, True))
        chosen.setdefault(kernels, cell)
    return list(chosen.values())


def warm(pairs, budgets, ks, epsilons, n_jobs: int, choices: Choices, **options) -> None:
    """Simulate, ``n_jobs`` at a time, one cell of each kernel that the grids of ``pairs`` ((dataset, sampler)) run,
    into the cell cache (``options``: :func:`analysis.experiment.grid.run`'s, ``use_cache`` among them). Nothing to
    do with one job, one call, or without the cache (the cells would be simulated twice)."""
    if n_jobs < 2 or not options.get("use_cache", True):
        return
    calls = {}
    for i, (ds, sampler) in enumerate(pairs):
        for cell in kernel_cells(ds, sampler, budgets, ks, epsilons, choices):
            calls[(i, cell)] = partial(run, ds, sampler, budgets=[cell.NK], ks=[cell.K], epsilons=[cell.epsilon],
                                       n_jobs=1, progress=False, **choices.grid(), **options)
    if len(calls) > 1:
        in_workers(calls, n_jobs)


def compile_group(kernels: tuple[str, ...]) -> int:
    """Draw one replicate of every plan whose kernel is one of ``kernels``, over the paper's budgets and K, with
    and without perturbation, alternative and null, every noise law, on the book's stand-in of each design under
    each sampler the design allows: numba compiles each kernel these plans reach and caches it. Returns the number
    of plans drawn."""
    from analysis.data import datasets
    from analysis.engine import PERTURBATIONS, Simulator
    from analysis.engine.exact import settle
    from analysis.engine.samplers import allowed_samplers

    drawn = set()
    for name in DESIGNS:
        ds = datasets.load(BOOK.dataset(name))
        for sampler in allowed_samplers(ds):
            simulator = Simulator(ds, sampler, **BOOK.engine())
            grid = (c for rule in PERTURBATIONS for c in cells(sampler, PAPER_BUDGETS, PAPER_KS, (0.0, 0.3), rule))
            for cell in grid:
                for null in (False, True):
                    plan = simulator.path(cell.N, cell.K, cell.epsilon, null, cell.perturbation)
                    if plan.kernel in kernels and (sampler, plan) not in drawn:
                        drawn.add((sampler, plan))
                        simulator.draw(cell.N, cell.K, cell.epsilon, 1, np.random.default_rng(0), null,
                                       cell.perturbation)
    if "direct" in kernels:  # the exact ties of precision's quotients
        settle(np.zeros(4), np.random.default_rng(0).integers(0, 5, size=(4, 2, 3, 3)), "precision")
    return len(drawn)


def compile_kernels(n_jobs: int = 1) -> int:
    """Compile every kernel of the engine into numba's cache, the groups of :data:`KERNEL_GROUPS` in up to
    ``n_jobs`` processes at once (one process: all of them in turn). A kernel already cached is only loaded.
    Returns the number of plans drawn."""
    groups = KERNEL_GROUPS if n_jobs > 1 else (sum(KERNEL_GROUPS, ()),)
    return sum(in_workers({group: partial(compile_group, group) for group in groups}, n_jobs).values())


def main(argv=None) -> None:
    """``python -m analysis.experiment.warmup [--jobs N]``: :func:`compile_kernels`, with one line on what it did."""
    parser = argparse.ArgumentParser(prog="python -m analysis.experiment.warmup",
                                     description="Compile the engine's kernels into numba's cache ahead of use.")
    parser.add_argument("--jobs", type=int, default=1, help="processes (default: 1)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    plans = compile_kernels(args.jobs)
    print(f"kernels ready: {plans} plans drawn in {time.perf_counter() - start:.0f} s", flush=True)


if __name__ == "__main__":
    main()
