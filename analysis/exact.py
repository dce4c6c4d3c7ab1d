"""Exact ties for precision and F1 (METHOD section 4): their deltas are settled on exact fractions.

Every other delta is an integer difference over one denominator per cell (:func:`analysis.metrics.finish_deltas`),
so equal exact values are already equal floats. Weighted precision and F1 are sums of per-class quotients
(``sum_c s_c TP_c / P_c``), whose floating-point value depends on how the quotients round: two replicates with
different confusion matrices and equal exact scores can come out one ulp apart, and a ``>=`` would then decide
their tie at random. Here every delta that lies within ``TOLERANCE`` of another one (of the same cell, null and
alternative together) is replaced by its exact value, rounded once: equal exact values become equal floats, and
close ones take the order of their exact values. Deltas farther apart than that already compare as exactly.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numba
import numpy as np

from analysis.metrics import QUOTIENT_METRICS

# Far above the rounding error of a float precision or F1 delta (a few ulps of 1), far below any gap that matters.
TOLERANCE = 1e-12


def score_fraction(confusion: list, metric: str) -> tuple[int, int]:
    """Weighted precision or F1 of one (truth x prediction) confusion matrix (nested lists of counts) as an exact
    numerator and denominator: ``sum_c s_c TP_c / P_c`` (precision) or ``sum_c 2 s_c TP_c / (s_c + P_c)`` (F1),
    over the number of items, on the least common denominator of its terms."""
    support = [sum(row) for row in confusion]
    predicted = [sum(column) for column in zip(*confusion)]
    terms = []
    for c, (s, p) in enumerate(zip(support, predicted)):
        if metric == "precision" and p > 0:
            terms.append((s * confusion[c][c], p))
        elif metric == "f1" and s + p > 0:
            terms.append((2 * s * confusion[c][c], s + p))
    common = math.lcm(*(d for _, d in terms)) if terms else 1
    return sum(n * (common // d) for n, d in terms), common * sum(support)


def exact_score(confusion: np.ndarray, metric: str) -> Fraction:
    """:func:`score_fraction` as a fraction."""
    return Fraction(*score_fraction(np.asarray(confusion).tolist(), metric))


def exact_delta(pair, metric: str) -> float:
    """The delta of a replicate's (A, B) confusion matrices ``pair`` (2 x labels x labels), exact, rounded once
    (Python's integer division rounds the exact quotient correctly)."""
    a, b = np.asarray(pair).tolist()
    (num_a, den_a), (num_b, den_b) = score_fraction(a, metric), score_fraction(b, metric)
    return (num_a * den_b - num_b * den_a) / (den_a * den_b)


WIDE = 2**31  # the largest numerator or denominator the compiled path multiplies (products stay below 2**62)
EXACT = 2**53  # ... and the largest whose float is exact, so that one division rounds the exact quotient


@numba.njit(cache=True)
def _fraction(confusion, f1):
    """:func:`score_fraction` in int64 for the compiled path: (numerator, denominator, whether it fit in WIDE)."""
    n_labels = confusion.shape[0]
    num, den, n_items = 0, 1, 0
    for c in range(n_labels):
        support, predicted = 0, 0
        for d in range(n_labels):
            support += confusion[c, d]
            predicted += confusion[d, c]
        n_items += support
        top = 2 * support * confusion[c, c] if f1 else support * confusion[c, c]
        bottom = support + predicted if f1 else predicted
        if bottom == 0:
            continue
        common = den // math.gcd(den, bottom) * bottom
        if common >= WIDE or num >= WIDE or top >= WIDE:
            return 0, 1, False
        num = num * (common // den) + top * (common // bottom)
        den = common
    den *= n_items
    g = math.gcd(num, den)
    num, den = num // g, den // g
    return num, den, num < WIDE and den < WIDE


@numba.njit(cache=True)
def _compiled_deltas(pairs, f1, out, done):
    """:func:`exact_delta` of every pair where the integers stay small enough; ``done`` marks those."""
    for r in range(pairs.shape[0]):
        num_a, den_a, fits_a = _fraction(pairs[r, 0], f1)
        num_b, den_b, fits_b = _fraction(pairs[r, 1], f1)
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
    _compiled_deltas(pairs, metric == "f1", values, done)
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


def settle_cell(alt: np.ndarray, null: np.ndarray, alt_confusion: np.ndarray, null_confusion: np.ndarray,
                metrics: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(alternative, null) deltas (replicates x metrics, ``metrics`` order) with the ties of precision and F1
    settled together, across both sets, so that the p-value compares them exactly."""
    alt, null = alt.copy(), null.copy()
    confusion = np.concatenate([alt_confusion, null_confusion])
    for metric in QUOTIENT_METRICS:
        m = metrics.index(metric)
        both = settle(np.concatenate([alt[:, m], null[:, m]]), confusion, metric)
        alt[:, m], null[:, m] = both[:len(alt)], both[len(alt):]
    return alt, null
