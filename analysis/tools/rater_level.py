"""The headline test of ``compare`` under S1 and S3: small-sample correct at the rater level.

A percentile bootstrap over R rater columns takes the R raters' spread for the population's: it shrinks the rater
part of the variance by (R - 1) / R and ignores that with few raters that part is estimated on about R - 1 degrees
of freedom. Here the variance of the observed delta has two parts:

- the rater part, from a delete-one-rater jackknife of the observed delta (one rater column of a group left out at
  a time, every other rating kept: :func:`rater_jackknife`), ``V_R = sum_g (r_g - 1) / r_g sum_j (d_gj - mean_g)^2``
  over the groups g (the one pool under S1, each batch under S3) and their r_g raters;
- the item part, what the sampler's bootstrap variance ``V_B`` holds beyond its shrunken rater part:
  ``V_I = max(0, V_B - V_R (r - 1) / r)``, ``r`` the raters per group.

The test is Student's t on ``delta / sqrt(V_I + V_R)`` with Satterthwaite's degrees of freedom
``(V_I + V_R)^2 / (V_I^2 / (N - 1) + V_R^2 / sum_g (r_g - 1))``, and the 95 % interval is
``delta -+ t_0.975 sqrt(V)``, cut to the metric's range: a two-sided p below 0.05 exactly when it excludes 0.
:func:`raters_for_even_odds` turns the same parts into the advice a small pool needs: how many raters would give
the test even odds of detecting a difference of the observed size.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from analysis.data.annotations import AnnotationDataset
from analysis.engine.samplers import make_layout

LEVEL = 0.95
MAX_RATERS = 10_000  # the largest pool raters_for_even_odds considers


def rater_jackknife(ds: AnnotationDataset, share_a: np.ndarray, share_b: np.ndarray, sampler: str, k: int,
                    deltas) -> list[np.ndarray]:
    """Per group of the sampler (S1: the pool; S3: each batch), the observed deltas with each of its rater columns
    left out in turn, an array (raters of the group, metrics). ``deltas(gold, a, b)`` scores counts of shape
    (leave-outs, items, labels) on the scale of ``k`` responses, as the observed delta is scored. An item's only
    rating is never left out."""
    layout = make_layout(ds, sampler)
    counts = ds.item_label_counts.astype(float)
    ratings = ds.raters_per_item.astype(float)
    a, b = share_a * k, share_b * k
    out = []
    for g in range(len(layout.rater_start) - 1):
        items = layout.items[layout.item_start[g]:layout.item_start[g + 1]]
        r = int(layout.rater_start[g + 1] - layout.rater_start[g])
        labels = layout.matrix[layout.matrix_start[g]:layout.matrix_start[g + 1]].reshape(len(items), r)
        gold = np.repeat(counts[None], r, axis=0)
        left = np.repeat(ratings[None], r, axis=0)
        for j in range(r):
            rated = (labels[:, j] >= 0) & (ratings[items] > 1)  # an item's only rating stays
            gold[j, items[rated], labels[rated, j]] -= 1
            left[j, items[rated]] -= 1
        gold = gold / np.maximum(left, 1)[..., None] * k
        out.append(deltas(gold, np.broadcast_to(a, gold.shape), np.broadcast_to(b, gold.shape)))
    return out


def parts(bootstrap: np.ndarray, jackknife: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, int, float]:
    """(item part, rater part, the rater part's degrees of freedom, raters per group) of the observed delta's
    variance, per metric, from the sampler's bootstrap deltas (replicates, metrics) and :func:`rater_jackknife`."""
    rater = sum((len(x) - 1) / len(x) * ((x - x.mean(0)) ** 2).sum(0) for x in jackknife)
    df_raters = sum(len(x) - 1 for x in jackknife)
    per_group = float(np.mean([len(x) for x in jackknife]))
    shrunk = rater * (per_group - 1) / per_group
    item = np.maximum(bootstrap.var(0, ddof=1) - shrunk, 0.0) if len(bootstrap) > 1 else np.zeros_like(rater)
    return item, rater, df_raters, per_group


def degrees(item, rater, n_items: int, df_raters: int):
    """Satterthwaite's degrees of freedom of ``item + rater`` (each with its own)."""
    total = item + rater
    with np.errstate(divide="ignore", invalid="ignore"):
        df = total ** 2 / (item ** 2 / max(n_items - 1, 1) + rater ** 2 / max(df_raters, 1))
    return np.where(np.isfinite(df) & (df > 0), df, max(df_raters, 1))


def t_test(delta: float, variance: float, df: float, two_sided: bool, bound: float = math.inf,
           smallest: float = 0.0) -> tuple[float, float, float]:
    """(p, interval low, interval high): Student's t of ``delta`` with ``variance`` on ``df`` degrees of freedom.
    The interval is cut to ``[-bound, bound]``; a zero variance gives the point interval and p 1 at delta 0, else
    ``smallest``."""
    if not variance > 0:
        return (1.0 if delta == 0 else smallest), delta + 0.0, delta + 0.0
    se = math.sqrt(variance)
    t = delta / se
    p = 2 * stats.t.sf(abs(t), df) if two_sided else stats.t.sf(t, df)
    half = stats.t.ppf(0.5 + LEVEL / 2, df) * se
    return min(1.0, float(p)), max(-bound, delta - half) + 0.0, min(bound, delta + half) + 0.0


def even_odds(delta: float, variance: float, df: float) -> bool:
    """Whether a two-sided t-test at level 0.05 has at least even odds of detecting a true difference ``delta``
    with this variance and degrees of freedom (its power is about 1/2 where ``|delta|`` is the critical value)."""
    return variance > 0 and abs(delta) >= stats.t.ppf(0.5 + LEVEL / 2, df) * math.sqrt(variance)


def raters_for_even_odds(delta: float, item: float, rater: float, raters: int, n_items: int,
                         groups: int = 1) -> int | None:
    """Where no number of items gives the test even odds for a difference of ``delta`` with this many raters (the
    rater part alone is too large), the smallest number of raters per group that would, at the same items (the
    rater part shrinks as 1 / raters); ``None`` where the pool is not what limits the test, or no pool up to
    :data:`MAX_RATERS` would do."""
    if delta == 0 or not rater > 0 or even_odds(delta, rater, groups * (raters - 1)):
        return None

    def enough(more: int) -> bool:  # more raters shrink the variance and add degrees of freedom: monotone
        part = rater * raters / more
        return even_odds(delta, item + part, float(degrees(item, part, n_items, groups * (more - 1))))

    low, high = raters, MAX_RATERS
    if not enough(high):
        return None
    while high - low > 1:  # enough(high) holds, enough(low) does not
        middle = (low + high) // 2
        low, high = (low, middle) if enough(middle) else (middle, high)
    return high
