"""The claim functions: each rule from results built for either side of it, and the paper's numbers from its tables.

Every test builds a results table by hand (:func:`results_for`) whose p-values put one sub-claim on a known side of
its rule, so each rule is exercised both where it holds and where it does not.
"""

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.paper import findings, notes, tables, verdicts
from analysis.engine.metrics import DISTRIBUTION_METRICS, METRICS
from conftest import grid_results

ROOT = Path(__file__).resolve().parents[1]
BUDGETS, KS = (100, 250, 500, 1000, 2500, 10000), (1, 5, 20, 40)


def results_for(runs: dict, epsilon=0.3, imitates=None, null_sd=None) -> pd.DataFrame:
    """:func:`conftest.grid_results` on this file's grid."""
    return grid_results(runs, BUDGETS, KS, epsilon, imitates, null_sd)


def curve(scale=1.0, best_k=1):
    """p falls with the budget and is smallest at ``best_k``; the smallest significant budget grows with ``scale``
    (0.2 -> 250, 0.5 -> 1,000, 1 -> 2,500, 3 -> 10,000 on BUDGETS)."""
    return lambda nk, k, metric: min(1.0, scale * 50 / nk * (1.01 + 0.01 * abs(k - best_k)))


def claim(finding, name):
    (found,) = [c for c in finding.claims if c.rule.name == name]
    return found


# ------------------------------------------------------------------------------------------ the verdict rule

def _sub(holds, main=False):
    return verdicts.SubClaim(verdicts.VerdictRule("r", "q", "h", "s", main), "p", "o", holds)


@pytest.mark.parametrize("holds, verdict", [
    ((True, True, True), findings.AGREES),
    ((True, False, True), findings.PARTLY),
    ((True, None, True), findings.PARTLY),  # a sub-claim that cannot be measured does not hold
    ((False, True, True), findings.DISAGREES),
    ((None, True, True), findings.UNCHECKED),
])
def test_judge_agrees_only_when_every_sub_claim_holds_and_disagrees_when_the_main_fails(holds, verdict):
    claims = [_sub(holds[0], main=True)] + [_sub(h) for h in holds[1:]]
    assert verdicts.judge(claims) == verdict


def test_with_a_main_sub_claim_per_comparison_one_holding_is_partial():
    assert verdicts.judge([_sub(True, True), _sub(False, True)]) == findings.PARTLY
    assert verdicts.judge([_sub(False, True), _sub(False, True), _sub(True)]) == findings.DISAGREES


def test_a_verdict_must_follow_from_the_sub_claims():
    with pytest.raises(ValueError, match="does not follow"):
        verdicts.Finding("Q", "p", "o", findings.AGREES, claims=[_sub(False, True)])
    with pytest.raises(ValueError):
        verdicts.Finding("Q", "p", "o", "maybe")


def test_partly_names_what_holds_and_what_does_not():
    rule = verdicts.VerdictRule("one", "q", "h", "s", main=True)
    finding = verdicts.Finding("Q", "p", "o", claims=[
        verdicts.SubClaim(rule, "p", "o", True, "x, S1"), verdicts.SubClaim(verdicts.VerdictRule("two", "q", "h", "s"), "p",
                                                                            "o", False)])
    assert finding.verdict == findings.PARTLY
    assert finding.verdict_sentence() == "partly agrees with the paper: x, S1: one holds; two does not."
    box = finding.markdown("Finding")
    assert box.startswith(":::{admonition} Finding: partly agrees") and "{cite}`pandita2026multilevel`" in box
    assert "*two*: the paper: p; ours: o; **does not hold**" in box and "{ref}`verdict-rules`" in box
    assert finding.row()["verdict"] == findings.PARTLY and "(does not hold)" in finding.row()["ours"]
    row = finding.row()  # two sub-claims: numbered alike in both columns, so each value finds its claim
    # and our value names what it measures, as the paper's does: "(1) x, S1: one: o", never a bare "(1) o"
    assert row["ours"].startswith("(1) x, S1: one: o (holds") and "; (2) two: o (does not hold)" in row["ours"]
    assert row["paper"].startswith("(1) ") and "; (2) " in row["paper"]


def rules_table() -> pd.DataFrame:
    """Every rule, one row each, in the order of :data:`analysis.paper.verdicts.RULES` (the methods page's table
    holds the same text)."""
    return pd.DataFrame([{"claim": verdicts.CLAIMS[key],
                          "sub-claim": rule.name + (" (the book's reading)" if rule.reading else ""),
                          "main": "yes" if rule.main else "",
                          "the paper says": rule.source, "holds when": rule.holds_when, "size tolerance": rule.size}
                         for key, rules in verdicts.RULES.items() for rule in rules])


def test_methods_page_holds_every_rule_in_one_table():
    text = (ROOT / "book" / "methods.md").read_text()
    assert "(verdict-rules)=" in text
    rows = [line.split(" | ") for line in text.splitlines() if line.startswith("|")]
    rows = [[cell.strip(" |") for cell in row] for row in rows]
    for rule in rules_table().itertuples(index=False):
        assert list(rule) in rows, f"the methods page's table lacks the rule {rule[1]!r} of {rule[0]!r}"


def test_every_rule_quotes_its_source_and_none_exists_without_one():
    table = rules_table()
    assert table["the paper says"].str.strip().astype(bool).all()
    quoted = table["the paper says"].str.contains("“") | table["the paper says"].str.contains("Table 1")
    assert quoted.all(), table.loc[~quoted, "sub-claim"].tolist()
    with pytest.raises(ValueError, match="quotes no source"):
        verdicts.VerdictRule("unsourced", " ", "h", "s")
    paper = (ROOT.parent / "shared" / "seeds" / "000_ab2645c7978d3a31.txt")
    if paper.is_file():  # every quotation is the paper's own words
        words = " ".join(paper.read_text().replace("$", "").split())
        for source in table["the paper says"]:
            for quote in re.findall(r"“([^”]+)”", source):
                assert quote in words, quote
    assert not any(name in " ".join(table["sub-claim"]) for name in ("classes", "K ≥ 20"))


# ------------------------------------------------------------------------------------------ the paper's numbers

def test_paper_contrast_reads_the_papers_table_1():
    # golden values read off the paper's Table 1 by hand: on DICES, S1 and S2 have the same budget for 7 metrics
    # (5000, 1000, 1000, 2500, 2500, 2500, 1000) and S1 never reaches significance for Precision; on Toxicity S3
    # needs a larger budget for all 8
    dices = findings.paper_contrast("DICES", "S1", "S2")
    assert (dices["larger"], dices["equal"], dices["smaller"], dices["compared"]) == (1, 7, 0, 8)
    assert len(dices["ratios"]) == 7 and set(dices["ratios"].values()) == {1.0}
    assert findings.contrast_text(dices) == "larger for 1, the same for 7, smaller for 0 of 8 metrics"
    tox = findings.paper_contrast("Toxicity", "S3", "S2")
    assert (tox["larger"], tox["compared"]) == (8, 8)
    assert tox["ratios"]["accuracy"] == 5 and tox["ratios"]["mae"] == 2
    assert findings.paper_k_shift() == (4, 0)
    fam = findings.paper_families()
    assert fam["dist_nk_range"] == (1000, 2500) and fam["vote_nk_min"] == 2500 and fam["dist_k_range"] == (40, 100)


@pytest.mark.parametrize("modelled, independent, side", [
    (2500, 1000, findings.LARGER), (1000, 2500, findings.SMALLER), (1000, 1000, findings.EQUAL),
    (None, 1000, findings.LARGER), (1000, None, findings.SMALLER),
    (100, 100, findings.NOT_COMPARABLE),  # both at the grid's floor: the grid cannot tell
    (None, None, findings.NOT_COMPARABLE),  # neither significant
    (250, 100, findings.LARGER), (50000, 50000, findings.EQUAL),  # the ceiling reached by both is an equality
])
def test_budget_side_on_both_sides_and_at_the_grids_edges(modelled, independent, side):
    assert findings.budget_side(modelled, independent, floor=100) == side


def test_no_data_gives_no_verdict_and_no_numbers_of_ours():
    for finding in (findings.raters_raise_p_values(None, [], 0.3, missing="x is missing; run `make data`."),
                    findings.batches_raise_budget(None, None, None, 0.3, missing="missing"),
                    findings.distribution_metrics_favour_large_k(None, 0.3),
                    findings.modelling_shifts_budget_and_k(None, [], 0.3),
                    findings.few_raters_split_curves(None, None, None, [], 0.3, 5)):
        assert finding.verdict == findings.UNCHECKED and not finding.checked
        assert "nan" not in finding.markdown() and "0 of 0" not in finding.markdown()
        assert "Sub-claims" not in finding.markdown() and finding.row()["verdict"] == findings.UNCHECKED
    summary = findings.summary([("RQ1", findings.raters_raise_p_values(None, [], 0.3))])
    assert "make data" in summary and "agrees" not in summary


# ------------------------------------------------------------------------------------------ RQ1

@pytest.mark.parametrize("scale, verdict", [(3.0, findings.AGREES), (0.3, findings.DISAGREES)])
def test_raters_raise_p_values_follows_the_direction_of_the_cells(scale, verdict):
    results = results_for({("crossed", "S1"): curve(scale), ("crossed", "S2"): curve()})
    finding = findings.raters_raise_p_values(results, [(("crossed", "S1"), ("crossed", "S2"))], 0.3)
    assert finding.verdict == verdict
    assert "crossed, S1" in finding.ours and "ε = 0.3" in finding.ours
    # one comparison is "here", not "every comparison" (RQ1's sparse section runs one)
    assert ("raises the p-values here." in finding.ours) == (verdict == findings.AGREES)
    assert "every comparison" not in finding.ours


def test_higher_p_values_without_a_larger_budget_is_partial():
    # S1 higher at every budget below 10,000, where both first reach significance and S1's p-value is the lower
    def s1(nk, k, metric):
        return curve(3)(nk, k, metric) if nk < 10000 else curve(0.5)(nk, k, metric)
    results = results_for({("c", "S1"): s1, ("c", "S2"): curve(3)})
    finding = findings.raters_raise_p_values(results, [(("c", "S1"), ("c", "S2"))], 0.3)
    assert claim(finding, "higher p-values").holds is False  # equal below 10,000: only the lower cells differ
    results = results_for({("c", "S1"): lambda *a: min(1, 1.5 * s1(*a)) if a[0] < 10000 else s1(*a),
                           ("c", "S2"): curve(3)})
    finding = findings.raters_raise_p_values(results, [(("c", "S1"), ("c", "S2"))], 0.3)
    assert claim(finding, "higher p-values").holds and not claim(finding, "needs a larger budget").holds
    assert finding.verdict == findings.PARTLY


def test_raters_raise_p_values_partly_when_comparisons_disagree():
    results = results_for({("a", "S1"): curve(3), ("a", "S2"): curve(), ("b", "S3"): curve(0.3),
                           ("b", "S2"): curve()})
    comparisons = [(("a", "S1"), ("a", "S2")), (("b", "S3"), ("b", "S2"))]
    finding = findings.raters_raise_p_values(results, comparisons, 0.3)
    assert finding.verdict == findings.PARTLY and finding.numbers["held"] == 1
    assert "raises the p-values in 1 of 2 comparisons." in finding.ours
    both = findings.raters_raise_p_values(results_for({("a", "S1"): curve(3), ("a", "S2"): curve(),
                                                       ("b", "S3"): curve(3), ("b", "S2"): curve()}), comparisons, 0.3)
    assert both.verdict == findings.AGREES and "raises the p-values in every comparison." in both.ours


def test_rq1_and_rq3_count_the_same_comparison_alike_and_the_floor_is_not_comparable():
    """The issue's case: KL-Div and JSD significant at the grid's floor under both samplers. They count neither way,
    in RQ1 and in RQ3 alike, and S3 needing more for every other metric is agreement."""
    def s3(nk, k, metric):
        return 0.001 if metric in ("kl_div", "jsd") else curve(3)(nk, k, metric)
    def s2(nk, k, metric):
        return 0.002 if metric in ("kl_div", "jsd") else curve(0.5)(nk, k, metric)
    results = results_for({("t", "S3"): s3, ("t", "S2"): s2})
    rq3 = findings.batches_raise_budget(results, ("t", "S3"), ("t", "S2"), 0.3)
    rq1 = findings.raters_raise_p_values(results, [(("t", "S3"), ("t", "S2"))], 0.3)
    assert claim(rq3, "needs a larger budget").ours == claim(rq1, "needs a larger budget").ours
    assert claim(rq3, "needs a larger budget").holds == claim(rq1, "needs a larger budget").holds is True
    assert rq3.numbers["not comparable"] == 2 and claim(rq3, "for every metric").holds
    assert "KL-Div, JSD not comparable" in claim(rq3, "needs a larger budget").ours
    assert rq3.verdict == findings.AGREES


def test_the_papers_column_names_the_papers_data_only():
    results = results_for({("dices-synthetic", "S1"): curve(3), ("dices-synthetic", "S2"): curve()},
                          imitates={"dices-synthetic": "DICES"})
    finding = findings.raters_raise_p_values(results, [(("dices-synthetic", "S1"), ("dices-synthetic", "S2"))], 0.3)
    row = finding.row()
    assert "synthetic" not in row["paper"] and row["paper"].startswith("(1) DICES, S1 against S2: higher p-values")
    # the subject is named once where every sub-claim shares it, on both sides
    assert "; (2) needs a larger budget: larger for 1, the same for 7, smaller for 0 of 8 metrics" in row["paper"]
    assert row["paper"].count("DICES, S1 against S2") == 1 and row["ours"].count("dices-synthetic, S1") == 1
    assert "dices-synthetic" in finding.markdown()  # our side names our data


def test_identical_runs_are_not_read_as_a_direction():
    results = results_for({("c", "S1"): curve(), ("c", "S2"): curve()})
    finding = findings.raters_raise_p_values(results, [(("c", "S1"), ("c", "S2"))], 0.3)
    assert finding.verdict == findings.DISAGREES and "same p-value" in finding.ours


# ------------------------------------------------------------------------------------------ RQ2, Finding 1

def _rq2(modelled, independent, imitates=None):
    results = results_for({("x", "S1"): modelled, ("x", "S2"): independent}, imitates=imitates)
    return findings.modelling_shifts_budget_and_k(results, [(("x", "S1"), ("x", "S2"))], 0.3)


def test_modelling_shifts_budget_and_k_agrees_when_budget_size_and_k_hold():
    # as on the paper's DICES: the same budget for 7 metrics, a larger one for Precision (median ratio x1)
    def s1(nk, k, metric):
        return curve(3, best_k=20)(nk, k, metric) if metric == "precision" else curve(1.2, best_k=20)(nk, k, metric)
    finding = _rq2(s1, curve(1, best_k=5), {"x": "DICES"})
    assert claim(finding, "needs a larger budget").ours == "larger for 1, the same for 7, smaller for 0 of 8 metrics"
    assert claim(finding, "budget ratio as the paper's").holds
    assert finding.verdict == findings.AGREES and finding.numbers["larger_k"] == 8


def test_a_ratio_of_two_and_a_half_is_not_the_papers_unchanged_dices_budget():
    finding = _rq2(curve(1, best_k=20), curve(0.5, best_k=5), {"x": "DICES"})  # x2.5 where the paper has x1
    size = claim(finding, "budget ratio as the paper's")
    assert size.paper == "×1 over 7 metrics" and size.ours == "median ×2.5 over 8 metrics" and not size.holds
    assert finding.verdict == findings.PARTLY


def test_a_budget_far_above_the_papers_is_only_partial_agreement():
    finding = _rq2(curve(3, best_k=20), curve(0.5, best_k=5), {"x": "DICES"})  # x10 where the paper has x1
    assert claim(finding, "needs a larger budget").holds and not claim(finding, "budget ratio as the paper's").holds
    assert finding.verdict == findings.PARTLY and "budget ratio as the paper's does not" in finding.verdict_sentence()


def test_without_paper_values_no_size_is_judged_and_k_must_move_up():
    finding = _rq2(curve(3, best_k=20), curve(0.5, best_k=5))
    assert [c.rule.name for c in finding.claims] == ["needs a larger budget", "best K larger"]
    assert finding.verdict == findings.AGREES
    assert _rq2(curve(3, best_k=5), curve(0.5, best_k=20)).verdict == findings.PARTLY  # K moves down
    assert _rq2(curve(0.5, best_k=20), curve(3, best_k=5)).verdict == findings.DISAGREES  # the budget shrinks


# ------------------------------------------------------------------------------------------ RQ2, Finding 2

def families(dist_k, vote_k, dist_nk=1000, vote_nk=10000):
    def p(nk, k, metric):
        best, start = (dist_k, dist_nk) if metric in DISTRIBUTION_METRICS else (vote_k, vote_nk)
        return 0.01 if (k == best and nk >= start) else 0.5
    return p


def _families(*args, imitates=None, **kwargs):
    return findings.distribution_metrics_favour_large_k(results_for({("d", "S2"): families(*args, **kwargs)},
                                                                    imitates=imitates), 0.3)


def test_distribution_metrics_directions_on_other_data():
    agree = _families(40, 20)
    assert agree.verdict == findings.AGREES
    assert [c.rule.name for c in agree.claims] == ["smaller budget", "larger best K"]  # no size on other data
    assert agree.numbers["distribution"]["K"] == 40 and agree.numbers["vote"]["K"] == 20
    smaller_k = _families(5, 20)
    assert smaller_k.verdict == findings.PARTLY and not claim(smaller_k, "larger best K").holds


def test_distribution_metrics_sizes_on_the_papers_data_on_both_sides():
    dices = {"d": "DICES"}
    agree = _families(40, 20, imitates=dices)
    assert agree.verdict == findings.AGREES
    assert [c.rule.name for c in agree.claims] == ["smaller budget", "larger best K", "distribution budget as the "
                                                   "paper's", "vote budget as the paper's", "best K from 40 to 100",
                                                   "vote best K as the paper's"]
    assert all(c.paper_subject == "DICES, S2" for c in agree.claims)
    # the paper's vote metrics are best at K above 10 (median 24.5): ours at K = 1 is a difference, said so
    ones = _families(40, 1, imitates=dices)
    assert ones.verdict == findings.PARTLY and not claim(ones, "vote best K as the paper's").holds
    low_k = _families(20, 1, imitates=dices)
    assert not claim(low_k, "best K from 40 to 100").holds and claim(low_k, "larger best K").holds
    cheap = _families(40, 20, dist_nk=250, vote_nk=1000, imitates=dices)
    assert claim(cheap, "smaller budget").holds
    assert not claim(cheap, "distribution budget as the paper's").holds
    assert not claim(cheap, "vote budget as the paper's").holds
    assert claim(_families(40, 20, dist_nk=2500, vote_nk=10000, imitates=dices),
                 "distribution budget as the paper's").holds  # the paper's own KL-Div is at 2,500


def test_distribution_metrics_budget_rules_on_both_sides():
    reversed_ = _families(40, 20, dist_nk=10000, vote_nk=1000)
    assert reversed_.verdict == findings.DISAGREES
    never = findings.distribution_metrics_favour_large_k(results_for({("d", "S2"): lambda *a: 0.9}), 0.3)
    assert never.verdict == findings.UNCHECKED
    # both families significant at the grid's smallest budget: a tie the grid cannot break, not a failure
    floored = _families(40, 20, dist_nk=100, vote_nk=100)
    assert claim(floored, "smaller budget").holds is None and "not comparable" in claim(floored, "smaller budget").ours
    assert floored.verdict == findings.UNCHECKED and "cannot tell which needs less" in floored.answer()
    tied = _families(40, 20, dist_nk=1000, vote_nk=1000)  # a tie above the floor is measured, and fails
    assert claim(tied, "smaller budget").holds is False and tied.verdict == findings.DISAGREES


def test_family_claim_reads_only_s2_on_the_papers_dices_and_d3code():
    results = results_for({("dices", "S2"): families(40, 20), ("dices", "S1"): families(1, 40, 10000, 1000),
                           ("tox", "S2"): families(1, 40, 10000, 1000)}, imitates={"dices": "DICES",
                                                                                   "tox": "Toxicity"})
    finding = findings.distribution_metrics_favour_large_k(results, 0.3)
    assert finding.verdict == findings.AGREES and "dices, S2" in finding.ours and "tox" not in finding.ours


# ------------------------------------------------------------------------------------------ RQ3

def _rq3(s3, s2, imitates=None, null_sd=None):
    results = results_for({("t", "S3"): s3, ("t", "S2"): s2}, imitates=imitates, null_sd=null_sd)
    return findings.batches_raise_budget(results, ("t", "S3"), ("t", "S2"), 0.3)


def test_batches_raise_budget_counts_budgets_and_null_spread():
    finding = _rq3(curve(3), curve(0.5))
    assert finding.verdict == findings.AGREES
    assert finding.numbers["larger"] == 8 and finding.numbers["spread"] == pytest.approx(1.5)
    assert finding.numbers["median_ratio"] == 10


def test_batches_budget_size_against_the_papers_toxicity():
    near = _rq3(curve(1), curve(0.5), {"t": "Toxicity"})  # x2.5, inside the paper's x2 to x5
    assert claim(near, "budget ratio as the paper's").holds and near.verdict == findings.AGREES
    far = _rq3(curve(3), curve(0.5), {"t": "Toxicity"})  # x10
    assert not claim(far, "budget ratio as the paper's").holds and far.verdict == findings.PARTLY


@pytest.mark.parametrize("larger, verdict", [(8, findings.AGREES), (7, findings.PARTLY), (5, findings.PARTLY),
                                             (4, findings.DISAGREES), (2, findings.DISAGREES)])
def test_batches_need_more_for_every_metric(larger, verdict):
    def s3(nk, k, metric):  # a larger budget for the first ``larger`` metrics, a smaller one for the rest
        return curve(3)(nk, k, metric) if METRICS.index(metric) < larger else curve(0.2)(nk, k, metric)
    finding = _rq3(s3, curve(0.5))
    assert finding.numbers["larger"] == larger and finding.verdict == verdict
    assert claim(finding, "for every metric").holds == (larger == 8)
    if larger < 8:
        assert METRIC_NAMES[METRICS[-1]] in claim(finding, "for every metric").ours


METRIC_NAMES = findings.METRIC_LABELS


def test_a_narrower_null_breaks_only_the_variance_sub_claim():
    finding = _rq3(curve(3), curve(0.5), null_sd={"S3": 0.01})
    assert not claim(finding, "wider null").holds and finding.verdict == findings.PARTLY


# ------------------------------------------------------------------------------------------ RQ4

APART, TOGETHER = (lambda nk, k, m: 0.02 * k), (lambda nk, k, m: 0.1)


def _rq4(cut_s1, cut_s2, full=TOGETHER, tox=APART, with_toxicity=True):
    runs = {("full", "S1"): full, ("full", "S2"): full, ("cut", "S1"): cut_s1, ("cut", "S2"): cut_s2}
    if with_toxicity:
        runs[("tox", "S2")] = tox
    return findings.few_raters_split_curves(results_for(runs), "full", "cut", ["S1", "S2"], 0.3, 5,
                                            "tox" if with_toxicity else None)


def test_few_raters_split_curves_is_judged_under_both_samplers_and_beside_toxicity():
    agree = _rq4(APART, APART)
    assert agree.verdict == findings.AGREES
    assert [c.rule.name for c in agree.claims] == ["K curves further apart"] * 2 + [
        "like Toxicity", "Toxicity's curves apart too"]
    partly = _rq4(APART, TOGETHER)
    assert partly.verdict == findings.PARTLY and partly.numbers["S1"]["cut"] > partly.numbers["S2"]["cut"] == 0
    assert "S2: K curves further apart and S2: like Toxicity do not" in partly.verdict_sentence()
    assert _rq4(TOGETHER, TOGETHER).verdict == findings.DISAGREES


def test_rq4_marks_the_comparisons_the_paper_does_not_draw_as_the_books_reading():
    """The paper says only that the p-values "show a separation in both the datasets"; setting the cut pool and
    Toxicity against the full pool is the book's reading, and the box, the intro's row and the rules table say so,
    while "like Toxicity", which the paper does say, is not marked."""
    found = _rq4(APART, APART)
    marked = {c.rule.name for c in found.claims if c.rule.reading}
    assert marked == {"K curves further apart", "Toxicity's curves apart too"}
    box = found.markdown()
    assert box.count("(the book's reading)") == 3 and "*S2: like Toxicity* (" not in box.replace("reading)", "")
    assert "*S2: like Toxicity*:" in box and "its verdict is on that reading" in box
    assert found.row()["paper"].count("(the book's reading)") == 3
    table = rules_table().set_index("sub-claim")
    assert "a separation in both the datasets" in table.loc["K curves further apart (the book's reading)",
                                                          "the paper says"]
    assert "like Toxicity" in table.index
    assert "the book's reading" not in _rq3(curve(3), curve(0.5)).markdown()  # the paper's own words: no mark


def test_rq4_compares_the_cut_pool_with_toxicity_on_both_sides():
    unlike = _rq4(APART, APART, tox=TOGETHER)  # Toxicity's curves together, like the full pool's
    assert not claim_of(unlike, "like Toxicity").holds and not claim_of(unlike, "Toxicity's curves apart too").holds
    assert unlike.verdict == findings.PARTLY
    alone = _rq4(APART, APART, with_toxicity=False)
    assert claim_of(alone, "like Toxicity").holds is None and alone.verdict == findings.PARTLY


def test_rq4_advice_follows_the_evidence_and_states_its_limit():
    """Curves further apart on the cut pool: K must be chosen with care; closer together: the finding says that this
    goes against the paper's explanation. Neither claims evidence about collecting more raters, which resampling
    the same few cannot give (a page that did both contradicted itself)."""
    agree, none = _rq4(APART, APART), _rq4(TOGETHER, TOGETHER, full=APART)
    assert "K has to be chosen with care" in agree.ours and "opposite of the paper's explanation" not in agree.ours
    assert "opposite of the paper's explanation" in none.ours and "chosen with care" not in none.ours
    for finding in (agree, none):
        assert "suffice" not in finding.ours and "cannot be measured by resampling them" in finding.ours
        assert "evidence here is for" not in finding.ours and "rather than against" not in finding.ours


def claim_of(finding, name):
    return next(c for c in finding.claims if c.rule.name == name)


# ------------------------------------------------------------------------------------------ the margin over seeds

def test_a_finding_on_stand_ins_says_so_in_its_box_answer_and_summary():
    base = results_for({("c", "S1"): curve(3), ("c", "S2"): curve()})

    def check(results):
        return findings.raters_raise_p_values(results, [(("c", "S1"), ("c", "S2"))], 0.3)
    real = findings.with_margin(check, base.assign(origin="registry"), 0, {})
    assert real.verdict == findings.AGREES and "stand-in" not in real.markdown() + real.answer()
    assert real.answer().startswith("Yes. On this build, as the paper says")
    synthetic = findings.with_margin(check, base.assign(origin="stand-in"), 0, {})
    assert synthetic.markdown().startswith(f":::{{admonition}} Finding on synthetic stand-ins: {findings.AGREES}")
    assert "**Verdict.** Our run on synthetic stand-ins agrees with the paper." in synthetic.markdown()
    assert synthetic.answer().startswith("Yes. On this build's synthetic stand-ins, as the paper says")
    assert "our run on synthetic stand-ins agrees with the paper" in findings.summary([("RQ", synthetic)])
    mixed = base.assign(origin=np.where(base["sampler"] == "S1", "registry", "stand-in"))
    assert findings.with_margin(check, mixed, 0, {}).data == "synthetic stand-ins in part"


def test_over_seeds_shows_each_sub_claims_spread_and_whether_it_flips():
    base = results_for({("c", "S1"): curve(3), ("c", "S2"): curve()})
    close = results_for({("c", "S1"): curve(), ("c", "S2"): curve()})  # the budgets tie on this seed

    def check(results):
        return findings.raters_raise_p_values(results, [(("c", "S1"), ("c", "S2"))], 0.3)
    stable = findings.with_margin(check, base, 0, {1: base, 2: base})
    assert not stable.flips and not any(c.flips for c in stable.claims)
    assert "The verdict is the same on all 3 seeds." in stable.verdict_sentence()
    assert "holds on 3 of 3, so it does not flip" in stable.markdown()
    flipping = findings.with_margin(check, base, 0, {1: base, 2: close})
    assert flipping.flips and flipping.seed_verdicts == {0: findings.AGREES, 1: findings.AGREES,
                                                         2: findings.DISAGREES}
    budget = claim(flipping, "needs a larger budget")
    assert budget.flips and [h for _, _, h in budget.seeds] == [True, True, False]
    assert "seed 2: larger for 0, the same for 8" in budget.margin() and "**flips between seeds**" in budget.margin()
    assert flipping.row()["verdict"] == f"{findings.AGREES} on seeds 0 and 1; {findings.DISAGREES} on seed 2"
    assert "flips over 3 seeds" in flipping.row()["ours"] and stable.row()["verdict"] == stable.verdict
    assert flipping.row()["ours"].endswith("The verdict flips between seeds: seed 0: agrees; seed 1: agrees; seed 2: "
                                           "disagrees")
    assert "flips between seeds" not in stable.row()["ours"]
    assert "**The verdict flips between seeds** (seed 0: agrees; seed 1: agrees; seed 2: disagrees)" in \
        flipping.verdict_sentence()


def test_margin_results_run_further_seeds_cheaply():
    class Book:
        params, epsilon, calls = {"seed": 7, "n_samples": 1000}, 0.3, []

        def simulate(self, pairs, epsilons=None, seed=None, n_samples=None, budgets=None, ks=None):
            self.calls.append((pairs, epsilons, seed, n_samples, budgets, ks))
            return seed
    book = Book()
    assert findings.margin_results(book, ["p"]) == {8: 8, 9: 9}
    assert book.calls == [(["p"], [0.3], 8, 250, None, None), (["p"], [0.3], 9, 250, None, None)]
    findings.margin_results(book, ["p"], budgets=[100], ks=[2])  # a section on a grid of its own
    assert book.calls[2:] == [(["p"], [0.3], 8, 250, [100], [2]), (["p"], [0.3], 9, 250, [100], [2])]


# ------------------------------------------------------------------------------------------ the other helpers

def test_rule_effects_measure_the_vote_metrics_change_with_k():
    up = results_for({("r", "S2"): curve()})
    down = up.copy()
    down["delta"] = 0.1 / down["K"]
    effects = notes.rule_effects({"dirichlet": up, "uniform": down}, 0.3, 1000)
    assert effects["dirichlet"] > 1 > effects["uniform"]
    assert effects["uniform"] == pytest.approx(1 / 40)


def test_glued_rows_are_what_the_intro_reads():
    text = (ROOT / "book" / "intro.md").read_text()
    keys = set(re.findall(r"::(\w+)_row_verdict", text))
    assert keys == {"rq1_finding", "rq1_sparse_finding", "rq2_finding", "rq2_families", "rq3_finding", "rq4_finding"}
    for key in keys:
        for column in ("claim", "paper", "ours", "verdict"):
            assert f"{key}_row_{column}" in text, f"the intro's table lacks {key}'s {column}"
        chapter = key.split("_")[0]
        # glued by the chapter, or by the section helper it calls (RQ1's sparse section)
        source = (ROOT / "notebooks" / f"{chapter}.md").read_text() + (
            (ROOT / "analysis" / "book" / "realdata.py").read_text() if "sparse" in key else "")
        assert "glue.finding(" in source and f'"{key}"' in source


def test_kl_note_measures_the_small_k_delta_and_the_cells_where_b_wins():
    results = results_for({("d", "S2"): lambda nk, k, m: 0.99 if k in (5, 20) else 0.01})
    kl = results["metric"] == "kl_div"
    results.loc[kl, "delta"] = [{1: 1.9, 5: -0.01, 20: -0.02, 40: 0.1}[k] for k in results.loc[kl, "K"]]
    note = notes.kl_note(results, 0.3)
    assert "Δ at K = 1 is 1.90" in note and "12 of its 24 cells have a negative Δ" in note
    assert "K = 5–20 (d, S2)" in note and "median p-value is 0.99" in note
    one = results.index[kl & (results["K"] == 20)][0]
    results.loc[kl, "delta"] = 0.2
    results.loc[one, "delta"] = -0.02
    single = notes.kl_note(results, 0.3)
    assert "1 of its 24 cells has a negative Δ" in single and "at K = 20 (d, S2); its p-value is 0.99." in single
    results.loc[kl, "delta"] = 0.2
    assert "No cell has a negative Δ" in notes.kl_note(results, 0.3)
    assert notes.kl_note(None, 0.3) == ""


def test_a_best_k_the_data_cannot_supply_is_marked_in_the_table_and_the_finding(crossed):
    """On a file of 12 raters, a grid whose only K is 20 reaches significance only at designs the data cannot
    supply: the results, Table 1, the chapter's table (K marked †, with its legend) and the finding's text say so."""
    from analysis.experiment.grid import run
    from analysis.experiment.table1 import table1

    results = pd.concat([run(crossed, s, budgets=(400, 4000), ks=(5, 20), epsilons=(0.4,), n_samples=40, seed=1,
                             progress=False, use_cache=False, averaging="weighted",  # the paper's names
                             perturbation="dirichlet")  # under which K = 5 is never significant here
                         for s in ("S1", "S2")], ignore_index=True)
    assert (results["beyond_data"] == ((results["K"] > 12) | (results["N"] > 30))).all()
    summary = table1(results).dropna(subset=["NK"])
    assert summary["beyond_data"].any() and len(summary)
    shown = tables.compare_with_paper(results, 0.4)
    ks = shown.frame[shown.frame["statistic"] == "K"].drop(columns=["run", "statistic"])
    marked = ks.apply(lambda column: column.str.endswith(tables.BEYOND_MARK)).to_numpy().sum()
    assert marked == summary["beyond_data"].sum() and tables.BEYOND_MARK in shown.caption
    moved = tables.shift_table(results, [(("crossed", "S1"), ("crossed", "S2"))], 0.4)  # RQ2's budget-move table
    marks = moved.frame[["best K, modelled", "best K, S2"]].apply(lambda c: c.str.endswith(tables.BEYOND_MARK))
    assert marks.to_numpy().sum() == summary["beyond_data"].sum() and tables.BEYOND_MARK in moved.caption
    text = findings.distribution_metrics_favour_large_k(results, 0.4).ours
    assert "cannot supply" in text and "K 20" in text
    assert findings.modelling_shifts_budget_and_k(results, [(("crossed", "S1"), ("crossed", "S2"))], 0.4).ours.count(
        "cannot supply") == 1


def test_the_papers_budget_moves_name_every_metric_once_with_its_own_budgets():
    """RQ3 quotes how Toxicity's budgets move from S2 to S3; every metric appears once, under its own two budgets
    of the paper's Table 1 (Precision goes from 1,000 to 2,500, the others from 500)."""
    text = findings.budget_moves("Toxicity", "S2", "S3")
    table = tables.paper_table().query("dataset == 'Toxicity'").pivot(index="metric", columns="sampler", values="NK")
    for part in text.split("; "):
        before = float(re.match(r"NK ([\d,]+) under S2", part).group(1).replace(",", ""))
        for after, names in re.findall(r"([\d,]+) \(([^)]+)\)", part):
            for name in names.split(", "):
                metric = next(m for m in METRICS if findings.METRIC_LABELS[m] == name)
                assert (table.loc[metric, "S2"], table.loc[metric, "S3"]) == (before, float(after.replace(",", "")))
    assert sum(len(names.split(", ")) for _, names in re.findall(r"([\d,]+) \(([^)]+)\)", text)) == len(METRICS)


def _widest(s3, s2):
    results = results_for({("t", "S3"): s3, ("t", "S2"): s2})
    results.loc[(results["sampler"] == "S3") & (results["metric"] == "mae"), "null_sd"] = 0.035  # MAE widest
    return notes.widest_null_note(results, ("t", "S3"), ("t", "S2"), 0.3)


def test_rq3_says_why_the_widest_null_can_leave_the_budget_as_it_was():
    same = _widest(curve(1), curve(1))  # both first significant at 2,500
    assert same.startswith("MAE's null widens most under S3 (×1.75 S2's spread)")
    assert "the same under both, 2,500" in same and "next smaller budget, 1,000, neither reaches it" in same
    p_s2 = float(same.split("best p is ")[1].split(" ")[0])
    assert p_s2 == pytest.approx(min(curve(1)(2500, k, "mae") for k in KS), abs=5e-4)
    moved = _widest(curve(3), curve(0.5))
    assert "moves from 1,000 under S2 to 10,000 under S3 (×10)" in moved and "yet" not in moved
    floor = _widest(curve(0.05), curve(0.05))  # significant at 100, the grid's floor
    assert "is the grid's smallest budget" in floor
    assert notes.widest_null_note(None, ("t", "S3"), ("t", "S2"), 0.3) == ""


def test_the_answer_in_words_follows_the_sub_claims_and_says_what_is_missing():
    agree, partly, none = _rq4(APART, APART), _rq4(APART, TOGETHER), _rq4(TOGETHER, TOGETHER)
    assert agree.answer().startswith("Yes. On this build, as the paper says, a pool of a few raters separates")
    assert "all 4 sub-claims hold" in agree.answer()
    form = ("holds in its main form on this build" if all(c.holds for c in partly.claims if c.main) else
            "holds on this build in part of its main form")  # "its main form" only where every main one holds
    assert partly.answer().startswith("In part. The claim “A pool of a few raters separates the K curves, as on "
                                      f"Toxicity” {form}")
    failed = [c.shown_name for c in partly.claims if c.holds is False]
    assert all(name in partly.answer() for name in failed) and "do not." in partly.answer()
    assert none.answer().startswith("No. On this build the claim") and "(the book's reading)" in none.answer()
    missing = findings.few_raters_split_curves(None, None, None, [], 0.3, 5, missing="No cut dataset ran.")
    assert missing.answer() == "This build cannot answer the question. No cut dataset ran."
    for finding in (agree, partly, none):  # the same words the box's verdict gives, never another verdict
        assert finding.verdict in finding.markdown() and "cannot answer" not in finding.answer()


def test_the_answer_parts_names_that_hold_commas_with_semicolons():
    rule = verdicts.VerdictRule("one", "q", "h", "s", main=True)
    two = verdicts.VerdictRule("two", "q", "h", "s")
    finding = verdicts.Finding("Q", "p", "o", claims=[verdicts.SubClaim(rule, "p", "o", True, "x, S1"),
                                                      verdicts.SubClaim(two, "p", "o", True, "y, S3")], claim="C")
    assert finding.answer().endswith("all 2 sub-claims hold (x, S1: one; and y, S3: two).")


def test_the_answer_names_a_sub_claim_that_could_not_be_measured():
    """A sub-claim not measured (no Toxicity run beside the cut pool) keeps the verdict at "partly agrees" without one
    that fails: the answer says which could not be measured instead of naming none."""
    alone = _rq4(APART, APART, with_toxicity=False)
    assert alone.verdict == findings.PARTLY and not [c for c in alone.claims if c.holds is False]
    assert alone.answer().endswith("while S2: like Toxicity and S2: Toxicity's curves apart too (the book's reading) "
                                   "could not be measured.")


def test_a_partial_answer_claims_the_main_form_only_where_every_main_sub_claim_holds():
    main, other = verdicts.VerdictRule("one", "q", "h", "s", main=True), verdicts.VerdictRule("two", "q", "h", "s")
    second = verdicts.VerdictRule("three", "q", "h", "s", main=True)

    def answer(*holds):
        claims = [verdicts.SubClaim(rule, "p", "o", held, "x") for rule, held in zip((main, second, other), holds)]
        finding = verdicts.Finding("Q", "p", "o", claims=claims, claim="C")
        assert finding.verdict == verdicts.PARTLY
        return finding.answer()
    assert "“C” holds in its main form on this build, but not in every respect" in answer(True, True, False)
    assert answer(True, False, True).endswith("“C” holds on this build in part of its main form: x: one and x: two "
                                             "hold, while x: three does not.")


def test_the_rule_note_reads_each_rules_ratio_of_delta_at_the_largest_k_to_the_smallest():
    from analysis.paper import notes

    def run(grow):  # Δ at K = 1, 10, 100 for every vote metric of one run
        rows = [{"dataset": "x", "sampler": "S2", "metric": m, "epsilon": 0.3, "NK": 1000, "K": k,
                 "delta": 0.1 * grow ** i} for m in ("accuracy", "f1") for i, k in enumerate((1, 10, 100))]
        return pd.DataFrame(rows)
    note = notes.rule_effect_note({"one-label": run(2.0), "uniform": run(0.5)}, 0.3, 1000)
    assert note == ("At N×K = 1,000 and ε = 0.3, the vote metrics' Δ at K = 100 is 4.00 times its K = 1 value under "
                    "the one-label rule, and 0.25 times its K = 1 value under the uniform rule (median over runs and "
                    "vote metrics).")


def test_the_beyond_sentence_names_each_extrapolated_design_by_its_n_and_k():
    results = grid_results({("dices-synthetic", "S2"): lambda nk, k, metric: 0.01 if nk >= 1000 else 0.5})
    results["beyond_data"] = (results["metric"] == "mae") & (results["K"] == 1)  # N 1,000 above the data's items
    said = findings.beyond_sentence(results, 0.3)
    assert said.startswith(" 1 of these (run, metric) pairs rests on a design the data cannot supply")
    assert "its smallest significant design is an extrapolation: MAE on " in said and "(N 1,000 × K 1)." in said
    assert findings.beyond_sentence(results.drop(columns="beyond_data"), 0.3) == ""
    # RQ1's finding, whose budget sub-claim counts such designs, names them too (the real sparse sets' K = 10)
    both = grid_results({("d", "S4"): lambda nk, k, metric: 0.01 if nk >= 2500 else 0.5,
                         ("d", "S2"): lambda nk, k, metric: 0.01 if nk >= 1000 else 0.5})
    both["beyond_data"] = (both["metric"] == "mae") & (both["K"] == 1) & (both["sampler"] == "S4")
    rq1 = findings.raters_raise_p_values(both, [(("d", "S4"), ("d", "S2"))], 0.3)
    assert "its smallest significant design is an extrapolation: MAE on d, S4 (N " in rq1.ours
    assert rq1.ours.endswith(" × K 1).") and rq1.ours.count("extrapolation") == 1
