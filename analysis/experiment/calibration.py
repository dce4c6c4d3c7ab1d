"""Is the test calibrated? The null checked against the alternative at ``epsilon = 0`` (the methods page).

At ``epsilon = 0`` A and B are exchangeable, so the null (a permutation of A's and B's rater columns) must have the
alternative's law. Two checks per grid cell and metric: the spread ratio ``sd(delta*) / sd(delta)``, which should
be about 1, and the per-replicate p-values ``p_j = #{delta*_i >= delta_j} / n``, which should be uniform, so that
about 5 % fall below 0.05 (fewer for metrics whose ties count toward the null).

:func:`calibrate` simulates the cells directly (they are small), with the same per-cell streams as the grid, and
returns both the per-cell table and every replicate's p-value. :func:`verdict` states whether a run passed, with
tolerances from the sampling distributions: each spread ratio against its own 99 % band (:func:`spread_band`),
the number of ratios outside against the binomial count a calibrated null would give, and each run's share of
``p_j < 0.05`` against the binomial band of 5 % for its number of replicates (:func:`share_limits`). A null too
narrow by 30 % (the old null at K = 1), or one that calls 7 % of experiments significant, fails.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.data.annotations import AnnotationDataset
from analysis.experiment.grid import ALPHA, cells, simulate_cell
from analysis.engine.metrics import CONTINUOUS_METRICS
from analysis.experiment.choices import BOOK, Choices, selected
from analysis.experiment.pvalues import replicate_p_values
from analysis.engine import Simulator

BUDGETS = (200, 1000, 5000)
KS = (1, 2, 3, 5, 10, 20)
SPREAD_LEVEL = 0.99  # each spread ratio's band holds a calibrated ratio with this probability
Z = 3.0  # the share's band and the count of ratios outside their bands: 3 standard errors (0.13 % one-sided)


@dataclass
class Calibration:
    """Per-cell spreads and shares (``cells``) and every alternative replicate's p-value (``p_values``)."""

    cells: pd.DataFrame
    p_values: pd.DataFrame


def calibrate(ds: AnnotationDataset, sampler: str, budgets=BUDGETS, ks=KS, n_samples: int = 1000, seed: int = 0,
              choices: Choices = BOOK, metrics="all") -> Calibration:
    """Simulate every (NK, K) cell at ``epsilon = 0`` under ``choices`` (noise law, smoothing, and the averaging of
    ``metrics="all"``) and measure the null against the alternative."""
    chosen = selected(metrics, choices)
    simulator = Simulator(ds, sampler, **choices.engine(), metrics=chosen)
    measured = []
    for cell in cells(sampler, budgets, ks, (0.0,), choices.perturbation):
        alt, null = simulate_cell(simulator, cell, n_samples, seed)
        for m, metric in enumerate(simulator.metrics):
            measured.append(measure(alt[:, m], null[:, m], dataset=ds.name, sampler=sampler, NK=cell.NK, K=cell.K,
                                    N=cell.N, metric=metric))
    return combine(measured)


def measure(alt: np.ndarray, null: np.ndarray, **keys) -> Calibration:
    """One (cell, metric): the spread ratio with its standard error, the share of replicate p-values below 0.05
    and their mean, and every replicate's p-value; ``keys`` (dataset, sampler, NK, K, N, metric) label the rows."""
    p_j = replicate_p_values(null, alt)
    alt_sd, null_sd = alt.std(ddof=1), null.std(ddof=1)
    varies = alt_sd > 0 and null_sd > 0
    row = {**keys, "sd_ratio": null_sd / alt_sd if alt_sd > 0 else np.nan,
           "log_ratio_se": log_ratio_se(null, alt) if varies else np.nan,
           "share_below_alpha": float((p_j < ALPHA).mean()), "mean_p": float(p_j.mean()), "n_samples": len(alt)}
    p_keys = {k: keys[k] for k in ("dataset", "sampler", "NK", "K", "metric") if k in keys}
    return Calibration(pd.DataFrame([row]), pd.DataFrame({**p_keys, "p": p_j}))


def log_ratio_se(null: np.ndarray, alt: np.ndarray) -> float:
    """Standard error of ``log(sd(null) / sd(alt))`` for two independent samples: ``sqrt((kappa - 1) / (4 n))``
    per sample, ``kappa`` its kurtosis (3 for normal deltas, which gives ``sqrt(1 / n)`` for the ratio). Heavy
    tails, as S1's few rater draws per replicate give, make a sample sd, and so the ratio, less certain."""
    from scipy.stats import kurtosis  # here, not at the top: scipy.stats takes a second to import

    return float(np.sqrt(sum((kurtosis(x, fisher=False) - 1) / (4 * len(x)) for x in (null, alt))))


def combine(results: list[Calibration]) -> Calibration:
    """One :class:`Calibration` of several runs."""
    return Calibration(pd.concat([r.cells for r in results], ignore_index=True),
                       pd.concat([r.p_values for r in results], ignore_index=True))


def share_limits(n_replicates: int, n_null: int, alpha: float = ALPHA, z: float = Z) -> tuple[float, float]:
    """The binomial band of the share of ``p_j < alpha`` over ``n_replicates`` alternative replicates, each
    compared with a null of ``n_null`` replicates: the alternative's binomial spread plus the spread of the null's
    own alpha quantile, ``z`` standard errors either way (a share cannot fall below 0)."""
    se = np.sqrt(alpha * (1 - alpha) * (1 / n_replicates + 1 / n_null))
    return max(0.0, alpha - z * se), alpha + z * se


def spread_band(log_se: float, level: float = SPREAD_LEVEL) -> tuple[float, float]:
    """The band a calibrated spread ratio falls in with probability ``level``: ``exp(±z · se)`` of
    ``log(sd ratio)``, whose sampling distribution is about normal with the standard error of
    :func:`log_ratio_se`."""
    from scipy.stats import norm

    z = norm.ppf(0.5 + level / 2)
    return float(np.exp(-z * log_se)), float(np.exp(z * log_se))


def outside_allowed(n_ratios: int, per_cell: float = 1.0, level: float = SPREAD_LEVEL, z: float = Z) -> int:
    """How many of ``n_ratios`` calibrated spread ratios may fall outside their bands: the binomial count
    ``n (1 - level)`` plus ``z`` of its standard deviations. The ``per_cell`` metrics of a cell share its
    replicates and can leave their bands together, so the variance is that of clusters of that size, at most
    ``per_cell`` times the binomial's (the worst case, used here)."""
    miss = 1 - level
    return int(np.floor(n_ratios * miss + z * np.sqrt(n_ratios * miss * (1 - miss) * per_cell)))


def _distinct(table: pd.DataFrame) -> pd.DataFrame:
    """One row per distinct statistic: a metric whose ratio equals another's in the same cell to the last bit
    (weighted recall is accuracy) is counted once."""
    return table.drop_duplicates(["dataset", "sampler", "NK", "K", "sd_ratio", "log_ratio_se"])


def summary(result: Calibration) -> pd.DataFrame:
    """Per run (dataset, sampler): cells × metrics checked, the K range, the spread ratios inside their 99 % bands
    and their range, and the share of replicate p-values below 0.05 (over KL-Div and JSD, with its band, and over
    every metric)."""
    rows = []
    table = result.cells.dropna(subset=["sd_ratio", "log_ratio_se"])
    for (dataset, sampler), group in table.groupby(["dataset", "sampler"], sort=False):
        inside = _inside(group)
        p = result.p_values
        p = p[(p["dataset"] == dataset) & (p["sampler"] == sampler)]
        share, (low, high) = _run_share(p, int(group["n_samples"].iloc[0]))
        rows.append({"dataset": dataset, "sampler": sampler, "cells × metrics": int(len(group)),
                     "K": f"{int(group['K'].min())}–{int(group['K'].max())}",
                     "ratio in its 99 % band": f"{100 * inside.mean():.0f} %",
                     "ratio, min–max": f"{group['sd_ratio'].min():.2f}–{group['sd_ratio'].max():.2f}",
                     "p_j < 0.05, KL-Div and JSD": f"{100 * share:.1f} % ({100 * low:.1f}–{100 * high:.1f} %)",
                     "p_j < 0.05, all metrics": f"{100 * (p['p'] < ALPHA).mean():.1f} %"})
    return pd.DataFrame(rows)


def weakest_run(result: Calibration) -> tuple[str, float] | None:
    """The run ("dataset, sampler") with the smallest share of spread ratios inside their 99 % bands, and that share,
    as :func:`summary` counts them; None without cells."""
    table = result.cells.dropna(subset=["sd_ratio", "log_ratio_se"])
    if not len(table):
        return None
    shares = _inside(table).groupby([table["dataset"], table["sampler"]], sort=False).mean()
    (dataset, sampler), share = shares.idxmin(), float(shares.min())
    return f"{dataset}, {sampler}", share


def _inside(table: pd.DataFrame) -> pd.Series:
    """Whether each spread ratio lies inside its :func:`spread_band`."""
    bands = [spread_band(se) for se in table["log_ratio_se"]]
    return pd.Series([lo <= r <= hi for r, (lo, hi) in zip(table["sd_ratio"], bands)], index=table.index)


def _run_share(p: pd.DataFrame, n_samples: int) -> tuple[float, tuple[float, float]]:
    """One run's share of ``p_j < 0.05`` over the continuous metrics (KL-Div and JSD rarely tie) and its band.

    The two metrics of a replicate move together, so the band counts one metric's replicates, ``n_samples`` per
    cell, and one null of ``n_samples`` per cell."""
    continuous = p[p["metric"].isin(CONTINUOUS_METRICS)]
    cells = len(continuous.drop_duplicates(["NK", "K"]))
    if not cells:
        return float("nan"), (float("nan"), float("nan"))
    return float((continuous["p"] < ALPHA).mean()), share_limits(n_samples * cells, n_samples * cells)


def verdict(result: Calibration) -> dict:
    """Whether the null is calibrated on these runs, with tolerances that a miscalibrated null fails.

    Spread: the spread ratios outside their 99 % bands (:func:`spread_band`, from each cell's own replicates and
    their kurtosis; distinct statistics only) number at most :func:`outside_allowed` (clusters of a cell's
    metrics). Size: every run's share of
    replicate p-values below 0.05 over KL-Div and JSD lies within :func:`share_limits` for its replicates, and over
    every metric (ties count toward the null, so vote metrics fall short) it is at most the upper limit.
    """
    table = _distinct(result.cells.dropna(subset=["sd_ratio", "log_ratio_se"]))
    inside = _inside(table)
    per_cell = len(table) / max(1, len(table.drop_duplicates(["dataset", "sampler", "NK", "K"])))
    allowed = outside_allowed(len(table), per_cell)
    runs, failed = [], []
    for (dataset, sampler), group in table.groupby(["dataset", "sampler"], sort=False):
        p = result.p_values
        p = p[(p["dataset"] == dataset) & (p["sampler"] == sampler)]
        share, (low, high) = _run_share(p, int(group["n_samples"].iloc[0]))
        share_all = float((p["p"] < ALPHA).mean())
        ok = bool(low <= share <= high and share_all <= high)
        runs.append({"dataset": dataset, "sampler": sampler, "share_continuous": share, "share_all": share_all,
                     "share_limits": (low, high), "passes": ok})
        if not ok:
            failed.append(f"{dataset}, {sampler}")
    outside = int((~inside).sum())
    calibrated = bool(len(table)) and outside <= allowed and not failed
    shares = [r["share_continuous"] for r in runs]
    return {"calibrated": calibrated, "cells": int(len(table)), "outside": outside, "allowed": allowed,
            "narrowest": spread_band(table["log_ratio_se"].min()) if len(table) else (np.nan, np.nan),
            "widest": spread_band(table["log_ratio_se"].max()) if len(table) else (np.nan, np.nan),
            "k_range": (int(table["K"].min()), int(table["K"].max())) if len(table) else (0, 0),
            "runs": runs, "failed_runs": failed,
            "share_range": (min(shares), max(shares)) if shares else (np.nan, np.nan),
            "limits_range": (min(r["share_limits"][0] for r in runs), max(r["share_limits"][1] for r in runs))
            if runs else (np.nan, np.nan)}
