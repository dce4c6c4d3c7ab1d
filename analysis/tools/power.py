"""Planning a study (the methods page): the power of each design, the cheapest design that reaches a target power,
and the smallest effect a given design detects.

The power of a design (N items, K ratings each) is the share of its alternative replicates whose own p-value
(:func:`analysis.experiment.pvalues.replicate_p_values`) lies below ``alpha``, with a 95 % band for its Monte Carlo
error: Wilson's band of the studies, widened for the finite null's own error. Replicates come from the pilot data through :func:`analysis.experiment.grid.simulate_cell`, so a design
with more items than the pilot has resamples its items with replacement: an extrapolation, and labelled so. The effect
is ``epsilon`` or a target ``Delta`` for one metric, turned into ``epsilon`` by bisection at each K. A
design costs ``N * cost_item + N * K * cost_rating``. A design whose K exceeds the raters a replicate can draw from
(:func:`.raters_available`: an item's raters under S2 and S4, the pool under S1, a batch's raters under S3) redraws
the same people: it is marked as an extrapolation too, in the table, the summary and the figure. Under S1, S3 and S4
the number of distinct raters bounds the power, and a plan keeps the pilot's raters, unless it is given numbers of raters R to plan
(``raters``, ``--raters``): then each R's designs are simulated on studies drawn from a population model fitted to the
pilot (:mod:`analysis.tools.modelled`), beside the pilot's own R, and marked as modelled: their power is the fitted
model's, and their band spans the bands at the two ends of the fitted rater share's interval as well (the same
studies' seeds drawn there, half the replicates), so that it carries what the pilot leaves unknown of its raters.
With ``test="compare"`` the power is instead ``compare``'s own test's, on studies drawn from the pilot
(:mod:`analysis.tools.study_power`).
"""

from __future__ import annotations

import math
import sys
from dataclasses import asdict, dataclass, field, replace

import numpy as np
import pandas as pd
from tqdm import tqdm

from analysis.data.annotations import AnnotationDataset
from analysis.errors import ParameterError, TopologyError
from analysis.experiment.cache import engine_fingerprint
from analysis.experiment.grid import ALPHA, Cell, simulate_cell
from analysis.experiment.workers import check_jobs
from analysis.experiment.timing import FIRST_COMPILE_SECONDS, kernels_compiled
from analysis.engine.metrics import METRIC_LABELS, METRICS, averaged, check_metrics
from analysis.experiment.pvalues import replicate_p_values
from analysis.engine.samplers import allowed_samplers, check_sampler, default_sampler, raters_available
from analysis.data import population as populations
from analysis.tools import rater_level
from analysis.tools.compare import N_SAMPLES, default_k
from analysis.tools import study_power
from analysis.tools.bands import Z95, wilson
from analysis.tools.modelled import PANELS, check_plan_raters, study
from analysis.tools.study_power import StudyPower
from analysis.engine import Simulator, check_perturbation
from analysis.experiment.choices import BOOK, selected

BISECTION_STEPS = 7  # epsilon to within 1/128
DEFAULT_N_FACTORS = (0.25, 0.5, 1, 2, 4, 8, 16)  # default item counts, as multiples of the pilot's
PROGRESS_DELAY = 1.0  # seconds before the progress bar shows: none for a plan that is quick
NULL_RESAMPLES = 100  # resamples of the null that measure its part of a power's Monte Carlo error
#: Whose test a plan's power is (``test``): the paper's, on simulated replicates, or compare's own, on simulated
#: studies (:mod:`analysis.tools.study_power`).
TESTS = ("paper", "compare")
#: What each test's power is, for every place that reports one (benchmarks/plan_against_compare.py measured both).
WHOSE_TEST = {
    "paper": ("It is the power of the paper's test, A and B simulated as raters' responses; compare's test of two "
              "fixed systems' outputs has proved more powerful at the same Δ on MAE and JSD (the methods page, "
              "\"How a plan reads its power\"; `plan --test compare` plans that test itself)."),
    "compare": ("It is the power of compare's own test: the share of simulated studies, each drawn from the pilot "
                "with two fixed systems' answers, in which compare's headline test gives p below alpha (the methods "
                "page, \"How a plan reads its power\")."),
}


def power_band(power: np.ndarray, n_alt: int, null_sd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The 95 % band of a power estimated from ``n_alt`` alternative replicates, each judged against one finite
    null: the Wilson band of the binomial part, each side widened in quadrature by the null's part (``null_sd``,
    :meth:`Planner.null_spread`)."""
    low, high = wilson(np.rint(power * n_alt), n_alt)
    extra = (Z95 * np.asarray(null_sd)) ** 2
    return (np.clip(power - np.sqrt((power - low) ** 2 + extra), 0, 1),
            np.clip(power + np.sqrt((high - power) ** 2 + extra), 0, 1))


def design_cost(n, k, cost_item: float, cost_rating: float):
    """What N items with K ratings each cost."""
    return np.asarray(n) * cost_item + np.asarray(n) * np.asarray(k) * cost_rating


@dataclass
class Planner:
    """Simulates designs on one pilot dataset and sampler, or on ``studies`` drawn from a population (the
    replicates shared out among them and pooled); results are kept per (N, K, epsilon)."""

    ds: AnnotationDataset
    sampler: str
    n_samples: int = 200
    seed: int = 0
    alpha: float = ALPHA
    perturbation: str = BOOK.perturbation
    progress: tqdm | None = field(default=None, repr=False)  # advanced by one per simulated design
    studies: tuple = field(default=(), repr=False)
    metrics: tuple = METRICS  # what it simulates; powers and Deltas come in its (the registry's) order
    _done: dict = field(default_factory=dict, repr=False)
    _replicates: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):  # each study its own stream; the metrics in the simulator's order
        self.metrics = check_metrics(self.metrics)
        seeds = [int(np.random.SeedSequence([self.seed, i]).generate_state(1)[0]) for i in range(len(self.studies))]
        self.simulators = [(Simulator(d, self.sampler, **BOOK.engine(), metrics=self.metrics), s)
                           for d, s in zip(self.studies or (self.ds,), seeds or [self.seed])]

    def cell(self, n: int, k: int, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
        """(power, Delta) per metric (in :attr:`metrics`' order) of N items with K ratings each at ``epsilon``."""
        key = (int(n), int(k), round(float(epsilon), 9))
        if key not in self._done:
            cell = Cell(self.sampler, self.perturbation, key[2], n * k, k)
            shares = np.diff(np.linspace(0, self.n_samples, len(self.simulators) + 1).astype(int))
            parts = [simulate_cell(sim, cell, int(share), seed) for (sim, seed), share in zip(self.simulators, shares)]
            alt, null = (np.concatenate(part) for part in zip(*parts))
            self._done[key] = self.power(alt, null), alt.mean(0)
            self._replicates[key] = alt, null
            if self.progress is not None:
                self.progress.update()
        return self._done[key]

    @property
    def group_size(self) -> int:
        """The items of the pilot's median group (a batch under S3)."""
        return self.simulators[0][0].layout.group_size

    def band(self, n: int, k: int, epsilon: float, metrics) -> tuple[np.ndarray, np.ndarray]:
        """The 95 % band of every metric's power at (N, K, epsilon): :func:`power_band` with the null's part
        measured for ``metrics`` (indices)."""
        return power_band(self.cell(n, k, epsilon)[0], self.n_samples, self.null_spread(n, k, epsilon, metrics))

    def power(self, alt: np.ndarray, null: np.ndarray, metrics=None) -> np.ndarray:
        """Per metric (of ``metrics``, indices; by default all), the share of alternative replicates whose own
        p-value against ``null`` is below alpha."""
        return np.array([(replicate_p_values(null[:, m], alt[:, m]) < self.alpha).mean()
                         for m in (range(len(self.metrics)) if metrics is None else metrics)])

    def null_spread(self, n: int, k: int, epsilon: float, metrics=None) -> np.ndarray:
        """Per metric (0 for those not among ``metrics``, indices), the standard deviation of a simulated design's
        power over resamples of its null (the alternative held): the part of the Monte Carlo error that judging
        every replicate against one finite null adds to the binomial part. Seeded by the design, so the same plan
        gives the same bands."""
        key = (int(n), int(k), round(float(epsilon), 9))
        self.cell(*key)
        alt, null = self._replicates[key]
        which = list(range(len(self.metrics))) if metrics is None else list(metrics)
        rng = np.random.default_rng([self.seed, key[0], key[1], int(key[2] * 1e9)])
        picks = rng.integers(0, len(null), (NULL_RESAMPLES, len(null)))
        out = np.zeros(len(self.metrics))
        out[which] = np.array([self.power(alt, null[pick], which) for pick in picks]).std(0, ddof=1)
        return out

    def smallest_epsilon(self, n: int, k: int, metric: int, target: float) -> float | None:
        """The smallest epsilon (to 1/128) whose power reaches ``target`` at (N, K); None if epsilon 1 does not."""
        if self.cell(n, k, 1.0)[0][metric] < target:
            return None
        low, high = 0.0, 1.0
        for _ in range(BISECTION_STEPS):
            mid = (low + high) / 2
            low, high = (low, mid) if self.cell(n, k, mid)[0][metric] >= target else (mid, high)
        return high

    def epsilon_for(self, n: int, k: int, metric: int, delta: float) -> float:
        """The smallest epsilon (to 1/1024) whose mean Delta of ``metric`` at (N, K) reaches ``delta`` (bisection)."""
        largest = self.cell(n, k, 1.0)[1][metric]
        if not 0 < delta <= largest:
            raise ParameterError(f"a target Delta of {delta:g} for {METRIC_LABELS[self.metrics[metric]]} is out of "
                                 f"reach: at N = {n}, K = {k} the pilot gives Delta between 0 and {largest:.4g} (epsilon 1)")
        low, high = 0.0, 1.0
        for _ in range(BISECTION_STEPS + 3):
            mid = (low + high) / 2
            low, high = (mid, high) if self.cell(n, k, mid)[1][metric] < delta else (low, mid)
        return high


def pilot_design(ds: AnnotationDataset) -> tuple[int, int]:
    """The pilot's own design: its items, and the median number of ratings per item (:func:`.default_k`)."""
    return ds.n_items, default_k(ds)


def default_grid(ds: AnnotationDataset, sampler: str = "S2") -> tuple[list[int], list[int]]:
    """Item counts from a quarter to sixteen times the pilot's; K from 1 to 20 and twice the pilot's, up to the
    raters available (:func:`.raters_available`), since a larger K only redraws the same people."""
    n, k = pilot_design(ds)
    ns = sorted({max(2, int(round(n * f))) for f in DEFAULT_N_FACTORS})
    return ns, candidate_ks(k, max(1, raters_available(ds, sampler)))


def candidate_ks(pilot_k: int, raters: int) -> list[int]:
    """K from 1 to 20 and the pilot's K and twice it, up to ``raters``."""
    return sorted(v for v in {1, 2, 3, 5, 10, 20, pilot_k, 2 * pilot_k} if v <= raters)


def smallest_alpha(n_samples: int) -> float:
    """The smallest significance level ``n_samples`` null replicates resolve: a replicate's p-value moves in steps
    of ``1 / n_samples``, and one of 0 (no null replicate at or above it) counts as significant at any alpha."""
    return 1 / n_samples


def check_alpha(alpha: float, n_samples: int) -> None:
    """Refuse an alpha below :func:`smallest_alpha`, naming that alpha and the replicates the given one needs."""
    if alpha * n_samples < 1 - 1e-9:
        raise ParameterError(f"alpha (--alpha) {alpha:g} is below what {n_samples} replicates (--n-samples) can "
                             f"resolve: the smallest resolvable alpha is {smallest_alpha(n_samples):g}; give "
                             f"--n-samples {math.ceil(1 / alpha - 1e-9)} or more, or a larger --alpha")


def check_plan(cost_item: float, cost_rating: float, power: float, alpha: float, epsilon: float | None,
               target_delta: tuple[str, float] | None, n_samples: int = 200, seed: int = 0,
               test: str = TESTS[0]) -> None:
    """Refuse what no plan can mean: negative costs, probabilities outside (0, 1), no effect or two effects, too
    few replicates, an alpha they cannot resolve (under compare's test, its own replicates), an unknown test."""
    if test not in TESTS:
        raise ParameterError(f"test (--test) must be one of {', '.join(TESTS)}, got {test!r}")
    for name, value in (("cost_item (--cost-item)", cost_item), ("cost_rating (--cost-rating)", cost_rating)):
        if not value >= 0:
            raise ParameterError(f"{name} must be >= 0, got {value:g}")
    if cost_item == 0 and cost_rating == 0:
        raise ParameterError("cost_item and cost_rating are both 0: every design would cost nothing")
    for name, value in (("power (--power)", power), ("alpha (--alpha)", alpha)):
        if not 0 < value < 1:
            raise ParameterError(f"{name} must lie in (0, 1), got {value:g}")
    if (epsilon is None) == (target_delta is None):
        raise ParameterError("give the effect either as epsilon or as a target Delta (METRIC=VALUE), not both")
    if epsilon is not None and not 0 < epsilon <= 1:
        raise ParameterError(f"the effect (--epsilon) must lie in (0, 1], got {epsilon:g}")
    if int(n_samples) != n_samples or n_samples < 2:
        raise ParameterError(f"n_samples must be an integer >= 2, got {n_samples!r}")
    check_alpha(alpha, N_SAMPLES if test == "compare" else int(n_samples))
    if int(seed) != seed or seed < 0:
        raise ParameterError(f"the seed (--seed) must be an integer >= 0, got {seed!r}")


@dataclass
class Plan:
    """What :func:`plan` found: every design's power, the cheapest per metric, the pilot's own design."""

    designs: pd.DataFrame  # metric, N, K, cost, power, power_low, power_high, delta, extrapolated, beyond_raters
    cheapest: pd.DataFrame  # per metric: the designs' columns for the cheapest reaching the target (NaN if none)
    pilot: pd.DataFrame  # metric, N, K, cost, power, power_low, power_high, smallest_epsilon, smallest_delta
    epsilon: float
    target: float
    provenance: dict  # dataset, data_sha256, engine, raters (available to a drawn item), parameters (, population)

    @property
    def test(self) -> str:
        """Whose test the power is (:data:`TESTS`); a plan saved before there was a choice is the paper's."""
        return self.provenance["parameters"].get("test", TESTS[0])


def plan(ds: AnnotationDataset, sampler: str | None = None, epsilon: float | None = None,
         target_delta: tuple[str, float] | None = None, ns=None, ks=None, cost_item: float = 0.0,
         cost_rating: float = 1.0, power: float = 0.8, alpha: float = ALPHA, n_samples: int = 200, seed: int = 0,
         metrics="all", perturbation: str | None = None, progress: bool = False, raters=None,
         pilots: int = populations.PILOTS, averaging: str = BOOK.averaging, test: str = TESTS[0],
         n_jobs: int = 1) -> Plan:
    """Power of every (N, K) of the grid (``ns`` x ``ks``; by default around the pilot's design), the cheapest
    design reaching ``power`` per metric, and the pilot's own power and smallest detectable epsilon.

    Parameters
    ----------
    ds : AnnotationDataset
        The pilot.
    sampler : str, optional
        ``"S1"`` to ``"S4"``; default: the one that models raters as the pilot's design allows.
    epsilon : float, optional
        The perturbation strength to plan for; or give ``target_delta``.
    target_delta : (str, float), optional
        A metric and the effect Delta on it to detect; at each K the epsilon that gives it is planned.
    ns, ks : sequence of int, optional
        Items N and ratings per item K of the grid (default: around the pilot's design).
    cost_item : float, default 0
        The cost of an item.
    cost_rating : float, default 1
        The cost of a rating.
    power : float, default 0.8
        The power a design must reach.
    alpha : float, default 0.05
        The level of the one-sided test.
    n_samples : int, default 200
        Replicates per design (the paper's test), or studies per design (compare's).
    seed : int, default 0
        The seed; the same seed gives the same plan.
    metrics : "all" or sequence of str, default "all"
        The metrics; ``"all"``: the eight, with precision, recall and F1 averaged by ``averaging``.
    perturbation : str, optional
        The noise law of B; default: the book's (``BOOK.perturbation``, the one-label law), the only one under
        compare's test.
    progress : bool, default False
        A bar of simulated designs on standard error.
    raters : sequence of int, optional
        Numbers of distinct raters R to plan a new study with: for each R, the designs with K <= R simulated on
        studies with R raters drawn from a population model fitted to the pilot (:mod:`analysis.tools.modelled`;
        S4 plans a sparse study's pool). The default Ks for R are the default grid's up to R.
    pilots : int
        Simulated pilots per rater share when fitting the population model.
    averaging : str, default the book's (``"macro"``)
        How ``"all"`` averages precision, recall and F1 over the labels (``"weighted"``, ``"macro"``,
        ``"macro-all"`` or ``"micro"``).
    test : {"paper", "compare"}, default "paper"
        Whose test's power: the paper's, on ``n_samples`` simulated replicates against a simulated null, or
        ``compare``'s own headline test, run on each of ``n_samples`` studies drawn from the pilot with two fixed
        systems (:mod:`analysis.tools.study_power`; its bands are Wilson's; no smallest effect is searched; no
        ``raters``).
    n_jobs : int, default 1
        Worker processes that test each design's studies under compare's test (the same plan for any number).

    Returns
    -------
    Plan
        ``designs``: one row per metric and design: metric, N, K, cost, power, power_low, power_high (its 95 %
        band: Wilson's, widened for the null's Monte Carlo error), delta (the mean Delta), extrapolated (N above the pilot's items) and beyond_raters (K above
        :func:`.raters_available`); with ``raters``, also R and modelled (True for the modelled designs, False for
        the pilot's own, whose R is :func:`.raters_available`). ``cheapest``: the cheapest design per metric.
        ``pilot``: the pilot's own power, and with ``raters`` the best power a design of the pilot's own R reaches
        within its raters.
    """

    check_plan(cost_item, cost_rating, power, alpha, epsilon, target_delta, n_samples, seed, test)
    if test == "compare" and raters is not None:
        raise ParameterError("--raters plans under the paper's test only (--test paper): compare's test is "
                             "simulated on studies drawn from the pilot's own raters")
    if perturbation is None:
        perturbation = study_power.LAW if test == "compare" else BOOK.perturbation
    elif test == "compare" and perturbation != study_power.LAW:
        raise ParameterError(f"compare's test is planned with B's answers under the {study_power.LAW} law only, "
                             f"got {perturbation!r}")
    chosen = selected(metrics, replace(BOOK, averaging=averaging))
    sampler = check_sampler(sampler or default_sampler(ds))
    if sampler not in allowed_samplers(ds):
        raise TopologyError(f"{sampler} does not run on {ds.name!r}, whose design is {ds.topology.kind}; its design "
                            f"allows {', '.join(allowed_samplers(ds))}")
    grid_ns, grid_ks = default_grid(ds, sampler)
    given = sorted(set(ks)) if ks else None
    ns, ks = sorted(set(ns or grid_ns)), given or grid_ks
    if min(ns + ks) < 1:
        raise ParameterError(f"N and K values must be >= 1, got {min(ns + ks)}")
    modelled = {}  # R: its Ks, those given, else the default grid's up to R
    if raters is not None:
        modelled = {r: [k for k in given or candidate_ks(pilot_design(ds)[1], r) if k <= r]
                    for r in check_plan_raters(raters, sampler, given)}
    searches = (len(ks) + 1) * (BISECTION_STEPS + 4) if target_delta else 0
    searches += len(chosen) * (BISECTION_STEPS + 1)
    compiling = progress and test == "paper" and not kernels_compiled()  # compare's test runs no kernel
    if compiling:  # the first design waits for the compiler: an estimate of the time left would be far off
        print(f"compiling the kernels (once per install, about {FIRST_COMPILE_SECONDS[0]}-{FIRST_COMPILE_SECONDS[1]} "
              "s); no estimate of the time left this run", file=sys.stderr)
    unit = "step" if modelled else "design"  # planning R counts the population model's simulated pilots too
    # a modelled design is simulated at the fitted rho and at the ends of its interval
    total = len(ns) * (len(ks) + 3 * sum(map(len, modelled.values()))) + searches + (pilots if modelled else 0)
    if test == "compare":  # every study of each design and of the pilot's (the target's search tests none)
        unit, total = "study", (len(ns) * len(ks) + 1) * int(n_samples)
    bar = tqdm(total=total,
               desc=f"plan {ds.name} {sampler}", unit=unit, disable=not progress, file=sys.stderr, delay=PROGRESS_DELAY,
               bar_format=f"{{desc}}: {{n_fmt}}/{{total_fmt}} {unit}s [{{elapsed}}]" if compiling else None)
    target = check_metrics([target_delta[0]]) if target_delta is not None else ()
    simulated = tuple(dict.fromkeys((*averaged(averaging), *chosen, *target)))  # the target's metric too
    if test == "compare":
        # only the metrics asked for: each study's test costs per metric, the distribution metrics' the most
        planner = StudyPower(ds, sampler, tuple(dict.fromkeys((*chosen, *target))), studies=int(n_samples),
                             seed=int(seed), alpha=alpha, jobs=check_jobs(n_jobs),
                             max_n=max(ns + [ds.n_items]), max_k=max(ks + [pilot_design(ds)[1]]), progress=bar)
    else:
        planner = Planner(ds, sampler, int(n_samples), int(seed), alpha, check_perturbation(perturbation), bar,
                          metrics=simulated)
    if test == "compare" and progress:  # its studies' cost grows with N and the metrics: say it before it starts
        designs = [(n, k) for n in ns for k in ks] + [pilot_design(ds)]
        seconds = planner.seconds(designs) / planner.jobs
        print(f"testing {len(designs) * int(n_samples):,} studies with compare's test: about "
              f"{seconds / 60:,.0f} min (one study of the largest design timed); fewer --ns, --ks, --metrics or "
              "--n-samples, or more --jobs, take less", file=sys.stderr)
    with bar:
        result = _plan(planner, chosen, epsilon, target_delta, ns, ks, cost_item, cost_rating, power, modelled, pilots,
                       test)
        bar.total = bar.n  # the searches stop early where the power is reached or never is
    result.provenance["parameters"]["averaging"] = averaging
    return result


def _rows(planner: Planner, chosen, epsilons: dict, ns, ks, cost_item, cost_rating, items: int, raters: int,
          pool: int) -> list:
    """One row per metric and design of the grid ``ns`` x ``ks`` (at ``epsilons[K]``), simulated by ``planner``;
    ``items`` and ``raters`` are what the pilot has, beyond which a design is an extrapolation; ``pool`` the
    distinct raters of a simulated study (S4's pool), for :func:`reachable`."""
    rows = []
    for n in ns:
        for k in ks:
            if k not in epsilons:
                continue
            powers, effect = planner.cell(n, k, epsilons[k])
            asked = [planner.metrics.index(m) for m in chosen]
            low, high = planner.band(n, k, epsilons[k], asked)
            for m, metric in zip(asked, chosen):
                rows.append({"metric": metric, "N": n, "K": k, "epsilon": epsilons[k],
                             "cost": float(design_cost(n, k, cost_item, cost_rating)),
                             "power": powers[m], "power_low": low[m], "power_high": high[m], "delta": effect[m],
                             "extrapolated": n > items, "beyond_raters": k > raters,
                             "can_reject": reachable(planner, metric, n, k, pool)})
    return rows


def reachable(planner: Planner, metric: str, n: int, k: int, pool: int) -> bool:
    """Whether ``compare``'s own test (:mod:`analysis.tools.rater_level`, one-sided at the plan's alpha, its default
    replicates) can reject at all on a study of this design: a companion metric's p has a floor set by the study's
    raters (K crossed raters under S1, K per batch under S3, the pool under S4). Under S2 no rater floor applies."""
    if metric not in rater_level.COMPANION or planner.sampler == "S2":
        return True
    groups = -(-n // planner.group_size) if planner.sampler == "S3" else 1  # the batches S3 draws for N items
    per_group = pool if planner.sampler == "S4" else k
    return rater_level.smallest_p(per_group, groups, n, N_SAMPLES) < planner.alpha


def monotone(designs: pd.DataFrame) -> pd.DataFrame:
    """Power that cannot fall as N grows (module docstring): per metric, K (and R), an isotonic regression of the
    simulated power on N, each design weighted by the inverse variance its band implies; designs pooled into one
    run take its weighted mean, and a band that holds both that mean's band and their own (their true powers may
    still rise within the run). Designs where ``compare``'s test cannot reject get power 0.
    The simulated power stays as ``simulated_power``."""
    from scipy.optimize import isotonic_regression

    out = designs.assign(simulated_power=designs["power"])
    keys = ["metric", "K"] + [c for c in ("R", "modelled") if c in designs]
    for _, group in out.groupby(keys, sort=False):
        group = group.sort_values("N")
        sd = np.maximum((group["power_high"] - group["power_low"]).to_numpy() / (2 * Z95), 1e-6)
        weights = 1 / sd**2
        fit = isotonic_regression(group["power"].to_numpy(), weights=weights)
        start = 0
        for size in np.diff(fit.blocks):
            rows = group.index[start:start + size]
            if size > 1:
                pooled_sd = 1 / np.sqrt(weights[start:start + size].sum())
                level = fit.x[start]
                out.loc[rows, "power"] = level
                out.loc[rows, "power_low"] = np.minimum(max(0.0, level - Z95 * pooled_sd), group.loc[rows, "power_low"])
                out.loc[rows, "power_high"] = np.maximum(min(1.0, level + Z95 * pooled_sd),
                                                         group.loc[rows, "power_high"])
            start += size
    out.loc[~out["can_reject"], ["power", "power_low", "power_high"]] = 0.0
    return out


def _plan(planner: Planner | StudyPower, chosen, epsilon, target_delta, ns, ks, cost_item, cost_rating, power,
          modelled: dict, pilots: int, test: str) -> Plan:
    """:func:`plan`'s work once its arguments are checked; ``modelled`` maps each R to plan to its Ks."""
    ds, n_samples = planner.ds, planner.n_samples
    raters = raters_available(ds, planner.sampler)
    pilot_n, pilot_k = pilot_design(ds)
    every_k = sorted(set(ks) | {k for r_ks in modelled.values() for k in r_ks} | {pilot_k})
    epsilons, out_of_reach = dict.fromkeys(every_k, epsilon), []
    if target_delta is not None:  # the effect held at every K: the epsilon that gives the target Delta at each
        metric, value = target_delta
        m = planner.metrics.index(check_metrics([metric])[0])
        epsilon = planner.epsilon_for(pilot_n, pilot_k, m, value)  # out of reach at the pilot's design: an error
        for k in every_k:
            try:
                epsilons[k] = planner.epsilon_for(pilot_n, k, m, value)
            except ParameterError:
                del epsilons[k]
                out_of_reach.append(k)
    pool = ds.n_raters
    designs = pd.DataFrame(_rows(planner, chosen, epsilons, ns, ks, cost_item, cost_rating, ds.n_items, raters, pool))
    population = None
    if modelled:  # R: the distinct raters of the pilot's studies (S4: its pool; else those a drawn item comes from)
        designs = designs.assign(R=ds.n_raters if planner.sampler == "S4" else raters, modelled=False)
        planner.progress.set_description_str(f"plan {ds.name} {planner.sampler}: fitting a population model")
        population = populations.fit(ds, planner.seed, pilots=pilots, progress=planner.progress)
        for r, r_ks in modelled.items():
            planner.progress.set_description_str(f"plan {ds.name} {planner.sampler}: R = {r}, modelled")
            tables = []
            per_item = min(r, raters) if planner.sampler == "S4" else r  # S4: an item's raters, of the pool
            ends = max(1, n_samples // 2)  # the interval's ends: half the replicates, their bands the wider for it
            for model, samples in ((population, n_samples), *((end, ends) for end in population.interval_ends())):
                studies = tuple(study(model, ds, planner.sampler, max(ns + [ds.n_items]), r, planner.seed, panel)
                                for panel in range(min(PANELS, samples)))  # the same studies' seeds at each rho
                simulated = Planner(ds, planner.sampler, samples, planner.seed, planner.alpha, planner.perturbation,
                                    planner.progress, studies, planner.metrics)
                tables.append(pd.DataFrame(_rows(simulated, chosen, epsilons, ns, r_ks, cost_item, cost_rating,
                                                 ds.n_items, per_item, r)))
            rows = tables[0].assign(power_low=np.minimum.reduce([t["power_low"].to_numpy() for t in tables]),
                                    power_high=np.maximum.reduce([t["power_high"].to_numpy() for t in tables]))
            designs = pd.concat([designs, rows.assign(R=r, modelled=True)], ignore_index=True)
        planner.progress.set_description_str(f"plan {ds.name} {planner.sampler}")
    designs = monotone(designs)
    pilot_rows = []
    searched = isinstance(planner, Planner)  # compare's test: each step of the search would test every study again
    powers, _ = planner.cell(pilot_n, pilot_k, epsilon)
    asked = [planner.metrics.index(m) for m in chosen]
    lows, highs = planner.band(pilot_n, pilot_k, epsilon, asked)
    for m, metric in zip(asked, chosen):
        can = reachable(planner, metric, pilot_n, pilot_k, pool)
        smallest = planner.smallest_epsilon(pilot_n, pilot_k, m, power) if can and searched else None
        pilot_rows.append({"metric": metric, "N": pilot_n, "K": pilot_k,
                           "cost": float(design_cost(pilot_n, pilot_k, cost_item, cost_rating)),
                           "power": powers[m] * can, "power_low": float(lows[m]) * can,
                           "power_high": float(highs[m]) * can, "can_reject": can,
                           "smallest_epsilon": smallest,
                           "smallest_delta": np.nan if smallest is None else
                           planner.cell(pilot_n, pilot_k, smallest)[1][m],
                           **(_best(designs, metric) if modelled else {})})
    provenance = {"dataset": ds.name, "data_sha256": ds.sha256, "engine": engine_fingerprint(), "raters": raters,
                  "pool": ds.n_raters,
                  "parameters": {"sampler": planner.sampler, "epsilon": epsilon, "target_delta": target_delta,
                                 "ns": ns, "ks": ks, "cost_item": cost_item, "cost_rating": cost_rating, "power": power,
                                 "alpha": planner.alpha, "n_samples": int(n_samples), "seed": int(planner.seed),
                                 "perturbation": planner.perturbation, "test": test},
                  "out_of_reach_ks": out_of_reach}
    if population is not None:
        provenance["parameters"].update(raters=list(modelled), pilots=pilots)
        provenance["population"] = {**asdict(population), "description": population.describe()}
    return Plan(designs, cheapest(designs, power), pd.DataFrame(pilot_rows), float(epsilon), power, provenance)


def _best(designs: pd.DataFrame, metric: str) -> dict:
    """The most power a design of the pilot's own R reaches within its raters (K up to them), and that design."""
    own = designs[(designs["metric"] == metric) & ~designs["modelled"] & ~designs["beyond_raters"]]
    if own.empty:
        return {"best_power": np.nan, "best_N": np.nan, "best_K": np.nan}
    top = own.sort_values(["power", "cost"], ascending=[False, True]).iloc[0]
    return {"best_power": top["power"], "best_N": top["N"], "best_K": top["K"]}


def beyond_pilot(designs: pd.DataFrame) -> pd.Series:
    """Which designs extrapolate: more items than the pilot has, a K beyond the raters a drawn item comes from, or
    (planning R) more raters than the pilot's own."""
    far = designs["extrapolated"].astype(bool) | designs["beyond_raters"].astype(bool)
    if "R" in designs:
        own = designs.loc[~designs["modelled"].astype(bool), "R"].max()
        far |= designs["R"] > own
    return far


def cheapest(designs: pd.DataFrame, target: float) -> pd.DataFrame:
    """Per metric, the cheapest design whose power reaches ``target``; on equal cost, one within the pilot's items
    and raters before an extrapolation (:func:`beyond_pilot`), then fewer raters, the pilot's own before a modelled
    one, then more power. The columns of ``designs``; NaN but ``metric`` where none does."""
    rows = []
    order = ["cost", "_far", "R", "modelled", "power"] if "R" in designs else ["cost", "_far", "power"]
    ranked = designs.assign(_far=beyond_pilot(designs))
    for metric, group in ranked.groupby("metric", sort=False):
        enough = group[group["power"] >= target].sort_values(order, ascending=[True] * (len(order) - 1) + [False])
        rows.append(enough.iloc[0] if len(enough) else pd.Series({"metric": metric}, index=designs.columns))
    return pd.DataFrame(rows, columns=designs.columns).reset_index(drop=True)
