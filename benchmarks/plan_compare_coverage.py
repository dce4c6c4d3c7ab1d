"""Do the bands of ``plan --test compare`` cover the power they estimate? Outside ``make test`` (ten minutes a pilot
on two cores):

    .venv/bin/python benchmarks/plan_compare_coverage.py --out benchmarks/plan_compare_coverage.csv

Three simulated pilots (3 ordinal labels, rater bias: :func:`analysis.tools.compare_calibration.draw_test_set`):
crossed, 60 items × 8 raters (S1); batched, 60 items in batches of 20 with 8 raters each (S3); sparse, 100 items
each rated by 5 of a pool of 30 raters (S4). The true power of each design (N in 20, 40, 80; K in 3 and 6, 3 and 5
on the sparse pilot; epsilon 0.5; accuracy and macro F1) comes from 4,000 studies of another seed; then ``--plans``
plans of 100 studies each, seeds 0, 1, ..., give every design a band, before and after the fit that makes power
rise with N. Per pilot, design and metric: the share of plans whose band holds the true power, against the nominal
95 %."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analysis.io import write_atomic  # noqa: E402
from analysis.tools import power  # noqa: E402
from analysis.tools.compare_calibration import Scenario, draw_test_set  # noqa: E402
from analysis.tools.study_power import StudyPower  # noqa: E402

NS, EPSILON, METRICS = (20, 40, 80), 0.5, ("accuracy", "f1_macro")
TRUE_STUDIES, PLAN_STUDIES = 4000, 100
PILOTS = {  # name: (population, sampler, the Ks planned)
    "crossed": (Scenario(n_items=60, n_raters=8, n_labels=3), "S1", (3, 6)),
    "batched": (Scenario(n_items=60, n_raters=8, n_labels=3, batch_size=20), "S3", (3, 6)),
    "sparse": (Scenario(n_items=100, n_raters=5, n_labels=3, pool=30), "S4", (3, 5)),
}


def coverage(name: str, n_plans: int, jobs: int) -> pd.DataFrame:
    """Every (plan, design, metric) case of pilot ``name``: the true power and whether each band holds it."""
    population, sampler, ks = PILOTS[name]
    pilot = draw_test_set(population, 0)[0]
    truth = StudyPower(pilot, sampler, METRICS, studies=TRUE_STUDIES, seed=10**6, max_n=max(NS), max_k=max(ks),
                       jobs=jobs)
    true = {(n, k): truth.cell(n, k, EPSILON)[0] for n in NS for k in ks}
    print(f"{name}: true powers done", file=sys.stderr, flush=True)
    rows = []
    for seed in range(n_plans):
        designs = power.plan(pilot, sampler=sampler, epsilon=EPSILON, ns=list(NS), ks=list(ks),
                             n_samples=PLAN_STUDIES, seed=seed, metrics=list(METRICS), test="compare",
                             n_jobs=jobs).designs
        for row in designs.itertuples():
            value = true[(row.N, row.K)][METRICS.index(row.metric)]
            low, high = power.wilson(round(row.simulated_power * PLAN_STUDIES), PLAN_STUDIES)
            rows.append({"pilot": name, "seed": seed, "metric": row.metric, "N": row.N, "K": row.K, "true": value,
                         "fitted_covers": bool(row.power_low <= value <= row.power_high),
                         "wilson_covers": bool(low <= value <= high)})
    return pd.DataFrame(rows)


def summary(table: pd.DataFrame) -> str:
    """Per pilot, design and metric its true power and both coverages, then the share over every case."""
    per = table.groupby(["pilot", "metric", "N", "K"]).agg(true=("true", "first"), fitted=("fitted_covers", "mean"),
                                                  wilson=("wilson_covers", "mean"))
    return (per.round(3).to_string() + f"\nall {len(table)} cases: fitted {table['fitted_covers'].mean():.3f}, "
            f"Wilson alone {table['wilson_covers'].mean():.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plans", type=int, default=40, help="plans per design (default: 40)")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default: 2)")
    parser.add_argument("--pilots", default=",".join(PILOTS), help=f"pilots, of {', '.join(PILOTS)} (default: all)")
    parser.add_argument("--out", help="the CSV of every case")
    args = parser.parse_args()
    table = pd.concat([coverage(name, args.plans, args.jobs) for name in args.pilots.split(",")], ignore_index=True)
    print(summary(table))
    if args.out is not None:
        write_atomic(args.out, table.to_csv(index=False))


if __name__ == "__main__":
    main()
