"""The perturbation rule of B (the methods page): the one module that knows the rules, their names and
their laws.

Each of B's responses is replaced with probability ``epsilon``. Under a *shared-noise* rule the replaced responses
of one drawn item slot take their labels from one noise law ``eta ~ Dirichlet(prior)`` drawn for that slot, drawn
implicitly as a Polya urn: the j-th replacement of a slot is label c with probability
``(prior_c + r_c) / (1 + j - 1)``, ``r_c`` counting the slot's earlier replacements that went to c (the prior sums
to 1). Two rules share noise:

* ``"dirichlet"`` (VET's distortion, the reference choice): ``prior = (1/C, ..., 1/C)``;
* ``"dirichlet-shares"``: the prior centred on the dataset's label shares ``pi``, with the same total
  concentration 1 (``prior = pi``);
* ``"one-label"``: one label per perturbed slot, drawn uniformly, that every replaced response of the slot takes:
  ``Dirichlet(a/C, ..., a/C)`` in the limit ``a -> 0`` (a one-hot ``eta``), the reading of the paper's "a small
  fraction (epsilon) of the responses are perturbed randomly" that its numbers support best. Its urn starts empty:
  the first replacement of a slot follows the prior, every later one copies it.

A rule's ``concentration`` is the urn's total weight before any replacement: 1 for the two Dirichlet rules, 0 for
the one-label rule.

``"uniform"``: each replaced response takes one of the other ``C - 1`` labels uniformly, independently.

Python code builds a :class:`Rule` with :func:`make_rule` and asks it for its numbers (the prior, the joint law of
two noise vectors, the beta-binomial chain, the law of a replaced response); kernels receive ``rule.shared`` and
``rule.prior``, never a name.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numba
import numpy as np
from scipy.special import gammaln

from analysis.errors import ParameterError
from analysis.engine.draws import binomial, build_alias, uniform_index
from analysis.engine.indices import ix

# new rules at the end: a cell's stream is keyed by its rule's place here
PERTURBATIONS = ("dirichlet", "uniform", "dirichlet-shares", "one-label")
SHARED = {"dirichlet": True, "uniform": False, "dirichlet-shares": True, "one-label": True}
CONCENTRATION = {"dirichlet": 1.0, "uniform": 1.0, "dirichlet-shares": 1.0, "one-label": 0.0}  # VET's total is 1


def check_perturbation(perturbation: str) -> str:
    """The perturbation rule's name, or a :class:`ParameterError` naming the choices."""
    if perturbation not in PERTURBATIONS:
        raise ParameterError(f"unknown perturbation {perturbation!r}; choose one of {', '.join(PERTURBATIONS)}")
    return perturbation



@dataclass(frozen=True, eq=False)
class Rule:
    """A perturbation rule with its law's numbers for one dataset: ``shared`` (its replaced responses of a slot
    share one ``eta ~ Dirichlet(concentration * prior)``), ``prior`` (C shares summing to 1, the law of one replaced
    response; for the uniform rule, unused) and ``concentration`` (the Dirichlet's total; 0: the one-hot limit)."""

    name: str
    shared: bool
    prior: np.ndarray
    concentration: float = 1.0

    def urn(self) -> np.ndarray:
        """What the kernels' urn reads (:func:`urn_label`): the prior's C shares, then the concentration."""
        return np.append(self.prior, self.concentration)

    def pairs(self, comp: np.ndarray, other: np.ndarray | None = None) -> np.ndarray:
        """``P(A's noise = comp[r_a], B's noise = other[r_b])`` given their sizes (``other`` defaults to ``comp``),
        when both are drawn from one ``eta ~ Dirichlet(concentration * prior)``: the two multinomial coefficients
        times the Dirichlet moment of the sum (its one-hot limit at concentration 0)."""
        other = comp if other is None else other

        def log_coef(vectors):
            return gammaln(vectors.sum(1) + 1) - gammaln(vectors + 1).sum(1)

        both = comp[:, None, :] + other[None, :, :]
        log_coefs = log_coef(comp)[:, None] + log_coef(other)[None, :]
        if self.concentration == 0:  # a one-hot eta: E[prod eta^n] is prior_c when all of n is on label c
            on = (both > 0).sum(2)
            return np.exp(log_coefs) * np.where(on == 0, 1.0, np.where(on == 1, (self.prior * (both > 0)).sum(2), 0.0))
        alpha, total = self.concentration * self.prior, self.concentration
        log_moment = ((gammaln(alpha + both) - gammaln(alpha)).sum(2) - gammaln(total + both.sum(2))
                      + gammaln(total))
        return np.exp(log_coefs + log_moment)

    def chain(self, k: int) -> np.ndarray:
        """``chain[c, m, x]``: ``P(X <= x)`` for ``X ~ BetaBinomial(m, prior_c, prior_{c+1} + ... + prior_{C-1})``,
        ``m, x <= k`` (1 where ``x >= m``): of ``m`` noise labels that go to ``c`` or a later label, how many go to
        ``c`` (the Dirichlet's aggregation property). The numbers of scipy's ``betabinom.cdf``, which sums each
        point's probabilities afresh: here they are computed once per ``m`` and each cumulative sum is taken over
        the same terms in the same order (a sixth of the time over the paper's K)."""
        from scipy.stats import betabinom  # here, not at the top: scipy.stats takes a second to import

        n_labels = len(self.prior)
        chain = np.ones((n_labels - 1, k + 1, k + 1))
        m, x = np.arange(k + 1)[:, None], np.arange(k + 1)[None, :]
        if self.concentration == 0:  # the one-hot limit: all m go to c (with c's share of the rest), or none
            for c, step in enumerate(self.steps()[:-1]):
                chain[c] = np.where(x >= m, 1.0, 1.0 - step)
            return chain
        for c in range(n_labels - 1):
            pmf = betabinom.pmf(x, m, *self._split(c))
            for total in range(1, k + 1):
                for at_most in range(total):
                    chain[c, total, at_most] = np.sum(pmf[total, :at_most + 1])
        return chain

    def _split(self, c: int) -> tuple[float, float]:
        """The beta parameters of label ``c`` against the labels after it: ``(prior_c, sum of the later ones)``; for
        the symmetric prior written ``1/C`` and ``(C - 1 - c)/C``, as scipy's numbers were first taken."""
        n_labels, a = len(self.prior), self.concentration
        if np.all(self.prior == self.prior[0]):
            return a / n_labels, a * (n_labels - 1 - c) / n_labels
        return a * float(self.prior[c]), a * float(self.prior[c + 1:].sum())

    def steps(self) -> np.ndarray:
        """``prior_c / (prior_c + ... + prior_{C-1})`` per label: the binomial chain that spreads replacements of
        one response over the labels (:func:`share_out`); ``1 / (C - c)`` for the symmetric prior."""
        n_labels = len(self.prior)
        if np.all(self.prior == self.prior[0]):
            return 1.0 / (n_labels - np.arange(n_labels))
        tail = np.cumsum(self.prior[::-1])[::-1]
        return self.prior / tail

    def noise_agreement(self, mean_shares) -> float | None:
        """``E[sum_c p_c eta_c]`` for items whose label laws ``p`` have the mean ``mean_shares``, the noise ``eta``
        drawn independently of the item: ``sum_c pi_c prior_c``; None for the uniform rule, whose replacement
        depends on the response it replaces."""
        return float(np.dot(self.prior, mean_shares)) if self.shared else None

    def k1_accuracy_slope(self, sum_p2: float, mean_shares) -> float:
        """Under S2 at K = 1, accuracy's ``Delta / epsilon`` for items with ``E[sum_c p_c^2] = sum_p2``: B's response
        matches G's with probability ``(1 - e) E[sum p^2] + e E[sum p eta]`` under shared noise, and with
        ``(1 - e) E[sum p^2] + e (1 - E[sum p^2]) / (C - 1)`` under the uniform rule (A's with ``E[sum p^2]``)."""
        if self.shared:
            return sum_p2 - self.noise_agreement(mean_shares)
        n_labels = len(self.prior)
        return (n_labels * sum_p2 - 1) / (n_labels - 1)

    def sum_p2(self, slope: float, mean_shares) -> float:
        """The inverse of :meth:`k1_accuracy_slope`: the ``E[sum_c p_c^2]`` that a K = 1 accuracy slope implies."""
        if self.shared:
            return slope + self.noise_agreement(mean_shares)
        n_labels = len(self.prior)
        return (1 + (n_labels - 1) * slope) / n_labels

    def replaced_law(self, shares: np.ndarray) -> np.ndarray:
        """Per item (rows of ``shares``), the law of one replaced response of the uniform rule averaged over the
        label it replaces, ``(1 - p_c) / (C - 1)``."""
        return (1.0 - shares) / (shares.shape[1] - 1)

    def other_labels(self, epsilon: float, label: int, n_labels: int) -> np.ndarray:
        """The law of one response of ``label`` under the uniform rule: kept with probability ``1 - epsilon``,
        else one of the other labels uniformly."""
        stay = np.full(n_labels, epsilon / (n_labels - 1))
        stay[label] = 1.0 - epsilon
        return stay


def make_rule(perturbation: str, label_shares: np.ndarray) -> Rule:
    """The rule named ``perturbation`` for a dataset whose labels have the overall shares ``label_shares``."""
    shares = np.asarray(label_shares, dtype=float)
    n_labels = len(shares)
    if check_perturbation(perturbation) == "dirichlet-shares":
        if not (shares > 0).all():
            raise ParameterError("perturbation 'dirichlet-shares' needs every label to occur in the data; "
                                 f"label shares {np.round(shares, 4).tolist()}")
        prior = shares / shares.sum()
    else:
        prior = np.full(n_labels, 1.0 / n_labels)
    return Rule(perturbation, SHARED[perturbation], prior, CONCENTRATION[perturbation])


def uniform_replacement_law(shares: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per item, the law of a response after uniform replacement (:meth:`Rule.replaced_law`) and its cumulative
    form, for the counts kernel."""
    noise = make_rule("uniform", shares[0]).replaced_law(shares)
    cum = np.cumsum(noise, axis=1)
    cum[:, -1] = 1.0
    return noise, cum


@numba.njit(cache=True, inline="always")
def urn_label(u, urn, prior):
    """A label from the Polya urn ``urn`` (counts of earlier replacements), for uniform ``u``. ``prior`` is
    :meth:`Rule.urn`: C shares, then the concentration ``a``; label c has weight ``a prior_c + urn_c`` of the total
    ``a + sum(urn)``. An empty urn of concentration 0 draws from the shares. The drawn label is added to the urn."""
    n_labels = urn.shape[0]
    a = prior[ix(n_labels)]
    total = a
    for c in range(n_labels):
        total += urn[c]
    if total == 0.0:  # the first replacement of a slot under the one-hot limit
        a, total = 1.0, 1.0
    x = u * total
    c = 0
    acc = a * prior[0] + urn[0]
    while c < n_labels - 1 and x >= acc:
        c += 1
        acc += a * prior[ix(c)] + urn[ix(c)]
    urn[ix(c)] += 1
    return c


@numba.njit(cache=True, inline="always")
def replacement(v, label, shared, urn, prior):
    """The noise label that replaces ``label``, for uniform ``v``: from the slot's urn (``shared``) or another
    label drawn uniformly."""
    if shared:
        return urn_label(v, urn, prior)
    n_labels = urn.shape[0]
    other = min(int(v * (n_labels - 1)), n_labels - 2)
    return other + (other >= label)


@numba.njit(cache=True, inline="always")
def perturbed(rng, label, epsilon, shared, urn, prior):
    """``label``, or with probability ``epsilon`` its :func:`replacement`. One uniform per response."""
    u = rng.random()
    if u >= epsilon:
        return label
    return replacement(u / epsilon, label, shared, urn, prior)


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
def share_out(rng, m, old, shared, steps, shares):
    """Spread ``m`` replacements of one response of label ``old`` over the labels, into ``shares``: by the prior
    under a shared-noise rule (one response a slot, so its noise law averages out to the prior; ``steps`` from
    :meth:`Rule.steps`), uniformly over the ``C - 1`` others under the uniform rule. A multinomial, drawn as a
    chain of binomials."""
    n_labels = shares.shape[0]
    choices = n_labels - 1
    for c in range(n_labels):
        shares[c] = 0
        if m == 0:
            continue
        if shared:
            x = m if c == n_labels - 1 else binomial(rng, m, steps[c])
        elif c == old:
            continue
        else:
            x = m if choices == 1 else binomial(rng, m, 1.0 / choices)
            choices -= 1
        m -= x
        shares[c] = x


@numba.njit(cache=True, inline="always")
def dirichlet_noise(rng, m_a, m_b, chain, noise):
    """The labels of ``m_a`` replaced responses of A* and ``m_b`` of B*, drawn from one ``eta ~ Dirichlet(prior)``:
    the counts of all ``m_a + m_b`` by the chain of beta-binomials ``chain`` (:meth:`Rule.chain`), then the smaller
    side's as a uniform subset of them, drawn one at a time. Writes the smaller side's counts into ``noise[0]`` and
    the other's into ``noise[1]``; returns whether the smaller side is B* (``m_b < m_a``)."""
    n_labels = noise.shape[1]
    left = m_a + m_b
    for c in range(n_labels - 1):
        u = rng.random()
        lo, hi = 0, left
        while lo < hi:
            mid = (lo + hi) // 2
            if u < chain[c, ix(left), ix(mid)]:
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
            acc += noise[1, ix(c)]
        noise[1, ix(c)] -= 1
        noise[0, ix(c)] += 1
        left -= 1
    return m_b < m_a


def fire_law(k: int, epsilon: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """How many of ``n <= k`` responses are replaced, ``Binomial(n, epsilon)``, as alias tables (one uniform a
    draw, :func:`analysis.engine.lookup.draw_fired`): ``(start, prob, alias)``, the law of ``n`` in the block
    ``start[n]:start[n] + n + 1``."""
    from scipy.stats import binom  # here, not at the top: scipy.stats takes a second to import
    n = np.arange(k + 1)
    start = np.concatenate([[0], np.cumsum(n + 1)]).astype(np.int64)
    pmf = binom.pmf(n[None, :], n[:, None], epsilon)[np.tril_indices(k + 1)][None, :]  # row n: x = 0..n
    prob = np.empty_like(pmf)
    alias = np.empty(pmf.shape, dtype=np.int64)
    build_alias(pmf, start, prob, alias)
    return start, prob[0], alias[0]
