"""compare's rater-level test: the two jackknives, the rater-column bootstrap, the widened percentile and the one
rule that keeps p and interval together."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from analysis.data.annotations import from_table
from analysis.engine.metrics import BY_NAME
from analysis.tools import rater_level
from analysis.tools.compare import _delta_matrix, full_counts
from analysis.tools.compare_calibration import Scenario, calibration
from conftest import batched_table


def _crossed(labels: np.ndarray):
    """A fully crossed dataset from a label matrix (items, raters)."""
    item, rater = np.divmod(np.arange(labels.size), labels.shape[1])
    return from_table(pd.DataFrame({"item": item, "rater": rater, "label": labels.ravel()}), label_order=[0, 1])


def test_the_item_jackknife_of_a_mean_is_its_variance_over_n():
    """Accuracy's delta is a mean over items of A's hit minus B's: its delete-one-item jackknife variance is the
    per-item differences' variance (ddof 1) over N, exactly."""
    rng = np.random.default_rng(0)
    ds = _crossed(rng.integers(0, 2, (60, 3)))
    share_a, share_b = (np.eye(2)[rng.integers(0, 2, 60)] for _ in range(2))
    full = full_counts(ds, share_a, share_b, 3)
    gold = full[0].argmax(1)  # 3 raters, 2 labels: no ties
    per_item = (share_a.argmax(1) == gold).astype(float) - (share_b.argmax(1) == gold)
    found = rater_level.item_jackknife(full, _delta_matrix)
    assert found[0] == pytest.approx(per_item.var(ddof=1) / 60, rel=1e-12)


def test_with_identical_raters_the_rater_part_vanishes_and_replicates_resample_items_only():
    """Raters who all give every item the same label: leaving one out changes nothing, and a rater-column
    replicate is an item bootstrap, whose variance is about (N - 1) / N of the item jackknife's (within 4
    standard errors of a variance from 2000 replicates)."""
    rng = np.random.default_rng(1)
    ds = _crossed(np.repeat(rng.integers(0, 2, (80, 1)), 5, axis=1))
    share_a, share_b = rng.dirichlet([1, 1], 80), rng.dirichlet([1, 1], 80)
    part, df, per_group = rater_level.rater_part(
        rater_level.rater_jackknife(ds, share_a, share_b, "S1", 5, _delta_matrix))
    assert np.allclose(part, 0) and (df, per_group) == (4, 5.0)
    replicates = rater_level.column_replicates(ds, share_a, share_b, "S1", 5, 2000, np.random.default_rng(2),
                                               _delta_matrix)
    item = rater_level.item_jackknife(full_counts(ds, share_a, share_b, 5), _delta_matrix)
    ratio = replicates.var(0, ddof=1) / (item * 79 / 80)
    assert np.all(np.abs(ratio - 1) < 4 * np.sqrt(2 / 2000) * 1.5), ratio


def test_a_batch_replicate_draws_only_its_own_raters():
    """Batches whose raters all say 0 (even batches) or all say 1 (odd): every replicate keeps each drawn item's
    gold at its batch's label, so with A always answering 0 its accuracy on a replicate is the share of drawn items
    from even batches."""
    table = batched_table(n_batches=6, batch_size=5, raters_per_batch=3)
    table["label"] = table["batch"] % 2
    ds = from_table(table, batch="batch", label_order=[0, 1])
    zero = np.tile([1.0, 0.0], (ds.n_items, 1))
    replicates = rater_level.column_replicates(ds, zero, 1 - zero, "S3", 3, 50, np.random.default_rng(0),
                                               _delta_matrix)
    assert np.allclose(replicates[:, 0], 0)  # stratified by batch: half the drawn items are from even batches


@settings(max_examples=200, deadline=None)
@given(delta=st.floats(-1, 1), variance=st.floats(0, 0.2), seed=st.integers(0, 10_000), n=st.integers(2, 400),
       two_sided=st.booleans(), companion=st.booleans(), raters=st.integers(2, 30), spread=st.sampled_from([0, 0.3]),
       shift=st.floats(-0.5, 0.5))
# a smallest p of exactly 1/40 at the end of the range: a tail of 0.025 + 2e-17 once gave p 0.05 and a point interval
@example(delta=1.0, variance=0.0, seed=0, n=39, two_sided=True, companion=False, raters=2, spread=0, shift=0.0)
@example(delta=1.0, variance=0.0, seed=0, n=39, two_sided=False, companion=False, raters=2, spread=0, shift=0.0)
def test_p_and_interval_never_disagree(delta, variance, seed, n, two_sided, companion, raters, spread, shift):
    """A two-sided p below 0.05 exactly when the interval excludes 0; a one-sided p below 0.025 exactly when its
    lower end is above 0; with or without the widened percentile, whose replicates may all be equal."""
    replicates = shift + np.random.default_rng(seed).normal(0, spread, n).round(2) if companion else None
    p, low, high = rater_level.test(delta, variance, raters - 1, two_sided, 1.0, 1 / (1 + n), replicates,
                                    rater_level.expansion(raters))
    assert low <= high
    if two_sided:
        assert (p < 0.05) == (low > 0 or high < 0)
    else:
        assert (p < 0.025) == (low > 0)


@pytest.mark.parametrize("n_samples", [200, 500, 1000])
def test_fewest_raters_is_where_the_widened_percentile_first_can_reject(n_samples):
    fewest = rater_level.fewest_raters(n_samples)
    at = [rater_level.percentile_p(0, n_samples, r - 1, rater_level.expansion(r)) for r in (fewest - 1, fewest)]
    assert at[0] >= rater_level.TAIL > at[1]


@pytest.mark.slow
def test_the_distribution_metrics_hold_their_level_where_a_t_test_alone_did_not():
    """Ten raters who lean persistently, 50 items, 150 test sets: the share of two-sided p < 0.05 of JSD and Wins
    stays below 5 % plus three binomial standard errors (the jackknife t alone gave 0.10 and 0.12 over 300 sets;
    the methods page has the full grid)."""
    n_sets = 150
    table = calibration(Scenario(n_items=50, n_raters=10), samplers=("S1",), n_sets=n_sets, n_samples=200,
                        metrics=["jsd", "wins"])
    assert (table["share"] <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / n_sets)).all(), table


def test_with_fewer_than_40_replicates_no_pool_is_named():
    """Below 40 replicates no percentile p can fall below 0.025 whatever the pool, so the raters are not what limits
    the test; the answer comes at once (it once walked every pool up to 10,000)."""
    assert rater_level.fewest_raters(39) == 0 and rater_level.fewest_raters(2) == 0
    assert rater_level.fewest_raters(40) > rater_level.fewest_raters(200) > rater_level.fewest_raters(1000)


def test_where_no_rater_rates_two_items_the_pools_rater_part_is_the_residual_and_counts_once():
    """Each rater rates one item: leaving a rater out is leaving one rating out, so the pool's rater part equals
    the ratings' part exactly, and the two-way variance is the larger of the item and rater parts (the residual
    taken off once, never the item part's own)."""
    rng = np.random.default_rng(4)
    n, per_item = 150, 3
    table = pd.DataFrame({"item": np.repeat(np.arange(n), per_item),
                          "rater": [f"r{j:04d}" for j in range(n * per_item)], "label": rng.integers(0, 3, n * per_item)})
    ds = from_table(table, label_order=[0, 1, 2])
    share_a, share_b = rng.dirichlet([1, 1, 1], n), rng.dirichlet([1, 1, 1], n)
    rater, _, _ = rater_level.rater_part(rater_level.pool_jackknife(ds, share_a, share_b, per_item, _delta_matrix))
    residual, _, _ = rater_level.rater_part(rater_level.rating_jackknife(ds, share_a, share_b, per_item,
                                                                         _delta_matrix))
    np.testing.assert_allclose(rater, residual, rtol=1e-12, atol=1e-15)
    item = rater_level.item_jackknife(full_counts(ds, share_a, share_b, per_item), _delta_matrix)
    np.testing.assert_allclose(rater_level.two_way(item, rater, residual), np.maximum(item, rater), rtol=1e-12)


def test_the_two_way_variance_takes_the_residual_off_once_and_never_falls_below_either_part():
    """item + rater - residual where the residual is below both parts; the larger part where it is not."""
    item, rater = np.array([4.0, 4.0, 1.0]), np.array([3.0, 3.0, 5.0])
    residual = np.array([1.0, 3.5, 2.0])
    np.testing.assert_array_equal(rater_level.two_way(item, rater, residual), [6.0, 4.0, 5.0])


def test_the_methods_pages_account_of_the_s4_variance_is_the_recorded_measurement():
    """The methods page explains the vote metrics' low power and the 8-rater level on crowd data from the parts of
    S4's variance; its figures are those of the recorded run of benchmarks/s4_variance_parts.py, and the two rules
    it weighs fail where it says: the larger-part floor high with 9 ratings of 100, the items' floor low with 3 of
    1,000, both low with sets of 3 from 8."""
    root = Path(__file__).resolve().parents[1]
    found = pd.read_csv(root / "benchmarks" / "s4_variance_parts.csv")
    methods = " ".join((root / "book" / "methods.md").read_text().split())
    vote = found["metric"].map(lambda metric: BY_NAME[metric].family == "vote")

    def span(design: str, column: str, rows=vote) -> str:
        values = found.loc[rows & found["design"].str.startswith(design), column]
        low, high = f"{values.min():.2f}", f"{values.max():.2f}"
        return low if low == high else f"{low} to {high}"

    def span3(design: str, column: str) -> str:
        values = found.loc[vote & found["design"].str.startswith(design), column]
        return f"{values.min():.3f} to {values.max():.3f}"

    nine, thousand, eight = "9 of 100 raters", "3 of 1000 raters", "30 overlapping sets of 3 from 8"
    equal = found["design"] == "9 of 100 raters, N 200"
    claims = [f"averaged {span(nine, 'V_two_way', vote & equal)} times",
              f"and {span(nine, 'V_two_way', vote & ~equal)} where A is better ({span(nine, 'V_two_way', ~vote)} on",
              f"bring it to {span(nine, 'V_floor_item')} on that design, but to {span(thousand, 'V_floor_item')} with",
              f"(a t-test level of {span(thousand, 'share_floor_item')} there)",
              f"{span(eight, 'V_two_way')} of the truth on the vote metrics ({span(eight, 'V_floor_item')} with",
              f"the variance rises to {span(eight, 'V_set_way')} of the truth on the vote metrics there, and their "
              f"t-test level over the 200 test sets from {span3(eight, 'share_two_way')} to "
              f"{span3(eight, 'share_set_way')};"]
    for claim in claims:
        assert claim in methods, claim
    assert found.loc[vote & found["design"].str.startswith(nine), "V_two_way"].min() > 1.5
    assert found.loc[vote & found["design"].str.startswith(thousand), "V_floor_item"].max() < 0.9
    assert found.loc[vote & found["design"].str.startswith(eight), ["V_two_way", "V_floor_item"]].max().max() < 0.8
    # the rater sets' jackknife moves only the designs whose items share their raters' sets
    away = ~found["design"].str.contains("overlapping")
    assert (found.loc[away, "V_set_way"] - found.loc[away, "V_two_way"]).abs().max() < 0.01
    assert (found.loc[~away, "V_set_way"] > found.loc[~away, "V_two_way"]).all()


def test_the_methods_pages_account_of_the_8_rater_level_is_the_recorded_measurement():
    """With 8 raters the test is liberal though its variance is not low: in sets of 4 from 8 it averages about the
    truth and the level is still 0.08, because the variance falls as the difference grows (a negative correlation
    on both 8-rater designs, on every metric but KL-Div, far weaker with pools of 100 or more); held at its mean, the
    same t-test would be cautious. The figures are the recorded run's (benchmarks/s4_variance_parts.csv)."""
    root = Path(__file__).resolve().parents[1]
    found = pd.read_csv(root / "benchmarks" / "s4_variance_parts.csv")
    methods = " ".join((root / "book" / "methods.md").read_text().split())
    vote = found["metric"].map(lambda metric: BY_NAME[metric].family == "vote")
    four = found["design"].str.startswith("40 overlapping sets of 4 from 8")
    eights = found["design"].str.contains(" from 8,")
    kl = found["metric"] == "kl_div"
    large = found["design"].isin(["3 of 100 raters, N 500", "9 of 100 raters, N 200", "5 of 100 raters, N 1000",
                                  "3 of 1000 raters, N 1000"])

    def span(rows, column: str, digits: int = 2) -> str:
        low, high = (f"{v:.{digits}f}".replace("-", "−") for v in (found.loc[rows, column].min(),
                                                                   found.loc[rows, column].max()))
        return low if low == high else f"{low} to {high}"

    claims = [f"the variance averages {span(four & vote, 'V_set_way')} of the truth on the vote metrics, and still "
              f"their t-test level is {span(four & vote, 'share_set_way', 3)}.",
              f"the variance is {span(eights & ~kl, 'corr_set_way')} on every metric but KL-Div "
              f"({span(eights & kl, 'corr_set_way')} there), against {span(large, 'corr_set_way')} on the four designs",
              f"the same t-test would reject in {span(eights, 'share_mean_V', 3)} of them."]
    for claim in claims:
        assert claim in methods, claim
    assert found.loc[four & vote, "V_set_way"].min() > 0.95 and found.loc[four & vote, "share_set_way"].min() > 0.075
    assert found.loc[eights & ~kl, "corr_set_way"].max() < -0.2 < found.loc[large, "corr_set_way"].min()
    assert found.loc[eights, "share_mean_V"].max() < 0.05


def test_with_one_rater_the_percentile_p_is_a_half_whatever_the_count():
    """The widening factor of one rater is 0: every count, all replicates on the null's side included (an
    infinite normal quantile), gives p 1/2, without a warning."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert {rater_level.percentile_p(c, 99, 1, rater_level.expansion(1)) for c in (0, 50, 99)} == {0.5}


def test_the_t_and_normal_functions_give_scipy_stats_numbers_exactly():
    """The test's Student's t tail and quantile and the percentile's normal quantile (scipy.special's ufuncs, for
    speed) equal scipy.stats' numbers to the last bit, at every degree of freedom the tests meet and at the ends."""
    from scipy import stats

    rng = np.random.default_rng(0)
    for df in [*range(1, 400), *rng.integers(400, 20_000, 200)]:
        t = np.concatenate([rng.normal(0, 4, 20), [0.0, -0.0, np.inf, -np.inf, 1e-300, 60.0]])
        assert [rater_level.student_sf(v, df) for v in t] == [float(stats.t.sf(v, df)) for v in t]
        assert [rater_level.student_sf(-v, df) for v in t] == [float(stats.t.cdf(v, df)) for v in t]
        assert rater_level.student_quantile(df) == float(stats.t.ppf(1 - rater_level.TAIL, df))
    for n in (39, 200, 1000):
        for count in range(n + 1):
            z = float(stats.norm.isf((1 + count) / (1 + n)))
            for df, factor in ((3, 0.8), (50, 0.95)):
                assert rater_level.percentile_p(count, n, df, factor) == float(stats.t.sf(z * factor, df))


def test_items_rated_by_the_same_raters_share_a_rater_set():
    """An item's rater set is its raters, whatever the order of its ratings in the file."""
    table = pd.DataFrame({"item": ["a", "b", "c", "a", "b", "c", "d", "d"],
                          "rater": ["x", "y", "x", "y", "x", "z", "x", "y"], "label": [0, 1, 0, 1, 1, 0, 1, 0]})
    ds = from_table(table.iloc[::-1], name="sets")
    found = dict(zip(ds.item_ids, rater_level.rater_sets(ds)))
    assert found["a"] == found["b"] == found["d"] != found["c"]


def test_the_rater_sets_part_leaves_a_sets_items_out_together():
    """Items copied three times under one rater set each: leaving a set out leaves out all copies of one item, so
    the sets' part is the one-item part of the items before copying, metric by metric (the eight scores depend on
    the items' shares of each count, which copying keeps). Where items do not share sets there is no sets' part."""
    rng = np.random.default_rng(3)
    counts = [rng.multinomial(5, [0.5, 0.3, 0.2], size=40).astype(float) for _ in range(3)]
    copies = [np.repeat(x, 3, axis=0) for x in counts]
    by_set = rater_level.set_jackknife(copies, np.repeat(np.arange(40), 3), _delta_matrix)
    np.testing.assert_allclose(by_set, rater_level.item_jackknife(counts, _delta_matrix), rtol=1e-9)
    assert rater_level.set_jackknife(counts, np.arange(40), _delta_matrix) is None
    # shared: at most half as many sets as items
    assert rater_level.set_jackknife(copies, np.arange(120) % 61, _delta_matrix) is None
    assert rater_level.set_jackknife(copies, np.arange(120) % 60, _delta_matrix) is not None


@pytest.mark.parametrize("sets", [12, None])
def test_the_tests_item_part_clusters_items_by_rater_set_where_they_share_one(sets):
    """compare's item part under S4 is the larger of the one-item and the rater sets' parts where items share
    sets (12 sets of 3 of 8 raters over 120 items), its degrees of freedom at most the sets' less one; the one-item
    part alone where every item has raters of its own (3 of 30)."""
    from analysis.tools.compare import rater_parts

    table = pd.DataFrame([(f"i{i}", f"r{r}", int(label)) for i, (raters, labels) in enumerate(zip(
        *_crowd_layout(sets))) for r, label in zip(raters, labels)], columns=["item", "rater", "label"])
    ds = from_table(table, name="crowd")
    rng = np.random.default_rng(5)
    share_a, share_b = (rng.dirichlet(np.ones(ds.n_labels), ds.n_items) for _ in range(2))
    full = full_counts(ds, share_a, share_b, 3)
    one_item = rater_level.item_jackknife(full, _delta_matrix)
    by_set = rater_level.set_jackknife(full, rater_level.rater_sets(ds), _delta_matrix)
    parts = rater_parts(ds, share_a, share_b, "S4", 3, _delta_matrix)
    if sets:
        n_sets = int(rater_level.rater_sets(ds).max()) + 1
        np.testing.assert_array_equal(parts.item, np.maximum(one_item, by_set))
        assert (by_set > one_item).any() and parts.df == min(ds.n_raters - 1, n_sets - 1)
    else:
        assert by_set is None
        np.testing.assert_array_equal(parts.item, one_item)
        assert parts.df == ds.n_raters - 1


def _crowd_layout(sets: int | None, n_items: int = 120):
    """Each item's three raters (of 8 in ``sets`` rater sets, or of 30 drawn per item) and labels, the labels
    leaning with a rater's own bias so that a set's items share something."""
    rng = np.random.default_rng(6)
    pool = 8 if sets else 30
    bias = rng.normal(0, 1, pool)
    chosen = [rng.choice(pool, 3, replace=False) for _ in range(sets or n_items)]
    raters = [chosen[i % len(chosen)] for i in range(n_items)]
    labels = [(rng.normal(0, 1) + bias[r] + rng.normal(0, 0.5, 3) > 0).astype(int) for r in raters]
    return raters, labels
