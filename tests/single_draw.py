"""Readable single draws of the engine's steps, for the tests: one bootstrap sample of a sampler, B's
perturbation of a table of labels, and one replicate's metric sums, each as the kernels do it, one step at a time."""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from analysis.data.annotations import AnnotationDataset
from analysis.engine.draws import draw_label, draw_slots, uniform_index
from analysis.engine.metrics import accumulator, add_item, store
from analysis.engine.rule import perturbed
from analysis.engine.samplers import check_size, group_layout, make_layout


@numba.njit(cache=True)
def draw_columns(rng, item_start, items, rater_start, matrix_start, matrix, item_cum, n_slots, per_group,
                 slot_group, slot_local, k, columns, labels):
    """Draw ``k`` rater columns per drawn group into ``columns`` and the slots' labels into ``labels``."""
    for g in range(n_slots // per_group):
        group = slot_group[g * per_group]
        n_raters = rater_start[group + 1] - rater_start[group]
        for c in range(k):
            columns[g, c] = uniform_index(rng, n_raters)
        base = matrix_start[group]
        for s in range(per_group):
            j = g * per_group + s
            row = base + slot_local[j] * n_raters
            for c in range(k):
                label = matrix[row + columns[g, c]]
                if label < 0:
                    label = draw_label(rng, item_cum, items[item_start[group] + slot_local[j]])
                labels[j, c] = label


@dataclass(frozen=True)
class Sample:
    """One drawn model: per slot its global item, its group and its labels; per group its rater columns."""

    items: np.ndarray  # (slots,) global item index
    groups: np.ndarray  # (slots,) group index of the plan
    raters: np.ndarray  # (drawn groups, K) global rater index of each column
    labels: np.ndarray  # (slots, K) label codes


def sample(ds: AnnotationDataset, sampler: str, n: int, k: int, seed: int) -> Sample:
    """Draw one bootstrap sample of ``n`` items with ``k`` responses each, as the simulation would."""
    check_size(n, k)
    plan = make_layout(ds, sampler)
    rng = np.random.default_rng(seed)
    slot_group = np.empty(n, dtype=np.int64)
    slot_local = np.empty(n, dtype=np.int64)
    n_slots = draw_slots(rng, plan.item_start, plan.single_group, plan.group_size, n, slot_group, slot_local)
    per_group = group_layout(n, plan.single_group, plan.group_size)[1]
    columns = np.empty((n_slots // per_group, k), dtype=np.int64)
    labels = np.empty((n_slots, k), dtype=np.int8)
    draw_columns(rng, plan.item_start, plan.items, plan.rater_start, plan.matrix_start, plan.matrix, plan.item_cum,
                 n_slots, per_group, slot_group, slot_local, k, columns, labels)
    group = slot_group[:n_slots]
    first_slot = group[::per_group]
    return Sample(
        items=plan.items[plan.item_start[group] + slot_local[:n_slots]],
        groups=group,
        raters=plan.raters[plan.rater_start[first_slot][:, None] + columns],
        labels=labels,
    )


@numba.njit(cache=True)
def perturb_labels(rng, labels, n_slots, k, epsilon, shared, urn, prior):
    """Perturb the responses in the first ``n_slots`` rows of ``labels`` in place, one urn per row (item slot)."""
    for j in range(n_slots):
        urn[:] = 0
        for c in range(k):
            labels[j, c] = perturbed(rng, labels[j, c], epsilon, shared, urn, prior)


@numba.njit(cache=True)
def fill_sums(g, a, b, n_items, divergence, sums, confusion):
    """Store the sums of counts ``g``, ``a``, ``b`` (first ``n_items`` rows) as a kernel does, item by item."""
    acc = accumulator(g.shape[1])
    for j in range(n_items):
        add_item(g, a, b, j, divergence, acc, 1)
    store(acc, sums, confusion)
