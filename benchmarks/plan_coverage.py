"""Do the plan's power bands cover? Outside ``make test`` (a few minutes):

    .venv/bin/python benchmarks/plan_coverage.py --truth 4000 --out benchmarks/plan_coverage.csv

Three pilots, one per design the planner accepts: crossed (the DICES stand-in, S1), batched (the Toxicity stand-in,
S3) and sparse (the D3code stand-in, S4). Each is planned (``power.plan``, 200 replicates per design, as the
command line does) on a grid of 3 N x 3 K at two effects, every metric: 3 x 9 x 2 x 8 = 432 (design, metric)
cases. The true power of each design comes from one long simulation of the same design (``--truth`` replicates of
the alternative and as many of the null). A case is covered when the plan's 95 % band holds the true power; the
goal is 90-98 % of the cases. Designs where ``compare``'s own test cannot reject (power 0 by rule) are left out.

Writes one row per case and prints the coverage by pilot and overall, each with its Wilson 95 % band.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analysis.data import datasets  # noqa: E402
from analysis.engine.rule import PERTURBATIONS  # noqa: E402
from analysis.experiment.choices import BOOK  # noqa: E402
from analysis.io import write_atomic  # noqa: E402
from analysis.tools import power  # noqa: E402

PILOTS = (("crossed", "dices-synthetic", "S1"), ("batched", "toxicity-synthetic", "S3"),
          ("sparse", "d3code-synthetic", "S4"))
NS, KS, EPSILONS = (50, 100, 200), (2, 5, 10), (0.15, 0.3)


def cases(truth: int, seed: int, law: str) -> pd.DataFrame:
    rows = []
    for design, name, sampler in PILOTS:
        ds = datasets.load(name)
        long = power.Planner(ds, sampler, n_samples=truth, seed=seed + 1, metrics=BOOK.metrics,  # plan's "all"
                             perturbation=law)
        for epsilon in EPSILONS:
            planned = power.plan(ds, sampler=sampler, epsilon=epsilon, ns=list(NS), ks=list(KS), n_samples=200,
                                 seed=seed, perturbation=law).designs
            for _, row in planned[planned["can_reject"]].iterrows():
                true = long.cell(row["N"], row["K"], epsilon)[0][long.metrics.index(row["metric"])]
                rows.append({"design": design, "sampler": sampler, "epsilon": epsilon, "metric": row["metric"],
                             "N": row["N"], "K": row["K"], "power": row["power"], "low": row["power_low"],
                             "high": row["power_high"], "simulated_power": row["simulated_power"],
                             "true_power": true, "covered": row["power_low"] <= true <= row["power_high"]})
            print(f"{design} epsilon {epsilon}: {len(rows)} cases so far", file=sys.stderr)
    return pd.DataFrame(rows)


def summary(table: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for name, group in [*table.groupby("design", sort=False), ("all", table)]:
        low, high = power.wilson(group["covered"].sum(), len(group))
        rows.append({"pilot": name, "cases": len(group), "covered": f"{group['covered'].mean():.1%}",
                     "95 % band": f"[{low:.1%}, {high:.1%}]",
                     "true power from–to": f"{group['true_power'].min():.2f}–{group['true_power'].max():.2f}"})
    return pd.DataFrame(rows)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--truth", type=int, default=10_000, help="replicates of each hypothesis for the truth")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--law", default=BOOK.perturbation, choices=PERTURBATIONS,
                        help="B's noise law (default: plan's, the book's)")
    parser.add_argument("--out", default=None)
    parser.add_argument("--summary", default=None, help="print the summary of an earlier --out file and stop")
    args = parser.parse_args()
    table = pd.read_csv(args.summary) if args.summary else cases(args.truth, args.seed, args.law)
    if args.out and not args.summary:
        write_atomic(args.out, table.to_csv(index=False))
    print(summary(table).to_string(index=False))
