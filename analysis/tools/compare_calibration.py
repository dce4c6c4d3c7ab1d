"""Is ``compare``'s p calibrated when the raters matter? Simulated test sets from a population of items and raters
with persistent biases, and two systems that are equally good in the population but side with different raters.

An item has a latent score ``z ~ N(0, 1)``, a rater a persistent bias ``b ~ N(0, rater_sd)``, and a rating is
``1[z + b + e > 0]`` with ``e ~ N(0, noise_sd)`` (with three labels, the ordinal label of ``z + b + e`` against
the cut-points -0.5 and 0.5). System A answers every item with the label probabilities that a rater of bias
``+lean`` would have, system B with those of a rater of bias ``-lean``. Flipping every sign (scores,
biases, noise) swaps the labels and turns A into B, and every metric is unchanged by relabelling, so over the
population A and B are equally good: the hypothesis of no difference holds exactly. One thing breaks that symmetry:
a plurality tie goes to the lowest label code (the methods page), which favours the system that leans toward label
0, so with an even number of raters (or three labels) B would be truly better on the vote metrics. Each item's label
codes are therefore reversed with probability 1/2 (the labels and both systems' probabilities alike), so that a tie
favours A on half the items and B on the other half, and the hypothesis holds for every metric. A test set draws new
items and
new raters; its few raters lean one way or the other by chance, and the system that sides with them looks better.
A sampler that redraws those raters as the same people across items (S1) sees that chance; one that redraws each
item's raters as independent (S2) does not, and is expected to reject more often than its level.

Besides fully crossed and batched test sets, a population can be sparse (each item rated by ``n_raters`` drawn
from a pool of ``pool``, as crowd data are) or have overlapping rater sets (``sets`` sets of ``n_raters`` drawn
from the pool, each item rated by one set, as ConvAbuse is): the designs on which S4 keeps raters across items.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Hashable, Iterator, Mapping

import numpy as np
import pandas as pd
from scipy.special import ndtr
from tqdm import tqdm

from analysis.tools.compare import RATER_LEVEL, compare, default_k
from analysis.data.annotations import AnnotationDataset, from_codes
from analysis.errors import ParameterError
from analysis.experiment.workers import in_workers
from analysis.tools.outputs import read_outputs
from analysis.tools.power import wilson


@dataclass(frozen=True)
class Scenario:
    """The simulated population: a test set's size, the spread of rater biases, the rating noise and how far each
    system leans toward one side's raters."""

    n_items: int = 100
    n_raters: int = 5  # every rater rates every item of a test set (fully crossed), or of its batch
    rater_sd: float = 0.5
    noise_sd: float = 0.5
    lean: float = 0.5  # A leans +lean, B -lean: equally good
    n_labels: int = 2  # 2, or more ordinal labels
    batch_size: int | None = None  # items per batch, each batch with raters of its own (None: fully crossed)
    lean_b: float | None = None  # B's lean where it differs from -lean (A then truly better when |lean_b| > |lean|)
    pool: int | None = None  # sparse: each item rated by n_raters of a pool of this many raters
    sets: int | None = None  # ... overlapping: by one of this many sets of n_raters drawn from the pool

    @property
    def design(self) -> str:
        """The design's kind, in words: "crossed", "batched", "sparse" or "overlapping"."""
        if self.pool:
            return "overlapping" if self.sets else "sparse"
        return "batched" if self.batch_size else "crossed"

    @property
    def cuts(self) -> np.ndarray:
        """The ordinal cut-points: 0 for two labels, -0.5 and 0.5 for three, evenly spread wider for more."""
        if self.n_labels == 2:
            return np.array([0.0])
        half = 0.3 * (self.n_labels - 1) - 0.1
        return np.linspace(-half, half, self.n_labels - 1)


def draw_test_set(population: Scenario, seed: int) -> tuple[AnnotationDataset, pd.DataFrame, pd.DataFrame]:
    """One test set drawn from ``population`` with ``seed``: the annotations (fully crossed) and A's and B's
    outputs, frames with columns ``item``, ``p_0`` and ``p_1``."""
    rng = np.random.default_rng(seed)
    n, r = population.n_items, population.n_raters
    score = rng.normal(0, 1, n)
    batch = np.arange(n) // (population.batch_size or n)
    if population.pool:  # each item's r raters drawn from the pool, or one of the pool's rater sets
        pool_bias = rng.normal(0, population.rater_sd, population.pool)
        choose = lambda count: np.argsort(rng.random((count, population.pool)), axis=1)[:, :r]  # noqa: E731
        who = choose(population.sets)[rng.integers(population.sets, size=n)] if population.sets else choose(n)
        bias = pool_bias[who]
    else:
        who = batch[:, None] * r + np.arange(r)
        bias = rng.normal(0, population.rater_sd, (batch[-1] + 1, r))[batch]  # each batch its own raters
    latent = score[:, None] + bias + rng.normal(0, population.noise_sd, (n, r))
    rating = (latent[..., None] > population.cuts).sum(-1)
    reversed_codes = rng.random(n) < 0.5  # ties to the lowest code favour neither system (module docstring)
    rating = np.where(reversed_codes[:, None], population.n_labels - 1 - rating, rating)
    item, column = np.divmod(np.arange(n * r), r)
    ds = from_codes(item, who[item, column], rating.ravel(), list(range(population.n_labels)),
                    batch[item] if population.batch_size else None, name=f"simulated-{seed}")

    def system(lean: float) -> pd.DataFrame:
        above = ndtr((score[:, None] + lean - population.cuts) / population.noise_sd)  # P(label > each cut)
        shares = -np.diff(np.column_stack([np.ones(n), above, np.zeros(n)]), axis=1)
        shares = np.where(reversed_codes[:, None], shares[:, ::-1], shares)
        return pd.DataFrame(shares, columns=[f"p_{c}" for c in range(population.n_labels)]).assign(item=np.arange(n))

    lean_b = -population.lean if population.lean_b is None else population.lean_b
    return ds, system(population.lean), system(lean_b)


def drawn_test_sets(population: Scenario,
                    n_sets: int) -> Iterator[tuple[AnnotationDataset, np.ndarray, np.ndarray, int]]:
    """``n_sets`` test sets of ``population`` (seeds 0, 1, ...), each as ``compare`` reads it: the annotations, A's
    and B's label shares per item, and the K it tests at."""
    for seed in range(n_sets):
        ds, a, b = draw_test_set(population, seed)
        yield ds, read_outputs(ds, a, "A").share, read_outputs(ds, b, "B").share, default_k(ds)


TESTS = ("rater-level", "percentile")  # compare's headline test under S1 and S3, and the earlier one


MODELLED = {"crossed": "S1", "batched": "S3", "sparse": "S4", "overlapping": "S4"}  # compare's default, by design


def calibration(population: Scenario = Scenario(), samplers=None, n_sets: int = 300,
                n_samples: int = 200, alpha: float = 0.05, seed: int = 0, metrics="all",
                progress: bool = False, tests=TESTS[:1]) -> pd.DataFrame:
    """Two-sided ``compare`` on ``n_sets`` test sets of ``population`` (seeds ``seed``, ``seed + 1``, ...), under
    each sampler (by default the one ``compare`` chooses for the population's design, and S2), with ``n_samples`` replicates each; under S1 and S3 by each of ``tests`` (:data:`TESTS`). With
    A and B equally good the share of p < ``alpha`` is the test's size; with A better (``lean_b``), its power.

    Returns
    -------
    One row per sampler, test and metric, columns ``sampler``, ``test``, ``metric``, ``n_sets``, ``rejected``
    (test sets with p < ``alpha``), ``share`` (their share), ``low`` and ``high`` (its Wilson 95 % band),
    ``share_given_ratings`` (the same share for ``p_given_ratings``), ``oracle`` (the share of test sets in which a
    two-sided z-test that knows the true standard deviation of delta, measured as the spread of the observed deltas
    over these test sets, rejects: :func:`oracle_share`).
    """
    if n_sets < 1 or not 0 < alpha < 1:
        raise ParameterError(f"n_sets must be >= 1 and alpha in (0, 1), got {n_sets} and {alpha}")
    samplers = samplers or (MODELLED[population.design], "S2")
    parts = []
    for offset in tqdm(range(n_sets), desc="calibration", unit="test set", disable=not progress, leave=False):
        ds, a, b = draw_test_set(population, seed + offset)
        for sampler in samplers:
            for test in (tests if sampler in RATER_LEVEL else TESTS[1:]):
                found = compare(ds, a, b, sampler=sampler, n_samples=n_samples, seed=seed + offset, two_sided=True,
                                metrics=metrics, percentile=test == TESTS[1])
                parts.append(found[["sampler", "metric", "p_value", "p_given_ratings", "delta"]].assign(test=test))
    table = pd.concat(parts, ignore_index=True)
    grouped = table.groupby(["sampler", "test", "metric"], sort=False)
    out = grouped.agg(n_sets=("p_value", "size"), rejected=("p_value", lambda p: int((p < alpha).sum())),
                      rejected_given=("p_given_ratings", lambda p: int((p < alpha).sum()))).reset_index()
    out["share"] = out["rejected"] / out["n_sets"]
    out["low"], out["high"] = wilson(out["rejected"].to_numpy(), n_sets)
    out["share_given_ratings"] = out.pop("rejected_given") / out["n_sets"]
    oracle = table.groupby(["sampler", "test", "metric"], sort=False)["delta"].apply(oracle_share, alpha=alpha)
    return out.merge(oracle.rename("oracle").reset_index(), on=["sampler", "test", "metric"])


def oracle_share(deltas: pd.Series, alpha: float = 0.05) -> float:
    """The share of test sets whose observed delta a two-sided z-test at ``alpha`` rejects when it knows delta's
    true standard deviation (METHOD's oracle), the spread of ``deltas`` over many fresh test sets standing for it."""
    from scipy.stats import norm

    sd = float(np.std(deltas, ddof=1)) if len(deltas) > 1 else 0.0
    if not sd > 0:
        return float("nan")
    return float((np.abs(deltas) / sd > norm.isf(alpha / 2)).mean())


def calibrations(populations: Mapping[Hashable, Scenario], n_jobs: int = 1, **options) -> dict:
    """:func:`calibration` of each population (``options`` passed on), by name, in ``n_jobs`` worker processes
    (:func:`analysis.experiment.workers.in_workers`); each call seeds its own test sets, so the tables are those of the
    calls made one by one."""
    return in_workers({name: partial(calibration, population, **options) for name, population in populations.items()},
                      n_jobs)


def contrast(population: Scenario = Scenario(), n_samples: int = 1000, seed: int = 0,
             metrics="all") -> pd.DataFrame:
    """One simulated test set compared under S1 and under S2 (two-sided); :func:`analysis.tools.compare.compare`'s
    columns, one row per sampler and metric."""
    ds, a, b = draw_test_set(population, seed)
    return pd.concat([compare(ds, a, b, sampler=s, n_samples=n_samples, seed=seed, two_sided=True, metrics=metrics)
                      for s in ("S1", "S2")], ignore_index=True)


def readable(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Calibration tables of several designs in one, as people read them and narrow enough for a page: one row per
    design and metric (its label), one column per sampler and test (``<sampler> <test>``) holding the share of
    p < alpha with its band."""
    from analysis.engine.metrics import METRIC_LABELS

    rows = {}
    for design, table in tables.items():
        for _, row in table.iterrows():
            rows.setdefault((design, METRIC_LABELS[row["metric"]]), {})[f"{row['sampler']} {row['test']}"] = (
                f"{share_text(row['share'], row['n_sets'])} [{_bound(row['low'])}, {_bound(row['high'])}]")
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.index = pd.MultiIndex.from_tuples(frame.index, names=["design", "metric"])
    return frame.reset_index()


def advice(sizes: dict[str, pd.DataFrame], powers: dict[str, pd.DataFrame], test: str = TESTS[0],
           sampler: str = "S1", alpha: float = 0.05) -> str:
    """What a user with each design's raters can conclude from ``test``'s p under ``sampler``, as Markdown bullets:
    per design (the keys of ``sizes`` and ``powers``, :func:`calibration`'s tables without and with a real
    difference) the range over the metrics of the share of p < ``alpha`` when neither system is better, and when A
    is; where the tables give their test sets and bands, how many sets and the highest rate their bands allow."""
    lines = []
    for design, size in sizes.items():
        chosen = [t[(t["sampler"] == sampler) & (t["test"] == test)] for t in (size, powers[design])]
        if any(c.empty for c in chosen):
            continue
        (low, high), (weak, strong) = ((c["share"].min(), c["share"].max()) for c in chosen)
        # read from the power itself: its best metric, and whether any metric lags behind it
        if strong < 0.2:
            reading = (f"with so few raters the test almost never detects a difference of this size, so a p above "
                       f"{alpha:g} says nothing about whether A and B differ")
        elif weak < 0.2:
            reading = (f"on some metrics the test almost never detects a difference of this size, and on the best "
                       f"it misses it in {1 - strong:.0%} of test sets, so a p above {alpha:g} says little about "
                       "whether A and B differ")
        elif weak < 0.8:  # a metric that misses it in over a fifth of test sets says little by its p alone
            reading = (f"the test misses a difference of this size in {_span(1 - strong, 1 - weak)} of test "
                       f"sets, so a p above {alpha:g} is weak evidence of no difference")
        else:
            reading = f"a p above {alpha:g} is fair evidence against a difference of this size"
        sets, allowed = "test sets", ""
        if {"n_sets", "high"} <= set(chosen[0].columns):
            sets = f"{int(chosen[0]['n_sets'].max()):,} test sets"
            allowed = f"; {sets} cannot tell that from a rate as high as {chosen[0]['high'].max():.0%}"
        lines.append(f"- **{design}**: a p below {alpha:g} came in {_span(low, high)} of {sets} where neither "
                     f"model was better (the level is {alpha:.0%}{allowed}), and in {_span(weak, strong)} where A "
                     f"was better; {reading}.")
    return "\n".join(lines)


def share_decimals(n_sets: int) -> int:
    """The decimals a share of ``n_sets`` test sets needs: the fewest (at most 3) that write every count's share
    exactly (4 sets: 2, "0.25"; 10 sets: 1; 500 sets: 3), else 3, so a share is never padded with zeros."""
    return next((d for d in range(3) if 10**d % int(n_sets) == 0), 3)


def share_text(share: float, n_sets: int) -> str:
    """A share of ``n_sets`` test sets, to :func:`share_decimals`' decimals."""
    return f"{share:.{share_decimals(n_sets)}f}"


def _bound(value: float) -> str:
    """An end of a share's band to three decimals, without trailing zeros (a rounded 0.48990 is "0.49")."""
    return f"{value:.3f}".rstrip("0").rstrip(".")


def _span(low: float, high: float, form: str = ".0%") -> str:
    """A range of shares (in percent by default, else in ``form``), one value where both ends print alike ("3%",
    not "3% to 3%")."""
    ends = f"{low:{form}}", f"{high:{form}}"
    return ends[0] if ends[0] == ends[1] else f"{ends[0]} to {ends[1]}"


def held_by(part: pd.DataFrame, alpha: float) -> int:
    """How many rows' 95 % bands hold ``alpha``."""
    return int(((part["low"] <= alpha) & (alpha <= part["high"])).sum())


def summary(tables: dict[str, pd.DataFrame], alpha: float = 0.05, power: bool = False) -> str:
    """What the calibration measured, in words: per design, sampler and test the range of the shares of p < alpha
    over the metrics, and whether ``alpha`` lies in every metric's band; with ``power`` (A truly better), the range
    alone, as the test's power."""
    parts = []
    for design, table in tables.items():
        for (sampler, test), part in table.groupby(["sampler", "test"], sort=False):
            shares = _span(part["share"].min(), part["share"].max(), f".{share_decimals(part['n_sets'].iloc[0])}f")
            if power:
                parts.append(f"{design} under {sampler} ({test}): {shares} ({int(part['n_sets'].iloc[0])} test sets)")
                continue
            held = ((part["low"] <= alpha) & (alpha <= part["high"])).all()
            above = (part["low"] > alpha).sum()
            parts.append(f"{design} under {sampler} ({test}): {shares} ({int(part['n_sets'].iloc[0])} test sets; "
                         + (f"on every metric consistent with {alpha:g}, which lies inside its 95 % band" if held else
                            f"on {above} of {len(part)} metrics too high, {alpha:g} lying below its 95 % band: too "
                            "many small p" if above else
                            f"on {len(part) - held_by(part, alpha)} of {len(part)} metrics too low, {alpha:g} lying "
                            "above its 95 % band, and on none too high: a cautious test") + ")")
    what = "When A is truly better, the power (the share of p < " if power else "The share of p < "
    return f"{what}{alpha:g}{')' if power else ''}, over the metrics: " + "; ".join(parts) + "."
