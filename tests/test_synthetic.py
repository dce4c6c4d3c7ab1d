"""The stand-ins: their designs, label shares, per-item dispersion and persistent rater bias."""

import numpy as np
import pytest

from analysis.data import datasets, synthetic
from analysis.data.annotations import BATCHED, FULLY_CROSSED, SPARSE
from analysis.errors import ParameterError
from analysis.data.synthetic import (STAND_INS, V1, design_statistics, dispersion_against_published, make_stand_in,
                                measured_a0, nominal_alpha,
                                stand_ins_against_published)

CURRENT = ["dices-synthetic", "d3code-synthetic", "toxicity-synthetic"]


@pytest.mark.parametrize("name, kind", [(n + v, kind) for n, kind in zip(CURRENT, [FULLY_CROSSED, SPARSE, BATCHED])
                                        for v in ("", V1)])
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


@pytest.mark.parametrize("name, low, high", [("dices-synthetic-v1", 0.15, 0.24), ("d3code-synthetic", 0.09, 0.14),
                                             ("d3code-synthetic-v1", 0.09, 0.14)])
def test_agreement_lies_in_the_published_range(name, low, high):
    assert low <= nominal_alpha(make_stand_in(name)) <= high


@pytest.mark.parametrize("name", CURRENT)
def test_measured_a0_is_within_20_percent_of_the_published_fit(name):
    """Every label of DICES (Unsure included) and the published binary splits of D3code and Kumar."""
    spec = STAND_INS[name]
    fits = measured_a0(make_stand_in(name), spec)
    assert len(fits) == (3 if name == "dices-synthetic" else 1)
    for split, found in fits.items():
        assert found.a0 == pytest.approx(spec.published_a0, rel=0.2), split


@pytest.mark.parametrize("name", CURRENT)
def test_alpha_is_what_the_dirichlet_law_implies(name):
    """Under p_i ~ Dirichlet(a) nominal alpha is 1 / (1 + a0); the ±20 % band on a0 bounds it."""
    a0 = STAND_INS[name].published_a0
    assert 1 / (1 + 1.2 * a0) <= nominal_alpha(make_stand_in(name)) <= 1 / (1 + 0.8 * a0)


def test_version_1_is_kept_with_the_same_design_and_its_polarised_items():
    """v1 and v2 share who rated what; v1's DICES items are about three times too polarised (DATA.md: a0 2.9)."""
    old, new = make_stand_in("dices-synthetic" + V1), make_stand_in("dices-synthetic")
    assert np.array_equal(old.item, new.item) and np.array_equal(old.rater, new.rater)
    assert old.sha256 != new.sha256 and "version 1" in old.provenance and "version 2" in new.provenance
    no = measured_a0(old, STAND_INS["dices-synthetic"])["No against the rest"]
    assert no.a0 < 0.5 * 8.83


def test_dispersion_table_names_each_split_beside_the_published_value():
    table = dispersion_against_published()
    assert list(table["labels"]) == ["No against the rest", "Unsure against the rest", "Yes against the rest",
                                     "2–4 against 0–1", "1–4 against 0"]
    assert set(table["within ±20 %"]) == {"yes"}


def test_nominal_alpha_matches_a_worked_example():
    """Krippendorff (2011), "Computing Krippendorff's alpha-reliability", nominal example: alpha = 0.743."""
    import pandas as pd

    from analysis.data.annotations import from_table

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
    assert set(table["stand-in"]) == set(CURRENT)
    alpha = table[table["statistic"].str.startswith("Krippendorff")].set_index("stand-in")
    assert alpha.loc["dices-synthetic", "published"].startswith("about 0.2")


@pytest.mark.parametrize("name", [n + v for n in CURRENT for v in ("", V1)])
def test_rater_bias_persists_across_items(name):
    """Rater mean labels vary more than when each item's labels are shuffled among its raters (a permutation test,
    p < 1/101)."""
    ds = make_stand_in(name)
    by_item = np.argsort(ds.item, kind="stable")
    raters = np.bincount(ds.rater)

    def spread(labels):
        return (np.bincount(ds.rater, weights=labels) / raters).var()

    rng = np.random.default_rng(0)
    shuffled = []
    for _ in range(100):  # each item's labels in a random order among its raters: sorted by item + a uniform
        labels = np.empty(ds.n_ratings)
        labels[by_item] = ds.label[np.argsort(ds.item + rng.random(ds.n_ratings))]
        shuffled.append(spread(labels))
    assert spread(ds.label.astype(float)) > max(shuffled)


def test_unknown_stand_in():
    with pytest.raises(ParameterError, match="unknown stand-in"):
        make_stand_in("dices")


def test_sizes_say_where_a_stand_in_is_smaller_than_its_real_set():
    sizes = datasets.sizes_against_published().set_index("stand-in")
    assert sizes.loc["dices-synthetic", "items"] == sizes.loc["dices-synthetic", "items of the real set"] == 350
    assert sizes.loc["toxicity-synthetic", "items"] < sizes.loc["toxicity-synthetic", "items of the real set"]
    sentence = datasets.sizes_sentence(sizes.reset_index())
    assert "dices-synthetic has 350 items and 123 raters, as DICES-350 has" in sentence
    assert "toxicity-synthetic has 20,000 items and 3,200 raters, where Toxicity has 107,620 items" in sentence


# ------------------------------------------------------------------------------------------ variants

def test_binary_variant_collapses_version_2_labels_at_the_published_split():
    five, two = datasets.load("toxicity-synthetic"), datasets.load("toxicity-synthetic-binary")
    assert two.label_names == ("0", "1–4") and two.n_ratings == five.n_ratings
    positive = np.isin(np.asarray(five.label_names, dtype=object)[five.label], (1, 2, 3, 4))
    assert (two.label == positive.astype(int)).all()  # the same ratings, collapsed: the same rater biases


@pytest.mark.parametrize("choice, names, positive", [("unsure-as-no", ("No or Unsure", "Yes"), ("Yes",)),
                                                     ("unsure-as-yes", ("No", "Unsure or Yes"), ("Unsure", "Yes"))])
def test_dices_unsure_merged_keeps_every_rating_and_moves_unsure_alone(choice, names, positive):
    """DICES's label-set switch: the same ratings as the three-label stand-in, Unsure merged into one side; the
    Choices name the variant, and D3code and Toxicity keep theirs."""
    from analysis.experiment.choices import Choices

    choices = Choices(dices_labels=choice)
    assert choices.dataset("d3code-synthetic") == "d3code-synthetic"
    three, two = datasets.load("dices-synthetic"), datasets.load(choices.dataset("dices-synthetic"))
    assert two.label_names == names and two.n_ratings == three.n_ratings
    merged = np.isin(np.asarray(three.label_names, dtype=object)[three.label], positive)
    assert (two.label == merged.astype(int)).all()
    assert two.name.endswith(choice.replace("-as-", "-"))


@pytest.mark.parametrize("a0, shares", [(2.7, (0.51, 0.2, 0.13, 0.1, 0.06)), (8.83, (0.59, 0.1, 0.31)),
                                        (0.5, (0.5, 0.5))])
def test_concentration_for_inverts_the_dirichlets_sum_p_squared(a0, shares):
    m = synthetic.sum_p_squared(np.asarray(shares) * a0)
    assert m == pytest.approx((a0 * np.square(shares).sum() + 1) / (a0 + 1), rel=1e-12)
    assert synthetic.concentration_for(m, shares) == pytest.approx(a0, rel=1e-9)
    with pytest.raises(ParameterError, match="no Dirichlet"):
        synthetic.concentration_for(np.square(shares).sum() - 0.01, shares)


def test_latent_moment_undoes_the_finite_ratings_per_item():
    m, ratings = 0.6, 5
    assert synthetic.latent_moment(m + (1 - m) / ratings, ratings) == pytest.approx(m, rel=1e-12)


def test_v3_reaches_the_agreement_the_papers_k_1_cells_imply():
    """Toxicity's v3: the paper's cells are out of reach at five labels, so it is fitted at the binary split; its
    items' empirical E[Σ p̂²] matches the cells' 0.706 within four standard errors of the 20,000 items' mean."""
    from analysis.paper import identities

    spec = synthetic.fitted_spec("toxicity-synthetic-v3")
    assert spec.binary and spec.version == 3 and sum(spec.dirichlet) == pytest.approx(2.786, abs=1e-3)
    ds = datasets.load("toxicity-synthetic-v3")
    counts = ds.item_label_counts / ds.item_label_counts.sum(axis=1, keepdims=True)
    per_item = np.square(counts).sum(axis=1)
    target = identities.v3_moments()[("toxicity-synthetic", 2)]
    assert abs(per_item.mean() - target) < 4 * per_item.std() / np.sqrt(len(per_item))
    assert synthetic.generates_v2("dices-synthetic-v3") and synthetic.generates_v2("d3code-synthetic-v3")
    assert not synthetic.generates_v2("toxicity-synthetic-v3")


def test_the_v3_moments_are_what_the_paper_s_k1_cells_imply():
    """The stand-ins v3 are fitted on data read from the paper's tables by the identities, recomputed here."""
    from analysis.data import synthetic
    from analysis.paper import identities

    assert identities.v3_moments() == synthetic.V3_MOMENTS
