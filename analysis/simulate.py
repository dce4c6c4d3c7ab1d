"""Simulating the gold G, the ideal model A and the perturbed model B, and the permutation null (METHOD sections 3-4).

For each replicate: G and A are two independent draws of rater columns on the same items; B is a third draw whose
responses are each, with probability ``epsilon``, replaced by a noise label. The ``perturbation`` rule says which:

* ``"dirichlet"`` (VET's distortion, the default): per drawn item slot of B, a noise law
  ``eta ~ Dirichlet(1/C, ..., 1/C)`` shared by the slot's replaced responses. It is drawn implicitly, as a Polya
  urn: the j-th replacement of a slot is label c with probability ``(1/C + r_c) / (1 + j - 1)``, ``r_c`` counting
  the slot's earlier replacements that went to c. One uniform per response, no gamma variates.
* ``"uniform"``: each replaced response takes one of the other ``C - 1`` labels uniformly.

Under the null, the ``2K'`` rater columns of A and B are pooled per group (globally for S1, per batch for S3, per
item for S2) and split uniformly at random, *without replacement*, into two halves of ``K'``: A* and B*. At
``epsilon = 0`` the split has exactly the law of (A, B), so the null is calibrated by construction.

Two kernels: :func:`_grouped_replicates` draws responses per (item slot, rater column) and serves S1, S2 and S3;
:func:`_count_replicates` is S2 on per-item counts (METHOD section 9): G and A are ``Multinomial(K', p_i)``;
B has ``M ~ Binomial(K', epsilon)`` noise responses and ``K' - M`` from ``p_i``; under the null,
``H ~ Hypergeometric(2K'; K', K')`` of B's columns land in A*, so A* holds ``Binomial(H, epsilon)`` noise responses
and B* ``Binomial(K' - H, epsilon)``, both drawn from the same urn of the slot. Both count each slot's labels as
they are drawn and add the slot to the replicate's metric sums (:func:`analysis.metrics.add_item`), so no response
and no per-item array is kept; each replicate ends as one row of eight deltas.
"""

from __future__ import annotations

import numba
import numpy as np
from scipy.stats import hypergeom

from analysis.data import AnnotationDataset
from analysis.errors import ParameterError
from analysis.metrics import METRICS, SUMS, add_item, divergence_tables, finish_deltas
from analysis.samplers import (
    BINOMIAL_FROM,
    add_counts,
    check_size,
    draw_label,
    draw_slots,
    group_layout,
    make_plan,
    uniform_index,
)

METHODS = ("auto", "counts", "responses")
PERTURBATIONS = ("dirichlet", "uniform")
DIRICHLET, UNIFORM = 0, 1  # kernel codes of PERTURBATIONS
SMALL_BINOMIAL = 16  # below this many trials a binomial is a count of uniforms (faster than rng.binomial in numba)


def check_perturbation(perturbation: str) -> str:
    """The perturbation rule's name, or a :class:`ParameterError` naming the choices."""
    if perturbation not in PERTURBATIONS:
        raise ParameterError(f"unknown perturbation {perturbation!r}; choose one of {', '.join(PERTURBATIONS)}")
    return perturbation


# ---------------------------------------------------------------- perturbation of B

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
def perturbed(rng, label, epsilon, rule, urn):
    """``label``, or with probability ``epsilon`` a noise label: from the slot's urn (``DIRICHLET``) or another label
    drawn uniformly (``UNIFORM``). One uniform per response."""
    u = rng.random()
    if u >= epsilon:
        return label
    v = u / epsilon
    if rule == DIRICHLET:
        return urn_label(v, urn)
    n_labels = urn.shape[0]
    other = min(int(v * (n_labels - 1)), n_labels - 2)
    return other + (other >= label)


@numba.njit(cache=True)
def perturb_labels(rng, labels, n_slots, k, epsilon, rule, urn):
    """Perturb the responses in the first ``n_slots`` rows of ``labels`` in place, one urn per row (item slot)."""
    for j in range(n_slots):
        urn[:] = 0
        for c in range(k):
            labels[j, c] = perturbed(rng, labels[j, c], epsilon, rule, urn)


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
def add_noise(rng, m, rule, urn, noise_shares, noise_cum, row, out, j):
    """Add ``m`` noise responses to ``out[j]``: from the slot's urn (dirichlet) or from ``noise_shares[row]``."""
    if rule == DIRICHLET:
        for _ in range(m):
            out[j, urn_label(rng.random(), urn)] += 1
    else:
        add_counts(rng, m, noise_shares, row, noise_cum, out, j)


def uniform_noise(shares: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per item, the law of a response after uniform replacement, ``(1 - p_c) / (C - 1)``, and its cumulative form."""
    noise = (1.0 - shares) / (shares.shape[1] - 1)
    cum = np.cumsum(noise, axis=1)
    cum[:, -1] = 1.0
    return noise, cum


# ---------------------------------------------------------------- the null split

def split_law(k: int) -> np.ndarray:
    """Cumulative law of ``H ~ Hypergeometric(2k; k, k)``: how many of B's ``k`` columns a random half holds."""
    cdf = hypergeom(2 * k, k, k).cdf(np.arange(k + 1))
    cdf[-1] = 1.0
    return cdf


@numba.njit(cache=True, inline="always")
def draw_from_cdf(rng, cdf):
    """An index from a cumulative law by binary search on one uniform."""
    u = rng.random()
    lo, hi = 0, cdf.shape[0] - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if u < cdf[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


@numba.njit(cache=True)
def _grouped_replicates(rng, item_start, items, rater_start, matrix_start, matrix, item_cum, single_group,
                        group_size, n, k, epsilon, rule, null, h_cdf, kl_table, js_table, out):
    """Replicates on responses, fused: labels are counted as they are drawn, never stored.

    All ``2K'`` pooled columns of A and B are iid uniform draws of the group's raters, so a uniform half of them
    is ``K'`` fresh columns of which ``H ~ Hypergeometric(2K'; K', K')`` are B's: the null draws A* as ``K'``
    columns of which ``H`` are perturbed, and B* as ``K'`` columns of which ``K' - H`` are, once per group (per
    replicate for S1, per batch for S3, per item for S2); which columns does not matter, as they are iid. B's
    perturbed responses of one slot share its urn. A rater who did not label a drawn item is replaced by a draw
    from the item's own labels (the ragged-batch rule). Each slot's counts go straight into the replicate's metric
    sums, so no per-item array is kept. The innermost loops call only inlined helpers: a call that takes the
    generator costs more than a response.
    """
    n_labels = item_cum.shape[1]
    n_drawn, per_group = group_layout(n, single_group, group_size)
    n_slots = n_drawn * per_group
    slot_group = np.empty(n_slots, dtype=np.int64)
    slot_local = np.empty(n_slots, dtype=np.int64)
    columns = np.empty((3, k), dtype=np.int64)  # G, A (or A*), B (or B*)
    n_perturbed = np.zeros(3, dtype=np.int64)
    urn = np.zeros(n_labels, dtype=np.int64)
    counts = np.zeros((3, 1, n_labels), dtype=np.int64)  # one slot's counts of G, A, B
    sums = np.zeros(SUMS)
    conf_a = np.zeros((n_labels, n_labels), dtype=np.int64)
    conf_b = np.zeros((n_labels, n_labels), dtype=np.int64)
    use_urn = epsilon > 0.0 and rule == DIRICHLET
    for r in range(out.shape[0]):
        draw_slots(rng, item_start, single_group, group_size, n, slot_group, slot_local)
        sums[:] = 0.0
        conf_a[:] = 0
        conf_b[:] = 0
        for d in range(n_drawn):
            group = slot_group[d * per_group]
            n_raters = rater_start[group + 1] - rater_start[group]
            for side in range(3):
                for c in range(k):
                    columns[side, c] = uniform_index(rng, n_raters)
            h = draw_from_cdf(rng, h_cdf) if null else 0  # how many of B's columns land in A*
            if epsilon > 0.0:
                n_perturbed[1] = h
                n_perturbed[2] = k - h
            base = matrix_start[group]
            for s in range(per_group):
                j = d * per_group + s
                item = items[item_start[group] + slot_local[j]]
                row = base + slot_local[j] * n_raters
                if use_urn:
                    for c in range(n_labels):
                        urn[c] = 0
                for side in range(3):
                    for c in range(n_labels):
                        counts[side, 0, c] = 0
                    for c in range(k):
                        label = matrix[row + columns[side, c]]
                        if label < 0:
                            label = draw_label(rng, item_cum, item)
                        if c < n_perturbed[side]:
                            label = perturbed(rng, label, epsilon, rule, urn)
                        counts[side, 0, label] += 1
                add_item(counts[0], counts[1], counts[2], 0, kl_table, js_table, conf_a, conf_b, sums)
        finish_deltas(sums, conf_a, conf_b, n_slots, k, n_labels, out[r])


@numba.njit(cache=True)
def _count_replicates(rng, shares, cum, noise_shares, noise_cum, n, k, epsilon, rule, null, h_cdf, kl_table,
                      js_table, out):
    n_items, n_labels = shares.shape
    g = np.zeros((1, n_labels), dtype=np.int64)  # one item's counts
    a = np.zeros((1, n_labels), dtype=np.int64)
    b = np.zeros((1, n_labels), dtype=np.int64)
    urn = np.zeros(n_labels, dtype=np.int64)
    sums = np.zeros(SUMS)
    conf_a = np.zeros((n_labels, n_labels), dtype=np.int64)
    conf_b = np.zeros((n_labels, n_labels), dtype=np.int64)
    for r in range(out.shape[0]):
        sums[:] = 0.0
        conf_a[:] = 0
        conf_b[:] = 0
        for j in range(n):
            g[:] = 0
            a[:] = 0
            b[:] = 0
            item = uniform_index(rng, n_items)
            add_counts(rng, k, shares, item, cum, g, 0)
            if null:
                h = draw_from_cdf(rng, h_cdf)  # B's columns in A*
                m_a = binomial(rng, h, epsilon)
                m_b = binomial(rng, k - h, epsilon)
            else:
                m_a = 0
                m_b = binomial(rng, k, epsilon)
            add_counts(rng, k - m_a, shares, item, cum, a, 0)
            add_counts(rng, k - m_b, shares, item, cum, b, 0)
            urn[:] = 0
            add_noise(rng, m_a, rule, urn, noise_shares, noise_cum, item, a, 0)
            add_noise(rng, m_b, rule, urn, noise_shares, noise_cum, item, b, 0)
            add_item(g, a, b, 0, kl_table, js_table, conf_a, conf_b, sums)
        finish_deltas(sums, conf_a, conf_b, n, k, n_labels, out[r])


class Simulator:
    """Everything one (dataset, sampler) pair needs to simulate replicates; built once, used for every cell.

    ``method="responses"`` materialises every response (the only form for S1 and S3); ``"counts"`` runs S2 on
    per-item counts. ``"auto"`` (the default) uses counts for S2 from ``BINOMIAL_FROM`` responses per item on,
    where binomial draws beat one draw per response, and responses below it (measured faster there).
    """

    def __init__(self, ds: AnnotationDataset, sampler: str, method: str = "auto"):
        if method not in METHODS:
            raise ParameterError(f"unknown method {method!r}; choose one of {METHODS}")
        self.plan = make_plan(ds, sampler)
        self.sampler = self.plan.sampler
        self.method = method
        self.noise = uniform_noise(self.plan.item_share)

    def uses_counts(self, k: int) -> bool:
        """Whether replicates of ``k`` responses per item run on counts."""
        return self.sampler == "S2" and (self.method == "counts" or (self.method == "auto" and k >= BINOMIAL_FROM))

    def replicates(self, n: int, k: int, epsilon: float, n_samples: int, rng: np.random.Generator,
                   null: bool, perturbation: str = "dirichlet") -> np.ndarray:
        """Deltas of ``n_samples`` replicates, shape (n_samples, 8) in METRICS order."""
        check_size(n, k)
        rule = PERTURBATIONS.index(check_perturbation(perturbation))
        if not 0.0 <= epsilon <= 1.0:
            raise ParameterError(f"epsilon must lie in [0, 1], got {epsilon}")
        if n_samples < 1:
            raise ParameterError(f"n_samples must be >= 1, got {n_samples}")
        out = np.empty((n_samples, len(METRICS)))
        tables = divergence_tables(k, self.plan.n_labels)
        if self.uses_counts(k):
            _count_replicates(rng, self.plan.item_share, self.plan.item_cum, *self.noise, n, k, float(epsilon), rule,
                              bool(null), split_law(k), *tables, out)
        else:
            _grouped_replicates(rng, *self.plan.kernel_args(), n, k, float(epsilon), rule, bool(null), split_law(k),
                                *tables, out)
        return out
