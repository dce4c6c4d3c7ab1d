"""The direct kernel: replicates response by response, for every sampler (METHOD sections 2-5).

Every response of G, A and B is read from the group's label matrix (a missing one drawn from the item's labels),
counted into its slot's count vector and the slot added to the replicate's metric sums; no response is stored.
Its options (pair tables, perturbation tables, masks, noise tables, the rater loop, gathering) are chosen by
:func:`analysis.engine.plan.plan`.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from analysis.metrics import accumulator, add_item, add_pair, clear, pair_rows, store
from analysis.engine.perturbation import MASK_BITS
from analysis.engine.rule import dirichlet_noise, perturbed, replacement, share_out
from analysis.engine.split import draw_columns
from analysis.engine.plan import MASK_WORD, RATER_LOOP_PER_K
from analysis.engine.tables import alias_draw, draw_mask, popcount
from analysis.samplers import group_layout
from analysis.engine.draws import binomial, draw_label, draw_slots



class Scratch(NamedTuple):
    """The direct kernel's work arrays, made once per call (see :func:`scratch`)."""

    slot_group: np.ndarray  # each slot's group and its item's place in the group
    slot_local: np.ndarray
    columns: np.ndarray  # (3, k): the rater columns of G, A (or A*), B (or B*)
    n_perturbed: np.ndarray  # (3,): how many of each side's columns are B's (perturbable)
    urn: np.ndarray  # a slot's Polya urn
    spread: np.ndarray  # K = 1, deferred: a triple's replacements over the labels
    counts: np.ndarray  # (3, 1, labels): one slot's unpacked counts of G, A, B
    vector: np.ndarray  # (3,): one slot's count vectors as codes, then as rows of the pair tables
    part_code: np.ndarray  # (3,): the codes of A*'s and B*'s perturbable responses (perturbation tables)
    pert_old: np.ndarray  # (k,): the labels of a slot's perturbable responses, A*'s first (masks)
    noised: np.ndarray  # (3,): a slot's replaced responses per side (noise tables)
    noise: np.ndarray  # (2, labels): ... and their labels beyond the noise tables
    weight: np.ndarray  # (raters, 5): rater loop: columns per rater and part (G; A fixed, A perturbable; B ...)
    run: np.ndarray  # (raters, 2): ... and the mask bits of each rater's perturbable columns
    triples: np.ndarray  # slots per (gold, A, B) triple of rows (gathered; twice over when deferred)


@numba.njit(cache=True)
def scratch(groups, draw, pairs, options, n_slots):
    """The work arrays of one call of :func:`direct_replicates`."""
    n_labels = groups.item_cum.shape[1]
    k = draw.k
    max_raters = np.max(groups.rater_start[1:] - groups.rater_start[:-1])
    cube = pair_rows(pairs.terms) ** 3
    n_triples = (2 * cube if options.defer else cube) if options.gather else 1
    return Scratch(np.empty(n_slots, dtype=np.int64), np.empty(n_slots, dtype=np.int64),
                   np.empty((3, k), dtype=np.int64), np.zeros(3, dtype=np.int64), np.zeros(n_labels, dtype=np.int64),
                   np.zeros(n_labels, dtype=np.int64), np.zeros((3, 1, n_labels), dtype=np.int64),
                   np.zeros(3, dtype=np.int64), np.zeros(3, dtype=np.int64), np.empty(k, dtype=np.int64),
                   np.zeros(3, dtype=np.int64), np.zeros((2, n_labels), dtype=np.int64),
                   np.zeros((max_raters, 5), dtype=np.int64), np.zeros((max_raters, 2), dtype=np.int64),
                   np.zeros(n_triples, dtype=np.int64))


@numba.njit(cache=True, inline="always")
def deferred_group(rng, groups, columns, n_perturbed, slot_local, triples, first_slot, per_group, group, n_raters,
                   n_labels, cube):
    """K = 1, deferred: each slot of a drawn group is its three labels (a label is its row), counted per triple
    (A*'s response replaceable, or B*'s); the replacements are drawn per triple (:func:`flush_triples`)."""
    base = groups.matrix_start[group]
    triple_base = cube if n_perturbed[1] > 0 else 0
    first_item = groups.item_start[group]
    for s in range(per_group):
        local = slot_local[first_slot + s]
        row = base + local * n_raters
        item = groups.items[first_item + local]
        label_g = groups.matrix[row + columns[0, 0]]
        if label_g < 0:  # a rater who did not label the item: a draw from its own labels (the ragged-batch rule)
            label_g = draw_label(rng, groups.item_cum, item)
        label_a = groups.matrix[row + columns[1, 0]]
        if label_a < 0:
            label_a = draw_label(rng, groups.item_cum, item)
        label_b = groups.matrix[row + columns[2, 0]]
        if label_b < 0:
            label_b = draw_label(rng, groups.item_cum, item)
        triples[triple_base + (label_g * n_labels + label_a) * n_labels + label_b] += 1


@numba.njit(cache=True, inline="always")
def rater_runs(columns, n_perturbed, run, weight, n_raters, k):
    """Rater loop: each rater's number of columns per part, and the runs of mask bits of its perturbable ones."""
    for rater in range(n_raters):
        for part in range(5):
            weight[rater, part] = 0
    for side in range(3):
        for c in range(k):
            weight[columns[side, c], 0 if side == 0 else 2 * side - 1 + (c < n_perturbed[side])] += 1
    q = 0
    for side in range(2):
        for rater in range(n_raters):
            w = weight[rater, 2 + 2 * side]
            run[rater, side] = ((1 << w) - 1) << q
            q += w


@numba.njit(cache=True, inline="always")
def perturbation_draw(rng, perturbation, h, k, width_b, row_a, row_b):
    """One draw from the perturbation tables: the outcome of A*'s ``h`` and B*'s ``k - h`` perturbable responses,
    given the rows of their unperturbed count vectors."""
    offset = perturbation.base[h] + ((row_a - perturbation.start[h]) * width_b + row_b
                                     - perturbation.start[k - h]) * perturbation.n_out[h]
    return alias_draw(rng, perturbation.prob, perturbation.alias, offset, perturbation.n_out[h])


@numba.njit(cache=True, inline="always")
def slot_by_rater(rng, groups, pairs, perturbation, masks, options, noised, run, vector, weight, row, n_raters, h,
                  width_b, k):
    """Rater loop: the item's label from each of the group's raters, read once and weighted by its columns; B's
    replaced responses picked by one mask and counted per rater by their bits in its runs."""
    code = pairs.code
    mask = draw_mask(rng, k, masks.prob, masks.alias) if options.noise_tables else 0
    e_g = e_a = e_b = f_a = f_b = 0
    for rater in range(n_raters):
        unit = code[groups.matrix[row + rater]]
        x_a = popcount(mask & run[rater, 0])
        x_b = popcount(mask & run[rater, 1])
        noised[1] += x_a
        noised[2] += x_b
        e_g += weight[rater, 0] * unit
        e_a += weight[rater, 1] * unit
        f_a += (weight[rater, 2] - x_a) * unit
        e_b += weight[rater, 3] * unit
        f_b += (weight[rater, 4] - x_b) * unit
    vector[0] = e_g
    if options.perturbation_tables:  # B's perturbation in one draw from its parts' unperturbed vectors
        o = perturbation_draw(rng, perturbation, h, k, width_b, pairs.row_of[f_a], pairs.row_of[f_b])
        vector[1] = e_a + perturbation.code_a[h, o]
        vector[2] = e_b + perturbation.code_b[h, o]
    else:
        vector[1] = e_a + f_a
        vector[2] = e_b + f_b


@numba.njit(cache=True, inline="always")
def slot_tabled(rng, groups, pairs, perturbation, columns, n_perturbed, part_code, vector, row, item, h, width_b, k):
    """Each part's count vector by its code, then B's perturbation in one draw; leaves rows of the pair tables."""
    code, row_of = pairs.code, pairs.row_of
    for side in range(3):
        e = 0  # the side's fixed responses
        f = 0  # ... and its perturbable ones
        for c in range(k):
            label = groups.matrix[row + columns[side, c]]
            if label < 0:  # the ragged-batch rule (written out: a helper that takes the generator costs a response)
                label = draw_label(rng, groups.item_cum, item)
            if c < n_perturbed[side]:
                f += code[label]
            else:
                e += code[label]
        vector[side] = e
        part_code[side] = f
    o = perturbation_draw(rng, perturbation, h, k, width_b, row_of[part_code[1]], row_of[part_code[2]])
    vector[0] = row_of[vector[0]] - pairs.first
    vector[1] = row_of[vector[1] + perturbation.code_a[h, o]] - pairs.first
    vector[2] = row_of[vector[2] + perturbation.code_b[h, o]] - pairs.first


@numba.njit(cache=True, inline="always")
def slot_responses(rng, groups, draw, pairs, masks, options, columns, n_perturbed, noised, pert_old, urn, vector,
                   row, item):
    """Response by response; returns how many perturbable labels wait for the masks (``pert_old``)."""
    code = pairs.code
    thinned, masked = options.noise_tables, options.masks
    mask = draw_mask(rng, draw.k, masks.prob, masks.alias) if thinned else 0
    p = 0
    for side in range(3):
        e = 0
        for c in range(draw.k):
            label = groups.matrix[row + columns[side, c]]
            if label < 0:  # the ragged-batch rule (written out: a helper that takes the generator costs a response)
                label = draw_label(rng, groups.item_cum, item)
            if c < n_perturbed[side]:
                if thinned:  # a replaced response counts toward its side's noise, drawn below
                    bit = mask & 1
                    mask >>= 1
                    noised[side] += bit
                    e += code[label] * (1 - bit)
                    continue
                if masked:
                    pert_old[p] = label
                    p += 1
                else:
                    label = perturbed(rng, label, draw.epsilon, draw.shared, urn, draw.prior)
            e += code[label]
        vector[side] = e
    return p


@numba.njit(cache=True, inline="always")
def slot_noise(rng, draw, pairs, masks, noise_tables, n_perturbed, noise, noised, pert_old, urn, vector, p, n_labels):
    """A slot's replaced responses: those counted apart, labelled from the noise tables (or beyond them by a
    chain of beta-binomials), and the ``p`` perturbable ones the masks pick, each replaced by the rule."""
    code = pairs.code
    if noised[1] + noised[2] > 0:
        offset = noise_tables.base[noised[1], noised[2]]
        if offset >= 0:
            o = alias_draw(rng, noise_tables.prob, noise_tables.alias, offset, noise_tables.size[noised[1], noised[2]])
            vector[1] += noise_tables.code_a[offset + o]
            vector[2] += noise_tables.code_b[offset + o]
        else:
            swapped = dirichlet_noise(rng, noised[1], noised[2], noise_tables.chain, noise)
            for c in range(n_labels):
                vector[1] += noise[1 if swapped else 0, c] * code[c]
                vector[2] += noise[0 if swapped else 1, c] * code[c]
    for chunk in range(0, p, MASK_BITS):
        mask = alias_draw(rng, masks.prob, masks.alias, 0, masks.prob.shape[0])
        for j in range(masks.count[mask]):
            q = chunk + masks.pos[mask, j]
            if q >= p:
                break
            side = 1 if q < n_perturbed[1] else 2
            old = pert_old[q]
            vector[side] += code[replacement(rng.random(), old, draw.shared, urn, draw.prior)] - code[old]


@numba.njit(cache=True, inline="always")
def add_slot(pairs, divergence, options, acc, counts, vector, triples, n_labels):
    """Add a slot's count vectors (codes) to the sums: unpacked and added by counts, or as rows of the pair
    tables, added now or counted per triple (gathered)."""
    if not pairs.paired:  # unpack the counts (shift bits a label) for the metric pass
        field = (1 << pairs.shift) - 1
        for side in range(3):
            for c in range(n_labels):
                counts[side, 0, c] = (vector[side] >> (pairs.shift * c)) & field
        add_item(counts[0], counts[1], counts[2], 0, divergence, acc, 1)
        return
    for side in range(3):
        vector[side] = pairs.row_of[vector[side]] - pairs.first
    add_rows(pairs, options, acc, triples, vector)


@numba.njit(cache=True, inline="always")
def add_rows(pairs, options, acc, triples, vector):
    """A slot whose count vectors are rows of the pair tables: added now, or counted per triple (gathered)."""
    if options.gather:
        n_vectors = pair_rows(pairs.terms)
        triples[(vector[0] * n_vectors + vector[1]) * n_vectors + vector[2]] += 1
    else:
        add_pair(vector[0], vector[1], vector[2], pairs.terms, acc, 1)


@numba.njit(cache=True, inline="always")
def flush_triples(rng, draw, pairs, options, acc, spread, triples, n_labels):
    """Gathered: add each (gold, A, B) triple of rows once, with its count of slots. Deferred (K = 1): first
    ``Binomial(x, epsilon)`` of a triple's slots replace their one perturbable response (A*'s in the second half
    of the triples, else B*'s); a response's row is its label, and the replacements go out over the labels by a
    multinomial (:func:`analysis.engine.rule.share_out`)."""
    terms = pairs.terms
    n_vectors = pair_rows(terms)
    cube = n_vectors**3
    for e in range(triples.shape[0]):
        x = triples[e]
        if x == 0:
            continue
        triples[e] = 0
        cell = e % cube
        tg, ta, tb = cell // (n_vectors * n_vectors), (cell // n_vectors) % n_vectors, cell % n_vectors
        if not options.defer:
            add_pair(tg, ta, tb, terms, acc, x)
            continue
        on_a = e >= cube
        old = ta if on_a else tb
        fired = binomial(rng, x, draw.epsilon)
        if x > fired:
            add_pair(tg, ta, tb, terms, acc, x - fired)
        share_out(rng, fired, old, draw.shared, draw.steps, spread)
        for c in range(n_labels):
            if spread[c] > 0:
                add_pair(tg, c if on_a else ta, tb if on_a else c, terms, acc, spread[c])


@numba.njit(cache=True)
def direct_replicates(rng, groups, draw, chances, divergence, pairs, perturbation, masks, noise_tables, options,
                      complete, out, confusion):
    """Replicates on responses, fused: labels are counted as they are drawn, never stored.

    All ``2K'`` pooled columns of A and B are iid uniform draws of the group's raters, so a uniform half of them
    is ``K'`` fresh columns of which ``H ~ Hypergeometric(2K'; K', K')`` are B's: the null draws A* as ``K'``
    columns of which ``H`` are perturbed, and B* as ``K'`` columns of which ``K' - H`` are, once per group (per
    replicate for S1, per batch for S3, per item for S2); which columns does not matter, as they are iid. B's
    perturbed responses of one slot share its urn. A rater who did not label a drawn item is replaced by a draw
    from the item's own labels (the ragged-batch rule). Each slot's counts go straight into the replicate's metric
    sums, so no per-item array is kept. The innermost loops call only inlined helpers: a call that takes the
    generator costs more than a response.

    A slot's count vectors are codes, sums of ``code[label]``: rows of the pair tables where ``pairs.paired``, else counts
    packed ``shift`` bits a label and unpacked for the metric pass. With ``options.perturbation_tables`` (and the pair tables), B's
    perturbation of a slot is one draw from the tables of :mod:`analysis.engine.perturbation`, given the unperturbed
    count vectors of A*'s and B*'s perturbable responses. With ``options.gather`` (and the pair tables), slots are counted
    per (gold, A, B) triple of rows and each triple is added to the sums once, at the end of the replicate; at
    K = 1, with ``options.defer``, the replacements are drawn per triple, by binomials, and a drawn group's slots take a
    short loop of their own (three labels a slot; the same draws in the same order as the general loop). With
    ``options.masks``, draws from the mask tables (:func:`analysis.engine.perturbation.mask_tables`) say which perturbable
    responses are replaced, ``MASK_BITS`` at a time, instead of one draw per response; under the Dirichlet rule
    (``options.noise_tables``) the kept ones are counted as they are read and the replaced ones labelled in one draw from the
    noise tables (:class:`analysis.engine.perturbation.NoiseTables`), or beyond them by :func:`dirichlet_noise`.
    With ``options.rater_loop``, an item that every rater of its group labelled (``complete``) is read rater by rater where the
    group has at most ``RATER_LOOP_PER_K * K`` raters: each label weighted by its rater's columns per part, the
    replaced ones counted by the mask bits over the rater's run of columns.
    """
    n_labels = groups.item_cum.shape[1]
    k = draw.k
    n_drawn, per_group = group_layout(draw.n, groups.single_group, groups.group_size)
    work = scratch(groups, draw, pairs, options, n_drawn * per_group)
    cube = pair_rows(pairs.terms) ** 3
    acc = accumulator(n_labels)
    # the work arrays one by one: a helper that takes the generator pays for every array of a group it is given
    columns, n_perturbed, urn, spread, counts = work.columns, work.n_perturbed, work.urn, work.spread, work.counts
    vector, part_code, pert_old, noised, noise = work.vector, work.part_code, work.pert_old, work.noised, work.noise
    weight, run, triples, slot_local = work.weight, work.run, work.triples, work.slot_local
    use_urn = draw.epsilon > 0.0 and draw.shared and not options.noise_tables and not options.perturbation_tables
    for r in range(out.shape[0]):
        draw_slots(rng, groups.item_start, groups.single_group, groups.group_size, draw.n, work.slot_group,
                   work.slot_local)
        clear(acc)
        for d in range(n_drawn):
            group = work.slot_group[d * per_group]
            n_raters = groups.rater_start[group + 1] - groups.rater_start[group]
            h = draw_columns(rng, n_raters, k, draw.epsilon, draw.null, chances.split, columns, n_perturbed)
            if options.defer:
                deferred_group(rng, groups, columns, n_perturbed, slot_local, triples, d * per_group, per_group, group,
                               n_raters, n_labels, cube)
                continue
            tabled = options.perturbation_tables
            width_b = perturbation.start[k - h + 1] - perturbation.start[k - h] if tabled else 0
            rater_loop = options.rater_loop and n_raters <= RATER_LOOP_PER_K * k and k <= MASK_WORD
            if rater_loop:
                rater_runs(columns, n_perturbed, run, weight, n_raters, k)
            for s in range(per_group):
                local = groups.item_start[group] + slot_local[d * per_group + s]
                item = groups.items[local]
                row = groups.matrix_start[group] + slot_local[d * per_group + s] * n_raters
                if use_urn:
                    urn[:] = 0
                noised[1] = 0
                noised[2] = 0
                p = 0
                if rater_loop and complete[local]:
                    slot_by_rater(rng, groups, pairs, perturbation, masks, options, noised, run, vector, weight, row,
                                  n_raters, h, width_b, k)
                elif tabled:
                    slot_tabled(rng, groups, pairs, perturbation, columns, n_perturbed, part_code, vector, row, item, h,
                                width_b, k)
                    add_rows(pairs, options, acc, triples, vector)
                    continue
                else:
                    p = slot_responses(rng, groups, draw, pairs, masks, options, columns, n_perturbed, noised, pert_old,
                                       urn, vector, row, item)
                slot_noise(rng, draw, pairs, masks, noise_tables, n_perturbed, noise, noised, pert_old, urn, vector, p,
                           n_labels)
                add_slot(pairs, divergence, options, acc, counts, vector, triples, n_labels)
        if options.gather:
            flush_triples(rng, draw, pairs, options, acc, spread, triples, n_labels)
        store(acc, out[r], confusion[r])
