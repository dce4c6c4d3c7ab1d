"""The pigeonhole kernel: S4's replicates, the raters shared across items on any design (the methods page).

A replicate draws ``N'`` items with replacement and, for each of G, A and B, a stream of raters drawn with
replacement from the whole pool (the pigeonhole bootstrap's rater draw, Owen 2007, read in the order drawn). A drawn
item's ``K'`` responses of one model are the labels of the first ``K'`` raters of that model's stream who rated the
item, each as often as the stream names them; the stream goes on until every drawn item has its ``K'``, so no item
is ever left without a rater and ``N'`` and ``K'`` are met exactly. On a fully crossed table every rater rated every
item, so every item takes the stream's first ``K'`` raters: S1's law.

The stream is drawn as one unit-rate Poisson process per rater (the order of their merged arrivals is an iid uniform
stream of raters), and lazily: a rater's arrivals are drawn the first time a drawn item reads them, and kept for the
replicate, so items that share a rater share its place in the stream. An item's first ``K'`` arrivals are merged
from its raters' processes with a small heap. Each distinct drawn item is read once a replicate; its slots differ
only in B's perturbation. Under the null the ``2K'`` columns of A and B (positions in their streams) are pooled and
split in half once per replicate, as S1's one group is; B's responses are perturbed before the split, a slot's
replaced responses sharing its urn.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numba
import numpy as np

from analysis.engine.draws import uniform_index
from analysis.engine.indices import ix
from analysis.engine.metrics import accumulator, add_item, clear, store
from analysis.engine.rule import perturbed



class Streams(NamedTuple):
    """A replicate's rater streams, one per model (G, A, B): each rater's arrival times drawn so far
    (``times[model, rater, :drawn]``), valid where ``stamp`` holds the replicate's number."""

    times: np.ndarray
    drawn: np.ndarray
    stamp: np.ndarray


@numba.njit(cache=True, inline="always")
def arrival(rng, streams, model, rater, p, replicate):
    """The ``p``-th arrival time (from 0) of ``rater`` in ``model``'s stream, drawn now if not yet."""
    if streams.stamp[ix(model), ix(rater)] != replicate:
        streams.stamp[ix(model), ix(rater)] = replicate
        streams.drawn[ix(model), ix(rater)] = 0
    drawn = streams.drawn[ix(model), ix(rater)]
    while drawn <= p:
        last = streams.times[ix(model), ix(rater), ix(drawn - 1)] if drawn > 0 else 0.0
        streams.times[ix(model), ix(rater), ix(drawn)] = last - math.log(1.0 - rng.random())
        drawn += 1
    streams.drawn[ix(model), ix(rater)] = drawn
    return streams.times[ix(model), ix(rater), ix(p)]


@numba.njit(cache=True)
def read_item(rng, item, rater_start, matrix, raters, streams, replicate, heap_t, heap_j, next_p, out):
    """The labels of ``item``'s ``K'`` columns in each model's stream into ``out[model, :]``: its raters'
    arrivals merged in time order by a binary heap (``heap_t``, ``heap_j``, ``next_p`` are scratch)."""
    lo = rater_start[ix(item)]
    m = rater_start[ix(item + 1)] - lo
    k = out.shape[1]
    for model in range(3):
        for j in range(m):  # every rater's first arrival, then heapified
            next_p[j] = 1
            heap_t[j] = arrival(rng, streams, model, raters[ix(lo + j)], 0, replicate)
            heap_j[j] = j
        for start in range(m // 2 - 1, -1, -1):
            sift_down(heap_t, heap_j, start, m)
        for c in range(k):
            j = heap_j[0]
            out[model, c] = matrix[ix(lo + j)]
            heap_t[0] = arrival(rng, streams, model, raters[ix(lo + j)], next_p[ix(j)], replicate)
            next_p[ix(j)] += 1
            sift_down(heap_t, heap_j, 0, m)


@numba.njit(cache=True, inline="always")
def sift_down(heap_t, heap_j, at, size):
    """Restore the heap order below position ``at`` of a min-heap of ``size`` times."""
    while True:
        left = 2 * at + 1
        if left >= size:
            return
        child = left + 1 if left + 1 < size and heap_t[ix(left + 1)] < heap_t[ix(left)] else left
        if heap_t[ix(at)] <= heap_t[ix(child)]:
            return
        heap_t[ix(at)], heap_t[ix(child)] = heap_t[ix(child)], heap_t[ix(at)]
        heap_j[ix(at)], heap_j[ix(child)] = heap_j[ix(child)], heap_j[ix(at)]
        at = child


@numba.njit(cache=True)
def draw_split(rng, k, null, to_a):
    """Which of the ``2K'`` pooled columns (A's, then B's) go to A*: a uniform half under the null (a partial
    Fisher-Yates shuffle), A's own under the alternative."""
    for c in range(2 * k):
        to_a[c] = c < k
    if not null:
        return
    order = np.arange(2 * k)
    for c in range(k):
        j = c + uniform_index(rng, 2 * k - c)
        order[c], order[ix(j)] = order[ix(j)], order[c]
    for c in range(2 * k):
        to_a[c] = False
    for c in range(k):
        to_a[ix(order[c])] = True


@numba.njit(cache=True)
def add_slot(rng, labels, to_a, draw, urn, counts, divergence, acc):
    """One slot of an item read as ``labels`` (models x K'): G's counts, A's columns and B's perturbed ones sent to
    A* or B* by ``to_a``, the slot added to the sums."""
    k = labels.shape[1]
    for side in range(3):
        for c in range(counts.shape[2]):
            counts[side, 0, c] = 0
    if draw.epsilon > 0.0 and draw.shared:
        for c in range(urn.shape[0]):
            urn[c] = 0
    for c in range(k):
        counts[0, 0, ix(labels[0, c])] += 1
        counts[1 if to_a[c] else 2, 0, ix(labels[1, c])] += 1
    for c in range(k):
        label = labels[2, c]
        if draw.epsilon > 0.0:
            label = perturbed(rng, label, draw.epsilon, draw.shared, urn, draw.prior)
        counts[1 if to_a[ix(k + c)] else 2, 0, ix(label)] += 1
    add_item(counts[0], counts[1], counts[2], 0, divergence, acc, 1)


class ByRater(NamedTuple):
    """The per-item layout turned round: rater ``r``'s items ``items[start[r]:start[r + 1]]`` and its labels of them
    ``labels[...]``, for reading the streams rater by rater."""

    start: np.ndarray
    items: np.ndarray
    labels: np.ndarray


def by_rater(rater_start: np.ndarray, matrix: np.ndarray, raters: np.ndarray, n_pool: int) -> ByRater:
    """:class:`ByRater` of the per-item layout (:func:`analysis.engine.samplers.make_layout`)."""
    item = np.repeat(np.arange(len(rater_start) - 1), np.diff(rater_start))
    order = np.argsort(raters, kind="stable")
    start = np.concatenate([[0], np.cumsum(np.bincount(raters, minlength=n_pool))]).astype(np.int64)
    return ByRater(start, item[order].astype(np.int64), matrix[order])


@numba.njit(cache=True)
def read_by_stream(rng, k, n_pool, turned, drawn, n_drawn, filled, labels):
    """The labels of every drawn item's ``K'`` columns in each model's stream, walking the stream itself: each
    rater drawn gives the next column to every drawn item of theirs still short of ``K'`` (cheaper than
    :func:`read_item` where the drawn items are many and hold most of the pool between them)."""
    for model in range(3):
        for d in range(n_drawn):
            filled[ix(drawn[d])] = 0
        short = n_drawn
        while short > 0:
            rater = uniform_index(rng, n_pool)
            for e in range(turned.start[ix(rater)], turned.start[ix(rater + 1)]):
                item = turned.items[ix(e)]
                f = filled[ix(item)]
                if 0 <= f < k:
                    labels[ix(item), model, ix(f)] = turned.labels[ix(e)]
                    filled[ix(item)] = f + 1
                    short -= f + 1 == k
    for d in range(n_drawn):
        filled[ix(drawn[d])] = -1


@numba.njit(cache=True)
def pigeonhole_replicates(rng, rater_start, matrix, raters, turned, n_pool, item_cost, draw, divergence, out,
                          confusion):
    """Replicates of S4 (module docstring). ``rater_start``, ``matrix`` and ``raters`` are the per-item layout
    (:func:`analysis.engine.samplers.make_layout`): item ``i``'s labels ``matrix[rater_start[i]:rater_start[i + 1]]``
    by its raters ``raters[...]`` (codes in the pool of ``n_pool``); ``turned`` is the same by rater
    (:func:`by_rater`). A replicate reads its drawn items item by item (:func:`read_item`) or by walking the streams
    (:func:`read_by_stream`), whichever its expected work is the smaller, an arrival read item by item counting
    ``item_cost`` items visited (:data:`analysis.engine.path.ITEM_COST`): the same law."""
    n, k = draw.n, draw.k
    n_items = rater_start.shape[0] - 1
    n_labels = confusion.shape[2]
    ratings = rater_start[ix(n_items)]
    max_m = 1
    for i in range(n_items):
        max_m = max(max_m, rater_start[ix(i + 1)] - rater_start[ix(i)])
    per_item, per_rater = ratings / n_items, ratings / n_pool  # mean raters of an item, items of a rater
    streams = Streams(np.zeros((3, n_pool, k)), np.zeros((3, n_pool), dtype=np.int64),
                      np.zeros((3, n_pool), dtype=np.int64))
    labels = np.zeros((n_items, 3, k), dtype=np.int8)
    filled = np.full(n_items, -1, dtype=np.int64)  # -1: not drawn in this replicate
    slots, drawn = np.empty(n, dtype=np.int64), np.empty(min(n, n_items), dtype=np.int64)
    heap_t, heap_j, next_p = np.empty(max_m), np.empty(max_m, dtype=np.int64), np.empty(max_m, dtype=np.int64)
    to_a = np.zeros(2 * k, dtype=np.bool_)
    urn = np.zeros(n_labels, dtype=np.int64)
    counts = np.zeros((3, 1, n_labels), dtype=np.int64)
    acc = accumulator(n_labels)
    for r in range(out.shape[0]):
        clear(acc)
        draw_split(rng, k, draw.null, to_a)
        n_drawn = 0
        for s in range(n):
            item = uniform_index(rng, n_items)
            slots[s] = item
            if filled[ix(item)] < 0:
                filled[ix(item)] = 0
                drawn[ix(n_drawn)] = item
                n_drawn += 1
        by_item = item_cost * n_drawn * (per_item + k * math.log2(per_item + 1.0))
        by_stream = n_pool / per_item * (k + math.log(n_drawn + 1.0)) * per_rater
        if by_stream < by_item:
            read_by_stream(rng, k, n_pool, turned, drawn, n_drawn, filled, labels)
        else:
            for d in range(n_drawn):
                filled[ix(drawn[d])] = -1
                read_item(rng, drawn[d], rater_start, matrix, raters, streams, r + 1, heap_t, heap_j, next_p,
                          labels[ix(drawn[d])])
        for s in range(n):
            add_slot(rng, labels[ix(slots[s])], to_a, draw, urn, counts, divergence, acc)
        store(acc, out[r], confusion[r])
