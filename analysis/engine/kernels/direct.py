"""The direct kernel: replicates response by response, for every sampler (the methods page).

Every response of G, A and B is read from the group's label matrix (a missing one drawn from the item's labels),
counted into its slot's count vector and the slot added to the replicate's metric sums; no response is stored.
Its options (pair tables, perturbation tables, masks, noise tables, the rater loop, gathering) are chosen by
:func:`analysis.engine.path.choose_path`; :func:`direct_replicates` draws each replicate's slots and hands them to the
one loop its plan names.

All ``2K'`` pooled columns of A and B are iid uniform draws of the group's raters, so a uniform half of them is
``K'`` fresh columns of which ``H ~ Hypergeometric(2K'; K', K')`` are B's: the null draws A* as ``K'`` columns of
which ``H`` are perturbed, and B* as ``K'`` columns of which ``K' - H`` are, once per group (per replicate for S1,
per batch for S3, per item for S2); which columns does not matter, as they are iid. B's perturbed responses of
one slot share its urn. A rater who did not label a drawn item is replaced by a draw from the item's own labels
(the ragged-batch rule).

A slot's count vectors are codes, sums of ``code[label]``: rows of the pair tables where ``paired``, else counts
packed ``shift`` bits a label and unpacked for the metric pass. The loops over a replicate's slots:

- :func:`tabled_slots` (perturbation tables): B's perturbation of a slot is one draw from the tables of
  :mod:`analysis.engine.perturbation`, given the unperturbed count vectors of A*'s and B*'s perturbable responses.
- :func:`deferred_slots` (K = 1, ``defer``): a slot is its three labels, counted per (gold, A, B) triple; the
  replacements are drawn per triple, by binomials, when the triples are settled.
- :func:`general_slots` (the rest): with ``masks``, draws from the mask tables
  (:func:`analysis.engine.perturbation.mask_tables`) say which perturbable responses are replaced, ``MASK_BITS``
  at a time, instead of one draw per response; with ``noise_tables`` (a rule whose replaced responses share one
  noise law) the kept ones are counted as they are read and the replaced ones labelled in one draw from the noise
  tables (:class:`analysis.engine.perturbation.NoiseTables`), or beyond them by :func:`dirichlet_noise`.

With ``gather`` (and the pair tables), slots are counted per (gold, A, B) triple of rows and each triple is added
to the sums once, at the end of the replicate (:func:`settle_triples`). With ``rater_loop``, an item that every
rater of its group labelled (``complete``) is read rater by rater where the group has at most
``RATER_LOOP_PER_K * K`` raters: each label weighted by its rater's columns per part, the replaced ones counted by
the mask bits over the rater's run of columns.

Each loop over slots is written out in one function called once a replicate, reads its arrays from the named
groups once, at its top, and is compiled without reference counting (numba's ``_nrt=False``: it only borrows
arrays its caller holds, and allocates none). On numba 0.68 an array taken from a group, or passed to a compiled
call, otherwise costs two atomic reference counts each time (``benchmarks/README.md``, "The kernels' shape").
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from analysis.engine.metrics import accumulator, add_item, add_pair, clear, pair_rows, store
from analysis.engine.perturbation import MASK_BITS
from analysis.engine.rule import dirichlet_noise, perturbed, replacement, share_out
from analysis.engine.split import draw_columns
from analysis.engine.path import MASK_WORD, RATER_LOOP_PER_K
from analysis.engine.lookup import alias_draw, draw_mask, popcount
from analysis.engine.samplers import group_layout
from analysis.engine.draws import binomial, draw_label, draw_slots
from analysis.engine.indices import ix


class Work(NamedTuple):
    """The direct kernel's work arrays, allocated once a call: a replicate's slots (their groups and items), a
    group's rater columns (G, A or A*, B or B*) and perturbed columns per side, and one slot's counts."""

    slot_group: np.ndarray
    slot_local: np.ndarray
    columns: np.ndarray
    n_perturbed: np.ndarray
    urn: np.ndarray  # the labels a slot's perturbed responses drew so far (shared noise)
    spread: np.ndarray  # K = 1, deferred: a triple's replacements over the labels
    counts: np.ndarray  # one slot's counts of G, A, B, unpacked
    vector: np.ndarray  # ... as codes, then as rows in the pair tables
    pert_old: np.ndarray  # the labels of a slot's perturbable responses, A*'s first (masks)
    noised: np.ndarray  # thinned: a slot's replaced responses per side
    noise: np.ndarray  # ... and their labels beyond the noise tables
    weight: np.ndarray  # rater loop: columns per rater and part (G; A fixed, A perturbable; B fixed, B perturbable)
    run: np.ndarray  # ... and the mask bits of each rater's perturbable columns, per side
    triples: np.ndarray  # gather: slots per (gold, A, B) triple of rows (twice, A*'s and B*'s, when deferred)


@numba.njit(cache=True)
def direct_replicates(rng, groups, draw, chances, divergence, pairs, perturbation, masks, noise_tables, options,
                      complete, out, confusion):
    """Replicates on responses, fused: labels are counted as they are drawn, never stored. Each replicate draws
    its slots, counts them by the loop its options name, settles gathered triples and stores its sums."""
    k, n_labels = draw.k, groups.item_cum.shape[1]
    n_drawn, per_group = group_layout(draw.n, groups.single_group, groups.group_size)
    max_raters = np.max(groups.rater_start[1:] - groups.rater_start[:-1])
    cube = pair_rows(pairs.terms) ** 3
    n_triples = (2 * cube if options.defer else cube) if options.gather else 1
    work = Work(np.empty(n_drawn * per_group, dtype=np.int64), np.empty(n_drawn * per_group, dtype=np.int64),
                np.empty((3, k), dtype=np.int64), np.zeros(3, dtype=np.int64), np.zeros(n_labels, dtype=np.int64),
                np.zeros(n_labels, dtype=np.int64), np.zeros((3, 1, n_labels), dtype=np.int64),
                np.zeros(3, dtype=np.int64), np.empty(k, dtype=np.int64), np.zeros(3, dtype=np.int64),
                np.zeros((2, n_labels), dtype=np.int64), np.zeros((max_raters, 5), dtype=np.int64),
                np.zeros((max_raters, 2), dtype=np.int64), np.zeros(n_triples, dtype=np.int64))
    acc = accumulator(n_labels)
    for r in range(out.shape[0]):
        draw_slots(rng, groups.item_start, groups.single_group, groups.group_size, draw.n, work.slot_group,
                   work.slot_local)
        clear(acc)
        if options.defer:
            deferred_slots(rng, groups, draw, chances, work)
        elif options.perturbation_tables:
            tabled_slots(rng, groups, draw, chances, pairs, perturbation, options, complete, work, acc)
        else:
            general_slots(rng, groups, draw, chances, divergence, pairs, masks, noise_tables, options, complete,
                          work, acc)
        if options.gather:
            settle_triples(rng, draw, pairs.terms, options.defer, work.triples, work.spread, acc)
        store(acc, out[r], confusion[r])


@numba.njit(cache=True, inline="always")
def reads_by_rater(options, n_raters, k):
    """Whether a group of ``n_raters`` raters is read rater by rater at ``k`` responses."""
    return options.rater_loop and n_raters <= RATER_LOOP_PER_K * k and k <= MASK_WORD


@numba.njit(cache=True, inline="always")
def weigh_raters(columns, n_perturbed, n_raters, weight, run):
    """Each rater's number of columns per part into ``weight`` and the mask bits of its runs of perturbable
    columns (A*'s first) into ``run``, for the rater loop."""
    k = columns.shape[1]
    for rater in range(n_raters):
        for part in range(5):
            weight[rater, part] = 0
    for side in range(3):
        for c in range(k):
            weight[ix(columns[side, c]), 0 if side == 0 else 2 * side - 1 + (c < n_perturbed[side])] += 1
    q = 0
    for side in range(2):
        for rater in range(n_raters):
            w = weight[rater, 2 + 2 * side]
            run[rater, side] = ((1 << w) - 1) << q
            q += w


@numba.njit(cache=True, _nrt=False)
def deferred_slots(rng, groups, draw, chances, work):
    """K = 1, deferred: each slot's three labels counted per triple, A*'s response replaceable (the second half
    of ``triples``) or B*'s (a label is its row)."""
    h_cdf = chances.split  # the null's law of h
    item_start, items, rater_start = groups.item_start, groups.items, groups.rater_start
    matrix_start, matrix, item_cum = groups.matrix_start, groups.matrix, groups.item_cum
    columns, n_perturbed, triples = work.columns, work.n_perturbed, work.triples
    slot_group, slot_local = work.slot_group, work.slot_local
    n_labels = item_cum.shape[1]
    cube = triples.shape[0] // 2
    n_drawn, per_group = group_layout(draw.n, groups.single_group, groups.group_size)
    for d in range(n_drawn):
        group = slot_group[ix(d * per_group)]
        n_raters = rater_start[ix(group + 1)] - rater_start[ix(group)]
        draw_columns(rng, n_raters, draw.k, draw.epsilon, draw.null, h_cdf, columns, n_perturbed)
        base = matrix_start[ix(group)]
        triple_base = cube if n_perturbed[1] > 0 else 0
        first_item = item_start[ix(group)]
        for s in range(per_group):
            local = slot_local[ix(d * per_group + s)]
            row = base + local * n_raters
            label_g = matrix[ix(row + columns[0, 0])]
            if label_g < 0:
                label_g = draw_label(rng, item_cum, items[ix(first_item + local)])
            label_a = matrix[ix(row + columns[1, 0])]
            if label_a < 0:
                label_a = draw_label(rng, item_cum, items[ix(first_item + local)])
            label_b = matrix[ix(row + columns[2, 0])]
            if label_b < 0:
                label_b = draw_label(rng, item_cum, items[ix(first_item + local)])
            triples[ix(triple_base + (label_g * n_labels + label_a) * n_labels + label_b)] += 1


@numba.njit(cache=True, _nrt=False)
def tabled_slots(rng, groups, draw, chances, pairs, perturbation, options, complete, work, acc):
    """Each slot's parts by their codes (G; A* and B* each fixed and perturbable), read rater by rater where the
    rater loop serves the item, then B's perturbation in one draw from the perturbation tables."""
    h_cdf = chances.split  # the null's law of h
    item_start, items, rater_start = groups.item_start, groups.items, groups.rater_start
    matrix_start, matrix, item_cum = groups.matrix_start, groups.matrix, groups.item_cum
    code, row_of, first, terms = pairs.code, pairs.row_of, pairs.first, pairs.terms
    n_out, t_base, t_prob, t_alias = perturbation.n_out, perturbation.base, perturbation.prob, perturbation.alias
    code_a, code_b, start = perturbation.code_a, perturbation.code_b, perturbation.start
    columns, n_perturbed, weight, triples = work.columns, work.n_perturbed, work.weight, work.triples
    slot_group, slot_local, run = work.slot_group, work.slot_local, work.run
    k, gather = draw.k, options.gather
    n_vectors = pair_rows(terms)
    n_drawn, per_group = group_layout(draw.n, groups.single_group, groups.group_size)
    for d in range(n_drawn):
        group = slot_group[ix(d * per_group)]
        n_raters = rater_start[ix(group + 1)] - rater_start[ix(group)]
        h = draw_columns(rng, n_raters, k, draw.epsilon, draw.null, h_cdf, columns, n_perturbed)
        base = matrix_start[ix(group)]
        first_item = item_start[ix(group)]
        # where B's perturbation tables of this h start, and how many vectors B*'s part has
        t_base_h, start_h, start_kh, n_out_h = t_base[ix(h)], start[ix(h)], start[ix(k - h)], n_out[ix(h)]
        width_b = start[ix(k - h + 1)] - start_kh
        rater_loop = reads_by_rater(options, n_raters, k)
        if rater_loop:
            weigh_raters(columns, n_perturbed, n_raters, weight, run)
        for s in range(per_group):
            local = slot_local[ix(d * per_group + s)]
            item = first_item + local  # its place in items (read only for a missing label)
            row = base + local * n_raters
            if rater_loop and complete[ix(item)]:  # each rater's label read once, weighted
                v_g = e_a = f_a = e_b = f_b = 0
                for rater in range(n_raters):
                    unit = code[ix(matrix[ix(row + rater)])]
                    v_g += weight[rater, 0] * unit
                    e_a += weight[rater, 1] * unit
                    f_a += weight[rater, 2] * unit
                    e_b += weight[rater, 3] * unit
                    f_b += weight[rater, 4] * unit
            else:
                v_g = 0
                for c in range(k):
                    label = matrix[ix(row + columns[0, c])]
                    if label < 0:
                        label = draw_label(rng, item_cum, items[ix(item)])
                    v_g += code[ix(label)]
                e_a = f_a = e_b = f_b = 0
                for side in range(1, 3):  # A*'s and B*'s fixed responses, and their perturbable ones
                    e = f = 0
                    for c in range(k):
                        label = matrix[ix(row + columns[side, c])]
                        if label < 0:
                            label = draw_label(rng, item_cum, items[ix(item)])
                        if c < n_perturbed[side]:
                            f += code[ix(label)]
                        else:
                            e += code[ix(label)]
                    if side == 1:
                        e_a, f_a = e, f
                    else:
                        e_b, f_b = e, f
            offset = t_base_h + ((row_of[ix(f_a)] - start_h) * width_b + row_of[ix(f_b)] - start_kh) * n_out_h
            o = alias_draw(rng, t_prob, t_alias, offset, n_out_h)
            tg = row_of[ix(v_g)] - first
            ta = row_of[ix(e_a + code_a[ix(h), ix(o)])] - first
            tb = row_of[ix(e_b + code_b[ix(h), ix(o)])] - first
            if gather:
                triples[ix((tg * n_vectors + ta) * n_vectors + tb)] += 1
            else:
                add_pair(tg, ta, tb, terms, acc, 1)


@numba.njit(cache=True, inline="always")
def code_noise(rng, noised, noise_tables, code, noise, vector):
    """Label a slot's ``noised[1]`` replaced responses of A* and ``noised[2]`` of B* in one draw from the noise
    tables (:class:`analysis.engine.perturbation.NoiseCodes`), or beyond them by :func:`dirichlet_noise`, adding
    their codes to ``vector[1]`` and ``vector[2]``."""
    offset = noise_tables.base[ix(noised[1]), ix(noised[2])]
    if offset >= 0:
        o = alias_draw(rng, noise_tables.prob, noise_tables.alias, offset, noise_tables.size[ix(noised[1]),
                                                                                             ix(noised[2])])
        vector[1] += noise_tables.code_a[ix(offset + o)]
        vector[2] += noise_tables.code_b[ix(offset + o)]
        return
    swapped = dirichlet_noise(rng, noised[1], noised[2], noise_tables.chain, noise)  # a chain of beta-binomials
    for c in range(noise.shape[1]):
        vector[1] += noise[1 if swapped else 0, c] * code[c]
        vector[2] += noise[0 if swapped else 1, c] * code[c]


@numba.njit(cache=True, inline="always")
def add_coded(vector, pairs, gather, triples, counts, divergence, acc):
    """Add one slot whose count vectors are the codes ``vector`` (G, A*, B*; :class:`PairTables`) to the sums: by
    the pair tables' rows (or, with ``gather``, counted in ``triples``), else unpacked into ``counts``."""
    if not pairs.paired:  # unpack the counts (shift bits a label) for the metric pass
        field = (1 << pairs.shift) - 1
        for side in range(3):
            for c in range(counts.shape[2]):
                counts[side, 0, c] = (vector[side] >> (pairs.shift * c)) & field
        add_item(counts[0], counts[1], counts[2], 0, divergence, acc, 1)
        return
    n_vectors = pair_rows(pairs.terms)
    tg = pairs.row_of[ix(vector[0])] - pairs.first
    ta = pairs.row_of[ix(vector[1])] - pairs.first
    tb = pairs.row_of[ix(vector[2])] - pairs.first
    if gather:
        triples[ix((tg * n_vectors + ta) * n_vectors + tb)] += 1
    else:
        add_pair(tg, ta, tb, pairs.terms, acc, 1)


@numba.njit(cache=True, _nrt=False)
def general_slots(rng, groups, draw, chances, divergence, pairs, masks, noise_tables, options, complete, work, acc):
    """Each slot response by response (or rater by rater), B's perturbable responses replaced one by one, by
    masks, or thinned and labelled from the noise tables; then the slot added to the sums."""
    h_cdf = chances.split  # the null's law of h
    item_start, items, rater_start = groups.item_start, groups.items, groups.rater_start
    matrix_start, matrix, item_cum = groups.matrix_start, groups.matrix, groups.item_cum
    k, epsilon, shared, prior = draw.k, draw.epsilon, draw.shared, draw.prior
    code = pairs.code
    m_prob, m_alias, m_count, m_pos = masks.prob, masks.alias, masks.count, masks.pos
    gather, masked, thinned = options.gather, options.masks, options.noise_tables
    columns, n_perturbed, urn, counts, vector = work.columns, work.n_perturbed, work.urn, work.counts, work.vector
    pert_old, noised, noise, weight, run = work.pert_old, work.noised, work.noise, work.weight, work.run
    slot_group, slot_local, triples = work.slot_group, work.slot_local, work.triples
    n_labels = item_cum.shape[1]
    n_masks = m_prob.shape[0]
    use_urn = epsilon > 0.0 and shared and not thinned
    n_drawn, per_group = group_layout(draw.n, groups.single_group, groups.group_size)
    for d in range(n_drawn):
        group = slot_group[ix(d * per_group)]
        n_raters = rater_start[ix(group + 1)] - rater_start[ix(group)]
        draw_columns(rng, n_raters, k, epsilon, draw.null, h_cdf, columns, n_perturbed)
        base = matrix_start[ix(group)]
        first_item = item_start[ix(group)]
        rater_loop = reads_by_rater(options, n_raters, k)
        if rater_loop:
            weigh_raters(columns, n_perturbed, n_raters, weight, run)
        for s in range(per_group):
            local = slot_local[ix(d * per_group + s)]
            item = first_item + local  # its place in items (read only for a missing label)
            row = base + local * n_raters
            if use_urn:  # a loop, not urn[:] = 0: a slice per slot would take a reference count
                for c in range(n_labels):
                    urn[c] = 0
            p = 0  # masked: how many perturbable responses are listed in pert_old
            noised[1] = 0  # thinned: how many of A*'s and B*'s responses are replaced
            noised[2] = 0
            if rater_loop and complete[ix(item)]:
                # the item's label from each of the group's raters, read once and weighted by its columns;
                # B's replaced responses picked by one mask and counted per rater by their bits in its runs
                mask = draw_mask(rng, k, m_prob, m_alias) if thinned else 0
                e_g = e_a = e_b = f_a = f_b = 0
                for rater in range(n_raters):
                    unit = code[ix(matrix[ix(row + rater)])]
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
                vector[1] = e_a + f_a
                vector[2] = e_b + f_b
            else:  # response by response
                mask = draw_mask(rng, k, m_prob, m_alias) if thinned else 0
                for side in range(3):
                    e = 0
                    for c in range(k):
                        label = matrix[ix(row + columns[side, c])]
                        if label < 0:
                            label = draw_label(rng, item_cum, items[ix(item)])
                        if c < n_perturbed[side]:
                            if thinned:  # a replaced response counts toward its side's noise, drawn below
                                bit = mask & 1
                                mask >>= 1
                                noised[side] += bit
                                e += code[ix(label)] * (1 - bit)
                                continue
                            if masked:
                                pert_old[ix(p)] = label
                                p += 1
                            else:
                                label = perturbed(rng, label, epsilon, shared, urn, prior)
                        e += code[ix(label)]
                    vector[side] = e
            if noised[1] + noised[2] > 0:  # thinned: the replaced responses' labels, from the noise tables
                code_noise(rng, noised, noise_tables, code, noise, vector)
            for chunk in range(0, p, MASK_BITS):  # masked: replace the responses the masks pick
                mask = alias_draw(rng, m_prob, m_alias, 0, n_masks)
                for j in range(m_count[ix(mask)]):
                    q = chunk + m_pos[ix(mask), j]
                    if q >= p:
                        break
                    side = 1 if q < n_perturbed[1] else 2
                    old = pert_old[ix(q)]
                    vector[side] += code[ix(replacement(rng.random(), old, shared, urn, prior))] - code[ix(old)]
            add_coded(vector, pairs, gather, triples, counts, divergence, acc)


@numba.njit(cache=True, _nrt=False)
def settle_triples(rng, draw, terms, defer, triples, spread, acc):
    """Add each gathered (gold, A, B) triple's slots to the sums once, and clear it; deferred (K = 1),
    ``Binomial(x, epsilon)`` of a triple's ``x`` slots replace their one perturbable response first (A*'s in the
    second half of ``triples``, else B*'s; a response's row is its label), the replacements shared out over the
    labels by a multinomial (uniform: over the C - 1 others) in ``spread``."""
    n_vectors = pair_rows(terms)
    cube = n_vectors**3
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
        on_a = e >= cube
        old = ta if on_a else tb
        fired = binomial(rng, x, draw.epsilon)
        if x > fired:
            add_pair(tg, ta, tb, terms, acc, x - fired)
        share_out(rng, fired, old, draw.shared, draw.steps, spread)
        for c in range(spread.shape[0]):
            if spread[c] > 0:
                add_pair(tg, c if on_a else ta, tb if on_a else c, terms, acc, spread[c])
