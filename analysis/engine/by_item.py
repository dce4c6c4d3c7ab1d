"""The by-item kernel: the direct kernel's law, worked per distinct item of a drawn group (S1, S3)."""

from __future__ import annotations

import math

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
def add_outcome(counts, fixed, comp, row_a, row_b, divergence, acc, weight):
    """Add ``weight`` slots of an item whose perturbable responses came out as rows ``row_a`` (A*) and ``row_b``
    (B*) of ``comp``, on top of its ``fixed`` counts (G's counts are ``counts[0]``)."""
    for c in range(counts.shape[2]):
        counts[1, 0, c] = fixed[1, c] + comp[row_a, c]
        counts[2, 0, c] = fixed[2, c] + comp[row_b, c]
    add_item(counts[0], counts[1], counts[2], 0, divergence, acc, weight)


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

    With ``column_law`` (one group, S1; perturbation and pair tables), a replicate is drawn from the law of one slot
    given its rater columns: every item's perturbation law is spread over (gold, A*, B*) triples of pair-table
    rows, each item weighing ``1 / items``, and the replicate's ``n`` slots fall on the triples by one multinomial
    (a chain of binomials), so that the cost grows with the triples rather than the slots.

    With ``rater_major`` (a drawn group's slots are many for its items and its counts pack into an int64), every
    item's counts are read rater by rater (:func:`count_by_rater`) instead of item by item: the same counts, so the
    same draws.

    The loops are written out in this one function on purpose. Split into helpers called once a distinct item (the
    reading, the tables, the split, one slot at a time), the same draws ran 1.4 to 2.2 times slower (S3 at K = 25
    to 100, S1 at K = 10 to 100), half the time in numba's reference counts (``benchmarks/README.md``).
    """
    item_start, items, rater_start = groups.item_start, groups.items, groups.rater_start
    matrix_start, matrix, item_cum = groups.matrix_start, groups.matrix, groups.item_cum
    single_group, group_size = groups.single_group, groups.group_size
    n, k, epsilon, shared, null, prior = draw.n, draw.k, draw.epsilon, draw.shared, draw.null, draw.prior
    steps = draw.steps
    tabled, column_law, rater_major = options.perturbation_tables, options.column_law, options.rater_major
    n_out, base, pmf, t_prob = perturbation.n_out, perturbation.base, perturbation.pmf, perturbation.prob
    t_alias, out_a, out_b, comp = perturbation.alias, perturbation.out_a, perturbation.out_b, perturbation.comp
    start, code, row_of = perturbation.start, perturbation.code, perturbation.row_of
    comp_code = perturbation.comp_code
    paired, terms = pairs.paired, pairs.terms
    n_vectors = pair_rows(terms)
    first_row = pairs.first  # the pair tables' row of a code is row_of[code] - first_row
    n_base, n_size, n_prob, n_alias = noise_tables.base, noise_tables.size, noise_tables.prob, noise_tables.alias
    n_out_a, n_out_b, n_comp, n_chain = noise_tables.out_a, noise_tables.out_b, noise_tables.comp, noise_tables.chain
    n_labels = item_cum.shape[1]
    n_groups = item_start.shape[0] - 1
    n_drawn, per_group = group_layout(n, single_group, group_size)
    mult = np.zeros(np.max(item_start[1:] - item_start[:-1]), dtype=np.int64)
    columns = np.empty((3, k), dtype=np.int64)  # G, A (or A*), B (or B*)
    n_perturbed = np.zeros(3, dtype=np.int64)
    fixed = np.zeros((3, n_labels), dtype=np.int64)  # an item's counts over its columns that are never replaced
    pert = np.zeros((3, n_labels), dtype=np.int64)  # ... over its perturbable columns
    missing = np.zeros((2, 3), dtype=np.int64)  # how many of those columns have no label (fixed, perturbable)
    pert_label = np.empty(2 * k, dtype=np.int64)  # the perturbable responses listed, A* first
    pert_side = np.empty(2 * k, dtype=np.int64)
    # a group's columns by part (G; A fixed, A perturbable; B fixed, B perturbable) as distinct raters and weights
    part_rater = np.empty((5, k), dtype=np.int64)
    part_weight = np.empty((5, k), dtype=np.int64)
    part_len = np.zeros(5, dtype=np.int64)
    seen = np.full((5, np.max(rater_start[1:] - rater_start[:-1])), -1, dtype=np.int64)
    outcomes = np.zeros(np.max(n_out), dtype=np.int64)  # slots per perturbation outcome of one item
    counts = np.zeros((3, 1, n_labels), dtype=np.int64)  # one slot's counts of G, A, B
    slot_pert = np.zeros((3, n_labels), dtype=np.int64)
    noised = np.zeros(3, dtype=np.int64)  # a slot's replaced responses per side, Dirichlet rule
    noise = np.zeros((2, n_labels), dtype=np.int64)  # ... and their labels beyond the noise tables
    urn = np.zeros(n_labels, dtype=np.int64)
    spread = np.zeros(n_labels, dtype=np.int64)  # one response's replacements shared out over the labels
    part_code = np.zeros(5, dtype=np.int64)  # column law: an item's code per part
    mass = np.zeros(n_vectors**3 if column_law else 1)  # ... the slot's law over (gold, A*, B*) triples
    touched = np.empty(mass.shape[0], dtype=np.int64)  # ... and its triples of positive mass, in order
    shift = 1  # bits a label of packed counts: a part has at most k columns
    while k >> shift:
        shift += 1
    packed = np.zeros((5, mult.shape[0] if rater_major else 1), dtype=np.int64)  # per part, an item's counts
    field = (1 << shift) - 1
    acc = accumulator(n_labels)
    log_keep = math.log1p(-epsilon) if 0.0 < epsilon < 1.0 else 0.0
    for r in range(out.shape[0]):
        clear(acc)
        for d in range(n_drawn):
            group = 0 if single_group else uniform_index(rng, n_groups)
            n_items = item_start[group + 1] - item_start[group]
            n_raters = rater_start[group + 1] - rater_start[group]
            draw_columns(rng, n_raters, k, epsilon, null, chances.split, columns, n_perturbed)
            n_pert = n_perturbed[1] + n_perturbed[2]
            keep_all = (1.0 - epsilon) ** n_pert
            split = keep_all >= SKIP_FROM
            by_label = n_pert >= BY_LABEL_FROM * n_labels
            listed = split or not by_label  # whether the slots need the perturbable responses one by one
            weigh_columns(columns, n_perturbed, seen, part_rater, part_weight, part_len)
            if column_law:
                h = n_perturbed[1]
                width = n_out[h]
                width_b = start[k - h + 1] - start[k - h]
                n_touched = 0
                total = 0.0
                for local in range(n_items):
                    row = matrix_start[group] + local * n_raters
                    for part in range(5):
                        e = 0
                        for j in range(part_len[part]):
                            e += part_weight[part, j] * code[matrix[row + part_rater[part, j]]]
                        part_code[part] = e
                    tg = row_of[part_code[0]] - first_row
                    offset = base[h] + ((row_of[part_code[2]] - start[h]) * width_b + row_of[part_code[4]]
                                        - start[k - h]) * width
                    for o in range(width):
                        chance = pmf[offset + o]
                        if chance == 0.0:
                            continue
                        ta = row_of[part_code[1] + comp_code[out_a[h, o]]] - first_row
                        tb = row_of[part_code[3] + comp_code[out_b[h, o]]] - first_row
                        t = (tg * n_vectors + ta) * n_vectors + tb
                        if mass[t] == 0.0:
                            touched[n_touched] = t
                            n_touched += 1
                        mass[t] += chance
                        total += chance
                left = per_group
                for j in range(n_touched):  # the slots over the triples, a chain of binomials
                    t = touched[j]
                    chance = mass[t]
                    mass[t] = 0.0
                    if left == 0:
                        continue
                    x = left if j == n_touched - 1 or chance >= total else binomial(rng, left, chance / total)
                    total -= chance
                    left -= x
                    if x > 0:
                        add_pair(t // (n_vectors * n_vectors), (t // n_vectors) % n_vectors, t % n_vectors, terms, acc, x)
                continue
            draw_multiplicities(rng, per_group, n_items, mult)
            if rater_major:
                count_by_rater(labels_by_rater, matrix_start[group], n_items, part_rater, part_weight, part_len,
                               shift, packed)
            for local in range(n_items):
                m = mult[local]
                if m == 0:
                    continue
                item = items[item_start[group] + local]
                row = matrix_start[group] + local * n_raters
                fixed[:] = 0
                pert[:] = 0
                missing[:] = 0
                p = 0
                for part in range(5):  # each distinct rater's label read once, counted with its weight
                    side = (part + 1) // 2
                    perturbable = part == 2 or part == 4
                    if rater_major:  # the counts were read for the whole group: unpack them
                        word = packed[part, local]
                        for c in range(n_labels):
                            x = (word >> (shift * c)) & field
                            if perturbable:
                                pert[side, c] += x
                            else:
                                fixed[side, c] += x
                        missing[1 if perturbable else 0, side] += (word >> (shift * n_labels)) & field
                        if not (perturbable and listed):
                            continue
                    for j in range(part_len[part]):
                        label = matrix[row + part_rater[part, j]]
                        w = part_weight[part, j]
                        if perturbable:
                            if listed:
                                for _ in range(w):
                                    pert_label[p] = label
                                    pert_side[p] = side
                                    p += 1
                            if rater_major:
                                continue
                            if label < 0:
                                missing[1, side] += w
                            else:
                                pert[side, label] += w
                        elif label < 0:
                            missing[0, side] += w
                        else:
                            fixed[side, label] += w
                if tabled and missing.sum() == 0:  # each slot's replaced vectors in one draw (analysis.perturbation)
                    xa = 0
                    xb = 0
                    for c in range(n_labels):
                        xa += pert[1, c] * code[c]
                        xb += pert[2, c] * code[c]
                    h_b = k - n_perturbed[1]
                    offset = base[n_perturbed[1]] + ((row_of[xa] - start[n_perturbed[1]]) * (start[h_b + 1] - start[h_b])
                                                     + row_of[xb] - start[h_b]) * n_out[n_perturbed[1]]
                    width = n_out[n_perturbed[1]]
                    e_g = e_a = e_b = 0  # the fixed responses' codes, for the pair tables
                    for c in range(n_labels):
                        counts[0, 0, c] = fixed[0, c]
                        e_g += fixed[0, c] * code[c]
                        e_a += fixed[1, c] * code[c]
                        e_b += fixed[2, c] * code[c]
                    tg = row_of[e_g] - first_row
                    gather = m >= GATHER_FROM * width  # count the slots per outcome, then add each outcome once
                    if gather:
                        for o in range(width):
                            outcomes[o] = 0
                    for _ in range(m):
                        o = alias_draw(rng, t_prob, t_alias, offset, width)
                        if gather:
                            outcomes[o] += 1
                        elif paired:
                            add_pair(tg, row_of[e_a + comp_code[out_a[n_perturbed[1], o]]] - first_row,
                                     row_of[e_b + comp_code[out_b[n_perturbed[1], o]]] - first_row, terms, acc, 1)
                        else:
                            add_outcome(counts, fixed, comp, out_a[n_perturbed[1], o], out_b[n_perturbed[1], o],
                                        divergence, acc, 1)
                    if gather:
                        for o in range(width):
                            if outcomes[o] == 0:
                                continue
                            if paired:
                                add_pair(tg, row_of[e_a + comp_code[out_a[n_perturbed[1], o]]] - first_row,
                                         row_of[e_b + comp_code[out_b[n_perturbed[1], o]]] - first_row, terms, acc, outcomes[o])
                                continue
                            add_outcome(counts, fixed, comp, out_a[n_perturbed[1], o], out_b[n_perturbed[1], o],
                                        divergence, acc, outcomes[o])
                    continue
                if split and m > 1 and missing.sum() == 0:
                    kept = m if keep_all >= 1.0 else binomial(rng, m, keep_all)
                    for side in range(3):
                        for c in range(n_labels):
                            counts[side, 0, c] = fixed[side, c] + pert[side, c]
                    if kept > 0:
                        add_item(counts[0], counts[1], counts[2], 0, divergence, acc, kept)
                    m -= kept
                    if m >= n_labels and n_pert == 1:  # the one replaced response takes its labels by a multinomial
                        old = pert_label[0]
                        side = pert_side[0]
                        counts[side, 0, old] -= 1
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
                                counts[side, 0, c] = fixed[side, c]
                        for c in range(n_labels):
                            urn[c] = 0
                        first = first_replaced(rng.random(), n_pert, keep_all, log_keep)
                        for q in range(n_pert):
                            label = pert_label[q]
                            if q == first:
                                label = replacement(rng.random(), label, shared, urn, prior)
                            elif q > first:
                                label = perturbed(rng, label, epsilon, shared, urn, prior)
                            counts[pert_side[q], 0, label] += 1
                        add_item(counts[0], counts[1], counts[2], 0, divergence, acc, 1)
                    continue
                for _ in range(m):  # one slot at a time
                    for side in range(3):
                        for c in range(n_labels):
                            counts[side, 0, c] = fixed[side, c]
                        for _ in range(missing[0, side]):
                            counts[side, 0, draw_label(rng, item_cum, item)] += 1
                    for c in range(n_labels):
                        urn[c] = 0
                    if not by_label:
                        for q in range(n_pert):
                            label = pert_label[q]
                            if label < 0:
                                label = draw_label(rng, item_cum, item)
                            counts[pert_side[q], 0, perturbed(rng, label, epsilon, shared, urn, prior)] += 1
                        add_item(counts[0], counts[1], counts[2], 0, divergence, acc, 1)
                        continue
                    for side in range(1, 3):
                        for c in range(n_labels):
                            slot_pert[side, c] = pert[side, c]
                        for _ in range(missing[1, side]):
                            slot_pert[side, draw_label(rng, item_cum, item)] += 1
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
                                counts[side, 0, replacement(rng.random(), c, shared, urn, prior)] += 1
                    offset = n_base[noised[1], noised[2]] if noised[1] + noised[2] > 0 else -1
                    if offset >= 0:  # the replaced responses' labels in one draw from the noise tables
                        o = alias_draw(rng, n_prob, n_alias, offset, n_size[noised[1], noised[2]])
                        for c in range(n_labels):
                            counts[1, 0, c] += n_comp[n_out_a[offset + o], c]
                            counts[2, 0, c] += n_comp[n_out_b[offset + o], c]
                    elif noised[1] + noised[2] > 0:  # ... or, beyond them, by a chain of beta-binomials
                        swapped = dirichlet_noise(rng, noised[1], noised[2], n_chain, noise)
                        for c in range(n_labels):
                            counts[1, 0, c] += noise[1 if swapped else 0, c]
                            counts[2, 0, c] += noise[0 if swapped else 1, c]
                    add_item(counts[0], counts[1], counts[2], 0, divergence, acc, 1)
        store(acc, out[r], confusion[r])
