"""The pairwise bootstrap p-value and the effect size (the methods page).

``p = #{(i, j): null_i >= alt_j} / (n_null * n_alt)``: the share of (null, alternative) pairs in which the null
delta is at least the alternative delta, ties counting toward the null. One-sided, "A is better", because A is
better by construction. Computed by sorting the null once and searching every alternative value in it:
``O(n log n)`` time and ``O(n)`` memory. The same search gives each alternative replicate's own p-value ``p_j``;
at ``epsilon = 0`` these are uniform when the null is calibrated, so the share below 0.05 is about 5 %.
"""

from __future__ import annotations

import numpy as np


def replicate_p_values(null: np.ndarray, alt: np.ndarray) -> np.ndarray:
    """Per alternative replicate j, ``p_j = #{i: null_i >= alt_j} / n_null`` (ties count toward the null)."""
    return at_or_above(null, alt) / np.asarray(null).size


def p_value(null: np.ndarray, alt: np.ndarray) -> float:
    """One-sided pairwise p-value of alternative deltas ``alt`` against null deltas ``null``: the mean ``p_j``,
    taken as the whole number of (null, alternative) pairs with ``null_i >= alt_j`` over the number of pairs, one
    correctly rounded division, so that a p of exactly 1/20 compares with 0.05 as equal whatever the order of a
    sum."""
    return int(at_or_above(null, alt).sum()) / (np.asarray(null).size * np.asarray(alt).size)


def at_or_above(null: np.ndarray, alt: np.ndarray) -> np.ndarray:
    """Per alternative replicate j, the whole number ``#{i: null_i >= alt_j}``."""
    null = np.sort(np.asarray(null, dtype=float))
    alt = np.asarray(alt, dtype=float)
    if null.size == 0 or alt.size == 0:
        raise ValueError("p_value needs at least one null and one alternative delta")
    return null.size - np.searchsorted(null, alt, side="left")


def p_values(null: np.ndarray, alt: np.ndarray) -> np.ndarray:
    """Column-wise :func:`p_value` for (replicates x metrics) arrays."""
    return np.array([p_value(null[:, m], alt[:, m]) for m in range(null.shape[1])])
