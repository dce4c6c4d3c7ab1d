"""The power of ``compare``'s own test on a design (``plan --test compare``): studies of N items and K ratings
drawn from the pilot, two fixed systems answering each, and the share of studies in which ``compare``'s headline
test (:func:`analysis.tools.compare.headline_p`, its sampler, alpha and sidedness) rejects.

A study is drawn from the pilot as the design's sampler draws a replicate, and has the design the planned study will
have:

- **S1** (fully crossed): K of the pool's raters drawn with replacement, each a rater of the study, all rating N
  items drawn with replacement;
- **S3** (batched): as many batches as S3 draws for N items (N over the median batch's items, rounded up), drawn
  with replacement, each with its share of the N items and K of its own raters drawn with replacement;
- **S2 and S4** (any design): the pool's raters drawn with replacement (a rater drawn twice is two raters of the
  study: the pigeonhole bootstrap), N items drawn with replacement among those a drawn rater rated, each keeping up
  to K of its drawn raters' ratings, drawn without replacement (all of them where it has fewer).

Every drawn item is an item of the study. Study ``s`` of every design shares its draws (the same raters and systems,
the first N items of one sequence), so a larger N adds items to the same study (under S3 it deals them out again
among its batches): powers across N are read on common random numbers, and a grid with other designs leaves a
design's studies as they were. A rating a batch's drawn rater did not give (a ragged batch) is drawn from the item's
own labels. Each study is tested at the K ``compare`` would choose for it, its median ratings per item.

System A answers a study item with the label shares of all the pilot's ratings of its pilot item; system B with
those shares mixed at weight ``epsilon`` with a point mass on one label drawn uniformly per pilot item and study
(the one-label law, as fixed systems: B is wrong in its own way in each study), or per pilot item as ``noise``
gives it (one system B in every study). With a target Delta, ``epsilon`` is
set at every design by bisection, so that the mean observed Delta over its studies is the target. The power's band is
Wilson's: each study's p comes from its own test, so the share of rejections is a plain binomial share.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from analysis.data.annotations import AnnotationDataset
from analysis.engine.metrics import METRIC_LABELS
from analysis.engine.samplers import PER_ITEM, default_sampler, make_layout
from analysis.errors import ParameterError
from analysis.tools.bands import wilson
from analysis.tools.compare import N_SAMPLES, default_k, headline_p, observed

DELTA_STEPS = 10  # bisection steps of epsilon for a target Delta: to 1/1024
LAW = "one-label"  # the noise law B's answers follow (module docstring): the only one planned under this test


@dataclass(frozen=True)
class Draws:
    """One study's random draws, shared by every design and each from a stream of its own, so that a grid with
    more items or ratings per item leaves the others as they were: the raters (S1: the pool's columns in their
    order; S2 and S4: each pool rater's multiplicity; S3: each batch slot's batch), the order in which items are
    drawn, a sort key per copy of a rating (S2 and S4), B's noise label per pilot item, and per rating place
    (rows) and study item (columns) a uniform (S3: which of its batch's raters, and a missing rating's label)."""

    raters: np.ndarray
    items: np.ndarray
    keys: np.ndarray
    noise: np.ndarray
    places: np.ndarray
    fill: np.ndarray


@dataclass
class StudyPower:
    """Simulated studies of one pilot under ``sampler`` and ``compare``'s test on each; powers kept per (N, K,
    epsilon)."""

    ds: AnnotationDataset
    sampler: str
    metrics: tuple
    studies: int = 200
    seed: int = 0
    alpha: float = 0.05
    two_sided: bool = False
    replicates: int = N_SAMPLES  # of each study's test (compare's default)
    max_n: int = 0  # the most items a design of this plan has (a study's item sequence is this long)
    max_k: int = 0
    progress: object = field(default=None, repr=False)  # advanced by one per study tested
    noise: np.ndarray | None = field(default=None, repr=False)  # B's label per pilot item in every study: one system
    jobs: int = 1  # worker processes that test a design's studies (the same numbers for any number)
    perturbation: str = field(default=LAW, init=False)
    _done: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        self.layout = make_layout(self.ds, self.sampler)
        self.shares = self.ds.item_label_counts / self.ds.raters_per_item[:, None]

    def __getstate__(self) -> dict:  # what a worker needs: no progress bar, no results
        return {**self.__dict__, "progress": None, "_done": {}}

    def draw(self, s: int) -> Draws:
        """Study ``s``'s draws, from its own seed (drawn again where needed rather than kept: they hold a number per
        rating of the pilot)."""
        streams = np.random.SeedSequence([self.seed, s]).spawn(4 + self.max_k)  # a child's stream keeps its index
        raters, items, keys, noise = (np.random.default_rng(seq) for seq in streams[:4])
        ds, layout = self.ds, self.layout
        places = fill = np.empty((0, 0))
        if self.sampler in PER_ITEM:
            drawn = np.bincount(raters.integers(ds.n_raters, size=ds.n_raters), minlength=ds.n_raters)
            keys = keys.random(int(drawn[ds.rater].sum()))
        elif self.sampler == "S1":
            drawn, keys = raters.integers(ds.n_raters, size=self.max_k), np.empty(0)
        else:  # S3: a row of uniforms per rating place, its own stream, so that neither N nor K moves another's
            drawn, keys = raters.integers(len(layout.item_start) - 1, size=-(-self.max_n // layout.group_size)), \
                np.empty(0)
            rows = [np.random.default_rng(seq).random(2 * self.max_n) for seq in streams[4:]]
            places, fill = np.array([row[0::2] for row in rows]), np.array([row[1::2] for row in rows])
        return Draws(drawn, items.integers(np.iinfo(np.int64).max, size=self.max_n), keys,
                     noise.integers(ds.n_labels, size=ds.n_items), places, fill)

    def study(self, s: int, n: int, k: int, draw: Draws | None = None) -> tuple[AnnotationDataset, np.ndarray]:
        """Study ``s`` of N items and K ratings each, and the pilot item of each of its items."""
        if n > self.max_n or k > self.max_k:
            raise ParameterError(f"a study of {n} x {k} is beyond the {self.max_n} x {self.max_k} these draws hold")
        draw = self.draw(s) if draw is None else draw
        if self.sampler in PER_ITEM:
            return self._per_item(draw, n, k)
        if self.sampler == "S1":
            return self._crossed(draw, n, k)
        return self._batched(draw, n, k)

    def _crossed(self, draw: Draws, n: int, k: int):
        layout = self.layout  # S1's one group: every item and rater, in code order
        pilot = draw.items[:n] % self.ds.n_items
        labels = layout.matrix[pilot[:, None] * self.ds.n_raters + draw.raters[:k][None, :]]
        return _dataset(self.ds, np.repeat(np.arange(n), k), np.tile(np.arange(k), n), labels.ravel(), n), pilot

    def _batched(self, draw: Draws, n: int, k: int):
        layout = self.layout
        slots = -(-n // layout.group_size)  # as many batches as S3 draws for N items, sharing them out evenly
        sizes = n // slots + (np.arange(slots) < n % slots)
        first = np.concatenate([[0], np.cumsum(sizes)])
        group = draw.raters[:slots]
        start, count = layout.item_start[group], np.diff(layout.item_start)[group]
        r = np.diff(layout.rater_start)[group]
        slot = np.repeat(np.arange(slots), sizes)  # each study item's batch slot
        pilot_local = draw.items[:n] % count[slot]
        columns = np.minimum((draw.places[:k, :slots].T * r[:, None]).astype(np.int64), r[:, None] - 1)
        cells = (layout.matrix_start[group][slot, None] + (pilot_local * r[slot])[:, None] + columns[slot])
        labels = layout.matrix[cells].astype(np.int64)
        pilot = layout.items[start[slot] + pilot_local]
        missing = labels < 0
        if missing.any():  # a ragged batch: the item's own labels, from the uniform of its place and position
            cum = layout.item_cum[np.broadcast_to(pilot[:, None], labels.shape)[missing]]
            labels[missing] = (draw.fill[:k, :n].T[missing][:, None] >= cum[:, :-1]).sum(1)
        return _dataset(self.ds, np.repeat(np.arange(n), k), (slot[:, None] * k + np.arange(k)).ravel(),
                        labels.ravel(), n, slot), pilot

    def _per_item(self, draw: Draws, n: int, k: int):
        ds = self.ds
        copies = draw.raters[ds.rater]  # each rating, as often as its rater was drawn
        rated = np.flatnonzero(np.bincount(ds.item, weights=copies, minlength=ds.n_items) > 0)
        if len(rated) == 0:
            raise ParameterError(f"no item of {ds.name} was rated by a drawn rater")
        pilot = rated[draw.items[:n] % len(rated)]
        rows = np.repeat(np.arange(ds.n_ratings), copies)  # a rating once per copy of its rater
        copy = np.arange(len(rows)) - np.repeat(np.cumsum(copies) - copies, copies)
        rater = (np.cumsum(draw.raters) - draw.raters)[ds.rater[rows]] + copy  # a copy is a rater of the study
        order = np.lexsort((draw.keys, ds.item[rows]))  # per item, its ratings' copies in a random order
        rows, rater = rows[order], rater[order]
        start = np.searchsorted(ds.item[rows], np.arange(ds.n_items + 1))
        sizes = np.minimum(start[pilot + 1] - start[pilot], k)
        picked = np.repeat(start[pilot], sizes) + (np.arange(sizes.sum()) - np.repeat(np.cumsum(sizes) - sizes, sizes))
        return _dataset(ds, np.repeat(np.arange(n), sizes), rater[picked], ds.label[rows[picked]], n), pilot

    def systems(self, s: int, pilot: np.ndarray, epsilon: float,
                draw: Draws | None = None) -> tuple[np.ndarray, np.ndarray]:
        """A's and B's label distributions on study ``s``'s items (module docstring)."""
        shares = self.shares[pilot]
        noise = self.noise if self.noise is not None else (self.draw(s) if draw is None else draw).noise
        noise = np.eye(self.ds.n_labels)[noise[pilot]]
        return shares, (1 - epsilon) * shares + epsilon * noise

    @property
    def n_samples(self) -> int:
        """The studies per design (what a plan's ``n_samples`` counts under this test)."""
        return self.studies

    @property
    def group_size(self) -> int:
        """The items of the pilot's median group (a batch under S3)."""
        return self.layout.group_size

    def band(self, n: int, k: int, epsilon: float, metrics=None) -> tuple[np.ndarray, np.ndarray]:
        """Wilson's 95 % band of every metric's power at (N, K, epsilon): each study is one binomial trial."""
        return wilson(np.rint(self.cell(n, k, epsilon)[0] * self.studies), self.studies)

    def cell(self, n: int, k: int, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
        """(share of studies whose test rejects, mean observed Delta) per metric, at N, K and ``epsilon``: in
        :attr:`jobs` worker processes, each testing a run of the studies; the studies' results are joined in their
        order, so any number of workers gives the same numbers."""
        key = (int(n), int(k), round(float(epsilon), 9))
        if key not in self._done:
            if self.jobs == 1 or self.studies < 2:
                parts = [self.tested(*key, range(self.studies), self.progress)]
            else:
                from analysis.experiment.workers import in_workers

                runs = np.array_split(np.arange(self.studies), min(self.jobs, self.studies))
                found = in_workers({i: partial(self.tested, *key, range(run[0], run[-1] + 1))
                                    for i, run in enumerate(runs)}, self.jobs)
                parts = [found[i] for i in range(len(runs))]
                if self.progress is not None:
                    self.progress.update(self.studies)
            rejected, deltas = (np.concatenate(side) for side in zip(*parts))
            self._done[key] = rejected.mean(0), deltas.mean(0)
        return self._done[key]

    def tested(self, n: int, k: int, epsilon: float, studies: range, progress=None) -> tuple[np.ndarray, np.ndarray]:
        """Per study of ``studies`` (rows) and metric: whether its test rejects, and its observed Delta."""
        rejected, deltas = [], []
        for s in studies:
            study, a, b = self.prepared(s, n, k, epsilon)
            seed, scale = int(np.random.SeedSequence([self.seed, s, n, k]).generate_state(1)[0]), default_k(study)
            rejected.append(headline_p(study, a, b, self.tested_sampler(study), scale, self.metrics, self.replicates,
                                       seed, self.two_sided) < self.alpha)
            seen = observed(study, a, b, scale, self.metrics)
            deltas.append([seen[m][2] for m in self.metrics])
            if progress is not None:
                progress.update()
        return np.array(rejected, dtype=bool).reshape(-1, len(self.metrics)), np.array(deltas, float).reshape(
            -1, len(self.metrics))

    def prepared(self, s: int, n: int, k: int, epsilon: float) -> tuple[AnnotationDataset, np.ndarray, np.ndarray]:
        """Study ``s`` of N x K, and A's and B's label distributions on its items at ``epsilon``, from one draw."""
        draw = self.draw(s)
        study, pilot = self.study(s, n, k, draw)
        return (study, *self.systems(s, pilot, epsilon, draw))

    def tested_sampler(self, study: AnnotationDataset) -> str:
        """The sampler ``compare`` runs on ``study`` by default: the one its design allows (a study of S3 drawn
        within one batch is fully crossed, so S1), or S2 where the plan is S2's (``--sampler S2`` both times)."""
        return self.sampler if self.sampler == "S2" else default_sampler(study)

    def seconds(self, designs) -> float:
        """About how long testing every study of ``designs`` ((N, K) pairs) takes: one study of the largest design
        timed, the others scaled by their items (a study's test costs about in proportion to them)."""
        n, k = max(designs)
        study, a, b = self.prepared(0, n, k, 0.5)
        start = time.perf_counter()
        headline_p(study, a, b, self.tested_sampler(study), default_k(study), self.metrics, self.replicates)
        return (time.perf_counter() - start) * self.studies * sum(size for size, _ in designs) / n

    def mean_delta(self, n: int, k: int, epsilon: float, metric: str) -> float:
        """The mean observed Delta of ``metric`` over the studies of N x K at ``epsilon`` (no test run)."""
        values = []
        for s in range(self.studies):
            study, a, b = self.prepared(s, n, k, epsilon)
            values.append(observed(study, a, b, default_k(study), (metric,))[metric][2])
        return float(np.mean(values))

    def epsilon_for(self, n: int, k: int, m: int, delta: float) -> float:
        """The smallest epsilon (to 1/1024) whose mean observed Delta of metric ``m`` (an index into
        :attr:`metrics`) at N x K reaches ``delta``."""
        metric = self.metrics[m]
        largest = self.mean_delta(n, k, 1.0, metric)
        if not 0 < delta <= largest:
            raise ParameterError(f"a target Delta of {delta:g} for {METRIC_LABELS[metric]} is out of reach: at "
                                 f"N = {n}, K = {k} the studies give Delta between 0 and {largest:.4g} (epsilon 1)")
        low, high = 0.0, 1.0
        for _ in range(DELTA_STEPS):
            middle = (low + high) / 2
            low, high = (middle, high) if self.mean_delta(n, k, middle, metric) < delta else (low, middle)
        return high


def _dataset(ds: AnnotationDataset, item, rater, label, n: int, batch=None) -> AnnotationDataset:
    """A study of ``n`` items as a dataset: items numbered as drawn, raters renumbered to those used, the pilot's
    labels."""
    used, rater = np.unique(rater, return_inverse=True)
    return AnnotationDataset(item=np.asarray(item, np.int64), rater=rater.astype(np.int64),
                             label=np.asarray(label, np.int64), item_ids=np.arange(n),
                             rater_ids=np.arange(len(used)), label_names=ds.label_names, name=f"study of {ds.name}",
                             item_batch=batch)
