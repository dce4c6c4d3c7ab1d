"""The claim functions: each verdict from constructed results, and the paper's numbers from the paper's tables."""

import itertools

import numpy as np
import pandas as pd
import pytest

from analysis import findings, tables
from analysis.metrics import METRICS

BUDGETS, KS = (100, 1000, 10000), (1, 5, 20)


def results_for(runs: dict, epsilon=0.3, imitates=None) -> pd.DataFrame:
    """A results table: ``runs`` maps (dataset, sampler) to a function (NK, K, metric) -> p-value."""
    rows = []
    for (dataset, sampler), p in runs.items():
        for nk, k, metric in itertools.product(BUDGETS, KS, METRICS):
            rows.append({"dataset": dataset, "sampler": sampler, "perturbation": "dirichlet", "epsilon": epsilon,
                         "NK": nk, "K": k, "metric": metric, "p_value": p(nk, k, metric), "delta": 0.1 * k ** 0.1,
                         "null_sd": 0.02 if sampler == "S2" else 0.03, "imitates": imitates})
    return pd.DataFrame(rows)


def falling(scale=1.0):
    """p falls with the budget; ``scale`` > 1 makes it fall later (a more cautious sampler)."""
    return lambda nk, k, metric: min(1.0, scale * 50 / nk * (1 + 0.01 * k))


def test_paper_contrast_reads_the_papers_table_1():
    # golden values read off the paper's Table 1 by hand: on DICES, S1 has a higher p-value than S2 at the same
    # budget for 7 metrics and never reaches significance for Precision; on Toxicity S3 needs a larger budget for all 8
    dices = findings.paper_contrast("DICES", "S1", "S2")
    assert (dices["needs_more"], dices["compared"]) == (8, 8)
    tox = findings.paper_contrast("Toxicity", "S3", "S2")
    assert (tox["needs_more"], tox["compared"]) == (8, 8)
    assert tox["ratios"]["accuracy"] == 5 and tox["ratios"]["mae"] == 2


@pytest.mark.parametrize("scale, verdict", [(3.0, findings.AGREES), (0.3, findings.DISAGREES)])
def test_raters_raise_p_values_follows_the_direction_of_the_cells(scale, verdict):
    results = results_for({("crossed", "S1"): falling(scale), ("crossed", "S2"): falling()})
    finding = findings.raters_raise_p_values(results, [(("crossed", "S1"), ("crossed", "S2"))], 0.3)
    assert finding.verdict == verdict
    assert "crossed, S1" in finding.ours and "ε = 0.3" in finding.ours


def test_raters_raise_p_values_partly_when_comparisons_disagree():
    results = results_for({("a", "S1"): falling(3), ("a", "S2"): falling(), ("b", "S3"): falling(0.3),
                           ("b", "S2"): falling()})
    comparisons = [(("a", "S1"), ("a", "S2")), (("b", "S3"), ("b", "S2"))]
    finding = findings.raters_raise_p_values(results, comparisons, 0.3)
    assert finding.verdict == findings.PARTLY and finding.numbers["held"] == 1


def test_no_data_gives_no_verdict_and_no_numbers_of_ours():
    for finding in (findings.raters_raise_p_values(None, [], 0.3, missing="x is missing; run `make data`."),
                    findings.batches_raise_budget(None, None, None, 0.3, missing="missing"),
                    findings.distribution_metrics_favour_large_k(None, 0.3),
                    findings.modelling_shifts_budget_and_k(None, [], 0.3),
                    findings.few_raters_split_curves(None, None, None, 0.3, 5)):
        assert finding.verdict == findings.UNCHECKED and not finding.checked
        assert "nan" not in finding.markdown() and "0 of 0" not in finding.markdown()
    summary = findings.summary([("RQ1", findings.raters_raise_p_values(None, [], 0.3))])
    assert "make data" in summary and "agrees" not in summary


def test_identical_runs_are_not_read_as_a_direction():
    results = results_for({("c", "S1"): falling(), ("c", "S2"): falling()})
    finding = findings.raters_raise_p_values(results, [(("c", "S1"), ("c", "S2"))], 0.3)
    assert finding.verdict == findings.DISAGREES and "same p-value" in finding.ours


def test_batches_raise_budget_counts_budgets_and_null_spread():
    results = results_for({("t", "S3"): falling(3), ("t", "S2"): falling(0.5)})
    finding = findings.batches_raise_budget(results, ("t", "S3"), ("t", "S2"), 0.3)
    assert finding.verdict == findings.AGREES
    assert finding.numbers["more"] == 8 and finding.numbers["spread"] == pytest.approx(1.5)
    assert finding.numbers["median_ratio"] == 10


def test_distribution_metrics_favour_large_k():
    def p(nk, k, metric):
        if metric in ("mae", "wins", "kl_div", "jsd"):
            return 0.01 if (k == 20 and nk >= 1000) else 0.5
        return 0.01 if (k == 1 and nk >= 10000) else 0.5
    finding = findings.distribution_metrics_favour_large_k(results_for({("d", "S2"): p}), 0.3)
    assert finding.verdict == findings.AGREES
    assert finding.numbers["distribution"]["K"] == 20 and finding.numbers["vote"]["K"] == 1
    never = findings.distribution_metrics_favour_large_k(results_for({("d", "S2"): lambda *a: 0.9}), 0.3)
    assert never.verdict == findings.UNCHECKED


def test_few_raters_split_curves_compares_spreads():
    results = results_for({("full", "S1"): lambda nk, k, m: 0.1, ("cut", "S1"): lambda nk, k, m: 0.05 * k})
    finding = findings.few_raters_split_curves(results, ("full", "S1"), ("cut", "S1"), 0.3, 5)
    assert finding.verdict == findings.AGREES and finding.numbers["full"] == 0


def test_modelling_shifts_budget_and_k():
    def modelled(nk, k, metric):
        return 0.01 if (k == 20 and nk >= 10000) else 0.5

    def independent(nk, k, metric):
        return 0.01 if (k == 5 and nk >= 1000) else 0.5
    results = results_for({("x", "S1"): modelled, ("x", "S2"): independent})
    finding = findings.modelling_shifts_budget_and_k(results, [(("x", "S1"), ("x", "S2"))], 0.3)
    assert finding.verdict == findings.AGREES and finding.numbers["larger_k"] == 8


def test_finding_box_is_myst_with_a_citation():
    finding = findings.Finding("Q?", "paper", "ours", findings.PARTLY)
    text = finding.markdown("Finding")
    assert text.startswith(":::{admonition} Finding: partly agrees") and "{cite}`pandita2026`" in text
    with pytest.raises(ValueError):
        findings.Finding("Q", "p", "o", "maybe")


def test_rule_effects_measure_the_vote_metrics_change_with_k():
    up = results_for({("r", "S2"): falling()})
    down = up.copy()
    down["delta"] = 0.1 / down["K"]
    effects = findings.rule_effects({"dirichlet": up, "uniform": down}, 0.3, 1000)
    assert effects["dirichlet"] > 1 > effects["uniform"]
    assert effects["uniform"] == pytest.approx(1 / 20)


def test_batches_need_more_for_most_metrics_not_just_some():
    def s3(nk, k, metric):  # larger budget for two metrics only
        return falling(3)(nk, k, metric) if metric in ("precision", "f1") else falling(0.5)(nk, k, metric)
    results = results_for({("t", "S3"): s3, ("t", "S2"): falling(0.5)})
    finding = findings.batches_raise_budget(results, ("t", "S3"), ("t", "S2"), 0.3)
    assert finding.numbers["more"] == 2 and finding.verdict == findings.PARTLY  # the null is still wider
