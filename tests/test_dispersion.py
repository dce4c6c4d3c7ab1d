"""The Dirichlet-multinomial fit of per-item dispersion: recovery of known laws and calibrated standard errors."""

import numpy as np
import pytest

from analysis.data import dispersion
from analysis.errors import DataError


def draw(a, n_items, k, rng):
    """Per-item counts with laws p_i ~ Dirichlet(a); ``k`` raters per item (an int or one per item)."""
    laws = rng.dirichlet(a, n_items)
    return np.array([rng.multinomial(ki, p) for ki, p in zip(np.broadcast_to(k, n_items), laws)])


@pytest.mark.parametrize("a, n_items, k", [((5.22, 0.86, 2.75), 3000, 123), ((1.37, 1.33), 20000, 5),
                                           ((4.0, 2.1, 1.3, 1.0, 0.6), 4554, "24-40")])
def test_fit_recovers_a_known_law_within_its_standard_error(a, n_items, k):
    rng = np.random.default_rng(7)
    k = rng.integers(24, 41, n_items) if k == "24-40" else k
    found = dispersion.fit(draw(a, n_items, k, rng))
    assert found.a0 == pytest.approx(sum(a), abs=4 * found.a0_se)
    np.testing.assert_allclose(found.a / found.a0, np.array(a) / sum(a), atol=0.02)


def test_standard_error_matches_the_spread_over_repeated_samples():
    """Over 200 samples of 350 items the s.d. of a0 estimates is within the s.e.'s sampling band (chi-square,
    199 degrees of freedom: the s.d. of 200 normal draws lies within ±20 % of sigma with probability > 0.99), and
    their mean is 8.83 within three standard errors plus 5 % for the fit's small-sample bias."""
    rng = np.random.default_rng(3)
    fits = [dispersion.fit(draw((5.22, 0.86, 2.75), 350, 123, rng)) for _ in range(200)]
    spread, se = np.std([f.a0 for f in fits], ddof=1), np.median([f.a0_se for f in fits])
    assert spread == pytest.approx(se, rel=0.2)
    assert np.mean([f.a0 for f in fits]) == pytest.approx(8.83, abs=3 * spread / np.sqrt(200) + 0.05 * 8.83)


def test_every_label_and_split_of_a_dirichlet_law_has_its_a0():
    rng = np.random.default_rng(11)
    counts = draw((5.22, 0.86, 2.75), 4000, 50, rng)
    for found in dispersion.split_concentrations(counts):
        assert found.a0 == pytest.approx(8.83, abs=4 * found.a0_se)
    both = dispersion.split(counts, [1, 2])
    assert both.sum() == counts.sum() and np.array_equal(both[:, 0], counts[:, 0])


def test_moment_estimator_agrees_with_the_maximum_likelihood_fit_on_large_samples():
    counts = draw((6.08, 2.88), 20000, 30, np.random.default_rng(5))
    found = dispersion.fit(counts)
    assert dispersion.moment_concentration(counts) == pytest.approx(found.a0, abs=4 * found.a0_se)


def test_items_that_never_disagree_beyond_multinomial_noise_give_a_large_a0():
    rng = np.random.default_rng(2)
    counts = rng.multinomial(20, [0.6, 0.4], size=2000)  # one law for every item: a0 is infinite
    assert dispersion.fit(counts).a0 > 100


@pytest.mark.parametrize("counts", [np.ones((5, 1)), np.array([[1, 0], [0, 1]]), np.array([[3, 2]])])
def test_too_little_data_is_an_error(counts):
    with pytest.raises(DataError):
        dispersion.fit(counts)
