"""The compare chapter's worked example: its verdicts and words come from the comparison's numbers, and on
HS-Brexit (where the dataset cache has it) the two classifiers' votes differ."""

import numpy as np
import pandas as pd
import pytest

from analysis.book import compare_example as ex
from analysis.tools.compare import compare
from analysis.data.annotations import from_table
from conftest import cached, crossed_table


def fake(rows) -> pd.DataFrame:
    """A comparison table with the columns :func:`analysis.tools.compare.compare` returns, from (sampler, metric, delta,
    low, high, p) rows."""
    table = pd.DataFrame(rows, columns=["sampler", "metric", "delta", "ci_low", "ci_high", "p_value"])
    return table.assign(items=100, K=5)


TABLE = fake([("S1", "accuracy", 0.05, -0.01, 0.11, 0.12), ("S2", "accuracy", 0.05, 0.01, 0.09, 0.02),
              ("S1", "jsd", -0.03, -0.05, -0.01, 0.004), ("S2", "jsd", -0.03, -0.04, -0.02, 0.002),
              ("S1", "f1", 0.01, -0.04, 0.06, 0.7), ("S2", "f1", 0.01, -0.03, 0.05, 0.5)])


def test_verdicts_name_the_samplers_that_separate_each_metric():
    said = ex.verdicts(TABLE).set_index("metric")
    assert said.loc["accuracy", "separated_by"] == ["S2"] and said.loc["jsd", "separated_by"] == ["S1", "S2"]
    assert said.loc["f1", "separated_by"] == [] and said.loc["jsd", "family"] == "distribution"
    assert said.loc["accuracy", "width_S1"] == pytest.approx(0.12) and said.loc["accuracy", "p_S2"] == 0.02


def test_the_finding_is_read_from_the_table():
    text = ex.finding(TABLE, ("LR", "NB"))
    assert "NB is better on JSD (p < 0.05 under every sampler)" in text
    assert "Accuracy separates them under S2 only, in favour of LR" in text
    assert "neither is shown better on F1-Score" in text
    assert "S1's intervals are 1.2 to 2 times as wide as S2's (median 1.5)" in text
    assert "clears S2's narrower interval but not S1's" in text
    flipped = TABLE.assign(delta=-TABLE["delta"])
    assert "in favour of NB" in ex.finding(flipped, ("LR", "NB")).split("Accuracy separates")[1]


def test_p_contrast_counts_the_metrics_where_s1s_p_is_above():
    text = ex.p_contrast(TABLE)
    assert text.startswith("S1's p is above S2's on all 3 metrics; the largest gap")
    mixed = TABLE.copy()
    mixed.loc[(mixed["sampler"] == "S2") & (mixed["metric"] == "jsd"), "p_value"] = 0.004  # equal to S1's
    mixed.loc[(mixed["sampler"] == "S2") & (mixed["metric"] == "accuracy"), "p_value"] = 0.2  # above S1's
    assert ex.p_contrast(mixed).startswith("S1's p is above S2's on 1 of 3 metrics, equal on 1, below on 1;")
    assert "largest gap is on F1-Score: p = 0.700 under S1 against 0.500 under S2" in text
    assert ex.p_contrast(TABLE[TABLE["sampler"] == "S2"]) == ""


def test_vote_shares_and_how_often_the_votes_differ():
    ds = from_table(crossed_table(n_items=20, n_raters=4, n_labels=2, seed=1))
    a = pd.DataFrame({"item": ds.item_ids, "label": 0})
    b = a.assign(label=[1] * 5 + [0] * 15)
    shares = ex.vote_shares(ds, {"a": a, "b": b}).set_index("system")
    assert shares.loc["a", "vote 0"] == 1 and shares.loc["b", "vote 1"] == 0.25
    assert shares.loc["a", "differs"] == 0 and shares.loc["b", "differs"] == 0.25
    shown = ex.vote_table(ds, {"a": a, "b": b}).frame.set_index("system")  # as the page prints it
    assert shown.loc["a", "vote 0"] == "1.000" and shown.loc["b", "vote 1"] == "0.250"


def test_compare_samplers_stacks_one_comparison_per_sampler():
    ds = from_table(crossed_table(n_items=20, n_raters=4, n_labels=2, seed=1))
    a = pd.DataFrame({"item": ds.item_ids, "label": ds.item_label_counts.argmax(1)})
    both = ex.compare_samplers(ds, a, a.assign(label=1 - a["label"]), ["S1", "S2"], n_samples=40)
    assert list(both["sampler"].unique()) == ["S1", "S2"] and len(both) == 16
    alone = compare(ds, a, a.assign(label=1 - a["label"]), sampler="S2", n_samples=40)
    pd.testing.assert_frame_equal(both.iloc[8:].reset_index(drop=True), alone)


def test_on_hs_brexit_the_classifiers_vote_differently():
    cached("lewidi23_hs_brexit")
    from analysis.data import datasets

    ds = datasets.load("lewidi23_hs_brexit")
    outputs = ex.train_and_predict(ds, ex.lewidi_texts("lewidi23_hs_brexit"))
    shares = ex.vote_shares(ds, outputs).set_index("system")
    assert shares.loc["naive-bayes", "differs"] > 0.02  # the balanced model votes the rare label; naive Bayes less
    assert shares.loc["logreg-balanced", "vote 1"] > shares.loc["naive-bayes", "vote 1"]
    for frame in outputs.values():
        assert np.allclose(frame.filter(like="p_").sum(axis=1), 1)


def test_the_own_test_check_sits_compares_power_beside_the_plans_at_each_cheapest_design():
    """Per metric, the plan's cheapest design within the pilot's raters (or its most powerful, where none reaches
    the target), the plan's power there, and the share of studies compare's own test rejects, the very cell of a
    StudyPower of the same draws; a target Delta is held at the pilot's N and the design's K."""
    from analysis.tools import power
    from analysis.tools.study_power import StudyPower

    pilot = from_table(crossed_table(n_items=30, n_raters=6, n_labels=3, seed=4), name="pilot")
    effect = {"target_delta": ("mae", 0.05)}
    study = power.plan(pilot, sampler="S1", ns=[15, 30], ks=[3, 6], n_samples=20, metrics=["accuracy", "mae"],
                       power=0.5, **effect)
    table = ex.own_test_check(pilot, study, effect, studies=6, seed=2).set_index("metric")
    assert list(table.index) == ["Accuracy", "MAE"]
    for metric, label in (("accuracy", "Accuracy"), ("mae", "MAE")):
        rows = study.designs[study.designs["metric"] == metric]
        pick = power.cheapest(rows, 0.5).iloc[0]
        if pd.isna(pick["N"]):
            pick = rows.sort_values(["power", "cost"], ascending=[False, True]).iloc[0]
        n, k = int(pick["N"]), int(pick["K"])
        assert table.loc[label, "design N × K"] == f"{n} × {k}"
        assert table.loc[label, "the paper's test (the plan above)"].startswith(f"{pick['power']:.2f} [")
        size = dict(studies=6, seed=2, alpha=0.05, max_n=30, max_k=6)
        epsilon = StudyPower(pilot, "S1", ("mae",), **size).epsilon_for(30, k, 0, 0.05)
        share = StudyPower(pilot, "S1", (metric,), **size).cell(n, k, epsilon)[0][0]
        assert table.loc[label, "compare's own test (6 studies)"].startswith(f"{share:.2f} [")
