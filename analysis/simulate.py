"""Simulating the gold G, the ideal model A and the perturbed model B, and the permutation null (METHOD sections 3-4).

For each replicate: G and A are two independent draws of rater columns on the same items; B is a third draw whose
responses are each, with probability ``epsilon``, replaced by a noise label. The ``perturbation`` rule says which:

* ``"dirichlet"`` (VET's distortion, the default): per drawn item slot of B, a noise law
  ``eta ~ Dirichlet(1/C, ..., 1/C)`` shared by the slot's replaced responses. It is drawn implicitly, as a Polya
  urn: the j-th replacement of a slot is label c with probability ``(1/C + r_c) / (1 + j - 1)``, ``r_c`` counting
  the slot's earlier replacements that went to c. One uniform per response, no gamma variates.
* ``"uniform"``: each replaced response takes one of the other ``C - 1`` labels uniformly.

Under the null, the ``2K'`` rater columns of A and B are pooled per group (globally for S1, per batch for S3, per
item for S2) and split uniformly at random, *without replacement*, into two halves of ``K'``: A* and B*. At
``epsilon = 0`` the split has exactly the law of (A, B), so the null is calibrated by construction.

Four kernels: :func:`_grouped_replicates` draws responses per (item slot, rater column) and serves S1, S2 and
S3; :func:`_item_replicates` draws the same law per distinct item of a drawn group (for S1 and S3, whose slots of
one item share their rater columns), so an item's labels are read once and slots that replace nothing are counted
together; :func:`_law_replicates` draws S2's slots from the exact law of one slot's (gold, A, B) count vectors
(:mod:`analysis.slotlaw`), where that law is small; :func:`_count_replicates` is S2 on per-item counts
(METHOD section 9): G and A are ``Multinomial(K', p_i)``, drawn from alias tables or as binomial chains;
B has ``M ~ Binomial(K', epsilon)`` noise responses and ``K' - M`` from ``p_i``; under the null,
``H ~ Hypergeometric(2K'; K', K')`` of B's columns land in A*, so A* holds ``Binomial(H, epsilon)`` noise responses
and B* ``Binomial(K' - H, epsilon)``, both drawn from the same urn of the slot. All count each slot's labels as
they are drawn and add the slot to the replicate's metric sums (:func:`analysis.metrics.add_item`), so no response
and no per-item array is kept; each replicate ends as one row of eight deltas.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numba
import numpy as np
from numba.extending import intrinsic
from scipy.stats import binom, hypergeom

from analysis.data import AnnotationDataset
from analysis.errors import ParameterError
from analysis.metrics import METRICS, SUMS, add_item, add_pair, divergence_tables, finish_deltas, pair_tables
from analysis.perturbation import MASK_BITS, NoiseTables, PerturbationTables, mask_tables, table_sizes
from analysis.slotlaw import LawTables, slot_law
from analysis.samplers import (
    CompositionTables,
    add_counts,
    check_size,
    composition_entries,
    composition_entry,
    composition_index,
    composition_space,
    composition_tables,
    draw_label,
    draw_multiplicities,
    draw_slots,
    group_layout,
    make_plan,
    uniform_index,
)

METHODS = ("auto", "items", "tables", "law", "counts", "responses")
PERTURBATIONS = ("dirichlet", "uniform")
DIRICHLET, UNIFORM = 0, 1  # kernel codes of PERTURBATIONS
SKIP_FROM = 0.25  # share of slots keeping all their responses from which the item kernel counts them apart
BY_LABEL_FROM = 2  # perturbable responses per label from which a slot draws its replacements as binomials per label
ITEMS_FROM = 25  # S3 takes the by-item kernel from this K on (measured: direct faster at K = 20, by item at 30)
TABLE_ENTRIES = 1_000_000  # the largest multinomial alias tables S2 on counts builds (8 + 8 bytes an entry)
TABLE_ROWS = 1000  # ... and the most distinct item label distributions they serve
PAIR_ROWS = 256  # count vectors of K from which the pair tables (PAIR_ROWS**2 pairs) are not built
LAW_ENTRIES = 350_000  # the largest S2 slot law (V**3 count-vector triples) replicates are drawn from
PERTURB_ENTRIES = 1_100_000  # the largest perturbation tables (analysis.perturbation) the by-item kernel draws from
PERTURB_WORK = 100_000_000  # ... and the most operations that build them
ROW_TABLE_ENTRIES = 200_000  # the largest the direct kernel draws from (its slots rarely reuse a row)
LAW_WORK = 20_000_000_000  # ... and the most multiply-adds that build it (D3code at K = 4: 7e9, 0.4 s)
LAW_CACHE_ENTRIES = 6_000_000  # slot-law entries a simulator keeps between cells (48 bytes each)
PERTURB_CACHE_ENTRIES = 8_000_000  # perturbation-table entries it keeps (16 bytes each)
CHAIN_FROM = 4  # slots per positive slot-law entry from which a replicate is drawn as a chain of binomials
DEFER_SLOTS = 8  # slots per row triple from which the direct kernel at K = 1 replaces responses per triple
GATHER_SLOTS = 1.0  # slots per (gold, A, B) triple from which the direct kernel counts slots per triple
GATHER_FROM = 1  # slots per perturbation outcome from which the by-item kernel counts an item's slots per outcome
MASK20 = (1 << 20) - 1  # a slot law's packed triple holds three 20-bit rows (analysis.slotlaw.LawTables)
TAIL_SLOTS = 16  # slots left at which that chain stops and draws the rest by inversion
MASK_WORD = 63  # the most responses whose replacement one int64 mask can say (thinned path, rater loop)
RATER_LOOP_PER_K = 1.0  # the direct kernel reads an item rater by rater where its group has at most this many raters per K
SMALL_BINOMIAL = 16  # below this many trials a binomial is a count of uniforms (faster than rng.binomial in numba)


EMPTY_TABLES = CompositionTables(row=np.zeros(1, dtype=np.int64), prob=np.zeros((1, 1)),
                                 alias=np.zeros((1, 1), dtype=np.int64), comp=np.zeros((1, 1), dtype=np.int64),
                                 start=np.zeros(2, dtype=np.int64))


NO_PERTURB = PerturbationTables(*(np.zeros(1, dtype=np.int64),) * 2, np.zeros(1), np.zeros(1, dtype=np.int64),
                                *(np.zeros((1, 1), dtype=np.int64),) * 3, *(np.zeros(1, dtype=np.int64),) * 4)


def packs(k: int, n_labels: int) -> bool:
    """Whether a count vector of ``k`` responses packs into one int64, ``bit_length(k)`` bits a label (how the
    direct kernel holds a slot's counts where it has no pair tables)."""
    return k.bit_length() * n_labels <= 63


@dataclass(frozen=True)
class PairTables:
    """How the direct kernel numbers count vectors of ``k`` responses: a kernel sums ``code[label]`` over a slot's
    responses. Where the vectors are few (``paired``), the code is mixed-radix (:func:`composition_index`), the
    vector's row is ``row_of[sum] - first``, and the metric terms of every (gold, model) pair of rows
    (:func:`pair_tables`) add a slot to the sums with a few lookups instead of a pass over its counts. Elsewhere the
    code packs the counts, ``shift`` bits a label (:func:`packs`), and the arrays are placeholders: more vectors
    would not let the tables stay in the processor's caches."""

    paired: bool
    code: np.ndarray
    row_of: np.ndarray
    first: int  # the row of composition_space's first vector of k responses
    shift: int
    vote: np.ndarray
    err: np.ndarray
    kl: np.ndarray
    jsd: np.ndarray

    @classmethod
    def build(cls, k: int, n_labels: int) -> PairTables:
        if math.comb(k + n_labels - 1, n_labels - 1) > PAIR_ROWS:
            if not packs(k, n_labels):
                raise ParameterError(f"the direct kernel cannot pack counts of K = {k} over {n_labels} labels into "
                                     "64 bits; use method='items' (S1, S3) or method='counts' (S2)")
            shift = k.bit_length()
            return cls(False, np.left_shift(1, shift * np.arange(n_labels), dtype=np.int64),
                       np.zeros(1, dtype=np.int64), 0, shift, np.zeros(1, dtype=np.int64),
                       np.zeros((1, 1), dtype=np.int64), np.zeros((1, 1)), np.zeros((1, 1)))
        comp, start = composition_space(k, n_labels)
        return cls(True, *composition_index(comp, k), int(start[k]), 0, *pair_tables(comp[start[k]:], k))

    def metric_args(self) -> tuple:
        return self.vote, self.err, self.kl, self.jsd

    def kernel_args(self) -> tuple:
        return self.paired, self.code, self.row_of, self.first, self.shift, *self.metric_args()


def check_perturbation(perturbation: str) -> str:
    """The perturbation rule's name, or a :class:`ParameterError` naming the choices."""
    if perturbation not in PERTURBATIONS:
        raise ParameterError(f"unknown perturbation {perturbation!r}; choose one of {', '.join(PERTURBATIONS)}")
    return perturbation


# ---------------------------------------------------------------- perturbation of B

@numba.njit(cache=True, inline="always")
def urn_label(u, urn):
    """A label from the Polya urn ``urn`` (counts of earlier replacements) with prior weight 1/C, for uniform ``u``.

    The urn's total weight is ``C * (1/C) + sum(urn) = 1 + sum(urn)``; the drawn label is added to the urn.
    """
    n_labels = urn.shape[0]
    prior = 1.0 / n_labels
    total = 1.0
    for c in range(n_labels):
        total += urn[c]
    x = u * total
    c = 0
    acc = prior + urn[0]
    while c < n_labels - 1 and x >= acc:
        c += 1
        acc += prior + urn[c]
    urn[c] += 1
    return c


@numba.njit(cache=True, inline="always")
def replacement(v, label, rule, urn):
    """The noise label that replaces ``label``, for uniform ``v``: from the slot's urn (``DIRICHLET``) or another
    label drawn uniformly (``UNIFORM``)."""
    if rule == DIRICHLET:
        return urn_label(v, urn)
    n_labels = urn.shape[0]
    other = min(int(v * (n_labels - 1)), n_labels - 2)
    return other + (other >= label)


@numba.njit(cache=True, inline="always")
def perturbed(rng, label, epsilon, rule, urn):
    """``label``, or with probability ``epsilon`` its :func:`replacement`. One uniform per response."""
    u = rng.random()
    if u >= epsilon:
        return label
    return replacement(u / epsilon, label, rule, urn)


@numba.njit(cache=True, inline="always")
def first_replaced(u, n, keep_all, log_keep):
    """Index of the first replaced response among ``n``, each replaced with probability ``epsilon``, given that at
    least one is: the truncated geometric law, by inversion of uniform ``u``. ``keep_all = (1 - epsilon)**n``
    and ``log_keep = log(1 - epsilon)``."""
    if keep_all <= 0.0:
        return 0
    j = int(math.ceil(math.log1p(-u * (1.0 - keep_all)) / log_keep)) - 1
    return min(max(j, 0), n - 1)


@numba.njit(cache=True)
def perturb_labels(rng, labels, n_slots, k, epsilon, rule, urn):
    """Perturb the responses in the first ``n_slots`` rows of ``labels`` in place, one urn per row (item slot)."""
    for j in range(n_slots):
        urn[:] = 0
        for c in range(k):
            labels[j, c] = perturbed(rng, labels[j, c], epsilon, rule, urn)


@numba.njit(cache=True, inline="always")
def dirichlet_noise(rng, m_a, m_b, chain, noise):
    """The labels of ``m_a`` replaced responses of A* and ``m_b`` of B*, drawn from one ``eta ~ Dirichlet(1/C, ...,
    1/C)``: the counts of all ``m_a + m_b`` by the chain of beta-binomials ``chain`` (:class:`NoiseTables`), then
    the smaller side's as a uniform subset of them, drawn one at a time. Writes the smaller side's counts into
    ``noise[0]`` and the other's into ``noise[1]``; returns whether the smaller side is B* (``m_b < m_a``)."""
    n_labels = noise.shape[1]
    left = m_a + m_b
    for c in range(n_labels - 1):
        u = rng.random()
        lo, hi = 0, left
        while lo < hi:
            mid = (lo + hi) // 2
            if u < chain[c, left, mid]:
                hi = mid
            else:
                lo = mid + 1
        noise[0, c] = 0
        noise[1, c] = lo
        left -= lo
    noise[0, n_labels - 1] = 0
    noise[1, n_labels - 1] = left
    left = m_a + m_b
    for _ in range(min(m_a, m_b)):
        j = uniform_index(rng, left)
        c = 0
        acc = noise[1, 0]
        while acc <= j:
            c += 1
            acc += noise[1, c]
        noise[1, c] -= 1
        noise[0, c] += 1
        left -= 1
    return m_b < m_a


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


def uniform_noise(shares: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per item, the law of a response after uniform replacement, ``(1 - p_c) / (C - 1)``, and its cumulative form."""
    noise = (1.0 - shares) / (shares.shape[1] - 1)
    cum = np.cumsum(noise, axis=1)
    cum[:, -1] = 1.0
    return noise, cum


# ---------------------------------------------------------------- the null split

def split_law(k: int) -> np.ndarray:
    """Cumulative law of ``H ~ Hypergeometric(2k; k, k)``: how many of B's ``k`` columns a random half holds."""
    cdf = hypergeom(2 * k, k, k).cdf(np.arange(k + 1))
    cdf[-1] = 1.0
    return cdf


def fire_law(k: int, epsilon: float) -> np.ndarray:
    """``cdf[n, x] = P(Binomial(n, epsilon) <= x)`` for ``n, x <= k``: how many of ``n`` responses are replaced."""
    n = np.arange(k + 1)
    cdf = binom.cdf(n[None, :], n[:, None], epsilon)
    cdf[n, n] = 1.0
    return cdf


@numba.njit(cache=True, inline="always")
def draw_from_cdf(rng, cdf):
    """An index from a cumulative law by binary search on one uniform."""
    u = rng.random()
    lo, hi = 0, cdf.shape[0] - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if u < cdf[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


@numba.njit(cache=True, inline="always")
def draw_columns(rng, n_raters, k, epsilon, null, h_cdf, columns, n_perturbed):
    """A drawn group's rater columns (rows G, A, B of ``columns``: uniform draws of its ``n_raters`` raters) and,
    under the null, ``h``, how many of B's columns land in A* (returned; 0 under the alternative). With
    ``epsilon > 0``, ``n_perturbed`` says how many of A*'s and B*'s columns are B's: the first ``h`` of A*'s, the
    first ``k - h`` of B*'s."""
    for side in range(3):
        for c in range(k):
            columns[side, c] = uniform_index(rng, n_raters)
    h = draw_from_cdf(rng, h_cdf) if null else 0
    if epsilon > 0.0:
        n_perturbed[1] = h
        n_perturbed[2] = k - h
    return h


@numba.njit(cache=True)
def weigh_columns(columns, n_perturbed, seen, part_rater, part_weight, part_len):
    """A group's rater columns by part (0: G; 1, 2: A's fixed and perturbable; 3, 4: B's) as distinct raters
    ``part_rater[part, :part_len[part]]`` with their numbers of columns ``part_weight``, so that a kernel reads
    each distinct rater's label once. ``seen`` (parts x raters, all -1) is scratch and is left as it was found."""
    k = columns.shape[1]
    part_len[:] = 0
    for side in range(3):
        for c in range(k):
            part = 0 if side == 0 else 2 * side - 1 + (c < n_perturbed[side])
            rater = columns[side, c]
            j = seen[part, rater]
            if j < 0:
                j = part_len[part]
                seen[part, rater] = j
                part_rater[part, j] = rater
                part_weight[part, j] = 0
                part_len[part] += 1
            part_weight[part, j] += 1
    for part in range(5):
        for j in range(part_len[part]):
            seen[part, part_rater[part, j]] = -1


@intrinsic
def popcount(typingctx, x):
    """The number of set bits of the integer ``x``, as one processor instruction (LLVM's ctpop)."""
    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])
    return x(x), codegen


@numba.njit(cache=True, inline="always")
def draw_mask(rng, k, m_prob, m_alias):
    """Which of ``k <= MASK_WORD`` perturbable responses are replaced, as the bits of one integer: a draw from
    the mask tables (:func:`analysis.perturbation.mask_tables`) per ``MASK_BITS`` of them."""
    mask = 0
    for chunk in range(0, k, MASK_BITS):
        mask |= alias_draw(rng, m_prob, m_alias, 0, m_prob.shape[0]) << chunk
    return mask


@numba.njit(cache=True, inline="always")
def alias_draw(rng, prob, alias, offset, size):
    """An index in ``0..size-1`` from the alias table ``prob[offset:offset + size]``, ``alias[...]`` (one uniform)."""
    u = rng.random() * size
    e = min(int(u), size - 1)
    return alias[offset + e] if u - e >= prob[offset + e] else e


@numba.njit(cache=True)
def _grouped_replicates(rng, item_start, items, rater_start, matrix_start, matrix, item_cum, single_group,
                        group_size, n, k, epsilon, rule, null, h_cdf, kl_table, js_table, paired, code, row_of, first,
                        shift, vote, err, kl, jsd, tabled, n_out, t_base, t_prob, t_alias, code_a, code_b, start,
                        gather, masked, m_prob, m_alias, m_count, m_pos, n_base, n_size, n_prob, n_alias,
                        n_code_a, n_code_b, n_chain, by_rater, complete, out, confusion):
    """Replicates on responses, fused: labels are counted as they are drawn, never stored.

    All ``2K'`` pooled columns of A and B are iid uniform draws of the group's raters, so a uniform half of them
    is ``K'`` fresh columns of which ``H ~ Hypergeometric(2K'; K', K')`` are B's: the null draws A* as ``K'``
    columns of which ``H`` are perturbed, and B* as ``K'`` columns of which ``K' - H`` are, once per group (per
    replicate for S1, per batch for S3, per item for S2); which columns does not matter, as they are iid. B's
    perturbed responses of one slot share its urn. A rater who did not label a drawn item is replaced by a draw
    from the item's own labels (the ragged-batch rule). Each slot's counts go straight into the replicate's metric
    sums, so no per-item array is kept. The innermost loops call only inlined helpers: a call that takes the
    generator costs more than a response.

    A slot's count vectors are codes, sums of ``code[label]``: rows of the pair tables where ``paired``, else
    counts packed ``shift`` bits a label and unpacked for the metric pass. With ``tabled`` (and the pair tables),
    B's perturbation of a slot is one draw from the tables of :mod:`analysis.perturbation`, given the unperturbed
    count vectors of A*'s and B*'s perturbable responses. With ``gather`` (and the pair tables), slots are counted
    per (gold, A, B) triple of rows and each triple is added to the sums once, at the end of the replicate; at
    K = 1 the replacements are then drawn per triple, by binomials. With ``masked``, draws from the mask tables
    (:func:`analysis.perturbation.mask_tables`) say which perturbable responses are replaced, ``MASK_BITS`` at a
    time, instead of one draw per response; under the Dirichlet rule (``thinned``) the kept ones are counted as
    they are read and the replaced ones labelled in one draw from the noise tables
    (:class:`analysis.perturbation.NoiseTables`), or beyond them by :func:`dirichlet_noise`. With ``by_rater``, an item that
    every rater of its group labelled (``complete``) is read rater by rater where the group has at most
    ``RATER_LOOP_PER_K * K`` raters: each label weighted by its rater's columns per part, the replaced ones counted
    by the mask bits over the rater's run of columns.
    """
    n_labels = item_cum.shape[1]
    n_drawn, per_group = group_layout(n, single_group, group_size)
    n_slots = n_drawn * per_group
    slot_group = np.empty(n_slots, dtype=np.int64)
    slot_local = np.empty(n_slots, dtype=np.int64)
    columns = np.empty((3, k), dtype=np.int64)  # G, A (or A*), B (or B*)
    n_perturbed = np.zeros(3, dtype=np.int64)
    urn = np.zeros(n_labels, dtype=np.int64)
    counts = np.zeros((3, 1, n_labels), dtype=np.int64)  # one slot's counts of G, A, B
    vector = np.zeros(3, dtype=np.int64)  # ... as codes, then as rows in the pair tables
    field = (1 << shift) - 1  # one label's count in a packed code
    part_code = np.zeros(3, dtype=np.int64)  # tabled: the codes of A*'s and B*'s perturbable responses
    n_vectors = vote.shape[0]
    n_masks = m_prob.shape[0]
    pert_old = np.empty(k, dtype=np.int64)  # the labels of a slot's perturbable responses, A*'s first
    noised = np.zeros(3, dtype=np.int64)  # thinned: a slot's replaced responses per side
    noise = np.zeros((2, n_labels), dtype=np.int64)  # ... and their labels beyond the noise tables
    max_raters = np.max(rater_start[1:] - rater_start[:-1])
    weight = np.zeros((max_raters, 5), dtype=np.int64)  # rater loop: columns per rater and part (G; A fixed, A
    run = np.zeros((max_raters, 2), dtype=np.int64)  # perturbable; B ...), and the mask bits of the perturbable ones
    cube = n_vectors**3
    defer = gather and k == 1 and epsilon > 0.0 and n_slots >= DEFER_SLOTS * cube  # perturb gathered slots at the end
    triples = np.zeros((2 * cube if defer else cube) if gather else 1, dtype=np.int64)  # slots per row triple
    thinned = masked and rule == DIRICHLET and not defer and not tabled and k <= MASK_WORD
    sums = np.zeros(SUMS, dtype=np.int64)
    conf_a = np.zeros((n_labels, n_labels), dtype=np.int64)
    conf_b = np.zeros((n_labels, n_labels), dtype=np.int64)
    use_urn = epsilon > 0.0 and rule == DIRICHLET
    for r in range(out.shape[0]):
        draw_slots(rng, item_start, single_group, group_size, n, slot_group, slot_local)
        sums[:] = 0
        conf_a[:] = 0
        conf_b[:] = 0
        for d in range(n_drawn):
            group = slot_group[d * per_group]
            n_raters = rater_start[group + 1] - rater_start[group]
            h = draw_columns(rng, n_raters, k, epsilon, null, h_cdf, columns, n_perturbed)
            width_b = start[k - h + 1] - start[k - h] if tabled else 0  # count vectors of B*'s perturbable part
            base = matrix_start[group]
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
                if use_urn and not thinned and not tabled and not defer:
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
                        offset = t_base[h] + ((row_of[f_a] - start[h]) * width_b + row_of[f_b]
                                              - start[k - h]) * n_out[h]
                        o = alias_draw(rng, t_prob, t_alias, offset, n_out[h])
                        vector[1] = e_a + code_a[h, o]
                        vector[2] = e_b + code_b[h, o]
                    else:
                        vector[1] = e_a + f_a
                        vector[2] = e_b + f_b
                elif tabled:  # each part's count vector by its code, then B's perturbation in one draw
                    for side in range(3):
                        e = 0  # the side's fixed responses
                        f = 0  # ... and its perturbable ones
                        for c in range(k):
                            label = matrix[row + columns[side, c]]
                            if label < 0:
                                label = draw_label(rng, item_cum, item)
                            if c < n_perturbed[side]:
                                f += code[label]
                            else:
                                e += code[label]
                        vector[side] = e
                        part_code[side] = f
                    offset = t_base[h] + ((row_of[part_code[1]] - start[h]) * width_b + row_of[part_code[2]]
                                          - start[k - h]) * n_out[h]
                    o = alias_draw(rng, t_prob, t_alias, offset, n_out[h])
                    vector[0] = row_of[vector[0]] - first
                    vector[1] = row_of[vector[1] + code_a[h, o]] - first
                    vector[2] = row_of[vector[2] + code_b[h, o]] - first
                    if gather:
                        triples[(vector[0] * n_vectors + vector[1]) * n_vectors + vector[2]] += 1
                    else:
                        add_pair(vector[0], vector[1], vector[2], vote, err, kl, jsd, conf_a, conf_b, sums, 1)
                    continue
                else:  # response by response
                    mask = draw_mask(rng, k, m_prob, m_alias) if thinned else 0
                    for side in range(3):
                        e = 0
                        for c in range(k):
                            label = matrix[row + columns[side, c]]
                            if label < 0:
                                label = draw_label(rng, item_cum, item)
                            if c < n_perturbed[side] and not defer:
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
                                    label = perturbed(rng, label, epsilon, rule, urn)
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
                        vector[side] += code[replacement(rng.random(), pert_old[q], rule, urn)] - code[pert_old[q]]
                if not paired:  # unpack the counts (shift bits a label) for the metric pass
                    for side in range(3):
                        for c in range(n_labels):
                            counts[side, 0, c] = (vector[side] >> (shift * c)) & field
                    add_item(counts[0], counts[1], counts[2], 0, kl_table, js_table, conf_a, conf_b, sums, 1)
                    continue
                for side in range(3):
                    vector[side] = row_of[vector[side]] - first
                if gather:
                    cell = (vector[0] * n_vectors + vector[1]) * n_vectors + vector[2]
                    triples[cell + cube if defer and n_perturbed[1] > 0 else cell] += 1
                else:
                    add_pair(vector[0], vector[1], vector[2], vote, err, kl, jsd, conf_a, conf_b, sums, 1)
        if gather:
            for e in range(triples.shape[0]):
                x = triples[e]
                if x == 0:
                    continue
                triples[e] = 0
                cell = e % cube
                tg, ta, tb = cell // (n_vectors * n_vectors), (cell // n_vectors) % n_vectors, cell % n_vectors
                if not defer:
                    add_pair(tg, ta, tb, vote, err, kl, jsd, conf_a, conf_b, sums, x)
                    continue
                # K = 1: Binomial(x, epsilon) of the cell's slots replace their one perturbable response (A*'s
                # where e >= cube, else B*'s); a response's row is its label, and the replacements go out over
                # the labels by a multinomial (uniform: over the C - 1 others)
                on_a = e >= cube
                old = ta if on_a else tb
                fired = binomial(rng, x, epsilon)
                if x > fired:
                    add_pair(tg, ta, tb, vote, err, kl, jsd, conf_a, conf_b, sums, x - fired)
                choices = n_labels if rule == DIRICHLET else n_labels - 1
                for c in range(n_labels):
                    if fired == 0:
                        break
                    if rule == UNIFORM and c == old:
                        continue
                    y = fired if choices == 1 else binomial(rng, fired, 1.0 / choices)
                    choices -= 1
                    fired -= y
                    if y > 0:
                        add_pair(tg, c if on_a else ta, tb if on_a else c, vote, err, kl, jsd, conf_a, conf_b, sums, y)
        finish_deltas(sums, conf_a, conf_b, n_slots, k, n_labels, out[r], confusion[r])


@numba.njit(cache=True, inline="always")
def draw_from_row(rng, cdf, row):
    """An index from the cumulative law ``cdf[row]`` by a linear search from 0 (short for small binomial means)."""
    u = rng.random()
    x = 0
    while x < row and u >= cdf[row, x]:
        x += 1
    return x


@numba.njit(cache=True)
def _item_replicates(rng, item_start, items, rater_start, matrix_start, matrix, item_cum, single_group, group_size,
                     n, k, epsilon, rule, null, h_cdf, fire_cdf, kl_table, js_table, tabled, n_out, base, t_prob,
                     t_alias, out_a, out_b, comp, start, code, row_of, n_base, n_size, n_prob, n_alias, n_out_a,
                     n_out_b, n_comp, n_chain, out, confusion):
    """Replicates by distinct item: the law of :func:`_grouped_replicates`, with less work where items repeat.

    Within a drawn group all slots share the rater columns, so the slots of one item differ only in which of B's
    responses are replaced (and, in ragged batches, in the labels drawn for missing responses). The kernel draws
    how many slots each item of the group gets (:func:`draw_multiplicities`), reads the item's labels once into
    counts (never replaced; perturbable, per side) and then, per slot, replaces each perturbable response with
    probability ``epsilon``; with ``BY_LABEL_FROM`` perturbable responses per label or more, it replaces
    ``Binomial(n_c, epsilon)`` of the ``n_c`` with label ``c`` at once (``fire_cdf``), for each side and label.

    When many slots keep every response (``(1 - epsilon)**P >= SKIP_FROM`` for ``P`` perturbable responses), an
    item's ``m`` slots are split: ``Binomial(m, (1 - epsilon)**P)`` keep them all and enter the sums as one
    weighted item; the others draw their first replaced response from the truncated geometric law
    (:func:`first_replaced`) and the rest one by one, or, with a single perturbable response, share out their
    replacement labels by a multinomial.
    """
    n_labels = item_cum.shape[1]
    n_groups = item_start.shape[0] - 1
    n_drawn, per_group = group_layout(n, single_group, group_size)
    n_slots = n_drawn * per_group
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
    sums = np.zeros(SUMS, dtype=np.int64)
    conf_a = np.zeros((n_labels, n_labels), dtype=np.int64)
    conf_b = np.zeros((n_labels, n_labels), dtype=np.int64)
    log_keep = math.log1p(-epsilon) if 0.0 < epsilon < 1.0 else 0.0
    for r in range(out.shape[0]):
        sums[:] = 0
        conf_a[:] = 0
        conf_b[:] = 0
        for d in range(n_drawn):
            group = 0 if single_group else uniform_index(rng, n_groups)
            n_items = item_start[group + 1] - item_start[group]
            n_raters = rater_start[group + 1] - rater_start[group]
            draw_columns(rng, n_raters, k, epsilon, null, h_cdf, columns, n_perturbed)
            n_pert = n_perturbed[1] + n_perturbed[2]
            keep_all = (1.0 - epsilon) ** n_pert
            split = keep_all >= SKIP_FROM
            by_label = n_pert >= BY_LABEL_FROM * n_labels
            listed = split or not by_label  # whether the slots need the perturbable responses one by one
            weigh_columns(columns, n_perturbed, seen, part_rater, part_weight, part_len)
            draw_multiplicities(rng, per_group, n_items, mult)
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
                    for j in range(part_len[part]):
                        label = matrix[row + part_rater[part, j]]
                        w = part_weight[part, j]
                        if part == 2 or part == 4:
                            if listed:
                                for _ in range(w):
                                    pert_label[p] = label
                                    pert_side[p] = side
                                    p += 1
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
                    for c in range(n_labels):
                        counts[0, 0, c] = fixed[0, c]
                    gather = m >= GATHER_FROM * width  # count the slots per outcome, then add each outcome once
                    if gather:
                        for o in range(width):
                            outcomes[o] = 0
                    for _ in range(m):
                        o = alias_draw(rng, t_prob, t_alias, offset, width)
                        if gather:
                            outcomes[o] += 1
                            continue
                        ea = out_a[n_perturbed[1], o]
                        eb = out_b[n_perturbed[1], o]
                        for c in range(n_labels):
                            counts[1, 0, c] = fixed[1, c] + comp[ea, c]
                            counts[2, 0, c] = fixed[2, c] + comp[eb, c]
                        add_item(counts[0], counts[1], counts[2], 0, kl_table, js_table, conf_a, conf_b, sums, 1)
                    if gather:
                        for o in range(width):
                            if outcomes[o] == 0:
                                continue
                            ea = out_a[n_perturbed[1], o]
                            eb = out_b[n_perturbed[1], o]
                            for c in range(n_labels):
                                counts[1, 0, c] = fixed[1, c] + comp[ea, c]
                                counts[2, 0, c] = fixed[2, c] + comp[eb, c]
                            add_item(counts[0], counts[1], counts[2], 0, kl_table, js_table, conf_a, conf_b, sums,
                                     outcomes[o])
                    continue
                if split and m > 1 and missing.sum() == 0:
                    kept = m if keep_all >= 1.0 else binomial(rng, m, keep_all)
                    for side in range(3):
                        for c in range(n_labels):
                            counts[side, 0, c] = fixed[side, c] + pert[side, c]
                    if kept > 0:
                        add_item(counts[0], counts[1], counts[2], 0, kl_table, js_table, conf_a, conf_b, sums, kept)
                    m -= kept
                    if m >= n_labels and n_pert == 1:  # the one replaced response takes its labels by a multinomial
                        old = pert_label[0]
                        side = pert_side[0]
                        counts[side, 0, old] -= 1
                        choices = n_labels if rule == DIRICHLET else n_labels - 1
                        for c in range(n_labels):
                            if rule == UNIFORM and c == old:
                                continue
                            x = m if choices == 1 else binomial(rng, m, 1.0 / choices)
                            choices -= 1
                            m -= x
                            if x > 0:
                                counts[side, 0, c] += 1
                                add_item(counts[0], counts[1], counts[2], 0, kl_table, js_table, conf_a, conf_b,
                                         sums, x)
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
                                label = replacement(rng.random(), label, rule, urn)
                            elif q > first:
                                label = perturbed(rng, label, epsilon, rule, urn)
                            counts[pert_side[q], 0, label] += 1
                        add_item(counts[0], counts[1], counts[2], 0, kl_table, js_table, conf_a, conf_b, sums, 1)
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
                            counts[pert_side[q], 0, perturbed(rng, label, epsilon, rule, urn)] += 1
                        add_item(counts[0], counts[1], counts[2], 0, kl_table, js_table, conf_a, conf_b, sums, 1)
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
                            fired = draw_from_row(rng, fire_cdf, n_c)
                            counts[side, 0, c] += n_c - fired
                            if rule == DIRICHLET:  # labelled below, with the other side's
                                noised[side] += fired
                                continue
                            for _ in range(fired):
                                counts[side, 0, replacement(rng.random(), c, rule, urn)] += 1
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
                    add_item(counts[0], counts[1], counts[2], 0, kl_table, js_table, conf_a, conf_b, sums, 1)
        finish_deltas(sums, conf_a, conf_b, n_slots, k, n_labels, out[r], confusion[r])


@numba.njit(cache=True)
def _count_replicates(rng, shares, cum, noise_shares, noise_cum, tabled, row, prob, alias, comp, start, n, k,
                      epsilon, rule, null, h_cdf, fire_cdf, kl_table, js_table, out, confusion):
    """S2 on counts: per slot, multinomial counts of the item's unreplaced responses (from alias tables when
    ``tabled``, else :func:`add_counts`) and the noise responses that replace ``Binomial(., epsilon)`` of them."""
    n_items, n_labels = shares.shape
    g = np.zeros((1, n_labels), dtype=np.int64)  # one item's counts
    a = np.zeros((1, n_labels), dtype=np.int64)
    b = np.zeros((1, n_labels), dtype=np.int64)
    urn = np.zeros(n_labels, dtype=np.int64)
    sums = np.zeros(SUMS, dtype=np.int64)
    conf_a = np.zeros((n_labels, n_labels), dtype=np.int64)
    conf_b = np.zeros((n_labels, n_labels), dtype=np.int64)
    for r in range(out.shape[0]):
        sums[:] = 0
        conf_a[:] = 0
        conf_b[:] = 0
        for j in range(n):
            item = uniform_index(rng, n_items)
            if null:
                h = draw_from_cdf(rng, h_cdf)  # B's columns in A*
                m_a = draw_from_row(rng, fire_cdf, h)
                m_b = draw_from_row(rng, fire_cdf, k - h)
            else:
                m_a = 0
                m_b = draw_from_row(rng, fire_cdf, k)
            if tabled:
                e_g = composition_entry(rng, k, row[item], prob, alias, start)
                e_a = composition_entry(rng, k - m_a, row[item], prob, alias, start)
                e_b = composition_entry(rng, k - m_b, row[item], prob, alias, start)
                for c in range(n_labels):
                    g[0, c] = comp[e_g, c]
                    a[0, c] = comp[e_a, c]
                    b[0, c] = comp[e_b, c]
            else:
                for c in range(n_labels):
                    g[0, c] = 0
                    a[0, c] = 0
                    b[0, c] = 0
                add_counts(rng, k, shares, item, cum, g, 0)
                add_counts(rng, k - m_a, shares, item, cum, a, 0)
                add_counts(rng, k - m_b, shares, item, cum, b, 0)
            for c in range(n_labels):
                urn[c] = 0
            if rule == DIRICHLET:  # the slot's noise responses, from its urn (written out here: as a helper that
                for _ in range(m_a):  # writes into the counts, this runs several times slower in numba)
                    a[0, urn_label(rng.random(), urn)] += 1
                for _ in range(m_b):
                    b[0, urn_label(rng.random(), urn)] += 1
            else:
                for _ in range(m_a):
                    a[0, draw_label(rng, noise_cum, item)] += 1
                for _ in range(m_b):
                    b[0, draw_label(rng, noise_cum, item)] += 1
            add_item(g, a, b, 0, kl_table, js_table, conf_a, conf_b, sums, 1)
        finish_deltas(sums, conf_a, conf_b, n, k, n_labels, out[r], confusion[r])


@numba.njit(cache=True)
def _law_replicates(rng, prob, alias, packed, order, sorted_law, tail, n, k, n_labels, chain, vote, err, kl, jsd,
                    out, confusion):
    """S2 from the exact law of one slot (:mod:`analysis.slotlaw`): a replicate is ``n`` independent draws of a
    (gold, A, B) triple of count vectors. Slot by slot from the alias table; or, when ``chain``, as a multinomial:
    a chain of binomials down the law's entries in decreasing order until at most ``TAIL_SLOTS`` slots are left,
    which are drawn by inversion of the remaining tail (binary search on its sums)."""
    size = prob.shape[0]
    positive = order.shape[0]
    sums = np.zeros(SUMS, dtype=np.int64)
    conf_a = np.zeros((n_labels, n_labels), dtype=np.int64)
    conf_b = np.zeros((n_labels, n_labels), dtype=np.int64)
    for r in range(out.shape[0]):
        sums[:] = 0
        conf_a[:] = 0
        conf_b[:] = 0
        if chain:
            left = n
            j = 0
            while left > TAIL_SLOTS:
                x = binomial(rng, left, min(sorted_law[j] / tail[j], 1.0)) if j < positive - 1 else left
                if x > 0:
                    e = order[j]
                    t = packed[e]
                    add_pair(t & MASK20, (t >> 20) & MASK20, t >> 40, vote, err, kl, jsd, conf_a, conf_b, sums, x)
                    left -= x
                j += 1
            for _ in range(left):
                u = rng.random() * tail[j]
                lo, hi = j, positive - 1  # the last entry whose tail sum exceeds u
                while lo < hi:
                    mid = (lo + hi + 1) // 2
                    if tail[mid] > u:
                        lo = mid
                    else:
                        hi = mid - 1
                e = order[lo]
                t = packed[e]
                add_pair(t & MASK20, (t >> 20) & MASK20, t >> 40, vote, err, kl, jsd, conf_a, conf_b, sums, 1)
        else:
            for _ in range(n):
                t = packed[alias_draw(rng, prob, alias, 0, size)]
                add_pair(t & MASK20, (t >> 20) & MASK20, t >> 40, vote, err, kl, jsd, conf_a, conf_b, sums, 1)
        finish_deltas(sums, conf_a, conf_b, n, k, n_labels, out[r], confusion[r])


class Replicates(NamedTuple):
    """What a kernel returns for ``n`` replicates: deltas (n x 8, METRICS order) and the confusion matrices of A's
    and B's votes against G's (n x 2 x labels x labels), which settle the ties of precision and F1."""

    deltas: np.ndarray
    confusion: np.ndarray


class Simulator:
    """Everything one (dataset, sampler) pair needs to simulate replicates; built once, used for every cell.

    Five methods draw the same law (METHOD section 9): ``method="responses"`` draws every response (the direct
    form, and the reference the others are tested against); ``"tables"`` is the same kernel with B's
    perturbation from tables (:mod:`analysis.perturbation`): one mask says which responses are replaced and the
    noise tables say by what, and an item of a group with at most ``RATER_LOOP_PER_K * K`` raters is read rater by
    rater; ``"items"`` works per distinct item of a drawn group (:func:`_item_replicates`); ``"law"`` draws S2's
    slots from the exact law of one slot (:func:`_law_replicates`) where it has at most ``LAW_ENTRIES`` entries;
    ``"counts"`` runs S2 on per-item counts, from multinomial alias tables where they fit
    (:func:`_count_replicates`). ``"auto"`` (the default) takes the fastest measured for the sampler and cell:
    items for S1; for S3 tables below ``ITEMS_FROM`` and items from there; for S2, the slot law where it fits,
    else counts where their alias tables fit or K > ``MASK_WORD``, else tables.
    """

    def __init__(self, ds: AnnotationDataset, sampler: str, method: str = "auto"):
        if method not in METHODS:
            raise ParameterError(f"unknown method {method!r}; choose one of {METHODS}")
        self.plan = make_plan(ds, sampler)
        self.sampler = self.plan.sampler
        self.method = method
        self.noise = uniform_noise(self.plan.item_share)
        self.n_distributions = len(np.unique(self.plan.item_share, axis=0))
        self._tables: dict[int, CompositionTables] = {}
        self._pairs: dict[int, PairTables] = {}
        self._noise: dict[int, NoiseTables] = {}
        self._complete: np.ndarray | None = None
        self._laws: dict[tuple, LawTables] = {}
        self._perturbations: dict[tuple, PerturbationTables] = {}

    def pair_tables(self, k: int) -> PairTables:
        """The per-pair metric terms of ``k`` responses (:class:`PairTables`), built once per ``k``; an unused
        placeholder where there are more than ``PAIR_ROWS`` count vectors of ``k``."""
        if k not in self._pairs:
            self._pairs[k] = PairTables.build(k, self.plan.n_labels)
        return self._pairs[k]

    def noise_tables(self, k: int) -> NoiseTables:
        """The Dirichlet noise of replaced responses (:class:`analysis.perturbation.NoiseTables`), built once per
        ``k``."""
        if k not in self._noise:
            self._noise[k] = NoiseTables.build(k, self.plan.n_labels)
        return self._noise[k]

    def complete_items(self) -> np.ndarray:
        """Per item of the plan's groups (``items`` order), whether every rater of its group labelled it: the
        direct kernel reads such an item rater by rater (a missing label is drawn per response instead)."""
        if self._complete is None:
            plan = self.plan
            group = np.repeat(np.arange(len(plan.item_start) - 1), np.diff(plan.item_start))
            local = np.arange(len(plan.items)) - plan.item_start[group]
            row = plan.matrix_start[group] + local * np.diff(plan.rater_start)[group]
            self._complete = np.logical_and.reduceat(plan.matrix >= 0, row)
        return self._complete

    def composition_tables(self, k: int) -> CompositionTables:
        """The alias tables of every item's multinomials up to ``k`` responses, built once per ``k``."""
        if k not in self._tables:
            self._tables[k] = composition_tables(self.plan.item_share, k)
        return self._tables[k]

    def law_tables(self, k: int, epsilon: float, rule: str, null: bool) -> LawTables:
        """The drawing tables of the S2 slot law (:func:`analysis.slotlaw.slot_law`), kept for later cells (up to
        ``LAW_CACHE_ENTRIES`` entries)."""
        return self._kept(self._laws, (k, float(epsilon), rule, bool(null)), LAW_CACHE_ENTRIES,
                          lambda: LawTables.build(slot_law(self.plan.item_share, k, epsilon, rule, null)))

    @staticmethod
    def _kept(store: dict, key: tuple, limit: int, build):
        """``store[key]``, built on first use; the oldest tables go once the store would hold more than ``limit``
        entries."""
        if key not in store:
            tables = build()
            while store and sum(t.prob.size for t in store.values()) + tables.prob.size > limit:
                del store[next(iter(store))]
            store[key] = tables
        return store[key]

    def perturbation_tables(self, k: int, epsilon: float, rule: str, null: bool) -> PerturbationTables:
        """The alias tables of B's perturbation on count vectors (:mod:`analysis.perturbation`), kept for later
        cells (up to ``PERTURB_CACHE_ENTRIES`` entries)."""
        return self._kept(self._perturbations, (k, epsilon, rule, null), PERTURB_CACHE_ENTRIES,
                          lambda: PerturbationTables.build(k, epsilon, rule, self.plan.n_labels, null))

    def perturbation_fits(self, k: int, null: bool, largest: int = PERTURB_ENTRIES) -> bool:
        """Whether a kernel draws B's perturbation from tables: when they have at most ``largest`` entries and
        take at most ``PERTURB_WORK`` operations to build."""
        entries, work = table_sizes(k, self.plan.n_labels, null)
        return entries <= largest and work <= PERTURB_WORK

    def law_fits(self, k: int) -> bool:
        """Whether S2 draws its slots from the exact slot law: when its ``V**3`` entries are few enough, and so is
        the work of building it (two matrix products per distinct item distribution, :mod:`analysis.slotlaw`)."""
        n_vectors = math.comb(k + self.plan.n_labels - 1, self.plan.n_labels - 1)
        noise = math.comb(k + self.plan.n_labels, self.plan.n_labels)  # noise vectors of at most k responses
        work = self.n_distributions * (noise**2 * n_vectors + noise * n_vectors**2)
        return (self.sampler == "S2" and n_vectors**3 <= LAW_ENTRIES and n_vectors <= PAIR_ROWS
                and work <= LAW_WORK)

    def kernel(self, n: int, k: int) -> str:
        """The method that draws replicates of ``n`` items with ``k`` responses each (one of ``METHODS``), the
        fastest measured where ``method="auto"``."""
        if self.method != "auto":
            return self.method
        if self.sampler == "S1":
            return "items"
        direct = self.direct_fits(k)
        if self.sampler == "S3":
            return "tables" if k < ITEMS_FROM and direct else "items"
        if self.law_fits(k):
            return "law"
        return "tables" if k <= MASK_WORD and not self.tabled(k) and direct else "counts"

    def direct_fits(self, k: int) -> bool:
        """Whether the direct kernel can hold count vectors of ``k`` responses: as rows of the pair tables, or
        packed into one int64 (:class:`PairTables`)."""
        n_labels = self.plan.n_labels
        return math.comb(k + n_labels - 1, n_labels - 1) <= PAIR_ROWS or packs(k, n_labels)

    def tabled(self, k: int) -> bool:
        """Whether S2 on counts draws multinomials of ``k`` responses from alias tables: when they fit in memory
        and the items share few label distributions (else the draws miss the processor's caches; measured)."""
        return (self.n_distributions <= TABLE_ROWS
                and composition_entries(k, self.plan.n_labels, self.n_distributions) <= TABLE_ENTRIES)

    def replicates(self, n: int, k: int, epsilon: float, n_samples: int, rng: np.random.Generator,
                   null: bool, perturbation: str = "dirichlet") -> np.ndarray:
        """Deltas of ``n_samples`` replicates, shape (n_samples, 8) in METRICS order."""
        return self.draw(n, k, epsilon, n_samples, rng, null, perturbation).deltas

    def draw(self, n: int, k: int, epsilon: float, n_samples: int, rng: np.random.Generator,
             null: bool, perturbation: str = "dirichlet") -> Replicates:
        """``n_samples`` replicates: their deltas (n_samples, 8) in METRICS order, and each replicate's confusion
        matrices of A's and B's votes against G's (n_samples, 2, labels, labels)."""
        check_size(n, k)
        rule = PERTURBATIONS.index(check_perturbation(perturbation))
        if not 0.0 <= epsilon <= 1.0:
            raise ParameterError(f"epsilon must lie in [0, 1], got {epsilon}")
        if n_samples < 1:
            raise ParameterError(f"n_samples must be >= 1, got {n_samples}")
        out = np.empty((n_samples, len(METRICS)))
        confusion = np.empty((n_samples, 2, self.plan.n_labels, self.plan.n_labels), dtype=np.int64)
        divergence = divergence_tables(k, self.plan.n_labels)
        kernel = self.kernel(n, k)
        if kernel == "law":
            if not self.law_fits(k):
                raise ParameterError(f"the S2 slot law of K = {k} has more than {LAW_ENTRIES} entries")
            tables = self.law_tables(k, float(epsilon), perturbation, bool(null))
            _law_replicates(rng, *tables.kernel_args(), n, k, self.plan.n_labels, n >= CHAIN_FROM * tables.order.size,
                            *self.pair_tables(k).metric_args(), out, confusion)
        elif kernel == "counts":
            tabled = self.tabled(k)
            tables = self.composition_tables(k) if tabled else EMPTY_TABLES
            _count_replicates(rng, self.plan.item_share, self.plan.item_cum, *self.noise, tabled, *tables.kernel_args(),
                              n, k, float(epsilon), rule, bool(null), split_law(k), fire_law(k, epsilon),
                              *divergence, out, confusion)
        elif kernel == "items":
            tabled = epsilon > 0.0 and k > 1 and self.perturbation_fits(k, bool(null))
            tables = self.perturbation_tables(k, float(epsilon), perturbation, bool(null)) if tabled else NO_PERTURB
            noisy = epsilon > 0.0 and perturbation == "dirichlet"
            noise = self.noise_tables(k) if noisy else self.noise_tables(0)
            _item_replicates(rng, *self.plan.kernel_args(), n, k, float(epsilon), rule, bool(null), split_law(k),
                             fire_law(k, epsilon), *divergence, tabled, *tables.kernel_args(), *noise.row_args(), out, confusion)
        else:
            pairs = self.pair_tables(k)
            tabled = (kernel == "tables" and epsilon > 0.0 and pairs.paired and k > 1
                      and self.perturbation_fits(k, bool(null), ROW_TABLE_ENTRIES))
            tables = self.perturbation_tables(k, float(epsilon), perturbation, bool(null)) if tabled else NO_PERTURB
            thinned = kernel == "tables" and epsilon > 0.0 and perturbation == "dirichlet" and k <= MASK_WORD
            noise = self.noise_tables(k) if thinned else self.noise_tables(0)
            by_rater = kernel == "tables" and (tabled or thinned or epsilon == 0.0) and k <= MASK_WORD
            complete = self.complete_items() if by_rater else np.zeros(1, dtype=np.bool_)
            _grouped_replicates(rng, *self.plan.kernel_args(), n, k, float(epsilon), rule, bool(null), split_law(k),
                                *divergence, *pairs.kernel_args(), tabled, *tables.row_args(),
                                kernel == "tables" and pairs.paired and n >= GATHER_SLOTS * len(pairs.vote) ** 3,
                                kernel == "tables" and epsilon > 0.0, *mask_tables(epsilon),
                                *noise.kernel_args(pairs.code), by_rater, complete, out, confusion)
        return Replicates(out, confusion)
