"""Figures for the book, drawn from the tidy result table: p-value curves, p-value heatmaps and effect sizes.

Every function takes the table returned by :func:`analysis.grid.run` (several runs concatenated) and returns a
matplotlib figure; nothing is read from disk.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.colors import LogNorm

from analysis.grid import ALPHA
from analysis.metrics import METRIC_LABELS, METRICS


def _labelled(results: pd.DataFrame, epsilon: float, metrics) -> pd.DataFrame:
    chosen = results[results["epsilon"] == epsilon].copy()
    if metrics is not None:
        chosen = chosen[chosen["metric"].isin(metrics)]
    chosen["run"] = chosen["dataset"] + ":" + chosen["sampler"]
    chosen["Metric"] = pd.Categorical(chosen["metric"].map(METRIC_LABELS),
                                      categories=[METRIC_LABELS[m] for m in METRICS if m in set(chosen["metric"])])
    return chosen


def glue_figures(**figures: plt.Figure) -> None:
    """Store figures for ``{glue:figure}`` directives and close them, so a notebook cell shows none of them."""
    from myst_nb import glue

    for name, figure in figures.items():
        glue(name, figure, display=False)
        plt.close(figure)


def placeholder(text: str) -> plt.Figure:
    """A small figure that only says why the real one is missing (so the book still builds)."""
    fig, ax = plt.subplots(figsize=(4, 1.2))
    ax.axis("off")
    ax.text(0.5, 0.5, text, ha="center", va="center")
    return fig


def p_value_curves(results: pd.DataFrame, epsilon: float, metrics=None) -> plt.Figure:
    """p-value against budget, one line per K, one column per run (dataset:sampler), one row per metric."""
    data = _labelled(results, epsilon, metrics)
    grid = sns.relplot(data=data, x="NK", y="p_value", hue="K", hue_norm=LogNorm(), palette="viridis", kind="line",
                       col="run", row="Metric", height=2.1, aspect=1.35, marker="o", markersize=3,
                       facet_kws={"margin_titles": True, "sharey": True})
    for ax in grid.axes.flat:
        ax.set_xscale("log")
        ax.axhline(ALPHA, color="crimson", lw=0.8, ls="--")
    grid.set_axis_labels("budget N×K", "p-value")
    grid.set_titles(row_template="{row_name}", col_template="{col_name}")
    grid.figure.suptitle(f"p-value against budget (ε = {epsilon:g}); dashed line: p = {ALPHA}", y=1.01)
    return grid.figure


def p_value_heatmaps(results: pd.DataFrame, epsilon: float, metrics=("accuracy", "mae", "jsd")) -> plt.Figure:
    """Heatmaps of p over (NK, K): one row per metric, one column per run; outlined cells have p < 0.05."""
    data = _labelled(results, epsilon, metrics)
    runs = list(dict.fromkeys(data["run"]))
    chosen = [m for m in METRICS if m in set(data["metric"])]
    fig, axes = plt.subplots(len(chosen), len(runs), figsize=(3.2 * len(runs) + 1, 2.6 * len(chosen)),
                             squeeze=False, constrained_layout=True)
    for r, metric in enumerate(chosen):
        for c, run in enumerate(runs):
            ax = axes[r, c]
            cell = data[(data["metric"] == metric) & (data["run"] == run)]
            wide = cell.pivot(index="K", columns="NK", values="p_value").sort_index(ascending=False)
            image = ax.imshow(wide.to_numpy(), cmap="magma", vmin=0, vmax=0.5, aspect="auto")
            for y, x in zip(*np.nonzero(wide.to_numpy() < ALPHA)):
                ax.add_patch(plt.Rectangle((x - 0.5, y - 0.5), 1, 1, fill=False, ec="cyan", lw=1.2))
            ax.set_xticks(range(wide.shape[1]), [f"{v:g}" for v in wide.columns], rotation=90, fontsize=7)
            ax.set_yticks(range(wide.shape[0]), wide.index, fontsize=7)
            ax.set_title(f"{run} · {METRIC_LABELS[metric]}", fontsize=9)
            if c == 0:
                ax.set_ylabel("K")
            if r == len(chosen) - 1:
                ax.set_xlabel("budget N×K")
    fig.colorbar(image, ax=axes, shrink=0.6, label="p-value (clipped at 0.5)")
    return fig


def effect_sizes(results: pd.DataFrame, epsilon: float, metrics=None) -> plt.Figure:
    """Effect size Δ against K (mean over budgets), one panel per metric, one line per run."""
    data = _labelled(results, epsilon, metrics)
    mean = data.groupby(["run", "Metric", "K"], observed=True)["delta"].mean().reset_index()
    grid = sns.relplot(data=mean, x="K", y="delta", hue="run", col="Metric", col_wrap=4, kind="line", marker="o",
                       height=2.2, aspect=1.2, facet_kws={"sharey": False})
    for ax in grid.axes.flat:
        ax.set_xscale("log")
        ax.axhline(0, color="grey", lw=0.6)
    grid.set_axis_labels("K (responses per item)", "Δ (mean over budgets)")
    grid.set_titles("{col_name}")
    grid.figure.suptitle(f"Effect size Δ against K (ε = {epsilon:g})", y=1.02)
    return grid.figure


def cluster_heatmap(accuracy: pd.DataFrame, members: pd.DataFrame, title: str) -> plt.Figure:
    """Accuracy (%) per group and system as a heatmap; cells of the first significance cluster are outlined."""
    fig, ax = plt.subplots(figsize=(1.0 + 0.55 * accuracy.shape[1], 0.9 + 0.42 * accuracy.shape[0]),
                           constrained_layout=True)
    image = ax.imshow(accuracy.to_numpy(float), cmap="viridis", vmin=max(0, np.nanmin(accuracy.to_numpy()) - 5),
                      vmax=100, aspect="auto")
    for y, group in enumerate(accuracy.index):
        for x, system in enumerate(accuracy.columns):
            if bool(members.reindex(index=accuracy.index, columns=accuracy.columns).loc[group, system]):
                ax.add_patch(plt.Rectangle((x - 0.5, y - 0.5), 1, 1, fill=False, ec="white", lw=1.6))
    ax.set_xticks(range(accuracy.shape[1]), accuracy.columns, rotation=60, ha="right", fontsize=8)
    ax.set_yticks(range(accuracy.shape[0]), accuracy.index, fontsize=8)
    ax.set_title(title, fontsize=10)
    fig.colorbar(image, ax=ax, label="accuracy (%)")
    return fig
