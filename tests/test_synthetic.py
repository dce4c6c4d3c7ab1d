"""The stand-ins: their designs, label shares and persistent rater bias."""

import numpy as np
import pytest

from analysis.data import BATCHED, FULLY_CROSSED, SPARSE
from analysis.errors import ParameterError
from analysis.synthetic import STAND_INS, design_statistics, make_stand_in, nominal_alpha, stand_ins_against_published


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


def test_toxicity_batches_have_five_raters_and_twenty_items_and_raters_join_about_1_56_batches():
    ds = make_stand_in("toxicity-synthetic")
    batch = ds.topology.item_batch
    assert np.all(np.bincount(batch) == 20)
    assert np.all(ds.raters_per_item == 5)
    # Kumar et al.: 17,280 raters over 107,620 / 20 batches of 5 raters = 1.557 batches per rater
    assert design_statistics(ds)["batches per rater (mean)"] == pytest.approx(107_620 / 20 * 5 / 17_280, abs=0.01)


def test_d3code_follows_the_published_design():
    """Each rater labels 35 items; every item has at least 24 raters, about 30 on average (DATA.md)."""
    ds = make_stand_in("d3code-synthetic")
    assert np.all(np.bincount(ds.rater, minlength=ds.n_raters) == 35)
    assert ds.raters_per_item.min() >= 24 and 28 <= ds.raters_per_item.mean() <= 35
    assert (ds.n_items, ds.n_raters) == (4554, 4309)
    binary = np.isin(np.asarray(ds.label_names, dtype=object)[ds.label], [2, 3, 4]).mean()
    assert binary == pytest.approx(0.32, abs=0.03)  # published binary split: 68 / 32 %


@pytest.mark.parametrize("name, low, high", [("dices-synthetic", 0.15, 0.24), ("d3code-synthetic", 0.09, 0.14)])
def test_agreement_lies_in_the_published_range(name, low, high):
    assert low <= nominal_alpha(make_stand_in(name)) <= high


def test_nominal_alpha_matches_a_worked_example():
    """Krippendorff (2011), "Computing Krippendorff's alpha-reliability", nominal example: alpha = 0.743."""
    import pandas as pd

    from analysis.data import from_table

    data = {  # observers A-D over units 1-12; None = missing
        "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
        "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
        "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
        "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
    }
    rows = [(unit, rater, value) for rater, values in data.items() for unit, value in enumerate(values)
            if value is not None]
    ds = from_table(pd.DataFrame(rows, columns=["item", "rater", "label"]), name="example")
    # unit 12 has one value and is not pairable; it does not enter alpha
    assert nominal_alpha(ds) == pytest.approx(0.743, abs=0.001)


def test_every_stand_in_is_reported_beside_its_published_figures():
    table = stand_ins_against_published()
    assert set(table["stand-in"]) == set(STAND_INS)
    alpha = table[table["statistic"].str.startswith("Krippendorff")].set_index("stand-in")
    assert alpha.loc["dices-synthetic", "published"].startswith("about 0.2")


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
