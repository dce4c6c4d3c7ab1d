"""Seeded synthetic stand-ins for the paper's three datasets, with persistent rater bias.

Generative model (one ordinal latent scale per dataset):

    y[i, r] = z[i] + b[r] + e[i, r],   z ~ N(0, 1),  b ~ N(0, rater_sd),  e ~ N(0, noise_sd)
    label[i, r] = number of cut-points below y[i, r]

``z`` is the item's latent score, ``b`` a rater's bias that stays the same on every item the rater labels (this is
what makes raters matter across items), ``e`` is response noise. The cut-points are the quantiles of the marginal
law of ``y``, ``N(0, sqrt(1 + rater_sd**2 + noise_sd**2))``, at the cumulative target label shares, so the expected
label marginals equal ``label_shares``.

The designs follow the real datasets' published shapes (see DATA.md):

* ``dices-synthetic``: 350 items x 123 raters, fully crossed, labels No / Unsure / Yes;
* ``d3code-synthetic``: 4554 items, 4309 raters, 50-70 raters per item drawn at random (sparse), labels 0-4;
* ``toxicity-synthetic``: 1000 batches of 20 items, each batch rated by 5 distinct raters from a pool of 3200
  (about 1.6 batches per rater, as in Kumar et al.'s 17,280 raters over 5,381 batches), labels 0-4.

The real label shares are not available on this machine; ``label_shares`` are rough figures chosen to resemble each
dataset (skewed to the benign label for toxicity), and are recorded in each stand-in's provenance.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import norm

from analysis.data import AnnotationDataset, from_table
from analysis.errors import ParameterError


@dataclass(frozen=True)
class StandIn:
    """Parameters of one stand-in: design, label names and shares, rater bias and noise scales."""

    design: str
    labels: tuple
    label_shares: tuple
    rater_sd: float
    noise_sd: float
    n_items: int
    n_raters: int
    raters_per_item: tuple = (0, 0)
    batch_size: int = 0


STAND_INS: dict[str, StandIn] = {
    "dices-synthetic": StandIn(
        design="crossed", labels=("No", "Unsure", "Yes"), label_shares=(0.55, 0.10, 0.35),
        rater_sd=0.6, noise_sd=1.4, n_items=350, n_raters=123,
    ),
    "d3code-synthetic": StandIn(
        design="sparse", labels=(0, 1, 2, 3, 4), label_shares=(0.30, 0.25, 0.20, 0.15, 0.10),
        rater_sd=0.6, noise_sd=0.8, n_items=4554, n_raters=4309, raters_per_item=(50, 70),
    ),
    "toxicity-synthetic": StandIn(
        design="batched", labels=(0, 1, 2, 3, 4), label_shares=(0.50, 0.20, 0.13, 0.10, 0.07),
        rater_sd=0.7, noise_sd=0.7, n_items=20_000, n_raters=3200, raters_per_item=(5, 5), batch_size=20,
    ),
}


def _assign_raters(spec: StandIn, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(item, rater, batch-per-row) arrays for the stand-in's design."""
    if spec.design == "crossed":
        item, rater = np.divmod(np.arange(spec.n_items * spec.n_raters), spec.n_raters)
        return item, rater, None
    if spec.design == "sparse":
        low, high = spec.raters_per_item
        per_item = rng.integers(low, high + 1, size=spec.n_items)
        rater = np.concatenate([rng.choice(spec.n_raters, size=k, replace=False) for k in per_item])
        return np.repeat(np.arange(spec.n_items), per_item), rater, None
    k = spec.raters_per_item[0]
    n_batches = spec.n_items // spec.batch_size
    batch_raters = np.stack([rng.choice(spec.n_raters, size=k, replace=False) for _ in range(n_batches)])
    item = np.repeat(np.arange(spec.n_items), k)
    batch = item // spec.batch_size
    rater = batch_raters[batch, np.tile(np.arange(k), spec.n_items)]
    return item, rater, batch


def make_stand_in(name: str, seed: int = 0) -> AnnotationDataset:
    """Generate the named stand-in (``dices-synthetic``, ``d3code-synthetic``, ``toxicity-synthetic``)."""
    if name not in STAND_INS:
        raise ParameterError(f"unknown stand-in {name!r}; choose one of {sorted(STAND_INS)}")
    spec = STAND_INS[name]
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(sorted(STAND_INS).index(name),)))
    item, rater, batch = _assign_raters(spec, rng)
    z = rng.normal(0.0, 1.0, spec.n_items)
    bias = rng.normal(0.0, spec.rater_sd, spec.n_raters)
    y = z[item] + bias[rater] + rng.normal(0.0, spec.noise_sd, len(item))
    scale = np.sqrt(1.0 + spec.rater_sd**2 + spec.noise_sd**2)
    cuts = norm.ppf(np.cumsum(spec.label_shares)[:-1]) * scale
    labels = np.asarray(spec.labels, dtype=object)[np.searchsorted(cuts, y)]
    table = pd.DataFrame({"item": item, "rater": rater, "label": labels})
    if batch is not None:
        table["batch"] = batch
    return from_table(
        table,
        batch="batch" if batch is not None else None,
        label_order=spec.labels,
        name=name,
        provenance=(
            f"synthetic stand-in {name} (seed {seed}): rater_sd {spec.rater_sd}, noise_sd {spec.noise_sd}, "
            f"target label shares {dict(zip(map(str, spec.labels), spec.label_shares))}"
        ),
    )
