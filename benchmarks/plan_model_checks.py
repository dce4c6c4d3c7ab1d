"""The population model behind planning R (``plan --raters``), checked on populations with known parameters.
Outside ``make test`` (it takes minutes; tests/test_population.py and tests/test_power.py run small versions):

    .venv/bin/python benchmarks/plan_model_checks.py --pilots 100 --out benchmarks/plan_model_checks

(a) Coverage: ``--pilots`` pilots from each known population are fitted; the share whose 90 % interval of the rater
    share rho (the percentile interval of a bootstrap of the pilot's items and raters) holds the true rho, with its
    Wilson 95 % band. Beside it, the same pilots' interval that inverts the simulated pilots instead (the rho whose
    central 90 % of the statistic holds the pilot's).
(b) Power: a pilot of 200 items x 12 raters from a known population is planned (``power.plan``, 200 replicates) at
    five designs, at its 12 raters and at 48; the true power of each design comes from ``--fresh`` studies drawn
    from the true population, one per replicate. Beside each: the plan's Wilson band, the Monte Carlo standard
    errors of both (a bootstrap of studies; the plan's from an independent run of its size), and z, their
    difference over its standard error.

(c) With ``--only pilots``: whether a miss in (b) comes from the model's form or from one pilot's estimates. At two
    of the designs, the power of 1,500 fresh studies, of the planner's panels drawn from the true parameters, and
    of panels drawn from each of ``--n-pilots`` pilots' fitted parameters. Writes ``OUT_pilots_LAW.csv``.

Writes ``OUT_coverage.csv`` and ``OUT_power.csv`` (``OUT_power_LAW.csv`` under another ``--law`` than plan's) and
prints both tables.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analysis.data import population as populations  # noqa: E402
from analysis.data.population import Population, estimate, simulate_pilots, rater_consistency  # noqa: E402
from analysis.engine.metrics import METRIC_LABELS, METRICS  # noqa: E402
from analysis.engine.rule import PERTURBATIONS  # noqa: E402
from analysis.experiment.choices import PLAN  # noqa: E402
from analysis.experiment.grid import Cell  # noqa: E402
from analysis.io import write_atomic  # noqa: E402
from analysis.tools import power  # noqa: E402
from analysis.tools.modelled import PANELS, pooled_power, study  # noqa: E402

# (name, population, items, raters) of the pilots whose interval is checked
COVERAGE = [("3 labels, rho 0.25, 60 x 6", Population((0, 1, 2), (0.5, 0.3, 0.2), 3.0, 0.25, (0, 0)), 60, 6),
            ("2 labels 87/13, rho 0.5, 150 x 6", Population((0, 1), (0.87, 0.13), 2.0, 0.5, (0, 0)), 150, 6),
            ("3 labels, rho 0.1, 100 x 12", Population((0, 1, 2), (0.6, 0.1, 0.3), 8.8, 0.1, (0, 0)), 100, 12)]
TRUTH = Population((0, 1, 2), (0.5, 0.3, 0.2), 3.0, 0.25, (0.25, 0.25))
DESIGNS = [(100, 5, 12), (200, 10, 12), (100, 5, 48), (200, 10, 48), (200, 20, 48)]  # (N, K, R)
SHOWN = ("accuracy", "f1", "mae", "jsd")
EPSILON = 0.3


def coverage(n_pilots: int) -> pd.DataFrame:
    rows = []
    for name, truth, items, raters in COVERAGE:
        hits = {"bootstrap percentile (plan's)": 0, "simulated pilots inverted": 0}
        widths = {method: [] for method in hits}
        for s in range(n_pilots):
            ds = truth.draw(items, raters, seed=10_000 + s)
            found = simulate_pilots(ds, seed=s)
            observed = rater_consistency(ds.item, ds.rater, ds.label, ds.n_items, ds.n_raters, ds.n_labels)
            for method, (low, high) in zip(hits, (estimate(ds, found, seed=s).rho_interval,
                                                  (found.rho_at(observed, 0.95), found.rho_at(observed, 0.05)))):
                hits[method] += low <= truth.rho <= high
                widths[method].append(high - low)
        for method, hit in hits.items():
            low, high = power.wilson(np.array([hit]), n_pilots)
            rows.append({"pilots": name, "interval": method, "covered": hit, "of": n_pilots, "coverage": hit / n_pilots,
                         "band_low": low[0], "band_high": high[0], "median width": np.median(widths[method])})
        print(f"done: coverage, {name}", file=sys.stderr, flush=True)
    return pd.DataFrame(rows)


def planned_against_true(fresh: int, law: str) -> pd.DataFrame:
    pilot = TRUTH.draw(200, 12, seed=1, name="pilot")
    result = power.plan(pilot, sampler="S1", epsilon=EPSILON, ns=sorted({n for n, _, _ in DESIGNS}),
                        ks=sorted({k for _, k, _ in DESIGNS}), raters=[12, 48], metrics=list(SHOWN), perturbation=law)
    print(f"fitted: {result.provenance['population']['description']}", file=sys.stderr)
    planned = result.designs[result.designs["modelled"]].set_index(["N", "K", "R", "metric"])
    fitted = Population(**{k: v for k, v in result.provenance["population"].items() if k != "description"})
    n_samples, rng, study_items = result.provenance["parameters"]["n_samples"], np.random.default_rng(0), 200
    rows = []
    for n, k, r in DESIGNS:
        cell = Cell("S1", law, EPSILON, n * k, k)
        true, true_se = pooled_power([study(TRUTH, pilot, "S1", study_items, r, 7, p) for p in range(fresh)],
                                     "S1", cell, fresh, 70_000, rng)
        _, plan_se = pooled_power([study(fitted, pilot, "S1", study_items, r, 8, p) for p in range(PANELS)],
                                  "S1", cell, n_samples, 80_000, rng)
        true_low, true_high = power.wilson(np.rint(true * fresh), fresh)
        for metric in SHOWN:
            m, row = METRICS.index(metric), planned.loc[(n, k, r, metric)]
            rows.append({"N": n, "K": k, "R": r, "metric": METRIC_LABELS[metric], "planned": row["power"],
                         "planned_low": row["power_low"], "planned_high": row["power_high"], "planned_mc_se": plan_se[m],
                         "true": true[m], "true_low": true_low[m], "true_high": true_high[m], "true_mc_se": true_se[m],
                         "z": (row["power"] - true[m]) / np.hypot(plan_se[m], true_se[m]),
                         "true in the plan's band": row["power_low"] <= true[m] <= row["power_high"]})
        print(f"done: power at N {n}, K {k}, R {r}", file=sys.stderr, flush=True)
    return pd.DataFrame(rows)


def across_pilots(n_pilots: int, law: str) -> pd.DataFrame:
    """(c) Where the check's misses come from: at two designs (12 and 48 raters), the power from the true
    population measured on 1,500 fresh studies, the same through the planner's own panels (200 of them, 2,000
    replicates), and from each of ``n_pilots`` pilots' fitted populations (100 panels, 1,000 replicates)."""
    rng, rows = np.random.default_rng(0), []
    pilot = TRUTH.draw(200, 12, seed=1, name="pilot")
    fits = [("true parameters", TRUTH, pilot)]
    for s in range(1, n_pilots + 1):
        one = TRUTH.draw(200, 12, seed=s, name="pilot")
        fits.append((f"pilot {s}", populations.fit(one, seed=0), one))
    for n, k, r in DESIGNS[1::2]:
        cell = Cell("S1", law, EPSILON, n * k, k)
        true, se = pooled_power([study(TRUTH, pilot, "S1", 200, r, 7, p) for p in range(1500)], "S1", cell, 1500,
                                70_000, rng)
        rows += [{"N": n, "K": k, "R": r, "law": law, "from": "fresh studies", "rho": TRUTH.rho, "a0": TRUTH.a0,
                  "metric": METRIC_LABELS[m], "power": true[METRICS.index(m)], "mc_se": se[METRICS.index(m)]}
                 for m in SHOWN]
        for name, population, one in fits:
            panels, reps = (200, 2000) if population is TRUTH else (100, 1000)
            found, se = pooled_power([study(population, one, "S1", 200, r, 8, p) for p in range(panels)], "S1",
                                     cell, reps, 80_000, rng)
            rows += [{"N": n, "K": k, "R": r, "law": law, "from": name, "rho": population.rho, "a0": population.a0,
                      "metric": METRIC_LABELS[m], "power": found[METRICS.index(m)], "mc_se": se[METRICS.index(m)]}
                     for m in SHOWN]
        print(f"done: pilots at N {n}, K {k}, R {r}", file=sys.stderr, flush=True)
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pilots", type=int, default=100, help="pilots per population for the coverage")
    parser.add_argument("--fresh", type=int, default=1000, help="fresh studies (replicates) for each true power")
    parser.add_argument("--out", default="plan_model_checks", help="prefix of the two CSV files")
    parser.add_argument("--law", default=PLAN.perturbation, choices=PERTURBATIONS,
                        help="B's noise law for the power check (default: plan's); the coverage does not depend on it")
    parser.add_argument("--only", choices=("coverage", "power", "pilots"),
                        help="run one of the checks: (c), pilots, runs only when named")
    parser.add_argument("--n-pilots", type=int, default=8, help="pilots fitted for (c)")
    args = parser.parse_args()
    if args.only == "pilots":
        found = across_pilots(args.n_pilots, args.law)
        write_atomic(f"{args.out}_pilots_{args.law}.csv", found.to_csv(index=False))
        kind = found["from"].where(~found["from"].str.startswith("pilot"), "median over pilots")
        print(found.groupby(["R", "metric", kind])["power"].median().unstack().to_string())
        return
    if args.only != "power":
        found = coverage(args.pilots)
        write_atomic(f"{args.out}_coverage.csv", found.to_csv(index=False))
        print(found.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    if args.only == "coverage":
        return
    checked = planned_against_true(args.fresh, args.law)
    write_atomic(f"{args.out}_power{'' if args.law == PLAN.perturbation else '_' + args.law}.csv",
                 checked.to_csv(index=False))
    print(checked.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    inside = int(checked["true in the plan's band"].sum())
    print(f"|z| largest {checked['z'].abs().max():.2f} over {len(checked)} comparisons; the true power lies in the "
          f"plan's Wilson band in {inside} of them")


if __name__ == "__main__":
    main()
