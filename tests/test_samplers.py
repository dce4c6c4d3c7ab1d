"""The samplers, checked structurally and statistically with fixed seeds and tolerances from the sample size."""

from math import comb

import numba
import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom, chisquare, multinomial

from analysis.data.annotations import from_table
from analysis.errors import ParameterError, TopologyError
from analysis.engine.samplers import group_layout, item_shares, make_layout
from analysis.engine.draws import BINOMIAL_FROM, add_counts, composition_entry, composition_tables, draw_multiplicities
from analysis.engine.path import MULTIPLICITY_CHAIN_FROM
from single_draw import sample
from conftest import batched_table


def label_matrix(ds):
    matrix = np.full((ds.n_items, ds.n_raters), -1)
    matrix[ds.item, ds.rater] = ds.label
    return matrix


def test_s1_every_item_takes_labels_from_the_same_rater_columns(crossed):
    s = sample(crossed, "S1", n=50, k=7, seed=1)
    assert s.raters.shape == (1, 7) and s.labels.shape == (50, 7)
    matrix = label_matrix(crossed)
    np.testing.assert_array_equal(s.labels, matrix[s.items[:, None], s.raters[0][None, :]])


def test_s2_draws_raters_per_item_from_that_items_raters(sparse):
    s = sample(sparse, "S2", n=300, k=5, seed=2)
    assert s.raters.shape == (300, 5)
    matrix = label_matrix(sparse)
    looked_up = matrix[s.items[:, None], s.raters]
    assert (looked_up >= 0).all(), "a drawn rater did not rate its item"
    np.testing.assert_array_equal(s.labels, looked_up)
    assert len({tuple(r) for r in s.raters}) > 250, "raters must be drawn independently per item"


def test_s3_items_and_raters_come_from_the_drawn_batch(batched):
    n = 20
    s = sample(batched, "S3", n=n, k=3, seed=3)
    group_size = 6
    n_batches = int(np.ceil(n / group_size))
    assert len(s.items) == n_batches * max(1, n // n_batches) == int(np.prod(group_layout(n, False, make_layout(batched, "S3").group_size))) <= n
    batch = batched.item_batch
    assert (batch[s.items] == s.groups).all()
    per_group = len(s.items) // n_batches
    matrix = label_matrix(batched)
    for g in range(n_batches):
        slots = slice(g * per_group, (g + 1) * per_group)
        batch_raters = set(batched.rater[batch[batched.item] == s.groups[slots][0]])
        assert set(s.raters[g]) <= batch_raters
        np.testing.assert_array_equal(s.labels[slots], matrix[s.items[slots][:, None], s.raters[g][None, :]])


def test_s3_ragged_batch_falls_back_to_the_items_own_labels():
    ds = from_table(batched_table(ragged=True), batch="batch")
    s = sample(ds, "S3", n=600, k=4, seed=4)
    matrix = label_matrix(ds)
    per_group = len(s.items) // s.raters.shape[0]
    raters = np.repeat(s.raters, per_group, axis=0)
    looked_up = matrix[s.items[:, None], raters]
    missing = looked_up < 0
    assert missing.sum() > 100
    np.testing.assert_array_equal(s.labels[~missing], looked_up[~missing])
    own = [set(ds.label[ds.item == i]) for i in range(ds.n_items)]
    assert all(s.labels[j, c] in own[s.items[j]] for j, c in zip(*np.nonzero(missing)))


def binomial_fit(counts, n, p):
    """The chi-square p of ``counts`` (one per draw) against ``Binomial(n, p)``, its thin tails pooled so that the
    approximation holds."""
    expected = binom.pmf(np.arange(n + 1), n, p) * len(counts)
    observed = np.bincount(counts, minlength=n + 1)
    keep = expected >= 5
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    obs, exp = obs[exp > 0], exp[exp > 0]
    return chisquare(obs, exp * obs.sum() / exp.sum()).pvalue


@pytest.mark.parametrize("k", [5, BINOMIAL_FROM + 12])
def test_s2_counts_follow_the_items_label_distribution(k):
    shares = np.array([[0.5, 0.3, 0.2]])
    cum = np.cumsum(shares, axis=1)
    rng = np.random.default_rng(11)
    draws = 4000
    out = np.zeros((draws, 3), dtype=np.int64)
    for j in range(draws):
        add_counts(rng, k, shares, 0, cum, out, j)
    assert (out.sum(1) == k).all()
    for c, p in enumerate(shares[0]):
        assert binomial_fit(out[:, c], k, p) > 1e-3


@numba.njit
def _multiplicity_draws(rng, n_slots, n_items, draws):
    out = np.zeros((draws, n_items), dtype=np.int64)
    for j in range(draws):
        draw_multiplicities(rng, n_slots, n_items, out[j])
    return out


@pytest.mark.parametrize("per_item", [2, MULTIPLICITY_CHAIN_FROM - 1, MULTIPLICITY_CHAIN_FROM])
def test_item_multiplicities_are_multinomial_on_either_side_of_the_chain(per_item):
    """Slot by slot below the plan's threshold and by a chain of binomials from it, the multiplicities of 5 items
    sum to the slots drawn, and the first item, the last (the chain's remainder) and the two together are binomial
    (chi-square, p > 1e-3, 4,000 draws)."""
    n_items, n_slots = 5, 5 * per_item
    out = _multiplicity_draws(np.random.default_rng(per_item), n_slots, n_items, 4000)
    assert (out.sum(1) == n_slots).all() and (out >= 0).all()
    assert binomial_fit(out[:, 0], n_slots, 1 / n_items) > 1e-3
    assert binomial_fit(out[:, -1], n_slots, 1 / n_items) > 1e-3
    assert binomial_fit(out[:, 0] + out[:, -1], n_slots, 2 / n_items) > 1e-3


@numba.njit
def _composition_draws(rng, k, table_row, prob, alias, start, draws):
    entries = np.empty(draws, dtype=np.int64)
    for j in range(draws):
        entries[j] = composition_entry(rng, k, table_row, prob, alias, start)
    return entries


@pytest.mark.parametrize("k", [1, 4, 9])
def test_alias_tables_draw_every_composition_at_its_multinomial_probability(k):
    """Each table holds the multinomial law exactly, and one uniform per draw reproduces it (chi-square test,
    p > 1e-3, on 20,000 draws with thin cells pooled); items with equal label shares share a table, and a label
    an item never got is never drawn."""
    shares = np.array([[0.5, 0.3, 0.2], [0.0, 0.75, 0.25], [0.5, 0.3, 0.2]])
    tables = composition_tables(shares, k)
    assert tables.row[0] == tables.row[2] != tables.row[1]
    assert tables.prob.shape[0] == 2
    for j in range(k + 1):
        block = tables.comp[tables.start[j]:tables.start[j + 1]]
        assert (block.sum(1) == j).all() and len(np.unique(block, axis=0)) == len(block) == comb(j + 2, 2)
    block = tables.comp[tables.start[k]:tables.start[k + 1]]
    rng = np.random.default_rng(k)
    for item in (0, 1):
        expected = multinomial.pmf(block, k, shares[item])
        assert expected.sum() == pytest.approx(1.0)
        drawn = _composition_draws(rng, k, tables.row[item], tables.prob, tables.alias, tables.start, 20000)
        observed = np.bincount(drawn - tables.start[k], minlength=len(block))
        assert observed[expected == 0].sum() == 0
        keep = expected * 20000 >= 5
        obs = np.append(observed[keep], observed[~keep].sum())
        exp = np.append(expected[keep], expected[~keep].sum()) * 20000
        obs, exp = obs[exp > 0], exp[exp > 0]
        assert chisquare(obs, exp * obs.sum() / exp.sum()).pvalue > 1e-3


def test_s2_responses_match_item_shares_in_aggregate(crossed):
    s = sample(crossed, "S2", n=4000, k=10, seed=5)
    shares, _ = item_shares(crossed)
    observed = np.zeros(crossed.n_labels)
    expected = np.zeros(crossed.n_labels)
    for c in range(crossed.n_labels):
        observed[c] = (s.labels == c).sum()
        expected[c] = shares[s.items, c].sum() * 10
    assert chisquare(observed, expected).pvalue > 1e-3


def test_samplers_refuse_designs_they_cannot_use(sparse, crossed):
    with pytest.raises(TopologyError, match="S1 needs fully crossed.*is sparse"):
        make_layout(sparse, "S1")
    with pytest.raises(TopologyError, match="S3 needs batched.*is fully crossed"):
        make_layout(crossed, "S3")
    with pytest.raises(ParameterError, match="unknown sampler"):
        make_layout(crossed, "S5")
    for n, k in ((0, 3), (3, 0), (2.5, 1)):
        with pytest.raises(ParameterError, match="must be an integer >= 1"):
            sample(crossed, "S2", n=n, k=k, seed=0)


def test_the_default_sampler_keeps_raters_across_items_on_every_design(crossed, batched, sparse):
    """S1 fully crossed, S3 batched, S4 on any other design where a rater rated more than one item; S2 only where
    every rater rated a single item (there is nothing to keep across items)."""
    from analysis.engine.samplers import allowed_samplers, default_sampler

    assert [default_sampler(ds) for ds in (crossed, batched, sparse)] == ["S1", "S3", "S4"]
    assert allowed_samplers(sparse) == ["S2", "S4"] and allowed_samplers(crossed) == ["S1", "S2", "S4"]
    once = pd.DataFrame({"item": np.repeat(np.arange(20), 3), "rater": np.arange(60), "label": np.arange(60) % 2})
    assert default_sampler(from_table(once)) == "S2"


def test_overlapping_rater_sets_are_not_read_as_batches():
    """Items grouped by identical rater sets are batches only where the sets are disjoint: 8 raters in
    overlapping sets of 3 (ConvAbuse's shape) are their own design, which S3 refuses and S4 serves."""
    from analysis.data.annotations import BATCHED, OVERLAPPING
    from analysis.engine.samplers import default_sampler

    rng = np.random.default_rng(4)
    sets = [rng.choice(8, 3, replace=False) for _ in range(12)]
    rows = [(f"i{s}_{j}", f"r{r}", int(rng.integers(2))) for s, raters in enumerate(sets) for j in range(5)
            for r in raters]
    ds = from_table(pd.DataFrame(rows, columns=["item", "rater", "label"]))
    assert ds.topology.kind == OVERLAPPING and default_sampler(ds) == "S4"
    with pytest.raises(TopologyError, match="S3 needs batched"):
        make_layout(ds, "S3")
    disjoint = [(f"i{b}_{j}", f"r{b}_{r}", int(rng.integers(2))) for b in range(6) for j in range(5) for r in range(3)]
    assert from_table(pd.DataFrame(disjoint, columns=["item", "rater", "label"])).topology.kind == BATCHED
