"""The calibration check: its verdict passes a calibrated null and fails the old, too narrow one."""

import numpy as np
import pandas as pd
import pytest

from analysis.calibration import Calibration, calibrate, combine, share_limits, summary, verdict


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
