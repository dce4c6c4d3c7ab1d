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

from fractions import Fraction

import numpy as np

from analysis.metrics import QUOTIENT_METRICS

# Far above the rounding error of a float precision or F1 delta (a few ulps of 1), far below any gap that matters.
TOLERANCE = 1e-12


def exact_score(confusion: np.ndarray, metric: str) -> Fraction:
    """Weighted precision or F1 of one (truth x prediction) confusion matrix, as an exact fraction."""
    support = confusion.sum(1)
    predicted = confusion.sum(0)
    hits = np.diag(confusion)
    total = Fraction(0)
    for s, p, h in zip(support.tolist(), predicted.tolist(), hits.tolist()):
        if metric == "precision" and p > 0:
            total += Fraction(s * h, p)
        elif metric == "f1" and s + p > 0:
            total += Fraction(2 * s * h, s + p)
    return total / int(confusion.sum())


def exact_delta(pair: np.ndarray, metric: str) -> float:
    """The delta of a replicate's (A, B) confusion matrices ``pair`` (2 x labels x labels), exact, rounded once."""
    return float(exact_score(pair[0], metric) - exact_score(pair[1], metric))


def exact_deltas(confusion: np.ndarray, metric: str) -> np.ndarray:
    """:func:`exact_delta` of every replicate of ``confusion`` (replicates x 2 x labels x labels), each distinct
    matrix pair computed once."""
    flat = confusion.reshape(len(confusion), -1)
    unique, inverse = np.unique(flat, axis=0, return_inverse=True)
    shape = confusion.shape[1:]
    values = np.array([exact_delta(row.reshape(shape), metric) for row in unique])
    return values[inverse.reshape(-1)] if len(values) else np.zeros(0)


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
