"""The calibration of compare on simulated test sets: the population's two systems are equally good, p holds its
level when raters do not matter, and S2 rejects more often than S1 when raters lean persistently."""

import numpy as np
import pandas as pd
import pytest

from analysis.tools.compare import compare
from analysis.tools.compare_calibration import (Scenario, advice, calibration, calibrations, contrast,
                                               TESTS, draw_test_set, readable, summary)
from analysis.errors import ParameterError


@pytest.mark.parametrize("raters", [5, 4])
def test_the_two_systems_are_equally_good_in_the_population(raters):
    """Over 150 test sets the mean observed accuracy delta is within 3 standard errors of 0, while on single sets
    it is often far from 0 (the raters of a set lean by chance). With 4 raters, 2-2 ties are frequent and go to the
    lower label code: without the random reversal of each item's codes, B (leaning to label 0) would win them."""
    population = Scenario(n_items=40, n_raters=raters)
    deltas = np.array([compare(*draw_test_set(population, seed), n_samples=2, metrics=["accuracy"])["delta"].iloc[0]
                       for seed in range(150)])
    assert abs(deltas.mean()) <= 3 * deltas.std(ddof=1) / np.sqrt(len(deltas))
    assert deltas.std() > 0.02


def test_a_test_set_is_crossed_and_seeded():
    ds, a, b = draw_test_set(Scenario(n_items=30, n_raters=4), 7)
    assert (ds.n_items, ds.n_raters, ds.n_ratings) == (30, 4, 120) and ds.topology.kind == "fully crossed"
    again = draw_test_set(Scenario(n_items=30, n_raters=4), 7)
    assert ds.sha256 == again[0].sha256 and a.equals(again[1])
    assert np.allclose(a[["p_0", "p_1"]].sum(axis=1), 1)
    reversed_codes = (a["p_1"] < b["p_1"]).sum()  # A leans to label 1, except where an item's codes are reversed
    assert 6 <= reversed_codes <= 24  # Binomial(30, 1/2) falls outside in about 1 of 3,000 seeds


@pytest.mark.slow
def test_without_rater_bias_every_sampler_holds_its_level():
    """Raters without a persistent bias: the share of p < 0.05 stays below 5 % plus three binomial standard
    errors under S1 and S2."""
    n_sets = 120
    table = calibration(Scenario(n_items=40, rater_sd=0.0), n_sets=n_sets, n_samples=100,
                        metrics=["accuracy", "jsd"])
    assert (table["n_sets"] == n_sets).all() and len(table) == 4
    assert (table["share"] <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / n_sets)).all(), table
    assert ((table["low"] <= table["share"]) & (table["share"] <= table["high"])).all()


def test_with_persistent_rater_bias_s2_rejects_more_often_than_s1():
    """Five raters who lean persistently: S2, which redraws each item's raters as independent people, rejects the
    true hypothesis more often than S1, by more than three standard errors of the difference of two shares."""
    n_sets = 80
    table = calibration(Scenario(n_items=40), n_sets=n_sets, n_samples=100, metrics=["jsd"]).set_index("sampler")
    s1, s2 = table.loc["S1", "share"], table.loc["S2", "share"]
    se = np.sqrt((s1 * (1 - s1) + s2 * (1 - s2)) / n_sets)
    assert s2 - s1 > 3 * max(se, 1 / n_sets), table


def test_contrast_compares_one_set_under_both_samplers():
    table = contrast(Scenario(n_items=30), n_samples=50, metrics=["accuracy"])
    assert list(table["sampler"]) == ["S1", "S2"]
    assert table["delta"].nunique() == 1 and table["p_given_ratings"].nunique() == 1


def test_bad_parameters_are_refused():
    with pytest.raises(ParameterError):
        calibration(n_sets=0)


def test_the_calibration_is_reported_as_measured():
    table = calibration(Scenario(n_items=20), n_sets=30, n_samples=40, metrics=["accuracy", "jsd"])
    shown = readable({"5 raters": table})
    # one row per design and metric, one column per sampler and test: five columns at most, narrow enough for a page
    assert list(shown.columns) == ["design", "metric", "S1 rater-level", "S2 percentile"]
    assert list(shown["metric"]) == ["Accuracy", "JSD"] and set(shown["design"]) == {"5 raters"}
    row = table.iloc[0]
    band = [f"{row[end]:.3f}".rstrip("0").rstrip(".") for end in ("low", "high")]
    assert shown.loc[0, f"{row['sampler']} {row['test']}"] == f"{row['share']:.3f} [{band[0]}, {band[1]}]"
    assert row["n_sets"] == 30  # 30 sets: a share needs three decimals (1/30), as 500 do
    assert len(readable({"a": table, "b": table})) == 4
    text = summary({"5 raters": table})
    s1 = table[table["sampler"] == "S1"]["share"]
    assert f"5 raters under S1 (rater-level): {s1.min():.3f} to {s1.max():.3f} (30 test sets; " in text

    held = (table["low"] <= 0.05) & (0.05 <= table["high"])
    for (sampler, test), part in table.groupby(["sampler", "test"]):  # each share's side of 0.05, in words
        words = ("on every metric consistent with 0.05" if held[part.index].all() else
                 "too many small p" if (part["low"] > 0.05).any() else "a cautious test")
        assert words in text.split(f"5 raters under {sampler} ({test})")[1].split(")")[0] + ")", (sampler, test)
    powered = calibration(Scenario(n_items=20, lean=0.0, lean_b=0.6), n_sets=30, n_samples=40,
                          metrics=["accuracy", "jsd"])
    power = powered[powered["sampler"] == "S1"]["share"]
    said = advice({"5 raters": table}, {"5 raters": powered})
    assert said.startswith("- **5 raters**: ") and said.count("\n") == 0
    def span(low, high):  # one value where both ends print alike
        return f"{low:.0%}" if f"{low:.0%}" == f"{high:.0%}" else f"{low:.0%} to {high:.0%}"
    assert f"in {span(s1.min(), s1.max())} of 30 test sets where neither" in said
    top = table[table["sampler"] == "S1"]["high"].max()  # the band's top: what 30 sets cannot rule out
    assert f"(the level is 5%; 30 test sets cannot tell that from a rate as high as {top:.0%})" in said
    assert f"in {span(power.min(), power.max())} where A was better" in said
    assert ("weak evidence of no difference" in said) == (0.2 <= power.min() < 0.8)
    assert ("almost never detects" in said) == (power.min() < 0.2 <= power.max() or power.max() < 0.2)


@pytest.mark.parametrize("n_sets, shares, shown", [(4, (1, 2), ("0.25", "0.50")), (10, (1, 5), ("0.1", "0.5")),
                                                   (500, (14, 25), ("0.028", "0.050")), (60, (3, 6), ("0.050", "0.100")),
                                                   (1, (0, 1), ("0", "1"))])
def test_a_share_shows_the_decimals_its_count_of_sets_needs(n_sets, shares, shown):
    """A share of 4 test sets is a quarter: "0.25", never "0.250" (padded); one of 60 or 500 keeps three decimals."""
    from analysis.tools.compare_calibration import share_text

    assert tuple(share_text(k / n_sets, n_sets) for k in shares) == shown


@pytest.mark.parametrize("powers, words", [((0.0, 0.06), "with so few raters the test almost never detects"),
                                            ((0.0, 0.7), "on some metrics the test almost never detects"),
                                            ((0.5, 0.78), "misses a difference of this size in 22% to 50%"),
                                            ((0.58, 0.87), "misses a difference of this size in 13% to 42%"),
                                            ((0.85, 0.95), "fair evidence against a difference")])
def test_the_advice_reads_the_power_it_was_given(powers, words):
    """3 raters with a power of 0 to 6 % almost never detect the difference; a range that reaches 70 % on one
    metric but 0 on another is not 'weak evidence' on every metric; one that misses it in 42 % of test sets on its
    weakest metric is not 'fair evidence' however strong the best one; each reading is computed from the numbers."""
    def table(shares):
        return pd.DataFrame({"sampler": "S1", "test": TESTS[0], "metric": ["accuracy", "jsd"], "share": shares})
    said = advice({"d": table([0.04, 0.06])}, {"d": table(list(powers))})
    assert words in said and f"{powers[0]:.0%} to {powers[1]:.0%} where A was better" in said


def test_calibrations_in_workers_are_those_made_one_by_one():
    designs = {"3": Scenario(n_items=30, n_raters=3), "5": Scenario(n_items=30, n_raters=5, lean_b=0.6)}
    options = dict(n_sets=6, n_samples=40, seed=3, samplers=("S1",))
    alone = {name: calibration(population, **options) for name, population in designs.items()}
    pooled = calibrations(designs, n_jobs=2, **options)
    assert list(pooled) == list(designs)
    for name in designs:
        pd.testing.assert_frame_equal(pooled[name], alone[name])
    with pytest.raises(ParameterError, match="n_jobs"):
        calibrations(designs, n_jobs=0)


@pytest.mark.parametrize("population, kind", [
    (Scenario(n_items=60, n_raters=3, pool=30), "sparse"),
    (Scenario(n_items=60, n_raters=3, pool=8, sets=10), "overlapping rater sets"),
])
def test_a_sparse_or_overlapping_test_set_has_its_design(population, kind):
    """Each item has ``n_raters`` distinct raters of the pool; with ``sets``, one of that many rater sets."""
    ds, a, b = draw_test_set(population, 3)
    assert ds.topology.kind == kind and (ds.raters_per_item == 3).all()
    assert ds.n_raters <= population.pool and ds.n_ratings == 180
    if population.sets:
        assert len({frozenset(ds.rater[ds.item == i]) for i in range(ds.n_items)}) <= population.sets


@pytest.mark.slow
def test_on_sparse_data_s4_holds_the_level_that_s2_misses():
    """Each item rated by 3 of a pool of 30 raters who lean persistently (three ordinal labels): over 100 test sets
    S2's JSD rejects the true hypothesis far above 5 % and S4's rater-level test does not exceed 5 % by more than
    three binomial standard errors (the full measurement, 500 sets a design, is benchmarks/compare_calibration.py)."""
    n_sets = 100
    table = calibration(Scenario(n_items=150, n_raters=3, pool=30, n_labels=3), samplers=("S4", "S2"),
                        n_sets=n_sets, n_samples=100, metrics=["accuracy", "jsd"]).set_index(["sampler", "metric"])
    bound = 0.05 + 3 * np.sqrt(0.05 * 0.95 / n_sets)
    assert (table.loc["S4", "share"] <= bound).all(), table
    assert table.loc[("S2", "jsd"), "share"] > bound, table


def test_the_oracle_rejects_as_a_z_test_with_the_true_spread():
    """The oracle's share is that of |delta| / sd(delta) above the normal's 97.5 % point (1.96)."""
    from analysis.tools.compare_calibration import oracle_share

    deltas = pd.Series([0.0, 1.0, -1.0, 3.0, 0.5])
    sd = deltas.std(ddof=1)
    assert oracle_share(deltas) == pytest.approx(np.mean(np.abs(deltas) / sd > 1.959964))
    assert np.isnan(oracle_share(pd.Series([0.2, 0.2])))


def test_the_advice_gives_one_share_where_a_range_would_print_its_ends_alike():
    def table(shares):
        return pd.DataFrame({"sampler": "S1", "test": TESTS[0], "metric": ["accuracy", "jsd"], "share": shares})
    said = advice({"d": table([0.031, 0.034])}, {"d": table([0.9, 0.95])})
    assert "came in 3% of test sets where neither" in said and "3% to 3%" not in said
    alike = table([0.0333, 0.0334]).assign(n_sets=30, low=0.0, high=0.17)
    for power in (False, True):
        words = summary({"3 of 30 raters": alike}, power=power)
        assert "3 of 30 raters under S1" in words and ": 0.033 (30 test sets" in words and "0.033 to" not in words
