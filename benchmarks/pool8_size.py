"""The rater-level test's level in the one crowd design whose 500 test sets lay above the band: overlapping sets of
4 from a pool of 8 raters (``compare_calibration.py --designs sparse``), measured again on 2,000 fresh test sets so
that the miss can be told from the 500 sets' noise. Outside ``make test`` (about twenty minutes on two cores):

    .venv/bin/python benchmarks/pool8_size.py --out benchmarks/pool8_size.csv

The test sets are two runs of 1,000 seeds each, from 100,000 and from 200,000 (none of the calibration's, which
start at 0), each under S4 with the calibration's 200 replicates; the CSV holds each metric's share of two-sided
p < 0.05 over all of them, its Wilson 95 % interval, the binomial 99 % band of a calibrated test at this many
sets, and the oracle's share (a z-test that knows the true spread of the difference).
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analysis.io import write_atomic  # noqa: E402
from analysis.tools.compare_calibration import calibration  # noqa: E402
from analysis.tools.bands import wilson  # noqa: E402
from compare_calibration import band, sparse_designs  # noqa: E402

DESIGN = "5 labels, 40 overlapping sets of 4 from 8, N 1000"
FIRST_SEEDS = (100_000, 200_000)


def run(first_seed: int, n_sets: int) -> pd.DataFrame:
    """The calibration's rows for ``n_sets`` test sets of the design, seeds from ``first_seed``."""
    population = next(population for name, _, population, _ in sparse_designs() if name == DESIGN)
    return calibration(population, samplers=("S4",), n_sets=n_sets, seed=first_seed, n_samples=200)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, default=1000, help="test sets per run of seeds (default: 1000)")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    with multiprocessing.get_context("fork").Pool(len(FIRST_SEEDS)) as pool:
        runs = pool.starmap(run, [(first, args.sets) for first in FIRST_SEEDS])
    both = pd.concat(runs).groupby("metric", sort=False)
    table = both[["n_sets", "rejected"]].sum()
    table["share"] = table["rejected"] / table["n_sets"]
    table["low"], table["high"] = wilson(table["rejected"].to_numpy(), int(table["n_sets"].iloc[0]))
    table["band_low"], table["band_high"] = band(int(table["n_sets"].iloc[0]))
    table["oracle"] = both["oracle"].mean()
    table = table.reset_index().assign(design=DESIGN)
    if args.out:
        write_atomic(args.out, table.to_csv(index=False))
    print(table.round(4).to_string(index=False))
