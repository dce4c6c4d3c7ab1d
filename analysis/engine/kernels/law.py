"""The law kernel: S2 drawn from the exact law of one item slot, and that law: the joint law of its gold, A and B count vectors (the methods page).

Under S2 the slots of a replicate are independent and alike: each draws a uniform item, then its own rater
columns for G, A and B (and, under the null, its own split of A's and B's columns). A replicate of ``N'`` slots is
therefore ``N'`` independent draws from one law over the triples (gold, A, B) of count vectors of ``K'``
responses, and the eight metrics need nothing else. This module computes that law exactly, as a
``V x V x V`` array over the ``V = C(K' + C - 1, C - 1)`` count vectors in the order of
:func:`analysis.engine.draws.composition_space`.

For one item with label shares ``p``: G is ``Multinomial(K', p)``. Each of A's and B's counts is the sum of a
vector ``x`` of unreplaced responses, ``Multinomial(K' - m, p)``, and a vector ``n`` of ``m`` noise responses.
Writing ``U[(m, n), v] = P(x = v - n)`` for every noise vector ``n`` of ``m <= K'`` responses, the joint law of
(A, B) is ``U^T W U``, where ``W[(m_a, n_a), (m_b, n_b)]`` is the probability that A's noise is ``n_a`` and B's
is ``n_b``:

* the alternative: A has no noise; B replaces ``m_b ~ Binomial(K', epsilon)`` responses;
* the null: ``H`` of B's columns go to A* (``Hypergeometric(2K'; K', K')`` or ``Binomial(K', 1/2)``, as the null's
  columns mix, :mod:`analysis.engine.split`), so A* holds ``Binomial(H, epsilon)``
  noise responses and B* ``Binomial(K' - H, epsilon)``;
* a shared-noise rule: both noise vectors come from the slot's one ``eta ~ Dirichlet(prior)``, a joint
  Dirichlet-multinomial law (:meth:`analysis.engine.rule.Rule.pairs`); the uniform rule: each noise response is
  independently drawn from the item's law of a replaced response (:meth:`analysis.engine.rule.Rule.replaced_law`,
  a uniform other label averaged over the replaced label), an item-dependent factor folded into ``U``.

The law of a slot is the mean over items of ``P(G = g) (U^T W U)[a, b]``.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from analysis.engine.rule import Rule
from analysis.engine.path import TAIL_SLOTS
from analysis.engine.lookup import alias_draw
from analysis.engine.draws import binomial
from analysis.engine.indices import ix
from analysis.engine.split import split_distribution
from analysis.engine.metrics import accumulator, add_pair, clear, store
from analysis.engine.draws import build_alias, composition_index, composition_space, multinomial_pmf

CHUNK_ITEMS = 256  # distinct items per batched matrix product (bounds the memory of U)
MASK20 = (1 << 20) - 1  # a packed triple holds three 20-bit rows (LawTables)


def noise_weights(k: int, epsilon: float, null: bool, null_mixing: str) -> np.ndarray:
    """``w[m_a, m_b]``: the probability that A (or A*) holds ``m_a`` noise responses and B (or B*) ``m_b``, the
    null's columns mixed as ``null_mixing`` says (:mod:`analysis.engine.split`)."""
    from scipy.stats import binom  # here, not at the top: scipy.stats takes a second to import
    m = np.arange(k + 1)
    fire = binom.pmf(m[None, :], m[:, None], epsilon)  # fire[n, m] = P(Binomial(n, epsilon) = m)
    if not null:
        w = np.zeros((k + 1, k + 1))
        w[0] = fire[k]
        return w
    split = split_distribution(k, null_mixing).pmf(m)  # B's columns in A*
    return fire.T @ (split[:, None] * fire[::-1])


def distinct_shares(shares: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of the items' label ``shares`` (in increasing order) and each one's share of the items."""
    distinct, counts = np.unique(shares, axis=0, return_counts=True)
    return distinct, counts / counts.sum()


def slot_law(distinct: np.ndarray, weight: np.ndarray, k: int, epsilon: float, rule: Rule, null: bool,
             null_mixing: str) -> np.ndarray:
    """The law of one S2 slot's (gold, A, B) count vectors of ``k`` responses, shape ``(V, V, V)``.

    ``distinct`` holds the items' distinct label shares and ``weight`` each one's share of the items
    (:func:`distinct_shares`); ``rule`` is the perturbation rule (:class:`analysis.engine.rule.Rule`); ``null``
    selects the permutation null instead of the alternative, its columns mixed as ``null_mixing`` says."""
    n_labels = distinct.shape[1]
    comp, start = composition_space(k, n_labels)
    size = comp.sum(1)
    n_vectors = int(start[k + 1] - start[k])
    code, row_of = composition_index(comp, k)
    code = comp @ code  # v = x + n is row row_of[code[x] + code[n]] - start[k] among the vectors of k responses
    w = noise_weights(k, epsilon, null, null_mixing)
    coupling = w[size[:, None], size[None, :]]
    if rule.shared:
        coupling = coupling * rule.pairs(comp)
    law = np.zeros((n_vectors, n_vectors * n_vectors))
    for lo in range(0, len(distinct), CHUNK_ITEMS):
        p = distinct[lo:lo + CHUNK_ITEMS]
        pmf = multinomial_pmf(p, comp)
        u = np.zeros((len(p), len(comp), n_vectors))
        for r in range(len(comp)):
            rest = slice(start[k - size[r]], start[k - size[r] + 1])
            u[:, r, row_of[code[rest] + code[r]] - start[k]] = pmf[:, rest]
        if not rule.shared:
            u *= multinomial_pmf(rule.replaced_law(p), comp)[:, :, None]
        if null:
            joint = np.matmul(u.transpose(0, 2, 1), np.matmul(coupling, u))
        else:  # only the row of no noise for A
            joint = u[:, 0, :, None] * np.einsum("r,irv->iv", coupling[0], u)[:, None, :]
        gold = pmf[:, start[k]:] * weight[lo:lo + CHUNK_ITEMS, None]
        law += gold.T @ joint.reshape(len(p), -1)
    law = np.maximum(law, 0.0)
    return (law / law.sum()).reshape(n_vectors, n_vectors, n_vectors)


class LawTables(NamedTuple):
    """A slot law laid out for drawing: an alias table over its ``V**3`` entries (one uniform a slot), and the
    entries of positive probability in decreasing order with their tail sums (for a chain of binomials).
    ``packed[e]`` holds entry ``e``'s rows (gold, A, B) in the pair tables of :class:`analysis.engine.lookup.PairTables`
    as ``g + (a << 20) + (b << 40)``."""

    prob: np.ndarray
    alias: np.ndarray
    packed: np.ndarray
    order: np.ndarray
    sorted_law: np.ndarray
    tail: np.ndarray

    @classmethod
    def build(cls, law: np.ndarray) -> "LawTables":
        flat = law.ravel()
        prob = np.empty((1, flat.size))
        alias = np.empty((1, flat.size), dtype=np.int64)
        build_alias(flat[None, :], np.array([0, flat.size]), prob, alias)
        g, a, b = np.unravel_index(np.arange(flat.size, dtype=np.int64), law.shape)
        packed = g + (a << 20) + (b << 40)
        order = np.argsort(-flat, kind="stable")
        order = order[flat[order] > 0]
        sorted_law = flat[order]
        tail = np.cumsum(sorted_law[::-1])[::-1].copy()  # summed from the smallest: exact where it is tiny
        return cls(prob[0], alias[0], packed, order, sorted_law, tail)


@numba.njit(cache=True)
def law_replicates(rng, law, n, k, chain, pairs, out, confusion):
    """S2 from the exact law of one slot (:mod:`analysis.engine.kernels.law`): a replicate is ``n`` independent draws of a
    (gold, A, B) triple of count vectors. Slot by slot from the alias table; or, when ``chain``, as a multinomial:
    a chain of binomials down the law's entries in decreasing order until at most ``TAIL_SLOTS`` slots are left,
    which are drawn by inversion of the remaining tail (binary search on its sums)."""
    prob, alias, packed, order, sorted_law, tail = law
    terms = pairs.terms
    n_labels = confusion.shape[2]
    size = prob.shape[0]
    positive = order.shape[0]
    acc = accumulator(n_labels)
    for r in range(out.shape[0]):
        clear(acc)
        if chain:
            left = n
            j = 0
            while left > TAIL_SLOTS:
                x = binomial(rng, left, min(sorted_law[ix(j)] / tail[ix(j)], 1.0)) if j < positive - 1 else left
                if x > 0:
                    e = order[ix(j)]
                    t = packed[ix(e)]
                    add_pair(t & MASK20, (t >> 20) & MASK20, t >> 40, terms, acc, x)
                    left -= x
                j += 1
            for _ in range(left):
                u = rng.random() * tail[ix(j)]
                lo, hi = j, positive - 1  # the last entry whose tail sum exceeds u
                while lo < hi:
                    mid = (lo + hi + 1) // 2
                    if tail[ix(mid)] > u:
                        lo = mid
                    else:
                        hi = mid - 1
                e = order[ix(lo)]
                t = packed[ix(e)]
                add_pair(t & MASK20, (t >> 20) & MASK20, t >> 40, terms, acc, 1)
        else:
            for _ in range(n):
                t = packed[ix(alias_draw(rng, prob, alias, 0, size))]
                add_pair(t & MASK20, (t >> 20) & MASK20, t >> 40, terms, acc, 1)
        store(acc, out[r], confusion[r])
