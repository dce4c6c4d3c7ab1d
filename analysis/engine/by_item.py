"""The by-item kernel: the direct kernel's law, worked per distinct item of a drawn group (S1, S3)."""

from __future__ import annotations

import math
from typing import NamedTuple

import numba
import numpy as np

from analysis.metrics import accumulator, add_item, add_pair, clear, pair_rows, store
from analysis.engine.rule import dirichlet_noise, first_replaced, perturbed, replacement, share_out
from analysis.engine.split import draw_columns, weigh_columns
from analysis.engine.tables import alias_draw, draw_fired
from analysis.samplers import group_layout
from analysis.engine.plan import BY_LABEL_FROM, GATHER_FROM, SKIP_FROM
from analysis.engine.draws import binomial, draw_label, draw_multiplicities, uniform_index



def by_rater(groups, n_labels: int) -> np.ndarray:
    """The label matrix of each group read rater by rater (its block transposed: raters x items), a missing label
    written as ``n_labels``: the by-item kernel then counts a drawn group's labels for all its items at once."""
    item_start, _, rater_start, matrix_start, matrix = groups[:5]
    out = np.empty(matrix.shape[0], dtype=np.int8)
    for g in range(item_start.shape[0] - 1):
        lo, hi = matrix_start[g], matrix_start[g + 1]
        block = matrix[lo:hi].reshape(item_start[g + 1] - item_start[g], rater_start[g + 1] - rater_start[g])
        out[lo:hi] = np.where(block < 0, n_labels, block).T.ravel()
    return out


@numba.njit(cache=True)
def count_by_rater(labels, start, n_items, part_rater, part_weight, part_len, shift, packed):
    """Every item's label counts per part of a drawn group's columns, packed ``shift`` bits a label (the missing
    label last) into ``packed[part, item]``: one pass over the group's ``labels`` (:func:`by_rater`) per distinct
    rater of a part, the same operation for every item (a loop the compiler vectorises)."""
    for part in range(5):
        counts = packed[part]  # one-dimensional views: the loop below then compiles to vector instructions
        counts[:] = 0
        for j in range(part_len[part]):
            w = part_weight[part, j]
            row = start + part_rater[part, j] * n_items
            rater = labels[row:row + n_items]
            for i in range(n_items):
                counts[i] += w << (shift * np.int64(rater[i]))


class Scratch(NamedTuple):
    """The by-item kernel's work arrays, made once per call (see :func:`scratch`)."""

    mult: np.ndarray  # slots per item of a drawn group
    columns: np.ndarray  # (3, k): the rater columns of G, A (or A*), B (or B*)
    n_perturbed: np.ndarray  # (3,): how many of each side's columns are B's (perturbable)
    fixed: np.ndarray  # (3, labels): an item's counts over its columns that are never replaced
    pert: np.ndarray  # (3, labels): ... over its perturbable columns
    missing: np.ndarray  # (2, 3): how many of those columns have no label (fixed, perturbable)
    pert_label: np.ndarray  # (2k,): the perturbable responses listed, A* first
    pert_side: np.ndarray
    part_rater: np.ndarray  # (5, k): a group's columns by part (G; A fixed, A perturbable; B ...) as distinct raters
    part_weight: np.ndarray  # ... and their numbers of columns
    part_len: np.ndarray
    seen: np.ndarray
    outcomes: np.ndarray  # slots per perturbation outcome of one item
    counts: np.ndarray  # (3, 1, labels): one slot's counts of G, A, B
    slot_pert: np.ndarray  # (3, labels): one slot's perturbable counts
    noised: np.ndarray  # (3,): a slot's replaced responses per side (shared noise)
    noise: np.ndarray  # (2, labels): ... and their labels beyond the noise tables
    urn: np.ndarray
    spread: np.ndarray  # one response's replacements shared out over the labels
    part_code: np.ndarray  # (5,): column law: an item's code per part
    mass: np.ndarray  # ... the slot's law over (gold, A*, B*) triples
    touched: np.ndarray  # ... and its triples of positive mass, in order
    packed: np.ndarray  # rater major: per part, every item's counts packed ``shift`` bits a label


@numba.njit(cache=True)
def scratch(groups, draw, pairs, options, perturbation, shift):
    """The work arrays of one call of :func:`by_item_replicates`."""
    k, n_labels = draw.k, groups.item_cum.shape[1]
    most_items = np.max(groups.item_start[1:] - groups.item_start[:-1])
    n_triples = pair_rows(pairs.terms) ** 3 if options.column_law else 1
    return Scratch(np.zeros(most_items, dtype=np.int64), np.empty((3, k), dtype=np.int64), np.zeros(3, dtype=np.int64),
                   np.zeros((3, n_labels), dtype=np.int64), np.zeros((3, n_labels), dtype=np.int64),
                   np.zeros((2, 3), dtype=np.int64), np.empty(2 * k, dtype=np.int64), np.empty(2 * k, dtype=np.int64),
                   np.empty((5, k), dtype=np.int64), np.empty((5, k), dtype=np.int64), np.zeros(5, dtype=np.int64),
                   np.full((5, np.max(groups.rater_start[1:] - groups.rater_start[:-1])), -1, dtype=np.int64),
                   np.zeros(np.max(perturbation.n_out), dtype=np.int64), np.zeros((3, 1, n_labels), dtype=np.int64),
                   np.zeros((3, n_labels), dtype=np.int64), np.zeros(3, dtype=np.int64),
                   np.zeros((2, n_labels), dtype=np.int64), np.zeros(n_labels, dtype=np.int64),
                   np.zeros(n_labels, dtype=np.int64), np.zeros(5, dtype=np.int64), np.zeros(n_triples),
                   np.empty(n_triples, dtype=np.int64),
                   np.zeros((5, most_items if options.rater_major else 1), dtype=np.int64))


@numba.njit(cache=True, inline="always")
def column_law_group(rng, groups, pairs, perturbation, work, acc, group, n_items, n_raters, k, per_group):
    """Column law (S1): every item's perturbation law spread over (gold, A*, B*) triples of pair-table rows, then the
    group's slots over the triples by one multinomial, drawn as a chain of binomials."""
    code, row_of, first_row = perturbation.code, perturbation.row_of, pairs.first
    mass, touched, part_code = work.mass, work.touched, work.part_code
    n_vectors = pair_rows(pairs.terms)
    h = work.n_perturbed[1]
    width = perturbation.n_out[h]
    width_b = perturbation.start[k - h + 1] - perturbation.start[k - h]
    n_touched = 0
    total = 0.0
    for local in range(n_items):
        row = groups.matrix_start[group] + local * n_raters
        for part in range(5):
            e = 0
            for j in range(work.part_len[part]):
                e += work.part_weight[part, j] * code[groups.matrix[row + work.part_rater[part, j]]]
            part_code[part] = e
        tg = row_of[part_code[0]] - first_row
        offset = perturbation.base[h] + ((row_of[part_code[2]] - perturbation.start[h]) * width_b
                                         + row_of[part_code[4]] - perturbation.start[k - h]) * width
        for o in range(width):
            chance = perturbation.pmf[offset + o]
            if chance == 0.0:
                continue
            ta = row_of[part_code[1] + perturbation.comp_code[perturbation.out_a[h, o]]] - first_row
            tb = row_of[part_code[3] + perturbation.comp_code[perturbation.out_b[h, o]]] - first_row
            t = (tg * n_vectors + ta) * n_vectors + tb
            if mass[t] == 0.0:
                touched[n_touched] = t
                n_touched += 1
            mass[t] += chance
            total += chance
    left = per_group
    for j in range(n_touched):
        t = touched[j]
        chance = mass[t]
        mass[t] = 0.0
        if left == 0:
            continue
        x = left if j == n_touched - 1 or chance >= total else binomial(rng, left, chance / total)
        total -= chance
        left -= x
        if x > 0:
            add_pair(t // (n_vectors * n_vectors), (t // n_vectors) % n_vectors, t % n_vectors, pairs.terms, acc, x)


@numba.njit(cache=True, inline="always")
def read_item(groups, options, work, local, row, listed, shift):
    """An item's counts over its fixed and its perturbable columns, each distinct rater's label read once and
    counted with its weight (or unpacked from the group's counts read rater by rater); lists the perturbable
    responses one by one where ``listed``, and returns how many."""
    fixed, pert, missing = work.fixed, work.pert, work.missing
    n_labels = fixed.shape[1]
    field = (1 << shift) - 1
    fixed[:] = 0
    pert[:] = 0
    missing[:] = 0
    p = 0
    for part in range(5):
        side = (part + 1) // 2
        perturbable = part == 2 or part == 4
        if options.rater_major:  # the counts were read for the whole group: unpack them
            word = work.packed[part, local]
            for c in range(n_labels):
                x = (word >> (shift * c)) & field
                if perturbable:
                    pert[side, c] += x
                else:
                    fixed[side, c] += x
            missing[1 if perturbable else 0, side] += (word >> (shift * n_labels)) & field
            if not (perturbable and listed):
                continue
        for j in range(work.part_len[part]):
            label = groups.matrix[row + work.part_rater[part, j]]
            w = work.part_weight[part, j]
            if perturbable:
                if listed:
                    for _ in range(w):
                        work.pert_label[p] = label
                        work.pert_side[p] = side
                        p += 1
                if options.rater_major:
                    continue
                if label < 0:
                    missing[1, side] += w
                else:
                    pert[side, label] += w
            elif label < 0:
                missing[0, side] += w
            else:
                fixed[side, label] += w
    return p


@numba.njit(cache=True, inline="always")
def add_outcomes(rng, pairs, perturbation, divergence, acc, work, m, k):
    """An item without missing labels: each of its ``m`` slots' replaced vectors in one draw from the perturbation
    tables (:mod:`analysis.engine.perturbation`), added per slot, or counted per outcome and added once each."""
    code, row_of, first_row = perturbation.code, perturbation.row_of, pairs.first
    fixed, pert, counts, outcomes = work.fixed, work.pert, work.counts, work.outcomes
    n_labels = fixed.shape[1]
    h = work.n_perturbed[1]
    xa = 0
    xb = 0
    for c in range(n_labels):
        xa += pert[1, c] * code[c]
        xb += pert[2, c] * code[c]
    start = perturbation.start
    width = perturbation.n_out[h]
    offset = perturbation.base[h] + ((row_of[xa] - start[h]) * (start[k - h + 1] - start[k - h]) + row_of[xb]
                                     - start[k - h]) * width
    e_g = e_a = e_b = 0  # the fixed responses' codes, for the pair tables
    for c in range(n_labels):
        counts[0, 0, c] = fixed[0, c]
        e_g += fixed[0, c] * code[c]
        e_a += fixed[1, c] * code[c]
        e_b += fixed[2, c] * code[c]
    tg = row_of[e_g] - first_row
    gather = m >= GATHER_FROM * width  # count the slots per outcome, then add each outcome once
    if gather:
        outcomes[:width] = 0
    for _ in range(m):
        o = alias_draw(rng, perturbation.prob, perturbation.alias, offset, width)
        if gather:
            outcomes[o] += 1
        else:
            add_outcome(pairs, perturbation, divergence, acc, work, tg, e_a, e_b, h, o, 1)
    if gather:
        for o in range(width):
            if outcomes[o] > 0:
                add_outcome(pairs, perturbation, divergence, acc, work, tg, e_a, e_b, h, o, outcomes[o])


@numba.njit(cache=True, inline="always")
def add_outcome(pairs, perturbation, divergence, acc, work, tg, e_a, e_b, h, o, weight):
    """Add ``weight`` slots of an item whose perturbable responses came out as outcome ``o``: by the pair tables
    (from the fixed responses' codes ``e_a``, ``e_b`` and G's row ``tg``), or on top of its fixed counts."""
    comp_a, comp_b = perturbation.out_a[h, o], perturbation.out_b[h, o]
    if pairs.paired:
        row_of, comp_code, first_row = perturbation.row_of, perturbation.comp_code, pairs.first
        add_pair(tg, row_of[e_a + comp_code[comp_a]] - first_row, row_of[e_b + comp_code[comp_b]] - first_row,
                 pairs.terms, acc, weight)
        return
    counts, fixed = work.counts, work.fixed
    for c in range(counts.shape[2]):
        counts[1, 0, c] = fixed[1, c] + perturbation.comp[comp_a, c]
        counts[2, 0, c] = fixed[2, c] + perturbation.comp[comp_b, c]
    add_item(counts[0], counts[1], counts[2], 0, divergence, acc, weight)


@numba.njit(cache=True, inline="always")
def add_split(rng, draw, divergence, acc, work, m, keep_all, log_keep, n_pert):
    """Many slots keep every response: ``Binomial(m, keep_all)`` of them enter as one weighted item; the others draw
    their first replaced response from the truncated geometric law and the rest one by one or, with a single
    perturbable response, share out its replacement labels by a multinomial."""
    counts, fixed, pert = work.counts, work.fixed, work.pert
    n_labels = fixed.shape[1]
    kept = m if keep_all >= 1.0 else binomial(rng, m, keep_all)
    for side in range(3):
        for c in range(n_labels):
            counts[side, 0, c] = fixed[side, c] + pert[side, c]
    if kept > 0:
        add_item(counts[0], counts[1], counts[2], 0, divergence, acc, kept)
    m -= kept
    if m >= n_labels and n_pert == 1:  # the one replaced response takes its labels by a multinomial
        old = work.pert_label[0]
        side = work.pert_side[0]
        counts[side, 0, old] -= 1
        share_out(rng, m, old, draw.shared, draw.steps, work.spread)
        for c in range(n_labels):
            if work.spread[c] > 0:
                counts[side, 0, c] += 1
                add_item(counts[0], counts[1], counts[2], 0, divergence, acc, work.spread[c])
                counts[side, 0, c] -= 1
        return
    for _ in range(m):  # slots that replace at least one response
        counts[:, 0, :] = fixed
        work.urn[:] = 0
        first = first_replaced(rng.random(), n_pert, keep_all, log_keep)
        for q in range(n_pert):
            label = work.pert_label[q]
            if q == first:
                label = replacement(rng.random(), label, draw.shared, work.urn, draw.prior)
            elif q > first:
                label = perturbed(rng, label, draw.epsilon, draw.shared, work.urn, draw.prior)
            counts[work.pert_side[q], 0, label] += 1
        add_item(counts[0], counts[1], counts[2], 0, divergence, acc, 1)


@numba.njit(cache=True, inline="always")
def by_label_noise(rng, draw, chances, noise_tables, work, item, item_cum):
    """One slot, with many perturbable responses per label: ``Binomial(n_c, epsilon)`` of a side's ``n_c``
    responses of label ``c`` are replaced at once; under shared noise all replaced labels in one draw from the noise
    tables (or beyond them by a chain of beta-binomials), else one by one."""
    counts, noised = work.counts, work.noised
    n_labels = counts.shape[2]
    for side in range(1, 3):
        for c in range(n_labels):
            work.slot_pert[side, c] = work.pert[side, c]
        for _ in range(work.missing[1, side]):
            work.slot_pert[side, draw_label(rng, item_cum, item)] += 1
        noised[side] = 0
        for c in range(n_labels):
            n_c = work.slot_pert[side, c]
            if n_c == 0:
                continue
            fired = draw_fired(rng, chances, n_c)
            counts[side, 0, c] += n_c - fired
            if draw.shared:  # labelled below, with the other side's
                noised[side] += fired
                continue
            for _ in range(fired):
                counts[side, 0, replacement(rng.random(), c, draw.shared, work.urn, draw.prior)] += 1
    offset = noise_tables.base[noised[1], noised[2]] if noised[1] + noised[2] > 0 else -1
    if offset >= 0:
        o = alias_draw(rng, noise_tables.prob, noise_tables.alias, offset, noise_tables.size[noised[1], noised[2]])
        for c in range(n_labels):
            counts[1, 0, c] += noise_tables.comp[noise_tables.out_a[offset + o], c]
            counts[2, 0, c] += noise_tables.comp[noise_tables.out_b[offset + o], c]
    elif noised[1] + noised[2] > 0:
        swapped = dirichlet_noise(rng, noised[1], noised[2], noise_tables.chain, work.noise)
        for c in range(n_labels):
            counts[1, 0, c] += work.noise[1 if swapped else 0, c]
            counts[2, 0, c] += work.noise[0 if swapped else 1, c]


@numba.njit(cache=True, inline="always")
def add_slots(rng, draw, chances, noise_tables, divergence, acc, work, m, item, item_cum, n_pert, by_label):
    """An item's ``m`` slots one at a time: its missing fixed responses drawn from its labels, then its perturbable
    ones replaced response by response, or by label (:func:`by_label_noise`)."""
    counts, fixed = work.counts, work.fixed
    n_labels = fixed.shape[1]
    for _ in range(m):
        for side in range(3):
            for c in range(n_labels):
                counts[side, 0, c] = fixed[side, c]
            for _ in range(work.missing[0, side]):
                counts[side, 0, draw_label(rng, item_cum, item)] += 1
        work.urn[:] = 0
        if by_label:
            by_label_noise(rng, draw, chances, noise_tables, work, item, item_cum)
        else:
            for q in range(n_pert):
                label = work.pert_label[q]
                if label < 0:
                    label = draw_label(rng, item_cum, item)
                counts[work.pert_side[q], 0, perturbed(rng, label, draw.epsilon, draw.shared, work.urn, draw.prior)] += 1
        add_item(counts[0], counts[1], counts[2], 0, divergence, acc, 1)


@numba.njit(cache=True)
def by_item_replicates(rng, groups, labels_by_rater, draw, chances, divergence, pairs, options, perturbation,
                       noise_tables, out, confusion):
    """Replicates by distinct item: the law of :func:`direct_replicates`, with less work where items repeat.

    Within a drawn group all slots share the rater columns, so the slots of one item differ only in which of B's
    responses are replaced (and, in ragged batches, in the labels drawn for missing responses). The kernel draws
    how many slots each item of the group gets (:func:`draw_multiplicities`), reads the item's labels once into
    counts (never replaced; perturbable, per side) and then, per slot, replaces each perturbable response with
    probability ``epsilon``; with ``BY_LABEL_FROM`` perturbable responses per label or more, it replaces
    ``Binomial(n_c, epsilon)`` of the ``n_c`` with label ``c`` at once (:func:`draw_fired`), for each side and label.

    When many slots keep every response (``(1 - epsilon)**P >= SKIP_FROM`` for ``P`` perturbable responses), an
    item's ``m`` slots are split: ``Binomial(m, (1 - epsilon)**P)`` keep them all and enter the sums as one
    weighted item; the others draw their first replaced response from the truncated geometric law
    (:func:`first_replaced`) and the rest one by one, or, with a single perturbable response, share out their
    replacement labels by a multinomial.

    With ``options.column_law`` (one group, S1; perturbation and pair tables), a replicate is drawn from the law of one slot
    given its rater columns: every item's perturbation law is spread over (gold, A*, B*) triples of pair-table
    rows, each item weighing ``1 / items``, and the replicate's ``n`` slots fall on the triples by one multinomial
    (a chain of binomials), so that the cost grows with the triples rather than the slots.

    With ``options.rater_major`` (a drawn group's slots are many for its items and its counts pack into an int64), every
    item's counts are read rater by rater (:func:`count_by_rater`) instead of item by item: the same counts, so the
    same draws.
    """
    k, epsilon, n_labels = draw.k, draw.epsilon, groups.item_cum.shape[1]
    n_groups = groups.item_start.shape[0] - 1
    n_drawn, per_group = group_layout(draw.n, groups.single_group, groups.group_size)
    shift = 1  # bits a label of packed counts: a part has at most k columns
    while k >> shift:
        shift += 1
    work = scratch(groups, draw, pairs, options, perturbation, shift)
    acc = accumulator(n_labels)
    log_keep = math.log1p(-epsilon) if 0.0 < epsilon < 1.0 else 0.0
    for r in range(out.shape[0]):
        clear(acc)
        for d in range(n_drawn):
            group = 0 if groups.single_group else uniform_index(rng, n_groups)
            n_items = groups.item_start[group + 1] - groups.item_start[group]
            n_raters = groups.rater_start[group + 1] - groups.rater_start[group]
            draw_columns(rng, n_raters, k, epsilon, draw.null, chances.split, work.columns, work.n_perturbed)
            n_pert = work.n_perturbed[1] + work.n_perturbed[2]
            keep_all = (1.0 - epsilon) ** n_pert
            split = keep_all >= SKIP_FROM
            by_label = n_pert >= BY_LABEL_FROM * n_labels
            weigh_columns(work.columns, work.n_perturbed, work.seen, work.part_rater, work.part_weight, work.part_len)
            if options.column_law:
                column_law_group(rng, groups, pairs, perturbation, work, acc, group, n_items, n_raters, k, per_group)
                continue
            draw_multiplicities(rng, per_group, n_items, work.mult)
            if options.rater_major:
                count_by_rater(labels_by_rater, groups.matrix_start[group], n_items, work.part_rater,
                               work.part_weight, work.part_len, shift, work.packed)
            for local in range(n_items):
                m = work.mult[local]
                if m == 0:
                    continue
                item = groups.items[groups.item_start[group] + local]
                row = groups.matrix_start[group] + local * n_raters
                read_item(groups, options, work, local, row, split or not by_label, shift)
                complete = work.missing.sum() == 0
                if options.perturbation_tables and complete:
                    add_outcomes(rng, pairs, perturbation, divergence, acc, work, m, k)
                elif split and m > 1 and complete:
                    add_split(rng, draw, divergence, acc, work, m, keep_all, log_keep, n_pert)
                else:
                    add_slots(rng, draw, chances, noise_tables, divergence, acc, work, m, item, groups.item_cum,
                              n_pert, by_label)
        store(acc, out[r], confusion[r])
