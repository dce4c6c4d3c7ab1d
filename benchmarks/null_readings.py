"""Readings of the paper's "randomly mixed" null, measured at the paper's own Table 1 cells: how wide each one's
null is, and so how far it could move where p first crosses 0.05. Outside ``make test`` (about ten minutes on two
cores):

    .venv/bin/python benchmarks/null_readings.py --out benchmarks/null_readings.csv

Each reading is drawn by the slow reference of the tests (``tests/reference.py``: one replicate at a time, from the
annotation table itself), on the book's stand-ins under the book's choices, for the runs where our spread of δ − δ₀
is narrowest beside the one the paper's printed Δ and p imply (DICES under S1 and S2, D3code under S2; the why page):

- ``half``: the book's null, a uniform half of the pooled ``2K'`` columns to A*, at the sampler's rater level;
- ``pairs``: A's and B's ``c``-th columns swapped by a coin per pair, at the same level (the engine's
  ``null_mixing="pairs"``);
- ``half per item``: a uniform half, drawn afresh for every item (under S2 the same as ``half``);
- ``pooled with replacement``: each of A*'s and B*'s ``K'`` columns drawn with replacement from the pooled ``2K'``,
  per item (VET's pooling, and the paper's description of VET: "merged into a single pool and resampled");
- ``coin per response``: each of A*'s and B*'s responses a fresh draw from A's or B's law by a coin of its own
  (VET's parametric null), per item.

Per cell and reading: the null's and the alternative's sd of δ over ``--n-samples`` replicates, and the ratio of
√(sd_null² + sd_alt²) to the paper's implied sd (:func:`analysis.paper.crossings.implied_sd`); a ratio of 1 would
put our p where the paper's is, at the paper's Δ.
"""

from __future__ import annotations

import argparse
import sys
import zlib
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from analysis.data import datasets  # noqa: E402
from analysis.engine.metrics import BY_NAME, averaged  # noqa: E402
from analysis.experiment.choices import BOOK  # noqa: E402
from analysis.io import write_atomic  # noqa: E402
from analysis.paper import crossings, effect_sizes  # noqa: E402
from reference import DataShape, counts, deltas, draw_slots, perturb, split  # noqa: E402

READINGS = ("half", "pairs", "half per item", "pooled with replacement", "coin per response")
RUNS = (("DICES", "S1"), ("DICES", "S2"), ("D3code", "S2"))


def mixed(reading: str, a, b, groups, draw_a, draw_b, rng):
    """A* and B* of one null replicate under ``reading`` (module docstring); ``draw_a`` and ``draw_b`` draw fresh
    responses of A's and B's laws on the same slots (the coin per response)."""
    slots, k = a.shape
    if reading in ("half", "pairs"):
        return split(a, b, groups, rng, reading)
    if reading == "half per item":
        return split(a, b, np.arange(slots), rng)
    if reading == "pooled with replacement":
        pooled = np.concatenate([a, b], axis=1)
        pick = rng.integers(2 * k, size=(2, slots, k))
        return np.take_along_axis(pooled, pick[0], axis=1), np.take_along_axis(pooled, pick[1], axis=1)
    coins = rng.random((2, slots, k)) < 0.5
    return np.where(coins[0], b, a), np.where(coins[1], draw_b(), draw_a())


def cell_spreads(design: DataShape, sampler: str, n: int, k: int, epsilon: float, metric: str, n_samples: int,
                 seed: int) -> dict:
    """sd of δ under the alternative and under each reading's null, ``n_samples`` replicates each."""
    rng = np.random.default_rng(seed)
    found = {"alternative": []} | {r: [] for r in READINGS}
    for reading in found:
        for _ in range(n_samples):
            _, groups, model = draw_slots(design, sampler, n, k, rng)
            g, a = model(), model()
            b = perturb(model(), epsilon, BOOK.perturbation, design.shares, rng)
            if reading != "alternative":
                a, b = mixed(reading, a, b, groups, model,
                             lambda: perturb(model(), epsilon, BOOK.perturbation, design.shares, rng), rng)
            d = deltas(*(counts(x, design.n_labels)[None] for x in (g, a, b)), metrics=[metric],
                       smoothing=BOOK.smoothing)
            found[reading].append(d[metric][0])
    return {name: float(np.std(v, ddof=1)) for name, v in found.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=300, help="replicates per hypothesis and reading (300)")
    parser.add_argument("--out", default="benchmarks/null_readings.csv")
    args = parser.parse_args()
    cells = effect_sizes.paper_cells(which=("table1",))
    rows = []
    for paper, sampler in RUNS:
        name = BOOK.dataset(datasets.paper_or_stand_in(effect_sizes.REGISTRY_NAMES[paper]))
        design = DataShape(datasets.load(name))
        metric_of = {BY_NAME[m].column: m for m in averaged(BOOK.averaging)}
        for cell in cells[(cells["dataset"] == paper) & (cells["sampler"] == sampler)].itertuples():
            seed = zlib.crc32(repr((paper, sampler, cell.metric)).encode())
            sds = cell_spreads(design, sampler, int(cell.N), int(cell.K), float(cell.epsilon),
                               metric_of[cell.metric], args.n_samples, seed)
            paper_sd = float(crossings.implied_sd(cell.paper_delta, cell.paper_p))
            for reading in READINGS:
                rows.append({"run": f"{paper} {sampler}", "metric": cell.metric,
                             "family": BY_NAME[metric_of[cell.metric]].family, "NK": int(cell.NK), "K": int(cell.K),
                             "reading": reading, "null_sd": sds[reading], "delta_sd": sds["alternative"],
                             "paper_sd": paper_sd,
                             "ratio": float(np.hypot(sds[reading], sds["alternative"]) / paper_sd),
                             "n_samples": args.n_samples, "data": name})
            print(f"{paper} {sampler} {cell.metric}: " + ", ".join(
                f"{r} {rows[-len(READINGS) + i]['ratio']:.2f}" for i, r in enumerate(READINGS)), flush=True)
    write_atomic(ROOT / args.out, pd.DataFrame(rows).to_csv(index=False))


if __name__ == "__main__":
    main()
