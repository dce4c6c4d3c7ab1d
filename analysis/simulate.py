"""Simulating the gold G, the ideal model A and the perturbed model B, and the pooled null (METHOD sections 3-4).

For each replicate: G and A are two independent draws of rater columns on the same items; B is a third draw whose
responses are each, with probability ``epsilon``, replaced by a label drawn uniformly from the other labels. Under
the null, the ``2K'`` rater columns of A and B are pooled per group (globally for S1, per batch for S3, per item
for S2) and A* and B* each draw ``K'`` columns from the pool with replacement. Each replicate ends as one row of
eight deltas, computed by :func:`analysis.metrics.fill_deltas` without keeping the replicate.

Two kernels: :func:`_grouped_replicates` materialises responses per (item slot, column) and serves S1, S2 and S3;
:func:`_count_replicates` is S2 on per-item counts (``Multinomial(K', p_item)``), the fast path for S2.
"""

from __future__ import annotations

import numba
import numpy as np

from analysis.data import AnnotationDataset
from analysis.errors import ParameterError
from analysis.metrics import METRICS, divergence_tables, fill_deltas
from analysis.samplers import (
    BINOMIAL_FROM,
    check_size,
    draw_columns,
    draw_counts,
    draw_slots,
    group_layout,
    make_plan,
    uniform_index,
)

METHODS = ("auto", "counts", "responses")


@numba.njit(cache=True, inline="always")
def perturbed(rng, label, epsilon, n_labels):
    """``label``, or with probability ``epsilon`` one of the other labels uniformly (one uniform draw)."""
    u = rng.random()
    if u >= epsilon:
        return label
    other = min(int(u / epsilon * (n_labels - 1)), n_labels - 2)
    return other + (other >= label)


@numba.njit(cache=True)
def perturb_labels(rng, labels, n_slots, k, epsilon, n_labels):
    """Perturb every response of the first ``n_slots`` rows of ``labels`` in place."""
    for j in range(n_slots):
        for c in range(k):
            labels[j, c] = perturbed(rng, labels[j, c], epsilon, n_labels)


@numba.njit(cache=True)
def perturb_counts(rng, counts, j, epsilon, before):
    """Perturb the responses behind the counts of row ``j`` in place (``before`` is scratch of one row)."""
    n_labels = counts.shape[1]
    for c in range(n_labels):
        before[c] = counts[j, c]
        counts[j, c] = 0
    for c in range(n_labels):
        for _ in range(before[c]):
            counts[j, perturbed(rng, c, epsilon, n_labels)] += 1


@numba.njit(cache=True)
def _count_labels(labels, n_slots, k, counts):
    counts[:n_slots] = 0
    for j in range(n_slots):
        for c in range(k):
            counts[j, labels[j, c]] += 1


@numba.njit(cache=True)
def _pooled_counts(rng, lab_a, lab_b, n_slots, per_group, k, counts):
    """Counts of a model that draws ``k`` columns per group from the pool of A's and B's ``2k`` columns."""
    picks = np.empty(k, dtype=np.int64)
    counts[:n_slots] = 0
    for g in range(n_slots // per_group):
        for c in range(k):
            picks[c] = uniform_index(rng, 2 * k)
        for s in range(per_group):
            j = g * per_group + s
            for c in range(k):
                p = picks[c]
                label = lab_a[j, p] if p < k else lab_b[j, p - k]
                counts[j, label] += 1


@numba.njit(cache=True)
def _grouped_replicates(rng, item_start, items, rater_start, matrix_start, matrix, item_cum, single_group,
                        group_size, n, k, epsilon, null, kl_table, js_table, out):
    n_labels = item_cum.shape[1]
    n_drawn, per_group = group_layout(n, single_group, group_size)
    n_slots = n_drawn * per_group
    slot_group = np.empty(n_slots, dtype=np.int64)
    slot_local = np.empty(n_slots, dtype=np.int64)
    columns = np.empty((n_drawn, k), dtype=np.int64)
    lab_g = np.empty((n_slots, k), dtype=np.int8)
    lab_a = np.empty((n_slots, k), dtype=np.int8)
    lab_b = np.empty((n_slots, k), dtype=np.int8)
    g = np.zeros((n_slots, n_labels), dtype=np.int64)
    a = np.zeros((n_slots, n_labels), dtype=np.int64)
    b = np.zeros((n_slots, n_labels), dtype=np.int64)
    conf_a = np.zeros((n_labels, n_labels), dtype=np.int64)
    conf_b = np.zeros((n_labels, n_labels), dtype=np.int64)
    for r in range(out.shape[0]):
        draw_slots(rng, item_start, single_group, group_size, n, slot_group, slot_local)
        for labels in (lab_g, lab_a, lab_b):
            draw_columns(rng, item_start, items, rater_start, matrix_start, matrix, item_cum, n_slots, per_group,
                         slot_group, slot_local, k, columns, labels)
        if epsilon > 0.0:
            perturb_labels(rng, lab_b, n_slots, k, epsilon, n_labels)
        _count_labels(lab_g, n_slots, k, g)
        if null:
            _pooled_counts(rng, lab_a, lab_b, n_slots, per_group, k, a)
            _pooled_counts(rng, lab_a, lab_b, n_slots, per_group, k, b)
        else:
            _count_labels(lab_a, n_slots, k, a)
            _count_labels(lab_b, n_slots, k, b)
        fill_deltas(g, a, b, n_slots, k, kl_table, js_table, conf_a, conf_b, out[r])


@numba.njit(cache=True)
def _count_replicates(rng, shares, cum, n, k, epsilon, null, kl_table, js_table, out):
    n_items, n_labels = shares.shape
    g = np.zeros((n, n_labels), dtype=np.int64)
    a = np.zeros((n, n_labels), dtype=np.int64)
    b = np.zeros((n, n_labels), dtype=np.int64)
    pool_shares = np.empty((1, n_labels))
    pool_cum = np.empty((1, n_labels))
    before = np.empty(n_labels, dtype=np.int64)
    conf_a = np.zeros((n_labels, n_labels), dtype=np.int64)
    conf_b = np.zeros((n_labels, n_labels), dtype=np.int64)
    for r in range(out.shape[0]):
        for j in range(n):
            item = uniform_index(rng, n_items)
            draw_counts(rng, k, shares, item, cum, g, j)
            draw_counts(rng, k, shares, item, cum, a, j)
            draw_counts(rng, k, shares, item, cum, b, j)
            if epsilon > 0.0:
                perturb_counts(rng, b, j, epsilon, before)
            if null:
                total = 0.0
                for c in range(n_labels):
                    pool_shares[0, c] = (a[j, c] + b[j, c]) / (2.0 * k)
                    total += pool_shares[0, c]
                    pool_cum[0, c] = total
                pool_cum[0, n_labels - 1] = 1.0
                draw_counts(rng, k, pool_shares, 0, pool_cum, a, j)
                draw_counts(rng, k, pool_shares, 0, pool_cum, b, j)
        fill_deltas(g, a, b, n, k, kl_table, js_table, conf_a, conf_b, out[r])


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

    def replicates(self, n: int, k: int, epsilon: float, n_samples: int, rng: np.random.Generator,
                   null: bool) -> np.ndarray:
        """Deltas of ``n_samples`` replicates, shape (n_samples, 8) in METRICS order."""
        check_size(n, k)
        if not 0.0 <= epsilon <= 1.0:
            raise ParameterError(f"epsilon must lie in [0, 1], got {epsilon}")
        if n_samples < 1:
            raise ParameterError(f"n_samples must be >= 1, got {n_samples}")
        out = np.empty((n_samples, len(METRICS)))
        tables = divergence_tables(k, self.plan.n_labels)
        use_counts = self.sampler == "S2" and (
            self.method == "counts" or (self.method == "auto" and k >= BINOMIAL_FROM))
        if use_counts:
            _count_replicates(rng, self.plan.item_share, self.plan.item_cum, n, k, float(epsilon), bool(null), *tables, out)
        else:
            _grouped_replicates(rng, *self.plan.kernel_args(), n, k, float(epsilon), bool(null), *tables, out)
        return out
