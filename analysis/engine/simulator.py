"""The simulator of one (dataset, sampler) pair: it plans each cell, builds and keeps the tables the plan names,
and runs the plan's kernel (the methods page).

For each replicate, G and A are two independent draws of rater columns on the same items and B a third draw,
perturbed by the rule (:mod:`analysis.engine.rule`); under the null the ``2K'`` columns of A and B are pooled per
group and mixed (:mod:`analysis.engine.split`). Four kernels draw that law (:mod:`analysis.engine.path`
says which, and with which tables); each ends a replicate as its running integer sums and A's and B's confusion
matrices (:class:`analysis.engine.metrics.Accumulator`), from which :func:`analysis.engine.metrics.cell_deltas` computes the deltas of any registered metric.
"""

from __future__ import annotations

import hashlib
import inspect
from typing import NamedTuple

import numpy as np

from analysis.data.annotations import AnnotationDataset
from analysis.engine.kernels.by_item import by_item_replicates, by_rater
from analysis.engine.kernels.counts import Shares, count_replicates
from analysis.engine.kernels.direct import direct_replicates
from analysis.engine.kernels.law import LawTables, distinct_shares, law_replicates, slot_law
from analysis.engine.kernels.pigeonhole import by_rater as turned_round, pigeonhole_replicates
from analysis.engine.perturbation import NoiseCodes, NoiseTables, PerturbationTables, mask_tables
from analysis.engine import path as paths
from analysis.engine.path import METHODS, DataShape, KernelPath, chain, choose_path
from analysis.engine.rule import Rule, fire_law, make_rule, uniform_replacement_law
from analysis.engine.split import check_null_mixing, split_law
from analysis.engine.lookup import NO_PAIRS, Chances, CellDraw, PairTables
from analysis.errors import ParameterError
from analysis.engine.metrics import (METRICS, SUMS, CellSums, cell_deltas, check_metrics, check_smoothing,
                              divergence_tables)
from analysis.engine.samplers import check_size, make_layout
from analysis.engine.draws import CompositionTables, composition_tables

LAW_CACHE_ENTRIES = 6_000_000  # slot-law entries kept between cells (48 bytes each)
_LAWS: dict = {}  # the S2 slot-law tables, shared by every simulator of the same data in this process (seeds, metrics)
# B's perturbation tables and the shared-noise tables depend on the data only through the rule's numbers, so every
# simulator of the same rule in this process shares them: a chapter that runs many small grids (one Simulator
# each) builds them once, not once a grid.
_PERTURBATIONS: dict = {}
_NOISE: dict = {}
PERTURB_CACHE_ENTRIES = 8_000_000  # perturbation-table entries kept (16 bytes each)
NOISE_CACHE_ENTRIES = 8_000_000  # shared-noise table entries kept (16 bytes each)


def _rule_key(rule: Rule) -> tuple:
    """What of a rule its perturbation and noise tables depend on: its name, whether its noise is shared, its prior."""
    return rule.name, rule.shared, rule.urn().tobytes()


def _keep(store: dict, key, limit: int, build):
    """``store[key]``, built by ``build()`` when missing, the oldest entries dropped while the tables in ``store``
    would hold more than ``limit`` entries."""
    if key not in store:
        tables = build()
        while store and sum(t.prob.size for t in store.values()) + tables.prob.size > limit:
            del store[next(iter(store))]
        store[key] = tables
    return store[key]

EMPTY_TABLES = CompositionTables(row=np.zeros(1, dtype=np.int64), prob=np.zeros((1, 1)),
                                 alias=np.zeros((1, 1), dtype=np.int64), comp=np.zeros((1, 1), dtype=np.int64),
                                 start=np.zeros(2, dtype=np.int64))
NO_PERTURB = PerturbationTables(*(np.zeros(1, dtype=np.int64),) * 2, np.zeros(1), np.zeros(1), np.zeros(1, dtype=np.int64),
                                *(np.zeros((1, 1), dtype=np.int64),) * 3, *(np.zeros(1, dtype=np.int64),) * 4)


class Replicates(NamedTuple):
    """``n`` replicates of a cell: the deltas of the metrics asked for (n x metrics, in that order), the confusion
    matrices of A's and B's votes against G's (n x 2 x labels x labels), which settle the ties of sums of quotients
    (:mod:`analysis.engine.exact`), and what the kernel stored (:class:`analysis.engine.metrics.CellSums`)."""

    deltas: np.ndarray
    confusion: np.ndarray
    cell: CellSums


class Simulator:
    """Everything one (dataset, sampler) pair needs to simulate replicates; built once, used for every cell.

    ``method`` forces a kernel (:data:`analysis.engine.path.METHODS`); ``"auto"``, the default, lets
    :func:`analysis.engine.path.choose_path` take the fastest measured for each cell. ``smoothing`` is the constant added to
    every count before KL and JSD (one of :data:`analysis.engine.metrics.SMOOTHINGS`); ``null_mixing`` how the null
    mixes A's and B's columns (:data:`analysis.engine.split.NULL_MIXINGS`); ``metrics`` the names of the
    registry (:data:`analysis.engine.metrics.REGISTRY`) its replicates are scored on by default.
    """

    def __init__(self, ds: AnnotationDataset, sampler: str, smoothing: float, null_mixing: str, method: str = "auto",
                 metrics=METRICS):
        if method not in METHODS:
            raise ParameterError(f"unknown method {method!r}; choose one of {METHODS}")
        self.layout = make_layout(ds, sampler)
        self.sampler = self.layout.sampler
        self.method = method
        self.smoothing = check_smoothing(smoothing)
        self.null_mixing = check_null_mixing(null_mixing)
        self.metrics = check_metrics(metrics)
        self.distinct_shares = distinct_shares(self.layout.item_share)  # and their weights, for the S2 slot law
        self.design = DataShape(self.sampler, self.layout.n_labels, len(self.distinct_shares[0]),
                                self.layout.single_group, self.layout.group_size)
        self.item_laws = Shares(self.layout.item_share, self.layout.item_cum,
                                *uniform_replacement_law(self.layout.item_share))
        self.n_pool = ds.n_raters
        counts = ds.item_label_counts.sum(0)
        self.label_shares = counts / counts.sum()
        self._store: dict[str, dict] = {}
        self._complete: np.ndarray | None = None
        self._digest: str | None = None

    def settings(self, changed: bool = False) -> dict:
        """Every choice this simulator was built with but the data and the sampler: each parameter of the
        constructor, by name, with its value (JSON-ready); ``changed``: only those that differ from the default (one without a default always).
        The cell cache keys cells by them."""
        parameters = [p for p in inspect.signature(type(self).__init__).parameters.values()
                      if p.name not in ("self", "ds", "sampler")]
        return {p.name: list(value) if isinstance(value, tuple) else value
                for p, value in ((p, getattr(self, p.name)) for p in parameters)
                if not changed or value != p.default}

    def path(self, n: int, k: int, epsilon: float, null: bool, perturbation: str) -> KernelPath:
        """The plan of a cell (:func:`analysis.engine.path.choose_path`)."""
        return choose_path(self.design, n, k, epsilon, null, self.rule(perturbation).shared, self.method)

    def _once(self, kind: str, key, build):
        """``build()``, made once per ``(kind, key)`` and kept for the simulator's life."""
        store = self._store.setdefault(kind, {})
        if key not in store:
            store[key] = build()
        return store[key]

    def _data_key(self) -> str:
        """A digest of what the S2 slot law reads of the data: the items' label shares and the dataset's."""
        if self._digest is None:
            self._digest = hashlib.sha256(self.layout.item_share.tobytes() + self.label_shares.tobytes()).hexdigest()
        return self._digest

    def pair_tables(self, k: int) -> PairTables:
        """The direct kernel's numbering of count vectors of ``k`` responses (:class:`PairTables`)."""
        return self._once("pairs", k, lambda: PairTables.build(k, self.design.n_labels, self.smoothing))

    def chances(self, k: int, epsilon: float) -> Chances:
        """The null split's law and the replaced-response counts' alias tables of a cell (:class:`Chances`)."""
        return self._once("chances", (k, epsilon), lambda: Chances(split_law(k, self.null_mixing),
                                                                   *fire_law(k, epsilon)))

    def rule(self, perturbation: str) -> Rule:
        """The perturbation rule named ``perturbation`` with its law's numbers for this dataset."""
        return self._once("rules", perturbation, lambda: make_rule(perturbation, self.label_shares))

    def noise_tables(self, k: int, perturbation: str) -> NoiseTables:
        """The shared noise of replaced responses (:class:`NoiseTables`); ``k = 0`` gives the placeholder."""
        rule = self.rule(perturbation)
        return _keep(_NOISE, (_rule_key(rule), k, paths.NOISE_ENTRIES), NOISE_CACHE_ENTRIES,
                     lambda: NoiseTables.build(k, rule))  # keyed by the bound its size reads, too

    def noise_codes(self, k: int, perturbation: str) -> NoiseCodes:
        """The noise tables in the direct kernel's form (:meth:`NoiseTables.by_code`); ``k = 0``: the placeholder."""
        return self._once("noise codes", (k, perturbation), lambda: self.noise_tables(k, perturbation).by_code(
            self.pair_tables(max(k, 1)).code))

    def composition_tables(self, k: int) -> CompositionTables:
        """The alias tables of every item's multinomials up to ``k`` responses."""
        return self._once("compositions", k, lambda: composition_tables(self.layout.item_share, k))

    def law_tables(self, k: int, epsilon: float, perturbation: str, null: bool) -> LawTables:
        """The drawing tables of the S2 slot law (:func:`analysis.engine.kernels.law.slot_law`)."""
        rule = self.rule(perturbation)
        return _keep(_LAWS, (self._data_key(), k, float(epsilon), perturbation, bool(null), self.null_mixing),
                     LAW_CACHE_ENTRIES,
                     lambda: LawTables.build(slot_law(*self.distinct_shares, k, epsilon, rule, null,
                                                      self.null_mixing)))

    def perturbation_tables(self, k: int, epsilon: float, perturbation: str, null: bool) -> PerturbationTables:
        """The alias tables of B's perturbation on count vectors (:mod:`analysis.engine.perturbation`)."""
        rule = self.rule(perturbation)
        return _keep(_PERTURBATIONS, (_rule_key(rule), k, float(epsilon), bool(null)), PERTURB_CACHE_ENTRIES,
                     lambda: PerturbationTables.build(k, epsilon, rule, null))

    def labels_by_rater(self) -> np.ndarray:
        """The label matrix of each group rater by rater, for the by-item kernel (:func:`by_rater`)."""
        return self._once("by_rater", 0, lambda: by_rater(self.layout.groups, self.design.n_labels))

    def complete_items(self) -> np.ndarray:
        """Per item of the layout's groups, whether every rater of its group labelled it (the rater loop reads
        such an item rater by rater)."""
        if self._complete is None:
            layout = self.layout
            group = np.repeat(np.arange(len(layout.item_start) - 1), np.diff(layout.item_start))
            local = np.arange(len(layout.items)) - layout.item_start[group]
            row = layout.matrix_start[group] + local * np.diff(layout.rater_start)[group]
            self._complete = np.logical_and.reduceat(layout.matrix >= 0, row)
        return self._complete

    def replicates(self, n: int, k: int, epsilon: float, n_samples: int, rng: np.random.Generator,
                   null: bool, perturbation: str, metrics=None) -> np.ndarray:
        """Deltas of ``n_samples`` replicates, shape (n_samples, metrics) in the order of ``metrics``."""
        return self.draw(n, k, epsilon, n_samples, rng, null, perturbation, metrics).deltas

    def draw(self, n: int, k: int, epsilon: float, n_samples: int, rng: np.random.Generator,
             null: bool, perturbation: str, metrics=None) -> Replicates:
        """``n_samples`` replicates of a cell of ``n`` items with ``k`` responses each, by the cell's plan, and
        the deltas of ``metrics`` (names of :data:`analysis.engine.metrics.REGISTRY`; by default the simulator's)."""
        check_size(n, k)
        rule = self.rule(perturbation)
        if not 0.0 <= epsilon <= 1.0:
            raise ParameterError(f"epsilon must lie in [0, 1], got {epsilon}")
        if n_samples < 1:
            raise ParameterError(f"n_samples must be >= 1, got {n_samples}")
        cell = self.path(n, k, epsilon, bool(null), perturbation)
        n_labels = self.design.n_labels
        out = np.empty((n_samples, SUMS), dtype=np.int64)
        confusion = np.empty((n_samples, 2, n_labels, n_labels), dtype=np.int64)
        epsilon, null = float(epsilon), bool(null)
        draw = CellDraw(n, k, epsilon, rule.shared, null, rule.urn(), rule.steps())
        chances = self.chances(k, epsilon)
        divergence = divergence_tables(k, n_labels, self.smoothing)
        if cell.kernel == "pigeonhole":
            layout = self.layout
            turned = self._once("turned", 0, lambda: turned_round(layout.rater_start, layout.matrix, layout.raters,
                                                                  self.n_pool))
            tables = (self.perturbation_tables(k, epsilon, perturbation, null) if cell.perturbation_tables
                      else NO_PERTURB)
            masked = cell.masks  # the slots thinned by masks, their count vectors coded as the direct kernel's
            pigeonhole_replicates(rng, layout.groups, layout.raters, turned, self.n_pool,
                                  (paths.WALK_COST, paths.TAIL_COST), draw,
                                  self.null_mixing == "pairs", chances, divergence,
                                  self.pair_tables(k) if cell.pair_tables or masked else NO_PAIRS,
                                  cell.pigeonhole_options(), tables,
                                  self.noise_tables(k if cell.noise_tables and not masked else 0, perturbation),
                                  mask_tables(epsilon), self.noise_codes(k if masked else 0, perturbation), out,
                                  confusion)
        elif cell.kernel == "law":
            tables = self.law_tables(k, epsilon, perturbation, null)
            law_replicates(rng, tables, n, k, chain(n, tables.order.size), self.pair_tables(k), out, confusion)
        elif cell.kernel == "counts":
            compositions = self.composition_tables(k) if cell.alias_tables else EMPTY_TABLES
            count_replicates(rng, self.item_laws, cell.alias_tables, compositions, draw, chances, divergence, out,
                             confusion)
        elif cell.kernel == "by_item":
            tables = (self.perturbation_tables(k, epsilon, perturbation, null) if cell.perturbation_tables
                      else NO_PERTURB)
            noise = self.noise_tables(k if cell.noise_tables else 0, perturbation)
            pairs = self.pair_tables(k) if cell.pair_tables else NO_PAIRS
            labels = self.labels_by_rater() if cell.rater_major else np.zeros(1, dtype=np.int8)
            by_item_replicates(rng, self.layout.groups, labels, draw, chances, divergence, pairs, cell.item_options(), tables,
                               noise, out, confusion)
        else:
            pairs = self.pair_tables(k)
            tables = (self.perturbation_tables(k, epsilon, perturbation, null) if cell.perturbation_tables
                      else NO_PERTURB)
            noise = self.noise_codes(k if cell.noise_tables else 0, perturbation)
            complete = self.complete_items() if cell.rater_loop else np.zeros(1, dtype=np.bool_)
            direct_replicates(rng, self.layout.groups, draw, chances, divergence, pairs, tables.by_code(),
                              mask_tables(epsilon), noise, cell.direct_options(), complete, out, confusion)
        cell_sums = CellSums(out, confusion, self.design.slots(n), k)
        return Replicates(cell_deltas(cell_sums, self.metrics if metrics is None else metrics), confusion, cell_sums)
