"""The exact law of one S2 slot (METHOD sections 3, 4, 9), checked against a direct simulation of the method.

The direct simulation below follows METHOD's words with numpy and nothing from the engine: a uniform item, K rater
columns per side drawn from the item's raters, B's responses replaced with probability epsilon by a label from
the slot's ``eta ~ Dirichlet(1/C, ..., 1/C)`` (or a uniform other label), and under the null a uniform split of
the 2K pooled columns. The triples' frequencies are compared with the law by a chi-square test; cells expected
below 5 are pooled. With fixed seeds each test is deterministic; it fails for a correct law with probability 1e-4.
"""

import numpy as np
import pytest
from scipy.stats import chisquare

from analysis.engine.rule import Rule, make_rule
from analysis.engine.draws import compositions, multinomial_pmf
from analysis.engine.kernels.law import LawTables, distinct_shares, slot_law

LABELS = [[0, 0, 1], [1, 2], [2, 2, 2, 0], [0, 1, 2, 1, 1], [2], [0, 1]]
C = 3
SHARES = np.array([np.bincount(x, minlength=C) / len(x) for x in LABELS])
DISTINCT = distinct_shares(SHARES)  # the items' distinct shares and their weights, as the simulator finds them
SLOTS = 60_000


def symmetric(name):
    """The rule ``name`` with its symmetric prior over the C labels."""
    return make_rule(name, np.ones(C))


def simulated_triples(k, epsilon, rule, null, rng, null_mixing="half"):
    """Rows of the (gold, A, B) count vectors of SLOTS directly simulated slots, as rows of compositions(k, C)."""
    n = SLOTS
    item = rng.integers(0, len(LABELS), n)
    sizes = np.array([len(x) for x in LABELS])
    padded = np.full((len(LABELS), max(sizes)), -1)
    for i, x in enumerate(LABELS):
        padded[i, :len(x)] = x

    def columns():  # k raters per slot, with replacement, from the item's raters
        return padded[item[:, None], (rng.random((n, k)) * sizes[item][:, None]).astype(int)]

    gold, a, b = columns(), columns(), columns()
    replaced = rng.random((n, k)) < epsilon
    if rule == "dirichlet":
        eta = rng.dirichlet(np.full(C, 1.0 / C), size=n)
        noise = (rng.random((n, k, 1)) > np.cumsum(eta, axis=1)[:, None, :]).sum(2).clip(max=C - 1)
    else:  # one of the other C - 1 labels, uniformly
        other = (rng.random((n, k)) * (C - 1)).astype(int)
        noise = other + (other >= b)
    b = np.where(replaced, noise, b)
    if null and null_mixing == "pairs":  # A's and B's c-th columns swapped by a coin
        swap = rng.random((n, k)) < 0.5
        a, b = np.where(swap, b, a), np.where(swap, a, b)
    elif null:  # a uniform half of the 2K pooled columns is A*
        pool = np.concatenate([a, b], axis=1)
        order = np.argsort(rng.random((n, 2 * k)), axis=1)
        pool = np.take_along_axis(pool, order, axis=1)
        a, b = pool[:, :k], pool[:, k:]
    row_of = {tuple(v): e for e, v in enumerate(compositions(k, C).tolist())}

    def rows(x):
        counts = np.stack([(x == c).sum(1) for c in range(C)], axis=1)
        return np.array([row_of[tuple(v)] for v in counts.tolist()])

    return rows(gold), rows(a), rows(b)


def chi_square_p(law, triples):
    v = law.shape[0]
    observed = np.bincount((triples[0] * v + triples[1]) * v + triples[2], minlength=law.size).astype(float)
    expected = law.ravel() * SLOTS
    assert observed[expected == 0].sum() == 0  # nothing the law calls impossible
    keep = expected >= 5
    o, e = observed[keep], expected[keep]
    if (~keep).any():
        o, e = np.append(o, observed[~keep].sum()), np.append(e, expected[~keep].sum())
    return chisquare(o, e).pvalue


CASES = [(1, 0.5, "dirichlet", True, "half"), (2, 0.5, "dirichlet", True, "half"), (3, 0.4, "dirichlet", True, "half"),
         (3, 0.4, "dirichlet", False, "half"), (2, 0.5, "uniform", True, "half"), (2, 0.3, "uniform", False, "half"),
         (2, 0.5, "dirichlet", True, "pairs"), (3, 0.4, "uniform", True, "pairs")]


@pytest.mark.parametrize("k, epsilon, rule, null, null_mixing", CASES)
def test_slot_law_matches_a_direct_simulation(k, epsilon, rule, null, null_mixing):
    triples = simulated_triples(k, epsilon, rule, null, np.random.default_rng(k * 10 + null), null_mixing)
    assert chi_square_p(slot_law(*DISTINCT, k, epsilon, symmetric(rule), null, null_mixing), triples) > 1e-4


def test_the_test_tells_the_pairs_null_from_the_half():
    """The chi-square test has the power to see the null's mixing: pairs drawn, the half's law rejected."""
    triples = simulated_triples(4, 0.8, "uniform", True, np.random.default_rng(3), "pairs")
    assert chi_square_p(slot_law(*DISTINCT, 4, 0.8, symmetric("uniform"), True, "half"), triples) < 1e-4


def test_the_test_sees_noise_that_is_not_shared():
    """Power: a law in which A*'s and B*'s noise come from two independent Dirichlet draws, not the slot's one,
    is rejected on the same simulated slots that the right law passes."""
    triples = simulated_triples(2, 0.5, "dirichlet", True, np.random.default_rng(21))
    assert chi_square_p(slot_law(*DISTINCT, 2, 0.5, symmetric("dirichlet"), True, "half"), triples) > 1e-4

    class Independent(Rule):
        """Row and column 0 are the empty noise vector, so column 0 is one noise vector's own
        Dirichlet-multinomial law: their outer product draws A*'s and B*'s noise independently."""

        def pairs(self, comp, other=None):
            shared = Rule.pairs(self, comp)
            return np.outer(shared[:, 0], shared[0, :])

    right = symmetric("dirichlet")
    wrong = Independent(right.name, right.shared, right.prior)
    assert chi_square_p(slot_law(*DISTINCT, 2, 0.5, wrong, True, "half"), triples) < 1e-4


@pytest.mark.parametrize("rule", ["dirichlet", "uniform"])
@pytest.mark.parametrize("k", [1, 4])
def test_slot_law_margins(rule, k):
    """A law sums to 1; its gold margin is the mean of the items' multinomials; at epsilon = 0 the null equals the
    alternative (the split then has the law of (A, B)), and A and B are exchangeable."""
    comp = compositions(k, C)
    gold = multinomial_pmf(SHARES, comp).mean(0)
    for null in (False, True):
        law = slot_law(*DISTINCT, k, 0.3, symmetric(rule), null, "half")
        assert law.sum() == pytest.approx(1.0, abs=1e-12)
        np.testing.assert_allclose(law.sum((1, 2)), gold, atol=1e-12)
    zero = slot_law(*DISTINCT, k, 0.0, symmetric(rule), False, "half")
    np.testing.assert_allclose(zero, slot_law(*DISTINCT, k, 0.0, symmetric(rule), True, "pairs"), atol=1e-14)
    np.testing.assert_allclose(zero, zero.transpose(0, 2, 1), atol=1e-14)


def test_law_tables_keep_every_positive_entry_in_decreasing_order():
    law = slot_law(*DISTINCT, 2, 0.3, symmetric("dirichlet"), True, "half")
    tables = LawTables.build(law)
    flat = law.ravel()
    assert tables.order.size == (flat > 0).sum()
    assert np.all(np.diff(tables.sorted_law) <= 0)
    np.testing.assert_allclose(tables.tail[0], 1.0, atol=1e-12)
    np.testing.assert_allclose(tables.tail[:-1] - tables.tail[1:], tables.sorted_law[:-1], atol=1e-15)
    # the alias table's law: each entry keeps prob / L of its own column and takes the rest of the columns aliasing to it
    size = flat.size
    implied = tables.prob / size
    np.add.at(implied, tables.alias, (1.0 - tables.prob) / size)
    np.testing.assert_allclose(implied, flat, atol=1e-12)
    rows = np.stack([tables.packed & (2**20 - 1), (tables.packed >> 20) & (2**20 - 1), tables.packed >> 40], axis=1)
    np.testing.assert_array_equal(rows, np.stack(np.unravel_index(np.arange(size), law.shape), axis=1))
