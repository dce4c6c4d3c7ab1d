"""Studies with R distinct raters that a pilot does not have (the methods page's "Planning the number of raters"):
drawn from the population model fitted to the pilot (:mod:`analysis.data.population`), with the pilot's kind of
design, so that :mod:`analysis.tools.power` simulates its designs on them as on the pilot.

Under S1 a study is fully crossed: its items each rated by all R raters, and a design of K ratings per item draws K
of the R. Under S3 it has the pilot's batch size, R raters per batch, and the pilot's mean number of batches per
rater. Under S4 it is sparse: a pool of R raters, each item rated by the pilot's median number of raters per item
(at most R), every rater rating about as many items. The power at R pools the replicates of :data:`PANELS` such studies, each with its own raters and items: one
panel of R raters alone gives the power of those people, which varies from panel to panel far beyond the Monte Carlo
error when R is small. Under S2 the raters of an item are drawn afresh for every item, so the number of distinct
raters does not enter the power: planning R is refused there.
"""

from __future__ import annotations

import numpy as np

from analysis.data.annotations import AnnotationDataset
from analysis.data.population import Population, check_raters
from analysis.engine import Simulator
from analysis.errors import ParameterError
from analysis.experiment.choices import BOOK
from analysis.experiment.grid import ALPHA, Cell, simulate_cell
from analysis.experiment.pvalues import replicate_p_values
from analysis.tools.compare import default_k

RATER_SAMPLERS = ("S1", "S3", "S4")  # the samplers whose replicates keep raters across items: R bounds the power
#: Studies drawn per R, each with its own raters and items, among which a design's replicates are shared.
PANELS = 20


def check_plan_raters(raters, sampler: str, ks=None) -> list[int]:
    """The distinct values of ``raters`` in order, each an integer >= 2 and none below every K of ``ks`` (a
    design of K ratings per item needs K distinct raters); refused under a sampler that draws raters per item."""
    if sampler not in RATER_SAMPLERS:
        raise ParameterError(f"--raters plans the number of distinct raters, which bounds the power only where a "
                             f"replicate keeps its raters across items (S1, S3, S4); {sampler} draws an item's "
                             "raters afresh for every item: give --sampler S1 (fully crossed data), S3 (batched "
                             "data) or S4 (any design)")
    values = sorted(set(raters))
    if not values:
        raise ParameterError("--raters needs one number of raters or more, e.g. --raters 6,12,24")
    for r in values:
        check_raters(r)
    if ks and values[0] < min(ks):
        raise ParameterError(f"R = {values[0]} (--raters) is below every K of --ks ({', '.join(map(str, ks))}): "
                             "K ratings per item need K distinct raters; give a larger R or a smaller K")
    return values


def study(population: Population, pilot: AnnotationDataset, sampler: str, n_items: int, raters: int, seed: int,
          panel: int = 0) -> AnnotationDataset:
    """Study ``panel`` of at least ``n_items`` items with ``raters`` distinct raters (per batch under S3) drawn from
    ``population``, with the pilot's kind of design (module docstring); named ``<pilot>-R<raters>``."""
    name = f"{pilot.name}-R{raters}"
    seed = int(np.random.SeedSequence([seed, raters, panel]).generate_state(1)[0])  # apart from the fit's streams
    if sampler == "S1":
        return population.draw(n_items, raters, seed, name=name)
    if sampler == "S4":
        per_item = min(raters, default_k(pilot))
        return population.draw(n_items, raters, seed, name=name, per_item=per_item)
    item_batch = pilot.topology.item_batch
    batch_size = max(1, int(np.median(np.bincount(item_batch))))
    n_batches = -(-n_items // batch_size)
    pairs = len(np.unique(item_batch[pilot.item].astype(np.int64) * pilot.n_raters + pilot.rater))
    pool = int(np.clip(round(n_batches * raters * pilot.n_raters / pairs), raters, n_batches * raters))
    return population.draw(n_batches * batch_size, raters, seed, batch_size=batch_size, pool=pool, name=name)


def pooled_power(studies, sampler: str, cell: Cell, n_samples: int, seed: int, rng: np.random.Generator,
                 alpha: float = ALPHA, boot: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """The power per metric of ``cell`` with ``n_samples`` replicates shared out among ``studies`` (the ``i``-th
    study seeded ``seed + i``), and its Monte Carlo standard error by a bootstrap of the studies with their
    replicates. Every replicate is judged against the same finite null sample, so that error is larger than a
    binomial one. One study per replicate measures the power on fresh studies from a population (the model's check,
    ``benchmarks/plan_model_checks.py``)."""
    per = np.diff(np.linspace(0, n_samples, len(studies) + 1).astype(int))
    parts = [simulate_cell(Simulator(one, sampler, **BOOK.engine()), cell, int(m), seed + i)
             for i, (one, m) in enumerate(zip(studies, per))]

    def power(chosen):
        alt, null = (np.concatenate([parts[i][side] for i in chosen]) for side in (0, 1))
        return np.array([(replicate_p_values(null[:, m], alt[:, m]) < alpha).mean() for m in range(alt.shape[1])])

    everyone = np.arange(len(parts))
    return power(everyone), np.std([power(rng.choice(everyone, len(parts))) for _ in range(boot)], axis=0)
