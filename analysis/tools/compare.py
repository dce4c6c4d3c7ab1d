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
with the book's choices (:data:`analysis.experiment.choices.BOOK`: its KL and JSD smoothing, and by default its
averaging of precision, recall and F1, which ``averaging`` changes); a plurality tie shares the item's vote among
the tied labels (:data:`analysis.experiment.choices.TIES`), so that relabelling the classes leaves every score
unchanged.
"""

from __future__ import annotations

import hashlib
import math
import sys
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm import tqdm

from analysis import __version__
from analysis.data.annotations import AnnotationDataset, from_table
from analysis.errors import DataError, ParameterError
from analysis.experiment.cache import engine_fingerprint
from analysis.experiment.choices import BOOK, TIES, selected
from analysis.engine.metrics import (AVERAGINGS, BY_NAME, METRIC_LABELS, METRICS, averaged, deltas, macro_scores,
                                      score_deltas, scores)
from analysis.tools import rater_level
from analysis.tools.outputs import SystemOutputs, read_outputs, read_system
from analysis.experiment.pvalues import at_or_above
from analysis.engine.samplers import (check_sampler, default_sampler, design_reading, group_layout,
                                      make_layout)

CHUNK_RESPONSES = 4_000_000  # labels drawn per chunk of replicates (bounds memory)
SAMPLER_WORDS = {"S1": "items and raters resampled", "S2": "items and raters within items resampled",
                 "S3": "batches, items and batch raters resampled",
                 "S4": "items and the pool's raters resampled, each item keeping its drawn raters' ratings"}
COLUMNS = ("metric", "score_a", "score_b", "delta", "ci_low", "ci_high", "p_value", "p_given_ratings", "items", "K",
           "sampler", "n_samples", "seed", "raters", "raters_for_even_odds", "signature", "p_floor")
# the metrics compare scores: the eight under each averaging of precision, recall and F1
SCORED = tuple(dict.fromkeys(m for averaging in AVERAGINGS for m in averaged(averaging)))
RATER_LEVEL = ("S1", "S3", "S4")  # the samplers whose headline test is rater_level's
# what a sampler draws K raters from, in words (one, several)
POOL_UNITS = {"S1": ("rater pool", "rater pools"), "S2": ("item", "items"), "S3": ("batch", "batches"),
              "S4": ("item", "items")}


def design_notes(ds: AnnotationDataset, used: AnnotationDataset, sampler: str, k: int,
                 default: bool, k_given: bool = True) -> tuple[list[str], list[str]]:
    """What changed the design on the way, as notes (one line each) and as clauses for the sentence: blank labels
    dropped (and, where they turned a fully crossed table into another design, the default sampler that follows),
    and a K the user gave above the raters that some items are drawn from (the default K, the median item's raters,
    is no choice of theirs to warn about). K above every pool is refused: its ratings could only redraw the same
    people."""
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
    short = int((pools < k).sum()) if k_given else 0  # none under S1, whose one pool is every rater
    if short:
        notes.append(f"K = {k} is more than the raters of {short:,} of {len(pools):,} {units} (as few as "
                     f"{pools.min()}): their K ratings redraw the same raters, which adds nothing about the rater "
                     "population")
        clauses.append(f"{short:,} of {len(pools):,} {units} with fewer than {k} raters")
    return notes, clauses


MIN_REPLICATES = 39  # the fewest replicates with a 95 % interval (interval_rank 1)
MAX_BYTES = 8 * 2**30  # the replicates' memory compare accepts
MAX_SECONDS = 24 * 3600  # ... and its estimated time
N_SAMPLES = 1000  # replicates of a comparison, unless given
#: The largest S4 pool on which the calibration found the rater-level test a little liberal (pools of 8 raters:
#: medians over the metrics 0.066 and 0.076 where 0.05 was asked, 0.072 over both; in sets of 4, over 2,000 fresh
#: test sets, 0.080-0.081 on Accuracy, Precision, Recall and F1, benchmarks/pool8_size.csv; pools of 20 held their
#: level; the methods page).
LIBERAL_POOL = 8
SECONDS_PER_COUNT = 2e-8  # a replicate's cost per item and response (measured on the 2-core development machine)


def default_k(ds: AnnotationDataset) -> int:
    """The K ``compare`` tests at unless told, and a pilot's own K in planning: the median number of ratings per
    item."""
    return int(np.median(ds.raters_per_item))


def check_workload(n_samples: int, n_items: int, k: int) -> None:
    """Refuse a number of replicates whose deltas would not fit in memory or that would take more than a day,
    with the estimates."""
    memory = n_samples * 2 * 8 * 8  # two tables of eight deltas a replicate
    seconds = n_samples * n_items * (k + 8) * SECONDS_PER_COUNT
    if memory > MAX_BYTES or seconds > MAX_SECONDS:
        raise ParameterError(f"--n-samples {n_samples:,} would need about {memory / 2**30:,.0f} GiB and "
                             f"{seconds / 3600:,.0f} hours on {n_items:,} items; give at most "
                             f"{int(min(MAX_BYTES / 128, MAX_SECONDS / (n_items * (k + 8) * SECONDS_PER_COUNT))):,}")


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


def _delta_matrix(gold: np.ndarray, a: np.ndarray, b: np.ndarray, names=METRICS) -> np.ndarray:
    """:func:`delta_values` as an array (leading axes, metrics), in the order of ``names``."""
    values = delta_values(gold, a, b, names)
    return np.stack([values[m] for m in names], axis=-1)


def delta_values(gold: np.ndarray, a: np.ndarray, b: np.ndarray, names=METRICS) -> dict[str, np.ndarray]:
    """Deltas of ``names`` (of :data:`SCORED`) of counts on one scale, with leading replicate axes: the vote
    metrics' from votes with their ties shared (:func:`vote_scores`); the others :func:`analysis.engine.metrics.deltas`'
    exact ones where every count is a whole number, else :func:`analysis.engine.metrics.score_deltas` of the direct
    scores."""
    votes = [m for m in names if BY_NAME[m].family == "vote"]
    others = [m for m in names if m not in votes]
    found = {}
    if others and all(np.allclose(x, np.rint(x), rtol=0, atol=1e-9) for x in (gold, a, b)):
        found = deltas(*(np.rint(x).astype(np.int64) for x in (gold, a, b)), metrics=others,
                       smoothing=BOOK.smoothing)
    elif others:
        found = score_deltas(scores(gold, a, BOOK.smoothing, others), scores(gold, b, BOOK.smoothing, others),
                             gold.shape[-2], metrics=others)
    if votes:
        gold_votes = shared_votes(gold)
        votes_a, votes_b = vote_scores(gold_votes, a, votes), vote_scores(gold_votes, b, votes)
        found.update({m: np.round(votes_a[m] - votes_b[m], 12) + 0.0 for m in votes})
    return found


def shared_votes(counts: np.ndarray) -> np.ndarray:
    """Each item's plurality vote as shares of its labels: 1 for a clear winner, ``1/t`` for each of ``t`` tied
    labels (:data:`analysis.experiment.choices.TIES`: so that no label code wins a tie)."""
    counts = np.asarray(counts, dtype=float)
    tied = counts >= counts.max(-1, keepdims=True) - 1e-9
    return tied / tied.sum(-1, keepdims=True)


def vote_scores(gold_votes: np.ndarray, model: np.ndarray, names=None) -> dict[str, np.ndarray]:
    """Accuracy, and precision, recall and F1 under every averaging (the registry's names: support-weighted,
    ``_macro``, ``_macro_all``, ``_micro``; only ``names`` where given), of ``model``'s votes against the gold's
    ``gold_votes`` (:func:`shared_votes` of its counts), from their expected confusion matrix with ties shared;
    leading axes are replicates. Relabelling the classes leaves every value unchanged."""
    confusion = np.swapaxes(gold_votes, -1, -2) @ shared_votes(model)
    n_items = gold_votes.shape[-2]
    hits = np.diagonal(confusion, axis1=-2, axis2=-1)
    support, predicted = confusion.sum(-1), confusion.sum(-2)
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(predicted > 0, hits / predicted, 0.0)
        f1 = np.where(support + predicted > 0, 2 * hits / (support + predicted), 0.0)
    weight = support / n_items
    accuracy = hits.sum(-1) / n_items
    found = {"accuracy": accuracy, "precision": (weight * precision).sum(-1), "recall": accuracy,
             "f1": (weight * f1).sum(-1)}
    for kind in ("precision", "recall", "f1"):
        found[f"{kind}_micro"] = accuracy
        for suffix, every_label in (("_macro", False), ("_macro_all", True)):
            if names is None or kind + suffix in names:
                found[kind + suffix] = macro_scores(confusion, kind, every_label)
    return found if names is None else {m: found[m] for m in names}


def replicate_deltas(ds: AnnotationDataset, share_a: np.ndarray, share_b: np.ndarray, sampler: str, k: int,
                     n_samples: int, seed: int, progress: bool = False, columns: bool = False,
                     names=METRICS, swaps: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(bootstrap, swap) deltas, each (n_samples, metrics) in the order of ``names``; ``share_a[i]`` is A's label
    distribution on item ``i`` of ``ds``.

    A bootstrap replicate draws items and the gold's ``k`` rater columns with the sampler; each system answers a
    drawn item with its whole label distribution on the scale of ``k`` responses (drawing ``k`` labels from it would
    add noise that the observed scores do not have). With ``columns`` it is instead a replicate of the rater-column
    bootstrap (:func:`analysis.tools.rater_level.column_replicates`). A swap replicate keeps every item and all its
    ratings, swaps A's and B's answers per item with probability 1/2, and scores them as the observed delta is
    scored: under the hypothesis that A and B are exchangeable on every item of these ratings, that is the observed
    delta's exact permutation law. The swaps have their own random stream, so they are the same under every
    sampler; without ``swaps`` none is drawn (an empty table), and the bootstrap's are the same. ``progress`` shows
    a bar on standard error for runs of several seconds.
    """
    full = full_counts(ds, share_a, share_b, k)
    delta_matrix = partial(_delta_matrix, names=tuple(names))
    boot, swapping = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
    chunk = max(1, CHUNK_RESPONSES // (ds.n_items * k))
    columns = columns or sampler == "S4"  # S4's replicates are the pigeonhole bootstrap's, whichever test reads them
    plan = None if columns else make_layout(ds, sampler)
    if columns and sampler == "S4":
        alt = [rater_level.pigeonhole_replicates(ds, share_a, share_b, k, n_samples, boot, delta_matrix,
                                                 progress=progress)]
    elif columns:
        alt = [rater_level.column_replicates(ds, share_a, share_b, sampler, k, n_samples, boot, delta_matrix,
                                             progress=progress)]
    else:
        alt = []
    null = []
    with tqdm(total=n_samples, desc=f"compare {sampler}", unit="replicate", file=sys.stderr, leave=False, delay=2,
              disable=not progress or (columns and not swaps)) as bar:
        for start in range(0, n_samples, chunk):
            reps = min(chunk, n_samples - start)
            if not columns:
                item, gold = draw_gold(plan, ds.n_items, k, reps, boot)
                alt.append(delta_matrix(gold, full[1][item], full[2][item]))
            if swaps:
                swap = swapping.random((reps, ds.n_items))[..., None] < 0.5
                shape = swap.shape[:2] + (ds.n_labels,)
                null.append(delta_matrix(np.broadcast_to(full[0], shape), np.where(swap, full[2], full[1]),
                                          np.where(swap, full[1], full[2])))
            bar.update(reps)
    return np.concatenate(alt), np.concatenate(null) if null else np.empty((0, len(names)))


def interval_rank(n_samples: int) -> int:
    """The order statistic (1-based) of the 95 % interval's lower end among ``n_samples`` replicates:
    ``ceil((B + 1) / 40) - 1``, the rank at which "the interval excludes 0" and "two-sided p < 0.05" are the same
    event; 0 when ``B < 40``, too few replicates for any p below 0.05 (the interval is then unbounded)."""
    return math.ceil(rater_level.EXACT_TAIL * (n_samples + 1)) - 1


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


def observed(ds: AnnotationDataset, share_a: np.ndarray, share_b: np.ndarray, k: int,
             names=METRICS) -> dict[str, tuple]:
    """Per metric of ``names`` (score A, score B, delta) on every item with all its ratings, on the scale of ``k``
    responses."""
    counts = full_counts(ds, share_a, share_b, k)
    gold_votes = shared_votes(counts[0])
    sa = {**scores(counts[0], counts[1], BOOK.smoothing), **vote_scores(gold_votes, counts[1])}
    sb = {**scores(counts[0], counts[2], BOOK.smoothing), **vote_scores(gold_votes, counts[2])}
    delta = delta_values(*counts, names=tuple(dict.fromkeys((*names, "wins"))))
    wins = [(sa["item_error"] < sb["item_error"]).mean(), (sb["item_error"] < sa["item_error"]).mean()]
    out = {m: (float(sa[m]), float(sb[m]), float(delta[m])) for m in names if m != "wins"}
    out["wins"] = (float(wins[0]), float(wins[1]), float(delta["wins"]))
    return out


@dataclass(frozen=True)
class RaterParts:
    """The rater-level test's variance of the observed delta on one table, per metric (its item part and rater
    part), and its reference: degrees of freedom, the percentile's widening factor, raters per group, groups."""

    item: np.ndarray
    rater: np.ndarray
    df: int
    factor: float
    per_group: float
    groups: int


def rater_parts(ds: AnnotationDataset, share_a: np.ndarray, share_b: np.ndarray, sampler: str, k: int,
                delta_matrix) -> RaterParts:
    """The jackknives of :mod:`analysis.tools.rater_level` on ``ds`` under ``sampler`` (S1, S3 or S4): under S4 a
    deleted rater takes their ratings from every item they rated, and the residual both parts hold counts once."""
    jackknife = (rater_level.pool_jackknife(ds, share_a, share_b, k, delta_matrix) if sampler == "S4"
                 else rater_level.rater_jackknife(ds, share_a, share_b, sampler, k, delta_matrix))
    rater_part, df_raters, per_group = rater_level.rater_part(jackknife)
    df_raters = min(df_raters, ds.n_raters - 1)  # raters in several batches count once
    full = full_counts(ds, share_a, share_b, k)
    item_part, item_clusters = rater_level.item_jackknife(full, delta_matrix), ds.n_items
    if sampler == "S4":
        item_set = rater_level.rater_sets(ds)
        by_set = rater_level.set_jackknife(full, item_set, delta_matrix)
        if by_set is not None:  # items share rater sets: the sets are the items' clusters
            item_part, item_clusters = np.maximum(item_part, by_set), int(item_set.max()) + 1
        # the residual, held by both parts, counted once (the rater part keeps the rest)
        residual, _, _ = rater_level.rater_part(rater_level.rating_jackknife(ds, share_a, share_b, k, delta_matrix))
        rater_part = rater_level.two_way(item_part, rater_part, residual) - item_part
    return RaterParts(item_part, rater_part, rater_level.degrees(item_clusters, df_raters),
                      rater_level.expansion(ds.n_raters if sampler == "S4" else per_group), per_group,
                      len(jackknife))


def headline(parts: RaterParts | None, metric: str, m: int, delta: float, bound: float, alt: np.ndarray | None,
             two_sided: bool, n_samples: int) -> tuple[float, float, float]:
    """(p, interval low, interval high) of ``metric`` (column ``m`` of ``alt``): the rater-level test where
    ``parts`` are given (``alt`` read by the distribution metrics only), else the percentile bootstrap of
    ``alt``."""
    if parts is None:
        return replicate_test(alt[:, m], delta, two_sided, bound)
    companion = metric in rater_level.COMPANION
    return rater_level.test(delta, parts.item[m] + parts.rater[m], parts.df, two_sided, bound, 1 / (1 + n_samples),
                            alt[:, m] if companion else None, parts.factor)


def headline_p(ds: AnnotationDataset, share_a: np.ndarray, share_b: np.ndarray, sampler: str, k: int, names,
               n_samples: int = N_SAMPLES, seed: int = 0, two_sided: bool = False) -> np.ndarray:
    """``compare``'s headline p per metric of ``names`` on every item of ``ds``, A's and B's label distributions
    given per item: the same test and replicates as :func:`compare`, without its report and its swaps (what a
    plan simulates, :mod:`analysis.tools.study_power`). Replicates are drawn only where a metric reads them."""
    names = tuple(names)
    rater_test = sampler in RATER_LEVEL
    delta_matrix = partial(_delta_matrix, names=names)
    alt = None
    if not rater_test or any(m in rater_level.COMPANION for m in names):
        alt = replicate_deltas(ds, share_a, share_b, sampler, k, n_samples, seed, columns=rater_test, names=names,
                               swaps=False)[0]
    seen = observed(ds, share_a, share_b, k, names)
    parts = rater_parts(ds, share_a, share_b, sampler, k, delta_matrix) if rater_test else None
    return np.array([headline(parts, metric, m, round(seen[metric][2], 12) + 0.0, BY_NAME[metric].bound(ds.n_labels),
                              alt, two_sided, n_samples)[0] for m, metric in enumerate(names)])


def swap_floor(n_swaps: int, two_sided: bool) -> float:
    """The smallest ``p_given_ratings`` that ``n_swaps`` swaps can give: (1 + 0) / (1 + n), twice two-sided, the very
    float :func:`permutation_p` returns there (doubling is exact)."""
    return (2 if two_sided else 1) * ((1 + 0) / (1 + n_swaps))


def permutation_p(null: np.ndarray, delta: float, two_sided: bool = False) -> float:
    """``p_given_ratings``: ``(1 + #{null_i >= delta}) / (1 + n)`` over the swap replicates, the observed answers
    counting as one of the equally likely swaps, so that ``P(p <= a) <= a`` holds exactly (ties count toward the
    null, :func:`analysis.experiment.pvalues.at_or_above`); two-sided, twice the smaller tail, each tail counting its
    ties, so that a delta inside a block of equal swap deltas gets p = 1."""
    def tail(values, at):
        return (1 + int(at_or_above(values, [at])[0])) / (1 + len(values))
    p = tail(null, delta)
    return float(min(1.0, 2 * min(p, tail(-null, -delta)))) if two_sided else float(p)


def engine() -> str:
    """The fingerprint of what decides compare's numbers: the simulating engine's and this module's source."""
    digest = hashlib.sha256(engine_fingerprint().encode())
    digest.update(Path(__file__).read_bytes())
    return digest.hexdigest()[:16]


def compare(ds: AnnotationDataset, outputs_a: pd.DataFrame | str | Path, outputs_b: pd.DataFrame | str | Path,
            sampler: str | None = None, k: int | None = None, n_samples: int = N_SAMPLES, seed: int = 0, metrics="all",
            two_sided: bool = False, item: str = "item", label: str = "label", normalize_labels: bool = False,
            progress: bool = False, percentile: bool = False, averaging: str = BOOK.averaging) -> pd.DataFrame:
    """Compare systems A and B on the annotated items they both answered; one row per metric.

    Under S1, S3 and S4 the interval and p are the rater-level test of :mod:`analysis.tools.rater_level`.

    Parameters
    ----------
    ds : AnnotationDataset
        The human ratings of the test set.
    outputs_a, outputs_b : pandas.DataFrame, str or pathlib.Path
        Each system's outputs, a frame or a file (:func:`.read_system`): an id column and either a ``label`` column
        (one row per item, or several: sampled labels) or ``p_<label>`` columns.
    sampler : str, optional
        ``"S1"`` to ``"S4"``; default: the one that models raters as the design allows.
    k : int, optional
        Ratings per item K of the simulated gold standard; default: the median number of ratings per item.
    n_samples : int, default 1000
        Bootstrap replicates.
    seed : int, default 0
        The seed; the same seed gives the same numbers.
    metrics : "all" or sequence of str, default "all"
        The metrics; ``"all"``: the eight, with precision, recall and F1 averaged by ``averaging``; names of the
        registry (``f1_micro``, say) choose their own averaging.
    two_sided : bool, default False
        A two-sided p (default: one-sided, A better than B).
    item : str, default "item"
        The systems' id column (the annotations' own, or ``"item"``).
    label : str, default "label"
        The systems' label column.
    normalize_labels : bool, default False
        Match the systems' labels whatever their case and surrounding spaces.
    progress : bool, default False
        A progress bar on standard error for long runs.
    percentile : bool, default False
        The percentile bootstrap of the sampler's replicates instead of the rater-level test (too small a p with
        few raters; kept to compare the two).
    averaging : str, default the book's (``"macro"``)
        How ``"all"`` averages precision, recall and F1 over the labels: ``"weighted"`` (by support), ``"macro"``
        (over the labels used), ``"macro-all"`` (over all labels) or ``"micro"``.

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
    chosen = selected(metrics, replace(BOOK, averaging=averaging))
    if not set(chosen) <= set(SCORED):
        raise ParameterError(f"compare does not score {', '.join(m for m in chosen if m not in SCORED)}; it scores "
                             f"{', '.join(SCORED)}")
    delta_matrix = partial(_delta_matrix, names=chosen)
    if int(n_samples) != n_samples or n_samples < 2:
        raise ParameterError(f"n_samples must be an integer >= 2, got {n_samples!r}")
    if int(seed) != seed or seed < 0:
        raise ParameterError(f"the seed (--seed) must be an integer >= 0, got {seed!r}")
    outputs = [read_system(x) if isinstance(x, (str, Path)) else x for x in (outputs_a, outputs_b)]
    # the systems' id column follows the annotations' (--item), or is the usual "item" where they use that
    ids = [item if item in frame.columns or "item" not in frame.columns else "item" for frame in outputs]
    a = read_outputs(ds, outputs[0], "A", ids[0], label, normalize_labels)
    b = read_outputs(ds, outputs[1], "B", ids[1], label, normalize_labels)
    both, left_out = _paired(ds, a, b)
    used = subset(ds, both)
    chosen_sampler = sampler
    sampler = check_sampler(sampler or default_sampler(used))
    k_given = k is not None
    k = default_k(used) if k is None else k
    if int(k) != k or k < 1:
        raise ParameterError(f"K (--k) must be an integer >= 1, got {k!r}")
    check_workload(int(n_samples), used.n_items, int(k))
    design, clauses = design_notes(ds, used, sampler, int(k), chosen_sampler is None, k_given)
    if interval_rank(int(n_samples)) < 1:
        design.append(f"with {int(n_samples)} replicates no 95 % interval can be formed and no two-sided p can fall "
                      f"below 0.05: the interval is unbounded; give --n-samples {MIN_REPLICATES} or more")
    reading = design_reading(used, sampler, chosen_sampler is None)
    share_a = a.share[np.searchsorted(a.item, both)]
    share_b = b.share[np.searchsorted(b.item, both)]
    rater_test = sampler in RATER_LEVEL and not percentile
    alt, null = replicate_deltas(used, share_a, share_b, sampler, int(k), int(n_samples), int(seed), progress,
                                 columns=rater_test, names=chosen)
    seen = observed(used, share_a, share_b, int(k), chosen)
    parts = rater_parts(used, share_a, share_b, sampler, int(k), delta_matrix) if rater_test else None
    if rater_test:
        fewest = rater_level.fewest_raters(int(n_samples), parts.groups)
    raters = (used.n_raters if sampler == "S4" else int(round(parts.per_group))) if rater_test \
        else default_k(used)
    signature = "|".join([f"sampler:{sampler}", f"K:{k}", f"reps:{n_samples}", f"seed:{seed}",
                          f"test:{'two-sided' if two_sided else 'one-sided'}{'/percentile' if percentile else ''}",
                          f"data:{ds.sha256[:12]}",
                          f"a:{a.sha256[:12]}", f"b:{b.sha256[:12]}", f"engine:{engine()}", f"v:{__version__}"])
    rows = []
    for m, metric in enumerate(chosen):
        # rounded to 12 decimals: a perfect system's MAE is 0, not 1e-17; + 0.0: no -0 in the table
        score_a, score_b, delta = (round(value, 12) + 0.0 for value in seen[metric])
        bound = BY_NAME[metric].bound(ds.n_labels)
        needed = None
        sides = 2 if two_sided else 1
        p, low, high = headline(parts, metric, m, delta, bound, alt, two_sided, int(n_samples))
        if rater_test:
            companion = metric in rater_level.COMPANION
            needed = rater_level.raters_for_even_odds(delta, parts.item[m], parts.rater[m], raters, len(both),
                                                      parts.groups, fewest if companion else 0, bound)
            floor = (min(1.0, sides * rater_level.percentile_p(0, int(n_samples), parts.df, parts.factor))
                     if companion else np.nan)  # a t-test's p has no floor
        else:
            floor = min(1.0, sides / (1 + n_samples))
        rows.append(dict(zip(COLUMNS, (metric, score_a, score_b, delta, low, high, p,
                                       permutation_p(null[:, m], delta, two_sided), len(both), int(k), sampler,
                                       int(n_samples), int(seed), raters, needed, signature, floor))))
    table = pd.DataFrame(rows, columns=list(COLUMNS)).astype({"raters_for_even_odds": "Int64"})
    small = table.dropna(subset=["raters_for_even_odds"])
    if len(small):
        design.append(f"with {raters} raters{' per batch' if sampler == 'S3' else ''}, no number of items gives "
                      "the test even odds of detecting a difference as large as the observed one in "
                      + ", ".join(f"{METRIC_LABELS[r.metric]} (about {r.raters_for_even_odds} raters would)"
                                  for r in small.itertuples())
                      + ": a p above 0.05 there is not evidence that A and B are equally good")
    if rater_test and sampler == "S4" and used.n_raters <= LIBERAL_POOL:
        design.append(f"with a pool of {used.n_raters} raters the test runs a little liberal: on simulated pools of "
                      f"{LIBERAL_POOL} raters it gave p < 0.05 in 7 to 8 % of test sets where A and B were equally "
                      "good (8 % on Accuracy, Precision, Recall and F1), so read a p near 0.05 as about 0.08")
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
        "averaging": averaging, "ties": TIES["compare"],
        "parameters": {"sampler": sampler, "K": int(k), "n_samples": int(n_samples), "seed": int(seed),
                       "two_sided": two_sided, "normalize_labels": normalize_labels, "metrics": list(chosen)}}
    return table
