"""The population a pilot's ratings come from, as the stand-ins' model (:mod:`analysis.data.synthetic`, version 2):
fitted to a pilot, then drawn from with any number of items and of distinct raters.

The model: item ``i`` has a label law ``p_i ~ Dirichlet(a0 * shares)``; rater ``r`` of item ``i`` gives the label
whose interval of ``p_i``'s cumulative law holds ``Phi(sqrt(rho) z_r + sqrt(1 - rho) e_ir)``, with a persistent
``z_r`` per rater and a fresh ``e_ir`` per rating, both standard normal. ``rho`` is the share of the latent's variance
that a rater carries from item to item (the stand-ins' ``rater_sd**2 / (rater_sd**2 + noise_sd**2)``), and
``sqrt(rho)`` the rater spread. Labels may be nominal: the model orders them by their codes, as the stand-ins do.

What :func:`fit` estimates, and how:

* ``shares``: the pilot's label shares over all its ratings (the model keeps them: ``Phi`` of the latent is uniform).
* ``a0``: the moment estimator of :func:`analysis.data.dispersion.moment_concentration`, which corrects for the
  finite ratings per item; then corrected by simulation for the persistent rater biases, which make the few raters
  of a pilot look more alike across items than fresh raters would (the ratio of the estimator's median on
  simulated pilots to the ``a0`` they were drawn with, at the fitted ``rho``).
* ``rho``: simulated moments. The statistic (:func:`rater_consistency`) is how consistently a rater sits above or
  below the other raters of the items it rated: a rating's position among its item's other ratings (the share below
  it, ties counted half, less one half), averaged per rater; the raters' sum of squares of those means over the total
  sum of squares. Pilots are simulated with the pilot's own design (its items, raters and who rated what) on a grid
  of ``rho``, with common random numbers across the grid; ``rho`` is where the statistic's median meets the pilot's.
* the interval of ``rho``: a bootstrap of the pilot's items and raters (both drawn with replacement; a rater drawn
  twice counts as two raters), each replicate's statistic read as a ``rho`` through the same simulated pilots; the
  percentile interval of those. ``benchmarks/plan_model_checks.py`` measures its coverage over known populations,
  beside the interval that inverts the simulated pilots' central range of the statistic.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from analysis.data import dispersion
from analysis.data.annotations import AnnotationDataset
from analysis.data.synthetic import StandIn, draw, latent_draws, latent_labels
from analysis.errors import DataError, ParameterError

SPREADS = np.linspace(0.0, 0.95, 20)  # the grid of rater spreads sqrt(rho) the pilot is simulated at
LEVEL = 0.9  # the interval's coverage
PILOTS = 200  # pilots simulated at each rho of the grid
BOOT = 200  # bootstrap replicates of the pilot's items and raters for the interval of rho
A0_BOUNDS = (1e-3, float(np.exp(dispersion.LOG_BOUNDS[1])))  # items all clear-cut; no spread beyond multinomial noise


@dataclass(frozen=True)
class Population:
    """A fitted population: label shares, the laws' concentration ``a0``, the rater share ``rho`` and its interval,
    and ``interval_a0``, the ``a0`` the fit gives at the interval's ends (none for a population given by hand)."""

    labels: tuple
    shares: tuple
    a0: float
    rho: float
    rho_interval: tuple[float, float]
    level: float = LEVEL
    interval_a0: tuple = ()

    @property
    def spread(self) -> float:
        """The rater spread, ``sqrt(rho)``: the s.d. of a rater's persistent bias in units of the latent's s.d."""
        return float(np.sqrt(self.rho))

    def spec(self, n_items: int, n_raters: int, raters_per_batch: int = 0, batch_size: int = 0,
             rho: float | None = None, per_item: int = 0) -> StandIn:
        """The stand-in parameters of this population for a design: fully crossed unless ``batch_size`` is given,
        then batches of ``batch_size`` items with ``raters_per_batch`` raters each, from a pool of ``n_raters``; or,
        given ``per_item``, sparse: each item rated by at least ``per_item`` of the pool's ``n_raters`` (every rater
        rating as many items, the last few items a rating or two more)."""
        rho = self.rho if rho is None else rho
        design = "sparse" if per_item else "batched" if batch_size else "crossed"
        sparse = dict(items_per_rater=-(-int(n_items) * int(per_item) // int(n_raters)),
                      min_raters_per_item=int(per_item)) if per_item else {}
        return StandIn(imitates="a fitted population", design=design,
                       labels=self.labels, label_shares=self.shares, rater_sd=float(np.sqrt(rho)),
                       noise_sd=float(np.sqrt(1 - rho)), n_items=int(n_items), n_raters=int(n_raters),
                       raters_per_batch=int(raters_per_batch), batch_size=int(batch_size),
                       dirichlet=tuple(self.a0 * np.asarray(self.shares)), **sparse)

    def draw(self, n_items: int, raters: int, seed: int, batch_size: int = 0, pool: int = 0,
             name: str = "population", per_item: int = 0) -> AnnotationDataset:
        """A dataset drawn from the population: ``n_items`` items rated by ``raters`` distinct raters, fully
        crossed; or, given ``batch_size``, batches of that many items each rated by ``raters`` raters of a pool of
        up to ``pool`` (``n_items`` a multiple of ``batch_size``; the stand-ins' pairing of raters with batches
        can leave a few of the pool out); or, given ``per_item``, sparse: each item rated by about ``per_item`` of
        a pool of ``raters``."""
        check_raters(raters)
        if per_item:
            if not 1 <= per_item <= raters:
                raise ParameterError(f"a sparse population needs 1 to {raters} raters per item, got {per_item}")
            spec = self.spec(n_items, raters, per_item=per_item)
            return draw(spec, np.random.default_rng(seed), name,
                        f"drawn from {self.describe()} (seed {seed}): {n_items} items, each rated by about "
                        f"{per_item} of {raters} raters")
        if batch_size and (n_items % batch_size or not raters <= pool <= n_items // batch_size * raters):
            raise ParameterError(f"a batched population needs items in whole batches of {batch_size} and a pool of "
                                 f"{raters} to {n_items // batch_size * raters} raters; got {n_items} items and "
                                 f"a pool of {pool}")
        spec = self.spec(n_items, pool if batch_size else raters, raters, batch_size)
        design = f"batches of {batch_size} items x {raters} raters" if batch_size else f"{raters} raters, crossed"
        return draw(spec, np.random.default_rng(seed), name,
                    f"drawn from {self.describe()} (seed {seed}): {n_items} items, {design}")

    def interval_ends(self) -> tuple["Population", "Population"]:
        """The populations at the low and the high end of ``rho``'s interval, each with the fit's ``a0`` there
        (this ``a0`` where the fit gave none)."""
        a0s = self.interval_a0 or (self.a0, self.a0)
        return tuple(replace(self, rho=float(rho), a0=float(a0)) for rho, a0 in zip(self.rho_interval, a0s))

    def describe(self) -> str:
        """The fitted parameters in one line."""
        low, high = self.rho_interval
        return (f"a population model with label shares {' / '.join(f'{s:.2f}' for s in self.shares)}, item "
                f"concentration a0 {self.a0:.3g} and rater share rho {self.rho:.3g} ({100 * self.level:.0f} % interval "
                f"{low:.3g} to {high:.3g})")


def check_raters(raters: int) -> None:
    """A population's study needs two distinct raters or more: one rater's bias is seen only beside another's."""
    if int(raters) != raters or raters < 2:
        raise ParameterError(f"the number of distinct raters R must be an integer >= 2, got {raters!r}")


def rater_consistency(item: np.ndarray, rater: np.ndarray, label: np.ndarray, n_items: int, n_raters: int,
                      n_labels: int) -> float:
    """How consistently raters sit above or below their items' other raters (the module docstring): the raters'
    sum of squares of their mean positions over the total sum of squares of the positions; about ``raters /
    ratings`` without rater biases, larger with them. Items with one rating are left out."""
    counts = np.bincount(item * n_labels + label, minlength=n_items * n_labels).reshape(n_items, n_labels)
    per_item = counts.sum(1)
    below = np.cumsum(counts, 1) - counts
    used = per_item[item] >= 2
    item, rater, label = item[used], rater[used], label[used]
    position = (below[item, label] + 0.5 * (counts[item, label] - 1)) / (per_item[item] - 1) - 0.5
    total = np.square(position).sum()
    if total == 0:
        return 0.0
    n = np.bincount(rater, minlength=n_raters)
    sums = np.bincount(rater, weights=position, minlength=n_raters)
    return float((np.square(sums[n > 0]) / n[n > 0]).sum() / total)


def _usable(ds: AnnotationDataset) -> None:
    """Refuse a pilot the rater share cannot be measured on."""
    per_item = ds.raters_per_item
    shared = np.unique(ds.rater[per_item[ds.item] >= 2])
    if (per_item >= 2).sum() < 2 or len(shared) < 2:
        raise DataError(f"{ds.name}: a population model needs two items or more with two raters or more, and two "
                        f"raters or more on such items; found {(per_item >= 2).sum()} such items and {len(shared)} "
                        "such raters")


def _concentration(counts: np.ndarray) -> float:
    """The moment estimator of ``a0`` (:func:`analysis.data.dispersion.moment_concentration`), kept in
    :data:`A0_BOUNDS`: sampling noise can take it below 0 or to infinity."""
    return float(np.clip(dispersion.moment_concentration(counts), *A0_BOUNDS))


@dataclass(frozen=True)
class PilotGrid:
    """Pilots simulated with a pilot's own design at each ``rho`` of the grid (:func:`simulate_pilots`), from the pilot's
    label shares and plain moment estimate of ``a0``: the statistic of :func:`rater_consistency` and the moment
    estimate of ``a0`` on each, one row per ``rho``."""

    shares: tuple
    a0: float  # the pilot's plain moment estimate, the simulated pilots' a0
    rhos: np.ndarray
    statistic: np.ndarray  # (rhos, pilots)
    a0s: np.ndarray  # (rhos, pilots)

    def rho_at(self, value, quantile: float = 0.5):
        """The ``rho`` whose ``quantile`` of the statistic is ``value`` (the grid's ends beyond it)."""
        curve = np.maximum.accumulate(np.quantile(self.statistic, quantile, axis=1))
        return np.interp(value, curve, self.rhos)

    def a0_left(self, rho: float) -> float:
        """The median moment estimate of ``a0`` on pilots drawn at ``rho``, between the grid's values (in logs)."""
        return float(np.exp(np.interp(rho, self.rhos, np.log(np.median(self.a0s, axis=1)))))


def simulate_pilots(ds: AnnotationDataset, pilots: int = PILOTS, seed: int = 0, progress=None) -> PilotGrid:
    """Simulate ``pilots`` pilots with ``ds``'s design (its items, raters and who rated what) from its label shares
    and moment estimate of ``a0`` at each rater share of the grid (:data:`SPREADS` squared), with common random
    numbers across the grid. ``progress`` (a tqdm bar) is advanced by one per simulated pilot."""
    if int(pilots) != pilots or pilots < 10:
        raise ParameterError(f"pilots must be an integer >= 10, got {pilots!r}")
    _usable(ds)
    counts = ds.item_label_counts
    model = Population(ds.label_names, tuple(counts.sum(0) / counts.sum()), _concentration(counts), 0.0, (0.0, 0.0))
    rhos = np.square(SPREADS)
    statistic, a0s = np.empty((len(rhos), pilots)), np.empty((len(rhos), pilots))
    spec = model.spec(ds.n_items, ds.n_raters)
    for j, stream in enumerate(np.random.SeedSequence(seed).spawn(pilots)):
        cumulative, z_rater, z_rating = latent_draws(spec, len(ds.item), np.random.default_rng(stream))
        cumulative = cumulative[ds.item]
        for g, rho in enumerate(rhos):  # every rho of the grid reads the same draws
            label = latent_labels(cumulative, ds.rater, z_rater, z_rating, np.sqrt(rho), np.sqrt(1 - rho))
            statistic[g, j] = rater_consistency(ds.item, ds.rater, label, ds.n_items, ds.n_raters, ds.n_labels)
            a0s[g, j] = _concentration(np.bincount(ds.item * ds.n_labels + label, minlength=counts.size)
                                       .reshape(counts.shape))
        if progress is not None:
            progress.update()
    return PilotGrid(model.shares, model.a0, rhos, statistic, a0s)


def _counting(lengths: np.ndarray) -> np.ndarray:
    """0, 1, ..., n - 1 for each ``n`` of ``lengths``, one after the other."""
    return np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)


def resampled_consistency(ds: AnnotationDataset, rng: np.random.Generator) -> float:
    """:func:`rater_consistency` of one bootstrap replicate of the pilot: its items and its raters each drawn with
    replacement, an item or a rater drawn twice counting as two, each keeping the ratings it has."""
    by_item = np.argsort(ds.item, kind="stable")
    starts = np.concatenate([[0], np.cumsum(ds.raters_per_item)])
    drawn = rng.integers(0, ds.n_items, ds.n_items)
    lengths = ds.raters_per_item[drawn]
    rows = by_item[np.repeat(starts[drawn], lengths) + _counting(lengths)]
    item = np.repeat(np.arange(ds.n_items), lengths)
    counts = np.bincount(rng.integers(0, ds.n_raters, ds.n_raters), minlength=ds.n_raters)
    copies = counts[ds.rater[rows]]
    rows, item, copy = np.repeat(rows, copies), np.repeat(item, copies), _counting(copies)
    rater = (np.cumsum(counts) - counts)[ds.rater[rows]] + copy
    return rater_consistency(item, rater, ds.label[rows], ds.n_items, ds.n_raters, ds.n_labels)


def fit(ds: AnnotationDataset, seed: int = 0, level: float = LEVEL, pilots: int = PILOTS, boot: int = BOOT,
        progress=None) -> Population:
    """Fit the population model to a pilot (module docstring): ``pilots`` simulated pilots at each rater spread of
    :data:`SPREADS` (:func:`simulate_pilots`) and ``boot`` bootstrap replicates of the pilot, from ``seed``; the interval
    of ``rho`` covers with probability ``level``. ``progress`` (a tqdm bar) is advanced by one per simulated pilot."""
    if not 0 < level < 1:
        raise ParameterError(f"the interval's level must lie in (0, 1), got {level:g}")
    if int(boot) != boot or boot < 10:
        raise ParameterError(f"boot must be an integer >= 10, got {boot!r}")
    return estimate(ds, simulate_pilots(ds, pilots, seed, progress), seed, level, boot)


def estimate(ds: AnnotationDataset, found: PilotGrid, seed: int = 0, level: float = LEVEL,
             boot: int = BOOT) -> Population:
    """The population :func:`fit` reads from the pilot through its calibration ``found``."""
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(found.statistic.shape[1],)))  # not a pilot's
    replicates = found.rho_at(np.array([resampled_consistency(ds, rng) for _ in range(boot)]))
    rho = float(found.rho_at(rater_consistency(ds.item, ds.rater, ds.label, ds.n_items, ds.n_raters, ds.n_labels)))
    interval = tuple(float(v) for v in np.quantile(replicates, [(1 - level) / 2, (1 + level) / 2]))
    return Population(ds.label_names, found.shares, _a0(found, rho), rho, interval, level,
                      tuple(_a0(found, end) for end in interval))


def _a0(found: PilotGrid, rho: float) -> float:
    """The pilot's ``a0`` at rater share ``rho``: its moment estimate, with what the rater biases hide undone."""
    return float(np.clip(found.a0 * found.a0 / found.a0_left(rho), *A0_BOUNDS))
