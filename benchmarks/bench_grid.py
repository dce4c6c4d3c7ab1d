"""Benchmark of the engine on dices-synthetic: the full paper grid per sampler, one cell, and throughput.

Run with ``make bench`` (or ``python benchmarks/bench_grid.py --jobs 2``). Nothing is cached: every figure is a
fresh simulation. ``--quick`` shrinks the grid to one epsilon for a smoke run.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

import numpy as np

from analysis import __version__
from analysis.grid import PAPER_BUDGETS, PAPER_EPSILONS, PAPER_KS, Cell, paper_grid_size, run, simulate_cell
from analysis.simulate import Simulator
from analysis.synthetic import make_stand_in

MODELS_PER_PAIR = 8  # G, A, B in an alternative replicate; G, A, B, A*, B* in a null replicate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--n-samples", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="one epsilon instead of four")
    args = parser.parse_args()
    epsilons = PAPER_EPSILONS[2:3] if args.quick else PAPER_EPSILONS
    ds = make_stand_in("dices-synthetic")
    size = paper_grid_size(PAPER_BUDGETS, PAPER_KS, epsilons)
    print(f"analysis {__version__}, python {platform.python_version()}, {os.cpu_count()} CPUs, jobs={args.jobs}")
    print(f"dataset {ds.name}: {ds.n_items} items x {ds.n_raters} raters, {ds.n_labels} labels")
    print(f"grid: {len(PAPER_BUDGETS)} budgets x {len(PAPER_KS)} K x {len(epsilons)} epsilons = {size['cells']} cells,"
          f" 8 metrics, {args.n_samples} alternative + {args.n_samples} null replicates per cell")

    for sampler in ("S1", "S2"):
        sim = Simulator(ds, sampler)
        simulate_cell(sim, Cell(sampler, 0.3, 20, 2), 2, 0)  # load the compiled kernels before timing
        timings = []
        for repeat in range(5):
            start = time.perf_counter()
            simulate_cell(sim, Cell(sampler, 0.3, 1000, 10), args.n_samples, repeat)
            timings.append(time.perf_counter() - start)
        print(f"{sampler} cell NK=1000 K=10 eps=0.3, 8 metrics: median {statistics.median(timings):.3f} s "
              f"(min {min(timings):.3f}, max {max(timings):.3f}, 5 runs, one process)")

    for sampler in ("S1", "S2"):
        start = time.perf_counter()
        run(ds, sampler, epsilons=epsilons, n_samples=args.n_samples, n_jobs=args.jobs, use_cache=False,
            progress=False)
        wall = time.perf_counter() - start
        responses = size["responses_per_replicate"] * args.n_samples * MODELS_PER_PAIR
        print(f"{sampler} full grid: {wall:.1f} s wall ({wall / 60:.2f} min); "
              f"{responses:.3g} simulated responses, {responses / wall:.3g} responses/s")


if __name__ == "__main__":
    np.seterr(all="raise")
    main()
