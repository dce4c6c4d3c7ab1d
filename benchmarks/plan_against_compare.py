"""Does ``plan``'s power predict how often ``compare``'s own test rejects? Outside ``make test`` (twenty minutes on
one core):

    .venv/bin/python benchmarks/plan_against_compare.py --out benchmarks/plan_against_compare.csv
    .venv/bin/python benchmarks/plan_against_compare.py --out benchmarks/plan_against_compare.csv --study-power

The second adds ``plan --test compare``'s power beside each row (its own studies, another seed, the same system B:
ten minutes). ``--replan`` instead computes the plan's columns again and keeps the rest (a minute: the plan
changed, ``compare`` did not).

``plan`` simulates a design's studies as the paper does: the gold standard and both systems are draws of rater
columns, B's perturbed, and a study's p comes from its delta against the null's replicates. ``compare`` tests two
fixed systems' outputs against the ratings with the rater-level test (a t-test on item and rater jackknives, and for
the distribution metrics the widened percentile of 1,000 rater-column replicates as well). This script asks whether
the first predicts the second, at the same effect.

The pilot is the DICES stand-in (fully crossed, 350 items x 123 raters, S1). System A answers each item with its
label shares over all the pilot's raters, system B with those shares mixed at weight ``epsilon`` with a point mass
on a label drawn at random once per pilot item (the one-label noise law, as a fixed system). A study of N items and
K raters draws N of the pilot's items and K of its raters with replacement (S1's law) and gives ``compare`` the
study's ratings and both systems' answers (one-sided, alpha 0.05, compare's defaults). At each K, ``epsilon`` is set
by bisection so that the mean delta of the metric over studies is the target delta; ``plan --target-delta
METRIC=DELTA`` holds the same delta at every design. Per design: the share of studies in which
compare rejects (its Wilson 95 % band) beside the planned power (its band). Each study is drawn from its own seed, so
an interrupted run resumes from the metrics already written to ``--parts``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analysis.data import datasets  # noqa: E402
from analysis.data.annotations import AnnotationDataset, from_table  # noqa: E402
from analysis.io import write_atomic  # noqa: E402
from analysis.tools import power, rater_level  # noqa: E402
from analysis.tools.compare import compare, observed  # noqa: E402
from analysis.tools.study_power import StudyPower  # noqa: E402

PILOT = "dices-synthetic"
ALPHA = 0.05
TARGETS = (("accuracy", 0.05), ("mae", 0.012), ("jsd", 0.015))  # (metric, delta): mid-range powers at N 100
DESIGNS = ((50, 5), (100, 5), (200, 5), (100, 10), (200, 10), (100, 20))
MATCH_STUDIES = 200  # studies whose mean delta sets epsilon at each K


def ratings(ds: AnnotationDataset) -> np.ndarray:
    """The crossed pilot's labels, (items, raters): S1's one group (:func:`analysis.tools.rater_level.groups`)."""
    (items, labels), = rater_level.groups(ds, "S1")
    if (labels < 0).any():
        raise ValueError(f"{ds.name} is not fully crossed")
    table = np.empty_like(labels, dtype=int)
    table[items] = labels
    return table


def draw_study(labels: np.ndarray, n: int, k: int, seed: int, label_names) -> tuple[AnnotationDataset, np.ndarray]:
    """A study of ``n`` items and ``k`` raters drawn with replacement from the pilot (S1's law), and the pilot items
    it drew."""
    rng = np.random.default_rng(seed)
    items, raters = rng.integers(labels.shape[0], size=n), rng.integers(labels.shape[1], size=k)
    item, column = np.divmod(np.arange(n * k), k)
    table = pd.DataFrame({"item": item, "rater": column, "label": labels[items[item], raters[column]]})
    return from_table(table, name=f"study-{seed}", label_order=list(range(len(label_names)))), items


def systems(shares: np.ndarray, noise: np.ndarray, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """A's answers (the items' label shares) and B's: the same mixed at weight ``epsilon`` with a point mass on each
    item's ``noise`` label (drawn once per pilot item: B is one fixed system, wrong in its own way)."""
    return shares, (1 - epsilon) * shares + epsilon * np.eye(shares.shape[1])[noise]


def frame(answers: np.ndarray) -> pd.DataFrame:
    """A system's answers as compare reads them: an ``item`` column and one ``p_<label>`` column per label."""
    return pd.DataFrame(answers, columns=[f"p_{c}" for c in range(answers.shape[1])]).assign(
        item=np.arange(len(answers)))


def epsilon_for(labels, shares, noise, metric: str, delta: float, n: int, k: int, seed: int, names) -> float:
    """The epsilon whose mean delta of ``metric`` over :data:`MATCH_STUDIES` studies of ``n`` x ``k`` is ``delta``
    (bisection on the same studies, to 1/1024)."""
    studies = [draw_study(labels, n, k, seed + s, names) for s in range(MATCH_STUDIES)]

    def mean_delta(epsilon: float) -> float:
        return float(np.mean([observed(ds, *systems(shares[items], noise[items], epsilon), k, (metric,))[metric][2]
                              for ds, items in studies]))

    low, high = 0.0, 1.0
    if mean_delta(high) < delta:
        raise ValueError(f"{metric}: a delta of {delta} is out of reach at K = {k}")
    for _ in range(10):
        middle = (low + high) / 2
        low, high = (middle, high) if mean_delta(middle) < delta else (low, middle)
    return high


def design_rows(metric: str, delta: float, n_studies: int, seed: int, parts: Path) -> pd.DataFrame:
    """Every design's compare power beside its planned power for one (metric, delta), kept in ``parts``."""
    done = parts / f"{metric}_{delta:g}.csv"
    if done.exists():
        return pd.read_csv(done)
    ds = datasets.load(PILOT)
    labels, names = ratings(ds), ds.label_names
    shares = ds.item_label_counts / ds.raters_per_item[:, None]
    noise = np.random.default_rng(seed).integers(ds.n_labels, size=ds.n_items)
    planned = plan(ds, metric, delta, seed)
    epsilons = {k: epsilon_for(labels, shares, noise, metric, delta, 100, k, seed + 10**6, names)
                for k in {k for _, k in DESIGNS}}
    rows = []
    for n, k in DESIGNS:
        rejected, deltas = 0, []
        for s in range(n_studies):
            study, items = draw_study(labels, n, k, seed + s, names)
            a, b = systems(shares[items], noise[items], epsilons[k])
            found = compare(study, frame(a), frame(b), sampler="S1", seed=seed + s, metrics=[metric])
            rejected += bool(found["p_value"].iloc[0] < ALPHA)
            deltas.append(found["delta"].iloc[0])
        low, high = power.wilson(rejected, n_studies)
        rows.append({"metric": metric, "delta": delta, "N": n, "K": k, "epsilon": epsilons[k],
                     "mean_study_delta": float(np.mean(deltas)), "studies": n_studies,
                     "compare_power": rejected / n_studies, "compare_low": float(low), "compare_high": float(high),
                     **plan_columns(planned, n, k)})
        print(f"{metric} N {n} K {k}: compare {rejected / n_studies:.2f}, plan {rows[-1]['plan_power']:.2f}",
              file=sys.stderr, flush=True)
    table = pd.DataFrame(rows)
    write_atomic(done, table.to_csv(index=False))
    return table


def plan(ds: AnnotationDataset, metric: str, delta: float, seed: int) -> pd.DataFrame:
    """``plan --target-delta METRIC=DELTA``'s designs on the pilot (its defaults: the book's noise law)."""
    return power.plan(ds, sampler="S1", target_delta=(metric, delta), ns=sorted({n for n, _ in DESIGNS}),
                      ks=sorted({k for _, k in DESIGNS}), n_samples=200, seed=seed, metrics=[metric]).designs


def plan_columns(planned: pd.DataFrame, n: int, k: int) -> dict:
    """The planned power of design (N, K), its band, the simulated power and whether compare's test can reject."""
    row = planned[(planned["N"] == n) & (planned["K"] == k)].iloc[0]
    return {"plan_power": row["power"], "plan_low": row["power_low"], "plan_high": row["power_high"],
            "plan_simulated": row["simulated_power"], "plan_can_reject": bool(row["can_reject"])}


def replanned(table: pd.DataFrame, seed: int) -> pd.DataFrame:
    """The table with its plan columns computed again (the plan changed; compare's rejections did not)."""
    ds = datasets.load(PILOT)
    fresh = {}
    for metric, delta in table[["metric", "delta"]].drop_duplicates().itertuples(index=False):
        planned = plan(ds, metric, delta, seed)
        for n, k in table.loc[table["metric"] == metric, ["N", "K"]].itertuples(index=False):
            fresh[(metric, n, k)] = plan_columns(planned, n, k)
    columns = pd.DataFrame([fresh[key] for key in zip(table["metric"], table["N"], table["K"])], index=table.index)
    return table.assign(**columns)


def with_study_power(table: pd.DataFrame, n_studies: int, seed: int) -> pd.DataFrame:
    """The table with ``plan --test compare``'s power at each row's design and epsilon (``study_power`` and its
    Wilson band): its own studies, drawn from another seed than compare's above, with the same system B (its
    noise label per pilot item), so the two are independent estimates of the same rejection rate."""
    ds = datasets.load(PILOT)
    noise = np.random.default_rng(seed).integers(ds.n_labels, size=ds.n_items)  # as design_rows draws it
    rows = []
    for row in table.itertuples():
        planner = StudyPower(ds, "S1", (row.metric,), studies=n_studies, seed=seed + 1, max_n=int(row.N),
                             max_k=int(row.K), noise=noise)
        share = float(planner.cell(int(row.N), int(row.K), row.epsilon)[0][0])
        low, high = power.wilson(round(share * n_studies), n_studies)
        rows.append({"study_power": share, "study_low": float(low), "study_high": float(high)})
        print(f"{row.metric} N {row.N} K {row.K}: compare {row.compare_power:.2f}, plan --test compare {share:.2f}",
              file=sys.stderr, flush=True)
    return table.drop(columns=["study_power", "study_low", "study_high"], errors="ignore").assign(**pd.DataFrame(rows))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=200, help="studies per design (default: 200)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--parts", default="benchmarks/.plan_against_compare",
                        help="folder of finished targets, read back by a rerun")
    parser.add_argument("--out", default=None)
    parser.add_argument("--study-power", action="store_true",
                        help="add plan --test compare's power to the rows of --out (read back, not recomputed)")
    parser.add_argument("--replan", action="store_true",
                        help="compute the plan columns of --out again, compare's and the study power kept")
    args = parser.parse_args()
    if args.replan:
        table = replanned(pd.read_csv(args.out), args.seed)
        write_atomic(args.out, table.to_csv(index=False))
        print(table[["metric", "N", "K", "compare_power", "plan_power", "plan_low", "plan_high"]].round(3)
              .to_string(index=False))
        sys.exit(0)
    if args.study_power:
        table = with_study_power(pd.read_csv(args.out), args.studies, args.seed)
        write_atomic(args.out, table.to_csv(index=False))
        print(table[["metric", "N", "K", "compare_power", "study_power", "study_low", "study_high"]].round(3)
              .to_string(index=False))
        sys.exit(0)
    Path(args.parts).mkdir(parents=True, exist_ok=True)
    table = pd.concat([design_rows(m, d, args.studies, args.seed, Path(args.parts)) for m, d in TARGETS],
                      ignore_index=True)
    if args.out:
        write_atomic(args.out, table.to_csv(index=False))
    print(table[["metric", "delta", "N", "K", "compare_power", "compare_low", "compare_high", "plan_power",
                 "plan_low", "plan_high"]].round(3).to_string(index=False))
