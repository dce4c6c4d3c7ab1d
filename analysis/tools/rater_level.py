"""The headline test of ``compare`` under S1, S3 and S4: small-sample correct at the rater level.

A percentile bootstrap over R rater columns takes the R raters' spread for the population's: it shrinks the rater
part of the variance by (R − 1)/R and ignores that with few raters that part is estimated on about R − 1 degrees
of freedom. The test here has two parts.

- **Student's t on a two-way jackknife.** The variance of the observed delta is the sum of an item part, from a
  delete-one-item jackknife (:func:`item_jackknife`), and a rater part, from a delete-one-rater jackknife
  (:func:`rater_jackknife`, one rater column of a group left out at a time, every other rating kept):
  V_R = Σ_g (r_g − 1)/r_g · Σ_j (d_gj − d̄_g)², where d_gj is the delta with rater j of group g left out and d̄_g
  their mean, over the groups g (the one pool under S1 and S4, each batch under S3) and their r_g raters. Each part
  also holds the item-by-rater residual, so the sum errs on the large side: little where an item has many ratings
  (crossed and batched designs), by half or more on crowd data, where an item has 3 to 9. Under S4 (any design) a
  deleted rater takes their ratings from every item they rated (:func:`pool_jackknife`), and the residual, measured
  by leaving single ratings out (:func:`rating_jackknife`), is taken off once (:func:`two_way`). Where items share
  rater sets (overlapping sets of a small pool), the sets are the items' clusters: the item part is the larger of
  the one-item part and one that leaves a set's items out together (:func:`set_jackknife`). The reference is
  Student's t on the rater level's degrees of freedom, Σ_g (r_g − 1) (at most the items' clusters less one), the
  fewer clusters' count, as for two-way clustered errors. The test and its interval are taken on
  Fisher's scale, atanh(delta / bound) for a metric whose difference lies between −bound and bound
  (:func:`on_z_scale`): a difference that saturates as the raters' leaning grows (a share of items won, most of
  all) has a small jackknife variance exactly where it is far from 0, and the scale undoes that.
- **The expanded percentile of a rater-column bootstrap**, for the distribution metrics (:data:`COMPANION`). Their
  delta moves with the raters' average leaning along a curve (Wins: nearly a step), so the jackknife's local
  variance is small exactly where the delta is far from 0, and a t-statistic is not pivotal. A replicate
  (:func:`column_replicates`) redraws, per group, the group's items and its rater columns with replacement, the
  same columns for every item of the group (under S4 the pool's raters drawn with replacement and every drawn item
  keeping the ratings of its drawn raters, the pigeonhole bootstrap: :func:`pigeonhole_replicates`); the one-sided percentile p, (1 + #{delta* ≤ 0}) / (1 + B), is
  read as a normal quantile z and tested as z·√((r − 1)/r) against the same Student's t
  (:func:`percentile_p`): the percentile interval widened for the plug-in's shrinkage and the degrees of freedom.
  With fewer than about 6 raters per group no 1000 replicates can give such a p below 0.025 (:func:`fewest_raters`).

For a companion metric a one-sided p is the larger of the two, and the interval the hull of theirs; a two-sided p
is twice the smaller one-sided one. So a two-sided p below 0.05 holds exactly when the interval excludes 0.
:func:`raters_for_even_odds` turns the parts into the advice a small pool needs: how many raters would give the test
even odds of detecting a difference of the observed size.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from scipy import special

from analysis.data.annotations import AnnotationDataset
from analysis.engine.metrics import DISTRIBUTION_METRICS
from analysis.engine.samplers import make_layout

#: Each side's share outside the 95 % interval, exactly: a one-sided p is compared with it, a two-sided p (twice
#: one side's) with 0.05, and the two must agree to the last bit (a float 1 - 0.95 halved is 0.025 + 2e-17).
EXACT_TAIL = Fraction(1, 40)
TAIL = float(EXACT_TAIL)
LEVEL = 1 - 2 * TAIL
MAX_RATERS = 10_000  # the largest pool raters_for_even_odds considers
MAX_ITEM_GROUPS = 200  # the item jackknife leaves out one of at most this many groups of items
MAX_RATER_GROUPS = 200  # ... and the pool's (S4) one of at most this many groups of raters
#: The metrics whose test also needs the expanded percentile of a rater-column bootstrap, the distribution metrics.
COMPANION = DISTRIBUTION_METRICS


def jackknife_variance(values: np.ndarray) -> np.ndarray:
    """The delete-a-group jackknife's variance, per metric, of ``values`` (one row per group left out)."""
    g = len(values)
    return (g - 1) / g * ((values - values.mean(0)) ** 2).sum(0)


def item_jackknife(full: list[np.ndarray], deltas) -> np.ndarray:
    """The item part of the observed delta's variance, per metric: a delete-a-group jackknife over the items (one
    item at a time up to :data:`MAX_ITEM_GROUPS` items; beyond, item ``i`` in group ``i mod`` that many).
    ``full`` holds the gold's, A's and B's counts (items, labels); ``deltas(gold, a, b)`` scores them with leading
    axes."""
    n = len(full[0])
    groups = min(n, MAX_ITEM_GROUPS)
    if groups < 2:
        return np.zeros(np.shape(deltas(*[x[None] for x in full]))[-1])
    left_out = []
    for size in sorted({len(range(g, n, groups)) for g in range(groups)}):
        chosen = [g for g in range(groups) if len(range(g, n, groups)) == size]
        keep = np.array([np.setdiff1d(np.arange(n), np.arange(g, n, groups)) for g in chosen])
        left_out.append(deltas(*(x[keep] for x in full)))
    return jackknife_variance(np.concatenate(left_out))


def rater_sets(ds: AnnotationDataset) -> np.ndarray:
    """Each item's rater set, numbered in the sets' sorted order: items rated by the same raters share a number."""
    order = np.lexsort((ds.rater, ds.item))
    bounds = np.searchsorted(ds.item[order], np.arange(ds.n_items + 1))
    raters = ds.rater[order].astype(np.int64)
    keys = np.empty(ds.n_items, dtype=object)
    keys[:] = [raters[bounds[i]:bounds[i + 1]].tobytes() for i in range(ds.n_items)]
    return np.unique(keys, return_inverse=True)[1].reshape(-1)


def set_jackknife(full: list[np.ndarray], item_set: np.ndarray, deltas) -> np.ndarray | None:
    """The item part of the observed delta's variance with the items of one rater set left out at a time (beyond
    :data:`MAX_ITEM_GROUPS` sets, set ``s`` with the others of group ``s mod`` that many), where items share
    rater sets: at most half as many sets as items (``item_set``: :func:`rater_sets`), as in overlapping sets of a
    small pool (ConvAbuse's shape). The items of a set share their raters' interaction, which
    :func:`item_jackknife` counts as independent. None where the items do not share sets (crowd data from a large
    pool), and there the one-item part is the whole item part. ``full`` and ``deltas``: as for
    :func:`item_jackknife`."""
    n_sets = int(item_set.max()) + 1
    if n_sets < 2 or 2 * n_sets > len(item_set):
        return None
    n_groups = min(n_sets, MAX_ITEM_GROUPS)
    group = item_set % n_groups
    return jackknife_variance(np.stack([deltas(*(x[group != g][None] for x in full))[0] for g in range(n_groups)]))


def groups(ds: AnnotationDataset, sampler: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per group of the sampler (S1: the pool; S3: each batch), its items (indices into ``ds``) and their labels
    by the group's rater columns, an array (items, raters) with -1 where a rater did not rate an item."""
    layout = make_layout(ds, sampler)
    out = []
    for g in range(len(layout.rater_start) - 1):
        items = layout.items[layout.item_start[g]:layout.item_start[g + 1]]
        r = int(layout.rater_start[g + 1] - layout.rater_start[g])
        out.append((items, layout.matrix[layout.matrix_start[g]:layout.matrix_start[g + 1]].reshape(len(items), r)))
    return out


def rater_jackknife(ds: AnnotationDataset, share_a: np.ndarray, share_b: np.ndarray, sampler: str, k: int,
                    deltas) -> list[np.ndarray]:
    """Per group of the sampler (S1: the pool; S3: each batch), the observed deltas with each of its rater columns
    left out in turn, an array (raters of the group, metrics). ``deltas(gold, a, b)`` scores counts of shape
    (leave-outs, items, labels) on the scale of ``k`` responses, as the observed delta is scored. An item's only
    rating is never left out."""
    counts = ds.item_label_counts.astype(float)
    ratings = ds.raters_per_item.astype(float)
    a, b = share_a * k, share_b * k
    out = []
    for items, labels in groups(ds, sampler):
        r = labels.shape[1]
        gold = np.repeat(counts[None], r, axis=0)
        left = np.repeat(ratings[None], r, axis=0)
        for j in range(r):
            rated = (labels[:, j] >= 0) & (ratings[items] > 1)  # an item's only rating stays
            gold[j, items[rated], labels[rated, j]] -= 1
            left[j, items[rated]] -= 1
        gold = gold / np.maximum(left, 1)[..., None] * k
        out.append(deltas(gold, np.broadcast_to(a, gold.shape), np.broadcast_to(b, gold.shape)))
    return out


def pool_jackknife(ds: AnnotationDataset, share_a: np.ndarray, share_b: np.ndarray, k: int, deltas,
                   chunk_cells: int = 4_000_000) -> list[np.ndarray]:
    """:func:`rater_jackknife` with the whole pool as one group, on any design (S4): the observed deltas with each
    rater left out in turn, their ratings taken from every item they rated (an item's only rating stays), an array
    (leave-outs, metrics) in a list of one. Beyond :data:`MAX_RATER_GROUPS` raters, rater ``r`` is left out with
    the others of group ``r mod`` that many (a delete-a-group jackknife, as the items' part). Leave-outs are scored
    a chunk at a time (at most ``chunk_cells`` counts)."""
    n_groups = min(ds.n_raters, MAX_RATER_GROUPS)
    return [_left_out(ds, share_a, share_b, k, deltas, ds.rater % n_groups, n_groups, chunk_cells)]


def rating_jackknife(ds: AnnotationDataset, share_a: np.ndarray, share_b: np.ndarray, k: int, deltas,
                     chunk_cells: int = 4_000_000) -> list[np.ndarray]:
    """:func:`pool_jackknife` with single ratings in place of raters: the observed deltas with each rating left out
    in turn (beyond :data:`MAX_RATER_GROUPS` ratings, rating ``j`` in the file's order with the others of group
    ``j mod`` that many, so that a group holds at most one rating of an item of fewer ratings than groups). Its
    variance is what the ratings would give if every one were independent, the part of the item-by-rater residual
    that the item part and the pool's rater part each hold (:func:`two_way`)."""
    n_groups = min(ds.n_ratings, MAX_RATER_GROUPS)
    return [_left_out(ds, share_a, share_b, k, deltas, np.arange(ds.n_ratings) % n_groups, n_groups, chunk_cells)]


def _left_out(ds: AnnotationDataset, share_a: np.ndarray, share_b: np.ndarray, k: int, deltas, group: np.ndarray,
              n_groups: int, chunk_cells: int) -> np.ndarray:
    """The observed deltas with the ratings of each of ``n_groups`` groups left out in turn (``group[j]``: rating
    ``j``'s), an item's only rating kept, an array (groups, metrics)."""
    counts = ds.item_label_counts.astype(float)
    ratings = ds.raters_per_item.astype(float)
    a, b = share_a * k, share_b * k
    keep = ratings[ds.item] > 1  # an item's only rating is never left out
    group, item, label = group[keep], ds.item[keep], ds.label[keep]
    order = np.argsort(group, kind="stable")
    group, item, label = group[order], item[order], label[order]
    bounds = np.searchsorted(group, np.arange(n_groups + 1))
    size = max(1, chunk_cells // counts.size)
    out = []
    for first in range(0, n_groups, size):
        last = min(first + size, n_groups)
        lo, hi = bounds[first], bounds[last]
        gold = np.repeat(counts[None], last - first, axis=0)
        left = np.repeat(ratings[None], last - first, axis=0)
        np.subtract.at(gold, (group[lo:hi] - first, item[lo:hi], label[lo:hi]), 1)
        np.subtract.at(left, (group[lo:hi] - first, item[lo:hi]), 1)
        emptied = left == 0  # a group that holds all of an item's raters leaves the item as it was
        gold[emptied], left[emptied] = counts[np.nonzero(emptied)[1]], ratings[np.nonzero(emptied)[1]]
        gold = gold / left[..., None] * k
        out.append(deltas(gold, np.broadcast_to(a, gold.shape), np.broadcast_to(b, gold.shape)))
    return np.concatenate(out)


def two_way(item: np.ndarray, rater: np.ndarray, residual: np.ndarray) -> np.ndarray:
    """The observed delta's variance on any design (S4), per metric: the item part and the pool's rater part each
    hold the item-by-rater residual, so the residual (:func:`rating_jackknife`'s part) is taken off once, as
    two-way clustered errors take off the intersection's, but never more than either part, so that the sum is at
    least the larger part."""
    return item + rater - np.minimum(residual, np.minimum(item, rater))


def rater_part(jackknife: list[np.ndarray]) -> tuple[np.ndarray, int, float]:
    """(rater part of the variance per metric, its degrees of freedom, raters per group) from
    :func:`rater_jackknife`."""
    part = sum(jackknife_variance(x) for x in jackknife)
    return part, sum(len(x) - 1 for x in jackknife), float(np.mean([len(x) for x in jackknife]))


def degrees(item_clusters: int, df_raters: int) -> int:
    """The t reference's degrees of freedom: the rater level's, at most the items' clusters' count less one (the
    N items, or the rater sets that items share: :func:`set_jackknife`), at least 1."""
    return max(1, min(int(df_raters), item_clusters - 1))


def column_replicates(ds: AnnotationDataset, share_a: np.ndarray, share_b: np.ndarray, sampler: str, k: int,
                      n_samples: int, rng: np.random.Generator, deltas, chunk: int = 100,
                      progress: bool = False) -> np.ndarray:
    """``n_samples`` deltas (replicates, metrics) of the rater-column bootstrap: per group, its items and its rater
    columns drawn with replacement, the same columns for every drawn item of the group; a drawn item's gold counts
    the labels its drawn columns hold (scaled to ``k`` responses), or, where none of them rated it, its own
    ratings' shares. ``share_a[i]`` is A's label distribution on item ``i`` of ``ds``. ``progress``: a bar on
    standard error for runs of several seconds."""
    shares = ds.item_label_counts / ds.raters_per_item[:, None]
    a, b = share_a * k, share_b * k
    laid_out = [(items, labels.shape[1], (labels[..., None] == np.arange(ds.n_labels)).astype(np.int32))
                for items, labels in groups(ds, sampler)]  # a missing cell's one-hot row is all zeros
    out = []
    for start in _chunks(n_samples, chunk, f"compare {sampler} rater columns", progress):
        reps = min(chunk, n_samples - start)
        gold, drawn = [], []
        for items, r, onehot in laid_out:
            local = rng.integers(len(items), size=(reps, len(items)))
            columns = rng.integers(r, size=(reps, r))
            counts = onehot[local[..., None], columns[:, None, :]].sum(2)  # (reps, items, labels)
            total = counts.sum(-1, keepdims=True)
            gold.append(np.where(total > 0, counts * (k / np.maximum(total, 1)), shares[items[local]] * k))
            drawn.append(items[local])
        gold, drawn = np.concatenate(gold, 1), np.concatenate(drawn, 1)
        out.append(deltas(gold, a[drawn], b[drawn]))
    return np.concatenate(out)


def pigeonhole_replicates(ds: AnnotationDataset, share_a: np.ndarray, share_b: np.ndarray, k: int, n_samples: int,
                          rng: np.random.Generator, deltas, chunk_cells: int = 4_000_000,
                          progress: bool = False) -> np.ndarray:
    """:func:`column_replicates` on any design (S4): per replicate the items and the pool's raters drawn with
    replacement, independently; a drawn item's gold counts the ratings of its drawn raters, each as often as the
    rater was drawn (scaled to ``k`` responses), or, where none of its raters was drawn, its own ratings' shares.
    On a fully crossed table this is :func:`column_replicates`' law."""
    from scipy import sparse

    shares = ds.item_label_counts / ds.raters_per_item[:, None]
    a, b = share_a * k, share_b * k
    by_rater = sparse.csr_matrix((np.ones(ds.n_ratings), (ds.rater, ds.item * ds.n_labels + ds.label)),
                                 shape=(ds.n_raters, ds.n_items * ds.n_labels))
    chunk = max(1, chunk_cells // (ds.n_items * ds.n_labels))
    out = []
    for start in _chunks(n_samples, chunk, "compare S4 raters", progress):
        reps = min(chunk, n_samples - start)
        local = rng.integers(ds.n_items, size=(reps, ds.n_items))
        weights = np.stack([np.bincount(rng.integers(ds.n_raters, size=ds.n_raters), minlength=ds.n_raters)
                            for _ in range(reps)]).astype(float)
        counts = np.asarray(by_rater.T.dot(weights.T).T).reshape(reps, ds.n_items, ds.n_labels)
        counts = np.take_along_axis(counts, local[..., None], axis=1)
        total = counts.sum(-1, keepdims=True)
        gold = np.where(total > 0, counts * (k / np.maximum(total, 1)), shares[local] * k)
        out.append(deltas(gold, a[local], b[local]))
    return np.concatenate(out)


def _chunks(n_samples: int, chunk: int, desc: str, progress: bool):
    """The first replicate of each chunk, with a bar of replicates done on standard error where ``progress``."""
    import sys

    from tqdm import tqdm

    with tqdm(total=n_samples, desc=desc, unit="replicate", file=sys.stderr, leave=False, delay=2,
              disable=not progress) as bar:
        for start in range(0, n_samples, chunk):
            yield start
            bar.update(min(chunk, n_samples - start))


def expansion(per_group: float) -> float:
    """The factor ``sqrt((r - 1) / r)`` that undoes the plug-in's shrinkage of the rater part, ``r`` raters per
    group."""
    return math.sqrt(max(per_group - 1, 0) / per_group)


def student_sf(t: float, df: float) -> float:
    """``P(T > t)`` for Student's t on ``df`` degrees of freedom. scipy.special's function, which scipy.stats'
    ``t.sf`` and ``t.cdf`` call (the same numbers, tested), without their per-call checks: 2 µs a call, not 65."""
    return float(special.stdtr(df, -t))


def student_quantile(df: float) -> float:
    """Student's t quantile at ``1 - TAIL`` on ``df`` degrees of freedom (scipy.special's, as :func:`student_sf`)."""
    return float(special.stdtrit(df, 1 - TAIL))


def percentile_p(count: int, n_samples: int, df: float, factor: float) -> float:
    """One-sided p of the expanded percentile: ``count`` replicates on the null's side of 0 among ``n_samples``
    give the percentile p ``(1 + count) / (1 + B)``, read as a normal quantile, multiplied by ``factor``
    (:func:`expansion`) and referred to Student's t on ``df`` degrees of freedom. With one rater per group the
    factor is 0 and the p is 1/2, every replicate on the null's side included (an infinite quantile times 0)."""
    z = -special.ndtri((1 + count) / (1 + n_samples))  # the normal quantile (:func:`student_sf`)
    return student_sf(z * factor if factor else 0.0, df)


def smallest_p(per_group: int, groups: int, n_items: int, n_samples: int) -> float:
    """The smallest one-sided p a companion metric's test can give (every replicate on the far side of 0) on a
    study of ``groups`` groups of ``per_group`` raters and ``n_items`` items, with ``n_samples`` replicates: with
    too few raters it lies above any usual alpha, and no difference, however large, is significant."""
    return percentile_p(0, n_samples, degrees(n_items, groups * (per_group - 1)), expansion(per_group))


def _end(values: np.ndarray, df: float, factor: float, lower: bool) -> float:
    """The expanded percentile interval's ``lower`` (else upper) end, ``values`` the centred replicates sorted from
    that end: the value of rank ``c + 1`` for the largest count ``c`` that still gives a one-sided p
    below the tail, so that the end is beyond 0 exactly when the count of replicates at or beyond 0 is at most
    ``c``. Where no count does (too few raters or replicates), the most extreme replicate, or 0 where that one
    lies on the other side of 0."""
    n = len(values)
    low, high = -1, n  # percentile_p(low) < TAIL (or low = -1), percentile_p(high) >= TAIL (or high = n)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if percentile_p(middle, n, df, factor) < TAIL else (low, middle)
    if low >= 0:
        return float(values[low])
    return min(float(values[0]), 0.0) if lower else max(float(values[0]), 0.0)


def fewest_raters(n_samples: int, groups: int = 1) -> int:
    """The fewest raters per group with which :func:`percentile_p` can fall below the tail at all, with
    ``n_samples`` replicates (one replicate at most on the null's side): 6 with 1000 replicates and one group. 0
    where no pool would do, with fewer than 40 replicates: then the replicates, not the raters, limit the test."""
    if 1 / (1 + n_samples) >= TAIL:  # even unlimited raters (factor 1, a normal reference) could not reject
        return 0

    def enough(r: int) -> bool:  # more raters widen less and add degrees of freedom: monotone
        return percentile_p(0, n_samples, groups * (r - 1), expansion(r)) < TAIL

    low, high = 1, MAX_RATERS
    if not enough(high):
        return 0
    while high - low > 1:  # enough(high) holds, enough(low) does not
        middle = (low + high) // 2
        low, high = (low, middle) if enough(middle) else (middle, high)
    return high


def on_z_scale(delta: float, variance: float, bound: float) -> tuple[float, float]:
    """``delta`` and its variance on the scale the t-test uses: Fisher's ``atanh(delta / bound) * bound`` for a
    metric whose difference lies in ``[-bound, bound]`` (its variance by the delta method), which straightens the
    way a difference saturates as the raters' leaning grows (Wins the most); the difference itself for an unbounded
    one (KL)."""
    if not math.isfinite(bound):
        return delta, variance
    share = delta / bound
    return math.atanh(share) * bound, variance / (1 - share * share) ** 2


def t_test(delta: float, variance: float, df: float, bound: float = math.inf,
           smallest: float = 0.0) -> tuple[float, float, float, float]:
    """(one-sided p for A better, one-sided p for B better, interval low, interval high): Student's t of ``delta``
    with ``variance`` on ``df`` degrees of freedom, on :func:`on_z_scale`'s scale, the interval mapped back. A zero
    variance, or a difference at the end of the metric's range, gives p ``smallest`` against delta's side and 1
    toward it (1/2 each at delta 0), and the point interval; or, where ``smallest`` is not below the tail (too few
    replicates for any p below 0.05), the unbounded one."""
    if not variance > 0 or abs(delta) >= bound:
        up, down = (0.5, 0.5) if delta == 0 else (smallest, 1.0) if delta > 0 else (1.0, smallest)
        return (up, down, delta + 0.0, delta + 0.0) if smallest < TAIL else (up, down, -math.inf, math.inf)
    z, z_variance = on_z_scale(delta, variance, bound)
    se = math.sqrt(z_variance)
    half = student_quantile(df) * se

    def back(value: float) -> float:
        return value if not math.isfinite(bound) else math.tanh(value / bound) * bound

    return student_sf(z / se, df), student_sf(-z / se, df), back(z - half), back(z + half)


def test(delta: float, variance: float, df: float, two_sided: bool, bound: float = math.inf, smallest: float = 0.0,
         replicates: np.ndarray | None = None, factor: float = 1.0) -> tuple[float, float, float]:
    """(p, interval low, interval high) of one metric: :func:`t_test`, and where ``replicates`` (of
    :func:`column_replicates`) are given, the expanded percentile too (module docstring). The interval is cut to the
    metric's range ``[-bound, bound]``."""
    up, down, low, high = t_test(delta, variance, df, bound, smallest)
    if replicates is not None:
        values = np.sort(np.clip(delta + (replicates - replicates.mean()), -bound, bound))
        n = len(values)
        at_or_below = int(np.searchsorted(values, 0.0, side="right"))
        at_or_above = n - int(np.searchsorted(values, 0.0, side="left"))
        up = max(up, percentile_p(at_or_below, n, df, factor))
        down = max(down, percentile_p(at_or_above, n, df, factor))
        low = min(low, _end(values, df, factor, True))
        high = max(high, _end(values[::-1], df, factor, False))
    p = min(1.0, 2 * min(up, down)) if two_sided else up
    return min(1.0, float(p)), max(-bound, low) + 0.0, min(bound, high) + 0.0


def even_odds(delta: float, variance: float, df: float, bound: float = math.inf) -> bool:
    """Whether a two-sided t-test at level 0.05 (on :func:`on_z_scale`'s scale) has at least even odds of detecting
    a true difference ``delta`` with this variance and degrees of freedom (its power is about 1/2 where the
    difference is the critical value)."""
    if not variance > 0 or abs(delta) >= bound:
        return variance >= 0 and delta != 0
    z, z_variance = on_z_scale(delta, variance, bound)
    return abs(z) >= student_quantile(df) * math.sqrt(z_variance)


def raters_for_even_odds(delta: float, item: float, rater: float, raters: int, n_items: int, groups: int = 1,
                         at_least: int = 0, bound: float = math.inf) -> int | None:
    """Where no number of items gives the test even odds for a difference of ``delta`` with this many raters (the
    rater part alone is too large, or fewer raters than ``at_least``, the fewest with which the test can reject at
    all), the smallest number of raters per group that would, at the same items (the rater part shrinks as
    1 / raters); ``None`` where the pool is not what limits the test, or no pool up to :data:`MAX_RATERS` would
    do."""
    if delta == 0 or not rater > 0 or (raters >= at_least and even_odds(delta, rater, groups * (raters - 1), bound)):
        return None

    def enough(more: int) -> bool:  # more raters shrink the variance and add degrees of freedom: monotone
        return more >= at_least and even_odds(delta, item + rater * raters / more,
                                              degrees(n_items, groups * (more - 1)), bound)

    low, high = raters, MAX_RATERS
    if not enough(high):
        return None
    while high - low > 1:  # enough(high) holds, enough(low) does not
        middle = (low + high) // 2
        low, high = (low, middle) if enough(middle) else (middle, high)
    return high
