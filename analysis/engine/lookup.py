"""Lookup tables and alias helpers shared by the kernels: numbered count vectors and their metric terms, draws from
cumulative laws and alias tables, replacement masks, small binomials."""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np
from numba.extending import intrinsic

from analysis.errors import ParameterError
from analysis.engine.metrics import PairTerms, pair_tables
from analysis.engine.perturbation import MASK_BITS
from analysis.engine.path import packs, paired
from analysis.engine.draws import composition_index, composition_space
from analysis.engine.indices import ix

class PairTables(NamedTuple):
    """How the direct kernel numbers count vectors of ``k`` responses: a kernel sums ``code[label]`` over a slot's
    responses. Where the vectors are few (``paired``), the code is mixed-radix (:func:`composition_index`), the
    vector's row is ``row_of[sum] - first``, and the metric terms of every (gold, model) pair of rows
    (:func:`pair_tables`) add a slot to the sums with a few lookups instead of a pass over its counts. Elsewhere the
    code packs the counts, ``shift`` bits a label (:func:`packs`), and the arrays are placeholders: more vectors
    would not let the tables stay in the processor's caches."""

    paired: bool
    code: np.ndarray
    row_of: np.ndarray
    first: int  # the row of composition_space's first vector of k responses
    shift: int
    terms: PairTerms

    @classmethod
    def build(cls, k: int, n_labels: int, smoothing: float) -> "PairTables":
        if not paired(k, n_labels):
            if not packs(k, n_labels):
                raise ParameterError(f"the direct kernel cannot pack counts of K = {k} over {n_labels} labels into "
                                     "64 bits; use method='items' (S1, S3) or method='counts' (S2)")
            shift = k.bit_length()
            return cls(False, np.left_shift(1, shift * np.arange(n_labels), dtype=np.int64),
                       np.zeros(1, dtype=np.int64), 0, shift, NO_PAIRS.terms)
        comp, start = composition_space(k, n_labels)
        return cls(True, *composition_index(comp, k), int(start[k]), 0, pair_tables(comp[start[k]:], k, smoothing))



NO_PAIRS = PairTables(False, *(np.zeros(1, dtype=np.int64),) * 2, 0, 0,
                      PairTerms(np.zeros(1, dtype=np.int64), *(np.zeros((1, 1), dtype=np.int64),) * 3))  # where a kernel has no pair tables


@numba.njit(cache=True, inline="always")
def draw_from_cdf(rng, cdf):
    """An index from a cumulative law by binary search on one uniform."""
    u = rng.random()
    lo, hi = 0, cdf.shape[0] - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if u < cdf[ix(mid)]:
            hi = mid
        else:
            lo = mid + 1
    return lo


@numba.njit(cache=True, inline="always")
def alias_draw(rng, prob, alias, offset, size):
    """An index in ``0..size-1`` from the alias table ``prob[offset:offset + size]``, ``alias[...]`` (one uniform)."""
    u = rng.random() * size
    e = min(int(u), size - 1)
    return alias[ix(offset + e)] if u - e >= prob[ix(offset + e)] else e


@intrinsic
def popcount(typingctx, x):
    """The number of set bits of the integer ``x``, as one processor instruction (LLVM's ctpop)."""
    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])
    return x(x), codegen


@numba.njit(cache=True, inline="always")
def draw_mask(rng, k, m_prob, m_alias):
    """Which of ``k <= MASK_WORD`` perturbable responses are replaced, as the bits of one integer: a draw from
    the mask tables (:func:`analysis.engine.perturbation.mask_tables`) per ``MASK_BITS`` of them."""
    mask = 0
    for chunk in range(0, k, MASK_BITS):
        mask |= alias_draw(rng, m_prob, m_alias, 0, m_prob.shape[0]) << chunk
    return mask


class CellDraw(NamedTuple):
    """A cell's numbers for a kernel: ``n`` items of ``k`` responses, the null or the alternative, B perturbed
    with strength ``epsilon`` by a rule (:class:`analysis.engine.rule.Rule`) given by its numbers: ``shared``
    (a slot's replaced responses share one noise law), its ``prior`` (:meth:`~analysis.engine.rule.Rule.urn`: the
    shares, then the concentration) and its ``steps``."""

    n: int
    k: int
    epsilon: float
    shared: bool
    null: bool
    prior: np.ndarray
    steps: np.ndarray


class Chances(NamedTuple):
    """Two laws the kernels draw from: ``split[h]``, the cumulative law of ``H``, B's columns in A*
    (:func:`analysis.engine.split.split_law`), and the alias tables of ``Binomial(n, epsilon)``, how many of ``n``
    responses are replaced (:func:`analysis.engine.rule.fire_law`, drawn by :func:`draw_fired`)."""

    split: np.ndarray
    fire_start: np.ndarray
    fire_prob: np.ndarray
    fire_alias: np.ndarray


@numba.njit(cache=True, inline="always")
def draw_fired(rng, chances, n):
    """How many of ``n`` responses are replaced, ``Binomial(n, epsilon)``, from the alias tables of ``chances``."""
    return alias_draw(rng, chances.fire_prob, chances.fire_alias, chances.fire_start[ix(n)], n + 1)
