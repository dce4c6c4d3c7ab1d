"""The plan of a cell: which kernel draws its replicates and which of the kernel's tables it uses.

:func:`choose_path` is the one place where a path is chosen; the simulator builds the tables a plan names and runs its
kernel, and every plan draws the same law (tested against the slow reference, ``tests/reference.py``). ``method`` forces a
kernel for the tests and benchmarks: ``"responses"`` is the direct kernel with every option off (the plainest
form), ``"tables"`` the direct kernel with its options, ``"items"``, ``"law"`` and ``"counts"`` the other kernels.
S4 has one kernel, the pigeonhole kernel, which ``"auto"`` and ``"responses"`` name.
The thresholds were measured on the benchmark grid (benchmarks/README.md); they change speed, never the law.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import NamedTuple

import numpy as np

from analysis.errors import ParameterError
from analysis.engine.samplers import group_layout

METHODS = ("auto", "responses", "tables", "items", "law", "counts")
KERNELS = ("direct", "by_item", "law", "counts", "pigeonhole")
ITEMS_FROM = 25  # S3 takes the by-item kernel from this K on (measured: direct faster at K = 20, by item at 30)
TABLE_ENTRIES = 1_000_000  # the largest multinomial alias tables S2 on counts builds (8 + 8 bytes an entry)
TABLE_ROWS = 1000  # ... and the most distinct item label distributions they serve
LAW_ENTRIES = 350_000  # the largest S2 slot law (V**3 count-vector triples) replicates are drawn from
LAW_WORK = 20_000_000_000  # ... and the most multiply-adds that build it (D3code at K = 4: 7e9, 0.4 s)
PERTURB_ENTRIES = 1_100_000  # the largest perturbation tables the by-item kernel draws from
ROW_TABLE_ENTRIES = 200_000  # ... and the direct kernel (its slots rarely reuse a row)
PIGEONHOLE_TABLE_ENTRIES = 32_768  # ... and the pigeonhole kernel where masks can serve (measured on five labels: the
# null's at K = 4, 121,675 entries, and the alternative's at K = 6, 44,100, draw faster by masks; K = 5's 15,876 not)
PERTURB_WORK = 100_000_000  # ... and the most operations that build them
CHAIN_FROM = 4  # slots per positive slot-law entry from which a replicate is drawn as a chain of binomials
GATHER_SLOTS = 1.0  # slots per (gold, A, B) triple from which the direct kernel counts slots per triple
DEFER_SLOTS = 8  # ... and from which, at K = 1, it replaces responses per triple
BY_RATER_FROM = 0.25  # slots per item of a drawn group from which the by-item kernel reads its labels rater by rater
COLUMN_LAW_SLOTS = 1  # slots per (gold, A, B) triple from which S1 draws a replicate from its columns' slot law
# Thresholds inside the kernels and their tables; they too change speed, never the law.
PAIR_ROWS = 512  # the most count vectors of K for which the pair tables (PAIR_ROWS**2 pairs, 6 MB) are built
# (measured: five labels at K = 7, 8 gain a fifth; at K = 9, 10, with 12-24 MB of tables, little or nothing)
MASK_WORD = 63  # the most responses whose replacement one int64 mask can say (thinned path, rater loop)
NOISE_ENTRIES = 250_000  # the most entries the noise tables hold (their pairs of noise vectors)
SKIP_FROM = 0.25  # share of slots keeping all their responses from which the item kernel counts them apart
BY_LABEL_FROM = 2  # perturbable responses per label from which a slot draws its replacements as binomials per label
GATHER_FROM = 1  # slots per perturbation outcome from which the by-item kernel counts an item's slots per outcome
RATER_LOOP_PER_K = 1.0  # the direct kernel reads an item rater by rater where its group has at most this many raters per K
TAIL_SLOTS = 16  # slots left at which the chain stops and draws the rest by inversion
BINOMIAL_FROM = 48  # from this many responses on, an item's counts are drawn as a chain of binomials
SMALL_BINOMIAL = 16  # below this many trials a binomial is a count of uniforms (faster than rng.binomial in numba)
WALK_COST = 0.8  # S4: one visit of the drawn items' own walk (their raters' stream) against one of the whole stream's
TAIL_COST = 1.7  # S4: turning a rating of an item still short round for the walk, against one visit of the whole stream
MULTIPLICITY_CHAIN_FROM = 40  # slots per item from which item multiplicities are drawn as a chain of binomials
# (numpy's binomial draws by inversion below a mean of 30: at 28 slots an item the chain takes 2.7x one uniform a
# slot; the two break even at 40)


def n_vectors(k: int, n_labels: int) -> int:
    """How many count vectors of ``k`` responses over ``n_labels`` labels exist."""
    return math.comb(k + n_labels - 1, n_labels - 1)


def paired(k: int, n_labels: int) -> bool:
    """Whether the pair tables of ``k`` responses are built (few enough count vectors to stay in cache)."""
    return n_vectors(k, n_labels) <= PAIR_ROWS


def packs(k: int, n_labels: int) -> bool:
    """Whether a count vector of ``k`` responses packs into one int64, ``bit_length(k)`` bits a label (how the
    direct kernel holds a slot's counts where it has no pair tables)."""
    return k.bit_length() * n_labels <= 63


def table_sizes(k: int, n_labels: int, null: bool) -> tuple[int, int]:
    """``(entries, work)`` of the perturbation tables of ``k`` responses: the tables hold
    ``sum_h (V(h) V(k - h))**2`` entries under the null (``h = 0`` alone under the alternative), with ``V(t)``
    count vectors of ``t`` responses; building them takes about ``sum_h R(h) (R(k - h) V(k - h)**2 + entries_h)``
    operations, ``R(t)`` being the vectors of at most ``t`` responses."""
    size = [math.comb(t + n_labels - 1, n_labels - 1) for t in range(k + 1)]
    upto = np.cumsum(size)
    hs = range(k + 1) if null else [0]
    entries = [(size[h] * size[k - h]) ** 2 for h in hs]
    work = sum(int(upto[h]) * (int(upto[k - h]) * size[k - h] ** 2 + e) for h, e in zip(hs, entries))
    return sum(entries), work


def composition_entries(k: int, n_labels: int, n_shares: int) -> int:
    """Entries in the tables of :func:`composition_tables`: ``n_shares * C(k + C, C)``."""
    return n_shares * math.comb(k + n_labels, n_labels)


@dataclass(frozen=True)
class DataShape:
    """What a plan needs to know of a (dataset, sampler) pair."""

    sampler: str
    n_labels: int
    n_distributions: int  # distinct item label distributions
    single_group: bool  # S1: one group, all items and raters
    group_size: int  # N_b, the median number of items per group (S3 draws whole batches)

    def slots(self, n: int) -> int:
        """Item slots in one replicate of ``n`` items: ``n`` for S1 and S2, ``B * n_b <= n`` for S3."""
        n_drawn, per_group = group_layout(n, self.single_group, self.group_size)
        return int(n_drawn * per_group)


class ItemOptions(NamedTuple):
    """The by-item kernel's switches (see :class:`KernelPath`)."""

    perturbation_tables: bool
    column_law: bool
    rater_major: bool


class PigeonholeOptions(NamedTuple):
    """The pigeonhole kernel's switches (see :class:`KernelPath`)."""

    perturbation_tables: bool
    gather: bool
    masks: bool


class DirectOptions(NamedTuple):
    """The direct kernel's switches (see :class:`KernelPath`)."""

    perturbation_tables: bool
    gather: bool
    defer: bool
    masks: bool
    noise_tables: bool
    rater_loop: bool


@dataclass(frozen=True)
class KernelPath:
    """Every path decision of one cell. ``kernel`` is one of ``KERNELS``; the flags say which tables it uses:

    - ``pair_tables``: count vectors are numbered as rows of the pair tables and a slot is added to the sums by
      lookups (else the direct kernel packs them, the by-item kernel counts them);
    - ``perturbation_tables``: B's perturbation of a slot in one draw from tables on count vectors;
    - ``masks``: the direct kernel picks replaced responses by mask tables, several at a time (the pigeonhole
      kernel too, its slots' count vectors then coded as the direct kernel's);
    - ``noise_tables``: replaced responses are counted apart and labelled in one draw (Dirichlet rule);
    - ``rater_loop``: the direct kernel reads a complete item rater by rater;
    - ``gather``: the direct kernel counts slots per (gold, A, B) triple of rows; ``defer``: and at K = 1 replaces
      responses per triple, each slot read in a short loop of its own (three labels, no masks, no rater loop); the
      pigeonhole kernel gathers (and defers) at K = 1;
    - ``alias_tables``: the counts kernel draws multinomials from alias tables;
    - ``column_law``: the by-item kernel draws an S1 replicate's slots by one multinomial over (gold, A, B) triples,
      from the slot law given the replicate's rater columns;
    - ``rater_major``: the by-item kernel counts a drawn group's labels for all its items at once, rater by rater,
      as packed counts (the same counts as item by item, so the same draws).

    Whether the law kernel draws a replicate as a chain of binomials needs the law's size, known once its tables
    are built: :func:`chain` decides it.
    """

    kernel: str
    null: bool
    pair_tables: bool = False
    perturbation_tables: bool = False
    masks: bool = False
    noise_tables: bool = False
    rater_loop: bool = False
    gather: bool = False
    defer: bool = False
    alias_tables: bool = False
    column_law: bool = False
    rater_major: bool = False

    def item_options(self) -> ItemOptions:
        """The by-item kernel's switches, as one group."""
        return ItemOptions(self.perturbation_tables, self.column_law, self.rater_major)

    def pigeonhole_options(self) -> PigeonholeOptions:
        """The pigeonhole kernel's switches, as one group."""
        return PigeonholeOptions(self.perturbation_tables, self.gather, self.masks)

    def direct_options(self) -> DirectOptions:
        """The direct kernel's switches, as one group."""
        return DirectOptions(self.perturbation_tables, self.gather, self.defer, self.masks, self.noise_tables,
                             self.rater_loop)

    def describe(self) -> str:
        """The kernel and the options it uses, in words (``run --explain``)."""
        options = [f.name.replace("_", " ") for f in fields(self)
                   if f.type == "bool" and f.name != "null" and getattr(self, f.name)]
        return self.kernel.replace("_", "-") + (f" ({', '.join(options)})" if options else "")


def direct_fits(k: int, n_labels: int) -> bool:
    """Whether the direct kernel can hold count vectors of ``k`` responses: as pair-table rows or packed."""
    return paired(k, n_labels) or packs(k, n_labels)


def counts_pack(k: int, n_labels: int) -> bool:
    """Whether a part's counts of at most ``k`` columns over the labels and a missing one pack into an int64
    (``bit_length(k)`` bits each), as the by-item kernel's rater-by-rater reading holds them."""
    return (n_labels + 1) * k.bit_length() <= 63


def law_fits(design: DataShape, k: int) -> bool:
    """Whether S2 can draw its slots from the exact slot law: few enough ``V**3`` entries, and little enough work
    to build it (two matrix products per distinct item distribution, :mod:`analysis.engine.kernels.law`)."""
    v = n_vectors(k, design.n_labels)
    noise = math.comb(k + design.n_labels, design.n_labels)  # noise vectors of at most k responses
    work = design.n_distributions * (noise**2 * v + noise * v**2)
    return design.sampler == "S2" and v**3 <= LAW_ENTRIES and paired(k, design.n_labels) and work <= LAW_WORK


def alias_fits(design: DataShape, k: int) -> bool:
    """Whether S2 on counts draws multinomials from alias tables: when they fit in memory and the items share few
    label distributions (else the draws miss the processor's caches; measured)."""
    return (design.n_distributions <= TABLE_ROWS
            and composition_entries(k, design.n_labels, design.n_distributions) <= TABLE_ENTRIES)


def perturbation_fits(k: int, n_labels: int, null: bool, largest: int) -> bool:
    """Whether B's perturbation tables of ``k`` responses have at most ``largest`` entries and are cheap to build."""
    entries, work = table_sizes(k, n_labels, null)
    return entries <= largest and work <= PERTURB_WORK


def auto_method(design: DataShape, k: int) -> str:
    """The fastest measured method for a cell of ``k`` responses."""
    if design.sampler == "S4":
        return "responses"
    if design.sampler == "S1":
        return "items"
    direct = direct_fits(k, design.n_labels)
    if design.sampler == "S3":
        return "tables" if k < ITEMS_FROM and direct else "items"
    if law_fits(design, k):
        return "law"
    return "tables" if k <= MASK_WORD and not alias_fits(design, k) and direct else "counts"


def choose_path(design: DataShape, n: int, k: int, epsilon: float, null: bool, shared_noise: bool, method: str = "auto") -> KernelPath:
    """The plan of a cell of ``n`` items with ``k`` responses each, B perturbed with strength ``epsilon`` by a rule
    whose replaced responses share one noise law of their slot (``shared_noise``) or not.

    Raises :class:`ParameterError` where a forced ``method`` cannot serve the cell."""
    if method not in METHODS:
        raise ParameterError(f"unknown method {method!r}; choose one of {METHODS}")
    method = auto_method(design, k) if method == "auto" else method
    noisy = epsilon > 0.0
    shared_noise = noisy and shared_noise
    tabled = noisy and perturbation_fits(k, design.n_labels, null, PERTURB_ENTRIES)
    if design.sampler == "S4":
        if method != "responses":
            raise ParameterError(f"S4 has one kernel (method 'auto' or 'responses'), not method={method!r}")
        gather = k == 1 and paired(k, design.n_labels)
        maskable = shared_noise and not gather and k <= MASK_WORD and direct_fits(k, design.n_labels)
        # a slot rarely shares its item's table row with another, so where masks can serve, only small tables
        tabled = noisy and k > 1 and perturbation_fits(k, design.n_labels, null,
                                                       PIGEONHOLE_TABLE_ENTRIES if maskable else PERTURB_ENTRIES)
        noise = shared_noise and not gather and not tabled
        return KernelPath("pigeonhole", null, pair_tables=paired(k, design.n_labels), perturbation_tables=tabled,
                          masks=noise and maskable, noise_tables=noise, gather=gather, defer=gather and noisy)
    if method == "law":
        if not law_fits(design, k):
            raise ParameterError(f"the S2 slot law of K = {k} is too large to tabulate (at most {LAW_ENTRIES} "
                                 "entries); use method='counts'")
        return KernelPath("law", null)
    if method == "counts":
        if design.sampler != "S2":
            raise ParameterError(f"method='counts' serves S2 only, not {design.sampler}")
        return KernelPath("counts", null, alias_tables=alias_fits(design, k))
    if method == "items":
        if design.sampler == "S2":
            raise ParameterError("method='items' serves S1 and S3; S2's items never repeat their rater columns")
        triples = n_vectors(k, design.n_labels) ** 3
        law = (tabled and design.single_group and paired(k, design.n_labels) and triples <= LAW_ENTRIES
               and n >= COLUMN_LAW_SLOTS * triples)
        per_group = group_layout(n, design.single_group, design.group_size)[1]
        by_rater = not law and counts_pack(k, design.n_labels) and per_group >= BY_RATER_FROM * design.group_size
        return KernelPath("by_item", null, pair_tables=paired(k, design.n_labels),
                    perturbation_tables=tabled and (k > 1 or law), column_law=law,
                    noise_tables=shared_noise and not law, rater_major=by_rater)
    if not direct_fits(k, design.n_labels):
        raise ParameterError(f"the direct kernel cannot pack counts of K = {k} over {design.n_labels} labels into "
                             "64 bits; use method='items' (S1, S3) or method='counts' (S2)")
    pairs = paired(k, design.n_labels)
    if method == "responses":
        return KernelPath("direct", null, pair_tables=pairs)
    cube = n_vectors(k, design.n_labels) ** 3
    tabled = noisy and pairs and k > 1 and perturbation_fits(k, design.n_labels, null, ROW_TABLE_ENTRIES)
    gather = pairs and n >= GATHER_SLOTS * cube
    defer = gather and k == 1 and noisy and design.slots(n) >= DEFER_SLOTS * cube
    shared = shared_noise and k <= MASK_WORD
    return KernelPath("direct", null, pair_tables=pairs, perturbation_tables=tabled, masks=noisy and not defer,
                noise_tables=shared and not defer and not tabled,
                rater_loop=(tabled or shared or not noisy) and k <= MASK_WORD and not defer, gather=gather, defer=defer)


def chain(n_slots: int, positive_entries: int) -> bool:
    """Whether the law kernel draws a replicate of ``n_slots`` slots as a chain of binomials down the law's
    ``positive_entries`` entries (cheaper than one alias draw a slot once slots outnumber them)."""
    return n_slots >= CHAIN_FROM * positive_entries


# Rough seconds per unit of work of each kernel, read off the benchmark grid on the 2-core development machine
# (benchmarks/README.md): a response of the direct, by-item and counts kernels, a slot-law draw of the law kernel.
SECONDS_PER_UNIT = {"direct": 4e-9, "by_item": 1.5e-9, "counts": 4.5e-9, "law": 2e-8, "pigeonhole": 3e-8}


def work(cell: KernelPath, design: DataShape, n: int, k: int) -> int:
    """Units of work of one replicate of a cell planned as ``cell``: G's, A's and B's responses, or, for the law
    kernel, its draws (one a slot, at most ``CHAIN_FROM`` per law entry when it chains)."""
    if cell.kernel == "law":
        return min(design.slots(n), CHAIN_FROM * n_vectors(k, design.n_labels) ** 3)
    return 3 * design.slots(n) * k


def estimated_seconds(cell: KernelPath, design: DataShape, n: int, k: int, n_samples: int) -> float:
    """A rough wall time of ``n_samples`` replicates on one core (``run --explain``)."""
    return n_samples * work(cell, design, n, k) * SECONDS_PER_UNIT[cell.kernel]
