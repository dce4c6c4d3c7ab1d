"""The calibration check: its verdict passes a calibrated null and fails the old, too narrow one."""

import numpy as np
import pandas as pd
import pytest

from analysis.calibration import Calibration, calibrate, combine, log_ratio_se, share_limits, summary, verdict


@pytest.fixture(scope="module")
def calibrated(crossed, batched):
    return combine([calibrate(crossed, "S1", budgets=(200,), ks=(1, 3), n_samples=1000, seed=4),
                    calibrate(batched, "S3", budgets=(200,), ks=(1, 3), n_samples=1000, seed=4)])


def test_a_permutation_null_passes(calibrated):
    check = verdict(calibrated)
    assert check["calibrated"], check
    assert check["cells"] == 2 * 2 * 8 - calibrated.cells["sd_ratio"].isna().sum()
    assert set(summary(calibrated)["sampler"]) == {"S1", "S3"}
    assert len(calibrated.p_values) == 2 * 2 * 8 * 1000


def test_a_null_of_seventy_percent_spread_fails(calibrated):
    """The old with-replacement null at K = 1 had about 0.7 of the alternative's spread; the verdict must see it."""
    cells = calibrated.cells.assign(sd_ratio=calibrated.cells["sd_ratio"] * 0.7)
    assert not verdict(Calibration(cells, calibrated.p_values))["calibrated"]


def test_too_many_small_p_values_fail(calibrated):
    rng = np.random.default_rng(0)
    liberal = calibrated.p_values.assign(p=rng.uniform(0, 1, len(calibrated.p_values)) ** 1.5)
    assert not verdict(Calibration(calibrated.cells, liberal))["calibrated"]


def test_share_limits_follow_both_samples():
    low, high = share_limits(1000, 1000)
    se = np.sqrt(0.05 * 0.95 * 2 / 1000)
    assert (low, high) == pytest.approx((0.05 - 4.5 * se, 0.05 + 4.5 * se))


def test_heavy_tails_widen_the_spread_tolerance(calibrated):
    """A spread ratio of 1.16 from 1000 + 1000 replicates is 4.7 standard errors out for normal deltas, but within
    4.5 for deltas as heavy-tailed as S1's at K = 1 (kurtosis about 11): the tolerance follows the samples."""
    rng = np.random.default_rng(3)
    normal = rng.normal(size=(2, 1000))
    heavy = rng.standard_t(4.5, size=(2, 1000))
    assert log_ratio_se(*normal) == pytest.approx(np.sqrt(1 / 1000), rel=0.1)
    assert log_ratio_se(*heavy) > 1.5 * np.sqrt(1 / 1000)
    for samples, passes in ((normal, False), (heavy, True)):
        cells = calibrated.cells.assign(sd_ratio=1.16, log_ratio_se=log_ratio_se(*samples))
        assert verdict(Calibration(cells, calibrated.p_values))["calibrated"] == passes
