"""The population model fitted to a pilot: its statistic on a worked example, its draws, the stand-ins' model with
only the rater share mattering, recovery of known parameters, and the coverage of the rater share's interval."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analysis.data import population
from analysis.data.annotations import from_table
from analysis.data.population import Population, fit, rater_consistency
from analysis.data.synthetic import StandIn, draw_labels
from analysis.errors import DataError, ParameterError

TRUE = Population((0, 1, 2), (0.5, 0.3, 0.2), 3.0, 0.3, (0.3, 0.3))


def test_rater_consistency_on_a_worked_example():
    """Items [0, 1, 1] and [0, 0, 1] by raters 0, 1, 2. A rating's position among its item's two others: item 0
    gives -1/2, 1/4, 1/4; item 1 gives -1/4, -1/4, 1/2. Rater sums -3/4, 0, 3/4 over 2 items each: between
    sum of squares 9/16; total 3/4; the statistic 3/4."""
    item, rater = np.repeat([0, 1], 3), np.tile([0, 1, 2], 2)
    label = np.array([0, 1, 1, 0, 0, 1])
    assert rater_consistency(item, rater, label, 2, 3, 2) == pytest.approx(0.75, abs=1e-12)
    swapped = np.array([2, 0, 1])  # renaming the raters changes nothing
    assert rater_consistency(item, swapped[rater], label, 2, 3, 2) == pytest.approx(0.75, abs=1e-12)
    assert rater_consistency(item, rater, np.zeros(6, int), 2, 3, 2) == 0  # no disagreement, nothing to measure


def test_without_rater_biases_the_statistic_is_about_raters_over_ratings():
    """With rho = 0 a rater's mean position is the mean of its ratings' independent centred positions, so its
    share of the sum of squares is its ratings' share: R raters over R x N ratings sum to about 1 / N."""
    values = [rater_consistency(ds.item, ds.rater, ds.label, ds.n_items, ds.n_raters, ds.n_labels)
              for ds in (Population((0, 1), (0.6, 0.4), 3.0, 0.0, (0, 0)).draw(100, 8, s) for s in range(40))]
    assert np.mean(values) == pytest.approx(1 / 100, abs=4 * np.std(values) / np.sqrt(40))
    biased = Population((0, 1), (0.6, 0.4), 3.0, 0.4, (0, 0)).draw(100, 8, 0)
    assert rater_consistency(biased.item, biased.rater, biased.label, 100, 8, 2) > 4 * np.mean(values)


def test_only_the_rater_share_matters_as_in_the_stand_ins():
    """A stand-in's rater_sd 0.45 and noise_sd 1.2 and the population's rho = 0.45² / (0.45² + 1.2²) draw the same
    labels from the same stream: the latent is rescaled to unit variance either way."""
    shares = (0.59, 0.10, 0.31)
    stand_in = StandIn(imitates="x", design="crossed", labels=(0, 1, 2), label_shares=shares, rater_sd=0.45,
                       noise_sd=1.2, n_items=200, n_raters=30, dirichlet=tuple(8.83 * np.array(shares)))
    model = Population((0, 1, 2), shares, 8.83, 0.45**2 / (0.45**2 + 1.2**2), (0, 0)).spec(200, 30)
    item, rater = np.divmod(np.arange(200 * 30), 30)
    one, two = (draw_labels(spec, item, rater, np.random.default_rng(5)) for spec in (stand_in, model))
    assert np.array_equal(one, two)


def test_a_bootstrap_replicate_of_a_crossed_pilot_is_its_drawn_items_by_its_drawn_raters():
    """The replicate the interval of rho rests on, against the matrix of a crossed pilot indexed by the same draws
    (a rater drawn twice is two columns): the statistic agrees to rounding."""
    ds = TRUE.draw(40, 6, seed=3)
    table = np.zeros((40, 6), int)
    table[ds.item, ds.rater] = ds.label
    item, rater = np.divmod(np.arange(240), 6)
    ours, theirs = np.random.default_rng(5), np.random.default_rng(5)
    for _ in range(5):
        found = population.resampled_consistency(ds, ours)
        drawn = table[theirs.integers(0, 40, 40)][:, theirs.integers(0, 6, 6)]
        assert found == pytest.approx(rater_consistency(item, rater, drawn.ravel(), 40, 6, 3), abs=1e-12)


def test_a_crossed_draw_has_its_design_and_shares():
    ds = TRUE.draw(300, 12, seed=1, name="drawn")
    assert (ds.n_items, ds.n_raters, ds.n_ratings) == (300, 12, 3600) and ds.topology.kind == "fully crossed"
    shares = np.bincount(ds.label, minlength=3) / ds.n_ratings
    # items and raters make ratings dependent: the share of a label over 300 items varies by about
    # sqrt(Var(p_i) / 300) at most about 0.017 here (Beta(1.5, 1.5)); 0.06 is beyond three and a half of them
    np.testing.assert_allclose(shares, TRUE.shares, atol=0.06)
    assert "drawn from a population model" in ds.provenance and TRUE.draw(300, 12, seed=1).sha256 == ds.sha256


def test_a_batched_draw_has_batches_of_its_size_and_raters():
    ds = TRUE.draw(60, 5, seed=2, batch_size=10, pool=15)
    batch = ds.topology.item_batch
    assert ds.topology.kind == "batched" and np.all(np.bincount(batch) == 10) and 5 < ds.n_raters <= 15
    per_batch = pd.DataFrame({"b": batch[ds.item], "r": ds.rater}).drop_duplicates().groupby("b").size()
    assert (per_batch == 5).all()
    with pytest.raises(ParameterError, match="whole batches of 10"):
        TRUE.draw(65, 5, seed=2, batch_size=10, pool=15)


@pytest.mark.parametrize("raters", [1, 0, 2.5])
def test_fewer_than_two_raters_are_refused(raters):
    with pytest.raises(ParameterError, match="R must be an integer >= 2"):
        TRUE.draw(10, raters, seed=0)


def test_a_pilot_without_shared_items_is_refused():
    one_each = from_table(pd.DataFrame({"item": [1, 2, 3], "rater": [1, 2, 3], "label": [0, 1, 0]}))
    with pytest.raises(DataError, match="two items or more with two raters or more"):
        fit(one_each)
    with pytest.raises(ParameterError, match="level must lie in"):
        fit(TRUE.draw(20, 4, 0), level=1.0)
    with pytest.raises(ParameterError, match="boot must be an integer >= 10"):
        fit(TRUE.draw(20, 4, 0), boot=5)


def test_a_large_pilot_recovers_the_parameters():
    """400 items x 30 raters: the interval of rho holds the truth and is narrow, a0 is within the spread of its
    estimator (about 10 % at 400 items), the shares within 0.05."""
    found = fit(TRUE.draw(400, 30, seed=3), seed=3, pilots=40)
    low, high = found.rho_interval
    assert low <= TRUE.rho <= high and high - low < 0.2
    assert found.a0 == pytest.approx(TRUE.a0, rel=0.3)
    np.testing.assert_allclose(found.shares, TRUE.shares, atol=0.05)
    assert found.spread == pytest.approx(np.sqrt(found.rho))


def test_the_ends_of_the_interval_carry_the_fits_a0_there():
    """A fitted population's ends: rho at each end of its interval, a0 as the fit reads it at that rho (a larger rho
    makes items look more alike, and the fit takes more of that likeness off a0); one given by hand keeps its a0."""
    found = fit(TRUE.draw(100, 8, seed=5), seed=5, pilots=20)
    low, high = found.interval_ends()
    assert (low.rho, high.rho) == found.rho_interval and (low.a0, high.a0) == found.interval_a0
    assert low.a0 >= found.a0 >= high.a0 and low.shares == found.shares == high.shares
    assert [end.a0 for end in TRUE.interval_ends()] == [TRUE.a0, TRUE.a0]


def test_the_a0_correction_undoes_what_few_biased_raters_hide():
    """Five raters sharing 60 % of the latent's variance make items look alike: the plain moment estimate of a0 runs
    about 15 % high (its median over pilots). The fitted a0 sits nearer the truth than the plain estimate, and within
    three standard errors of the median's (1.25 s.d. of log a0 / sqrt(pilots)) of it."""
    biased = Population((0, 1, 2), (0.5, 0.3, 0.2), 3.0, 0.6, (0, 0))
    pilots = [biased.draw(150, 5, seed=100 + s) for s in range(30)]
    plain = np.log([population._concentration(ds.item_label_counts) for ds in pilots])
    fitted = np.log([fit(ds, seed=s, pilots=20).a0 for s, ds in enumerate(pilots)])
    truth = np.log(biased.a0)
    assert abs(np.median(fitted) - truth) < abs(np.median(plain) - truth)
    assert abs(np.median(fitted) - truth) < 3 * 1.25 * np.std(fitted) / np.sqrt(len(pilots))


@pytest.mark.slow
def test_the_rater_share_interval_covers_at_about_its_level():
    """40 pilots of 60 items x 6 raters from known populations (rho 0.1 and 0.4): the 90 % interval of rho (the
    percentile interval of a bootstrap of the pilot's items and raters) holds the truth in a number of them the binomial law of 40 draws at 0.9 allows (two-sided 0.002). The full check, over
    100 pilots, is benchmarks/plan_model_checks.py."""
    covered = 0
    for s in range(40):
        truth = Population((0, 1), (0.6, 0.4), 3.0, (0.1, 0.4)[s % 2], (0, 0))
        low, high = fit(truth.draw(60, 6, seed=1000 + s), seed=s, pilots=60).rho_interval
        covered += low <= truth.rho <= high
    low, high = stats.binom.ppf([0.001, 0.999], 40, population.LEVEL)
    assert low <= covered <= high, covered
