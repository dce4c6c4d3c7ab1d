"""The multi-level bootstrap samplers (the methods page): which design allows which sampler, and the "group plan"
every sampler draws from.

S1, S2 and S3 draw *groups*, then items within a group, then rater columns within a group:

* **S1**: one group holding every item and every rater; ``N'`` items and one set of ``K'`` raters.
* **S2**: one group per item; ``N'`` groups of one item, each with its own ``K'`` raters.
* **S3**: one group per batch; ``B = ceil(N'/N_b)`` batches, ``n_b = max(1, floor(N'/B))`` items and ``K'``
  raters per drawn batch, where ``N_b`` is the median batch size.

A group stores its items, its raters and a dense (items x raters) label matrix, with ``-1`` where the rater did
not label the item; such a response is drawn from the item's own labels (the ragged-batch rule). A *rater
column* is one drawn rater of one drawn group. All draws are with replacement.

* **S4**: raters across items on any design (the pigeonhole bootstrap): ``N'`` items, and per model a stream of
  raters drawn from the whole pool; an item's ``K'`` responses are its first ``K'`` raters in the stream
  (:mod:`analysis.engine.kernels.pigeonhole`). It lays the data out per item, as S2 does; on a fully crossed table it has
  S1's law.

S2 also has a faster form on counts: drawing ``K'`` raters from an item's raters is drawing ``K'`` labels iid from
the item's label distribution, so the item's counts are ``Multinomial(K', p_item)``.

S1 needs a fully crossed design and S3 a batched one; S2 and S4 run on any (:data:`NEEDS`, :func:`allowed_samplers`).
Where raters rate more than one item, the default is the sampler that keeps them across items (:func:`default_sampler`).
Every command, the comparison, the planner and the chapters read that rule here. The draws themselves are
:mod:`analysis.engine.draws`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numba
import numpy as np

from analysis.data.annotations import BATCHED, FULLY_CROSSED, OVERLAPPING, AnnotationDataset
from analysis.errors import ParameterError, TopologyError

SAMPLERS = ("S1", "S2", "S3", "S4")  # new samplers at the end: a cell's random stream is keyed by its place here
NEEDS = {"S1": FULLY_CROSSED, "S3": BATCHED}  # the design a sampler needs; S2 and S4 run on any
MODELS_RATERS = {FULLY_CROSSED: "S1", BATCHED: "S3"}  # the sampler that models raters across items, by design
ANY_DESIGN = "S4"  # ... on every other design where a rater rated more than one item
PER_ITEM = ("S2", "S4")  # the samplers whose groups are single items
MAX_PLAN_CELLS = 200_000_000


@dataclass(frozen=True)
class GroupLayout:
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
    """A :class:`GroupLayout`'s arrays for the kernels (numba takes a named tuple, not a dataclass)."""

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


def allowed_samplers(ds: AnnotationDataset) -> list[str]:
    """The samplers ``ds``'s design allows, in the order of :data:`SAMPLERS`."""
    return [s for s in SAMPLERS if NEEDS.get(s, ds.topology.kind) == ds.topology.kind]


def default_sampler(ds: AnnotationDataset) -> str:
    """The sampler that models raters as the design allows: S1 (fully crossed), S3 (batched), else S4 where some
    rater rated more than one item, and S2 where every rater rated a single item (raters never repeat)."""
    if ds.topology.kind in MODELS_RATERS:
        return MODELS_RATERS[ds.topology.kind]
    return ANY_DESIGN if repeat_raters(ds) else "S2"


def repeat_raters(ds: AnnotationDataset) -> bool:
    """Whether some rater rated more than one item (so that raters can be kept across items)."""
    return bool(np.bincount(ds.rater, minlength=ds.n_raters).max() > 1)


def design_reading(ds: AnnotationDataset, sampler: str, default: bool) -> str:
    """Which design the table was read as and why that sampler runs, in one line for the report."""
    topo = ds.topology
    per_rater = np.bincount(ds.rater, minlength=ds.n_raters)
    keeps = f"so {sampler} keeps each rater across the items they rated"
    if topo.kind == FULLY_CROSSED:
        read = f"fully crossed (each of the {ds.n_raters} raters rated all {ds.n_items:,} items)"
    elif topo.kind == BATCHED:
        read = (f"batched: {topo.n_batches:,} batches "
                + ("inferred from identical, disjoint rater sets" if topo.inferred else "from the batch column"))
    elif topo.kind == OVERLAPPING:
        sets = np.bincount(np.unique(topo.item_batch[ds.item].astype(np.int64) * ds.n_raters + ds.rater)
                           % ds.n_raters, minlength=ds.n_raters)
        read = (f"overlapping rater sets: {ds.n_raters} raters in {topo.n_batches:,} sets of items, a rater in a "
                f"median of {np.median(sets):g} sets, so not batches")
    else:
        read = (f"sparse: each item rated by a median of {np.median(ds.raters_per_item):g} of {ds.n_raters:,} "
                f"raters, a rater rating a median of {np.median(per_rater):g} items")
    if not default:
        why = f"{sampler} chosen with --sampler"
        if sampler == "S2" and per_rater.max() > 1:  # raters who rated several items (repeat_raters)
            why += (": S2 treats each item's raters as new people, although raters here rated up to "
                    f"{per_rater.max():,} items, so its p is too small where raters lean (S4 keeps them)")
        return f"design {read}; {why}"
    if sampler == "S2":
        return f"design {read}; every rater rated a single item, so S2 (there is nothing to keep across items)"
    return f"design {read}; {keeps}"


def raters_available(ds: AnnotationDataset, sampler: str) -> int:
    """The distinct raters the K ratings of a drawn item come from: the pool (S1), the median item's raters (S2,
    S4), the median batch's raters (S3). A larger K redraws the same people.

    Parameters
    ----------
    ds : AnnotationDataset
        The data.
    sampler : str
        ``"S1"``, ``"S2"``, ``"S3"`` or ``"S4"``.

    Returns
    -------
    int
        The number of distinct raters; a K above it is marked as beyond the data.
    """
    if sampler == "S1":
        return ds.n_raters
    if sampler == "S3":
        pairs = np.unique(ds.topology.item_batch[ds.item].astype(np.int64) * ds.n_raters + ds.rater)
        return max(1, int(np.median(np.bincount(pairs // ds.n_raters))))
    return max(1, int(np.median(ds.raters_per_item)))


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
        if topo.kind != NEEDS["S1"]:
            raise TopologyError(
                f"S1 needs fully crossed data (every rater rated every item), but {ds.name!r} is {topo.kind}: "
                f"{ds.n_ratings} ratings for {ds.n_items} items x {ds.n_raters} raters. Use S2 (any design) "
                "or S3 (batched designs)."
            )
        return np.zeros(ds.n_items, dtype=np.int64)
    if sampler == "S3":
        if topo.kind != NEEDS["S3"]:
            raise TopologyError(
                f"S3 needs batched data (fixed rater sets per batch of items), but {ds.name!r} is {topo.kind}. "
                "Give the batch column (batch= / --batch) or use S2."
            )
        return topo.item_batch.astype(np.int64)
    return np.arange(ds.n_items, dtype=np.int64)


def make_layout(ds: AnnotationDataset, sampler: str) -> GroupLayout:
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
    return GroupLayout(
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


@numba.njit(cache=True)
def group_layout(n, single_group, group_size):
    """(groups drawn, items per drawn group) for a replicate of ``n`` items."""
    if single_group:
        return 1, n
    n_drawn = (n + group_size - 1) // group_size
    return n_drawn, max(1, n // n_drawn)
