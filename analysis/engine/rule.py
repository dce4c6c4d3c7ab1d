"""The perturbation rule of B (METHOD section 3): the one module that knows the rules and their codes.

``"dirichlet"`` (VET's distortion, the default): per drawn item slot of B, a noise law
``eta ~ Dirichlet(1/C, ..., 1/C)`` shared by the slot's replaced responses, drawn implicitly as a Polya urn: the j-th
replacement of a slot is label c with probability ``(1/C + r_c) / (1 + j - 1)``, ``r_c`` counting the slot's earlier
replacements that went to c. ``"uniform"``: each replaced response takes one of the other ``C - 1`` labels
uniformly. Each response is replaced with probability ``epsilon``. Kernels receive the rule as its integer code
(``DIRICHLET`` or ``UNIFORM``); Python code asks :func:`shares_noise` rather than comparing names.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from scipy.special import gammaln

from analysis.errors import ParameterError
from analysis.samplers import binomial, build_alias, uniform_index

PERTURBATIONS = ("dirichlet", "uniform")
DIRICHLET, UNIFORM = 0, 1  # kernel codes of PERTURBATIONS
DEFAULT = PERTURBATIONS[0]


def check_perturbation(perturbation: str) -> str:
    """The perturbation rule's name, or a :class:`ParameterError` naming the choices."""
    if perturbation not in PERTURBATIONS:
        raise ParameterError(f"unknown perturbation {perturbation!r}; choose one of {', '.join(PERTURBATIONS)}")
    return perturbation


def rule_code(perturbation: str) -> int:
    """The kernels' integer code of a rule's name."""
    return PERTURBATIONS.index(check_perturbation(perturbation))


def shares_noise(perturbation: str) -> bool:
    """Whether the replaced responses of one slot share a noise law (the Dirichlet rule), so that their labels can
    be drawn together, after the kept ones are counted."""
    return rule_code(perturbation) == DIRICHLET


@numba.njit(cache=True, inline="always")
def urn_label(u, urn):
    """A label from the Polya urn ``urn`` (counts of earlier replacements) with prior weight 1/C, for uniform ``u``.

    The urn's total weight is ``C * (1/C) + sum(urn) = 1 + sum(urn)``; the drawn label is added to the urn.
    """
    n_labels = urn.shape[0]
    prior = 1.0 / n_labels
    total = 1.0
    for c in range(n_labels):
        total += urn[c]
    x = u * total
    c = 0
    acc = prior + urn[0]
    while c < n_labels - 1 and x >= acc:
        c += 1
        acc += prior + urn[c]
    urn[c] += 1
    return c


@numba.njit(cache=True, inline="always")
def replacement(v, label, rule, urn):
    """The noise label that replaces ``label``, for uniform ``v``: from the slot's urn (``DIRICHLET``) or another
    label drawn uniformly (``UNIFORM``)."""
    if rule == DIRICHLET:
        return urn_label(v, urn)
    n_labels = urn.shape[0]
    other = min(int(v * (n_labels - 1)), n_labels - 2)
    return other + (other >= label)


@numba.njit(cache=True, inline="always")
def perturbed(rng, label, epsilon, rule, urn):
    """``label``, or with probability ``epsilon`` its :func:`replacement`. One uniform per response."""
    u = rng.random()
    if u >= epsilon:
        return label
    return replacement(u / epsilon, label, rule, urn)


@numba.njit(cache=True, inline="always")
def first_replaced(u, n, keep_all, log_keep):
    """Index of the first replaced response among ``n``, each replaced with probability ``epsilon``, given that at
    least one is: the truncated geometric law, by inversion of uniform ``u``. ``keep_all = (1 - epsilon)**n``
    and ``log_keep = log(1 - epsilon)``."""
    if keep_all <= 0.0:
        return 0
    j = int(math.ceil(math.log1p(-u * (1.0 - keep_all)) / log_keep)) - 1
    return min(max(j, 0), n - 1)


@numba.njit(cache=True, inline="always")
def share_out(rng, m, old, rule, shares):
    """Spread ``m`` replacements of one response of label ``old`` over the labels, into ``shares``: uniformly over
    all ``C`` labels under the Dirichlet rule (one response a slot, so its noise law averages out to uniform), over
    the ``C - 1`` others under the uniform rule. A multinomial, drawn as a chain of binomials."""
    n_labels = shares.shape[0]
    choices = n_labels if rule == DIRICHLET else n_labels - 1
    for c in range(n_labels):
        shares[c] = 0
        if m == 0 or (rule == UNIFORM and c == old):
            continue
        x = m if choices == 1 else binomial(rng, m, 1.0 / choices)
        choices -= 1
        m -= x
        shares[c] = x


@numba.njit(cache=True)
def perturb_labels(rng, labels, n_slots, k, epsilon, rule, urn):
    """Perturb the responses in the first ``n_slots`` rows of ``labels`` in place, one urn per row (item slot)."""
    for j in range(n_slots):
        urn[:] = 0
        for c in range(k):
            labels[j, c] = perturbed(rng, labels[j, c], epsilon, rule, urn)


@numba.njit(cache=True, inline="always")
def dirichlet_noise(rng, m_a, m_b, chain, noise):
    """The labels of ``m_a`` replaced responses of A* and ``m_b`` of B*, drawn from one ``eta ~ Dirichlet(1/C, ...,
    1/C)``: the counts of all ``m_a + m_b`` by the chain of beta-binomials ``chain`` (:class:`NoiseTables`), then
    the smaller side's as a uniform subset of them, drawn one at a time. Writes the smaller side's counts into
    ``noise[0]`` and the other's into ``noise[1]``; returns whether the smaller side is B* (``m_b < m_a``)."""
    n_labels = noise.shape[1]
    left = m_a + m_b
    for c in range(n_labels - 1):
        u = rng.random()
        lo, hi = 0, left
        while lo < hi:
            mid = (lo + hi) // 2
            if u < chain[c, left, mid]:
                hi = mid
            else:
                lo = mid + 1
        noise[0, c] = 0
        noise[1, c] = lo
        left -= lo
    noise[0, n_labels - 1] = 0
    noise[1, n_labels - 1] = left
    left = m_a + m_b
    for _ in range(min(m_a, m_b)):
        j = uniform_index(rng, left)
        c = 0
        acc = noise[1, 0]
        while acc <= j:
            c += 1
            acc += noise[1, c]
        noise[1, c] -= 1
        noise[0, c] += 1
        left -= 1
    return m_b < m_a


def uniform_noise(shares: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per item, the law of a response after uniform replacement, ``(1 - p_c) / (C - 1)``, and its cumulative form."""
    noise = (1.0 - shares) / (shares.shape[1] - 1)
    cum = np.cumsum(noise, axis=1)
    cum[:, -1] = 1.0
    return noise, cum


def fire_law(k: int, epsilon: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """How many of ``n <= k`` responses are replaced, ``Binomial(n, epsilon)``, as alias tables (one uniform a
    draw, :func:`analysis.engine.tables.draw_fired`): ``(start, prob, alias)``, the law of ``n`` in the block
    ``start[n]:start[n] + n + 1``."""
    from scipy.stats import binom  # here, not at the top: scipy.stats takes a second to import
    n = np.arange(k + 1)
    start = np.concatenate([[0], np.cumsum(n + 1)]).astype(np.int64)
    pmf = binom.pmf(n[None, :], n[:, None], epsilon)[np.tril_indices(k + 1)][None, :]  # row n: x = 0..n
    prob = np.empty_like(pmf)
    alias = np.empty(pmf.shape, dtype=np.int64)
    build_alias(pmf, start, prob, alias)
    return start, prob[0], alias[0]


def dirichlet_pairs(comp: np.ndarray, other: np.ndarray | None = None) -> np.ndarray:
    """``P(A's noise = comp[r_a], B's noise = other[r_b])`` given their sizes (``other`` defaults to ``comp``), when
    both are drawn from one ``eta ~ Dirichlet(1/C, ..., 1/C)``: the two multinomial coefficients times the
    Dirichlet moment of the sum."""
    other = comp if other is None else other
    n_labels = comp.shape[1]
    alpha = 1.0 / n_labels

    def log_coef(vectors):
        return gammaln(vectors.sum(1) + 1) - gammaln(vectors + 1).sum(1)

    both = comp[:, None, :] + other[None, :, :]
    log_moment = (gammaln(alpha + both) - gammaln(alpha)).sum(2) - gammaln(1 + both.sum(2))
    return np.exp(log_coef(comp)[:, None] + log_coef(other)[None, :] + log_moment)
