"""The slow, obvious reference of METHOD sections 2-5, separate from the kernels: the tests hold every plan to it.

One replicate at a time, in plain numpy: the sampler draws the items and three independent sets of rater columns
(G, A, B) from the annotation table itself; B's responses are perturbed by the rule; under the null the ``2K``
columns of A and B are pooled per group and split in half without replacement; the counts of each drawn item go
to :func:`analysis.engine.metrics.deltas`. Nothing here is shared with the kernels, their tables or their shortcuts.
"""

from __future__ import annotations

import math

import numpy as np

from analysis.data.annotations import AnnotationDataset
from analysis.engine.metrics import METRICS, SMOOTHING, deltas

SAMPLERS = ("S1", "S2", "S3", "S4")


class DataShape:
    """The annotation table as a dense (items x raters) matrix of labels, -1 where a rater did not label an item,
    with the raters of each item and the items and raters of each batch."""

    def __init__(self, ds: AnnotationDataset):
        self.n_labels = ds.n_labels
        self.shares = ds.item_label_counts.sum(0) / ds.n_ratings  # the labels' overall shares
        self.labels = np.full((ds.n_items, ds.n_raters), -1, dtype=np.int64)
        self.labels[ds.item, ds.rater] = ds.label
        self.item_raters = padded([np.flatnonzero(row >= 0) for row in self.labels])
        batch = ds.topology.item_batch
        if batch is not None:
            items = [np.flatnonzero(batch == b) for b in range(int(batch.max()) + 1)]
            self.batch_items = padded(items)
            self.batch_raters = padded([np.flatnonzero((self.labels[i] >= 0).any(0)) for i in items])


def padded(rows: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Rows of different lengths as one table padded with -1, and each row's length."""
    lengths = np.array([len(row) for row in rows])
    table = np.full((len(rows), lengths.max()), -1, dtype=np.int64)
    for r, row in enumerate(rows):
        table[r, :len(row)] = row
    return table, lengths


def draw_from(rows: tuple[np.ndarray, np.ndarray], which: np.ndarray, size: int, rng: np.random.Generator):
    """``size`` uniform draws with replacement from the entries of each of the ``which`` rows of a padded table."""
    table, lengths = rows
    place = (rng.random((len(which), size)) * lengths[which, None]).astype(np.int64)
    return table[which[:, None], place]


def draw_slots(design: DataShape, sampler: str, n: int, k: int, rng: np.random.Generator):
    """One sampler draw (METHOD section 2): the items of the slots, each slot's group, and a function that draws
    one model's (slots x k) labels from fresh rater columns of each group."""
    if sampler == "S1":
        items = rng.integers(design.labels.shape[0], size=n)

        def model():
            return design.labels[np.ix_(items, rng.integers(design.labels.shape[1], size=k))]

        return items, np.zeros(n, dtype=np.int64), model
    if sampler == "S2":
        items = rng.integers(design.labels.shape[0], size=n)

        def model():  # per slot, k uniform draws among the raters of its item
            return design.labels[items[:, None], draw_from(design.item_raters, items, k, rng)]

        return items, np.arange(n), model
    if sampler == "S4":
        items = rng.integers(design.labels.shape[0], size=n)
        return items, np.zeros(n, dtype=np.int64), lambda: stream_columns(design, items, k, rng)
    group_size = max(1, int(np.median(design.batch_items[1])))
    n_batches = math.ceil(n / group_size)
    per_batch = max(1, n // n_batches)
    batches = rng.integers(len(design.batch_items[1]), size=n_batches)
    items = draw_from(design.batch_items, batches, per_batch, rng).ravel()
    groups = np.repeat(np.arange(n_batches), per_batch)

    def model():
        columns = draw_from(design.batch_raters, batches, k, rng)[groups]  # each slot takes its batch's raters
        labels = design.labels[items[:, None], columns]
        slot, j = np.nonzero(labels < 0)  # a ragged batch: those responses from the items' own raters
        labels[slot, j] = design.labels[items[slot], draw_from(design.item_raters, items[slot], 1, rng)[:, 0]]
        return labels

    return items, groups, model


def stream_columns(design: DataShape, items: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """S4: one stream of raters drawn uniformly with replacement from the pool, as long as it takes; each slot's
    ``k`` labels are those of the first ``k`` raters in the stream who rated its item (a repeated rater each time)."""
    pool = design.labels.shape[1]
    distinct, slot_item = np.unique(items, return_inverse=True)  # the same item's slots read the same stream
    stream = rng.integers(pool, size=pool * k)
    while True:
        rated = design.labels[distinct][:, stream] >= 0  # (distinct items, stream)
        if (rated.sum(1) >= k).all():
            break
        stream = np.concatenate([stream, rng.integers(pool, size=len(stream))])
    first = np.nonzero(rated & (np.cumsum(rated, axis=1) <= k))[1].reshape(-1, k)  # the first k places each
    return design.labels[items[:, None], stream[first[slot_item]]]  # item's raters hold, in stream order


def perturb(labels: np.ndarray, epsilon: float, rule: str, shares: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """B's responses, each replaced with probability ``epsilon`` (METHOD sections 3 and 12): by a label of the
    slot's own noise law ``Dirichlet(1/C, ..., 1/C)`` (``"dirichlet"``) or ``Dirichlet(shares)`` (``"dirichlet-shares"``,
    ``shares`` being the dataset's label shares), by the slot's one label drawn uniformly (``"one-label"``), or by
    one of the other labels uniformly (``"uniform"``)."""
    n_labels = len(shares)
    replaced = rng.random(labels.shape) < epsilon
    if rule == "one-label":
        noise = np.broadcast_to(rng.integers(n_labels, size=labels.shape[0])[:, None], labels.shape)
    elif rule in ("dirichlet", "dirichlet-shares"):
        prior = np.full(n_labels, 1.0 / n_labels) if rule == "dirichlet" else shares / shares.sum()
        eta = rng.dirichlet(prior, size=labels.shape[0])  # one law per slot
        cum = np.cumsum(eta, axis=1)
        noise = (rng.random(labels.shape)[..., None] * cum[:, None, -1:] >= cum[:, None, :]).sum(-1)
    else:
        noise = (labels + rng.integers(1, n_labels, labels.shape)) % n_labels
    return np.where(replaced, np.minimum(noise, n_labels - 1), labels)


def split(a: np.ndarray, b: np.ndarray, groups: np.ndarray, rng: np.random.Generator,
          null_mixing: str = "half") -> tuple[np.ndarray, ...]:
    """The null's A* and B* (METHOD section 4): per group, the ``2K`` columns of A and B pooled and split in half
    uniformly without replacement (``"half"``), or A's ``c``-th and B's ``c``-th column swapped by a coin per pair
    (``"pairs"``); a column keeps all its responses on every slot of its group."""
    k = a.shape[1]
    _, group = np.unique(groups, return_inverse=True)
    if null_mixing == "pairs":
        swap = (rng.random((group.max() + 1, k)) < 0.5)[group]
        return np.where(swap, b, a), np.where(swap, a, b)
    pooled = np.concatenate([a, b], axis=1)
    order = np.argsort(rng.random((group.max() + 1, 2 * k)), axis=1)[group]  # a uniform permutation per group
    halves = np.take_along_axis(pooled, order, axis=1)
    return halves[:, :k], halves[:, k:]


def counts(labels: np.ndarray, n_labels: int) -> np.ndarray:
    """Per-slot label counts of a (slots x k) label array."""
    return (labels[..., None] == np.arange(n_labels)).sum(1)


def reference_deltas(ds: AnnotationDataset, sampler: str, n: int, k: int, epsilon: float, n_samples: int,
                     rng: np.random.Generator, null: bool, perturbation: str = "dirichlet", metrics=METRICS,
                     smoothing: float = SMOOTHING, null_mixing: str = "half") -> np.ndarray:
    """Deltas of ``n_samples`` replicates (n_samples x metrics, in the order of ``metrics``), one replicate after
    another, the divergences with the additive ``smoothing``, the null's columns mixed as ``null_mixing`` says."""
    design = DataShape(ds)
    drawn = []  # each replicate's (G, A, B) counts per slot
    for _ in range(n_samples):
        _, groups, model = draw_slots(design, sampler, n, k, rng)
        g, a = model(), model()
        b = perturb(model(), epsilon, perturbation, design.shares, rng)
        if null:
            a, b = split(a, b, groups, rng, null_mixing)
        drawn.append([counts(x, design.n_labels) for x in (g, a, b)])
    d = deltas(*np.array(drawn).swapaxes(0, 1), metrics=metrics, smoothing=smoothing)  # every replicate at once
    return np.column_stack(list(d.values()))
