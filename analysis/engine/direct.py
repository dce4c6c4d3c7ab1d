"""The direct kernel: replicates response by response, for every sampler (METHOD sections 2-5).

Every response of G, A and B is read from the group's label matrix (a missing one drawn from the item's labels),
counted into its slot's count vector and the slot added to the replicate's metric sums; no response is stored.
Its options (pair tables, perturbation tables, masks, noise tables, the rater loop, gathering) are chosen by
:func:`analysis.engine.plan.plan`.
"""

from __future__ import annotations

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
    sums, so no per-item array is kept. The loops are written out in one function on purpose: on numba 0.68 a
    helper called per slot costs more than the slot (an inlined one takes a reference to every array it is passed,
    a compiled one copies them as arguments), and split into such helpers this kernel ran 5 to 10 times slower
    (``benchmarks/README.md``).

    A slot's count vectors are codes, sums of ``code[label]``: rows of the pair tables where ``paired``, else counts
    packed ``shift`` bits a label and unpacked for the metric pass. With ``tabled`` (and the pair tables), B's
    perturbation of a slot is one draw from the tables of :mod:`analysis.engine.perturbation`, given the unperturbed
    count vectors of A*'s and B*'s perturbable responses. With ``gather`` (and the pair tables), slots are counted
    per (gold, A, B) triple of rows and each triple is added to the sums once, at the end of the replicate; at
    K = 1, with ``defer``, the replacements are drawn per triple, by binomials, and a drawn group's slots take a
    short loop of their own (three labels a slot; the same draws in the same order as the general loop). With
    ``masked``, draws from the mask tables (:func:`analysis.engine.perturbation.mask_tables`) say which perturbable
    responses are replaced, ``MASK_BITS`` at a time, instead of one draw per response; under the Dirichlet rule
    (``thinned``) the kept ones are counted as they are read and the replaced ones labelled in one draw from the
    noise tables (:class:`analysis.engine.perturbation.NoiseTables`), or beyond them by :func:`dirichlet_noise`.
    With ``by_rater``, an item that every rater of its group labelled (``complete``) is read rater by rater where the
    group has at most ``RATER_LOOP_PER_K * K`` raters: each label weighted by its rater's columns per part, the
    replaced ones counted by the mask bits over the rater's run of columns.
    """
    item_start, items, rater_start = groups.item_start, groups.items, groups.rater_start
    matrix_start, matrix, item_cum = groups.matrix_start, groups.matrix, groups.item_cum
    single_group, group_size = groups.single_group, groups.group_size
    n, k, epsilon, shared, null, prior = draw.n, draw.k, draw.epsilon, draw.shared, draw.null, draw.prior
    steps = draw.steps
    h_cdf = chances.split
    paired, code, row_of, first, shift = pairs.paired, pairs.code, pairs.row_of, pairs.first, pairs.shift
    terms = pairs.terms
    n_out, t_base, t_prob, t_alias = perturbation.n_out, perturbation.base, perturbation.prob, perturbation.alias
    code_a, code_b, start = perturbation.code_a, perturbation.code_b, perturbation.start
    m_prob, m_alias, m_count, m_pos = masks.prob, masks.alias, masks.count, masks.pos
    n_base, n_size, n_prob, n_alias = noise_tables.base, noise_tables.size, noise_tables.prob, noise_tables.alias
    n_code_a, n_code_b, n_chain = noise_tables.code_a, noise_tables.code_b, noise_tables.chain
    tabled, gather, defer, masked = options.perturbation_tables, options.gather, options.defer, options.masks
    thinned, by_rater = options.noise_tables, options.rater_loop
    n_labels = item_cum.shape[1]
    n_drawn, per_group = group_layout(n, single_group, group_size)
    n_slots = n_drawn * per_group
    slot_group = np.empty(n_slots, dtype=np.int64)
    slot_local = np.empty(n_slots, dtype=np.int64)
    columns = np.empty((3, k), dtype=np.int64)  # G, A (or A*), B (or B*)
    n_perturbed = np.zeros(3, dtype=np.int64)
    urn = np.zeros(n_labels, dtype=np.int64)
    spread = np.zeros(n_labels, dtype=np.int64)  # K = 1, deferred: a triple's replacements over the labels
    counts = np.zeros((3, 1, n_labels), dtype=np.int64)  # one slot's counts of G, A, B
    vector = np.zeros(3, dtype=np.int64)  # ... as codes, then as rows in the pair tables
    field = (1 << shift) - 1  # one label's count in a packed code
    n_vectors = pair_rows(terms)
    n_masks = m_prob.shape[0]
    pert_old = np.empty(k, dtype=np.int64)  # the labels of a slot's perturbable responses, A*'s first
    noised = np.zeros(3, dtype=np.int64)  # thinned: a slot's replaced responses per side
    noise = np.zeros((2, n_labels), dtype=np.int64)  # ... and their labels beyond the noise tables
    max_raters = np.max(rater_start[1:] - rater_start[:-1])
    weight = np.zeros((max_raters, 5), dtype=np.int64)  # rater loop: columns per rater and part (G; A fixed, A
    run = np.zeros((max_raters, 2), dtype=np.int64)  # perturbable; B ...), and the mask bits of the perturbable ones
    cube = n_vectors**3
    triples = np.zeros((2 * cube if defer else cube) if gather else 1, dtype=np.int64)  # slots per row triple
    acc = accumulator(n_labels)
    use_urn = epsilon > 0.0 and shared
    for r in range(out.shape[0]):
        draw_slots(rng, item_start, single_group, group_size, n, slot_group, slot_local)
        clear(acc)
        for d in range(n_drawn):
            group = slot_group[d * per_group]
            n_raters = rater_start[group + 1] - rater_start[group]
            h = draw_columns(rng, n_raters, k, epsilon, null, h_cdf, columns, n_perturbed)
            base = matrix_start[group]
            width_b = t_base_h = start_h = start_kh = n_out_h = 0
            if tabled:  # where B's perturbation tables of this h start, and how many vectors B*'s part has
                t_base_h, start_h, start_kh, n_out_h = t_base[h], start[h], start[k - h], n_out[h]
                width_b = start[k - h + 1] - start_kh
            if defer:  # K = 1: a slot is its three labels (a label is its row), counted per triple (A*'s
                # response replaceable, or B*'s)
                triple_base = cube if n_perturbed[1] > 0 else 0
                first_item = item_start[group]
                for s in range(per_group):
                    local = slot_local[d * per_group + s]
                    row = base + local * n_raters
                    label_g = matrix[row + columns[0, 0]]
                    if label_g < 0:
                        label_g = draw_label(rng, item_cum, items[first_item + local])
                    label_a = matrix[row + columns[1, 0]]
                    if label_a < 0:
                        label_a = draw_label(rng, item_cum, items[first_item + local])
                    label_b = matrix[row + columns[2, 0]]
                    if label_b < 0:
                        label_b = draw_label(rng, item_cum, items[first_item + local])
                    triples[triple_base + (label_g * n_labels + label_a) * n_labels + label_b] += 1
                continue
            rater_loop = by_rater and n_raters <= RATER_LOOP_PER_K * k and k <= MASK_WORD
            if rater_loop:  # each rater's number of columns per part, and its runs of perturbable responses
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
            for s in range(per_group):
                j = d * per_group + s
                item = items[item_start[group] + slot_local[j]]
                row = base + slot_local[j] * n_raters
                if use_urn and not thinned and not tabled:
                    for c in range(n_labels):
                        urn[c] = 0
                p = 0  # each side's count vector by its code: a row of the pair tables, or packed counts
                noised[1] = 0  # thinned: how many of A*'s and B*'s responses are replaced
                noised[2] = 0
                if rater_loop and complete[item_start[group] + slot_local[j]]:
                    # the item's label from each of the group's raters, read once and weighted by its columns;
                    # B's replaced responses picked by one mask and counted per rater by their bits in its runs
                    mask = draw_mask(rng, k, m_prob, m_alias) if thinned else 0
                    e_g = e_a = e_b = f_a = f_b = 0
                    for rater in range(n_raters):
                        unit = code[matrix[row + rater]]
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
                    if tabled:  # B's perturbation in one draw from its parts' unperturbed vectors
                        offset = t_base_h + ((row_of[f_a] - start_h) * width_b + row_of[f_b] - start_kh) * n_out_h
                        o = alias_draw(rng, t_prob, t_alias, offset, n_out_h)
                        vector[1] = e_a + code_a[h, o]
                        vector[2] = e_b + code_b[h, o]
                    else:
                        vector[1] = e_a + f_a
                        vector[2] = e_b + f_b
                elif tabled:  # each part's count vector by its code, then B's perturbation in one draw
                    v_g = 0
                    for c in range(k):
                        label = matrix[row + columns[0, c]]
                        if label < 0:
                            label = draw_label(rng, item_cum, item)
                        v_g += code[label]
                    e_a = f_a = e_b = f_b = 0
                    for side in range(1, 3):  # A*'s and B*'s fixed responses, and their perturbable ones
                        e = f = 0
                        for c in range(k):
                            label = matrix[row + columns[side, c]]
                            if label < 0:
                                label = draw_label(rng, item_cum, item)
                            if c < n_perturbed[side]:
                                f += code[label]
                            else:
                                e += code[label]
                        if side == 1:
                            e_a, f_a = e, f
                        else:
                            e_b, f_b = e, f
                    offset = t_base_h + ((row_of[f_a] - start_h) * width_b + row_of[f_b] - start_kh) * n_out_h
                    o = alias_draw(rng, t_prob, t_alias, offset, n_out_h)
                    tg = row_of[v_g] - first
                    ta = row_of[e_a + code_a[h, o]] - first
                    tb = row_of[e_b + code_b[h, o]] - first
                    if gather:
                        triples[(tg * n_vectors + ta) * n_vectors + tb] += 1
                    else:
                        add_pair(tg, ta, tb, terms, acc, 1)
                    continue
                else:  # response by response
                    mask = draw_mask(rng, k, m_prob, m_alias) if thinned else 0
                    for side in range(3):
                        e = 0
                        for c in range(k):
                            label = matrix[row + columns[side, c]]
                            if label < 0:
                                label = draw_label(rng, item_cum, item)
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
                                    label = perturbed(rng, label, epsilon, shared, urn, prior)
                            e += code[label]
                        vector[side] = e
                if noised[1] + noised[2] > 0:  # thinned: the replaced responses' labels, from the noise tables
                    offset = n_base[noised[1], noised[2]]
                    if offset >= 0:
                        o = alias_draw(rng, n_prob, n_alias, offset, n_size[noised[1], noised[2]])
                        vector[1] += n_code_a[offset + o]
                        vector[2] += n_code_b[offset + o]
                    else:  # more than the tables hold: a chain of beta-binomials, split between the sides
                        swapped = dirichlet_noise(rng, noised[1], noised[2], n_chain, noise)
                        for c in range(n_labels):
                            vector[1] += noise[1 if swapped else 0, c] * code[c]
                            vector[2] += noise[0 if swapped else 1, c] * code[c]
                for chunk in range(0, p, MASK_BITS):  # masked: replace the responses the masks pick
                    mask = alias_draw(rng, m_prob, m_alias, 0, n_masks)
                    for j in range(m_count[mask]):
                        q = chunk + m_pos[mask, j]
                        if q >= p:
                            break
                        side = 1 if q < n_perturbed[1] else 2
                        vector[side] += code[replacement(rng.random(), pert_old[q], shared, urn, prior)] - code[pert_old[q]]
                if not paired:  # unpack the counts (shift bits a label) for the metric pass
                    for side in range(3):
                        for c in range(n_labels):
                            counts[side, 0, c] = (vector[side] >> (shift * c)) & field
                    add_item(counts[0], counts[1], counts[2], 0, divergence, acc, 1)
                    continue
                for side in range(3):
                    vector[side] = row_of[vector[side]] - first
                if gather:
                    triples[(vector[0] * n_vectors + vector[1]) * n_vectors + vector[2]] += 1
                else:
                    add_pair(vector[0], vector[1], vector[2], terms, acc, 1)
        if gather:
            for e in range(triples.shape[0]):
                x = triples[e]
                if x == 0:
                    continue
                triples[e] = 0
                cell = e % cube
                tg, ta, tb = cell // (n_vectors * n_vectors), (cell // n_vectors) % n_vectors, cell % n_vectors
                if not defer:
                    add_pair(tg, ta, tb, terms, acc, x)
                    continue
                # K = 1: Binomial(x, epsilon) of the cell's slots replace their one perturbable response (A*'s
                # where e >= cube, else B*'s); a response's row is its label, and the replacements go out over
                # the labels by a multinomial (uniform: over the C - 1 others)
                on_a = e >= cube
                old = ta if on_a else tb
                fired = binomial(rng, x, epsilon)
                if x > fired:
                    add_pair(tg, ta, tb, terms, acc, x - fired)
                share_out(rng, fired, old, shared, steps, spread)
                for c in range(n_labels):
                    if spread[c] > 0:
                        add_pair(tg, c if on_a else ta, tb if on_a else c, terms, acc,
                                 spread[c])
        store(acc, out[r], confusion[r])
