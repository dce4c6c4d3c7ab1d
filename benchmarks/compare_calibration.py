"""compare's p with few raters: its size and power on simulated populations, the rater-level test beside the
percentile bootstrap it replaced. Outside ``make test`` (it takes about half an hour on two cores):

    .venv/bin/python benchmarks/compare_calibration.py --sets 500 --out benchmarks/compare_calibration.csv

``--only rater-level`` measures the rater-level test alone and keeps the percentile's rows of the file;
``--match TEXT`` measures the designs whose name holds TEXT and keeps the others' rows. Each
finished design is kept in ``--parts``, so an interrupted run resumes where it stopped.

Designs (``--designs crossed``, the default): the compare chapter's population (two labels) and an ordinal one with
three labels, fully crossed, with R in {3, 5, 10, 20} raters and N in {50, 100, 400} items (S1); and batches of 20
items with 5 raters each, N in {50, 100, 400} (S3). ``--designs sparse`` (written to
``benchmarks/compare_calibration_sparse.csv``): each item rated by 3, 5 or 9 raters of a pool of 30, 100 or 1,000,
100 to 2,000 items, 2, 3 and 5 ordinal labels; and overlapping rater sets (sets of 3 to 5 raters from pools of 8
and 20, each item rated by one set, ConvAbuse's shape), all under S4, and some under S2 beside it. ``--designs oracle``
(``benchmarks/compare_calibration_oracle.csv``): the power alone, against the oracle's, crossed from 10 raters (S1)
and in batches of 20 items with 5 or 10 raters (S3), B leaning so that the oracle's power lies between 0.2 and 0.95.
Size: A and B lean +0.5 and -0.5 (equally good). Power: A leans 0, B 0.6 (A better; B 0.2 to 0.3 from a pool of
100 raters, where 0.6 leaves the oracle nothing to miss), beside the oracle's power (a z-test that knows delta's
true standard deviation). Each design's share of two-sided p < 0.05 comes with its binomial 99 % band around 0.05.
"""

from __future__ import annotations

import argparse
import itertools
import multiprocessing
import sys
from dataclasses import replace
from pathlib import Path

import pandas as pd
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analysis.io import write_atomic  # noqa: E402
from analysis.tools.compare_calibration import TESTS, Scenario, calibration  # noqa: E402

ALPHA = 0.05


SPARSE = (  # (pool, raters per item, items, labels, rater sets or None, S2 beside S4, B's lean for the power)
    (1000, 3, 1000, 3, None, False, 0.2), (100, 3, 500, 3, None, False, 0.3), (100, 9, 200, 2, None, False, 0.3),
    (100, 5, 1000, 5, None, False, 0.2), (100, 5, 2000, 3, None, False, 0.15),
    (8, 3, 500, 3, 30, True, 0.6), (8, 4, 1000, 5, 40, False, 0.6), (20, 5, 500, 2, 40, False, 0.6),
    (30, 3, 200, 3, None, True, 0.6), (30, 5, 500, 2, None, False, 0.6), (30, 9, 100, 3, None, False, 0.6),
)


def sparse_designs() -> list[tuple[str, tuple, Scenario, float]]:
    """(name, samplers, population, B's lean for the power) of every sparse and overlapping design; B leans less
    where the pool is large (100 raters or more), so that the oracle's power lies between 0.2 and 0.95 and the
    power can be judged."""
    out = []
    for pool, raters, items, labels, sets, with_s2, lean_b in SPARSE:
        shape = f"{sets} overlapping sets of {raters} from {pool}" if sets else f"{raters} of {pool} raters"
        out.append((f"{labels} labels, {shape}, N {items}", ("S4", "S2") if with_s2 else ("S4",),
                    Scenario(n_items=items, n_raters=raters, n_labels=labels, pool=pool, sets=sets), lean_b))
    return out


def designs() -> list[tuple[str, str, Scenario, float]]:
    """(name, sampler, population, B's lean for the power: 0.6) of every crossed and batched design."""
    out = []
    for labels, raters, items in itertools.product((2, 3), (3, 5, 10, 20), (50, 100, 400)):
        out.append((f"{labels} labels, crossed, R {raters}, N {items}", "S1",
                    Scenario(n_items=items, n_raters=raters, n_labels=labels), 0.6))
    for labels, items in itertools.product((2, 3), (50, 100, 400)):
        out.append((f"{labels} labels, batches of 20 x 5, N {items}", "S3",
                    Scenario(n_items=items, n_raters=5, n_labels=labels, batch_size=20), 0.6))
    return out


def oracle_designs() -> list[tuple[str, str, Scenario, float]]:
    """(name, sampler, population, B's lean) of the designs whose power is judged against the oracle's: crossed from
    10 raters on (S1), B leaning less as N grows (0.6, 0.45, 0.3 at N 50, 100, 400); and batches of 20 items with 5
    or 10 raters each (S3), B leaning 0.6 and 0.3 (5 raters) or 0.45 and 0.3 (10 raters) at N 100 and 400. So the
    oracle's power lies between 0.2 and 0.95."""
    lean = {50: 0.6, 100: 0.45, 400: 0.3}
    crossed = [(f"{labels} labels, crossed, R {raters}, N {items}, B {lean[items]:g}", "S1",
                Scenario(n_items=items, n_raters=raters, n_labels=labels), lean[items])
               for labels, raters, items in itertools.product((2, 3), (10, 20), (50, 100, 400))]
    batch_lean = {(5, 100): 0.6, (5, 400): 0.3, (10, 100): 0.45, (10, 400): 0.3}
    batched = [(f"{labels} labels, batches of 20 x {raters}, N {items}, B {b:g}", "S3",
                Scenario(n_items=items, n_raters=raters, n_labels=labels, batch_size=20), b)
               for labels, ((raters, items), b) in itertools.product((2, 3), batch_lean.items())]
    return crossed + batched


def measure(job) -> pd.DataFrame:
    """One design's size and power (or its power alone, where ``sets`` has no size), written to its own file in
    ``parts`` (kept across interrupted runs)."""
    (name, samplers, population, lean_b), sets, n_samples, tests, parts = job
    samplers = (samplers,) if isinstance(samplers, str) else samplers
    done = Path(parts) / (name.replace(" ", "_").replace(",", "") + ".csv")
    if done.exists():
        return pd.read_csv(done)
    found = []
    for kind, pop in (("size", population), ("power", replace(population, lean=0.0, lean_b=lean_b))):
        if kind not in sets:
            continue
        table = calibration(pop, samplers=samplers, n_sets=sets[kind], n_samples=n_samples, tests=tests)
        found.append(table.assign(design=name, kind=kind, raters=population.n_raters, items=population.n_items,
                                  labels=population.n_labels, pool=population.pool or population.n_raters,
                                  shape=population.design))
    print(f"done: {name}", file=sys.stderr, flush=True)
    table = pd.concat(found, ignore_index=True)
    write_atomic(done, table.to_csv(index=False))
    return table


def band(n_sets: int, alpha: float = ALPHA, level: float = 0.99) -> tuple[float, float]:
    """The binomial ``level`` band of the share of p < alpha over ``n_sets`` test sets of a calibrated test."""
    low, high = stats.binom.interval(level, n_sets, alpha)
    return low / n_sets, high / n_sets


def summary_table(table: pd.DataFrame, sets: int) -> str:
    """Per design, as Markdown rows: the rater-level test's size (range and median over metrics, and how many
    metrics lie below, inside and above the binomial 99 % band), its power beside the oracle's, and S2's size."""
    lines = ["| design | size under S4: range, median | below / inside / above the band | power under S4 (oracle) | "
             "power / oracle where the oracle's is 0.2-0.95 | size under S2 |", "|---|---|---|---|---|---|"]
    for design, part in table.groupby("design", sort=False):
        size = part[(part["kind"] == "size") & (part["sampler"] == "S4") & (part["test"] == TESTS[0])]
        power = part[(part["kind"] == "power") & (part["sampler"] == "S4") & (part["test"] == TESTS[0])]
        s2 = part[(part["kind"] == "size") & (part["sampler"] == "S2")]
        shares = size["share"]
        low, high = band(int(size["n_sets"].iloc[0])) if len(size) else band(sets)
        counts = f"{(shares < low).sum()} / {((low <= shares) & (shares <= high)).sum()} / {(shares > high).sum()}"
        judged = power[(power["oracle"] >= 0.2) & (power["oracle"] <= 0.95)]
        ratio = judged["share"] / judged["oracle"]
        ratios = f"{ratio.min():.2f}-{ratio.max():.2f} (median {ratio.median():.2f})" if len(ratio) else "none judged"
        lines.append(f"| {design} | {shares.min():.3f}-{shares.max():.3f}, {shares.median():.3f} | {counts} | "
                     f"{power['share'].min():.2f}-{power['share'].max():.2f} ({power['oracle'].min():.2f}-"
                     f"{power['oracle'].max():.2f}) | {ratios} | "
                     + (f"{s2['share'].min():.3f}-{s2['share'].max():.3f}" if len(s2) else "not run") + " |")
    return "\n".join(lines)


def oracle_table(table: pd.DataFrame) -> str:
    """Per design, as Markdown rows: the rater-level test's power beside the oracle's, and their ratio by metric
    family where the oracle's power lies between 0.2 and 0.95."""
    from analysis.engine.metrics import DISTRIBUTION_METRICS

    lines = ["| design | power (oracle) | power / oracle, vote metrics | power / oracle, distribution metrics |",
             "|---|---|---|---|"]
    for design, part in table[(table["kind"] == "power") & (table["test"] == TESTS[0])].groupby("design", sort=False):
        judged = part[(part["oracle"] >= 0.2) & (part["oracle"] <= 0.95)]
        ratio = judged["share"] / judged["oracle"]
        family = judged["metric"].isin(DISTRIBUTION_METRICS)
        cells = [f"{r.min():.2f}-{r.max():.2f} (median {r.median():.2f})" if len(r) else "none judged"
                 for r in (ratio[~family], ratio[family])]
        lines.append(f"| {design} | {part['share'].min():.2f}-{part['share'].max():.2f} ({part['oracle'].min():.2f}-"
                     f"{part['oracle'].max():.2f}) | {cells[0]} | {cells[1]} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, default=500, help="test sets per design for the size (default: 500)")
    parser.add_argument("--power-sets", type=int, default=250, help="test sets per design for the power (default: 250)")
    parser.add_argument("--n-samples", type=int, default=200,
                        help="bootstrap replicates per test (default: 200; the rater-level test's widened percentile "
                             "can then reject from 8 raters on, from 6 with compare's 1000)")
    parser.add_argument("--only", choices=TESTS,
                        help="measure this test alone and keep the other's rows from --out (it did not change)")
    parser.add_argument("--match", default=None,
                        help="measure the designs whose name holds this text and keep the other designs' rows "
                             "from --out")
    parser.add_argument("--parts", default="benchmarks/.compare_calibration",
                        help="folder of finished designs, read back by a rerun (default: benchmarks/.compare_calibration)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--designs", choices=("crossed", "sparse", "oracle"), default="crossed",
                        help="crossed and batched designs (S1, S3), sparse and overlapping ones (S4), or the power "
                             "alone against the oracle's on crossed designs from 10 raters (S1) and batches (S3)")
    parser.add_argument("--summary", action="store_true",
                        help="print the sparse (or oracle) designs' summary table (Markdown) from --out and stop")
    parser.add_argument("--out", default=None,
                        help="output CSV (default: benchmarks/compare_calibration.csv, or _sparse.csv for sparse)")
    args = parser.parse_args()
    args.out = args.out or ("benchmarks/compare_calibration"
                            + {"crossed": "", "sparse": "_sparse", "oracle": "_oracle"}[args.designs] + ".csv")
    if args.summary:
        found = pd.read_csv(args.out)
        print(oracle_table(found) if args.designs == "oracle" else summary_table(found, args.sets))
        return
    tests = (args.only,) if args.only else (TESTS[:1] if args.designs == "oracle" else TESTS)
    Path(args.parts).mkdir(parents=True, exist_ok=True)
    sets = {"power": args.power_sets} if args.designs == "oracle" else {"size": args.sets, "power": args.power_sets}
    every = {"crossed": designs, "sparse": sparse_designs, "oracle": oracle_designs}[args.designs]()
    chosen = every
    if args.match:
        chosen = [design for design in every if args.match in design[0]]
        if not chosen:
            parser.error(f"no {args.designs} design's name holds {args.match!r}")
    jobs = [(design, sets, args.n_samples, tests, args.parts) for design in chosen]
    with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
        table = pd.concat(pool.map(measure, jobs, chunksize=1), ignore_index=True)
    if (args.only or args.match) and Path(args.out).exists():  # the rows not measured again
        kept = pd.read_csv(args.out)
        measured = kept["test"].isin(tests) & kept["design"].str.contains(args.match or "", regex=False)
        kept = kept[~measured].drop(columns=["band_low", "band_high"])
        table = pd.concat([table, kept], ignore_index=True)
        order = {design[0]: place for place, design in enumerate(every)}  # the designs in their usual order
        table = table.sort_values("design", key=lambda names: names.map(order), kind="stable", ignore_index=True)
    table["band_low"], table["band_high"] = zip(*(band(int(n)) for n in table["n_sets"]))  # each its own sets'
    write_atomic(args.out, table.to_csv(index=False))
    size = table[table["kind"] == "size"]
    for test, part in size.groupby("test"):
        above = part[part["share"] > part["band_high"]]
        print(f"{test}: share of p < {ALPHA} above its 99 % band in {len(above)} of {len(part)} (design, sampler, "
              f"metric) rows; largest {part['share'].max():.3f}")


if __name__ == "__main__":
    main()
