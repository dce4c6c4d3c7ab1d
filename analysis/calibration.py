"""Is the test calibrated? The null checked against the alternative at ``epsilon = 0`` (METHOD section 4).

At ``epsilon = 0`` A and B are exchangeable, so the null (a permutation of A's and B's rater columns) must have the
alternative's law. Two checks per grid cell and metric: the spread ratio ``sd(delta*) / sd(delta)``, which should
be about 1, and the per-replicate p-values ``p_j = #{delta*_i >= delta_j} / n``, which should be uniform, so that
about 5 % fall below 0.05 (fewer for metrics whose ties count toward the null).

:func:`calibrate` simulates the cells directly (they are small), with the same per-cell streams as the grid, and
returns both the per-cell table and every replicate's p-value. :func:`verdict` states whether a run passed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.data import AnnotationDataset
from analysis.grid import ALPHA, cells, simulate_cell
from analysis.metrics import CONTINUOUS_METRICS, METRICS
from analysis.pvalues import replicate_p_values
from analysis.engine import DEFAULT, Simulator

BUDGETS = (200, 1000, 5000)
KS = (1, 2, 3, 5, 10, 20)
SPREAD_BAND = (0.9, 1.1)


@dataclass
class Calibration:
    """Per-cell spreads and shares (``cells``) and every alternative replicate's p-value (``p_values``)."""

    cells: pd.DataFrame
    p_values: pd.DataFrame


def calibrate(ds: AnnotationDataset, sampler: str, budgets=BUDGETS, ks=KS, n_samples: int = 1000, seed: int = 0,
              perturbation: str = DEFAULT, metrics=METRICS) -> Calibration:
    """Simulate every (NK, K) cell at ``epsilon = 0`` and measure the null against the alternative."""
    simulator = Simulator(ds, sampler)
    rows, p_rows = [], []
    for cell in cells(sampler, budgets, ks, (0.0,), perturbation):
        alt, null = simulate_cell(simulator, cell, n_samples, seed)
        for metric in metrics:
            m = METRICS.index(metric)
            p_j = replicate_p_values(null[:, m], alt[:, m])
            alt_sd, null_sd = alt[:, m].std(ddof=1), null[:, m].std(ddof=1)
            varies = alt_sd > 0 and null_sd > 0
            rows.append({"dataset": ds.name, "sampler": sampler, "NK": cell.NK, "K": cell.K, "N": cell.N,
                         "metric": metric, "sd_ratio": null_sd / alt_sd if alt_sd > 0 else np.nan,
                         "log_ratio_se": log_ratio_se(null[:, m], alt[:, m]) if varies else np.nan,
                         "share_below_alpha": float((p_j < ALPHA).mean()), "mean_p": float(p_j.mean()),
                         "n_samples": n_samples})
            p_rows.append(pd.DataFrame({"dataset": ds.name, "sampler": sampler, "NK": cell.NK, "K": cell.K,
                                        "metric": metric, "p": p_j}))
    return Calibration(pd.DataFrame(rows), pd.concat(p_rows, ignore_index=True))


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


def share_limits(n_replicates: int, n_null: int, alpha: float = ALPHA, z: float = 4.5) -> tuple[float, float]:
    """Limits for the share of ``p_j < alpha`` over ``n_replicates`` alternative replicates, each compared with a
    null of ``n_null``: binomial spread of the alternative plus the spread of the null's own alpha quantile."""
    se = np.sqrt(alpha * (1 - alpha) * (1 / n_replicates + 1 / n_null))
    return alpha - z * se, alpha + z * se


def summary(result: Calibration) -> pd.DataFrame:
    """Per run (dataset, sampler): cells checked, share of spread ratios inside the band, the ratio's range,
    the share of replicate p-values below 0.05 and their mean."""
    low, high = SPREAD_BAND
    rows = []
    for (dataset, sampler), group in result.cells.groupby(["dataset", "sampler"], sort=False):
        ratios = group["sd_ratio"].dropna()
        p = result.p_values
        p = p[(p["dataset"] == dataset) & (p["sampler"] == sampler)]["p"]
        rows.append({"dataset": dataset, "sampler": sampler, "cells × metrics": int(len(ratios)),
                     "spread ratio in [0.9, 1.1]": f"{100 * ratios.between(low, high).mean():.0f} %",
                     "spread ratio, min–max": f"{ratios.min():.2f}–{ratios.max():.2f}",
                     "p_j < 0.05": f"{100 * (p < ALPHA).mean():.1f} %", "mean p_j": round(float(p.mean()), 3)})
    return pd.DataFrame(rows)


def verdict(result: Calibration, max_k: int = 5, z: float = 4.5) -> dict:
    """Whether the null is calibrated on these runs, by the tests' criteria.

    Spread: every cell with ``K <= max_k`` (where the old null failed) has ``|log sd_ratio|`` within ``z`` of its
    standard errors (:func:`log_ratio_se`, from the cell's own replicates and their kurtosis). Size: the share of
    replicate p-values below 0.05, pooled over the continuous metrics (KL-Div and JSD), lies within
    :func:`share_limits`; pooled over every metric it is at most the upper limit.
    """
    table = result.cells.dropna(subset=["sd_ratio", "log_ratio_se"])
    small = table[table["K"] <= max_k]
    tolerance = z * small["log_ratio_se"]
    outside = small[np.abs(np.log(small["sd_ratio"])) > tolerance]
    n = int(table["n_samples"].iloc[0]) if len(table) else 0
    p = result.p_values
    continuous = p[p["metric"].isin(CONTINUOUS_METRICS)]
    cells_per_metric = max(1, len(table.drop_duplicates(["dataset", "sampler", "NK", "K"])))
    share_low, share_high = share_limits(len(continuous), n * cells_per_metric) if n else (np.nan, np.nan)
    share_continuous = float((continuous["p"] < ALPHA).mean()) if len(continuous) else np.nan
    share_all = float((p["p"] < ALPHA).mean()) if len(p) else np.nan
    calibrated = bool(len(small)) and outside.empty and share_low <= share_continuous <= share_high \
        and share_all <= share_high
    return {"calibrated": calibrated, "cells": int(len(small)), "outside": int(len(outside)),
            "tolerance": (float(np.expm1(tolerance.min())), float(np.expm1(tolerance.max()))) if len(small)
            else (np.nan, np.nan),
            "share_continuous": share_continuous, "share_all": share_all, "share_limits": (share_low, share_high)}


# ---------------------------------------------------------------- figures

def _styles(datasets) -> dict:
    """One colour and marker per dataset, the same in every panel."""
    import matplotlib.pyplot as plt

    from analysis.plots import MARKERS

    colours = plt.get_cmap("tab10")
    return {name: (colours(i % 10), MARKERS[i % len(MARKERS)]) for i, name in enumerate(dict.fromkeys(datasets))}


def _shared_legend(fig, axes) -> None:
    handles = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    fig.legend(handles.values(), handles.keys(), loc="outside lower center", ncol=min(3, len(handles)),
               frameon=False)

def spread_figure(result: Calibration):
    """``sd(delta*) / sd(delta)`` against K, one panel per sampler, one line per dataset (median over budgets and
    metrics, with the range as a band); the 0.9-1.1 band is shaded."""
    import matplotlib.pyplot as plt

    from analysis.plots import COLUMN_INCHES, STYLE

    table = result.cells.dropna(subset=["sd_ratio"])
    samplers = sorted(table["sampler"].unique())
    styles = _styles(table["dataset"])
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(1, len(samplers), figsize=(COLUMN_INCHES, 2.8), sharey=True, squeeze=False,
                                 constrained_layout=True)
        for ax, sampler in zip(axes[0], samplers):
            chosen = table[table["sampler"] == sampler]
            for dataset, group in chosen.groupby("dataset", sort=False):
                by_k = group.groupby("K")["sd_ratio"].agg(["median", "min", "max"])
                colour, marker = styles[dataset]
                ax.plot(by_k.index, by_k["median"], color=colour, marker=marker, ms=4, lw=1.2, label=dataset)
                ax.fill_between(by_k.index, by_k["min"], by_k["max"], color=colour, alpha=0.12, lw=0)
            ax.axhspan(*SPREAD_BAND, color="0.85", zorder=0)
            ax.axhline(1.0, color="0.3", lw=0.8)
            ax.set_xscale("log")
            ks = sorted(chosen["K"].unique())
            ax.set_xticks(ks, [str(k) for k in ks])
            ax.minorticks_off()
            ax.set_title(sampler)
            ax.set_xlabel("K (responses per item)")
        axes[0][0].set_ylabel("sd(δ*) / sd(δ)")
        _shared_legend(fig, axes[0])
    return fig


def uniformity_figure(result: Calibration):
    """Per sampler, the quantiles of the replicate p-values against the uniform law (a QQ plot), one line per
    dataset; log axes show the region near 0.05 (marked)."""
    import matplotlib.pyplot as plt

    from analysis.plots import COLUMN_INCHES, STYLE

    p = result.p_values
    samplers = sorted(p["sampler"].unique())
    styles = _styles(p["dataset"])
    probs = np.geomspace(0.001, 0.999, 200)
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(1, len(samplers), figsize=(COLUMN_INCHES, 2.9), sharey=True, squeeze=False,
                                 constrained_layout=True)
        for ax, sampler in zip(axes[0], samplers):
            for dataset, group in p[p["sampler"] == sampler].groupby("dataset", sort=False):
                ax.plot(probs, np.quantile(group["p"], probs), lw=1.3, color=styles[dataset][0], label=dataset)
            ax.plot([1e-3, 1], [1e-3, 1], color="0.3", lw=0.8, ls="--")
            ax.axvline(ALPHA, color="crimson", lw=0.8, ls=(0, (4, 2)))
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.minorticks_off()
            ax.set_xlim(1e-3, 1)
            ax.set_ylim(1e-3, 1)
            ax.set_title(sampler)
            ax.set_xlabel("uniform quantile")
        axes[0][0].set_ylabel("quantile of p_j")
        _shared_legend(fig, axes[0])
    return fig
