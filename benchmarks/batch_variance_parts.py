"""Where the rater-level test's variance comes from on batches (S3): its two jackknife parts against the true variance
of the difference. Outside ``make test`` (about five minutes on one core):

    .venv/bin/python benchmarks/batch_variance_parts.py --sets 200 --out benchmarks/batch_variance_parts.csv

On the batched designs of the power against the oracle (``compare_calibration.py --designs oracle``: batches of 20
items, 5 or 10 raters each, A better), each metric's item part I (items left out) and rater part R (a batch's
raters left out one position at a time) are averaged over the test sets and divided by the variance of the observed
difference over the same sets; ``I+R`` is the variance the test uses.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from functools import partial
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analysis.experiment.choices import BOOK, selected  # noqa: E402
from analysis.io import write_atomic  # noqa: E402
from analysis.tools.compare import _delta_matrix, observed, rater_parts  # noqa: E402
from analysis.tools.compare_calibration import Scenario, drawn_test_sets  # noqa: E402
from compare_calibration import oracle_designs  # noqa: E402


def parts(population: Scenario, n_sets: int) -> pd.DataFrame:
    """Per metric: I, R and I+R over the true variance, from ``n_sets`` test sets of ``population``."""
    names = selected("all", BOOK)
    deltas = partial(_delta_matrix, names=names)
    rows = []
    for ds, share_a, share_b, k in drawn_test_sets(population, n_sets):
        found = rater_parts(ds, share_a, share_b, "S3", k, deltas)
        seen = observed(ds, share_a, share_b, k, names)
        rows += [{"metric": m, "delta": seen[m][2], "I": found.item[i], "R": found.rater[i]}
                 for i, m in enumerate(names)]
    grouped = pd.DataFrame(rows).groupby("metric", sort=False)
    truth = grouped["delta"].var()
    out = pd.DataFrame({"I": grouped["I"].mean() / truth, "R": grouped["R"].mean() / truth})
    return out.assign(**{"I+R": out["I"] + out["R"], "sets": n_sets}).reset_index()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, default=200)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    table = pd.concat([parts(replace(population, lean=0.0, lean_b=lean_b), args.sets).assign(design=name)
                       for name, sampler, population, lean_b in oracle_designs() if sampler == "S3"],
                      ignore_index=True)
    if args.out:
        write_atomic(args.out, table.to_csv(index=False))
    print(table.round(2).to_string(index=False))
