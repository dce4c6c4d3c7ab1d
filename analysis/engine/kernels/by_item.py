"""The by-item kernel: the direct kernel's law, worked per distinct item of a drawn group (S1, S3)."""

from __future__ import annotations

import math
from typing import NamedTuple

import numba
import numpy as np

from analysis.engine.metrics import accumulator, add_item, add_pair, clear, pair_rows, store
from analysis.engine.rule import dirichlet_noise, first_replaced, perturbed, replacement, share_out
from analysis.engine.split import draw_columns, weigh_columns
from analysis.engine.lookup import alias_draw, draw_fired
from analysis.engine.samplers import group_layout
from analysis.engine.path import BY_LABEL_FROM, GATHER_FROM, SKIP_FROM
from analysis.engine.draws import binomial, draw_label, draw_multiplicities, uniform_index
from analysis.engine.indices import ix


def by_rater(groups, n_labels: int) -> np.ndarray:
    """The label matrix of each group read rater by rater (its block transposed: raters x items), a missing label
    written as ``n_labels``: the by-item kernel then counts a drawn group's labels for all its items at once."""
    item_start, rater_start, matrix_start = groups.item_start, groups.rater_start, groups.matrix_start
    matrix = groups.matrix
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


@numba.njit(cache=True, inline="always")
def add_outcome(counts, fixed, j, comp, row_a, row_b, divergence, acc, weight):
    """Add ``weight`` slots of the ``j``-th read item whose perturbable responses came out as rows ``row_a`` (A*)
    and ``row_b`` (B*) of ``comp``, on top of its ``fixed`` counts (G's counts are ``counts[0]``)."""
    for c in range(counts.shape[2]):
        counts[1, 0, c] = fixed[ix(j), 1, c] + comp[ix(row_a), c]
        counts[2, 0, c] = fixed[ix(j), 2, c] + comp[ix(row_b), c]
    add_item(counts[0], counts[1], counts[2], 0, divergence, acc, weight)


@numba.njit(cache=True, inline="always")
def slot_modes(epsilon, n_pert, n_labels):
    """How a group's slots with ``n_pert`` perturbable responses are drawn: ``(keep_all, split, by_label)``, the
    chance that a slot keeps them all, whether an item's slots are split on it (``keep_all >= SKIP_FROM``), and
    whether replacements are drawn per label (``BY_LABEL_FROM`` perturbable responses per label or more)."""
    keep_all = (1.0 - epsilon) ** n_pert
    return keep_all, keep_all >= SKIP_FROM, n_pert >= BY_LABEL_FROM * n_labels


class ItemWork(NamedTuple):
    """The by-item kernel's work arrays, allocated once a call. A drawn group's columns by part (G; A fixed, A
    perturbable; B fixed, B perturbable) as distinct raters and weights; then, for each distinct item the group
    drew (``held`` of them, at most ``per_group``), its local index, its counts over the columns never replaced and
    over the perturbable ones, its columns without a label, and its perturbable responses listed, A*'s first."""

    mult: np.ndarray  # slots per item of the group
    columns: np.ndarray  # G, A (or A*), B (or B*)
    n_perturbed: np.ndarray
    part_rater: np.ndarray
    part_weight: np.ndarray
    part_len: np.ndarray
    seen: np.ndarray  # scratch of weigh_columns
    packed: np.ndarray  # rater major: per part, an item's counts packed
    held: np.ndarray  # the distinct drawn items' local indices
    fixed: np.ndarray  # (held, side, label)
    pert: np.ndarray
    missing: np.ndarray  # (held, fixed or perturbable, side)
    pert_label: np.ndarray  # (held, response)
    pert_side: np.ndarray  # (response,): the same for every item of a group
    outcomes: np.ndarray  # slots per perturbation outcome of one item
    counts: np.ndarray  # one slot's counts of G, A, B
    slot_pert: np.ndarray
    noised: np.ndarray  # a slot's replaced responses per side, Dirichlet rule
    noise: np.ndarray  # ... and their labels beyond the noise tables
    urn: np.ndarray
    spread: np.ndarray  # one response's replacements shared out over the labels
    part_code: np.ndarray  # column law: an item's code per part
    mass: np.ndarray  # ... the slot's law over (gold, A*, B*) triples
    touched: np.ndarray  # ... and its triples of positive mass, in order
    vector: np.ndarray  # one slot's count vectors as codes of G, A*, B* (the pigeonhole kernel's thinned slots)


@numba.njit(cache=True)
def item_work(max_items, cap, k, n_labels, max_raters, packed_items, max_out, triples):
    """An :class:`ItemWork` for groups of at most ``max_items`` items and ``max_raters`` raters, of which a group
    draws at most ``cap`` distinct items: ``packed_items`` items' packed counts (rater major, else 1),
    ``max_out`` perturbation outcomes and ``triples`` (gold, A, B) triples (column law, else 1)."""
    return ItemWork(np.zeros(max_items, dtype=np.int64), np.empty((3, k), dtype=np.int64),
                    np.zeros(3, dtype=np.int64), np.empty((5, k), dtype=np.int64), np.empty((5, k), dtype=np.int64),
                    np.zeros(5, dtype=np.int64), np.full((5, max_raters), -1, dtype=np.int64),
                    np.zeros((5, packed_items), dtype=np.int64),
                    np.empty(cap, dtype=np.int64), np.zeros((cap, 3, n_labels), dtype=np.int64),
                    np.zeros((cap, 3, n_labels), dtype=np.int64), np.zeros((cap, 2, 3), dtype=np.int64),
                    np.empty((cap, 2 * k), dtype=np.int64), np.empty(2 * k, dtype=np.int64),
                    np.zeros(max_out, dtype=np.int64), np.zeros((3, 1, n_labels), dtype=np.int64),
                    np.zeros((3, n_labels), dtype=np.int64), np.zeros(3, dtype=np.int64),
                    np.zeros((2, n_labels), dtype=np.int64), np.zeros(n_labels, dtype=np.int64),
                    np.zeros(n_labels, dtype=np.int64), np.zeros(5, dtype=np.int64), np.zeros(triples),
                    np.empty(triples, dtype=np.int64), np.zeros(3, dtype=np.int64))


@numba.njit(cache=True)
def by_item_replicates(rng, groups, labels_by_rater, draw, chances, divergence, pairs, options, perturbation,
                       noise_tables, out, confusion):
    """Replicates by distinct item: the law of :func:`direct_replicates`, with less work where items repeat.

    Within a drawn group all slots share the rater columns, so the slots of one item differ only in which of B's
    responses are replaced (and, in ragged batches, in the labels drawn for missing responses). The kernel draws
    how many slots each item of the group gets (:func:`draw_multiplicities`), reads each drawn item's labels once
    into counts (:func:`read_items`; with ``rater_major``, for the whole group rater by rater,
    :func:`count_by_rater`: the same counts) and then draws the slots of each item in turn: in one draw each from
    B's perturbation tables (:func:`tabled_items`) or response by response (:func:`untabled_items`). With
    ``column_law`` (one group, S1; perturbation and pair tables), a replicate is drawn from the law of one slot
    given its rater columns (:func:`column_law_slots`).

    Each step is a loop over the group's items, called once a group and compiled without reference counting
    (``_nrt=False``: it borrows the arrays of ``work``, which this function holds): with the counts, the calls
    made S3 at K = 25 to 100 1.10 to 1.16 times slower; called once a distinct item, 1.4 to 2.2 times
    (``benchmarks/README.md``).
    """
    item_start, rater_start = groups.item_start, groups.rater_start
    single_group, group_size = groups.single_group, groups.group_size
    n, k, epsilon = draw.n, draw.k, draw.epsilon
    n_labels = groups.item_cum.shape[1]
    n_groups = item_start.shape[0] - 1
    n_drawn, per_group = group_layout(n, single_group, group_size)
    max_items = np.max(item_start[1:] - item_start[:-1])
    cap = min(max_items, per_group)  # distinct items a group can draw
    n_vectors = pair_rows(pairs.terms)
    shift = 1  # bits a label of packed counts: a part has at most k columns
    while k >> shift:
        shift += 1
    work = item_work(max_items, cap, k, n_labels, np.max(rater_start[1:] - rater_start[:-1]),
                     max_items if options.rater_major else 1, np.max(perturbation.n_out),
                     n_vectors**3 if options.column_law else 1)
    acc = accumulator(n_labels)
    for r in range(out.shape[0]):
        clear(acc)
        for d in range(n_drawn):
            group = 0 if single_group else uniform_index(rng, n_groups)
            n_items = item_start[ix(group + 1)] - item_start[ix(group)]
            n_raters = rater_start[ix(group + 1)] - rater_start[ix(group)]
            draw_columns(rng, n_raters, k, epsilon, draw.null, chances.split, work.columns, work.n_perturbed)
            weigh_columns(work.columns, work.n_perturbed, work.seen, work.part_rater, work.part_weight,
                          work.part_len)
            if options.column_law:
                column_law_slots(rng, groups, group, per_group, pairs, perturbation, work, acc)
                continue
            _, split, by_label = slot_modes(epsilon, work.n_perturbed[1] + work.n_perturbed[2], n_labels)
            listed = split or not by_label  # whether the slots need the perturbable responses one by one
            draw_multiplicities(rng, per_group, n_items, work.mult)
            if options.rater_major:
                count_by_rater(labels_by_rater, groups.matrix_start[ix(group)], n_items, work.part_rater,
                               work.part_weight, work.part_len, shift, work.packed)
            n_held = read_items(groups, group, listed, options.rater_major, shift, work)
            if options.perturbation_tables:
                tabled_items(rng, groups, group, draw, chances, divergence, pairs, perturbation, noise_tables,
                             n_held, work, acc)
            else:  # lo = np.int64(0): a literal 0 would compile a second untabled_items, about 10 s more
                untabled_items(rng, groups, group, draw, chances, divergence, noise_tables, np.int64(0), n_held,
                               work, acc)
        store(acc, out[r], confusion[r])


@numba.njit(cache=True, _nrt=False)
def column_law_slots(rng, groups, group, per_group, pairs, perturbation, work, acc):
    """A group's ``per_group`` slots from the law of one slot given its columns: every item's perturbation law
    spread over (gold, A*, B*) triples of pair-table rows, each item weighing ``1 / items``; the slots fall on the
    triples by one multinomial (a chain of binomials), so that the cost grows with the triples, not the slots."""
    item_start, rater_start = groups.item_start, groups.rater_start
    matrix_start, matrix = groups.matrix_start, groups.matrix
    n_out, base, pmf, start = perturbation.n_out, perturbation.base, perturbation.pmf, perturbation.start
    out_a, out_b, comp_code = perturbation.out_a, perturbation.out_b, perturbation.comp_code
    code, row_of = perturbation.code, perturbation.row_of
    part_rater, part_weight, part_len, part_code = work.part_rater, work.part_weight, work.part_len, work.part_code
    mass, touched, terms, first_row = work.mass, work.touched, pairs.terms, pairs.first
    n_vectors = pair_rows(terms)
    k = work.columns.shape[1]
    n_raters = rater_start[ix(group + 1)] - rater_start[ix(group)]
    h = work.n_perturbed[1]
    width = n_out[ix(h)]
    width_b = start[ix(k - h + 1)] - start[ix(k - h)]
    n_touched = 0
    total = 0.0
    for local in range(item_start[ix(group + 1)] - item_start[ix(group)]):
        row = matrix_start[ix(group)] + local * n_raters
        for part in range(5):
            e = 0
            for j in range(part_len[part]):
                e += part_weight[part, j] * code[ix(matrix[ix(row + part_rater[part, j])])]
            part_code[part] = e
        tg = row_of[ix(part_code[0])] - first_row
        offset = (base[ix(h)] + ((row_of[ix(part_code[2])] - start[ix(h)]) * width_b + row_of[ix(part_code[4])]
                                 - start[ix(k - h)]) * width)
        for o in range(width):
            chance = pmf[ix(offset + o)]
            if chance == 0.0:
                continue
            ta = row_of[ix(part_code[1] + comp_code[ix(out_a[ix(h), o])])] - first_row
            tb = row_of[ix(part_code[3] + comp_code[ix(out_b[ix(h), o])])] - first_row
            t = (tg * n_vectors + ta) * n_vectors + tb
            if mass[ix(t)] == 0.0:
                touched[ix(n_touched)] = t
                n_touched += 1
            mass[ix(t)] += chance
            total += chance
    left = per_group
    for j in range(n_touched):  # the slots over the triples, a chain of binomials
        t = touched[j]
        chance = mass[ix(t)]
        mass[ix(t)] = 0.0
        if left == 0:
            continue
        x = left if j == n_touched - 1 or chance >= total else binomial(rng, left, chance / total)
        total -= chance
        left -= x
        if x > 0:
            add_pair(t // (n_vectors * n_vectors), (t // n_vectors) % n_vectors, t % n_vectors, terms, acc, x)


@numba.njit(cache=True, _nrt=False)
def read_items(groups, group, listed, rater_major, shift, work):
    """Read each item the group drew (in order) into ``work``: its counts over the fixed and the perturbable
    columns, its columns without a label, and, if ``listed``, its perturbable responses one by one. Each distinct
    rater's label is read once and counted with its weight (with ``rater_major``, unpacked from ``packed``).
    Returns how many distinct items the group drew. Draws nothing."""
    item_start, rater_start = groups.item_start, groups.rater_start
    matrix_start, matrix = groups.matrix_start, groups.matrix
    mult, packed, held, fixed, pert, missing = work.mult, work.packed, work.held, work.fixed, work.pert, work.missing
    pert_label, pert_side = work.pert_label, work.pert_side
    part_rater, part_weight, part_len = work.part_rater, work.part_weight, work.part_len
    n_labels = fixed.shape[2]
    n_raters = rater_start[ix(group + 1)] - rater_start[ix(group)]
    field = (1 << shift) - 1
    n_held = 0
    for local in range(item_start[ix(group + 1)] - item_start[ix(group)]):
        if mult[local] == 0:
            continue
        i = ix(n_held)  # an index only
        held[i] = local
        n_held += 1
        row = matrix_start[ix(group)] + local * n_raters
        for side in range(3):
            for c in range(n_labels):
                fixed[i, side, c] = 0
                pert[i, side, c] = 0
            missing[i, 0, side] = 0
            missing[i, 1, side] = 0
        p = 0
        for part in range(5):
            side = ix((part + 1) // 2)  # an index only
            perturbable = part == 2 or part == 4
            if rater_major:  # the counts were read for the whole group: unpack them
                word = packed[part, local]
                for c in range(n_labels):
                    x = (word >> (shift * c)) & field
                    if perturbable:
                        pert[i, side, c] += x
                    else:
                        fixed[i, side, c] += x
                missing[i, 1 if perturbable else 0, side] += (word >> (shift * n_labels)) & field
                if not (perturbable and listed):
                    continue
            for j in range(part_len[part]):
                label = matrix[ix(row + part_rater[part, j])]
                w = part_weight[part, j]
                if perturbable:
                    if listed:
                        for _ in range(w):
                            pert_label[i, ix(p)] = label
                            pert_side[ix(p)] = side
                            p += 1
                    if rater_major:
                        continue
                    if label < 0:
                        missing[i, 1, side] += w
                    else:
                        pert[i, side, ix(label)] += w
                elif label < 0:
                    missing[i, 0, side] += w
                else:
                    fixed[i, side, ix(label)] += w
    return n_held


@numba.njit(cache=True, inline="always")
def table_offset(perturbation, h, k, xa, xb):
    """Where the perturbation tables' row for B's perturbable responses, ``h`` on A*'s side (their code ``xa``) and
    ``k - h`` on B*'s (``xb``), starts."""
    n_out, base, start, row_of = perturbation.n_out, perturbation.base, perturbation.start, perturbation.row_of
    return base[ix(h)] + ((row_of[ix(xa)] - start[ix(h)]) * (start[ix(k - h + 1)] - start[ix(k - h)])
                          + row_of[ix(xb)] - start[ix(k - h)]) * n_out[ix(h)]


@numba.njit(cache=True, inline="always")
def tally_outcomes(rng, m, prob, alias, offset, width, outcomes):
    """How many of ``m`` slots come out as each of the ``width`` outcomes of the tables' row at ``offset``, into
    ``outcomes``."""
    for o in range(width):
        outcomes[o] = 0
    for _ in range(m):
        outcomes[ix(alias_draw(rng, prob, alias, offset, width))] += 1


@numba.njit(cache=True, inline="always")
def paired_slots(rng, m, h, offset, e_g, e_a, e_b, pairs, perturbation, outcomes, acc):
    """An item's ``m`` slots from the perturbation tables' row at ``offset``, scored by the pair tables: ``e_g``,
    ``e_a`` and ``e_b`` code the fixed responses of the gold, A* and B*; with many slots per outcome, counted per
    outcome and added once."""
    t_prob, t_alias, out_a, out_b = perturbation.prob, perturbation.alias, perturbation.out_a, perturbation.out_b
    row_of, comp_code = perturbation.row_of, perturbation.comp_code
    terms, first_row = pairs.terms, pairs.first
    width = perturbation.n_out[ix(h)]
    tg = row_of[ix(e_g)] - first_row
    if m < GATHER_FROM * width:
        for _ in range(m):
            o = alias_draw(rng, t_prob, t_alias, offset, width)
            add_pair(tg, row_of[ix(e_a + comp_code[ix(out_a[ix(h), ix(o)])])] - first_row,
                     row_of[ix(e_b + comp_code[ix(out_b[ix(h), ix(o)])])] - first_row, terms, acc, 1)
        return
    tally_outcomes(rng, m, t_prob, t_alias, offset, width, outcomes)
    for o in range(width):
        if outcomes[o] > 0:
            add_pair(tg, row_of[ix(e_a + comp_code[ix(out_a[ix(h), o])])] - first_row,
                     row_of[ix(e_b + comp_code[ix(out_b[ix(h), o])])] - first_row, terms, acc, outcomes[o])


@numba.njit(cache=True, _nrt=False)
def tabled_items(rng, groups, group, draw, chances, divergence, pairs, perturbation, noise_tables, n_held, work,
                 acc):
    """Each read item's slots, B's perturbation of a slot in one draw from the perturbation tables
    (:mod:`analysis.engine.perturbation`); with many slots per outcome, counted per outcome and added once
    (:func:`paired_slots` where the pair tables score them). An item with a missing label draws its slots by
    :func:`untabled_items`."""
    n_out, t_prob, t_alias = perturbation.n_out, perturbation.prob, perturbation.alias
    out_a, out_b, comp, code = perturbation.out_a, perturbation.out_b, perturbation.comp, perturbation.code
    mult, held, fixed, pert, missing = work.mult, work.held, work.fixed, work.pert, work.missing
    outcomes, counts = work.outcomes, work.counts
    n_labels = fixed.shape[2]
    h = work.n_perturbed[1]
    width = n_out[ix(h)]
    for i in range(n_held):
        m = mult[ix(held[i])]
        if missing[i].sum() > 0:
            untabled_items(rng, groups, group, draw, chances, divergence, noise_tables, i, i + 1, work, acc)
            continue
        xa = 0
        xb = 0
        for c in range(n_labels):
            xa += pert[i, 1, c] * code[c]
            xb += pert[i, 2, c] * code[c]
        offset = table_offset(perturbation, h, draw.k, xa, xb)
        if pairs.paired:
            e_g = e_a = e_b = 0  # the fixed responses' codes, for the pair tables
            for c in range(n_labels):
                e_g += fixed[i, 0, c] * code[c]
                e_a += fixed[i, 1, c] * code[c]
                e_b += fixed[i, 2, c] * code[c]
            paired_slots(rng, m, h, offset, e_g, e_a, e_b, pairs, perturbation, outcomes, acc)
            continue
        for c in range(n_labels):
            counts[0, 0, c] = fixed[i, 0, c]
        if m < GATHER_FROM * width:
            for _ in range(m):
                o = alias_draw(rng, t_prob, t_alias, offset, width)
                add_outcome(counts, fixed, i, comp, out_a[ix(h), ix(o)], out_b[ix(h), ix(o)], divergence, acc, 1)
            continue
        tally_outcomes(rng, m, t_prob, t_alias, offset, width, outcomes)
        for o in range(width):
            if outcomes[o] > 0:
                add_outcome(counts, fixed, i, comp, out_a[ix(h), o], out_b[ix(h), o], divergence, acc, outcomes[o])


@numba.njit(cache=True, _nrt=False)
def untabled_items(rng, groups, group, draw, chances, divergence, noise_tables, lo, hi, work, acc):
    """The slots of read items ``lo`` to ``hi - 1``, response by response.

    Where many slots keep every response (``(1 - epsilon)**P >= SKIP_FROM`` for ``P`` perturbable responses), an
    item's ``m`` slots are split: ``Binomial(m, (1 - epsilon)**P)`` keep them all and enter the sums as one
    weighted item; the others draw their first replaced response from the truncated geometric law
    (:func:`first_replaced`) and the rest one by one, or, with a single perturbable response, share out their
    replacement labels by a multinomial. Else each slot replaces each perturbable response with probability
    ``epsilon``, or, with ``BY_LABEL_FROM`` perturbable responses per label or more, ``Binomial(n_c, epsilon)`` of
    the ``n_c`` with label ``c`` at once (:func:`draw_fired`), labelled from the noise tables under a shared noise law.
    """
    item_start, items, item_cum = groups.item_start, groups.items, groups.item_cum
    epsilon, shared, prior, steps = draw.epsilon, draw.shared, draw.prior, draw.steps
    n_base, n_size, n_prob, n_alias = noise_tables.base, noise_tables.size, noise_tables.prob, noise_tables.alias
    n_out_a, n_out_b, n_comp, n_chain = noise_tables.out_a, noise_tables.out_b, noise_tables.comp, noise_tables.chain
    mult, held, fixed, pert, missing = work.mult, work.held, work.fixed, work.pert, work.missing
    pert_label, pert_side, counts, slot_pert = work.pert_label, work.pert_side, work.counts, work.slot_pert
    noised, noise, urn, spread = work.noised, work.noise, work.urn, work.spread
    n_labels = fixed.shape[2]
    n_pert = work.n_perturbed[1] + work.n_perturbed[2]
    keep_all, split, by_label = slot_modes(epsilon, n_pert, n_labels)
    log_keep = math.log1p(-epsilon) if 0.0 < epsilon < 1.0 else 0.0
    for read in range(lo, hi):
        i = ix(read)  # an index only
        m = mult[ix(held[i])]
        item = items[ix(item_start[ix(group)] + held[i])]
        if split and m > 1 and missing[i].sum() == 0:
            kept = m if keep_all >= 1.0 else binomial(rng, m, keep_all)
            for side in range(3):
                for c in range(n_labels):
                    counts[side, 0, c] = fixed[i, side, c] + pert[i, side, c]
            if kept > 0:
                add_item(counts[0], counts[1], counts[2], 0, divergence, acc, kept)
            m -= kept
            if m >= n_labels and n_pert == 1:  # the one replaced response takes its labels by a multinomial
                old = pert_label[i, 0]
                side = ix(pert_side[0])  # an index only
                counts[side, 0, ix(old)] -= 1
                share_out(rng, m, old, shared, steps, spread)
                for c in range(n_labels):
                    if spread[c] > 0:
                        counts[side, 0, c] += 1
                        add_item(counts[0], counts[1], counts[2], 0, divergence, acc, spread[c])
                        counts[side, 0, c] -= 1
                continue
            for _ in range(m):  # slots that replace at least one response
                for side in range(3):
                    for c in range(n_labels):
                        counts[side, 0, c] = fixed[i, side, c]
                for c in range(n_labels):
                    urn[c] = 0
                first = first_replaced(rng.random(), n_pert, keep_all, log_keep)
                for q in range(n_pert):
                    label = pert_label[i, q]
                    if q == first:
                        label = replacement(rng.random(), label, shared, urn, prior)
                    elif q > first:
                        label = perturbed(rng, label, epsilon, shared, urn, prior)
                    counts[ix(pert_side[q]), 0, ix(label)] += 1
                add_item(counts[0], counts[1], counts[2], 0, divergence, acc, 1)
            continue
        for _ in range(m):  # one slot at a time
            for side in range(3):
                for c in range(n_labels):
                    counts[side, 0, c] = fixed[i, side, c]
                for _ in range(missing[i, 0, side]):
                    counts[side, 0, ix(draw_label(rng, item_cum, item))] += 1
            for c in range(n_labels):
                urn[c] = 0
            if not by_label:
                for q in range(n_pert):
                    label = pert_label[i, q]
                    if label < 0:
                        label = draw_label(rng, item_cum, item)
                    counts[ix(pert_side[q]), 0, ix(perturbed(rng, label, epsilon, shared, urn, prior))] += 1
                add_item(counts[0], counts[1], counts[2], 0, divergence, acc, 1)
                continue
            for side in range(1, 3):
                for c in range(n_labels):
                    slot_pert[side, c] = pert[i, side, c]
                for _ in range(missing[i, 1, side]):
                    slot_pert[side, ix(draw_label(rng, item_cum, item))] += 1
                noised[side] = 0
                for c in range(n_labels):
                    n_c = slot_pert[side, c]
                    if n_c == 0:
                        continue
                    fired = draw_fired(rng, chances, n_c)
                    counts[side, 0, c] += n_c - fired
                    if shared:  # labelled below, with the other side's
                        noised[side] += fired
                        continue
                    for _ in range(fired):
                        counts[side, 0, ix(replacement(rng.random(), c, shared, urn, prior))] += 1
            offset = n_base[ix(noised[1]), ix(noised[2])] if noised[1] + noised[2] > 0 else -1
            if offset >= 0:  # the replaced responses' labels in one draw from the noise tables
                o = alias_draw(rng, n_prob, n_alias, offset, n_size[ix(noised[1]), ix(noised[2])])
                for c in range(n_labels):
                    counts[1, 0, c] += n_comp[ix(n_out_a[ix(offset + o)]), c]
                    counts[2, 0, c] += n_comp[ix(n_out_b[ix(offset + o)]), c]
            elif noised[1] + noised[2] > 0:  # ... or, beyond them, by a chain of beta-binomials
                swapped = dirichlet_noise(rng, noised[1], noised[2], n_chain, noise)
                for c in range(n_labels):
                    counts[1, 0, c] += noise[1 if swapped else 0, c]
                    counts[2, 0, c] += noise[0 if swapped else 1, c]
            add_item(counts[0], counts[1], counts[2], 0, divergence, acc, 1)
