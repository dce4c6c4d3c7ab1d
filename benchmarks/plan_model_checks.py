"""The population model behind planning R (``plan --raters``), checked on populations with known parameters.
Outside ``make test`` (it takes minutes; tests/test_population.py and tests/test_power.py run small versions):

    .venv/bin/python benchmarks/plan_model_checks.py --pilots 100 --out benchmarks/plan_model_checks

(a) Coverage: ``--pilots`` pilots from each known population are fitted; the share whose 90 % interval of the rater
    share rho (the percentile interval of a bootstrap of the pilot's items and raters) holds the true rho, with its
    Wilson 95 % band. Beside it, the same pilots' interval that inverts the simulated pilots instead (the rho whose
    central 90 % of the statistic holds the pilot's).
(b) Power: ``--power-pilots`` pilots of 200 items x 12 raters from a known population (seeds 1, 2, ...) are each
    planned (``power.plan``, 200 replicates) at five designs, at their 12 raters and at 48; the true power of each
    design comes from ``--fresh`` studies drawn from the true population, one per replicate (drawn once: it does not
    depend on the pilot). Beside each: the plan's band (spanning the ends of rho's interval), the Monte Carlo
    standard errors of both (a bootstrap of studies; the plan's from an independent run of its size), and z, their
    difference over its standard error. Printed: pilot 1's table, and the share of all (pilot, design, metric)
    comparisons whose true power lies in the plan's band, with its Wilson 95 % band. One pilot alone says little:
    its fitted rho can sit far from the truth (pilot 1's 0.32 against 0.25) and move all twenty comparisons at once.

(c) With ``--only pilots``: whether a miss in (b) comes from the model's form or from one pilot's estimates. At two
    of the designs, the power of 1,500 fresh studies, of the planner's panels drawn from the true parameters, and
    of panels drawn from each of ``--n-pilots`` pilots' fitted parameters. Writes ``OUT_pilots_LAW.csv``.

(d) With ``--only bands``: whether a plan's band at a modelled R holds the power of the plan's own model (its Monte
    Carlo error alone). The check's pilot is fitted once; ``--n-plans`` plans, each with its own seed (its own 20
    studies and 200 replicates), at the five designs; the model's power from 400 studies and 4,000 replicates.
    Writes ``OUT_bands_LAW.csv``.

``--design sparse`` runs (a) and (b) on sparse pilots under S4 instead (each item rated by a few raters of a pool:
300 items, 5 of 40 raters; and 400 items, 3 of 60), the designs' R being modelled pools (40 and 160).

Writes ``OUT_coverage.csv`` and ``OUT_power.csv`` (``OUT_power_LAW.csv`` under another ``--law`` than plan's; ``_sparse`` before
the suffix for sparse pilots) and prints both tables.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analysis.data.population import Population, estimate, fit, rater_consistency, simulate_pilots  # noqa: E402
from analysis.engine.metrics import METRIC_LABELS, METRICS  # noqa: E402
from analysis.engine.rule import PERTURBATIONS  # noqa: E402
from analysis.experiment.choices import BOOK  # noqa: E402
from analysis.experiment.grid import Cell  # noqa: E402
from analysis.io import write_atomic  # noqa: E402
from analysis.tools import power  # noqa: E402
from analysis.tools.modelled import PANELS, pooled_power, study  # noqa: E402

# (name, population, items, raters, raters per item: 0 where crossed) of the pilots whose interval is checked
COVERAGE = [("3 labels, rho 0.25, 60 x 6", Population((0, 1, 2), (0.5, 0.3, 0.2), 3.0, 0.25, (0, 0)), 60, 6, 0),
            ("2 labels 87/13, rho 0.5, 150 x 6", Population((0, 1), (0.87, 0.13), 2.0, 0.5, (0, 0)), 150, 6, 0),
            ("3 labels, rho 0.1, 100 x 12", Population((0, 1, 2), (0.6, 0.1, 0.3), 8.8, 0.1, (0, 0)), 100, 12, 0)]
TRUTH = Population((0, 1, 2), (0.5, 0.3, 0.2), 3.0, 0.25, (0.25, 0.25))
SPARSE_COVERAGE = [("3 labels, rho 0.25, 300 items, 5 of 40 raters", TRUTH, 300, 40, 5),
                   ("2 labels 87/13, rho 0.5, 400 items, 3 of 60 raters",
                    Population((0, 1), (0.87, 0.13), 2.0, 0.5, (0, 0)), 400, 60, 3)]
# per design of pilot: (sampler, the pilot's items, raters and raters per item, the designs (N, K, R), study items)
CHECKED = {"crossed": ("S1", 200, 12, 0, [(100, 5, 12), (200, 10, 12), (100, 5, 48), (200, 10, 48), (200, 20, 48)],
                       200),
           "sparse": ("S4", 300, 40, 5, [(100, 3, 40), (300, 5, 40), (100, 3, 160), (300, 5, 160), (600, 5, 160)],
                      600)}
SHOWN = ("accuracy", "f1", "mae", "jsd")
EPSILON = 0.3


def coverage(n_pilots: int, pilots) -> pd.DataFrame:
    rows = []
    for name, truth, items, raters, per_item in pilots:
        hits = {"bootstrap percentile (plan's)": 0, "simulated pilots inverted": 0}
        widths = {method: [] for method in hits}
        for s in range(n_pilots):
            ds = truth.draw(items, raters, seed=10_000 + s, per_item=per_item)
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


def planned_against_true(fresh: int, law: str, design: str = "crossed", n_pilots: int = 1) -> pd.DataFrame:
    sampler, items, raters, per_item, designs, study_items = CHECKED[design]
    rng = np.random.default_rng(0)
    first = TRUTH.draw(items, raters, seed=1, name="pilot", per_item=per_item)  # the true studies' design
    truth = {}
    for n, k, r in designs:  # the true power does not depend on the pilot: drawn once
        cell = Cell(sampler, law, EPSILON, n * k, k)
        truth[(n, k, r)] = pooled_power([study(TRUTH, first, sampler, study_items, r, 7, p) for p in range(fresh)],
                                        sampler, cell, fresh, 70_000, rng)
    rows = []
    for seed in range(1, n_pilots + 1):
        pilot = first if seed == 1 else TRUTH.draw(items, raters, seed=seed, name="pilot", per_item=per_item)
        result = power.plan(pilot, sampler=sampler, epsilon=EPSILON, ns=sorted({n for n, _, _ in designs}),
                            ks=sorted({k for _, k, _ in designs}), raters=sorted({r for _, _, r in designs}),
                            metrics=list(SHOWN), perturbation=law)
        planned = result.designs[result.designs["modelled"]].set_index(["N", "K", "R", "metric"])
        fitted = Population(**{k: v for k, v in result.provenance["population"].items() if k != "description"})
        n_samples = result.provenance["parameters"]["n_samples"]
        for n, k, r in designs:
            cell = Cell(sampler, law, EPSILON, n * k, k)
            true, true_se = truth[(n, k, r)]
            _, plan_se = pooled_power([study(fitted, pilot, sampler, study_items, r, 8, p) for p in range(PANELS)],
                                      sampler, cell, n_samples, 80_000, rng)
            true_low, true_high = power.wilson(np.rint(true * fresh), fresh)
            for metric in SHOWN:
                m, row = METRICS.index(metric), planned.loc[(n, k, r, metric)]
                rows.append({"pilot": seed, "rho": fitted.rho, "N": n, "K": k, "R": r, "metric": METRIC_LABELS[metric],
                             "planned": row["power"], "planned_low": row["power_low"],
                             "planned_high": row["power_high"], "planned_mc_se": plan_se[m], "true": true[m],
                             "true_low": true_low[m], "true_high": true_high[m], "true_mc_se": true_se[m],
                             "z": (row["power"] - true[m]) / np.hypot(plan_se[m], true_se[m]),
                             "true in the plan's band": row["power_low"] <= true[m] <= row["power_high"]})
        print(f"done: pilot {seed} of {n_pilots} ({result.provenance['population']['description']})",
              file=sys.stderr, flush=True)
    return pd.DataFrame(rows)


def across_pilots(n_pilots: int, law: str) -> pd.DataFrame:
    """(c) Where the check's misses come from: at two of the crossed designs (12 and 48 raters), the power from the
    true population measured on 1,500 fresh studies, the same through the planner's own panels (200 of them, 2,000
    replicates), and from each of ``n_pilots`` pilots' fitted populations (100 panels, 1,000 replicates)."""
    sampler, items, raters, _, designs, study_items = CHECKED["crossed"]
    rng, rows = np.random.default_rng(0), []
    pilots = [TRUTH.draw(items, raters, seed=s, name="pilot") for s in range(1, n_pilots + 1)]
    # (source, population, pilot, studies, replicates, seed of the studies' draws, of their simulations)
    sources = [("fresh studies", TRUTH, pilots[0], 1500, 1500, 7, 70_000),
               ("true parameters", TRUTH, pilots[0], 200, 2000, 8, 80_000)]
    sources += [(f"pilot {s}", fit(one, seed=0), one, 100, 1000, 8, 80_000) for s, one in enumerate(pilots, 1)]
    for n, k, r in designs[1::2]:
        cell = Cell(sampler, law, EPSILON, n * k, k)
        for name, population, pilot, count, replicates, draws, seed in sources:
            found, se = pooled_power([study(population, pilot, sampler, study_items, r, draws, p)
                                      for p in range(count)], sampler, cell, replicates, seed, rng)
            rows += [{"N": n, "K": k, "R": r, "law": law, "from": name, "rho": population.rho, "a0": population.a0,
                      "metric": METRIC_LABELS[m], "power": found[METRICS.index(m)], "mc_se": se[METRICS.index(m)]}
                     for m in SHOWN]
        print(f"done: pilots at N {n}, K {k}, R {r}", file=sys.stderr, flush=True)
    return pd.DataFrame(rows)


def bands(n_plans: int, law: str) -> pd.DataFrame:
    """(d): per design, plan seed and metric, the planned power and band, beside the model's own power."""
    sampler, items, raters, _, designs, study_items = CHECKED["crossed"]
    pilot = TRUTH.draw(items, raters, seed=1, name="pilot")
    fitted, rng, rows = fit(pilot, seed=0), np.random.default_rng(0), []
    for n, k, r in designs:
        cell = Cell(sampler, law, EPSILON, n * k, k)
        model, _ = pooled_power([study(fitted, pilot, sampler, study_items, r, 9, p) for p in range(400)], sampler,
                                cell, 4000, 90_000, rng)
        for seed in range(n_plans):
            studies = tuple(study(fitted, pilot, sampler, study_items, r, seed, p) for p in range(PANELS))
            planner = power.Planner(pilot, sampler, 200, seed, perturbation=law, studies=studies, metrics=SHOWN)
            powers = planner.cell(n, k, EPSILON)[0]
            asked = [planner.metrics.index(m) for m in SHOWN]
            low, high = planner.band(n, k, EPSILON, asked)
            rows += [{"N": n, "K": k, "R": r, "seed": seed, "metric": METRIC_LABELS[m], "planned": powers[i],
                      "low": low[i], "high": high[i], "model": model[METRICS.index(m)],
                      "covered": low[i] <= model[METRICS.index(m)] <= high[i]}
                     for m, i in zip(SHOWN, asked)]
        print(f"done: bands at N {n}, K {k}, R {r}", file=sys.stderr, flush=True)
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pilots", type=int, default=100, help="pilots per population for the coverage")
    parser.add_argument("--fresh", type=int, default=1000, help="fresh studies (replicates) for each true power")
    parser.add_argument("--out", default="plan_model_checks", help="prefix of the two CSV files")
    parser.add_argument("--law", default=BOOK.perturbation, choices=PERTURBATIONS,
                        help="B's noise law for the power check (default: plan's); the coverage does not depend on it")
    parser.add_argument("--only", choices=("coverage", "power", "pilots", "bands"),
                        help="run one of the checks: (c), pilots, and (d), bands, run only when named")
    parser.add_argument("--power-pilots", type=int, default=40,
                        help="pilots planned for (b), seeds 1 to this; pilot 1's table printed in full")
    parser.add_argument("--n-plans", type=int, default=50, help="plans (seeds) for (d)")
    parser.add_argument("--n-pilots", type=int, default=8, help="pilots fitted for (c)")
    parser.add_argument("--design", choices=sorted(CHECKED), default="crossed",
                        help="the pilots' design for (a) and (b): crossed (S1), or sparse (S4: each item rated by a few "
                             "of a pool)")
    args = parser.parse_args()
    suffix = "" if args.design == "crossed" else f"_{args.design}"
    if args.only == "pilots":
        if args.design != "crossed":
            parser.error("--only pilots reads crossed pilots (S1) alone; leave out --design")
        found = across_pilots(args.n_pilots, args.law)
        write_atomic(f"{args.out}_pilots_{args.law}.csv", found.to_csv(index=False))
        kind = found["from"].where(~found["from"].str.startswith("pilot"), "median over pilots")
        print(found.groupby(["R", "metric", kind])["power"].median().unstack().to_string())
        return
    if args.only == "bands":
        found = bands(args.n_plans, args.law)
        write_atomic(f"{args.out}_bands_{args.law}.csv", found.to_csv(index=False))
        print(found.groupby(["R", "N", "K", "metric"], sort=False).agg(
            model=("model", "first"), planned=("planned", "mean"), covered=("covered", "mean")).to_string())
        print(f"covered in {found['covered'].mean():.1%} of {len(found)} (design, metric, plan) cases")
        return
    if args.only != "power":
        found = coverage(args.pilots, SPARSE_COVERAGE if args.design == "sparse" else COVERAGE)
        write_atomic(f"{args.out}_coverage{suffix}.csv", found.to_csv(index=False))
        print(found.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    if args.only == "coverage":
        return
    checked = planned_against_true(args.fresh, args.law, args.design, args.power_pilots)
    write_atomic(f"{args.out}_power{suffix}{'' if args.law == BOOK.perturbation else '_' + args.law}.csv",
                 checked.to_csv(index=False))
    first = checked[checked["pilot"] == 1]
    print(first.drop(columns="pilot").to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    held = int(first["true in the plan's band"].sum())
    print(f"pilot 1: |z| largest {first['z'].abs().max():.2f} over {len(first)} comparisons; the true power lies in "
          f"the plan's band in {held} of them")
    if args.power_pilots > 1:
        per_pilot = checked.groupby("pilot")["true in the plan's band"].sum()
        inside = int(checked["true in the plan's band"].sum())
        low, high = power.wilson(np.array([inside]), len(checked))
        print(f"{args.power_pilots} pilots: the true power lies in the plan's band in {inside} of {len(checked)} "
              f"comparisons ({inside / len(checked):.1%}, Wilson 95 % {low[0]:.1%}-{high[0]:.1%}); all "
              f"{len(first)} in {int((per_pilot == len(first)).sum())} pilots, the fewest {per_pilot.min()}")


if __name__ == "__main__":
    main()
