"""Where S4's t-test variance comes from on crowd data: its three jackknife parts against the true variance of the
difference. Outside ``make test`` (about fifteen minutes on one core):

    .venv/bin/python benchmarks/s4_variance_parts.py --sets 200 --out benchmarks/s4_variance_parts.csv

On simulated test sets of the compare calibration's populations (``analysis.tools.compare_calibration``), each
metric's item part I (items left out), pool's rater part R (raters left out of every item they rated) and ratings'
part Res (single ratings left out) are averaged over the test sets and divided by the variance of the observed
difference over the same sets (the truth the parts estimate). The rules: ``two_way`` (I + R - Res, never below the
larger of I and R), the test's rule until rater sets were taken in; the same combination floored at I alone; and
``set_way``, the test's rule (``compare.rater_parts``): ``two_way`` with the item part S of a jackknife that leaves
out one rater set at a time (every item rated by the same raters) where it is the larger, where a set's items share
an interaction of its raters that neither I nor R sees (where items do not share sets, at most half as many sets as
items, S is I: ``rater_level.set_jackknife``). Each
row also gives the rules' share of two-sided t-test p < 0.05 (the t-test alone: the distribution metrics' test adds
the widened percentile, which this leaves out). With A and B equally good that share is the level; with A better,
the power. ``corr_set_way`` is the correlation over the test sets between the difference's size and the test's
variance, and ``share_mean_V`` the test's share with each set's variance replaced by its mean over the sets: what
the level would be if the variance did not move with the difference.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analysis.engine.metrics import BY_NAME  # noqa: E402
from analysis.experiment.choices import BOOK, selected  # noqa: E402
from analysis.io import write_atomic  # noqa: E402
from analysis.tools import rater_level  # noqa: E402
from analysis.tools.compare import _delta_matrix, full_counts, observed  # noqa: E402
from analysis.tools.compare_calibration import Scenario, drawn_test_sets  # noqa: E402
from compare_calibration import sparse_designs  # noqa: E402

# the crowd calibration's designs (compare_calibration.py), named without their label count; one also with A better
KEPT = ("3 of 30 raters, N 200", "9 of 30 raters, N 100", "3 of 100 raters, N 500", "9 of 100 raters, N 200",
        "9 of 100 raters, N 200, A better", "5 of 100 raters, N 1000", "3 of 1000 raters, N 1000",
        "30 overlapping sets of 3 from 8, N 500", "40 overlapping sets of 4 from 8, N 1000")


def designs() -> dict[str, Scenario]:
    """:data:`KEPT`'s populations, as the crowd calibration draws them (B leaning as its power run does where A is
    better)."""
    found = {}
    for name, _, population, lean_b in sparse_designs():
        short = name.split(", ", 1)[1]
        found[short] = population
        found[f"{short}, A better"] = replace(population, lean=0.0, lean_b=lean_b)
    return {name: found[name] for name in KEPT}


def parts(population: Scenario, n_sets: int) -> pd.DataFrame:
    """Per test set and metric: the observed delta, the three parts, and both rules' two-sided t-test p."""
    names = selected("all", BOOK)
    deltas = partial(_delta_matrix, names=names)
    rows = []
    for seed, (ds, share_a, share_b, k) in enumerate(drawn_test_sets(population, n_sets)):
        full = full_counts(ds, share_a, share_b, k)
        item = rater_level.item_jackknife(full, deltas)
        by_set = rater_level.set_jackknife(full, rater_level.rater_sets(ds), deltas)
        by_set = item if by_set is None else by_set
        rater, df_raters, _ = rater_level.rater_part(rater_level.pool_jackknife(ds, share_a, share_b, k, deltas))
        residual, _, _ = rater_level.rater_part(rater_level.rating_jackknife(ds, share_a, share_b, k, deltas))
        df = rater_level.degrees(ds.n_items, min(df_raters, ds.n_raters - 1))
        rules = {"two_way": rater_level.two_way(item, rater, residual),
                 "floor_item": np.maximum(item + rater - residual, item),
                 "set_way": rater_level.two_way(np.maximum(by_set, item), rater, residual)}
        seen = observed(ds, share_a, share_b, k, names)
        for m, metric in enumerate(names):
            delta, bound = seen[metric][2], BY_NAME[metric].bound(ds.n_labels)
            p = {rule: rater_level.test(delta, v[m], df, True, bound)[0] for rule, v in rules.items()}
            rows.append({"set": seed, "metric": metric, "delta": delta, "df": df, "bound": bound, "I": item[m],
                         "R": rater[m], "Res": residual[m], "S": by_set[m], **{f"p_{rule}": p[rule] for rule in rules},
                         **{f"V_{rule}": v[m] for rule, v in rules.items()}})
    return pd.DataFrame(rows)


def summary(found: pd.DataFrame, design: str) -> pd.DataFrame:
    """Per metric: each part's mean over the true variance, and each rule's share of p < 0.05."""
    grouped = found.groupby("metric", sort=False)
    truth = grouped["delta"].var()
    out = pd.DataFrame({column: grouped[column].mean() / truth for column in ("I", "R", "Res", "V_two_way",
                                                                               "V_floor_item", "S", "V_set_way")})
    for rule in ("two_way", "floor_item", "set_way"):
        out[f"share_{rule}"] = grouped[f"p_{rule}"].apply(lambda p: (p < 0.05).mean())
    # the test's rule again, with each test set's variance replaced by its mean over the sets: what the level would be
    # if the variance did not move with the difference (corr: how far it falls as the difference grows)
    out["corr_set_way"] = grouped.apply(lambda x: np.corrcoef(x["delta"].abs(), x["V_set_way"])[0, 1])
    out["share_mean_V"] = grouped.apply(lambda x: np.mean([
        rater_level.test(d, x["V_set_way"].mean(), df, True, bound)[0] < 0.05
        for d, df, bound in zip(x["delta"], x["df"], x["bound"])]))
    out["sets"] = grouped.size()
    return out.reset_index().assign(design=design)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, default=200)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    table = pd.concat([summary(parts(population, args.sets), name) for name, population in designs().items()],
                      ignore_index=True)
    if args.out:
        write_atomic(args.out, table.to_csv(index=False))
    print(table.round(3).to_string(index=False))
