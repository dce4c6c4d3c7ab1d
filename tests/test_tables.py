"""Tables: paper values follow the dataset, epsilons are labelled, pages get tidy tables; the metric registry."""

import numpy as np
import pandas as pd
import pytest

from analysis.engine import metrics
from analysis.paper import effect_sizes as es
from analysis.paper import marks
from analysis.paper import tables
from analysis.__main__ import main
from analysis.engine.metrics import METRICS
from analysis.experiment.table1 import table1, table1_text
from conftest import falling, grid_results
from conftest import grid_results as results_for


def test_registry_declares_each_metric_once_with_the_papers_eight_first():
    assert metrics.METRICS == ("accuracy", "mae", "wins", "precision", "recall", "f1", "kl_div", "jsd")
    assert metrics.ALL_METRICS[:len(metrics.METRICS)] == metrics.METRICS
    assert len(set(metrics.ALL_METRICS)) == len(metrics.REGISTRY)
    assert [m.label for m in metrics.REGISTRY] == [metrics.METRIC_LABELS[m] for m in metrics.ALL_METRICS]
    assert all(metrics.BY_NAME[m.column].default for m in metrics.REGISTRY)  # every variant stands for one of them
    assert set(metrics.VOTE_METRICS) | set(metrics.DISTRIBUTION_METRICS) == set(metrics.METRICS)
    assert not set(metrics.VOTE_METRICS) & set(metrics.DISTRIBUTION_METRICS)
    assert {m.family for m in metrics.REGISTRY} == {"vote", "distribution"}


@pytest.mark.parametrize("name, paper", [("dices-synthetic", "DICES"), ("dices350", "DICES"), ("d3code", "D3code"),
                                         ("d3code-synthetic", "D3code"), ("toxicity-synthetic", "Toxicity"),
                                         ("toxicity_kumar2021", "Toxicity"), ("dices-synthetic-5raters", None),
                                         ("/home/me/ratings.csv", None), ("annotations", None), (None, None)])
def test_paper_values_follow_the_dataset_not_its_name(name, paper):
    assert tables.imitates(name) == paper


def test_a_users_file_gets_no_paper_values_and_no_announcement():
    results = results_for({("ratings.csv", "S2"): falling()})
    table = tables.compare_with_paper(results, 0.3)
    assert "(" not in "".join(table.frame.drop(columns=["run", "statistic"]).to_numpy().ravel())
    assert "paper" not in table.caption
    assert "our values only" in tables.paper_note(results, 0.3) and "cite" not in tables.paper_note(results, 0.3)


def test_a_stand_in_gets_the_papers_values_in_brackets():
    results = results_for({("dices-synthetic", "S2"): falling()}, imitates={"dices-synthetic": "DICES"}).assign(seed=0)
    table = tables.compare_with_paper(results, 0.3)
    nk = table.frame[table.frame["statistic"] == "NK"].iloc[0]
    assert nk["Accuracy"].endswith("(5000) ✓") and nk["Precision"].endswith("(50000) ✗")  # one grid step, or more
    assert "both at ε = 0.3" in table.caption
    assert "from the run of seed 0" in table.caption  # the cell-by-cell Δ tables give medians over seeds instead


def test_a_run_the_paper_did_not_make_is_named_in_the_caption_as_ours_alone():
    results = results_for({("d3code-synthetic", "S2"): falling(), ("d3code-synthetic", "S4"): falling()},
                          imitates={"d3code-synthetic": "D3code"})
    table = tables.compare_with_paper(results, 0.3)
    by_run = table.frame.set_index("run")
    assert "(" in by_run.loc["d3code-synthetic, S2", "Accuracy"].iloc[0]  # the paper ran D3code under S2
    assert "(" not in "".join(by_run.loc["d3code-synthetic, S4"].drop(columns="statistic").to_numpy().ravel())
    assert "ours alone in the rows of d3code-synthetic, S4, which the paper did not run" in table.caption
    alone = tables.compare_with_paper(results[results["sampler"] == "S2"], 0.3)
    assert "ours alone" not in alone.caption


def test_the_regenerated_table_marks_agreement_by_the_rules_of_the_delta_tables_and_reads_delta_at_like_cells():
    # a grid that holds some of the paper's DICES S2 cells (MAE's 1,000 x 40, F1's 2,500 x 40) and lacks others
    results = grid_results({("dices-synthetic", "S2"): falling()}, (100, 1000, 2500), (1, 40),
                           imitates={"dices-synthetic": "DICES"})
    results["delta"] = 0.05 + results["NK"] / 1e5  # Δ differs from cell to cell, so a cell read elsewhere shows
    paper = tables.paper_table().set_index(["dataset", "sampler", "metric"])
    table = tables.compare_with_paper(results, 0.3).frame.set_index("statistic")
    seen = set()
    for metric, label in (("accuracy", "Accuracy"), ("precision", "Precision"), ("mae", "MAE"), ("f1", "F1-Score")):
        theirs = paper.loc[("DICES", "S2", metric)]
        delta = table.loc["Δ", label]
        like = results.query("metric == @metric and NK == @theirs.NK and K == @theirs.K")["delta"]
        seen.add(bool(len(like)))
        if len(like):  # our grid has the paper's cell: our Δ read there, marked by the factor of the Δ tables
            assert delta.startswith(f"{like.mean():.3f} ({theirs['delta']:.3f}) ")
            assert delta.endswith(es.ratio_mark(like.mean() / theirs["delta"]))
        else:  # it does not: our own cell's Δ, marked as not comparable
            assert delta.endswith(f" {marks.LACKS_MARK}")
        k_mark = table.loc["K", label].split()[-1]
        ours_k = float(table.loc["K", label].split()[0])
        assert k_mark == ("✓" if (ours_k <= 10) == (theirs["K"] <= 10) else "✗")
        assert not {"✓", "✗", "†", marks.LACKS_MARK} & set(table.loc["p-value", label])  # no rule compares p-values
    assert seen == {True, False}


def test_another_epsilon_is_labelled_beside_the_papers():
    results = results_for({("dices-synthetic", "S1"): falling()}, epsilon=0.2, imitates={"dices-synthetic": "DICES"})
    table = tables.compare_with_paper(results, 0.2)
    assert "ours at ε = 0.2, the paper's at ε = 0.3" in table.caption
    assert "ε = 0.2" in tables.paper_note(results, 0.2) and "ε = 0.3" in tables.paper_note(results, 0.2)
    appendix = tables.compare_with_paper(results, 0.2, which="appendix")
    assert "does not state its ε" in appendix.caption


def test_table1_rule_on_a_constructed_grid():
    results = results_for({("x", "S2"): falling()})
    summary = table1(results)
    row = summary[summary["metric"] == "mae"].iloc[0]
    assert row["NK"] == 10000 and row["K"] == 1 and row["p_value"] == pytest.approx(0.00505)


def test_tidy_tables_have_no_index_and_format_values():
    frame = pd.DataFrame({"chapter": ["rq1"], "count": [np.int64(12345)], "share": [0.25], "missing": [np.nan],
                          "sha256": ["ab" * 32]})
    page = tables.Table(frame, "caption")._repr_html_()
    assert "12,345" in page and "0.250" in page and "–" in page and "<wbr>" in page and "<caption>" in page
    assert "<th></th>" not in page and "Unnamed" not in page
    assert tables.nothing("Nothing here.")._repr_html_() == "<p>Nothing here.</p>"
    assert "<table" not in tables.Table(pd.DataFrame(), empty="x")._repr_html_()


def test_comparisons_and_budget_ratios():
    results = results_for({("t", "S3"): falling(3), ("t", "S2"): falling(0.5)})
    stats = tables.compare_runs(results, ("t", "S3"), ("t", "S2"), 0.3)
    assert stats["share_higher"] == 1.0 and stats["cells"] == 3 * 3 * 8
    ratios = tables.budget_ratios(results, ("t", "S3"), ("t", "S2"), 0.3).frame
    assert list(ratios["ratio"]) == ["10"] * 8  # as few digits as the ratio needs: "2.5", never "2.500"
    halves = tables.budget_ratios(results_for({("t", "S3"): falling(1.5), ("t", "S2"): falling(0.5)},
                                              budgets=(100, 1000, 2500)), ("t", "S3"), ("t", "S2"), 0.3).frame
    assert set(halves["ratio"]) == {"2.5"} and "2.500" not in tables.Table(halves)._repr_html_()
    assert tables.budget_ratios(None, None, None, 0.3) is None
    assert tables.compare_with_paper(None, 0.3) is None


def test_departures_name_pairs_far_from_the_paper():
    results = results_for({("toxicity-synthetic", "S2"): falling()}, imitates={"toxicity-synthetic": "Toxicity"})
    found = tables.departures(results, 0.3)
    # ours: every metric first significant at 10,000; the paper's Toxicity S2 budgets are 500 or 1,000
    assert len(found) == 8 and found["how"].str.contains("budget 10,000").all()


def test_table1_prints_small_p_a_legend_and_the_cheapest_significant_design():
    rows = [{"dataset": "d", "sampler": "S2", "epsilon": 0.3, "NK": nk, "K": k, "metric": m, "delta": 0.05,
             "p_value": 0.0001 if m == "accuracy" and nk >= 1000 else 0.2}
            for nk in (100, 1000) for k in (1, 5) for m in METRICS]
    text = table1_text(pd.DataFrame(rows), data={"items": 40, "raters": 6})
    assert "< 0.001" in text and "0.000" not in text
    assert "–: no budget of the grid reaches p < 0.05" in text
    assert "Accuracy 1000 x 1" in text and "MAE none" in text
    assert "N = 1,000 items, 25 times the 40 of the data" in text
    assert "note" not in table1_text(pd.DataFrame(rows), data={"items": 5000, "raters": 6})


def test_table1_on_the_command_line_notes_designs_beyond_the_data(tmp_path, capsys):
    rows = [{"dataset": "d", "sampler": "S2", "epsilon": 0.3, "NK": nk, "K": 1, "metric": m, "delta": 0.05,
             "p_value": 0.01 if nk == 1000 else 0.3} for nk in (100, 1000) for m in METRICS]
    pd.DataFrame(rows).to_csv(tmp_path / "results.csv", index=False)
    (tmp_path / "results.csv.json").write_text('{"data_items": 40, "data_raters_per_item_max": 6}')
    assert main(["table1", str(tmp_path / "results.csv")]) == 0
    printed = capsys.readouterr().out
    assert "N = 1,000 items, 25 times the 40 of the data" in printed and "Accuracy 1000 x 1" in printed


def test_a_p_value_just_below_alpha_never_prints_as_alpha():
    """Table 1 counts p < 0.05 as significant; a p of 0.0497 printed as 0.050 would contradict the count."""
    # three decimals like every other number, rounded down across 0.05 (never 0.050 for a p counted below it)
    assert tables._fmt(0.0497, "p_value") == "0.049" and tables._fmt(0.04996, "p_value") == "0.049"
    assert tables._fmt(0.05, "p_value") == "0.050" and tables._fmt(0.0503, "p_value") == "0.050"
    assert tables._fmt(0.029, "p_value") == "0.029" and tables._fmt(0.0497, "delta") == "0.050"
