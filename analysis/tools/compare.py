"""Comparing two real systems against multi-rater annotations, with the raters resampled as the design allows.

A system's outputs give, per item, a label distribution ``q_i``: its one label (a point mass), the shares of its
sampled labels, or its label probabilities (``p_<label>`` columns). In a bootstrap replicate the sampler (S1, S2
or S3) draws the items and the gold's ``K`` rater columns, and each system answers every drawn item with its
``q_i`` on the scale of ``K`` responses (for a system of one label per item, that label ``K`` times; for samples
or probabilities, their expected counts rather than ``K`` draws, so that replicates and the observed scores treat
a system alike). A and B answer the same drawn items (paired).

The interval and the headline p come from one test, so that a two-sided p below 0.05 holds exactly when the interval
excludes 0. Under S1, S3 and S4 it is the rater-level test of :mod:`analysis.tools.rater_level` (a t-test on item and
rater jackknives, and for the distribution metrics also the widened percentile of rater-column replicates). Under S2 it is the percentile bootstrap (:func:`replicate_test`): a replicate's gold has ``K``
ratings drawn with replacement, a noisier gold than all of an item's ratings, which moves the level of non-linear
metrics (MAE, Wins, JSD) more than their spread; so each replicate's delta enters as its deviation from the
replicates' mean added to the observed delta. The 95 % interval is a pair of order statistics of those values and
the p counts them at 0 (``(1 + #{delta*_b <= 0}) / (1 + B)``, two-sided ``min(1, 2 min(p_low, p_high))``).

A second p, ``p_given_ratings``, holds these raters' labels fixed: every item with A's and B's answers swapped with
probability 1/2, scored as the observed delta is (:func:`permutation_p`). No sampler
changes it: it asks whether A beats B on these ratings, not on the rater population. Everything is plain numpy on
count arrays; the metrics are :func:`analysis.engine.metrics.scores` and :func:`analysis.engine.metrics.deltas`,
with the book's KL and JSD smoothing (:data:`analysis.experiment.choices.BOOK`) and the weighted averages of
precision, recall and F1.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm import tqdm

from analysis import __version__
from analysis.data.annotations import AnnotationDataset, from_table
from analysis.errors import DataError, ParameterError
from analysis.experiment.cache import engine_fingerprint
from analysis.experiment.choices import BOOK
from analysis.io import output_file, write_atomic
from analysis.engine.metrics import BY_NAME, METRIC_LABELS, METRICS, check_metrics, deltas, score_deltas, scores
from analysis.tools import rater_level
from analysis.tools.options import data_arguments, load_data
from analysis.tools.outputs import SystemOutputs, read_outputs, read_system
from analysis.experiment.pvalues import replicate_p_values
from analysis.engine.samplers import (SAMPLERS, check_sampler, default_sampler, design_reading, group_layout,
                                      make_layout)
from analysis.wording import counted

CHUNK_RESPONSES = 4_000_000  # labels drawn per chunk of replicates (bounds memory)
TAIL = Fraction(1, 40)  # each tail of the 95 % interval, exactly
SAMPLER_WORDS = {"S1": "items and raters resampled", "S2": "items and raters within items resampled",
                 "S3": "batches, items and batch raters resampled",
                 "S4": "items and the pool's raters resampled, each item keeping its drawn raters' ratings"}
COLUMNS = ("metric", "score_a", "score_b", "delta", "ci_low", "ci_high", "p_value", "p_given_ratings", "items", "K",
           "sampler", "n_samples", "seed", "raters", "raters_for_even_odds", "signature")
RATER_LEVEL = ("S1", "S3", "S4")  # the samplers whose headline test is rater_level's
# what a sampler draws K raters from, in words (one, several)
POOL_UNITS = {"S1": ("rater pool", "rater pools"), "S2": ("item", "items"), "S3": ("batch", "batches"),
              "S4": ("item", "items")}


def design_notes(ds: AnnotationDataset, used: AnnotationDataset, sampler: str, k: int,
                 default: bool) -> tuple[list[str], list[str]]:
    """What changed the design on the way, as notes (one line each) and as clauses for the sentence: blank labels
    dropped (and, where they turned a fully crossed table into another design, the default sampler that follows),
    and K above the raters that some items are drawn from. K above every pool is refused: its ratings could only
    redraw the same people."""
    notes, clauses = [], []
    if ds.n_dropped:
        notes.append(f"{ds.n_dropped:,} rating(s) with a blank label were dropped")
        clauses.append(f"{ds.n_dropped:,} blank rating(s) dropped")
        if ds.n_ratings < ds.n_items * ds.n_raters == ds.n_ratings + ds.n_dropped:
            notes[-1] += (f": without them the table is {ds.topology.kind}, not fully crossed"
                          + (f", so the sampler is {sampler}, not S1 (--sampler to choose)" if default else ""))
    pools = np.diff(make_layout(used, sampler).rater_start)
    unit, units = POOL_UNITS[sampler]
    if k > pools.max():
        raise ParameterError(f"K (--k) {k} is more than the {pools.max()} raters any {unit} has under {sampler}: "
                             f"its ratings could only redraw the same people; give --k {pools.max()} or less")
    short = int((pools < k).sum())  # none under S1, whose one pool is every rater
    if short:
        notes.append(f"K = {k} is more than the raters of {short:,} of {len(pools):,} {units} (as few as "
                     f"{pools.min()}): their K ratings redraw the same raters, which adds nothing about the rater "
                     "population")
        clauses.append(f"{short:,} of {len(pools):,} {units} with fewer than {k} raters")
    return notes, clauses


def _paired(ds: AnnotationDataset, a: SystemOutputs, b: SystemOutputs) -> tuple[np.ndarray, np.ndarray]:
    """The items both systems answered (dataset codes) and the ones left out because one did not."""
    listed_a, listed_b = np.union1d(a.item, a.unanswered), np.union1d(b.item, b.unanswered)
    if not np.array_equal(listed_a, listed_b):
        only_a, only_b = np.setdiff1d(listed_a, listed_b), np.setdiff1d(listed_b, listed_a)
        sides = [f"{len(only)} only in {side} (e.g. {[str(v) for v in ds.item_ids[only[:3]]]})"
                 for side, only in (("A", only_a), ("B", only_b)) if len(only)]
        raise DataError(f"A and B list different items: {', '.join(sides)}; give both systems' outputs on the same "
                        "items")
    both = np.intersect1d(a.item, b.item)
    if both.size == 0:
        raise DataError("no item was answered by both systems")
    return both, np.setdiff1d(listed_a, both)


def subset(ds: AnnotationDataset, items: np.ndarray) -> AnnotationDataset:
    """The annotations of the given item codes only (same labels, same batches)."""
    if len(items) == ds.n_items:
        return ds
    frame = ds.to_frame()[np.isin(ds.item, items)]
    return from_table(frame, batch="batch" if ds.item_batch is not None else None, label_order=ds.label_names,
                      name=ds.name, provenance=ds.provenance)


def draw_gold(plan, n: int, k: int, reps: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``reps`` replicates of the sampler's draw (the methods page): per slot its item (plan's item index) and the
    gold's label counts from the drawn rater columns, shapes (reps, slots) and (reps, slots, labels)."""
    n_drawn, per_group = group_layout(n, plan.single_group, plan.group_size)
    n_groups = len(plan.item_start) - 1
    group = np.zeros((reps, n_drawn), np.int64) if plan.single_group else rng.integers(n_groups, size=(reps, n_drawn))
    items_in = np.diff(plan.item_start)[group][..., None]
    raters_in = np.diff(plan.rater_start)[group][..., None]
    local = np.minimum((rng.random((reps, n_drawn, per_group)) * items_in).astype(np.int64), items_in - 1)
    column = np.minimum((rng.random((reps, n_drawn, k)) * raters_in).astype(np.int64), raters_in - 1)
    item = plan.items[plan.item_start[group][..., None] + local]
    cell = (plan.matrix_start[group][..., None] + local * raters_in)[..., None] + column[:, :, None, :]
    labels = plan.matrix[cell].astype(np.int64)
    missing = labels < 0  # a ragged batch: the response comes from the item's own labels
    if missing.any():
        cum = plan.item_cum[np.broadcast_to(item[..., None], labels.shape)[missing]]
        labels[missing] = (rng.random(len(cum))[:, None] >= cum[:, :-1]).sum(1)
    counts = (labels[..., None] == np.arange(plan.n_labels)).sum(-2)
    return item.reshape(reps, -1), counts.reshape(reps, -1, plan.n_labels)


def full_counts(ds: AnnotationDataset, share_a: np.ndarray, share_b: np.ndarray, k: int) -> list[np.ndarray]:
    """The gold's, A's and B's label counts per item on the scale of ``k`` responses, from all of an item's
    ratings and each system's whole label distribution (what the observed scores use)."""
    return [ds.item_label_counts / ds.raters_per_item[:, None] * k, share_a * k, share_b * k]


def _delta_matrix(gold: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """:func:`delta_values` as an array (leading axes, metrics), in METRICS order."""
    values = delta_values(gold, a, b)
    return np.stack([values[m] for m in METRICS], axis=-1)


def delta_values(gold: np.ndarray, a: np.ndarray, b: np.ndarray) -> dict[str, np.ndarray]:
    """Deltas of counts on one scale, with leading replicate axes: :func:`analysis.engine.metrics.deltas`' exact ones where
    every count is a whole number, else :func:`analysis.engine.metrics.score_deltas` of the direct scores."""
    if all(np.allclose(x, np.rint(x), rtol=0, atol=1e-9) for x in (gold, a, b)):
        return deltas(*(np.rint(x).astype(np.int64) for x in (gold, a, b)), smoothing=BOOK.smoothing)
    return score_deltas(scores(gold, a, BOOK.smoothing), scores(gold, b, BOOK.smoothing), gold.shape[-2])


def replicate_deltas(ds: AnnotationDataset, share_a: np.ndarray, share_b: np.ndarray, sampler: str, k: int,
                     n_samples: int, seed: int, progress: bool = False,
                     columns: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(bootstrap, swap) deltas, each (n_samples, 8) in METRICS order; ``share_a[i]`` is A's label distribution
    on item ``i`` of ``ds``.

    A bootstrap replicate draws items and the gold's ``k`` rater columns with the sampler; each system answers a
    drawn item with its whole label distribution on the scale of ``k`` responses (drawing ``k`` labels from it would
    add noise that the observed scores do not have). With ``columns`` it is instead a replicate of the rater-column
    bootstrap (:func:`analysis.tools.rater_level.column_replicates`). A swap replicate keeps every item and all its
    ratings, swaps A's and B's answers per item with probability 1/2, and scores them as the observed delta is
    scored: under the hypothesis that A and B are exchangeable on every item of these ratings, that is the observed
    delta's exact permutation law. The swaps have their own random stream, so they are the same under every
    sampler. ``progress`` shows a bar on standard error for runs of several seconds.
    """
    plan = make_layout(ds, sampler)
    full = full_counts(ds, share_a, share_b, k)
    boot, swaps = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
    chunk = max(1, CHUNK_RESPONSES // (ds.n_items * k))
    columns = columns or sampler == "S4"  # S4's replicates are the pigeonhole bootstrap's, whichever test reads them
    if columns and sampler == "S4":
        alt = [rater_level.pigeonhole_replicates(ds, share_a, share_b, k, n_samples, boot, _delta_matrix)]
    elif columns:
        alt = [rater_level.column_replicates(ds, share_a, share_b, sampler, k, n_samples, boot, _delta_matrix)]
    else:
        alt = []
    null = []
    with tqdm(total=n_samples, desc=f"compare {sampler}", unit="replicate", file=sys.stderr, leave=False, delay=2,
              disable=not progress) as bar:
        for start in range(0, n_samples, chunk):
            reps = min(chunk, n_samples - start)
            if not columns:
                item, gold = draw_gold(plan, ds.n_items, k, reps, boot)
                alt.append(_delta_matrix(gold, full[1][item], full[2][item]))
            swap = swaps.random((reps, ds.n_items))[..., None] < 0.5
            shape = swap.shape[:2] + (ds.n_labels,)
            null.append(_delta_matrix(np.broadcast_to(full[0], shape), np.where(swap, full[2], full[1]),
                                      np.where(swap, full[1], full[2])))
            bar.update(reps)
    return np.concatenate(alt), np.concatenate(null)


def interval_rank(n_samples: int) -> int:
    """The order statistic (1-based) of the 95 % interval's lower end among ``n_samples`` replicates:
    ``ceil((B + 1) / 40) - 1``, the rank at which "the interval excludes 0" and "two-sided p < 0.05" are the same
    event; 0 when ``B < 40``, too few replicates for any p below 0.05 (the interval is then unbounded)."""
    return math.ceil(TAIL * (n_samples + 1)) - 1


def replicate_test(replicates: np.ndarray, delta: float, two_sided: bool,
                   bound: float = math.inf) -> tuple[float, float, float]:
    """(p, interval low, interval high) of one metric from its bootstrap replicates and the observed delta.

    The replicates enter as ``delta + (delta*_b - mean)``: centred on the observed delta, since a replicate draws
    ``K`` of each item's ratings and the observed scores use all of them (the replicates' own mean is off by that
    difference, for Wins by 0.1 and more). Centred values beyond the metric's range ``[-bound, bound]`` are moved
    to its end, so the interval never leaves the range; the sign of none changes, so neither does p. One-sided p (A is better) is
    ``(1 + #{<= 0}) / (1 + B)``, two-sided ``min(1, 2 min(p_low, p_high))`` with ``p_high`` counting ``>= 0``; the
    interval's ends are the order statistics of rank :func:`interval_rank` from each end, so that two-sided
    p < 0.05 exactly when the interval excludes 0 (and one-sided p < 0.025 exactly when its lower end is above 0).
    """
    values = np.sort(np.clip(delta + (replicates - replicates.mean()), -bound, bound))
    n = len(values)
    low = int(np.searchsorted(values, 0.0, side="right"))  # #{<= 0}
    high = n - int(np.searchsorted(values, 0.0, side="left"))  # #{>= 0}
    p = 2 * (1 + min(low, high)) / (1 + n) if two_sided else (1 + low) / (1 + n)
    rank = interval_rank(n)
    ends = (values[rank - 1], values[n - rank]) if rank >= 1 else (-np.inf, np.inf)
    return min(1.0, p), float(ends[0]) + 0.0, float(ends[1]) + 0.0


def observed(ds: AnnotationDataset, share_a: np.ndarray, share_b: np.ndarray, k: int) -> dict[str, tuple]:
    """Per metric (score A, score B, delta) on every item with all its ratings, on the scale of ``k`` responses."""
    counts = full_counts(ds, share_a, share_b, k)
    sa, sb = scores(counts[0], counts[1], BOOK.smoothing), scores(counts[0], counts[2], BOOK.smoothing)
    delta = delta_values(*counts)
    wins = [(sa["item_error"] < sb["item_error"]).mean(), (sb["item_error"] < sa["item_error"]).mean()]
    out = {m: (float(sa[m]), float(sb[m]), float(delta[m])) for m in METRICS if m != "wins"}
    out["wins"] = (float(wins[0]), float(wins[1]), float(delta["wins"]))
    return out


def permutation_p(null: np.ndarray, delta: float, two_sided: bool = False) -> float:
    """``p_given_ratings``: ``(1 + #{null_i >= delta}) / (1 + n)`` over the swap replicates, the observed answers
    counting as one of the equally likely swaps, so that ``P(p <= a) <= a`` holds exactly (ties count toward the
    null, :func:`analysis.experiment.pvalues.replicate_p_values`); two-sided, twice the smaller tail, each tail counting its
    ties, so that a delta inside a block of equal swap deltas gets p = 1."""
    def tail(values, at):
        return (1 + np.rint(replicate_p_values(values, [at])[0] * len(values))) / (1 + len(values))
    p = tail(null, delta)
    return float(min(1.0, 2 * min(p, tail(-null, -delta)))) if two_sided else float(p)


def engine() -> str:
    """The fingerprint of what decides compare's numbers: the simulating engine's and this module's source."""
    digest = hashlib.sha256(engine_fingerprint().encode())
    digest.update(Path(__file__).read_bytes())
    return digest.hexdigest()[:16]


def compare(ds: AnnotationDataset, outputs_a: pd.DataFrame | str | Path, outputs_b: pd.DataFrame | str | Path,
            sampler: str | None = None, k: int | None = None, n_samples: int = 1000, seed: int = 0, metrics="all",
            two_sided: bool = False, item: str = "item", label: str = "label", normalize_labels: bool = False,
            progress: bool = False, percentile: bool = False) -> pd.DataFrame:
    """Compare systems A and B on the annotated items they both answered; one row per metric.

    ``outputs_a`` and ``outputs_b`` are frames or files (CSV, TSV, JSON lines, Parquet; :func:`.read_system`) with
    an ``item`` column and either a ``label`` column (one row per item, or several: sampled labels) or
    ``p_<label>`` columns. ``sampler`` defaults to the one that models raters as the design allows, ``k`` to the
    median number of ratings per item; ``normalize_labels`` matches the systems' labels whatever their case and
    surrounding spaces; ``progress`` shows a bar on standard error for long runs. Under S1 and S3 the interval and p
    are the rater-level test of :mod:`analysis.tools.rater_level`; ``percentile`` gives the percentile bootstrap's
    of the sampler's replicates instead (too small a p with few raters; kept to compare the two).

    Returns
    -------
    pandas.DataFrame
        One row per metric, columns: ``metric``; ``score_a``, ``score_b`` (each against all of an item's ratings);
        ``delta`` (positive: A is better); ``ci_low``, ``ci_high`` (95 % interval of ``delta`` under the sampler);
        ``p_value`` (from the same test: below 0.05 two-sided exactly when the interval excludes 0);
        ``p_given_ratings`` (swapping A's and B's answers per item, these raters' labels fixed; no sampler changes
        it); ``items``, ``K``, ``sampler``, ``n_samples``, ``seed``; ``raters`` (per group under S1 and S3, the
        median per item under S2); ``raters_for_even_odds`` (where no number of items gives the test even odds of
        detecting a difference of the observed size with these raters, about how many would; else empty);
        ``signature`` (what reproduces the row). The
        frame's ``attrs`` hold the items left out (``"left_out"``), notes on the outputs (``"notes"``) and the
        provenance.
    """
    chosen = check_metrics(metrics)
    if int(n_samples) != n_samples or n_samples < 2:
        raise ParameterError(f"n_samples must be an integer >= 2, got {n_samples!r}")
    if int(seed) != seed or seed < 0:
        raise ParameterError(f"the seed (--seed) must be an integer >= 0, got {seed!r}")
    outputs = [read_system(x) if isinstance(x, (str, Path)) else x for x in (outputs_a, outputs_b)]
    a = read_outputs(ds, outputs[0], "A", item, label, normalize_labels)
    b = read_outputs(ds, outputs[1], "B", item, label, normalize_labels)
    both, left_out = _paired(ds, a, b)
    used = subset(ds, both)
    chosen_sampler = sampler
    sampler = check_sampler(sampler or default_sampler(used))
    k = int(np.median(used.raters_per_item)) if k is None else k
    if int(k) != k or k < 1:
        raise ParameterError(f"K (--k) must be an integer >= 1, got {k!r}")
    design, clauses = design_notes(ds, used, sampler, int(k), chosen_sampler is None)
    reading = design_reading(used, sampler, chosen_sampler is None)
    share_a = a.share[np.searchsorted(a.item, both)]
    share_b = b.share[np.searchsorted(b.item, both)]
    rater_test = sampler in RATER_LEVEL and not percentile
    alt, null = replicate_deltas(used, share_a, share_b, sampler, int(k), int(n_samples), int(seed), progress,
                                 columns=rater_test)
    seen = observed(used, share_a, share_b, int(k))
    if rater_test:
        jackknife = (rater_level.pool_jackknife(used, share_a, share_b, int(k), _delta_matrix) if sampler == "S4"
                     else rater_level.rater_jackknife(used, share_a, share_b, sampler, int(k), _delta_matrix))
        rater_part, df_raters, per_group = rater_level.rater_part(jackknife)
        df_raters = min(df_raters, used.n_raters - 1)  # raters in several batches count once
        item_part = rater_level.item_jackknife(full_counts(used, share_a, share_b, int(k)), _delta_matrix)
        df = rater_level.degrees(len(both), df_raters)
        factor = rater_level.expansion(per_group)
        fewest = rater_level.fewest_raters(int(n_samples), len(jackknife))
    raters = int(round(per_group)) if rater_test else int(np.median(used.raters_per_item))
    signature = "|".join([f"sampler:{sampler}", f"K:{k}", f"reps:{n_samples}", f"seed:{seed}",
                          f"test:{'two-sided' if two_sided else 'one-sided'}{'/percentile' if percentile else ''}",
                          f"data:{ds.sha256[:12]}",
                          f"a:{a.sha256[:12]}", f"b:{b.sha256[:12]}", f"engine:{engine()}", f"v:{__version__}"])
    rows = []
    for m, metric in enumerate(METRICS):
        if metric not in chosen:
            continue
        # rounded to 12 decimals: a perfect system's MAE is 0, not 1e-17; + 0.0: no -0 in the table
        score_a, score_b, delta = (round(value, 12) + 0.0 for value in seen[metric])
        bound = BY_NAME[metric].bound(ds.n_labels)
        needed = None
        if rater_test:
            companion = metric in rater_level.COMPANION
            p, low, high = rater_level.test(delta, item_part[m] + rater_part[m], df, two_sided, bound,
                                            1 / (1 + n_samples), alt[:, m] if companion else None, factor)
            needed = rater_level.raters_for_even_odds(delta, item_part[m], rater_part[m], raters, len(both),
                                                      len(jackknife), fewest if companion else 0, bound)
        else:
            p, low, high = replicate_test(alt[:, m], delta, two_sided, bound)
        rows.append(dict(zip(COLUMNS, (metric, score_a, score_b, delta, low, high, p,
                                       permutation_p(null[:, m], delta, two_sided), len(both), int(k), sampler,
                                       int(n_samples), int(seed), raters, needed, signature))))
    table = pd.DataFrame(rows, columns=list(COLUMNS)).astype({"raters_for_even_odds": "Int64"})
    small = table.dropna(subset=["raters_for_even_odds"])
    if len(small):
        design.append(f"with {raters} raters{' per batch' if sampler == 'S3' else ''}, no number of items gives "
                      "the test even odds of detecting a difference as large as the observed one in "
                      + ", ".join(f"{METRIC_LABELS[r.metric]} (about {r.raters_for_even_odds} raters would)"
                                  for r in small.itertuples())
                      + ": a p above 0.05 there is not evidence that A and B are equally good")
    table.attrs["left_out"] = [str(v) for v in ds.item_ids[left_out]]
    table.attrs["notes"] = [*a.notes, *b.notes, *design]
    table.attrs["caveats"] = clauses
    table.attrs["design"] = reading
    table.attrs["raters_in_data"] = used.n_raters
    table.attrs["provenance"] = {
        "version": __version__, "engine": engine(), "dataset": ds.name, "data_sha256": ds.sha256,
        "data_provenance": ds.provenance, "system_a": {"form": a.form, "sha256": a.sha256},
        "system_b": {"form": b.form, "sha256": b.sha256}, "items_used": len(both),
        "items_left_out": table.attrs["left_out"], "notes": table.attrs["notes"], "caveats": clauses,
        "design": reading,
        "signature": signature,
        "parameters": {"sampler": sampler, "K": int(k), "n_samples": int(n_samples), "seed": int(seed),
                       "two_sided": two_sided, "normalize_labels": normalize_labels, "metrics": list(chosen)}}
    return table


def _number(value: float) -> str:
    value = float(value) + 0.0  # no -0
    return f"{value:.3g}" if abs(value) >= 0.001 or value == 0 else f"{value:.2e}"


def _interval(low: float, high: float) -> str:
    """An interval's two ends in one format: three decimals, or both in scientific notation when neither reaches
    0.01 in size."""
    ends = [float(v) + 0.0 for v in (low, high)]
    finite = [abs(v) for v in ends if math.isfinite(v)]
    scientific = finite and 0 < max(finite) < 0.01
    return "[" + ", ".join(f"{v:.2e}" if scientific and math.isfinite(v) else f"{v:.3f}" if math.isfinite(v)
                           else str(v) for v in ends) + "]"


def p_text(p: float) -> str:
    """A p-value as printed: three decimals, or "< 0.001"."""
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def _favour(delta: float, names) -> str:
    return f" in favour of {names[0]}" if delta > 0 else f" in favour of {names[1]}" if delta < 0 else ", no difference"


def _equals(p: float) -> str:
    text = p_text(p)
    return text if text[0] == "<" else f"= {text}"


def sentence(table: pd.DataFrame, metric: str | None = None, names=("system A", "system B")) -> str:
    """One plain sentence with the result of one metric (the first of the table by default), to paste into a paper."""
    row = table.iloc[0] if metric is None else table[table["metric"] == metric].iloc[0]
    sided = "two-sided" if "two-sided" in row["signature"] else "one-sided"
    caveats = table.attrs.get("caveats") or []
    items = counted(row['items'], "item")
    return (f"On {items} with K = {row['K']} ratings each"
            f"{' (' + '; '.join(caveats) + ')' if caveats else ''}, {names[0]} scored "
            f"{_number(row['score_a'])} {METRIC_LABELS[row['metric']]} against {_number(row['score_b'])} for "
            f"{names[1]} (delta {_number(row['delta'])}{_favour(row['delta'], names)}, 95 % interval "
            f"{_interval(row['ci_low'], row['ci_high'])}, {sided} p {_equals(row['p_value'])} from "
            f"{_test_words(row, table.attrs.get('raters_in_data'))}; with "
            f"these raters' labels held fixed, p {_equals(row['p_given_ratings'])}; {row['signature']})."
            + _small_pool(row))


def _rater_level(row) -> bool:
    """Whether the row's p is the rater-level test's."""
    return row["sampler"] in RATER_LEVEL and "/percentile" not in row["signature"]


def _test_words(row, raters_in_data: int | None = None) -> str:
    """How the row's p was found, for the sentence; ``raters_in_data`` names the distinct raters behind a per-batch
    count."""
    replicates = f"{row['n_samples']:,} replicates of sampler {row['sampler']}, {SAMPLER_WORDS[row['sampler']]}"
    if not _rater_level(row):
        return f"the percentile of {replicates}"
    raters = (f"{raters_in_data:,} raters (about {row['raters']} per batch)" if row["sampler"] == "S3" and raters_in_data
              else f"{row['raters']:,} raters")
    words = f"a t-test on item and rater jackknives for the {raters}"
    if row["metric"] in rater_level.COMPANION:
        words += f", and the widened percentile of {row['n_samples']:,} replicates with rater columns resampled"
    return words


def _small_pool(row) -> str:
    """The sentence's last clause where the rater pool limits the test (:func:`rater_level.raters_for_even_odds`)."""
    needed = row.get("raters_for_even_odds")
    if needed is None or pd.isna(needed):
        return ""
    per = " per batch" if row["sampler"] == "S3" else ""
    return (f" With {row['raters']} raters{per}, no number of items would give this test even odds of detecting a "
            f"difference of this size (about {needed} raters{per} would), so a p above 0.05 here is not evidence "
            "that the two systems are equally good.")


def readable(table: pd.DataFrame, names=("A", "B")) -> pd.DataFrame:
    """The result as people read it, one row per row of ``table``; columns ``sampler``, ``metric`` (its label),
    ``names[0]`` and ``names[1]`` (the scores), ``delta``, ``95% interval``, ``p`` and ``p given ratings``, as
    text."""
    return pd.DataFrame({
        "sampler": table["sampler"], "metric": table["metric"].map(METRIC_LABELS),
        names[0]: table["score_a"].map(_number), names[1]: table["score_b"].map(_number),
        "delta": table["delta"].map(_number),
        "95% interval": [_interval(lo, hi) for lo, hi in zip(table["ci_low"], table["ci_high"])],
        "p": table["p_value"].map(p_text), "p given ratings": table["p_given_ratings"].map(p_text)})


def text_table(table: pd.DataFrame) -> str:
    """The result as a terminal table."""
    return readable(table).drop(columns="sampler").to_string(index=False)


def save(table: pd.DataFrame, path: str | Path) -> None:
    """The result as CSV and its provenance as ``<path>.json``, both written atomically."""
    write_atomic(path, table.to_csv(index=False))
    write_atomic(f"{path}.json", json.dumps(table.attrs.get("provenance", {}), indent=2, default=str))


HELP_P = """\
what the two p-values mean:
  p                  from the sampler's own bootstrap replicates, the same ones that give the 95 % interval:
                     a two-sided p below 0.05 exactly when the interval excludes 0. S1 and S3 resample the
                     raters as the same people across items, so they answer "is A better for the rater
                     population these raters come from?"; S2 treats each item's raters as independent.
  p given ratings    swapping A's and B's answers item by item, with these raters' labels held fixed: "is A
                     better on these very ratings?". No sampler changes it, and it says nothing about other
                     raters.
"""


def add_cli(commands) -> None:
    """Register ``compare`` on the command line's subparsers."""
    cli = commands.add_parser("compare", help="compare two systems' outputs against multi-rater annotations",
                              description="Is system A better than B on a multi-rater test set? Scores both against "
                                          "every rating, with a bootstrap interval and p under a sampler of items "
                                          "and raters.",
                              epilog=HELP_P, formatter_class=argparse.RawDescriptionHelpFormatter)
    data_arguments(cli)
    cli.add_argument("--a", required=True, help="system A's outputs: item,label rows (one or several per item) or "
                                                "item,p_<label>,... rows (CSV, TSV, JSON lines or Parquet)")
    cli.add_argument("--b", required=True, help="system B's outputs, in the same form")
    cli.add_argument("--sampler", choices=SAMPLERS, default=None,
                     help="bootstrap sampler (default: S1 when fully crossed, S3 when batched, S4 on any other design "
                          "where raters rate several items, else S2)")
    cli.add_argument("--k", type=int, default=None, help="ratings per item drawn (default: the median per item)")
    cli.add_argument("--metrics", default="all", help="comma-separated metrics or 'all'")
    cli.add_argument("--n-samples", type=int, default=1000,
                     help="bootstrap replicates (default: 1000; at least 40 for a two-sided p below 0.05)")
    cli.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    cli.add_argument("--two-sided", action="store_true", help="two-sided p: twice the smaller tail, at most 1")
    cli.add_argument("--out", default=None, help="output CSV; provenance goes to OUT.json")


def run_cli(args: argparse.Namespace) -> None:
    """The ``compare`` command."""
    out = output_file(args.out, inputs=[args.data, args.a, args.b], sidecar=".json",
                      suffixes=(".csv",)) if args.out else None
    ds = load_data(args)
    table = compare(ds, args.a, args.b, sampler=args.sampler, k=args.k, n_samples=args.n_samples, seed=args.seed,
                    two_sided=args.two_sided, metrics="all" if args.metrics == "all" else args.metrics.split(","),
                    normalize_labels=args.normalize_labels, progress=True)
    for note in table.attrs["notes"]:
        print(f"note: {note}", file=sys.stderr)
    left_out = table.attrs["left_out"]
    if left_out:
        print(f"note: {len(left_out)} item(s) that a system did not answer are left out of both: "
              f"{', '.join(left_out[:5])}{' ...' if len(left_out) > 5 else ''}", file=sys.stderr)
    row = table.iloc[0]
    if row["items"] + len(left_out) < ds.n_items:
        print(f"note: the systems list {row['items'] + len(left_out):,} of the {ds.n_items:,} annotated items; the "
              "others are not compared", file=sys.stderr)
    print(table.attrs["design"])
    print(f"A against B on {row['items']:,} items, K = {row['K']}, sampler {row['sampler']} "
          f"({SAMPLER_WORDS[row['sampler']]}), {row['n_samples']:,} replicates; delta > 0 means A is better; "
          "p from " + ("a t-test on item and rater jackknives (for the distribution metrics also the widened "
                       "percentile of rater-column replicates)" if _rater_level(row) else "the sampler's replicates")
          + ", 'p given ratings' with these raters' labels held fixed")
    print(text_table(table))
    print(f"\n{sentence(table)}")
    if out:
        save(table, out)
        print(f"wrote {len(table)} rows to {args.out}", file=sys.stderr)
