"""The calibration check: its tolerances come from the sampling distributions, it passes a calibrated null and it
fails a miscalibrated one, fed to it end to end."""

import numpy as np
import pandas as pd
import pytest

from analysis.experiment.calibration import (SPREAD_LEVEL, Calibration, calibrate, combine, log_ratio_se, measure,
                                  outside_allowed, share_limits, spread_band, summary, verdict, weakest_run)


@pytest.fixture(scope="module")
def calibrated(crossed, batched):
    return combine([calibrate(crossed, "S1", budgets=(200,), ks=(1, 3), n_samples=1000, seed=4),
                    calibrate(batched, "S3", budgets=(200,), ks=(1, 3), n_samples=1000, seed=4)])


def synthetic(null_scale: float, n: int = 1000, cells: int = 40, seed: int = 0) -> Calibration:
    """Normal alternative deltas against a null of ``null_scale`` times their spread, over ``cells`` cells of two
    continuous metrics: a calibrated null at 1, a too narrow one below."""
    rng = np.random.default_rng(seed)
    parts = []
    for cell in range(cells):
        for metric in ("kl_div", "jsd"):
            alt, null = rng.normal(size=n), null_scale * rng.normal(size=n)
            parts.append(measure(alt, null, dataset="d", sampler="S2", NK=100 * (cell + 1), K=1, N=1,
                                 metric=metric))
    return combine(parts)


def test_a_permutation_null_passes(calibrated):
    check = verdict(calibrated)
    assert check["calibrated"], check
    assert check["cells"] <= 2 * 2 * 8 - calibrated.cells["sd_ratio"].isna().sum()
    assert set(summary(calibrated)["sampler"]) == {"S1", "S3"}
    assert len(calibrated.p_values) == 2 * 2 * 8 * 1000
    low, high = check["limits_range"]  # the widest of the runs' bands, each around 5 %
    assert low == min(r["share_limits"][0] for r in check["runs"]) and low < 0.05 < high
    assert all(low <= r["share_continuous"] <= high for r in check["runs"])


@pytest.mark.parametrize("scale, passes", [(1.0, True), (0.85, False), (1.15, False)])
def test_a_miscalibrated_null_fails_and_a_calibrated_one_passes(scale, passes):
    """End to end: deltas drawn from a null 15 % too narrow (or too wide) fail both the spread and the share checks;
    a null of the alternative's law passes them."""
    check = verdict(synthetic(scale))
    assert check["calibrated"] == passes, check
    if not passes:
        assert check["outside"] > check["allowed"]
    if scale < 1:  # too narrow: too many small p-values
        assert check["failed_runs"] == ["d, S2"]


def test_a_null_of_seventy_percent_spread_fails(calibrated):
    """The old with-replacement null at K = 1 had about 0.7 of the alternative's spread; the verdict must see it."""
    cells = calibrated.cells.assign(sd_ratio=calibrated.cells["sd_ratio"] * 0.7)
    assert not verdict(Calibration(cells, calibrated.p_values))["calibrated"]


def test_too_many_small_p_values_fail(calibrated):
    rng = np.random.default_rng(0)
    liberal = calibrated.p_values.assign(p=rng.uniform(0, 1, len(calibrated.p_values)) ** 1.5)
    assert not verdict(Calibration(calibrated.cells, liberal))["calibrated"]


def test_share_limits_are_the_binomial_band_of_five_percent():
    low, high = share_limits(1000, 1000)
    se = np.sqrt(0.05 * 0.95 * 2 / 1000)
    assert (low, high) == pytest.approx((0.05 - 3 * se, 0.05 + 3 * se))
    # a calibrated test's share stays inside the band in nearly every repetition (3 standard errors: 99.7 %)
    rng = np.random.default_rng(1)
    shares = rng.binomial(1000, 0.05, size=2000) / 1000
    assert np.mean((shares >= share_limits(1000, 10**9)[0]) & (shares <= share_limits(1000, 10**9)[1])) > 0.99
    assert share_limits(40, 40)[0] == 0  # a share has no negative limit
    # a 7 % rate leaves the band of 20,000 replicates
    assert 0.07 > share_limits(20000, 20000)[1]


def test_the_spread_band_holds_a_calibrated_ratio_at_its_level():
    rng = np.random.default_rng(2)
    n, inside = 1000, 0
    for _ in range(400):
        alt, null = rng.normal(size=(2, n))
        low, high = spread_band(log_ratio_se(null, alt))
        inside += low <= null.std(ddof=1) / alt.std(ddof=1) <= high
    assert abs(inside / 400 - SPREAD_LEVEL) < 3 * np.sqrt(SPREAD_LEVEL * (1 - SPREAD_LEVEL) / 400) + 0.005
    assert spread_band(np.sqrt(1 / n)) == pytest.approx((np.exp(-2.5758 / np.sqrt(n)), np.exp(2.5758 / np.sqrt(n))),
                                                        rel=1e-4)


def test_outside_allowed_is_the_binomial_count_with_clusters():
    assert outside_allowed(100) == int(1 + 3 * np.sqrt(100 * 0.01 * 0.99))
    assert outside_allowed(100, per_cell=4) == int(1 + 3 * np.sqrt(4 * 100 * 0.01 * 0.99))


def test_heavy_tails_widen_the_spread_tolerance(calibrated):
    """A spread ratio of 1.10 from 1000 + 1000 replicates is 3 standard errors out for normal deltas, but inside
    its 99 % band for deltas as heavy-tailed as S1's at K = 1: the tolerance follows the samples."""
    rng = np.random.default_rng(3)
    normal = rng.normal(size=(2, 1000))
    heavy = rng.standard_t(4.5, size=(2, 1000))
    assert log_ratio_se(*normal) == pytest.approx(np.sqrt(1 / 1000), rel=0.1)
    assert log_ratio_se(*heavy) > 1.5 * np.sqrt(1 / 1000)
    for samples, passes in ((normal, False), (heavy, True)):
        cells = calibrated.cells.assign(sd_ratio=1.10, log_ratio_se=log_ratio_se(*samples))
        assert verdict(Calibration(cells, calibrated.p_values))["calibrated"] == passes


def test_summary_states_each_runs_k_range_and_share_band(calibrated):
    table = summary(calibrated)
    assert list(table["K"]) == ["1–3", "1–3"]
    assert all("(" in v and "%" in v for v in table["p_j < 0.05, KL-Div and JSD"])
    assert isinstance(table, pd.DataFrame)


def test_the_weakest_run_is_the_one_with_the_fewest_ratios_in_their_bands():
    good, narrow = synthetic(1.0), synthetic(0.7, seed=1)
    narrow.cells["dataset"], narrow.p_values["dataset"] = "narrow", "narrow"
    both = combine([good, narrow])
    name, share = weakest_run(both)
    assert name == "narrow, S2" and share < 0.5  # a null 30 % too narrow leaves its bands in most cells
    shown = summary(both).set_index("dataset")["ratio in its 99 % band"]
    assert shown["narrow"] == f"{100 * share:.0f} %" and shown["d"] != shown["narrow"]
    assert weakest_run(Calibration(good.cells.iloc[:0], good.p_values.iloc[:0])) is None
