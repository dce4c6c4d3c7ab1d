"""Figures: the paper's layout, one panel per metric (none dropped), sized to the content column, readable ticks, p < 0.05
marked."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from analysis.book import plots # noqa: E402
from analysis.engine.metrics import METRICS  # noqa: E402
from conftest import falling, grid_results as results_for  # noqa: E402


@pytest.fixture(scope="module")
def results():
    return results_for({("dices-synthetic", "S1"): falling(3), ("dices-synthetic", "S2"): falling()},
                       imitates={"dices-synthetic": "DICES"})


def _check_size_and_fonts(fig):
    assert fig.get_size_inches()[0] <= plots.COLUMN_INCHES + 1e-9
    visible = [ax for ax in fig.axes if ax.get_visible() and ax.get_label() != "<colorbar>"]
    for ax in visible:
        for label in ax.get_xticklabels() + ax.get_yticklabels():
            if label.get_text():
                assert label.get_fontsize() >= 9


def test_p_value_figure_follows_the_papers_figures(results):
    fig = plots.p_value_figure(results, [("dices-synthetic", "S1"), ("dices-synthetic", "S2")], 0.3)
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert len(panels) == len(METRICS)
    assert panels[0].get_title() == "(a) Accuracy"
    for ax in panels:
        assert ax.get_yscale() == "log" and ax.get_xscale() == "log"
        assert any(np.allclose(line.get_ydata(), 0.05) for line in ax.get_lines())  # the 0.05 line
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert [t for t in legend if t.startswith("K = ")] == ["K = 1", "K = 5", "K = 20"]
    _check_size_and_fonts(fig)


def test_choose_ks_prefers_the_papers_landmarks():
    assert plots.choose_ks(range(1, 101)) == [1, 5, 10, 20, 40, 100]
    assert plots.choose_ks([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 40, 60, 80, 100]) == [1, 5, 10, 20, 40, 100]
    assert plots.choose_ks([1, 5, 20]) == [1, 5, 20]


def test_heatmap_marks_every_significant_cell(results):
    fig = plots.p_value_heatmaps(results, 0.3, "mae")
    panels = [ax for ax in fig.axes if ax.get_visible() and ax.collections and ax.images]
    assert len(panels) == 2
    chosen = results[results["metric"] == "mae"]
    for ax, sampler in zip(panels, ("S1", "S2")):
        dots = ax.collections[0].get_offsets()
        assert len(dots) == int((chosen[chosen["sampler"] == sampler]["p_value"] < 0.05).sum())
    _check_size_and_fonts(fig)


def test_effect_by_rule_draws_both_rules_beside_the_paper(results):
    uniform = results.assign(delta=results["delta"] / 2, perturbation="uniform")
    fig = plots.effect_by_rule({"dirichlet": results, "uniform": uniform}, 0.3, 1000)
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "dirichlet rule" in labels and "uniform rule" in labels and "paper, Table 1" in labels
    assert len([ax for ax in fig.axes if ax.get_visible()]) == 5
    _check_size_and_fonts(fig)


def test_nothing_to_draw_gives_no_figure():
    assert plots.p_value_figure(None, [], 0.3) is None and plots.p_value_heatmaps(None, 0.3) is None


@pytest.mark.slow
def test_figures_fit_the_column_at_the_papers_grid():
    """With the paper's 15 K and 9 budgets, every figure saved as the book saves it (tight box) stays within the
    content column, so the browser never scales it down."""
    import io

    from PIL import Image

    ks = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 40, 60, 80, 100)
    budgets = (100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000)
    rows = [{"dataset": "dices-synthetic", "sampler": s, "perturbation": "dirichlet", "epsilon": 0.3, "NK": nk, "K": k,
             "metric": m, "p_value": min(1, 30 / nk * k ** 0.2), "delta": 0.1, "null_sd": 0.02, "imitates": "DICES"}
            for s in ("S1", "S2") for nk in budgets for k in ks for m in plots.METRICS]
    import pandas as pd
    results = pd.DataFrame(rows)
    results["beyond_data"] = results["NK"] // results["K"] > 350  # hollow markers: the title's longest form
    figures = [plots.p_value_figure(results, [("dices-synthetic", "S1"), ("dices-synthetic", "S2")], 0.3),
               plots.p_value_heatmaps(results, 0.3, "mae"), plots.effect_sizes(results, 0.3),
               plots.effect_by_rule({"dirichlet": results, "uniform": results}, 0.3, 5000),
               plots.all_metrics_curves(results, 0.3, ("dices-synthetic", "S1"))]
    for fig in figures:
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", bbox_inches="tight")
        width = Image.open(buffer).size[0]
        assert width <= plots.COLUMN_INCHES * plots.DPI * 1.03, f"{fig._suptitle.get_text()}: {width} px"


def test_a_ninth_metric_gets_its_own_panel(monkeypatch, results):
    """Figures draw every metric they are given: a metric added to the registry is never dropped."""
    extra = results[results["metric"] == "accuracy"].assign(metric="brier")
    monkeypatch.setitem(plots.METRIC_LABELS, "brier", "Brier")
    both = pd.concat([results, extra])
    fig = plots.p_value_figure(both, [("dices-synthetic", "S1")], 0.3, metrics=[*METRICS, "brier"])
    titles = [ax.get_title() for ax in fig.axes if ax.get_visible()]
    assert len(titles) == len(METRICS) + 1 and titles[-1].endswith("Brier")
    effects = plots.effect_sizes(both, 0.3, metrics=[*METRICS, "brier"])
    assert len([ax for ax in effects.axes if ax.get_visible()]) == len(METRICS) + 1


def test_ratio_figure_draws_each_alternative_at_every_cell_with_a_ratio():
    cells = pd.DataFrame({"table": "table1", "dataset": ["DICES"] * 4 + ["Toxicity"] * 2,
                          "sampler": ["S1"] * 4 + ["S2"] * 2, "metric": ["accuracy", "mae"] * 3,
                          "seed": [0, 0, 1, 1, 0, 0], "ratio": [1.0, 2.0, 1.2, np.nan, 0.5, 0.9]})
    fig = plots.ratio_figure({"a": cells, "b": cells.assign(ratio=cells["ratio"] * 2)}, ["a", "b"])
    dots = [c for c in fig.axes[0].collections if c.get_offsets().shape[0]]
    assert [len(c.get_offsets()) for c in dots] == [4, 4]  # (DICES S1, Toxicity S2) x (accuracy, mae)
    assert np.allclose(dots[0].get_offsets()[:, 1], [1.1, 2.0, 0.5, 0.9])  # the median over seeds per cell
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["DICES S1", "Toxicity S2"]
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert {"0.5", "1", "2"} <= set(labels), labels  # a log axis over less than a decade is labelled, not 10⁰ alone


def test_the_all_metrics_figures_have_a_caption_that_names_the_run_and_the_ks():
    from analysis.book import plots as book_plots
    from conftest import falling, grid_results

    results = grid_results({("x", "S2"): falling()}, (100, 1000), (1, 5, 20))
    caption = book_plots.all_metrics_caption(results, 0.3, ("x", "S2"))
    assert caption.startswith("*x, S2 at ε = 0.3: p-value against budget for every K of the grid (1 to 20")
    assert caption.endswith(".*") and "dashed line p = 0.05" in caption


def test_a_figure_caption_explains_hollow_markers_only_where_a_design_is_beyond_the_data():
    from analysis.paper import tables
    from conftest import falling, grid_results

    results = grid_results({("x", "S2"): falling()}, (100, 1000), (1, 5, 20))
    results["beyond_data"] = False
    assert "Hollow" not in tables.figure_caption(results, [("x", "S2")], "DICES", "Figure 1")
    results.loc[results["K"] == 20, "beyond_data"] = True
    caption = tables.figure_caption(results, [("x", "S2")], "DICES", "Figure 1")
    assert "Hollow markers are a design these data cannot supply" in caption and "or N above the items" in caption


def test_a_figure_caption_says_recall_is_accuracy_only_under_an_averaging_where_it_is():
    from analysis.paper import tables
    from conftest import falling, grid_results

    results = grid_results({("x", "S2"): falling()}, (100, 1000), (1, 5, 20))
    for averaging in ("weighted", "micro"):
        caption = tables.figure_caption(results, [("x", "S2")], "DICES", "Figure 1", averaging=averaging)
        assert f"Under {averaging} averaging Recall (e) equals Accuracy (a)" in caption
    for averaging in ("macro", None):
        assert "equals Accuracy" not in tables.figure_caption(results, [("x", "S2")], "DICES", "Figure 1",
                                                              averaging=averaging)


def test_a_run_keeps_its_colour_marker_and_line_style_in_every_figure():
    """Styles follow the run, not its place in a figure: the same run drawn beside other runs in another figure is
    drawn alike, and the runs of one figure never share a style."""
    from analysis.book import plots

    runs = [("dices-synthetic", "S1"), ("dices-synthetic", "S2"), ("toxicity-synthetic-binary", "S3"),
            ("dices-5raters", "S1"), ("d3code-synthetic-binary", "S2")]
    together = plots.run_styles(runs)
    assert len(set(together.values())) == len(runs)
    for run in runs:  # alone or beside one other run, unless that one took its slot first
        assert plots.run_styles([run])[run] == plots.run_styles([run, runs[0]])[run] or run == runs[0]
    assert plots.run_styles(runs[::-1])[runs[2]] == together[runs[2]] or len(set(
        plots.run_styles([r])[r] for r in runs)) < len(runs)  # only a collision can move a run's slot
    many = [("d", f"S{i}") for i in range(plots.STYLE_SLOTS)]
    assert sorted(plots.run_styles(many).values()) == list(range(plots.STYLE_SLOTS))


def test_effect_size_figures_draw_no_hollow_marker():
    """Hollow markers mean a design beyond the data in the p-value figures; the effect-size figures keep later runs
    visible with larger, see-through markers instead, filled in their legend as on the axes."""
    from matplotlib.colors import to_rgba

    results = results_for({("x", "S2"): falling(), ("y", "S2"): falling(2.0), ("z", "S3"): falling(3.0)},
                          (100, 1000), (1, 5, 20))
    figures = [plots.effect_sizes(results, 0.3), plots.effect_by_rule({"one": results, "other": results}, 0.3, 1000)]
    for fig in figures:
        lines = [line for ax in fig.axes for line in ax.get_lines() if line.get_marker() not in ("None", "", "*")]
        lines += [h for legend in fig.legends for h in legend.legend_handles if hasattr(h, "get_markerfacecolor")]
        faces = [line.get_markerfacecolor() for line in lines if line.get_marker() not in ("None", "")]
        assert faces and all(face != "none" and to_rgba(face)[3] > 0 for face in faces), faces
