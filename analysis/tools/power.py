"""Planning a study (the methods page): the power of each design, the cheapest design that reaches a target power,
and the smallest effect a given design detects.

The power of a design (N items, K ratings each) is the share of its alternative replicates whose own p-value
(:func:`analysis.experiment.pvalues.replicate_p_values`) lies below ``alpha``, with a Wilson 95 % band for its Monte
Carlo error. Replicates come from the pilot data through :func:`analysis.experiment.grid.simulate_cell`, so a design
with more items than the pilot has resamples its items with replacement: an extrapolation, and labelled so. The effect
is ``epsilon`` or a target ``Delta`` for one metric, turned into ``epsilon`` by bisection at the pilot's own design. A
design costs ``N * cost_item + N * K * cost_rating``. A design whose K exceeds the raters a replicate can draw from
(:func:`.raters_available`: an item's raters under S2, the pool under S1, a batch's raters under S3) redraws the same
people: it is marked as an extrapolation too, in the table, the summary and the figure. Under S1 and S3 the number of
distinct raters bounds the power, and a plan keeps the pilot's raters, unless it is given numbers of raters R to plan
(``raters``, ``--raters``): then each R's designs are simulated on studies drawn from a population model fitted to the
pilot (:mod:`analysis.tools.modelled`), beside the pilot's own R, and marked as modelled.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd
from tqdm import tqdm

from analysis.data.annotations import AnnotationDataset
from analysis.errors import ParameterError
from analysis.experiment.cache import engine_fingerprint
from analysis.experiment.grid import ALPHA, Cell, simulate_cell
from analysis.experiment.timing import FIRST_COMPILE_SECONDS, kernels_compiled
from analysis.io import json_ready, output_file, replace_atomic, write_atomic
from analysis.engine.metrics import METRIC_LABELS, METRICS, check_metrics
from analysis.tools.options import data_arguments, ints, load_data
from analysis.experiment.pvalues import replicate_p_values
from analysis.engine.samplers import SAMPLERS, check_sampler, default_sampler, raters_available
from analysis.data import population as populations
from analysis.tools.modelled import PANELS, check_plan_raters, study
from analysis.engine import DEFAULT, Simulator, check_perturbation
from analysis.experiment.choices import BOOK

Z95 = 1.959963984540054
BISECTION_STEPS = 7  # epsilon to within 1/128
DEFAULT_N_FACTORS = (0.25, 0.5, 1, 2, 4, 8, 16)  # default item counts, as multiples of the pilot's
PROGRESS_DELAY = 1.0  # seconds before the progress bar shows: none for a plan that is quick


def wilson(successes: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Wilson 95 % band of a binomial share ``successes / n``."""
    share = np.asarray(successes, float) / n
    centre = (share + Z95**2 / (2 * n)) / (1 + Z95**2 / n)
    half = Z95 / (1 + Z95**2 / n) * np.sqrt(share * (1 - share) / n + Z95**2 / (4 * n**2))
    return centre - half, centre + half


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
    perturbation: str = DEFAULT  # not the book's: the population model is checked under Dirichlet noise
    progress: tqdm | None = field(default=None, repr=False)  # advanced by one per simulated design
    studies: tuple = field(default=(), repr=False)
    _done: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):  # each study its own stream
        seeds = [int(np.random.SeedSequence([self.seed, i]).generate_state(1)[0]) for i in range(len(self.studies))]
        self.simulators = [(Simulator(d, self.sampler, smoothing=BOOK.smoothing), s)  # the book's smoothing
                           for d, s in zip(self.studies or (self.ds,), seeds or [self.seed])]

    def cell(self, n: int, k: int, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
        """(power, Delta) per metric (METRICS order) of N items with K ratings each at ``epsilon``."""
        key = (int(n), int(k), round(float(epsilon), 9))
        if key not in self._done:
            cell = Cell(self.sampler, self.perturbation, key[2], n * k, k)
            shares = np.diff(np.linspace(0, self.n_samples, len(self.simulators) + 1).astype(int))
            parts = [simulate_cell(sim, cell, int(share), seed) for (sim, seed), share in zip(self.simulators, shares)]
            alt, null = (np.concatenate(part) for part in zip(*parts))
            power = np.array([(replicate_p_values(null[:, m], alt[:, m]) < self.alpha).mean()
                              for m in range(len(METRICS))])
            self._done[key] = power, alt.mean(0)
            if self.progress is not None:
                self.progress.update()
        return self._done[key]

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
            raise ParameterError(f"a target Delta of {delta:g} for {metric_name(metric)} is out of reach: at "
                                 f"N = {n}, K = {k} the pilot gives Delta between 0 and {largest:.4g} (epsilon 1)")
        low, high = 0.0, 1.0
        for _ in range(BISECTION_STEPS + 3):
            mid = (low + high) / 2
            low, high = (mid, high) if self.cell(n, k, mid)[1][metric] < delta else (low, mid)
        return high


def metric_name(m: int) -> str:
    return METRIC_LABELS[METRICS[m]]


def pilot_design(ds: AnnotationDataset) -> tuple[int, int]:
    """The pilot's own design: its items, and the median number of ratings per item."""
    return ds.n_items, max(1, int(np.median(ds.raters_per_item)))


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
               target_delta: tuple[str, float] | None, n_samples: int = 200, seed: int = 0) -> None:
    """Refuse what no plan can mean: negative costs, probabilities outside (0, 1), no effect or two effects, too
    few replicates, an alpha they cannot resolve."""
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
    check_alpha(alpha, int(n_samples))
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


def plan(ds: AnnotationDataset, sampler: str | None = None, epsilon: float | None = None,
         target_delta: tuple[str, float] | None = None, ns=None, ks=None, cost_item: float = 0.0,
         cost_rating: float = 1.0, power: float = 0.8, alpha: float = ALPHA, n_samples: int = 200, seed: int = 0,
         metrics="all", perturbation: str = DEFAULT, progress: bool = False, raters=None,
         pilots: int = populations.PILOTS) -> Plan:
    """Power of every (N, K) of the grid (``ns`` x ``ks``; by default around the pilot's design), the cheapest
    design reaching ``power`` per metric, and the pilot's own power and smallest detectable epsilon.

    ``designs`` has one row per metric and design: metric, N, K, cost, power, power_low, power_high (its Wilson
    95 % band), delta (the mean Delta), extrapolated (N above the pilot's items) and beyond_raters (K above
    :func:`.raters_available`). ``progress`` shows a bar of simulated designs on stderr.

    ``raters`` (numbers of distinct raters R, S1 and S3 only) adds, for each R, the designs with K <= R simulated on
    studies with R raters drawn from a population model fitted to the pilot with ``pilots`` simulated pilots per
    rater share (:mod:`analysis.tools.modelled`; the default Ks for R are the default grid's up to R); ``designs``
    and ``cheapest`` then have the columns R and modelled (True for those designs, False for the pilot's own, whose
    R is :func:`.raters_available`), and ``pilot`` the best power a design of the pilot's own R reaches within
    its raters."""

    check_plan(cost_item, cost_rating, power, alpha, epsilon, target_delta, n_samples, seed)
    chosen = check_metrics(metrics)
    sampler = check_sampler(sampler or default_sampler(ds))
    grid_ns, grid_ks = default_grid(ds, sampler)
    given = sorted(set(ks)) if ks else None
    ns, ks = sorted(set(ns or grid_ns)), given or grid_ks
    if min(ns + ks) < 1:
        raise ParameterError(f"N and K values must be >= 1, got {min(ns + ks)}")
    modelled = {}  # R: its Ks, those given, else the default grid's up to R
    if raters is not None:
        modelled = {r: [k for k in given or candidate_ks(pilot_design(ds)[1], r) if k <= r]
                    for r in check_plan_raters(raters, sampler, given)}
    searches = (BISECTION_STEPS + 4 if target_delta else 0) + len(chosen) * (BISECTION_STEPS + 1)
    compiling = progress and not kernels_compiled()
    if compiling:  # the first design waits for the compiler: an estimate of the time left would be far off
        print(f"compiling the kernels (once per install, about {FIRST_COMPILE_SECONDS[0]}-{FIRST_COMPILE_SECONDS[1]} "
              "s); no estimate of the time left this run", file=sys.stderr)
    unit = "step" if modelled else "design"  # planning R counts the population model's simulated pilots too
    bar = tqdm(total=len(ns) * (len(ks) + sum(map(len, modelled.values()))) + searches + (pilots if modelled else 0),
               desc=f"plan {ds.name} {sampler}", unit=unit, disable=not progress, file=sys.stderr, delay=PROGRESS_DELAY,
               bar_format=f"{{desc}}: {{n_fmt}}/{{total_fmt}} {unit}s [{{elapsed}}]" if compiling else None)
    planner = Planner(ds, sampler, int(n_samples), int(seed), alpha, check_perturbation(perturbation), bar)
    with bar:
        result = _plan(planner, chosen, epsilon, target_delta, ns, ks, cost_item, cost_rating, power, modelled, pilots)
        bar.total = bar.n  # the searches stop early where the power is reached or never is
    return result


def _rows(planner: Planner, chosen, epsilon, ns, ks, cost_item, cost_rating, items: int, raters: int) -> list:
    """One row per metric and design of the grid ``ns`` x ``ks``, simulated by ``planner``; ``items`` and
    ``raters`` are what the pilot has, beyond which a design is an extrapolation."""
    rows = []
    for n in ns:
        for k in ks:
            powers, effect = planner.cell(n, k, epsilon)
            low, high = wilson(np.rint(powers * planner.n_samples), planner.n_samples)
            for m, metric in enumerate(METRICS):
                if metric in chosen:
                    rows.append({"metric": metric, "N": n, "K": k, "cost": float(design_cost(n, k, cost_item,
                                                                                          cost_rating)),
                                 "power": powers[m], "power_low": low[m], "power_high": high[m], "delta": effect[m],
                                 "extrapolated": n > items, "beyond_raters": k > raters})
    return rows


def _plan(planner: Planner, chosen, epsilon, target_delta, ns, ks, cost_item, cost_rating, power,
          modelled: dict, pilots: int) -> Plan:
    """:func:`plan`'s work once its arguments are checked; ``modelled`` maps each R to plan to its Ks."""
    ds, n_samples = planner.ds, planner.n_samples
    raters = raters_available(ds, planner.sampler)
    pilot_n, pilot_k = pilot_design(ds)
    if target_delta is not None:
        metric, value = target_delta
        epsilon = planner.epsilon_for(pilot_n, pilot_k, METRICS.index(check_metrics([metric])[0]), value)
    designs = pd.DataFrame(_rows(planner, chosen, epsilon, ns, ks, cost_item, cost_rating, ds.n_items, raters))
    population = None
    if modelled:
        designs = designs.assign(R=raters, modelled=False)
        planner.progress.set_description_str(f"plan {ds.name} {planner.sampler}: fitting a population model")
        population = populations.fit(ds, planner.seed, pilots=pilots, progress=planner.progress)
        for r, r_ks in modelled.items():
            planner.progress.set_description_str(f"plan {ds.name} {planner.sampler}: R = {r}, modelled")
            studies = tuple(study(population, ds, planner.sampler, max(ns + [ds.n_items]), r, planner.seed, panel)
                            for panel in range(min(PANELS, n_samples)))
            simulated = Planner(ds, planner.sampler, n_samples, planner.seed, planner.alpha, planner.perturbation,
                                planner.progress, studies)
            rows = _rows(simulated, chosen, epsilon, ns, r_ks, cost_item, cost_rating, ds.n_items, r)
            designs = pd.concat([designs, pd.DataFrame(rows).assign(R=r, modelled=True)], ignore_index=True)
        planner.progress.set_description_str(f"plan {ds.name} {planner.sampler}")
    pilot_rows = []
    for m, metric in enumerate(METRICS):
        if metric in chosen:
            powers, _ = planner.cell(pilot_n, pilot_k, epsilon)
            low, high = wilson(np.rint(powers[m] * n_samples), n_samples)
            smallest = planner.smallest_epsilon(pilot_n, pilot_k, m, power)
            pilot_rows.append({"metric": metric, "N": pilot_n, "K": pilot_k,
                               "cost": float(design_cost(pilot_n, pilot_k, cost_item, cost_rating)),
                               "power": powers[m], "power_low": float(low), "power_high": float(high),
                               "smallest_epsilon": smallest,
                               "smallest_delta": np.nan if smallest is None else
                               planner.cell(pilot_n, pilot_k, smallest)[1][m],
                               **(_best(designs, metric) if modelled else {})})
    provenance = {"dataset": ds.name, "data_sha256": ds.sha256, "engine": engine_fingerprint(), "raters": raters,
                  "parameters": {"sampler": planner.sampler, "epsilon": epsilon, "target_delta": target_delta,
                                 "ns": ns, "ks": ks, "cost_item": cost_item, "cost_rating": cost_rating, "power": power,
                                 "alpha": planner.alpha, "n_samples": int(n_samples), "seed": int(planner.seed),
                                 "perturbation": planner.perturbation}}
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


def cheapest(designs: pd.DataFrame, target: float) -> pd.DataFrame:
    """Per metric, the cheapest design whose power reaches ``target`` (on equal cost: fewer raters, the pilot's own
    before a modelled one, then more power), with the columns of ``designs``; NaN but ``metric`` where none does."""
    rows = []
    order = ["cost", "R", "modelled", "power"] if "R" in designs else ["cost", "power"]
    for metric, group in designs.groupby("metric", sort=False):
        enough = group[group["power"] >= target].sort_values(order, ascending=[True] * (len(order) - 1) + [False])
        rows.append(enough.iloc[0] if len(enough) else pd.Series({"metric": metric}, index=designs.columns))
    return pd.DataFrame(rows, columns=designs.columns).reset_index(drop=True)


# ------------------------------------------------------------------------------------------ reporting

def extrapolations(row, result: Plan, short: bool = False) -> list[str]:
    """Why a design (a row of ``designs`` or ``cheapest``) is an extrapolation: more items than the pilot has, a K
    beyond the raters a drawn item comes from; empty when it is neither. ``short`` for a table cell."""
    items, raters = result.pilot["N"].iloc[0], result.provenance["raters"]
    why = []
    if row["extrapolated"] == 1:
        why.append(f"N > the {items:,} items" if short else f"more items than the pilot's {items:,}, resampled")
    if row["beyond_raters"] == 1:
        why.append(f"K > the {raters} raters" if short else
                   f"K above the {raters} raters a drawn item has, the same people redrawn")
    if row.get("modelled") == 1:
        why.append(f"R = {int(row['R'])} modelled" if short else
                   f"R = {int(row['R'])} raters drawn from the population model fitted to the pilot")
    return why


def raters_note(result: Plan) -> str | None:
    """Under S1 and S3, that the pilot's distinct raters bound the power and that the plan keeps them."""
    sampler, raters = result.provenance["parameters"]["sampler"], result.provenance["raters"]
    if sampler == "S2":
        return None
    where = "the pool of" if sampler == "S1" else "a batch's"
    said = (f"Under {sampler} every simulated study draws its raters from {where} {raters} raters of the pilot: the "
            "number of distinct raters bounds the power")
    if "population" in result.provenance:
        others = ", ".join(map(str, result.provenance["parameters"]["raters"]))
        return (f"{said}; the designs with R = {others} raters are simulated on studies drawn from "
                f"{result.provenance['population']['description']}, fitted to the pilot.")
    return (f"{said}, and this plan keeps the pilot's raters (more items or more ratings per item do not add new "
            "people).")


def _design(row, result: Plan) -> str:
    why = extrapolations(row, result)
    note = f" (an extrapolation: {'; '.join(why)})" if why else ""
    raters = f" of R = {int(row['R'])} raters" if "R" in row else ""
    return (f"N = {int(row['N']):,} items x K = {int(row['K'])}{raters} (cost {row['cost']:,.6g}), power "
            f"{row['power']:.2f} [{row['power_low']:.2f}, {row['power_high']:.2f}], Delta {row['delta']:.3g}{note}")


def _best_words(p, result: Plan) -> str:
    """The best power of the pilot's own R, in words (planning R only)."""
    if "best_power" not in p:
        return ""
    raters = result.provenance["raters"]
    return (f" With its own {raters} raters no design of the grid within them has power" if pd.isna(p["best_power"])
            else f" With its own {raters} raters the best power any N of the grid reaches is {p['best_power']:.2f} "
                 f"(N = {int(p['best_N']):,} x K = {int(p['best_K'])})") + "."


def summary_lines(result: Plan) -> list[str]:
    """One line per metric: the cheapest design reaching the target power, and what the pilot's design gives."""
    lines = []
    pilot = result.pilot.set_index("metric")
    for _, row in result.cheapest.iterrows():
        metric = row["metric"]
        best = _design(row, result) if pd.notna(row["N"]) else "no design of the grid reaches it"
        p = pilot.loc[metric]
        smallest = ("not reached at epsilon <= 1" if pd.isna(p["smallest_epsilon"]) else
                    f"epsilon {p['smallest_epsilon']:.3g} (Delta {p['smallest_delta']:.3g})")
        lines.append(f"{METRIC_LABELS[metric]}: cheapest with power >= {result.target:g}: {best}. The pilot's "
                     f"N = {int(p['N']):,} x K = {int(p['K'])}: power {p['power']:.2f} [{p['power_low']:.2f}, "
                     f"{p['power_high']:.2f}]; smallest detectable effect {smallest}.{_best_words(p, result)}")
    return lines


def summary(result: Plan) -> str:
    """The plan in words (Markdown): the effect, then per metric the cheapest design and what the pilot's gives."""
    how = result.provenance["parameters"]
    target = how["target_delta"]
    effect = (f"a {METRIC_LABELS[target[0]]} Δ of {target[1]:.3g}, which ε = {result.epsilon:.3g} gives on the pilot's "
              "design" if target else f"ε = {result.epsilon:g}")
    cost = (f"N × {how['cost_item']:g} + " if how["cost_item"] else "") + "N × K" + (
        f" × {how['cost_rating']:g}" if how["cost_rating"] != 1 else "")  # the terms that are not 0 or 1
    lines = [f"The effect is {effect} (sampler {how['sampler']}, {how['n_samples']} simulated studies per design; a "
             f"design of N items × K ratings costs {cost})."
             + (f" {raters_note(result)}" if raters_note(result) else "")]
    pilot = result.pilot.set_index("metric")
    far = result.designs["extrapolated"] | result.designs["beyond_raters"]
    inside = result.designs[~(far | result.designs["modelled"]) if "modelled" in result.designs else ~far]
    within = cheapest(inside, result.target).set_index("metric") if len(inside) else None
    for _, row in result.cheapest.iterrows():
        p = pilot.loc[row["metric"]]
        why = extrapolations(row, result) if pd.notna(row["N"]) else []
        best = (f"{int(row['N']):,} items × {int(row['K'])} ratings"
                + (f" of R = {int(row['R'])} raters" if "R" in row else "") + f" (cost {row['cost']:,.6g}) reach power "
                f"{row['power']:.2f}" + (f", an extrapolation ({'; '.join(why)})" if why else "")
                if pd.notna(row["N"]) else f"no design of the grid reaches power {result.target:g}")
        if why:
            alt = within.loc[row["metric"]] if within is not None and row["metric"] in within.index else None
            best += (f"; within the pilot's items and raters, {int(alt['N']):,} × {int(alt['K'])} (cost "
                     f"{alt['cost']:,.6g}) reaches power {alt['power']:.2f}" if alt is not None and pd.notna(alt["N"])
                     else "; no design within the pilot's items and raters reaches it")
        smallest = ("no ε up to 1 reaches it" if pd.isna(p["smallest_epsilon"]) else
                    f"ε = {p['smallest_epsilon']:.3g} (Δ {p['smallest_delta']:.3g}) is the smallest effect it detects")
        lines.append(f"- {METRIC_LABELS[row['metric']]}: {best}; the pilot's {int(p['N']):,} × {int(p['K'])} has power "
                     f"{p['power']:.2f}, and {smallest} with power {result.target:g}.{_best_words(p, result)}")
    return "\n".join(lines)


def readable(result: Plan) -> pd.DataFrame:
    """Per metric, the cheapest design reaching the target power and the pilot's own design, as people read them.

    Columns: metric, cheapest N × K (with "extrapolated: …" where it is one), its cost, its power, pilot N × K,
    pilot power, smallest ε (Δ) at the pilot; planning R names the cheapest design's R and adds the best power of
    the pilot's own R.
    """
    best = result.cheapest.set_index("metric")
    rows = []
    for _, p in result.pilot.iterrows():
        b = best.loc[p["metric"]]
        reached = pd.notna(b["N"])
        why = extrapolations(b, result, short=True) if reached else []
        rows.append({"metric": METRIC_LABELS[p["metric"]],
                     "cheapest N × K": (f"{int(b['N']):,} × {int(b['K'])}"
                                        + (f", R = {int(b['R'])}" if "R" in b else "")
                                        + (f" (extrapolated: {'; '.join(why)})" if why else "")) if reached
                     else "none in the grid",
                     "its cost": f"{b['cost']:,.6g}" if reached else "–",
                     "its power": f"{b['power']:.2f} [{b['power_low']:.2f}, {b['power_high']:.2f}]" if reached else "–",
                     "pilot N × K": f"{int(p['N']):,} × {int(p['K'])}",
                     "pilot power": f"{p['power']:.2f} [{p['power_low']:.2f}, {p['power_high']:.2f}]",
                     "smallest ε (Δ) at the pilot": "–" if pd.isna(p["smallest_epsilon"]) else
                     f"{p['smallest_epsilon']:.3g} ({p['smallest_delta']:.3g})",
                     **({f"best power with the pilot's {result.provenance['raters']} raters":
                         "–" if pd.isna(p["best_power"]) else
                         f"{p['best_power']:.2f}".replace("1.00", "1") + f" ({int(p['best_N']):,} × {int(p['best_K'])})"}
                        if "best_power" in p else {})})
    return pd.DataFrame(rows)


def figure(result: Plan, metrics=("accuracy", "mae", "f1", "jsd")):
    """Power against cost, one panel per metric (those of ``metrics`` the plan has, else its first four) and one line
    per K with its band; a star marks the cheapest design reaching the target power; hollow markers (and a hollow
    star) mark extrapolations, in N, in K or in R. Planning R draws one row of panels per R: the pilot's own, then
    the modelled ones."""
    import matplotlib.pyplot as plt

    shown = [m for m in metrics if m in set(result.designs["metric"])] or list(result.cheapest["metric"])[:4]
    groups = (list(result.designs.groupby(["modelled", "R"])) if "R" in result.designs else
              [((False, None), result.designs)])
    fig, axes = plt.subplots(len(groups), len(shown), figsize=(3.2 * len(shown), 3.0 * len(groups)), sharey=True,
                             squeeze=False)
    best = result.cheapest.set_index("metric")
    for row, ((modelled, r), group) in zip(axes, groups):
        for ax, metric in zip(row, shown):
            table = group[group["metric"] == metric]
            for k, line in table.groupby("K"):
                line = line.sort_values("cost")
                beyond = " (K > raters)" if line["beyond_raters"].any() else ""
                drawn = ax.plot(line["cost"], line["power"], marker="o", ms=3, lw=1.2, label=f"K = {k}{beyond}",
                                ls=":" if beyond else "-")[0]
                ax.fill_between(line["cost"], line["power_low"], line["power_high"], color=drawn.get_color(),
                                alpha=0.15)
                far = line if modelled else line[line["extrapolated"] | line["beyond_raters"]]
                ax.plot(far["cost"], far["power"], "o", ms=5, mfc="white", color=drawn.get_color())
            b = best.loc[metric]
            if pd.notna(b["N"]) and (r is None or (b["modelled"], b["R"]) == (modelled, r)):
                ax.plot(b["cost"], b["power"], "*", ms=14, color="black", zorder=5,
                        mfc="white" if extrapolations(b, result) else "black")
            ax.axhline(result.target, color="grey", ls="--", lw=0.8)
            ax.set_xscale("log")
            ax.minorticks_off()
            ax.set_title(METRIC_LABELS[metric] + ("" if r is None else
                                                  f", R = {r} ({'modelled' if modelled else 'the pilot'})"))
            ax.set_xlabel("cost")
        row[0].set_ylabel("power")
        row[-1].legend(fontsize=7, loc="lower right", title="hollow: extrapolated", title_fontsize=7)
    fig.tight_layout()
    return fig


def check_figure(path: str) -> None:
    """Refuse, before any work, a figure whose format matplotlib cannot write, or a missing matplotlib."""
    try:
        from matplotlib.backend_bases import FigureCanvasBase
    except ImportError:
        raise ParameterError("--figure needs matplotlib: pip install matplotlib") from None
    formats = FigureCanvasBase.get_supported_filetypes()
    suffix = os.path.splitext(path)[1].lstrip(".").lower()
    if suffix not in formats:
        raise ParameterError(f"--figure {path}: {('.' + suffix) if suffix else 'no suffix'} is not a figure format; "
                             f"end the name in one of {', '.join('.' + f for f in sorted(formats))}")


def save(result: Plan, path: str) -> None:
    """Every design's power as CSV, and the pilot's design and the provenance as ``<path>.json``."""
    write_atomic(path, result.designs.to_csv(index=False))
    note = {**result.provenance, "epsilon_used": result.epsilon,
            "cheapest": result.cheapest.to_dict("records"), "pilot": result.pilot.to_dict("records")}
    write_atomic(f"{path}.json", json.dumps(json_ready(note), indent=2, allow_nan=False))


def save_figure(fig, path: str) -> None:
    """Write a figure atomically (a temporary file in the same folder, then a rename); its format from the suffix."""
    replace_atomic(path, lambda tmp: fig.savefig(tmp, dpi=150, bbox_inches="tight"), suffix=Path(path).suffix)


# ------------------------------------------------------------------------------------------ command line

def _target_delta(text: str) -> tuple[str, float]:
    metric, _, value = text.partition("=")
    try:
        return metric.strip(), float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected METRIC=VALUE, e.g. accuracy=0.05, got {text!r}") from None


def add_cli(commands) -> None:
    """Register ``plan`` on the command line's subparsers."""
    cli = commands.add_parser("plan", help="plan a study: power of N x K designs, the cheapest reaching a target",
                              description="Power, cost and the smallest detectable effect of N x K designs, simulated "
                                          "from a pilot (see the README's 'Plan a study').")
    data_arguments(cli)
    effect = cli.add_mutually_exclusive_group(required=True)
    effect.add_argument("--epsilon", type=float,
                        help="the effect as how strongly model B is perturbed away from A, in (0, 1]")
    effect.add_argument("--target-delta", type=_target_delta, metavar="METRIC=VALUE",
                        help="the effect as a Delta of one metric, e.g. accuracy=0.05")
    cli.add_argument("--sampler", choices=SAMPLERS, default=None,
                     help="bootstrap sampler (default: S1 when fully crossed, S3 when batched, else S2)")
    cli.add_argument("--cost-item", type=float, default=0.0, help="cost of one item (default: 0)")
    cli.add_argument("--cost-rating", type=float, default=1.0, help="cost of one rating (default: 1)")
    cli.add_argument("--power", type=float, default=0.8, help="target power in (0, 1) (default: 0.8)")
    cli.add_argument("--alpha", type=float, default=ALPHA, help="significance level in (0, 1) (default: 0.05)")
    cli.add_argument("--ns", type=ints, default=None, help="comma-separated item counts (default: around the pilot's)")
    cli.add_argument("--ks", type=ints, default=None,
                     help="comma-separated ratings per item (default: 1 to 20 and twice the pilot's, up to the "
                          "raters a drawn item has)")
    cli.add_argument("--raters", type=ints, default=None,
                     help="comma-separated numbers of distinct raters R to plan beside the pilot's own (S1, S3): "
                          "each R's designs are simulated on studies drawn from a population model fitted to the "
                          "pilot, and marked as modelled")
    cli.add_argument("--metrics", default="all", help="comma-separated metrics or 'all'")
    cli.add_argument("--n-samples", type=int, default=200, help="replicates per design and hypothesis (default: 200)")
    cli.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    cli.add_argument("--out", default=None, help="CSV of every design's power; the summary goes to OUT.json")
    cli.add_argument("--figure", default=None, help="a PNG or PDF of power against cost")
    cli.add_argument("--quiet", action="store_true", help="no progress bar")


def run_cli(args: argparse.Namespace) -> None:
    """The ``plan`` command."""
    check_plan(args.cost_item, args.cost_rating, args.power, args.alpha, args.epsilon, args.target_delta,
               args.n_samples, args.seed)
    out = output_file(args.out, inputs=[args.data], sidecar=".json", suffixes=(".csv",)) if args.out else None
    if args.figure:
        check_figure(args.figure)
    picture = output_file(args.figure, inputs=[args.data], flag="--figure") if args.figure else None
    result = plan(load_data(args), sampler=args.sampler, epsilon=args.epsilon, target_delta=args.target_delta,
                  ns=args.ns, ks=args.ks, cost_item=args.cost_item, cost_rating=args.cost_rating, power=args.power,
                  alpha=args.alpha, n_samples=args.n_samples, seed=args.seed,
                  metrics="all" if args.metrics == "all" else args.metrics.split(","), progress=not args.quiet,
                  raters=args.raters)
    how = "" if args.target_delta is None else f" (found for {args.target_delta[0]} Delta = {args.target_delta[1]:g})"
    print(f"epsilon {result.epsilon:.3g}{how}; sampler {result.provenance['parameters']['sampler']}; "
          f"{args.n_samples} replicates per design; power is the share of replicates with p < {args.alpha:g}")
    if result.designs["extrapolated"].any():
        print(f"note: designs with more than the pilot's {result.pilot['N'].iloc[0]:,} items are extrapolations "
              "(items resampled with replacement)", file=sys.stderr)
    if result.designs["beyond_raters"].any():
        print(f"note: designs with K above the {result.provenance['raters']} raters a drawn item has are "
              "extrapolations (the same people redrawn)", file=sys.stderr)
    if raters_note(result):
        note = raters_note(result)
        print(f"note: {note[0].lower()}{note[1:]}", file=sys.stderr)
    print("\n".join(summary_lines(result)))
    if out:
        save(result, out)
        print(f"wrote {len(result.designs)} rows to {args.out}", file=sys.stderr)
    if picture:
        save_figure(figure(result), picture)
        print(f"wrote the figure to {args.figure}", file=sys.stderr)
