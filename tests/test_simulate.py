"""Simulation of G, A, B and the null: perturbation share, calibration under no effect, power under a big one."""

import numpy as np
import pytest
from scipy.stats import binom

from analysis.errors import ParameterError
from analysis.grid import run
from analysis.metrics import METRICS
from analysis.pvalues import p_values
from analysis.simulate import Simulator, perturb_counts, perturb_labels


@pytest.mark.parametrize("epsilon", [0.1, 0.3])
def test_label_perturbation_changes_an_epsilon_share_and_never_redraws_the_same_label(epsilon):
    rng = np.random.default_rng(7)
    labels = rng.integers(0, 4, size=(500, 40)).astype(np.int8)
    before = labels.copy()
    perturb_labels(rng, labels, 500, 40, epsilon, 4)
    changed = labels != before
    n = labels.size
    low, high = binom.ppf([1e-4, 1 - 1e-4], n, epsilon)
    assert low <= changed.sum() <= high
    # replacements are uniform over the three other labels
    moved = (labels[changed] - before[changed]) % 4
    counts = np.bincount(moved, minlength=4)
    assert counts[0] == 0
    third = changed.sum() / 3
    assert np.all(np.abs(counts[1:] - third) < 4.5 * np.sqrt(third))


def test_count_perturbation_keeps_totals_and_follows_its_exact_law():
    rows, epsilon = 3000, 0.2
    rng = np.random.default_rng(8)
    counts = np.tile(np.array([[30, 0, 10]], dtype=np.int64), (rows, 1))
    scratch = np.empty(3, dtype=np.int64)
    for j in range(rows):
        perturb_counts(rng, counts, j, epsilon, scratch)
    assert (counts.sum(1) == 40).all()
    # label 1 only receives: each of the 40 responses lands there with probability epsilon / 2
    low, high = binom.ppf([1e-4, 1 - 1e-4], rows * 40, epsilon / 2)
    assert low <= counts[:, 1].sum() <= high
    # label 0 keeps Binomial(30, 1 - eps) and receives Binomial(10, eps / 2)
    mean = rows * (30 * (1 - epsilon) + 10 * epsilon / 2)
    sd = np.sqrt(rows * (30 * epsilon * (1 - epsilon) + 10 * epsilon / 2 * (1 - epsilon / 2)))
    assert abs(counts[:, 0].sum() - mean) < 4.5 * sd


def test_s2_count_form_matches_response_form(dices):
    """Same law, different random streams: the means of every delta agree within their standard errors."""
    n_samples = 600
    by_method = {}
    for method in ("counts", "responses"):
        sim = Simulator(dices, "S2", method=method)
        by_method[method] = sim.replicates(40, 6, 0.3, n_samples, np.random.default_rng(9), null=False)
    a, b = by_method["counts"], by_method["responses"]
    se = np.sqrt(a.var(0, ddof=1) / n_samples + b.var(0, ddof=1) / n_samples)
    assert np.all(np.abs(a.mean(0) - b.mean(0)) <= 4.5 * se + 1e-12)


def test_no_effect_gives_calibrated_p_values(crossed):
    table = run(crossed, "S2", budgets=(200, 600), ks=(2, 5, 20), epsilons=(0.0,), n_samples=200, seed=3,
                use_cache=False, progress=False)
    continuous = table[table["metric"].isin(["mae", "kl_div", "jsd"])]["p_value"]
    # the pairwise statistic of two equal laws has standard error sqrt((2n+1)/(12 n^2)); 4 of them, unpooled
    tol = 4 * np.sqrt((2 * 200 + 1) / (12 * 200**2))
    assert abs(continuous.mean() - 0.5) < tol
    m = len(table)
    assert (table["p_value"] < 0.05).sum() <= binom.ppf(0.999, m, 0.05)
    assert table["p_value"].mean() > 0.5 - tol


def test_a_big_effect_is_detected_by_mae(dices):
    table = run(dices, "S2", budgets=(2500,), ks=(10,), epsilons=(0.4,), n_samples=300, seed=1,
                use_cache=False, progress=False, metrics=["mae"])
    assert table["p_value"].iloc[0] < 0.01
    assert table["delta"].iloc[0] > 0


@pytest.mark.parametrize("sampler", ["S1", "S2"])
def test_null_deltas_centre_on_zero_and_alternative_on_a_positive_mae(crossed, sampler):
    sim = Simulator(crossed, sampler)
    alt = sim.replicates(60, 5, 0.3, 400, np.random.default_rng(2), null=False)
    null = sim.replicates(60, 5, 0.3, 400, np.random.default_rng(3), null=True)
    mae = METRICS.index("mae")
    se = null[:, mae].std(ddof=1) / np.sqrt(400)
    assert abs(null[:, mae].mean()) < 4.5 * se
    assert alt[:, mae].mean() > 0
    assert p_values(null, alt)[mae] < 0.5


def test_bad_simulation_parameters_are_rejected(crossed):
    sim = Simulator(crossed, "S2")
    with pytest.raises(ParameterError, match="epsilon"):
        sim.replicates(10, 2, 1.5, 10, np.random.default_rng(0), null=False)
    with pytest.raises(ParameterError, match="K"):
        sim.replicates(10, 0, 0.1, 10, np.random.default_rng(0), null=False)
    with pytest.raises(ParameterError, match="method"):
        Simulator(crossed, "S2", method="fast")
