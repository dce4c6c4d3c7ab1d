"""The three multi-level bootstrap samplers (METHOD section 2) as numba kernels over a "group plan".

All three samplers draw *groups*, then items within a group, then rater columns within a group:

* **S1**: one group holding every item and every rater; ``N'`` items and one set of ``K'`` raters.
* **S2**: one group per item; ``N'`` groups of one item, each with its own ``K'`` raters.
* **S3**: one group per batch; ``B = ceil(N'/N_b)`` batches, ``n_b = max(1, floor(N'/B))`` items and ``K'``
  raters per drawn batch, where ``N_b`` is the median batch size.

A group stores its items, its raters and a dense (items x raters) label matrix, with ``-1`` where the rater did
not label the item; such a response is drawn from the item's own labels (the ragged-batch rule). A *rater
column* is one drawn rater of one drawn group. All draws are with replacement.

S2 also has a faster form on counts: drawing ``K'`` raters from an item's raters is drawing ``K'`` labels iid from
the item's label distribution, so the item's counts are ``Multinomial(K', p_item)`` (:func:`add_counts`).

Integer draws use ``floor(u * n)`` of one uniform double (bias below ``2**-40`` for any realistic ``n``), which is
several times faster in numba than ``Generator.integers``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numba
import numpy as np
from scipy.special import gammaln

from analysis.data import BATCHED, FULLY_CROSSED, AnnotationDataset
from analysis.errors import ParameterError, TopologyError

SAMPLERS = ("S1", "S2", "S3")
MAX_PLAN_CELLS = 200_000_000
BINOMIAL_FROM = 48  # from this many responses on, an item's counts are drawn as a chain of binomials
SMALL_BINOMIAL = 16  # below this many trials a binomial is a count of uniforms (faster than rng.binomial in numba)
MULTIPLICITY_CHAIN_FROM = 20  # slots per item from which item multiplicities are drawn as a chain of binomials


@dataclass(frozen=True)
class GroupPlan:
    """The dataset laid out in groups for one sampler (arrays only, so numba kernels can take them)."""

    sampler: str
    item_start: np.ndarray  # (groups + 1,) offsets into items
    items: np.ndarray  # global item index of each group item
    rater_start: np.ndarray  # (groups + 1,) offsets into raters
    raters: np.ndarray  # global rater index of each group rater
    matrix_start: np.ndarray  # (groups + 1,) offsets into matrix
    matrix: np.ndarray  # int8 labels, row-major (group items x group raters), -1 where missing
    item_share: np.ndarray  # (items, labels) each item's label shares (S2 on counts)
    item_cum: np.ndarray  # (items, labels) the same, cumulative (ragged fallbacks, categorical draws)
    single_group: bool
    group_size: int  # N_b, the median number of items per group

    @property
    def n_labels(self) -> int:
        return self.item_cum.shape[1]

    @property
    def groups(self) -> Groups:
        """The arrays the kernels read, as one group."""
        return Groups(self.item_start, self.items, self.rater_start, self.matrix_start, self.matrix, self.item_cum,
                      self.single_group, self.group_size)


class Groups(NamedTuple):
    """A :class:`GroupPlan`'s arrays for the kernels (numba takes a named tuple, not a dataclass)."""

    item_start: np.ndarray
    items: np.ndarray
    rater_start: np.ndarray
    matrix_start: np.ndarray
    matrix: np.ndarray
    item_cum: np.ndarray
    single_group: bool
    group_size: int


def check_sampler(sampler: str) -> str:
    name = str(sampler).upper()
    if name not in SAMPLERS:
        raise ParameterError(f"unknown sampler {sampler!r}; choose one of {', '.join(SAMPLERS)}")
    return name


def check_size(n: int, k: int) -> None:
    """N' and K' must be integers of at least 1."""
    for label, value in (("N (items)", n), ("K (responses per item)", k)):
        if int(value) != value or value < 1:
            raise ParameterError(f"{label} must be an integer >= 1, got {value!r}")


def item_shares(ds: AnnotationDataset) -> tuple[np.ndarray, np.ndarray]:
    """Each item's empirical label distribution and its cumulative form, shape (items, labels)."""
    counts = ds.item_label_counts.astype(float)
    shares = counts / counts.sum(1, keepdims=True)
    cum = np.cumsum(shares, axis=1)
    cum[:, -1] = 1.0
    return shares, cum


def _group_of_item(ds: AnnotationDataset, sampler: str) -> np.ndarray:
    topo = ds.topology
    if sampler == "S1":
        if topo.kind != FULLY_CROSSED:
            raise TopologyError(
                f"S1 needs fully crossed data (every rater rated every item), but {ds.name!r} is {topo.kind}: "
                f"{ds.n_ratings} ratings for {ds.n_items} items x {ds.n_raters} raters. Use S2 (any design) "
                "or S3 (batched designs)."
            )
        return np.zeros(ds.n_items, dtype=np.int64)
    if sampler == "S3":
        if topo.kind != BATCHED:
            raise TopologyError(
                f"S3 needs batched data (fixed rater sets per batch of items), but {ds.name!r} is {topo.kind}. "
                "Give the batch column (batch= / --batch) or use S2."
            )
        return topo.item_batch.astype(np.int64)
    return np.arange(ds.n_items, dtype=np.int64)


def make_plan(ds: AnnotationDataset, sampler: str) -> GroupPlan:
    """Lay ``ds`` out in groups for ``sampler``; raises :class:`TopologyError` when the design does not fit."""
    sampler = check_sampler(sampler)
    group_of_item = _group_of_item(ds, sampler)
    row_group = group_of_item[ds.item]
    item_key, item_local = np.unique(row_group * ds.n_items + ds.item, return_inverse=True)
    rater_key, rater_local = np.unique(row_group * ds.n_raters + ds.rater, return_inverse=True)
    n_groups = int(group_of_item.max()) + 1
    items_per_group = np.bincount(item_key // ds.n_items, minlength=n_groups)
    raters_per_group = np.bincount(rater_key // ds.n_raters, minlength=n_groups)
    item_start = np.concatenate([[0], np.cumsum(items_per_group)])
    rater_start = np.concatenate([[0], np.cumsum(raters_per_group)])
    cells = items_per_group * raters_per_group
    if cells.sum() > MAX_PLAN_CELLS:
        raise TopologyError(f"the groups of {ds.name!r} need {cells.sum():,} label cells; too large for {sampler}")
    matrix_start = np.concatenate([[0], np.cumsum(cells)])
    matrix = np.full(int(matrix_start[-1]), -1, dtype=np.int8)
    local_item = item_local - item_start[row_group]
    local_rater = rater_local - rater_start[row_group]
    matrix[matrix_start[row_group] + local_item * raters_per_group[row_group] + local_rater] = ds.label
    share, cum = item_shares(ds)
    return GroupPlan(
        sampler=sampler,
        item_start=item_start.astype(np.int64),
        items=(item_key % ds.n_items).astype(np.int64),
        rater_start=rater_start.astype(np.int64),
        raters=(rater_key % ds.n_raters).astype(np.int64),
        matrix_start=matrix_start.astype(np.int64),
        matrix=matrix,
        item_share=share,
        item_cum=cum,
        single_group=sampler == "S1",
        group_size=max(1, int(np.median(items_per_group))),
    )


# ---------------------------------------------------------------- kernels

@numba.njit(cache=True, inline="always")
def uniform_index(rng, n):
    """An index in 0..n-1 from one uniform double."""
    return min(int(rng.random() * n), n - 1)


@numba.njit(cache=True, inline="always")
def binomial(rng, n, p):
    """``Binomial(n, p)``: a count of uniforms for small ``n``, numpy's generator beyond."""
    if n <= 0 or p <= 0.0:
        return 0
    if n < SMALL_BINOMIAL:
        x = 0
        for _ in range(n):
            x += rng.random() < p
        return x
    return rng.binomial(n, p)


@numba.njit(cache=True, inline="always")
def draw_label(rng, cum, row):
    """One label from the cumulative distribution ``cum[row]``."""
    u = rng.random()
    c = 0
    last = cum.shape[1] - 1
    while c < last and u >= cum[row, c]:
        c += 1
    return c


@numba.njit(cache=True)
def group_layout(n, single_group, group_size):
    """(groups drawn, items per drawn group) for a replicate of ``n`` items."""
    if single_group:
        return 1, n
    n_drawn = (n + group_size - 1) // group_size
    return n_drawn, max(1, n // n_drawn)


@numba.njit(cache=True)
def draw_slots(rng, item_start, single_group, group_size, n, slot_group, slot_local):
    """Draw the groups and the items of one replicate; returns the number of item slots ``B * n_b``."""
    n_drawn, per_group = group_layout(n, single_group, group_size)
    n_groups = item_start.shape[0] - 1
    for g in range(n_drawn):
        group = 0 if single_group else uniform_index(rng, n_groups)
        n_items = item_start[group + 1] - item_start[group]
        for s in range(per_group):
            slot_group[g * per_group + s] = group
            slot_local[g * per_group + s] = uniform_index(rng, n_items)
    return n_drawn * per_group


@numba.njit(cache=True, inline="always")
def draw_multiplicities(rng, n_slots, n_items, mult):
    """How many of ``n_slots`` uniform draws with replacement hit each of ``n_items`` items, into ``mult``.

    One uniform per slot for few slots; a chain of binomials (one per item) when slots outnumber items."""
    for i in range(n_items):
        mult[i] = 0
    if n_items == 1:
        mult[0] = n_slots
    elif n_slots < MULTIPLICITY_CHAIN_FROM * n_items:
        for _ in range(n_slots):
            mult[uniform_index(rng, n_items)] += 1
    else:
        left = n_slots
        for i in range(n_items - 1):
            if left > 0:
                mult[i] = rng.binomial(left, 1.0 / (n_items - i))
                left -= mult[i]
        mult[n_items - 1] = left


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


@numba.njit(cache=True, inline="always")
def add_counts(rng, k, shares, row, cum, out, j):
    """``out[j] += Multinomial(k, shares[row])``: categorical draws for small ``k``, a binomial chain beyond.

    Inlined into the kernels: a call that takes the generator costs more than a draw."""
    n_labels = out.shape[1]
    if k < BINOMIAL_FROM:
        for _ in range(k):
            out[j, draw_label(rng, cum, row)] += 1
        return
    left = k
    mass = 1.0
    for c in range(n_labels - 1):
        p = shares[row, c]
        if left == 0 or mass <= 0.0:
            break
        x = left if p >= mass else rng.binomial(left, max(p / mass, 0.0))
        out[j, c] += x
        left -= x
        mass -= p
    out[j, n_labels - 1] += left


# ---------------------------------------------------------------- multinomials from alias tables (S2 on counts)

class CompositionTables(NamedTuple):
    """Alias tables of ``Multinomial(k', p)`` over the compositions of ``k'`` into C labels, for every ``k' <= k``
    and every distinct item label distribution ``p``: one uniform draws an item's counts, whatever ``k'``.

    ``comp[e]`` is the label counts of entry ``e``; the entries of ``k'`` are ``start[k']:start[k' + 1]``.
    ``row[item]`` is the item's distribution, ``prob[row, e]`` and ``alias[row, e]`` the alias table.
    """

    row: np.ndarray
    prob: np.ndarray
    alias: np.ndarray
    comp: np.ndarray
    start: np.ndarray


def compositions(k: int, n_labels: int) -> np.ndarray:
    """All count vectors of ``k`` responses over ``n_labels`` labels, shape (C(k + C - 1, C - 1), C)."""
    if n_labels == 1:
        return np.array([[k]], dtype=np.int64)
    return np.array([[first, *rest] for first in range(k, -1, -1) for rest in compositions(k - first, n_labels - 1)],
                    dtype=np.int64)


def composition_entries(k: int, n_labels: int, n_shares: int) -> int:
    """Entries in the tables of :func:`composition_tables`: ``n_shares * C(k + C, C)``."""
    return n_shares * math.comb(k + n_labels, n_labels)


def composition_space(k: int, n_labels: int) -> tuple[np.ndarray, np.ndarray]:
    """Every count vector of ``0..k`` responses, in blocks by total: ``(comp, start)``, with the vectors of ``j``
    responses in ``comp[start[j]:start[j + 1]]`` (:func:`composition_index` numbers them)."""
    comp = np.concatenate([compositions(j, n_labels) for j in range(k + 1)])
    sizes = [math.comb(j + n_labels - 1, n_labels - 1) for j in range(k + 1)]
    start = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    return comp, start


def multinomial_pmf(shares: np.ndarray, comp: np.ndarray) -> np.ndarray:
    """``pmf[i, e]``: the probability of count vector ``comp[e]`` under ``Multinomial(comp[e].sum(), shares[i])``."""
    log_p = np.log(np.where(shares > 0, shares, 1.0))
    log_coef = gammaln(comp.sum(1) + 1) - gammaln(comp + 1).sum(1)
    pmf = np.exp(log_coef[None, :] + log_p @ comp.T)
    pmf[((comp[None, :, :] > 0) & (shares[:, None, :] == 0)).any(2)] = 0.0  # a label the item never got
    return pmf


def composition_index(comp: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``(code, row_of)``: a count vector ``v`` of at most ``k`` responses is row ``row_of[v @ code]`` of ``comp``
    (a mixed-radix code in base ``k + 1``)."""
    code = (k + 1) ** np.arange(comp.shape[1])
    row_of = np.full((k + 1) ** comp.shape[1], -1, dtype=np.int64)
    row_of[comp @ code] = np.arange(len(comp))
    return code, row_of


def composition_tables(shares: np.ndarray, k: int) -> CompositionTables:
    """The alias tables of every item's ``Multinomial(k', shares[item])`` for ``k' = 0..k``."""
    distinct, row = np.unique(shares, axis=0, return_inverse=True)
    comp, start = composition_space(k, shares.shape[1])
    pmf = multinomial_pmf(distinct, comp)
    prob = np.empty_like(pmf)
    alias = np.empty(pmf.shape, dtype=np.int64)
    build_alias(pmf, start, prob, alias)
    return CompositionTables(row=row.astype(np.int64).ravel(), prob=prob, alias=alias, comp=comp, start=start)


@numba.njit(cache=True)
def build_alias(pmf, start, prob, alias):
    """Vose's alias method, per row and per block ``start[j]:start[j + 1]`` of ``pmf``."""
    small = np.empty(pmf.shape[1], dtype=np.int64)
    large = np.empty(pmf.shape[1], dtype=np.int64)
    for r in range(pmf.shape[0]):
        for j in range(start.shape[0] - 1):
            lo, size = start[j], start[j + 1] - start[j]
            total = 0.0
            for t in range(size):
                total += pmf[r, lo + t]
            n_small = n_large = 0
            for t in range(size):
                prob[r, lo + t] = pmf[r, lo + t] * size / total
                alias[r, lo + t] = t
                if prob[r, lo + t] < 1.0:
                    small[n_small] = t
                    n_small += 1
                else:
                    large[n_large] = t
                    n_large += 1
            while n_small > 0 and n_large > 0:
                n_small -= 1
                s = small[n_small]
                g = large[n_large - 1]
                alias[r, lo + s] = g
                prob[r, lo + g] -= 1.0 - prob[r, lo + s]
                if prob[r, lo + g] < 1.0:
                    n_large -= 1
                    small[n_small] = g
                    n_small += 1
            for t in range(n_large):
                prob[r, lo + large[t]] = 1.0
            for t in range(n_small):
                prob[r, lo + small[t]] = 1.0


@numba.njit(cache=True, inline="always")
def composition_entry(rng, k, table_row, prob, alias, start):
    """The entry of ``comp`` that one uniform draws from ``Multinomial(k, p)``, ``p`` being row ``table_row``.

    The caller adds ``comp[entry]`` to its counts itself: written inside this helper, that loop runs several
    times slower in numba."""
    lo = start[k]
    size = start[k + 1] - lo
    x = rng.random() * size
    t = min(int(x), size - 1)
    other = alias[table_row, lo + t]
    return lo + (other if x - t >= prob[table_row, lo + t] else t)  # a select, not a branch


# ---------------------------------------------------------------- a readable single draw, for people and tests

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
    plan = make_plan(ds, sampler)
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
