"""Benchmark of the engine: the full paper grid per sampler, one reference cell, and the time per cell by NK and K.

Run with ``make bench`` (or ``python benchmarks/bench_grid.py --jobs 2``). Nothing is cached: every figure is a
fresh simulation. S1 and S2 run on ``dices-synthetic``, S3 on ``toxicity-synthetic`` (the designs they need); S4 and,
beside it for the paired ratio, S2 on the sparse ``d3code-synthetic`` (``--samplers S4,S2-sparse``).
``--quick`` shrinks the grid to one epsilon; ``--repeats`` runs each full grid several times and reports the
median, minimum and maximum.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

import numpy as np

from analysis import __version__
from analysis.experiment.grid import (MODELS_PER_PAIR, PAPER_BUDGETS, PAPER_EPSILONS, PAPER_KS, Cell, paper_grid_size, run,
                           simulate_cell)
from analysis.engine import Simulator
from analysis.engine.metrics import METRICS
from analysis.experiment.choices import REFERENCE
from analysis.data.synthetic import make_stand_in
from analysis.experiment.timing import time_cell, time_cells

# (label, sampler, data)
RUNS = (("S1", "S1", "dices-synthetic"), ("S2", "S2", "dices-synthetic"), ("S3", "S3", "toxicity-synthetic"),
        ("S4", "S4", "d3code-synthetic"), ("S2-sparse", "S2", "d3code-synthetic"))
PROFILE_BUDGETS = (1000, 10000, 50000)
PROFILE_KS = (1, 2, 5, 10, 20, 40, 100)
# the workload every figure of benchmarks/README.md measures: the reference choices (Dirichlet noise, s = 1e-12, the
# weighted eight), the grid's defaults before they became the book's, so that figures stay comparable across commits
SETTINGS = dict(perturbation=REFERENCE.perturbation, smoothing=REFERENCE.smoothing, averaging=REFERENCE.averaging)


def spread(values: list[float]) -> str:
    return f"median {statistics.median(values):.3f} (min {min(values):.3f}, max {max(values):.3f}, {len(values)} runs)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--n-samples", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=1, help="full-grid runs per sampler")
    parser.add_argument("--quick", action="store_true", help="one epsilon instead of four")
    parser.add_argument("--samplers", default="S1,S2,S3,S4,S2-sparse")
    args = parser.parse_args()
    epsilons = PAPER_EPSILONS[2:3] if args.quick else PAPER_EPSILONS
    chosen = [(label, s, name) for label, s, name in RUNS if label in args.samplers.split(",")]
    size = paper_grid_size(PAPER_BUDGETS, PAPER_KS, epsilons)
    print(f"analysis {__version__}, python {platform.python_version()}, {os.cpu_count()} CPUs, jobs={args.jobs}")
    print(f"grid: {len(PAPER_BUDGETS)} budgets x {len(PAPER_KS)} K x {len(epsilons)} epsilons = {size['cells']} cells,"
          f" {len(METRICS)} metrics, {args.n_samples} alternative + {args.n_samples} null replicates per cell")

    print("\nOne cell, one process (seconds):")
    for label, sampler, name in chosen:
        sim = Simulator(make_stand_in(name), sampler, **REFERENCE.engine())
        simulate_cell(sim, Cell(sampler, REFERENCE.perturbation, 0.3, 20, 2), 2, 0)  # load the compiled kernels first
        print(f"  {label} {name} NK=1000 K=10 eps=0.3: "
              f"{spread(time_cell(sim, Cell(sampler, REFERENCE.perturbation, 0.3, 1000, 10), args.n_samples, 5))}")

    print(f"\nTime per cell by budget and K (one process, eps=0.3, {args.n_samples} + {args.n_samples} replicates, "
          "median of 3, seconds):")
    print("  sampler  NK     " + " ".join(f"K={k:<6d}" for k in PROFILE_KS))
    for label, sampler, name in chosen:
        table = time_cells(make_stand_in(name), sampler, PROFILE_BUDGETS, PROFILE_KS, args.n_samples,
                            choices=REFERENCE)
        for nk, row in table.pivot(index="NK", columns="K", values="seconds").iterrows():
            print(f"  {label:9s}  {nk:<6d} " + " ".join(f"{t:<8.3f}" for t in row))

    print("\nFull paper grid:")
    for label, sampler, name in chosen:
        ds = make_stand_in(name)
        walls = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            run(ds, sampler, epsilons=epsilons, n_samples=args.n_samples, n_jobs=args.jobs, use_cache=False,
                progress=False, **SETTINGS)
            walls.append(time.perf_counter() - start)
        wall = statistics.median(walls)
        responses = size["responses_per_replicate"] * args.n_samples * MODELS_PER_PAIR
        print(f"  {label} {name} full grid: {spread(walls)} s wall; "
              f"{responses:.3g} simulated responses, {responses / wall:.3g} responses/s")


if __name__ == "__main__":
    np.seterr(all="raise")
    main()
