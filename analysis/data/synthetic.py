"""Seeded synthetic stand-ins for the paper's three datasets, following their published designs and per-item laws.

Generative model, version 2 (the default names): each item draws its label law, each rating reads it through a
latent that carries the rater's persistent bias:

    p_i ~ Dirichlet(a),   w[i, r] = (b[r] + e[i, r]) / s,   b ~ N(0, rater_sd),  e ~ N(0, noise_sd)
    label[i, r] = the label whose interval of the cumulative law of p_i holds Phi(w[i, r])

with ``s = sqrt(rater_sd**2 + noise_sd**2)``, so ``Phi(w)`` is uniform over raters and an item's labels follow
``p_i`` exactly: the spread of the per-item laws across items is the Dirichlet's, ``a0 = sum(a)``. A rater with a
positive ``b`` reads every item's law higher up, towards the last label (this is what makes raters matter across
items). ``a`` is the published Dirichlet fit where one is published for every label (DICES), else the published
``a0`` times the label shares: the aggregation property of the Dirichlet then gives the published fit of the binary
split (D3code, Kumar). Under such a law Krippendorff's nominal alpha is ``1 / (1 + a0)``.

Version 1 (names ending in ``-v1``, kept for comparison) had an ordinal item score instead of ``p_i``:
``label = number of cut-points below z[i] + b[r] + e[i, r]``, ``z ~ N(0, 1)``, cut-points at the quantiles of the
marginal law of the latent. Its label shares and agreement matched the published ones, its per-item dispersion did
not (DICES: ``a0`` about 3 for No and Yes, 84 for Unsure).

Designs, shares and dispersion follow only what is published about the real sets (DATA.md, "Published statistics"),
never the paper's results:

* ``dices-synthetic`` (DICES-350): 350 items x 123 raters, fully crossed; No / Unsure / Yes with the fitted
  Dirichlet prior [5.22, 0.86, 2.75] (59 / 10 / 31 %, ``a0`` 8.83).
* ``d3code-synthetic`` (D3code): 4554 items, 4309 raters, each rater 35 items, at least 24 raters per item and
  about 33 on average; labels 0-4 with 68 % below 2 and ``a0`` 8.96 (the published binary fit [6.08, 2.88]).
* ``toxicity-synthetic`` (Kumar et al.): batches of 20 comments, 5 raters per batch, about 1.56 batches per rater;
  labels 0-4 with 51 % at 0 and ``a0`` 2.70 (the published binary fit [1.37, 1.33], threshold unstated: we split
  0 against 1-4).

The rater and noise scales are version 1's (tuned there to the published agreement); the shares of the raw labels
inside the published binary splits are not published and are our choice.

More variants switch one thing each (the methods page), named as such:

* ``-binary`` (D3code and Toxicity): version 2 with its labels collapsed to the published binary split, the
  granularity at which the published Dirichlet fits were made. By the aggregation property the binary labels follow
  the published binary fit exactly, read through the same rater biases.
* ``-unsure-no`` and ``-unsure-yes`` (DICES): version 2 with Unsure merged into No, or into Yes, the two readings
  of a three-label question collapsed to two (the paper does not say whether it collapsed Unsure), read through the
  same rater biases.
* ``-v3``: version 2 with the concentration ``a0`` read from the paper's K = 1 accuracy-family cells, and nothing
  else: at K = 1 under S2 those cells give the data's ``E[sum_c p_c^2]``
  (:func:`analysis.paper.identities.agreement_moment`), and a Dirichlet with mean ``pi`` has
  ``E[sum p^2] = (a0 sum pi^2 + 1) / (a0 + 1)``, so ``a0 = (1 - m) / (m - sum pi^2)``. Designs, shares and rater
  effects are version 2's; a dataset without such cells (DICES, D3code) keeps version 2's law.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from analysis.data import dispersion
from analysis.data.annotations import AnnotationDataset, from_codes
from analysis.errors import ParameterError


@dataclass(frozen=True)
class StandIn:
    """Parameters of one stand-in: what it imitates, its design, labels and their law, bias and noise scales."""

    imitates: str
    design: str
    labels: tuple
    label_shares: tuple
    rater_sd: float
    noise_sd: float
    n_items: int
    n_raters: int
    items_per_rater: int = 0  # sparse design: every rater labels this many items
    min_raters_per_item: int = 0  # sparse design: no item has fewer raters
    raters_per_batch: int = 0  # batched design
    batch_size: int = 0
    published: tuple = ()  # (statistic, published value) pairs, as DATA.md gives them
    published_a0: float = 0.0  # the published Dirichlet fit's concentration (of the binary split where so fitted)
    positive: tuple = ()  # the labels on the second side of that binary split; () where every label was fitted
    dirichlet: tuple = ()  # version 2: the per-item law's Dirichlet parameter; () for version 1's ordinal scores
    binary: bool = False  # labels collapsed to two: ``positive`` against the rest (the published split; DICES's merges)
    fitted: bool = False  # version 3: ``a0`` read from the paper's K = 1 cells (:func:`fitted_spec`)

    @property
    def version(self) -> int:
        return 3 if self.fitted else 2 if self.dirichlet else 1

    @property
    def binary_labels(self) -> tuple:
        """The two labels of the published split: the rest, then ``positive`` (``("0–1", "2–4")``)."""
        return (_span([label for label in self.labels if label not in self.positive]), _span(self.positive))


def _scaled(a0: float, shares: tuple) -> tuple:
    """A Dirichlet parameter with concentration ``a0`` and mean ``shares``."""
    return tuple(a0 * s for s in shares)


_DICES_SHARES = (0.59, 0.10, 0.31)
_D3CODE_SHARES = (0.45, 0.23, 0.14, 0.11, 0.07)
_TOXICITY_SHARES = (0.51, 0.20, 0.13, 0.10, 0.06)
_CURRENT: dict[str, StandIn] = {
    "dices-synthetic": StandIn(
        imitates="DICES-350", design="crossed", labels=("No", "Unsure", "Yes"), label_shares=_DICES_SHARES,
        rater_sd=0.45, noise_sd=1.2, n_items=350, n_raters=123, published_a0=8.83, dirichlet=(5.22, 0.86, 2.75),
        published=(("raters per item", "123 (fully crossed)"), ("label shares", "59 / 10 / 31 %"),
                   ("Krippendorff's alpha", "about 0.2 (0.15-0.24 within groups; the Dirichlet fit implies 0.10 "
                                            "over all raters)"))),
    "d3code-synthetic": StandIn(
        imitates="D3code", design="sparse", labels=(0, 1, 2, 3, 4), label_shares=_D3CODE_SHARES,
        rater_sd=0.6, noise_sd=1.3, n_items=4554, n_raters=4309, items_per_rater=35, min_raters_per_item=24,
        published_a0=8.96, positive=(2, 3, 4), dirichlet=_scaled(8.96, _D3CODE_SHARES),
        published=(("raters per item", "at least 24, about 30 on average"), ("items per rater", "35"),
                   ("label shares", "68 / 32 % (raw < 2 / raw >= 2)"),
                   ("Krippendorff's alpha", "0.09-0.14 within regions"))),
    "toxicity-synthetic": StandIn(
        imitates="Toxicity", design="batched", labels=(0, 1, 2, 3, 4), label_shares=_TOXICITY_SHARES,
        rater_sd=0.7, noise_sd=0.9, n_items=20_000, n_raters=3200, raters_per_batch=5, batch_size=20,
        published_a0=2.70, positive=(1, 2, 3, 4), dirichlet=_scaled(2.70, _TOXICITY_SHARES),
        published=(("raters per item", "5"), ("items per batch", "20"), ("batches per rater", "about 1.56"),
                   ("label shares", "51 / 49 % (binary, threshold not stated)"),
                   ("Krippendorff's alpha", "not published"))),
}
V1, V3, BINARY = "-v1", "-v3", "-binary"
# DICES's Unsure merged into one side: the suffix and the labels on the second side of the split
UNSURE_MERGED = {"-unsure-no": ("Yes",), "-unsure-yes": ("Unsure", "Yes")}
VARIANTS = (V1, V3, BINARY, *UNSURE_MERGED)
STAND_INS: dict[str, StandIn] = {**_CURRENT,
                                 **{name + V1: replace(spec, dirichlet=()) for name, spec in _CURRENT.items()},
                                 **{name + V3: replace(spec, fitted=True) for name, spec in _CURRENT.items()},
                                 **{name + BINARY: replace(spec, binary=True) for name, spec in _CURRENT.items()
                                    if spec.positive},
                                 **{"dices-synthetic" + suffix: replace(_CURRENT["dices-synthetic"], binary=True,
                                                                        positive=positive)
                                    for suffix, positive in UNSURE_MERGED.items()}}


def base_name(name: str) -> str:
    """The version 2 stand-in a stand-in name varies (``toxicity-synthetic-binary`` -> ``toxicity-synthetic``);
    any other name is returned as it is."""
    for suffix in VARIANTS:
        if name in STAND_INS and name.endswith(suffix):
            return name.removesuffix(suffix)
    return name


def sum_p_squared(dirichlet) -> float:
    """``E[sum_c p_c^2]`` of ``p ~ Dirichlet(a)``: ``sum_c a_c (a_c + 1) / (a0 (a0 + 1))``."""
    a = np.asarray(dirichlet, dtype=float)
    return float((a * (a + 1)).sum() / (a.sum() * (a.sum() + 1)))


def concentration_for(sum_p2: float, shares) -> float:
    """The ``a0`` of a Dirichlet with mean ``shares`` whose ``E[sum p^2]`` is ``sum_p2``:
    ``(1 - m) / (m - sum pi^2)``, which needs ``sum pi^2 < m < 1``."""
    floor = float(np.square(shares).sum())
    if not floor < sum_p2 < 1:
        raise ParameterError(f"E[sum p^2] = {sum_p2:.4f} is not between sum pi^2 = {floor:.4f} and 1: no Dirichlet "
                             "with these shares has it")
    return (1 - sum_p2) / (sum_p2 - floor)


def ratings_per_item(spec: StandIn) -> float:
    """The mean ratings per item of a stand-in's design."""
    if spec.design == "crossed":
        return float(spec.n_raters)
    if spec.design == "sparse":
        return spec.n_raters * spec.items_per_rater / spec.n_items
    return float(spec.raters_per_batch)


def latent_moment(empirical: float, ratings: float) -> float:
    """The per-item laws' ``E[sum p^2]`` whose items, each read by ``ratings`` ratings, have the empirical
    ``E[sum p_hat^2] = E[sum p^2] + (1 - E[sum p^2]) / ratings`` (what S2 resamples)."""
    return (ratings * empirical - 1) / (ratings - 1)


# ``E[sum p_hat^2]`` per (version 2 stand-in, number of labels) that the paper's K = 1 cells imply, as
# analysis.paper.identities.v3_moments reads them from the paper's tables (a test recomputes them: they are data here so
# that generating a stand-in needs no module that reads the paper)
V3_MOMENTS = {("toxicity-synthetic", 2): 0.705763630006583, ("toxicity-synthetic", 5): 0.40576363000658316}


def fitted_spec(name: str) -> StandIn:
    """A stand-in's parameters, version 3's ``a0`` resolved from the paper's K = 1 cells.

    The cells give the empirical ``E[sum p_hat^2]`` (:data:`V3_MOMENTS`), which
    :func:`latent_moment` turns into the laws' ``E[sum p^2]`` and :func:`concentration_for` into ``a0``, at the
    stand-in's own labels, or at the published binary split where no law with its own labels' shares reaches it.
    Version 2's law where the paper has no such cell.
    """
    spec = STAND_INS[name]
    if not spec.fitted:
        return spec
    moments = V3_MOMENTS
    for binary in (False, True) if spec.positive else (False,):
        shares = spec.label_shares if not binary else _binary_shares(spec)
        moment = moments.get((base_name(name), len(shares)))
        if moment is None:
            return spec
        target = latent_moment(moment, ratings_per_item(spec))
        if float(np.square(shares).sum()) < target < 1:
            a0 = concentration_for(target, shares)
            return replace(spec, dirichlet=_scaled(a0, spec.label_shares), binary=binary)
    raise ParameterError(f"{name}: no Dirichlet with the published shares has the E[sum p^2] the paper implies")


def generates_v2(name: str) -> bool:
    """Whether a stand-in generates exactly its version 2 stand-in's data (v3 of a dataset without K = 1 cells)."""
    spec, base = fitted_spec(name), STAND_INS[base_name(name)]
    return (spec.dirichlet, spec.binary) == (base.dirichlet, base.binary)


def _binary_shares(spec: StandIn) -> tuple:
    positive = sum(s for label, s in zip(spec.labels, spec.label_shares) if label in spec.positive)
    return (1 - positive, positive)


def _quota(n: int, total: int, minimum: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` counts of at least ``minimum`` that sum to ``total``, the rest spread uniformly at random."""
    extra = total - minimum * n
    if extra < 0:
        raise ParameterError(f"a design needs {minimum * n} slots but has {total}")
    return minimum + rng.multinomial(extra, np.full(n, 1 / n))


def _pair_without_repeats(left: np.ndarray, right: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """Pair ``left[i]`` copies of each left unit with ``right[j]`` copies of each right unit at random, so that no
    pair repeats (a rater never labels one item, or joins one batch, twice)."""
    a = np.repeat(np.arange(len(left)), left)
    b = rng.permutation(np.repeat(np.arange(len(right)), right))
    while True:
        order = np.lexsort((b, a))
        same = (a[order[1:]] == a[order[:-1]]) & (b[order[1:]] == b[order[:-1]])
        repeated = order[1:][same]
        if not len(repeated):
            return a, b
        partner = rng.integers(0, len(a), len(repeated))
        b[repeated], b[partner] = b[partner], b[repeated].copy()


def _assign_raters(spec: StandIn, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(item, rater, batch-per-row) arrays for the stand-in's design."""
    if spec.design == "crossed":
        item, rater = np.divmod(np.arange(spec.n_items * spec.n_raters), spec.n_raters)
        return item, rater, None
    if spec.design == "sparse":
        slots = spec.n_raters * spec.items_per_rater
        rater, item = _pair_without_repeats(np.full(spec.n_raters, spec.items_per_rater),
                                            _quota(spec.n_items, slots, spec.min_raters_per_item, rng), rng)
        return item, rater, None
    # batched: every batch has raters_per_batch raters; every rater joins at least one batch
    n_batches = spec.n_items // spec.batch_size
    slots = n_batches * spec.raters_per_batch
    batch_of_slot, rater_of_slot = _pair_without_repeats(np.full(n_batches, spec.raters_per_batch),
                                                         _quota(spec.n_raters, slots, 1, rng), rng)
    batch_raters = rater_of_slot[np.argsort(batch_of_slot, kind="stable")].reshape(n_batches, -1)
    k = spec.raters_per_batch
    item = np.repeat(np.arange(spec.n_items), k)
    batch = item // spec.batch_size
    rater = batch_raters[batch, np.tile(np.arange(k), spec.n_items)]
    return item, rater, batch


def draw_labels(spec: StandIn, item: np.ndarray, rater: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Label codes of the rows (item, rater) under the stand-in's model (module docstring): ``spec.n_items`` item
    laws and ``spec.n_raters`` rater biases are drawn, then one noise per row."""
    if spec.version == 1:
        from scipy.stats import norm  # here, not at the top: scipy.stats takes a second to import
        z = rng.normal(0.0, 1.0, spec.n_items)
        bias = rng.normal(0.0, spec.rater_sd, spec.n_raters)
        y = z[item] + bias[rater] + rng.normal(0.0, spec.noise_sd, len(item))
        scale = np.sqrt(1.0 + spec.rater_sd**2 + spec.noise_sd**2)
        return np.searchsorted(norm.ppf(np.cumsum(spec.label_shares)[:-1]) * scale, y)
    cumulative, z_rater, z_rating = latent_draws(spec, len(item), rng)
    return latent_labels(cumulative[item], rater, z_rater, z_rating, spec.rater_sd, spec.noise_sd)


def latent_draws(spec: StandIn, n_rows: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What version 2 draws for ``n_rows`` ratings, in this order: each item's cumulative label law (its last
    column, 1, left out), a standard normal per rater and one per rating. The spread and the noise scale them
    afterwards (:func:`latent_labels`), so one set of draws serves every spread."""
    cumulative = np.cumsum(rng.dirichlet(spec.dirichlet, spec.n_items), axis=1)[:, :-1]
    return cumulative, rng.standard_normal(spec.n_raters), rng.standard_normal(n_rows)


def latent_labels(cumulative: np.ndarray, rater: np.ndarray, z_rater: np.ndarray, z_rating: np.ndarray,
                  rater_sd: float, noise_sd: float) -> np.ndarray:
    """Version 2's label codes from its draws (:func:`latent_draws`), ``cumulative`` given row by row: the label
    whose interval of the item's cumulative law holds Phi of the rater's bias plus the rating's noise."""
    from scipy.special import ndtr  # Phi, as scipy.stats.norm.cdf computes it
    w = (rater_sd * z_rater[rater] + noise_sd * z_rating) / np.hypot(rater_sd, noise_sd)
    return (ndtr(w)[:, None] > cumulative).sum(axis=1)


def make_stand_in(name: str, seed: int = 0) -> AnnotationDataset:
    """Generate the named stand-in (``dices-synthetic``, ``d3code-synthetic``, ``toxicity-synthetic``, or the same
    names ending in ``-v1``, ``-v3`` or ``-binary``, see the module docstring). Every variant of a stand-in shares
    its design (who rated what); ``-binary`` and ``-v3`` share version 2's rater biases too."""
    if name not in STAND_INS:
        raise ParameterError(f"unknown stand-in {name!r}; choose one of {sorted(STAND_INS)}")
    spec = fitted_spec(name)
    stream = sorted(_CURRENT).index(base_name(name))
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(stream,)))
    law = (f"per-item laws Dirichlet({', '.join(f'{a:.2f}' for a in spec.dirichlet)})" if spec.dirichlet else
           "ordinal item scores, target label shares " +
           " / ".join(f"{label} {share:.0%}" for label, share in zip(spec.labels, spec.label_shares)))
    if spec.fitted:
        law += " (a0 read from the paper's K = 1 cells)" if spec.dirichlet != STAND_INS[name].dirichlet else \
            " (no K = 1 cell in the paper: version 2's law)"
    if spec.binary:
        law += f", labels collapsed to {spec.binary_labels[0]} against {spec.binary_labels[1]}"
    return draw(spec, rng, name,
                f"synthetic stand-in {name} (version {spec.version}) for {spec.imitates} (seed {seed}): {law}, "
                f"each rater's persistent bias with sd {spec.rater_sd}, each rating's noise with sd {spec.noise_sd}")


def draw(spec: StandIn, rng: np.random.Generator, name: str, provenance: str) -> AnnotationDataset:
    """A dataset drawn under ``spec``: its design (who rated what), then its labels (:func:`draw_labels`), collapsed
    to the binary split where ``spec.binary``."""
    item, rater, batch = _assign_raters(spec, rng)
    codes = draw_labels(spec, item, rater, rng)
    labels = spec.labels
    if spec.binary:
        codes = np.isin(np.asarray(spec.labels, dtype=object)[codes], spec.positive).astype(int)
        labels = spec.binary_labels
    return from_codes(item, rater, codes, labels, batch, name=name, provenance=provenance)


def nominal_alpha(ds: AnnotationDataset) -> float:
    """Krippendorff's alpha of the dataset's labels, nominal level, from per-item label counts."""
    import krippendorff

    return float(krippendorff.alpha(value_counts=ds.item_label_counts, level_of_measurement="nominal"))


def design_statistics(ds: AnnotationDataset) -> dict[str, float]:
    """Raters per item (min, mean), items per rater (mean), batches per rater (batched data), label shares, alpha."""
    raters_per_item = ds.raters_per_item
    items_per_rater = np.bincount(ds.rater, minlength=ds.n_raters)
    stats = {"raters per item (min)": int(raters_per_item.min()),
             "raters per item (mean)": float(raters_per_item.mean()),
             "items per rater (mean)": float(items_per_rater.mean())}
    if ds.item_batch is not None:
        pairs = np.unique(np.stack([ds.rater, ds.item_batch[ds.item]]), axis=1)
        stats["batches per rater (mean)"] = pairs.shape[1] / ds.n_raters
    shares = np.bincount(ds.label, minlength=ds.n_labels) / ds.n_ratings
    stats["label shares"] = " / ".join(f"{100 * s:.0f}" for s in shares) + " %"
    stats["Krippendorff's alpha (nominal)"] = round(nominal_alpha(ds), 3)
    return stats


def stand_ins_against_published() -> pd.DataFrame:
    """One row per (stand-in, statistic): the stand-in's value beside the published one, where there is one."""
    rows = []
    for name, spec in _CURRENT.items():
        stats = design_statistics(make_stand_in(name))
        published = dict(spec.published)
        for statistic, value in stats.items():
            key = statistic.split(" (")[0] if statistic.startswith(("raters per", "items per", "batches")) \
                else ("Krippendorff's alpha" if statistic.startswith("Krippendorff") else statistic)
            shown = f"{value:.2f}" if isinstance(value, float) and not statistic.startswith("Kripp") else value
            rows.append({"stand-in": name, "imitates": spec.imitates, "statistic": statistic,
                         "stand-in value": str(shown), "published": published.get(key, "–")})
    return pd.DataFrame(rows)


def _span(labels) -> str:
    """Labels merged into one, in words: a range of numbers (``2–4``), or names joined (``No or Unsure``)."""
    if len(labels) == 1:
        return str(labels[0])
    return f"{labels[0]}–{labels[-1]}" if not isinstance(labels[0], str) else " or ".join(labels)


def measured_a0(ds: AnnotationDataset, spec: StandIn) -> dict[str, dispersion.Fit]:
    """Dirichlet-multinomial fits of the splits the published fit covers: each label against the others where every
    label was fitted (DICES), else the published binary split."""
    counts = ds.item_label_counts
    if spec.positive:
        codes = [ds.label_names.index(label) for label in spec.positive]
        rest = [label for label in spec.labels if label not in spec.positive]
        return {f"{_span(spec.positive)} against {_span(rest)}": dispersion.fit(dispersion.split(counts, codes))}
    return {f"{label} against the rest": found
            for label, found in zip(ds.label_names, dispersion.split_concentrations(counts))}


def dispersion_against_published(tolerance: float = 0.2) -> pd.DataFrame:
    """Each stand-in's measured ``a0`` beside the published fit's, one row per fitted split."""
    rows = []
    for name, spec in _CURRENT.items():
        for split, found in measured_a0(make_stand_in(name), spec).items():
            within = abs(found.a0 / spec.published_a0 - 1) <= tolerance
            rows.append({"stand-in": name, "imitates": spec.imitates, "labels": split,
                         "published a0": f"{spec.published_a0:.2f}",
                         "measured a0 (± s.e.)": f"{found.a0:.2f} ± {found.a0_se:.2f}",
                         f"within ±{100 * tolerance:.0f} %": "yes" if within else "no"})
    return pd.DataFrame(rows)
