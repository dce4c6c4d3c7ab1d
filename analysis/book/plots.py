"""Figures for the book, drawn from the tidy result table.

Every figure is sized to the book's content column (:data:`COLUMN_INCHES` at :data:`DPI`, so it is shown at its
natural size and its 9 pt tick labels stay 9 pt), has one panel per metric or run it is given, never dropping
one, and reads its metric labels from the metric registry. The main figures follow the paper's Figures 1-3: p-value against budget for a few
chosen K (a discrete legend), one panel per metric, on a log p-axis with the 0.05 line marked
(:func:`p_value_figure`). :func:`p_value_heatmaps` marks p < 0.05 cells with a dot; :func:`effect_by_rule` draws
the effect size against K under both perturbation rules, beside the paper's values. :func:`all_metrics_curves` is
the many-panel grid, meant for a collapsed section.
"""

from __future__ import annotations

import zlib

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from analysis.experiment import calibration
from analysis.paper import tables
from analysis.experiment.grid import ALPHA
from analysis.engine.metrics import METRIC_LABELS, METRICS

DPI = 100
COLUMN_INCHES = 7.4  # 740 px at DPI: a figure in the content column at 1400 px gets at most about 760 px (the browser test checks it)
FONT = 9  # points, for tick labels, legends and panel titles
P_FLOOR = 1e-4  # p-values below this (including 0) are drawn at the floor of the log axis
PREFERRED_KS = (1, 5, 20, 100, 10, 40, 3)  # in order of preference: the small, middle and large K of the grid
STYLE = {"figure.dpi": DPI, "savefig.dpi": DPI, "font.size": FONT, "axes.titlesize": FONT + 1,
         "axes.labelsize": FONT + 1, "xtick.labelsize": FONT, "ytick.labelsize": FONT, "legend.fontsize": FONT,
         "figure.titlesize": FONT + 2, "legend.title_fontsize": FONT}
LINESTYLES = ("-", "--", ":", "-.")
MARKERS = ("o", "s", "^", "D", "v", "P", "X")
STYLE_SLOTS = 10  # a run's slot is its colour (tab10), its marker (slot mod 7) and its line style (slot mod 4)


def _see_through(colour, r: int):
    """The face of run ``r``'s markers in an effect-size figure: the first run's filled, later runs' (drawn larger,
    so that runs whose Δ coincide all show) a translucent fill of their colour. Never hollow: a hollow marker means
    a design beyond the data in the p-value figures."""
    return None if r == 0 else (*colour[:3], 0.3)


def run_styles(runs) -> dict:
    """Each run's style slot in the effect-size figures, the same in every chapter: a stable hash of the run's label
    picks it, and where two runs of one figure would share a slot the later takes the next free one. (The p-value
    figures, whose colours are the K, style runs by place: their captions read the first solid, the second dashed.)"""
    taken, slots = set(), {}
    for run in runs:
        slot = zlib.crc32(tables.run_label(*run).encode()) % STYLE_SLOTS
        while slot in taken and len(taken) < STYLE_SLOTS:
            slot = (slot + 1) % STYLE_SLOTS
        taken.add(slot)
        slots[run] = slot
    return slots
RATIO_TICKS = (0.05, 0.1, 0.25, 0.5, 0.8, 1.0, 1.25, 2.0, 4.0, 10.0, 20.0)  # a ratio axis's labelled values


def _ncol(n: int) -> int:
    return n if n <= 5 else int(np.ceil(n / 2))


def _letter(i: int) -> str:
    return f"({chr(ord('a') + i)})"


def glue_figures(**figures: plt.Figure) -> None:
    """Store figures for ``{glue:figure}`` directives and close them, so a notebook cell shows none of them."""
    from myst_nb import glue

    for name, figure in figures.items():
        glue(name, figure, display=False)
        plt.close(figure)


def choose_ks(available, n: int = 6) -> list[int]:
    """A few K values to draw: the paper's landmarks that the grid has, filled up from the grid if needed."""
    available = sorted(int(k) for k in set(available))
    chosen = [k for k in PREFERRED_KS if k in available][:n]
    for k in available:
        if len(chosen) >= n:
            break
        if k not in chosen:
            chosen.append(k)
    return sorted(chosen)


def _panel_grid(n: int, height_per_row: float = 1.9, sharey: bool = True):
    """A grid of ``n`` panels across the content column; returns the figure and the panels in reading order."""
    cols = 1 if n == 1 else 2 if n <= 4 else 4 if n in (7, 8) else 3
    rows = int(np.ceil(n / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(COLUMN_INCHES, 0.9 + height_per_row * rows), squeeze=False,
                             sharex=True, sharey=sharey, constrained_layout=True)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    panels = list(axes.flat[:n])
    for i, ax in enumerate(panels):
        ax.tick_params(labelbottom=i + cols >= n)  # the lowest visible panel of each column keeps its ticks
    return fig, panels


def _label_axes(panels, xlabel: str, ylabel: str) -> None:
    n = len(panels)
    cols = panels[0].get_gridspec().ncols if panels else 1
    for i, ax in enumerate(panels):
        if i + cols >= n:
            ax.set_xlabel(xlabel)
        if i % cols == 0:
            ax.set_ylabel(ylabel)


def p_value_figure(results: pd.DataFrame, runs, epsilon: float, metrics=None, ks=None, title: str = "") -> plt.Figure:
    """The paper's Figures 1-3: p-value against budget for a few K, one panel per metric.

    ``runs`` are one or two ``(dataset, sampler)`` runs, drawn with solid and dashed lines; colour is K (a discrete
    legend). The p-axis is logarithmic with p = 0.05 marked; p-values below :data:`P_FLOOR` are drawn at the floor.
    Designs the data cannot supply (``beyond_data``) are drawn with hollow markers, and the title says so.
    Returns ``None`` without results or runs.
    """
    if results is None or not runs:
        return None
    runs = [tables.as_run(r) for r in runs]
    chosen = pd.concat([tables.select(results, run, epsilon) for run in runs])
    metrics = [m for m in (metrics or METRICS) if m in set(chosen["metric"])]
    ks = ks or choose_ks(chosen["K"])
    colours = plt.get_cmap("tab10")
    with plt.rc_context(STYLE):
        fig, axes = _panel_grid(len(metrics))
        for i, (ax, metric) in enumerate(zip(axes, metrics)):
            for r, run in enumerate(runs):  # by place, as the captions read them: the first solid, the second dashed
                cell = tables.select(chosen, run)
                cell = cell[cell["metric"] == metric]
                for c, k in enumerate(ks):
                    line = cell[cell["K"] == k].sort_values("NK")
                    if line.empty:
                        continue
                    ax.plot(line["NK"], line["p_value"].clip(lower=P_FLOOR), color=colours(c % 10),
                            ls=LINESTYLES[r % 4], marker=MARKERS[r % 7], ms=3, lw=1.2)
                    if "beyond_data" in line and line["beyond_data"].any():
                        out = line[line["beyond_data"].astype(bool)]
                        ax.plot(out["NK"], out["p_value"].clip(lower=P_FLOOR), ls="none", marker=MARKERS[r % 7],
                                ms=5, mfc="white", mec=colours(c % 10), mew=1.0)
            ax.axhline(ALPHA, color="crimson", lw=0.9, ls=(0, (4, 2)))
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.minorticks_off()  # no minor ticks on log axes: drawing them took two thirds of a figure's time
            ax.set_ylim(P_FLOOR * 0.7, 1.3)
            ax.set_title(f"{_letter(i)} {METRIC_LABELS[metric]}")
            ax.grid(True, which="major", lw=0.3, alpha=0.5)
        _label_axes(axes, "budget N×K", "p-value")
        handles = [Line2D([], [], color=colours(c % 10), lw=2, label=f"K = {k}") for c, k in enumerate(ks)]
        handles += [Line2D([], [], color="black", ls=LINESTYLES[r % 4], marker=MARKERS[r % 7], ms=3,
                           label=tables.run_label(*run)) for r, run in enumerate(runs)]
        handles.append(Line2D([], [], color="crimson", ls=(0, (4, 2)), label=f"p = {ALPHA}"))
        fig.legend(handles=handles, loc="outside lower center", ncol=_ncol(len(handles)), frameon=False)
        beyond = "beyond_data" in chosen and chosen["beyond_data"].astype(bool).any()
        fig.suptitle((title or f"p-value against budget, ε = {epsilon:g}")
                     + ("; hollow markers: designs beyond the data" if beyond else ""))  # the caption says which
    return fig


def p_value_heatmaps(results: pd.DataFrame, epsilon: float, metric: str = "accuracy", runs=None) -> plt.Figure:
    """p over (budget, K) for one metric, one panel per run; a dot marks cells with p < 0.05.
    Returns ``None`` without results."""
    if results is None:
        return None
    chosen = results[np.isclose(results["epsilon"], epsilon) & (results["metric"] == metric)]
    runs = [tables.as_run(r) for r in (runs or tables.runs(chosen))]
    with plt.rc_context(STYLE):
        n = len(runs)
        cols = min(n, 3) if n != 4 else 2
        rows = int(np.ceil(n / cols))
        fig, axes = plt.subplots(rows, cols, figsize=(COLUMN_INCHES, 0.8 + 2.6 * rows), squeeze=False,
                                 constrained_layout=True)
        for ax in axes.flat[n:]:
            ax.set_visible(False)
        image = None
        for ax, run in zip(axes.flat, runs):
            cell = tables.select(chosen, run)
            wide = cell.pivot(index="K", columns="NK", values="p_value").sort_index(ascending=False)
            values = wide.to_numpy(float)
            image = ax.imshow(np.clip(values, P_FLOOR, 1), cmap="viridis", norm=matplotlib.colors.LogNorm(P_FLOOR, 1),
                              aspect="auto")
            ys, xs = np.nonzero(values < ALPHA)
            ax.scatter(xs, ys, s=14, c="white", edgecolors="black", linewidths=0.6)
            xt = list(range(wide.shape[1]))
            step = max(1, int(np.ceil(len(xt) / 5)))
            ax.set_xticks(xt[::step], [f"{v:,}" for v in wide.columns[::step]], rotation=30, ha="right")
            yt = list(range(wide.shape[0]))
            ystep = max(1, int(np.ceil(len(yt) / 8)))
            ax.set_yticks(yt[::ystep], [str(int(v)) for v in wide.index[::ystep]])
            ax.set_title(tables.run_label(*run))
            ax.set_xlabel("budget N×K")
            ax.set_ylabel("K")
        if image is not None:
            fig.colorbar(image, ax=axes, shrink=0.8, label="p-value (log)")
        fig.suptitle(f"{METRIC_LABELS[metric]}, ε = {epsilon:g}; dots: p < {ALPHA}")
    return fig


def effect_by_rule(by_rule: dict[str, pd.DataFrame], epsilon: float, budget: int,
                   metrics=("accuracy", "precision", "recall", "f1", "jsd")) -> plt.Figure:
    """Effect size Δ against K at one budget under each perturbation rule, one panel per metric, beside the paper.

    ``by_rule`` maps a rule (a name of :data:`analysis.engine.PERTURBATIONS`) to its results. Runs are colours and
    markers (later runs larger and hollow, so that coinciding runs both show), rules line styles;
    a star marks the paper's Δ at the paper's K (Table 1) for the dataset a run imitates.
    """
    first = next(iter(by_rule.values()))
    runs = tables.runs(first)
    colours = plt.get_cmap("tab10")
    slot = run_styles(runs)
    metrics = list(metrics)
    with plt.rc_context(STYLE):
        fig, axes = _panel_grid(len(metrics), 2.0, sharey=False)
        for i, (ax, metric) in enumerate(zip(axes, metrics)):
            for r, run in enumerate(runs):
                for s, (rule, results) in enumerate(by_rule.items()):
                    cell = tables.select(results, run, epsilon)
                    cell = cell[(cell["metric"] == metric) & (cell["NK"] == budget)].sort_values("K")
                    if not cell.empty:
                        ax.plot(cell["K"], cell["delta"], color=colours(slot[run]), ls=LINESTYLES[s % 4],
                                marker=MARKERS[slot[run] % 7], ms=2.5 + 1.5 * r,
                                mfc=_see_through(colours(slot[run]), r), lw=1.2)
                paper_name = tables.imitated(first, run[0])
                if paper_name is not None and np.isclose(epsilon, tables.PAPER_EPSILON):
                    k = tables.paper_value(paper_name, run[1], metric, "K")
                    delta = tables.paper_value(paper_name, run[1], metric, "delta")
                    if k is not None and delta is not None:
                        ax.plot([k], [delta], marker="*", ms=10, color=colours(slot[run]), mec="black", mew=0.5,
                                ls="")
            ax.axhline(0, color="grey", lw=0.6)
            ax.set_xscale("log")
            ax.minorticks_off()
            ax.set_title(f"{_letter(i)} {METRIC_LABELS[metric]}")
        _label_axes(axes, "K", "Δ")
        handles = [Line2D([], [], color=colours(slot[run]), lw=2, marker=MARKERS[slot[run] % 7], ms=2.5 + 1.5 * r,
                          mfc=_see_through(colours(slot[run]), r), label=tables.run_label(*run))
                   for r, run in enumerate(runs)]
        handles += [Line2D([], [], color="black", ls=LINESTYLES[s % 4], label=f"{rule} rule")
                    for s, rule in enumerate(by_rule)]
        if np.isclose(epsilon, tables.PAPER_EPSILON):
            handles.append(Line2D([], [], color="grey", marker="*", ms=9, ls="", mec="black",
                                  label="paper, Table 1"))
        fig.legend(handles=handles, loc="outside lower center", ncol=3, frameon=False)
        fig.suptitle(f"Effect size Δ against K at N×K = {budget:,}, ε = {epsilon:g}")
    return fig


def effect_sizes(results: pd.DataFrame, epsilon: float, metrics=None) -> plt.Figure:
    """Effect size Δ against K (mean over budgets), one panel per metric, one line per run."""
    chosen = results[np.isclose(results["epsilon"], epsilon)]
    metrics = [m for m in (metrics or METRICS) if m in set(chosen["metric"])]
    runs = tables.runs(chosen)
    colours = plt.get_cmap("tab10")
    slot = run_styles(runs)
    with plt.rc_context(STYLE):
        fig, axes = _panel_grid(len(metrics), sharey=False)
        for i, (ax, metric) in enumerate(zip(axes, metrics)):
            for r, run in enumerate(runs):
                cell = tables.select(chosen, run)
                mean = cell[cell["metric"] == metric].groupby("K")["delta"].mean()
                # runs whose Δ coincide (S2 and S3 of one dataset) would hide each other: later runs draw larger,
                # see-through markers, so every run shows
                ax.plot(mean.index, mean.to_numpy(), color=colours(slot[run]), marker=MARKERS[slot[run] % 7],
                        ms=3 + 1.5 * r, mfc=_see_through(colours(slot[run]), r), lw=1.2, ls=LINESTYLES[slot[run] % 4])
            ax.axhline(0, color="grey", lw=0.6)
            ax.set_xscale("log")
            ax.minorticks_off()
            ax.set_title(f"{_letter(i)} {METRIC_LABELS[metric]}")
        _label_axes(axes, "K", "Δ")
        handles = [Line2D([], [], color=colours(slot[run]), marker=MARKERS[slot[run] % 7], ls=LINESTYLES[slot[run] % 4],
                          ms=3 + 1.5 * r, mfc=_see_through(colours(slot[run]), r), label=tables.run_label(*run))
                   for r, run in enumerate(runs)]
        fig.legend(handles=handles, loc="outside lower center", ncol=min(len(handles), 3), frameon=False)
        fig.suptitle(f"Effect size Δ against K, mean over budgets, ε = {epsilon:g}")
    return fig


def all_metrics_curves(results: pd.DataFrame, epsilon: float, run, ks=None) -> plt.Figure:
    """Every K of one run: p-value against budget, one panel per metric (for the collapsed "all metrics" part)."""
    chosen = tables.select(results, run, epsilon)
    ks = sorted(int(k) for k in set(chosen["K"])) if ks is None else ks
    cmap = plt.get_cmap("viridis")
    metrics = [m for m in METRICS if m in set(chosen["metric"])]
    with plt.rc_context(STYLE):
        fig, axes = _panel_grid(len(metrics))
        for i, (ax, metric) in enumerate(zip(axes, metrics)):
            cell = chosen[chosen["metric"] == metric]
            for c, k in enumerate(ks):
                line = cell[cell["K"] == k].sort_values("NK")
                ax.plot(line["NK"], line["p_value"].clip(lower=P_FLOOR), color=cmap(c / max(1, len(ks) - 1)),
                        lw=1, marker=".", ms=3)
            ax.axhline(ALPHA, color="crimson", lw=0.9, ls=(0, (4, 2)))
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.minorticks_off()
            ax.set_ylim(P_FLOOR * 0.7, 1.3)
            ax.set_title(f"{_letter(i)} {METRIC_LABELS[metric]}")
        _label_axes(axes, "budget N×K", "p-value")
        handles = [Line2D([], [], color=cmap(c / max(1, len(ks) - 1)), lw=2, label=f"K = {k}")
                   for c, k in enumerate(ks)]
        fig.legend(handles=handles, loc="outside lower center", ncol=min(len(handles), 6), frameon=False)
        fig.suptitle(f"{tables.run_label(*tables.as_run(run))}: every K, ε = {epsilon:g}")
    return fig


def cluster_heatmap(accuracy: pd.DataFrame, members: pd.DataFrame, title: str) -> plt.Figure:
    """Accuracy (%) per group and system, with each value written in its cell; first-cluster cells are bold and
    outlined."""
    values = accuracy.to_numpy(float)
    inside = members.reindex(index=accuracy.index, columns=accuracy.columns).fillna(False).to_numpy(bool)
    with plt.rc_context(STYLE):
        width = min(COLUMN_INCHES, 2.2 + 0.75 * accuracy.shape[1])
        fig, ax = plt.subplots(figsize=(width, 1.0 + 0.32 * accuracy.shape[0]), constrained_layout=True)
        finite = values[np.isfinite(values)]
        low = max(0, (finite.min() if finite.size else 0) - 5)
        image = ax.imshow(values, cmap="Blues", vmin=low, vmax=100, aspect="auto")
        for y in range(values.shape[0]):
            for x in range(values.shape[1]):
                if not np.isfinite(values[y, x]):
                    continue
                dark = (values[y, x] - low) / max(1e-9, 100 - low) > 0.6
                # one decimal: 89.6 (outside the first cluster) and 89.9 (inside) must not both read 90
                ax.text(x, y, f"{values[y, x]:.1f}", ha="center", va="center", fontsize=FONT - 2,
                        color="white" if dark else "black", fontweight="bold" if inside[y, x] else "normal")
                if inside[y, x]:
                    ax.add_patch(plt.Rectangle((x - 0.5, y - 0.5), 1, 1, fill=False, ec="darkorange", lw=1.6))
        ax.set_xticks(range(accuracy.shape[1]), accuracy.columns, rotation=40, ha="right")
        ax.set_yticks(range(accuracy.shape[0]), accuracy.index)
        ax.set_title(title)
        fig.colorbar(image, ax=ax, label="accuracy (%)", shrink=0.8)
    return fig


def show_all_metrics(results: pd.DataFrame, epsilon: float) -> None:
    """Display :func:`all_metrics_curves` for every run (for a cell whose output is collapsed)."""
    from IPython.display import display

    from IPython.display import Markdown

    for run in tables.runs(results):
        figure = all_metrics_curves(results, epsilon, run)
        display(figure)
        plt.close(figure)
        display(Markdown(all_metrics_caption(results, epsilon, run)))


def all_metrics_caption(results: pd.DataFrame, epsilon: float, run) -> str:
    """The caption under one of :func:`show_all_metrics`'s figures: what it draws, its axes and its colours."""
    ks = sorted(int(k) for k in tables.select(results, run, epsilon)["K"].unique())
    return (f"*{tables.run_label(*tables.as_run(run))} at ε = {epsilon:g}: p-value against budget for every K of the "
            f"grid ({ks[0]} to {ks[-1]}, purple to yellow), one panel per metric, panel (a) Accuracy; log p-axis, dashed "
            f"line p = {ALPHA}, p-values below {P_FLOOR:g} drawn at {P_FLOOR:g}.*")


def show(figure: plt.Figure | None) -> None:
    """Display a figure once in a cell's output and close it (nothing when ``figure`` is None)."""
    if figure is None:
        return
    from IPython.display import display

    display(figure)
    plt.close(figure)


def glue_overview(prefix: str, results: pd.DataFrame, epsilon: float, heatmap: str = "accuracy") -> None:
    """Glue the figures every RQ chapter shows besides its own: ``<prefix>_heatmap`` (one metric over budget and K)
    and ``<prefix>_effects`` (Δ against K for every metric)."""
    glue_figures(**{f"{prefix}_heatmap": p_value_heatmaps(results, epsilon, heatmap),
                    f"{prefix}_effects": effect_sizes(results, epsilon)})


def ratio_figure(by_alternative: dict[str, pd.DataFrame], names, table: str = "table1") -> plt.Figure:
    """Our Δ over the paper's at each of the paper's cells of ``table`` (the median over seeds, log scale), one
    marker per alternative of ``names``, cells grouped by run, with the band of ×1.25 either way. ``by_alternative``
    maps a name to :func:`analysis.paper.why.cells`' frame."""
    fig, ax = plt.subplots(figsize=(7.5, 3.2))
    order = None
    for i, name in enumerate(names):
        found = by_alternative[name]
        found = found[(found["table"] == table) & found["ratio"].notna()]
        median = found.groupby(["dataset", "sampler", "metric"], sort=False)["ratio"].median()
        order = list(median.index) if order is None else order
        values = median.reindex(order).clip(lower=0.05)
        ax.scatter(np.arange(len(order)) + 0.15 * (i - (len(names) - 1) / 2), values, s=14, label=name)
    ax.set_yscale("log")
    ax.axhspan(0.8, 1.25, color="0.85", zorder=0, label="within ×1.25")
    runs = [f"{d} {s}" for d, s, _ in order]
    starts = [j for j in range(len(runs)) if j == 0 or runs[j] != runs[j - 1]]
    ax.set_xticks(starts)
    ax.set_xticklabels([runs[j] for j in starts], rotation=20, ha="right", fontsize=8)
    ax.set_xlabel("the paper's cells, grouped by run (dataset and sampler)")
    ax.minorticks_off()
    low, high = ax.get_ylim()
    ticks = [v for v in RATIO_TICKS if low <= v <= high]  # a log axis over less than a decade labels only 10⁰
    ax.set_yticks(ticks, [f"{v:g}" for v in ticks])
    ax.set_ylabel("our Δ / the paper's Δ")
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    return fig


# ------------------------------------------------------------- calibration and speed

def _dataset_styles(datasets) -> dict:
    """One colour and marker per dataset, the same in every panel."""
    colours = plt.get_cmap("tab10")
    return {name: (colours(i % 10), MARKERS[i % len(MARKERS)]) for i, name in enumerate(dict.fromkeys(datasets))}


def _shared_legend(fig, axes) -> None:
    handles = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    fig.legend(handles.values(), handles.keys(), loc="outside lower center", ncol=min(3, len(handles)),
               frameon=False)

def calibration_spread(result: calibration.Calibration) -> plt.Figure:
    """``sd(delta*) / sd(delta)`` against K, one panel per sampler, one line per dataset (median over budgets and
    metrics, with the range as a band); the 99 % band of a ratio of two samples of normal deltas of the run's size
    is shaded (heavy-tailed cells have wider bands of their own)."""
    table = result.cells.dropna(subset=["sd_ratio"])
    samplers = sorted(table["sampler"].unique())
    styles = _dataset_styles(table["dataset"])
    n = int(table["n_samples"].min())
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
            ax.axhspan(*calibration.spread_band(np.sqrt(1 / n)), color="0.85", zorder=0)  # normal deltas
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


def calibration_uniformity(result: calibration.Calibration) -> plt.Figure:
    """Per sampler, the quantiles of the replicate p-values against the uniform law (a QQ plot), one line per
    dataset; log axes show the region near 0.05 (marked)."""
    p = result.p_values
    samplers = sorted(p["sampler"].unique())
    styles = _dataset_styles(p["dataset"])
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
        axes[0][0].set_ylabel("quantile of the replicates' own p (p$_j$)")
        _shared_legend(fig, axes[0])
    return fig


def speed(timings: pd.DataFrame) -> plt.Figure:
    """Seconds per cell against the budget NK, one panel per sampler, one line per K (log-log)."""
    samplers = list(dict.fromkeys(timings["sampler"]))
    ks = sorted(timings["K"].unique())
    colours = plt.get_cmap("viridis")
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(1, len(samplers), figsize=(COLUMN_INCHES, 2.9), sharey=True, squeeze=False,
                                 constrained_layout=True)
        for ax, sampler in zip(axes[0], samplers):
            chosen = timings[timings["sampler"] == sampler]
            for i, k in enumerate(ks):
                line = chosen[chosen["K"] == k].sort_values("NK")
                ax.plot(line["NK"], line["seconds"], marker=MARKERS[i % len(MARKERS)], ms=4, lw=1.2,
                        color=colours(i / max(1, len(ks) - 1)), label=f"K = {k}")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.minorticks_off()
            ax.set_title(f"{sampler} ({chosen['dataset'].iloc[0]})")
            ax.set_xlabel("budget N×K")
            ax.grid(True, lw=0.3, alpha=0.5)
        axes[0][0].set_ylabel("seconds per cell")
        handles, labels = axes[0][0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncol=min(len(ks), 7), frameon=False)
    return fig
