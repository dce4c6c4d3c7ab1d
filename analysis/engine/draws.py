"""The generic draws the kernels and the samplers share (the methods page): integer, binomial and
categorical draws, the samplers' slot and column draws over a group plan (:mod:`analysis.engine.samplers`), multinomial
counts, the numbering of count vectors (compositions) and alias tables.

Integer draws use ``floor(u * n)`` of one uniform double (bias below ``2**-40`` for any realistic ``n``), which is
several times faster in numba than ``Generator.integers``. The thresholds they use change speed, never the law;
they are the plan's (:mod:`analysis.engine.path`).
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numba
import numpy as np
from scipy.special import gammaln

from analysis.engine.path import BINOMIAL_FROM, MULTIPLICITY_CHAIN_FROM, SMALL_BINOMIAL
from analysis.engine.indices import ix
from analysis.engine.samplers import group_layout

@numba.njit(cache=True, inline="always")
def uniform_index(rng, n):
    """An index in 0..n-1 from one uniform double."""
    return min(int(rng.random() * n), n - 1)


@numba.njit(cache=True, inline="always")
def binomial(rng, n, p):
    """``Binomial(n, p)``: a count of uniforms for small ``n``, numpy's generator beyond."""
    if n <= 0 or p <= 0.0:
        return 0
    if n < SMALL_BINOMIAL:
        x = 0
        for _ in range(n):
            x += rng.random() < p
        return x
    return rng.binomial(n, p)


@numba.njit(cache=True, inline="always")
def draw_label(rng, cum, row):
    """One label from the cumulative distribution ``cum[row]``."""
    u = rng.random()
    c = 0
    last = cum.shape[1] - 1
    while c < last and u >= cum[ix(row), ix(c)]:
        c += 1
    return c


@numba.njit(cache=True)
def draw_slots(rng, item_start, single_group, group_size, n, slot_group, slot_local):
    """Draw the groups and the items of one replicate; returns the number of item slots ``B * n_b``."""
    n_drawn, per_group = group_layout(n, single_group, group_size)
    n_groups = item_start.shape[0] - 1
    for g in range(n_drawn):
        group = 0 if single_group else uniform_index(rng, n_groups)
        n_items = item_start[ix(group + 1)] - item_start[ix(group)]
        for s in range(per_group):
            slot_group[ix(g * per_group + s)] = group
            slot_local[ix(g * per_group + s)] = uniform_index(rng, n_items)
    return n_drawn * per_group


@numba.njit(cache=True, inline="always")
def draw_multiplicities(rng, n_slots, n_items, mult):
    """How many of ``n_slots`` uniform draws with replacement hit each of ``n_items`` items, into ``mult``.

    One uniform per slot for few slots; a chain of binomials (one per item) when slots outnumber items."""
    for i in range(n_items):
        mult[i] = 0
    if n_items == 1:
        mult[0] = n_slots
    elif n_slots < MULTIPLICITY_CHAIN_FROM * n_items:
        for _ in range(n_slots):
            mult[ix(uniform_index(rng, n_items))] += 1
    else:
        left = n_slots
        for i in range(n_items - 1):
            if left > 0:
                mult[i] = rng.binomial(left, 1.0 / (n_items - i))
                left -= mult[i]
        mult[n_items - 1] = left


@numba.njit(cache=True, inline="always")
def add_counts(rng, k, shares, row, cum, out, j):
    """``out[j] += Multinomial(k, shares[row])``: categorical draws for small ``k``, a binomial chain beyond.

    Inlined into the kernels: a call that takes the generator costs more than a draw."""
    n_labels = out.shape[1]
    if k < BINOMIAL_FROM:
        for _ in range(k):
            out[ix(j), ix(draw_label(rng, cum, row))] += 1
        return
    left = k
    mass = 1.0
    for c in range(n_labels - 1):
        p = shares[ix(row), c]
        if left == 0 or mass <= 0.0:
            break
        x = left if p >= mass else rng.binomial(left, max(p / mass, 0.0))
        out[ix(j), c] += x
        left -= x
        mass -= p
    out[ix(j), n_labels - 1] += left


# ---------------------------------------------------------------- multinomials from alias tables (S2 on counts)

class CompositionTables(NamedTuple):
    """Alias tables of ``Multinomial(k', p)`` over the compositions of ``k'`` into C labels, for every ``k' <= k``
    and every distinct item label distribution ``p``: one uniform draws an item's counts, whatever ``k'``.

    ``comp[e]`` is the label counts of entry ``e``; the entries of ``k'`` are ``start[k']:start[k' + 1]``.
    ``row[item]`` is the item's distribution, ``prob[row, e]`` and ``alias[row, e]`` the alias table.
    """

    row: np.ndarray
    prob: np.ndarray
    alias: np.ndarray
    comp: np.ndarray
    start: np.ndarray


@functools.lru_cache(maxsize=1024)
def compositions(k: int, n_labels: int) -> np.ndarray:
    """All count vectors of ``k`` responses over ``n_labels`` labels, shape (C(k + C - 1, C - 1), C); made once
    per ``(k, n_labels)`` and read-only (:func:`composition_space` copies them into its blocks)."""
    if n_labels == 1:
        vectors = np.array([[k]], dtype=np.int64)
    else:
        vectors = np.array([[first, *rest] for first in range(k, -1, -1)
                            for rest in compositions(k - first, n_labels - 1)], dtype=np.int64)
    vectors.flags.writeable = False
    return vectors


def composition_space(k: int, n_labels: int) -> tuple[np.ndarray, np.ndarray]:
    """Every count vector of ``0..k`` responses, in blocks by total: ``(comp, start)``, with the vectors of ``j``
    responses in ``comp[start[j]:start[j + 1]]`` (:func:`composition_index` numbers them)."""
    comp = np.concatenate([compositions(j, n_labels) for j in range(k + 1)])
    sizes = [math.comb(j + n_labels - 1, n_labels - 1) for j in range(k + 1)]
    start = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    return comp, start


def multinomial_pmf(shares: np.ndarray, comp: np.ndarray) -> np.ndarray:
    """``pmf[i, e]``: the probability of count vector ``comp[e]`` under ``Multinomial(comp[e].sum(), shares[i])``."""
    log_p = np.log(np.where(shares > 0, shares, 1.0))
    log_coef = gammaln(comp.sum(1) + 1) - gammaln(comp + 1).sum(1)
    pmf = np.exp(log_coef[None, :] + log_p @ comp.T)
    pmf[((comp[None, :, :] > 0) & (shares[:, None, :] == 0)).any(2)] = 0.0  # a label the item never got
    return pmf


def composition_index(comp: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``(code, row_of)``: a count vector ``v`` of at most ``k`` responses is row ``row_of[v @ code]`` of ``comp``
    (a mixed-radix code in base ``k + 1``)."""
    code = (k + 1) ** np.arange(comp.shape[1])
    row_of = np.full((k + 1) ** comp.shape[1], -1, dtype=np.int64)
    row_of[comp @ code] = np.arange(len(comp))
    return code, row_of


def composition_tables(shares: np.ndarray, k: int) -> CompositionTables:
    """The alias tables of every item's ``Multinomial(k', shares[item])`` for ``k' = 0..k``."""
    distinct, row = np.unique(shares, axis=0, return_inverse=True)
    comp, start = composition_space(k, shares.shape[1])
    pmf = multinomial_pmf(distinct, comp)
    prob = np.empty_like(pmf)
    alias = np.empty(pmf.shape, dtype=np.int64)
    build_alias(pmf, start, prob, alias)
    return CompositionTables(row=row.astype(np.int64).ravel(), prob=prob, alias=alias, comp=comp, start=start)


@numba.njit(cache=True)
def build_alias(pmf, start, prob, alias):
    """Vose's alias method, per row and per block ``start[j]:start[j + 1]`` of ``pmf``."""
    small = np.empty(pmf.shape[1], dtype=np.int64)
    large = np.empty(pmf.shape[1], dtype=np.int64)
    for r in range(pmf.shape[0]):
        for j in range(start.shape[0] - 1):
            lo, size = start[j], start[j + 1] - start[j]
            total = 0.0
            for t in range(size):
                total += pmf[r, lo + t]
            n_small = n_large = 0
            for t in range(size):
                prob[r, lo + t] = pmf[r, lo + t] * size / total
                alias[r, lo + t] = t
                if prob[r, lo + t] < 1.0:
                    small[n_small] = t
                    n_small += 1
                else:
                    large[n_large] = t
                    n_large += 1
            while n_small > 0 and n_large > 0:
                n_small -= 1
                s = small[n_small]
                g = large[n_large - 1]
                alias[r, lo + s] = g
                prob[r, lo + g] -= 1.0 - prob[r, lo + s]
                if prob[r, lo + g] < 1.0:
                    n_large -= 1
                    small[n_small] = g
                    n_small += 1
            for t in range(n_large):
                prob[r, lo + large[t]] = 1.0
            for t in range(n_small):
                prob[r, lo + small[t]] = 1.0


@numba.njit(cache=True, inline="always")
def composition_entry(rng, k, table_row, prob, alias, start):
    """The entry of ``comp`` that one uniform draws from ``Multinomial(k, p)``, ``p`` being row ``table_row``.

    The caller adds ``comp[entry]`` to its counts itself: written inside this helper, that loop runs several
    times slower in numba."""
    lo = start[ix(k)]
    size = start[ix(k + 1)] - lo
    x = rng.random() * size
    t = min(int(x), size - 1)
    other = alias[ix(table_row), ix(lo + t)]
    return lo + (other if x - t >= prob[ix(table_row), ix(lo + t)] else t)  # a select, not a branch
