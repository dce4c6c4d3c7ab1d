"""The pigeonhole kernel: S4's replicates, the raters shared across items on any design (the methods page).

A replicate draws ``N'`` items with replacement and, for each of G, A and B, a stream of raters drawn with
replacement from the whole pool (the pigeonhole bootstrap's rater draw, Owen 2007, read in the order drawn). A drawn
item's ``K'`` responses of one model are the labels of the first ``K'`` raters of that model's stream who rated the
item, each as often as the stream names them; the stream goes on until every drawn item has its ``K'``, so no item
is ever left without a rater and ``N'`` and ``K'`` are met exactly. On a fully crossed table every rater rated every
item, so every item takes the stream's first ``K'`` raters: S1's law.

A replicate draws how many slots each item gets, then reads every distinct drawn item once, walking each model's
stream until every drawn item has its ``K'``: the whole stream, each rater drawn giving a column to every drawn item
of theirs (:func:`read_by_stream`), or the stream of the drawn items' own raters, in which a rater whose drawn items
are all full is dropped (:func:`read_by_walk`; the stream restricted to the raters that can still give a column is
an iid uniform stream of them, so the law is the same). The whole stream hands its last short items to their walk,
whose stream then goes on from where the whole one stopped. An item's slots differ only in B's perturbation, and are
drawn together as the by-item kernel draws a group's (:mod:`analysis.engine.kernels.by_item`) or, under a shared
noise law beyond the perturbation tables, thinned slot by slot as the direct kernel thins a slot's
(:func:`thinned_items`). Under the null the ``2K'`` columns of A and B (positions in their streams) are pooled and
mixed once per replicate, as S1's one group is; B's responses are perturbed before the split, a slot's replaced
responses sharing its urn.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numba
import numpy as np

from analysis.engine.draws import draw_multiplicities, uniform_index
from analysis.engine.indices import ix
from analysis.engine.kernels.by_item import (item_work, paired_slots, slot_modes, table_offset, tabled_items,
                                             untabled_items)
from analysis.engine.kernels.direct import add_coded, code_noise, settle_triples
from analysis.engine.lookup import draw_mask
from analysis.engine.metrics import accumulator, clear, store


LOW = (1 << 32) - 1  # the low half of a packed word: read_by_stream's columns an item lacks, a walk segment's live end


class Walk(NamedTuple):
    """Scratch of the items' walk (:func:`turn_round`, :func:`walk`) for the items ``listed`` (their numbers in the
    layout) at drawn positions ``where``. Per rater of the pool: its listed ratings (``count``, 0 between walks) and
    its first slot among the raters with listed ratings (``slot``; ``active`` lists them in that order, to clear
    ``count``); per slot, its rater's segment of ``entries`` (the listed items' ratings turned round, rater by rater,
    each its item's drawn position times 256 plus its label) in one word, ``words[t]`` = start << 32 | end of the
    items still short of ``K'``, a word that moves when its rater leaves the stream, so that the slots of raters with
    a live item come first; ``ends[start]``: the segment's whole end. Per drawn position: the columns its item has
    (``filled``)."""

    count: np.ndarray
    slot: np.ndarray
    active: np.ndarray
    words: np.ndarray
    ends: np.ndarray
    entries: np.ndarray
    listed: np.ndarray
    where: np.ndarray
    filled: np.ndarray


@numba.njit(cache=True)
def walk_scratch(n_pool, ratings, cap, entries):
    """A :class:`Walk` for a pool of ``n_pool`` raters, ``ratings`` ratings and at most ``cap`` drawn items, its
    entries and segment ends of ``entries``' type (:func:`by_rater`'s, wide enough for any item's number and any
    rating's position)."""
    return Walk(np.zeros(n_pool, dtype=np.int64), np.zeros(n_pool, dtype=np.int64), np.zeros(n_pool, dtype=np.int64),
                np.zeros(n_pool, dtype=np.int64), np.zeros(ratings, dtype=entries.dtype),
                np.zeros(ratings, dtype=entries.dtype), np.zeros(cap, dtype=np.int64), np.zeros(cap, dtype=np.int64),
                np.zeros(cap, dtype=np.int64))


@numba.njit(cache=True, _nrt=False)
def turn_round(rater_start, matrix, raters, scratch, n_listed):
    """Lay the ratings of the ``n_listed`` items of ``scratch.listed`` out rater by rater in ``scratch``'s segments,
    each item named by its drawn position; returns how many raters have one."""
    count, slot, active, words, ends = scratch.count, scratch.slot, scratch.active, scratch.words, scratch.ends
    entries, listed, where = scratch.entries, scratch.listed, scratch.where
    n_touched = 0
    for j in range(n_listed):
        for e in range(rater_start[ix(listed[j])], rater_start[ix(listed[j] + 1)]):
            rater = raters[ix(e)]
            if count[ix(rater)] == 0:
                slot[ix(rater)] = n_touched
                active[ix(n_touched)] = rater
                n_touched += 1
            count[ix(rater)] += 1
    at = 0
    for t in range(n_touched):
        words[t] = at << 32 | at  # the low half counts the segment's entries in, up to its end
        ends[ix(at)] = at + count[ix(active[t])]
        at += count[ix(active[t])]
        count[ix(active[t])] = 0
    for j in range(n_listed):
        for e in range(rater_start[ix(listed[j])], rater_start[ix(listed[j] + 1)]):
            t = slot[ix(raters[ix(e)])]
            w = words[ix(t)]
            entries[ix(w & LOW)] = where[j] * 256 + matrix[ix(e)]
            words[ix(t)] = w + 1
    return n_touched


@numba.njit(cache=True, _nrt=False)
def walk(rng, k, scratch, n_touched, short, flat, base):
    """One model's columns for the ``short`` listed items (:func:`turn_round`), from the stream restricted to their
    raters: each rater drawn gives the next column to each of their items still short of ``K'`` and drops the full
    ones from their segment, and a rater left with none leaves the stream. The column ``f`` of the item at drawn
    position ``d`` goes to ``flat[base + d K' + f]``; ``scratch.filled[d]`` holds the columns it had before."""
    words, seg, filled = scratch.words, scratch.entries, scratch.filled
    spare = flat.shape[0] - 1
    n_active = n_touched
    t = uniform_index(rng, n_active)
    w = words[ix(t)]
    while short > 0:
        # the next rater, drawn and its segment's word loaded before this segment is read, so that the two
        # overlap (the end of a segment is a branch the processor cannot foresee)
        after = uniform_index(rng, n_active)
        w_after = words[ix(after)]
        q = w >> 32
        kept = q  # the items kept move to the segment's front, those full to its back
        for p in range(q, w & LOW):  # without a branch: a full item writes to the spare byte, and is not kept
            entry = seg[ix(p)]
            d = entry >> 8
            f = filled[ix(d)]
            live = f < k
            flat[ix(base + d * k + f if live else spare)] = entry & 255
            filled[ix(d)] = f + live
            seg[ix(p)] = seg[ix(kept)]
            seg[ix(kept)] = entry
            kept += f + 1 < k
            short -= f + 1 == k
        gone = kept == q  # the rater leaves the stream: the last active one takes its slot
        n_active -= gone
        other = n_active if gone else t
        words[ix(t)] = words[ix(other)]
        words[ix(other)] = q << 32 | kept
        # the next rater was drawn among the raters active before this one was read: kept if it falls among those
        # still active (given that, it is uniform among them), else drawn again among them; read again if it is
        # this same slot, whose word has moved
        if after >= n_active:
            after = uniform_index(rng, n_active) if n_active > 0 else 0
            w_after = words[ix(after)]
        elif after == t:
            w_after = words[ix(after)]
        t, w = after, w_after


@numba.njit(cache=True, _nrt=False)
def read_by_walk(rng, k, rater_start, matrix, raters, scratch, drawn, n_drawn, flat):
    """The labels of every drawn item's ``K'`` columns in each model's stream, into ``flat`` (models x drawn
    positions x ``K'``), by the walk of the stream restricted to the drawn items (:func:`walk`). The stream restricted
    to the raters that can still give a column is an iid uniform stream of them, so this is :func:`read_by_stream`'s
    law; its work grows with the drawn ratings and columns, not the pool."""
    listed, where, filled, words, ends = scratch.listed, scratch.where, scratch.filled, scratch.words, scratch.ends
    for d in range(n_drawn):
        listed[d] = drawn[d]
        where[d] = d
    n_touched = turn_round(rater_start, matrix, raters, scratch, n_drawn)
    for model in range(3):
        for d in range(n_drawn):
            filled[d] = 0
        walk(rng, k, scratch, n_touched, n_drawn, flat, model * ((flat.shape[0] - 1) // 3))
        for t in range(n_touched):  # each segment whole again, in the slot the walk left it in
            start = words[t] >> 32
            words[t] = start << 32 | ends[ix(start)]


@numba.njit(cache=True)
def draw_split(rng, k, null, pairs, to_a):
    """Which of the ``2K'`` pooled columns (A's, then B's) go to A*: under the null a uniform half (a partial
    Fisher-Yates shuffle), or with ``pairs`` one of each pair (A's ``c``-th, B's ``c``-th) by a coin; A's own under
    the alternative. Returns how many of B's columns go to A*."""
    for c in range(2 * k):
        to_a[c] = c < k
    if not null:
        return 0
    if pairs:
        h = 0
        for c in range(k):
            swap = uniform_index(rng, 2) == 1
            to_a[c], to_a[k + c] = not swap, swap
            h += swap
        return h
    order = np.arange(2 * k)
    for c in range(k):
        j = c + uniform_index(rng, 2 * k - c)
        order[c], order[ix(j)] = order[ix(j)], order[c]
    for c in range(2 * k):
        to_a[c] = False
    for c in range(k):
        to_a[ix(order[c])] = True
    h = 0
    for c in range(k, 2 * k):
        h += to_a[ix(c)]
    return h


@numba.njit(cache=True, _nrt=False)
def hold_items(labels, n_drawn, to_a, perturb, listed, work):
    """Count the drawn item at position ``i``, its columns ``labels[:, i]`` (models x K'), into ``work``'s ``i``-th held
    item (as the by-item kernel's :func:`analysis.engine.kernels.by_item.read_items` does): G's labels, A's columns
    on the side ``to_a`` sends them to, and B's, perturbable where ``perturb`` (listed one by one, in column order,
    where ``listed``)."""
    fixed, pert, pert_label = work.fixed, work.pert, work.pert_label
    k = labels.shape[2]
    for i in range(n_drawn):
        for side in range(3):
            for c in range(fixed.shape[2]):
                fixed[i, side, c] = 0
                pert[i, side, c] = 0
        for c in range(k):
            fixed[i, 0, ix(labels[0, i, c])] += 1
            fixed[i, 1 if to_a[c] else 2, ix(labels[1, i, c])] += 1
            side = 1 if to_a[ix(k + c)] else 2
            label = labels[2, i, c]
            if not perturb:
                fixed[i, side, ix(label)] += 1
                continue
            pert[i, side, ix(label)] += 1
            if listed:
                pert_label[i, c] = label


@numba.njit(cache=True, inline="always")
def fixed_codes(code, labels, i, to_a):
    """The codes (``code``: a label's) of the drawn item ``i``'s fixed responses, read from its columns
    ``labels[:, i]`` (models x K'): G's, and A's on the side of A* or B* that ``to_a`` sends each to."""
    e_g = e_a = e_b = 0
    for c in range(labels.shape[2]):
        e_g += code[ix(labels[0, i, c])]
        a = code[ix(labels[1, i, c])]
        e_a += a if to_a[c] else 0
        e_b += 0 if to_a[c] else a
    return e_g, e_a, e_b


@numba.njit(cache=True, _nrt=False)
def coded_items(rng, labels, n_drawn, to_a, pairs, perturbation, work, acc):
    """Each drawn item's slots as :func:`tabled_items` draws them where the pair tables score them
    (:func:`paired_slots`), the item's codes summed straight from its columns ``labels[:, i]`` (models x K'): G's,
    A's on the side ``to_a`` sends them to, and B's, all perturbable, on theirs."""
    code, mult, held = perturbation.code, work.mult, work.held
    k = labels.shape[2]
    h = work.n_perturbed[1]
    for i in range(n_drawn):
        e_g, e_a, e_b = fixed_codes(code, labels, i, to_a)
        x_a = x_b = 0
        for c in range(k):
            b = code[ix(labels[2, i, c])]
            x_a += b if to_a[ix(k + c)] else 0
            x_b += 0 if to_a[ix(k + c)] else b
        paired_slots(rng, mult[ix(held[i])], h, table_offset(perturbation, h, k, x_a, x_b), e_g, e_a, e_b, pairs,
                     perturbation, work.outcomes, acc)


@numba.njit(cache=True, _nrt=False)
def thinned_items(rng, labels, n_drawn, to_a, divergence, pairs, masks, noise_codes, work, acc):
    """Each drawn item's slots with B's responses, all perturbable, thinned as the direct kernel thins a slot's
    (:func:`analysis.engine.kernels.direct.general_slots`): per slot, one draw from the mask tables per
    ``MASK_BITS`` of them says which are replaced, and the replaced ones are labelled in one draw from the noise
    tables (:func:`code_noise`); the item's columns ``labels[:, i]`` (models x K') are coded once, for all its
    slots (:func:`fixed_codes`), B's response ``q`` on the side ``to_a[K' + q]`` sends it to."""
    code, m_prob, m_alias = pairs.code, masks.prob, masks.alias
    mult, held = work.mult, work.held
    counts, noised, noise, vector = work.counts, work.noised, work.noise, work.vector
    k = labels.shape[2]
    for i in range(n_drawn):
        e_g, e_a, e_b = fixed_codes(code, labels, i, to_a)
        for _ in range(mult[ix(held[i])]):
            mask = draw_mask(rng, k, m_prob, m_alias)
            v_a, v_b, x_a, x_b = e_a, e_b, 0, 0
            for q in range(k):  # without a branch: B's response q, on A*'s side or B*'s, kept or replaced
                bit = (mask >> q) & 1
                on_a = to_a[ix(k + q)]
                kept = code[ix(labels[2, i, q])] * (1 - bit)
                v_a += kept if on_a else 0
                v_b += 0 if on_a else kept
                x_a += bit if on_a else 0
                x_b += 0 if on_a else bit
            vector[0], vector[1], vector[2] = e_g, v_a, v_b
            noised[1], noised[2] = x_a, x_b
            if x_a + x_b > 0:
                code_noise(rng, noised, noise_codes, code, noise, vector)
            add_coded(vector, pairs, False, vector, counts, divergence, acc)  # no gathering: nothing in "triples"


@numba.njit(cache=True)
def count_triples(labels, held, n_drawn, mult, swapped, perturb, n_labels, triples):
    """K' = 1: each drawn item's slots counted into ``triples`` by their (gold, A*, B*) labels (a label is its row of
    the pair tables), A*'s and B*'s swapped where the null split sent B's column to A* and A's to B*; with
    ``perturb``, those whose perturbable response is A*'s in the second half (the layout :func:`settle_triples`
    reads)."""
    base = n_labels**3 if swapped and perturb else 0
    for d in range(n_drawn):
        a, b = labels[1, d, 0], labels[2, d, 0]
        if swapped:
            a, b = b, a
        triples[ix(base + (labels[0, d, 0] * n_labels + a) * n_labels + b)] += mult[ix(held[d])]


class ByRater(NamedTuple):
    """The per-item layout turned round: rater ``r``'s ratings ``entries[start[r]:start[r + 1]]``, each its item's
    number times 256 plus its label (one load a visit), for reading the streams rater by rater."""

    start: np.ndarray
    entries: np.ndarray


def by_rater(rater_start: np.ndarray, matrix: np.ndarray, raters: np.ndarray, n_pool: int) -> ByRater:
    """:class:`ByRater` of the per-item layout (:func:`analysis.engine.samplers.make_layout`)."""
    n_items = len(rater_start) - 1
    item = np.repeat(np.arange(n_items, dtype=np.int64), np.diff(rater_start))
    order = np.argsort(raters, kind="stable")
    start = np.concatenate([[0], np.cumsum(np.bincount(raters, minlength=n_pool))]).astype(np.int64)
    entries = item[order] * 256 + matrix[order].astype(np.int64)
    return ByRater(start, entries.astype(np.int32 if n_items < 2**23 else np.int64))


@numba.njit(cache=True, _nrt=False)
def read_by_stream(rng, k, n_pool, turned, drawn, n_drawn, state, flat, tail, rater_start, matrix, raters, scratch):
    """:func:`read_by_walk`'s labels, walking the stream itself: each rater drawn gives the next column to every
    drawn item of theirs still short of ``K'`` (cheaper than :func:`read_by_walk` where the drawn items are many and
    hold most of the pool between them), until ``tail`` items or fewer are short; the walk of their own raters
    (:func:`walk`) gives them the rest, as the stream's own rest restricted to those raters would (the future of an
    iid stream does not depend on where it was stopped). ``flat`` holds the labels (models x drawn positions x
    ``K'``, as :func:`read_by_walk`'s) and one spare byte at its end; ``state[item]`` holds where in ``flat`` its
    next column goes (the high 32 bits) and how many columns it still lacks (the low 32 bits, :data:`LOW`; 0 for
    an item not drawn and so between replicates), so that a visit loads and stores one word. A visit writes without
    a branch: an item that needs no column writes to the spare byte (a branch taken at random would cost more)."""
    spare = flat.shape[0] - 1
    start, entries = turned.start, turned.entries
    listed, where, filled = scratch.listed, scratch.where, scratch.filled
    for model in range(3):
        base = model * (spare // 3)
        for d in range(n_drawn):
            state[ix(drawn[d])] = (base + d * k) << 32 | k
        short = n_drawn
        after = uniform_index(rng, n_pool)
        while short > tail:
            # the next rater drawn, and where its items are, before this one's are read (so that the two overlap)
            rater, after = after, uniform_index(rng, n_pool)
            for e in range(start[ix(rater)], start[ix(rater + 1)]):
                entry = entries[ix(e)]
                item = entry >> 8
                got = state[ix(item)]
                left = got & LOW
                live = np.int64(left > 0)
                flat[ix((got >> 32) if live else spare)] = entry & 255
                state[ix(item)] = got + (live << 32) - live
                short -= live & (left == 1)
        if short == 0:
            continue
        n_listed = 0
        for d in range(n_drawn):
            left = state[ix(drawn[d])] & LOW
            if left > 0:
                listed[ix(n_listed)] = drawn[d]
                where[ix(n_listed)] = d
                filled[d] = k - left
                state[ix(drawn[d])] = 0
                n_listed += 1
        walk(rng, k, scratch, turn_round(rater_start, matrix, raters, scratch, n_listed), n_listed, flat, base)


@numba.njit(cache=True)
def pigeonhole_replicates(rng, groups, raters, turned, n_pool, costs, draw, paired_split, chances, divergence,
                          pairs, options, perturbation, noise_tables, masks, noise_codes, out, confusion):
    """Replicates of S4 (module docstring). ``groups`` is the per-item layout
    (:func:`analysis.engine.samplers.make_layout`): item ``i``'s labels
    ``matrix[rater_start[i]:rater_start[i + 1]]`` by its raters ``raters[...]`` (codes in the pool of ``n_pool``);
    ``turned`` is the same by rater (:func:`by_rater`); ``paired_split``: the null mixes A's and B's columns pair by
    pair (:func:`draw_split`). A replicate draws how many slots each item gets and reads
    its drawn items by walking the whole stream (:func:`read_by_stream`) or the stream of their own raters
    (:func:`read_by_walk`), whichever its expected work is the smaller: the same law. ``costs`` = (a visit of the
    drawn items' own walk, turning a rating of an item the stream leaves short round for its walk), each counted in
    visits of the whole stream (:data:`analysis.engine.path.WALK_COST`, :data:`analysis.engine.path.TAIL_COST`); the
    stream hands its items to their walk once a visit of the stream finds a column more rarely than turning a short
    item round would cost.
    Then each distinct item's slots are drawn as the by-item kernel draws a group's: B's perturbation in one draw
    from the perturbation tables (``options.perturbation_tables``; where the pair tables score the slots, the
    item's codes summed straight from its columns, :func:`coded_items`) or response by response, slots that come out
    alike added once; with ``options.gather`` (K' = 1) they are counted per (gold, A*, B*) triple of labels and
    settled as the direct kernel settles its deferred triples (:func:`settle_triples`); with ``options.masks``, B's
    responses are thinned by the mask tables ``masks`` and labelled from the noise tables ``noise_codes`` in the
    direct kernel's form (:func:`thinned_items`)."""
    rater_start, matrix = groups.rater_start, groups.matrix
    n, k = draw.n, draw.k
    n_items = rater_start.shape[0] - 1
    n_labels = confusion.shape[2]
    ratings = rater_start[ix(n_items)]
    per_item, per_rater = ratings / n_items, ratings / n_pool  # mean raters of an item, items of a rater
    walk_cost, tail_cost = costs
    # with u items short, a step of the stream visits per_rater items for u per_item / n_pool columns: n_items / u
    # visits a column, against 2 per_item tail_cost to turn a short item round
    tail = int(n_items / (2.0 * per_item * tail_cost))
    cap = min(n, n_items)  # distinct items a replicate draws at most
    scratch = walk_scratch(n_pool, ratings, cap, turned.entries)
    if 3 * cap * k >= 1 << 31 or ratings >= 1 << 31:
        raise ValueError("a replicate's labels and the table's ratings must each number under 2**31 (the positions "
                         "read_by_stream and the walk pack in half a word)")
    flat = np.zeros(3 * cap * k + 1, dtype=np.int8)  # the labels and read_by_stream's spare byte
    labels = flat[:-1].reshape((3, cap, k))  # by model and drawn position
    state = np.zeros(n_items, dtype=np.int64)  # read_by_stream's: where its next column goes, and columns lacking
    to_a = np.zeros(2 * k, dtype=np.bool_)
    one = np.int64(1)  # literal 1s, or a literal 0 below, would compile second versions of the callees
    work = item_work(n_items, cap, k, n_labels, one, one, np.max(perturbation.n_out), one)
    mult, held = work.mult, work.held
    tabled, gather = options.perturbation_tables, options.gather
    triples = np.zeros(2 * n_labels**3 if gather else 1, dtype=np.int64)
    spread = np.zeros(n_labels, dtype=np.int64)
    perturb = draw.epsilon > 0.0
    _, split, by_label = slot_modes(draw.epsilon, k if perturb else 0, n_labels)
    masked = options.masks
    coded = tabled and pairs.paired  # the items' codes summed from their columns, for the pair tables
    listed = not tabled and (split or not by_label)  # whether the slots need B's responses one by one
    acc = accumulator(n_labels)
    for r in range(out.shape[0]):
        clear(acc)
        h = draw_split(rng, k, draw.null, paired_split, to_a)
        work.n_perturbed[1] = h if perturb else 0
        work.n_perturbed[2] = k - h if perturb else 0
        draw_multiplicities(rng, n, n_items, mult)
        n_drawn = np.int64(0)
        for i in range(n_items):  # without a branch: an item not drawn is written over by the next
            held[ix(n_drawn)] = i
            n_drawn += mult[i] > 0
            if n_drawn == cap:
                break
        by_walk = walk_cost * n_drawn * (k + 2.0 * per_item)
        by_stream = n_pool / per_item * (k + math.log(n_drawn + 1.0)) * per_rater
        if by_stream < by_walk:
            read_by_stream(rng, k, n_pool, turned, held, n_drawn, state, flat, tail, rater_start, matrix, raters,
                           scratch)
        else:
            read_by_walk(rng, k, rater_start, matrix, raters, scratch, held, n_drawn, flat)
        if gather:
            count_triples(labels, held, n_drawn, mult, to_a[1], perturb, n_labels, triples)
            settle_triples(rng, draw, pairs.terms, perturb, triples, spread, acc)
            store(acc, out[r], confusion[r])
            continue
        if coded:
            coded_items(rng, labels, n_drawn, to_a, pairs, perturbation, work, acc)
        elif masked:
            thinned_items(rng, labels, n_drawn, to_a, divergence, pairs, masks, noise_codes, work, acc)
        else:
            for c in range(k):  # B's sides by response, which untabled_items reads
                work.pert_side[c] = 1 if to_a[ix(k + c)] else 2
            hold_items(labels, n_drawn, to_a, perturb, listed, work)
            if tabled:
                tabled_items(rng, groups, np.int64(0), draw, chances, divergence, pairs, perturbation, noise_tables,
                             n_drawn, work, acc)
            else:
                untabled_items(rng, groups, np.int64(0), draw, chances, divergence, noise_tables, np.int64(0),
                               n_drawn, work, acc)
        store(acc, out[r], confusion[r])
