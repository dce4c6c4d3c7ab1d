"""Exact ties for metrics that are sums of per-class quotients (the methods page): their deltas are settled on
exact fractions.

Every other delta is an integer difference over one denominator per cell (:mod:`analysis.engine.metrics`), so equal exact
values are already equal floats. Weighted precision and F1 (``sum_c s_c TP_c / P_c``) and the macro averages
(``mean_c TP_c / P_c``) are sums of quotients, whose floating-point value depends on how the quotients round: two replicates with
different confusion matrices and equal exact scores can come out one ulp apart, and a ``>=`` would then decide
their tie at random. Here every delta that lies within ``TOLERANCE`` of another one (of the same cell, null and
alternative together) is replaced by its exact value, rounded once: equal exact values become equal floats, and
close ones take the order of their exact values. Deltas farther apart than that already compare as exactly.
"""

from __future__ import annotations

import math

import numba
import numpy as np

# Far above the rounding error of a float precision or F1 delta (a few ulps of 1), far below any gap that matters.
TOLERANCE = 1e-12


def _terms(confusion: list, metric: str) -> tuple[list[tuple[int, int]], int]:
    """A score of one confusion matrix as ``sum(numerator / denominator over terms) / divisor``."""
    support = [sum(row) for row in confusion]
    predicted = [sum(column) for column in zip(*confusion)]
    hits = [confusion[c][c] for c in range(len(confusion))]
    rows = list(zip(support, predicted, hits))
    if metric == "precision":
        return [(s * h, p) for s, p, h in rows if p > 0], sum(support)
    if metric == "f1":
        return [(2 * s * h, s + p) for s, p, h in rows if s + p > 0], sum(support)
    used = sum(1 for s, p, _ in rows if s + p > 0)  # the labels the truth or the prediction uses
    if metric.endswith("_macro_all"):  # over all labels: the same terms, divided by their number
        return _terms(confusion, metric[:-4])[0], len(confusion)
    if metric == "precision_macro":
        return [(h, p) for s, p, h in rows if p > 0], used
    if metric == "recall_macro":
        return [(h, s) for s, p, h in rows if s > 0], used
    if metric == "f1_macro":
        return [(2 * h, s + p) for s, p, h in rows if s + p > 0], used
    raise ValueError(f"{metric!r} is not a sum of quotients")


def score_fraction(confusion: list, metric: str) -> tuple[int, int]:
    """A quotient metric of one (truth x prediction) confusion matrix (nested lists of counts) as an exact
    numerator and denominator: weighted precision ``sum_c s_c TP_c / P_c`` or F1 ``sum_c 2 s_c TP_c / (s_c + P_c)``
    over the number of items, or the macro precision, recall or F1 over the number of labels used, on the least
    common denominator of its terms."""
    terms, divisor = _terms(confusion, metric)
    common = math.lcm(*(d for _, d in terms)) if terms else 1
    return sum(n * (common // d) for n, d in terms), common * divisor


def exact_delta(pair, metric: str) -> float:
    """The delta of a replicate's (A, B) confusion matrices ``pair`` (2 x labels x labels), exact, rounded once
    (Python's integer division rounds the exact quotient correctly)."""
    a, b = np.asarray(pair).tolist()
    (num_a, den_a), (num_b, den_b) = score_fraction(a, metric), score_fraction(b, metric)
    return (num_a * den_b - num_b * den_a) / (den_a * den_b)


WIDE = 2**31  # the largest numerator or denominator the compiled path multiplies (products stay below 2**62)
EXACT = 2**53  # ... and the largest whose float is exact, so that one division rounds the exact quotient


# The quotient metrics, numbered for the compiled path: (numerator, denominator) of each label's term, and whether
# the sum is over the items (weighted) or over the labels used (macro), as in :func:`_terms`.
KINDS = ("precision", "f1", "precision_macro", "recall_macro", "f1_macro", "precision_macro_all",
         "recall_macro_all", "f1_macro_all")


@numba.njit(cache=True)
def _fraction(confusion, kind):
    """:func:`score_fraction` of metric ``KINDS[kind]`` in int64: (numerator, denominator, whether it fit in
    WIDE)."""
    n_labels = confusion.shape[0]
    num, den, n_items, used = 0, 1, 0, 0
    for c in range(n_labels):
        support, predicted = 0, 0
        for d in range(n_labels):
            support += confusion[c, d]
            predicted += confusion[d, c]
        n_items += support
        used += support + predicted > 0
        hits = confusion[c, c]
        if kind == 0:
            top, bottom = support * hits, predicted
        elif kind == 1:
            top, bottom = 2 * support * hits, support + predicted
        elif kind == 2 or kind == 5:
            top, bottom = hits, predicted
        elif kind == 3 or kind == 6:
            top, bottom = hits, support
        else:
            top, bottom = 2 * hits, support + predicted
        if bottom == 0:
            continue
        common = den // math.gcd(den, bottom) * bottom
        if common >= WIDE or num >= WIDE or top >= WIDE:
            return 0, 1, False
        num = num * (common // den) + top * (common // bottom)
        den = common
    den *= n_items if kind < 2 else used if kind < 5 else n_labels
    g = math.gcd(num, den)
    num, den = num // g, den // g
    return num, den, num < WIDE and den < WIDE


@numba.njit(cache=True)
def _compiled_deltas(pairs, kind, out, done):
    """:func:`exact_delta` of every pair where the integers stay small enough; ``done`` marks those."""
    for r in range(pairs.shape[0]):
        num_a, den_a, fits_a = _fraction(pairs[r, 0], kind)
        num_b, den_b, fits_b = _fraction(pairs[r, 1], kind)
        done[r] = False
        if fits_a and fits_b:
            num = num_a * den_b - num_b * den_a
            den = den_a * den_b
            g = math.gcd(abs(num), den)
            num, den = num // g, den // g
            if abs(num) < EXACT and den < EXACT:  # both exact as floats: the division rounds the exact value
                out[r] = num / den
                done[r] = True


def exact_deltas(confusion: np.ndarray, metric: str) -> np.ndarray:
    """:func:`exact_delta` of every replicate of ``confusion`` (replicates x 2 x labels x labels): in compiled
    integer arithmetic where it fits, with Python's integers elsewhere (each distinct pair once)."""
    pairs = np.ascontiguousarray(confusion, dtype=np.int64)
    values = np.empty(len(pairs))
    done = np.zeros(len(pairs), dtype=np.bool_)
    _compiled_deltas(pairs, KINDS.index(metric), values, done)
    known: dict[bytes, float] = {}
    for r in np.flatnonzero(~done):
        key = pairs[r].tobytes()
        if key not in known:
            known[key] = exact_delta(pairs[r], metric)
        values[r] = known[key]
    return values


def settle(values: np.ndarray, confusion: np.ndarray, metric: str) -> np.ndarray:
    """``values`` with every delta that lies within ``TOLERANCE`` of another replaced by its exact value."""
    values = np.array(values, dtype=float)
    order = np.argsort(values, kind="stable")
    close = np.diff(values[order]) <= TOLERANCE
    near = np.zeros(len(values), dtype=bool)
    near[:-1] |= close
    near[1:] |= close
    chosen = order[near]
    if chosen.size:
        values[chosen] = exact_deltas(confusion[chosen], metric)
    return values
