"""The sorted p-value equals its O(n^2) definition, ties included."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.experiment.pvalues import p_value, p_values, replicate_p_values


def brute_force(null, alt):
    return float((np.asarray(null)[:, None] >= np.asarray(alt)[None, :]).mean())


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-5, 5), min_size=1, max_size=60), st.lists(st.integers(-5, 5), min_size=1, max_size=60))
def test_p_value_equals_pairwise_definition_with_ties(null, alt):
    null = np.array(null) / 4.0
    alt = np.array(alt) / 4.0
    assert p_value(null, alt) == pytest.approx(brute_force(null, alt), abs=1e-15)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=80), st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=80))
def test_p_value_equals_pairwise_definition_on_reals(null, alt):
    assert p_value(null, alt) == pytest.approx(brute_force(null, alt), abs=1e-15)


def test_ties_count_toward_the_null_and_columns_are_independent():
    assert p_value([0.0, 0.0], [0.0]) == 1.0
    null = np.array([[0.0, 1.0], [0.0, 2.0]])
    alt = np.array([[1.0, 1.5], [1.0, 0.5]])
    assert p_values(null, alt).tolist() == [0.0, 0.75]


def test_empty_inputs_are_rejected():
    with pytest.raises(ValueError):
        p_value([], [1.0])


def test_a_p_of_exactly_one_twentieth_is_0_05_whatever_the_sum_order():
    """p counts pairs in whole numbers: alternative replicates whose own p_j are 1/10 and 0 in equal numbers give
    exactly 0.05, where the float mean of the p_j's gives 0.05000000000000001 for six of them."""
    null = np.arange(10, dtype=float)  # alt 8.5 is beaten by one null of ten, alt 10 by none
    alt = np.array([8.5, 10.0] * 3)
    assert float(replicate_p_values(null, alt).mean()) != 0.05  # the case the count guards against
    rng = np.random.default_rng(3)
    for size in (3, 500, 1000):
        alt = np.array([8.5, 10.0] * size)
        for _ in range(5):  # any order of the same replicates: exactly 0.05
            assert p_value(null, rng.permutation(alt)) == 0.05
