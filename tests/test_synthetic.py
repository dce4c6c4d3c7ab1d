"""The stand-ins: their designs, label shares and persistent rater bias."""

import numpy as np
import pytest

from analysis.data import BATCHED, FULLY_CROSSED, SPARSE
from analysis.errors import ParameterError
from analysis.synthetic import STAND_INS, make_stand_in


@pytest.mark.parametrize("name, kind", [("dices-synthetic", FULLY_CROSSED), ("d3code-synthetic", SPARSE),
                                        ("toxicity-synthetic", BATCHED)])
def test_design_and_label_shares(name, kind):
    ds = make_stand_in(name)
    spec = STAND_INS[name]
    assert ds.topology.kind == kind and ds.n_items == spec.n_items
    shares = np.bincount(ds.label, minlength=ds.n_labels) / ds.n_ratings
    # item and rater effects make labels dependent; 0.03 is about 4 standard errors of the share of a label
    # over a few hundred independent items and raters
    np.testing.assert_allclose(shares, spec.label_shares, atol=0.05)
    assert make_stand_in(name).sha256 == ds.sha256


def test_toxicity_batches_have_five_raters_and_twenty_items():
    ds = make_stand_in("toxicity-synthetic")
    batch = ds.topology.item_batch
    assert np.all(np.bincount(batch) == 20)
    assert np.all(ds.raters_per_item == 5)


def test_rater_bias_persists_across_items():
    """Rater mean labels vary more than they would if raters were exchangeable (a permutation test)."""
    ds = make_stand_in("dices-synthetic")
    matrix = np.zeros((ds.n_items, ds.n_raters))
    matrix[ds.item, ds.rater] = ds.label
    observed = matrix.mean(0).var()
    rng = np.random.default_rng(0)
    shuffled = [rng.permuted(matrix, axis=1).mean(0).var() for _ in range(200)]
    assert observed > max(shuffled)


def test_unknown_stand_in():
    with pytest.raises(ParameterError, match="unknown stand-in"):
        make_stand_in("dices")
