"""The exact law of B's perturbation on count vectors, for the kernels that keep an item's rater columns.

Under S1 and S3 the slots of one item in a drawn group share their rater columns, so they share the labels of
A's and B's perturbable responses: ``x_a``, the count vector of the ``h`` B-columns that the null split puts in A*
(``h = 0`` under the alternative), and ``x_b``, that of the ``K' - h`` B-columns in B*. A slot differs from the
next only in which responses are replaced and by what (the methods page). This module tabulates, for each ``h``,
the law of the replaced vectors ``(x_a', x_b')`` given ``(x_a, x_b)``, so that a slot's perturbation is one draw
from an alias table instead of one draw per response:

* each response of label ``c`` is kept with probability ``1 - epsilon``: the kept vector ``k <= x`` has law
  ``prod_c Binomial(k_c; x_c, 1 - epsilon)``;
* a shared-noise rule: the replaced responses of A* and B* draw their labels from the slot's one
  ``eta ~ Dirichlet(prior)``, a joint Dirichlet-multinomial (:meth:`analysis.engine.rule.Rule.pairs`), so
  ``P(x_a', x_b') = sum over noise vectors n_a, n_b of P(n_a, n_b) P(k_a = x_a' - n_a) P(k_b = x_b' - n_b)``;
* the uniform rule: each replaced response of label ``c`` takes one of the other labels uniformly, independently, so
  each side's vector moves by its own product of multinomials.

Vectors are numbered as in :func:`analysis.engine.draws.composition_space`: ``x`` of ``t`` responses is row
``start[t] + index``.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np

from analysis.engine.draws import build_alias, composition_index, composition_space, multinomial_pmf
from analysis.engine import path as paths
from analysis.engine.rule import Rule


class NoiseMoves:
    """How count vectors of ``t`` responses move when some responses are replaced by given noise labels.

    Each response is kept with probability ``1 - epsilon``, so the kept vector ``y <= x`` has law
    ``prod_c Binomial(y_c; x_c, 1 - epsilon)``; :meth:`given` is ``M[x, x'] = P(kept = x' - n | x)`` for one noise
    vector ``n`` (row ``n`` of ``comp``, at most ``t`` responses), :meth:`mixed` a weighted sum of them."""

    def __init__(self, comp: np.ndarray, start: np.ndarray, row_of, epsilon: float, t: int):
        from scipy.stats import binom  # here, not at the top: scipy.stats takes a second to import
        block = comp[start[t]:start[t + 1]]
        noise = comp[:start[t + 1]]
        counts = np.arange(t + 1)
        kept = binom.pmf(counts[None, :], counts[:, None], 1.0 - epsilon)  # kept[x_c, y_c], looked up per label
        self.keep = kept[block[:, None, :], noise[None, :, :]].prod(2)  # (x, y)
        rest = block[:, None, :] - noise[None, :, :]  # (x', n, C): the kept vector that noise n completes to x'
        self.valid = (rest >= 0).all(2)
        self.rest_row = np.where(self.valid, row_of(np.maximum(rest, 0)), 0)

    def given(self, n: int) -> np.ndarray:
        return np.where(self.valid[None, :, n], self.keep[:, self.rest_row[:, n]], 0.0)

    def mixed(self, weights: np.ndarray) -> np.ndarray:
        """``sum_n weights[n] given(n)``, as ``keep @ S`` with ``S[y, x']`` the weight of the noise vectors that
        complete the kept vector ``y`` to ``x'``."""
        size = self.keep.shape[0]
        target = np.broadcast_to(np.arange(size)[:, None], self.valid.shape)[self.valid]
        spread = np.bincount(self.rest_row[self.valid] * size + target,
                             np.broadcast_to(weights[None, :], self.valid.shape)[self.valid],
                             minlength=self.keep.shape[1] * size)
        return self.keep @ spread.reshape(self.keep.shape[1], size)


def uniform_moves(comp: np.ndarray, start: np.ndarray, row_of, epsilon: float, t: int, rule: Rule) -> np.ndarray:
    """``T[x, x']`` for vectors of ``t`` responses when each response of label ``c`` moves independently by the
    uniform rule's law (:meth:`analysis.engine.rule.Rule.other_labels`)."""
    n_labels = comp.shape[1]
    block = comp[start[t]:start[t + 1]]
    moves = np.zeros((len(block), len(block)))
    for i, x in enumerate(block):
        law = np.ones(1)
        total = 0
        for c in range(n_labels):
            stay = rule.other_labels(epsilon, c, n_labels)
            part = multinomial_pmf(stay[None, :], comp[start[x[c]]:start[x[c] + 1]])[0]
            left, right = comp[start[total]:start[total + 1]], comp[start[x[c]]:start[x[c] + 1]]
            rows = row_of(left[:, None, :] + right[None, :, :]) - start[total + x[c]]
            law = np.bincount(rows.ravel(), (law[:, None] * part[None, :]).ravel(),
                              minlength=int(start[total + x[c] + 1] - start[total + x[c]]))
            total += x[c]
        moves[i] = law
    return moves


def perturbation_laws(k: int, epsilon: float, rule: Rule, null: bool) -> list[np.ndarray]:
    """Per ``h`` (``0..k`` under the null, ``0`` alone under the alternative), the matrix of
    ``P((x_a', x_b') | (x_a, x_b))`` with rows and columns numbered ``index(x_a) * V(k - h) + index(x_b)``."""
    comp, start = composition_space(k, len(rule.prior))
    code, rows = composition_index(comp, k)

    def row_of(vectors):
        return rows[vectors @ code]

    laws = []
    hs = range(k + 1) if null else [0]
    if rule.shared:
        pairs = rule.pairs(comp[:start[max(hs) + 1]], comp)  # A*'s noise has at most max(hs) responses
        moves = {t: NoiseMoves(comp, start, row_of, epsilon, t) for t in {*hs} | {k - h for h in hs}}
    else:
        uniform = {t: uniform_moves(comp, start, row_of, epsilon, t, rule) for t in {*hs} | {k - h for h in hs}}
    for h in hs:
        if rule.shared:  # sum over A*'s noise vectors n of M_h(n) x (B*'s moves mixed by P(n, .))
            noise = range(start[h + 1])
            law = np.tensordot(np.stack([moves[h].given(n) for n in noise]),
                               np.stack([moves[k - h].mixed(pairs[n, :start[k - h + 1]]) for n in noise]),
                               axes=(0, 0)).transpose(0, 2, 1, 3)
        else:
            law = np.einsum("ap,bq->abpq", uniform[h], uniform[k - h])
        size = law.shape[0] * law.shape[1]
        laws.append(law.reshape(size, size))
    return laws


MASK_BITS = 10  # responses whose replacement one draw from the mask table decides


class MaskTables(NamedTuple):
    """The alias table over bit masks of ``MASK_BITS`` responses, each mask's number of set bits and their
    positions (:func:`mask_tables`)."""

    prob: np.ndarray
    alias: np.ndarray
    count: np.ndarray
    pos: np.ndarray


@functools.lru_cache(maxsize=16)
def mask_tables(epsilon: float) -> MaskTables:
    """Which of ``MASK_BITS`` responses are replaced, each independently with probability ``epsilon``, in one
    draw: the alias table (``prob``, ``alias``) over the ``2**MASK_BITS`` bit masks, each mask's number of set
    bits and their positions in increasing order. Built once per epsilon (about 14 ms), not per call."""
    masks = np.arange(2**MASK_BITS)
    bits = (masks[:, None] >> np.arange(MASK_BITS)) & 1
    replaced = bits.sum(1)
    law = epsilon**replaced * (1.0 - epsilon) ** (MASK_BITS - replaced)
    prob = np.empty((1, len(masks)))
    alias = np.empty((1, len(masks)), dtype=np.int64)
    build_alias(law[None, :], np.array([0, len(masks)]), prob, alias)
    positions = np.zeros((len(masks), MASK_BITS), dtype=np.int64)
    for mask in masks:
        where = np.flatnonzero(bits[mask])
        positions[mask, :len(where)] = where
    return MaskTables(prob[0], alias[0], replaced.astype(np.int64), positions)


class PerturbationTables(NamedTuple):
    """The perturbation laws of :func:`perturbation_laws` as alias tables, flat, for a kernel.

    For ``h``: ``n_out[h] = V(h) V(k - h)`` outcomes per row, and row ``r`` of ``h`` at ``base[h] + r * n_out[h]``
    in ``prob`` and ``alias`` (the law itself in ``pmf``); outcome ``o`` is the vectors ``out_a[h, o]`` (row of
    ``comp``) for A* and ``out_b[h, o]`` for B*. ``code`` and ``row_of`` number a count vector: its row is
    ``row_of[sum_c counts[c] * code[c]]``; ``comp_code[e]`` is the code of ``comp[e]``."""

    n_out: np.ndarray
    base: np.ndarray
    pmf: np.ndarray
    prob: np.ndarray
    alias: np.ndarray
    out_a: np.ndarray
    out_b: np.ndarray
    comp: np.ndarray
    start: np.ndarray
    code: np.ndarray
    row_of: np.ndarray
    comp_code: np.ndarray

    @classmethod
    def build(cls, k: int, epsilon: float, rule: Rule, null: bool) -> "PerturbationTables":
        comp, start = composition_space(k, len(rule.prior))
        laws = perturbation_laws(k, epsilon, rule, null)
        hs = range(k + 1) if null else [0]
        width = max(law.shape[1] for law in laws)
        n_out = np.zeros(k + 1, dtype=np.int64)
        base = np.zeros(k + 1, dtype=np.int64)
        out_a = np.zeros((k + 1, width), dtype=np.int64)
        out_b = np.zeros((k + 1, width), dtype=np.int64)
        pmfs, probs, aliases, offset = [], [], [], 0
        for h, law in zip(hs, laws):
            n_out[h], base[h] = law.shape[1], offset
            prob = np.empty_like(law)
            alias = np.empty(law.shape, dtype=np.int64)
            build_alias(law, np.array([0, law.shape[1]]), prob, alias)
            pmfs.append(law.ravel())
            probs.append(prob.ravel())
            aliases.append(alias.ravel())
            offset += law.size
            size_b = int(start[k - h + 1] - start[k - h])
            o = np.arange(law.shape[1])
            out_a[h, :len(o)] = start[h] + o // size_b
            out_b[h, :len(o)] = start[k - h] + o % size_b
        code, row_of = composition_index(comp, k)
        return cls(n_out, base, np.concatenate(pmfs), np.concatenate(probs), np.concatenate(aliases), out_a, out_b,
                   comp, start, code, row_of, comp @ code)

    def by_code(self) -> PerturbationCodes:
        """For the direct kernel, which works on the codes of count vectors (rows of the pair tables): the
        outcomes as the codes of A*'s and B*'s replaced vectors."""
        return PerturbationCodes(self.n_out, self.base, self.prob, self.alias, self.comp_code[self.out_a],
                                 self.comp_code[self.out_b], self.start)


class PerturbationCodes(NamedTuple):
    """:class:`PerturbationTables` with the outcomes as codes of count vectors (the direct kernel's form)."""

    n_out: np.ndarray
    base: np.ndarray
    prob: np.ndarray
    alias: np.ndarray
    code_a: np.ndarray
    code_b: np.ndarray
    start: np.ndarray


class NoiseTables(NamedTuple):
    """The labels that replace B's responses under a shared-noise rule, in one draw per slot.

    The replaced responses take their labels from the slot's ``eta ~ Dirichlet(prior)`` whatever labels
    they had, so once a kernel knows how many of A*'s (``m_a``) and B*'s (``m_b``) perturbable responses are
    replaced, their noise vectors ``(n_a, n_b)`` have the joint Dirichlet-multinomial law
    (:meth:`analysis.engine.rule.Rule.pairs`). For every ``m_a + m_b <= most`` it is one alias table: block
    ``base[m_a, m_b]`` of ``size[m_a, m_b]`` outcomes in ``prob`` and ``alias``, outcome ``o`` being the rows
    ``out_a[o]`` and ``out_b[o]`` of ``comp``. ``most`` is the largest total whose tables fit in
    ``analysis.engine.path.NOISE_ENTRIES`` (``base`` is -1 beyond it). Beyond it a kernel draws the total's labels by a chain of
    beta-binomials: ``chain[c, m, x]`` is the probability that at most ``x`` of ``m`` labels that go to label ``c``
    or a later one go to ``c`` (:meth:`analysis.engine.rule.Rule.chain`);
    then it gives A* a uniform ``m_a``-subset of them (:func:`analysis.engine.rule.dirichlet_noise`)."""

    most: int
    base: np.ndarray
    size: np.ndarray
    prob: np.ndarray
    alias: np.ndarray
    out_a: np.ndarray
    out_b: np.ndarray
    comp: np.ndarray
    chain: np.ndarray

    @classmethod
    def build(cls, k: int, rule: Rule, largest: int | None = None) -> "NoiseTables":
        n_labels = len(rule.prior)
        largest = paths.NOISE_ENTRIES if largest is None else largest
        most, entries = -1, 0
        while most < k:  # pairs of noise vectors of total t: vectors of t responses over 2C labels
            more = math.comb(most + 1 + 2 * n_labels - 1, 2 * n_labels - 1)
            if entries + more > largest:
                break
            most, entries = most + 1, entries + more
        comp, start = composition_space(most, n_labels)
        base = np.full((k + 1, k + 1), -1, dtype=np.int64)
        size = np.zeros((k + 1, k + 1), dtype=np.int64)
        probs, aliases, out_a, out_b, offset = [], [], [], [], 0
        for m_a in range(most + 1):
            for m_b in range(most + 1 - m_a):
                law = rule.pairs(comp[start[m_a]:start[m_a + 1]], comp[start[m_b]:start[m_b + 1]]).ravel()
                prob = np.empty((1, law.size))
                alias = np.empty((1, law.size), dtype=np.int64)
                build_alias(law[None, :] / law.sum(), np.array([0, law.size]), prob, alias)
                base[m_a, m_b], size[m_a, m_b] = offset, law.size
                probs.append(prob[0])
                aliases.append(alias[0])
                o, width_b = np.arange(law.size), start[m_b + 1] - start[m_b]
                out_a.append(start[m_a] + o // width_b)
                out_b.append(start[m_b] + o % width_b)
                offset += law.size
        return cls(most, base, size, np.concatenate(probs), np.concatenate(aliases), np.concatenate(out_a),
                   np.concatenate(out_b), comp, rule.chain(k))

    def by_code(self, code: np.ndarray) -> NoiseCodes:
        """For the direct kernel: the tables with their outcomes as codes of the noise vectors (``code[label]``
        summed over a vector's labels)."""
        codes = self.comp @ code
        return NoiseCodes(self.base, self.size, self.prob, self.alias, codes[self.out_a], codes[self.out_b],
                          self.chain)


class NoiseCodes(NamedTuple):
    """:class:`NoiseTables` with the outcomes as codes of noise vectors (the direct kernel's form)."""

    base: np.ndarray
    size: np.ndarray
    prob: np.ndarray
    alias: np.ndarray
    code_a: np.ndarray
    code_b: np.ndarray
    chain: np.ndarray
