"""The exact law of B's perturbation on count vectors (METHOD section 3), checked against a direct simulation.

The direct simulation lists the perturbable responses of A* and B* and replaces each with probability epsilon, as
METHOD says, with numpy alone: by a label from the slot's ``eta ~ Dirichlet(1/C, ..., 1/C)`` (shared by A* and
B*) or by a uniform other label. The replaced vectors' frequencies are compared with the table's row by a
chi-square test (cells expected below 5 left out); it fails for a correct law with probability 1e-4.
"""

import numpy as np
import pytest
from scipy.stats import betabinom, chisquare

from analysis.engine.perturbation import NoiseTables, PerturbationTables, perturbation_laws
from analysis.engine.path import table_sizes
from analysis.engine.draws import compositions
from analysis.engine.rule import dirichlet_noise, fire_law, make_rule

C = 3
DRAWS = 100_000


def symmetric(name):
    """The rule ``name`` with its symmetric prior over the C labels."""
    return make_rule(name, np.ones(C))


def index(vector, total):
    """The row of a count vector among compositions(total, C)."""
    return ROWS[total][tuple(vector)]


ROWS = {t: {tuple(v): i for i, v in enumerate(compositions(t, C).tolist())} for t in range(5)}


def simulated(x_a, x_b, epsilon, rule, rng):
    """Replaced count vectors of A*'s and B*'s perturbable responses, DRAWS times."""
    labels = np.concatenate([np.repeat(np.arange(C), x_a), np.repeat(np.arange(C), x_b)])
    h = sum(x_a)
    responses = np.tile(labels, (DRAWS, 1))
    replaced = rng.random(responses.shape) < epsilon
    if rule == "dirichlet":
        eta = rng.dirichlet(np.full(C, 1.0 / C), size=DRAWS)  # one per slot, for A* and B* alike
        noise = (rng.random(responses.shape + (1,)) > np.cumsum(eta, 1)[:, None, :]).sum(2).clip(max=C - 1)
    else:
        other = (rng.random(responses.shape) * (C - 1)).astype(int)
        noise = other + (other >= responses)
    responses = np.where(replaced, noise, responses)
    counts = [np.stack([(part == c).sum(1) for c in range(C)], 1) for part in (responses[:, :h], responses[:, h:])]
    return counts


@pytest.mark.parametrize("x_a, x_b, epsilon, rule", [
    ([0, 0, 0], [1, 1, 1], 0.3, "dirichlet"),  # the alternative: h = 0
    ([0, 1, 0], [2, 0, 0], 0.4, "dirichlet"),
    ([1, 1, 0], [0, 1, 1], 0.5, "dirichlet"),
    ([2, 0, 0], [0, 1, 1], 0.5, "uniform"),
])
def test_perturbation_law_matches_a_direct_simulation(x_a, x_b, epsilon, rule):
    h, k = sum(x_a), sum(x_a) + sum(x_b)
    law = perturbation_laws(k, epsilon, symmetric(rule), null=True)[h]
    size_b = len(compositions(k - h, C))
    row = law[index(x_a, h) * size_b + index(x_b, k - h)]
    assert row.sum() == pytest.approx(1.0, abs=1e-12)
    a, b = simulated(x_a, x_b, epsilon, rule, np.random.default_rng(k + h))
    outcome = np.array([index(u, h) * size_b + index(v, k - h) for u, v in zip(a.tolist(), b.tolist())])
    observed = np.bincount(outcome, minlength=len(row))
    assert observed[row == 0].sum() == 0
    keep = row * DRAWS >= 5
    assert chisquare(observed[keep], row[keep] * observed[keep].sum() / row[keep].sum()).pvalue > 1e-4


def test_the_test_sees_noise_that_is_not_shared():
    """Power: with A*'s and B*'s noise from independent Dirichlet draws, the frequencies fail the test."""
    x_a, x_b = [1, 1, 0], [0, 1, 1]
    law = perturbation_laws(4, 0.5, symmetric("dirichlet"), null=True)[2]
    row = law[index(x_a, 2) * 6 + index(x_b, 2)]
    rng = np.random.default_rng(3)
    a, _ = simulated(x_a, [0, 0, 0], 0.5, "dirichlet", rng)  # A*'s responses with a Dirichlet of their own
    _, b = simulated([0, 0, 0], x_b, 0.5, "dirichlet", rng)
    outcome = np.array([index(u, 2) * 6 + index(v, 2) for u, v in zip(a.tolist(), b.tolist())])
    observed = np.bincount(outcome, minlength=len(row))
    keep = row * DRAWS >= 5
    assert chisquare(observed[keep], row[keep] * observed[keep].sum() / row[keep].sum()).pvalue < 1e-4


def test_alternative_tables_are_the_null_tables_at_h0_and_every_row_is_a_law():
    alt = perturbation_laws(3, 0.3, symmetric("dirichlet"), null=False)
    null = perturbation_laws(3, 0.3, symmetric("dirichlet"), null=True)
    assert len(alt) == 1 and len(null) == 4
    np.testing.assert_allclose(alt[0], null[0], atol=1e-15)
    for law in null:
        np.testing.assert_allclose(law.sum(1), 1.0, atol=1e-12)
    assert table_sizes(3, C, True)[0] == sum(law.size for law in null)


def test_tables_hold_the_laws_as_alias_tables():
    """Each row's alias table implies its law, and outcome o of h is the vectors out_a[h, o], out_b[h, o]."""
    k = 3
    tables = PerturbationTables.build(k, 0.3, symmetric("uniform"), null=True)
    laws = perturbation_laws(k, 0.3, symmetric("uniform"), null=True)
    for h, law in enumerate(laws):
        width = tables.n_out[h]
        assert width == law.shape[1]
        prob = tables.prob[tables.base[h]:tables.base[h] + law.size].reshape(law.shape)
        alias = tables.alias[tables.base[h]:tables.base[h] + law.size].reshape(law.shape)
        implied = prob / width
        for r in range(law.shape[0]):
            np.add.at(implied[r], alias[r], (1.0 - prob[r]) / width)
        np.testing.assert_allclose(implied, law, atol=1e-12)
        o = np.arange(width)
        np.testing.assert_array_equal(tables.comp[tables.out_a[h, o]].sum(1), h)
        np.testing.assert_array_equal(tables.comp[tables.out_b[h, o]].sum(1), k - h)


def implied_law(prob, alias):
    """The law an alias table draws from."""
    width = len(prob)
    law = prob / width
    np.add.at(law, alias, (1.0 - prob) / width)
    return law


def noise_counts(m_a, m_b, rng, shared=True):
    """Count vectors of the m_a and m_b labels that replace A*'s and B*'s responses, DRAWS times: iid draws from
    one eta ~ Dirichlet(1/C, ..., 1/C) per slot (or, with ``shared=False``, one per side)."""
    eta_a = rng.dirichlet(np.full(C, 1.0 / C), size=DRAWS)
    eta_b = eta_a if shared else rng.dirichlet(np.full(C, 1.0 / C), size=DRAWS)
    return [np.stack([rng.multinomial(m, e) for e in eta]) for m, eta in ((m_a, eta_a), (m_b, eta_b))]


def noise_outcomes(tables, m_a, m_b, a, b):
    """Each simulated pair (a, b) as the tables' outcome index in block (m_a, m_b)."""
    lo = tables.base[m_a, m_b]
    pairs = {(tuple(tables.comp[x]), tuple(tables.comp[y])): o
             for o, (x, y) in enumerate(zip(tables.out_a[lo:lo + tables.size[m_a, m_b]],
                                            tables.out_b[lo:lo + tables.size[m_a, m_b]]))}
    return np.array([pairs[(tuple(u), tuple(v))] for u, v in zip(a.tolist(), b.tolist())])


@pytest.mark.parametrize("m_a, m_b", [(0, 1), (0, 3), (1, 1), (2, 2), (1, 3)])
def test_noise_tables_draw_the_shared_dirichlet_noise(m_a, m_b):
    """The noise vectors of the replaced responses (the kernel's thinned path): each block's alias table implies
    the joint law of A*'s and B*'s noise from one eta, checked against a direct simulation by chi-square."""
    tables = NoiseTables.build(4, symmetric("dirichlet"))
    assert tables.most == 4
    lo, width = tables.base[m_a, m_b], tables.size[m_a, m_b]
    law = implied_law(tables.prob[lo:lo + width], tables.alias[lo:lo + width])
    assert law.sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_array_equal(tables.comp[tables.out_a[lo:lo + width]].sum(1), m_a)
    np.testing.assert_array_equal(tables.comp[tables.out_b[lo:lo + width]].sum(1), m_b)
    a, b = noise_counts(m_a, m_b, np.random.default_rng(m_a * 10 + m_b))
    observed = np.bincount(noise_outcomes(tables, m_a, m_b, a, b), minlength=width)
    keep = law * DRAWS >= 5
    assert chisquare(observed[keep], law[keep] * observed[keep].sum() / law[keep].sum()).pvalue > 1e-4


def test_noise_tables_test_sees_noise_that_is_not_shared():
    """Power: A*'s and B*'s noise from independent Dirichlet draws fails the same test."""
    tables = NoiseTables.build(4, symmetric("dirichlet"))
    lo, width = tables.base[2, 2], tables.size[2, 2]
    law = implied_law(tables.prob[lo:lo + width], tables.alias[lo:lo + width])
    a, b = noise_counts(2, 2, np.random.default_rng(5), shared=False)
    observed = np.bincount(noise_outcomes(tables, 2, 2, a, b), minlength=width)
    keep = law * DRAWS >= 5
    assert chisquare(observed[keep], law[keep] * observed[keep].sum() / law[keep].sum()).pvalue < 1e-4


def test_noise_tables_stop_at_their_size_limit():
    """Blocks up to the largest total whose pairs fit; none beyond (the kernel's urn takes over there)."""
    tables = NoiseTables.build(6, symmetric("dirichlet"), largest=100)  # pairs of total t: C(t + 5, 5) = 1, 6, 21, 56, 126
    assert tables.most == 3 and tables.prob.size == 1 + 6 + 21 + 56
    assert (tables.base[2, 1] >= 0) and (tables.base[2, 2] == -1) and (tables.base[0, 4] == -1)


@pytest.mark.parametrize("m_a, m_b", [(0, 4), (1, 3), (3, 1), (2, 2)])
def test_noise_beyond_the_tables_has_the_tables_law(m_a, m_b):
    """The kernels' draw beyond the noise tables (a chain of beta-binomials for the total, then a uniform subset
    for the smaller side) has the law the tables hold: chi-square of DRAWS draws against the block's law."""
    tables = NoiseTables.build(4, symmetric("dirichlet"))
    lo, width = tables.base[m_a, m_b], tables.size[m_a, m_b]
    law = implied_law(tables.prob[lo:lo + width], tables.alias[lo:lo + width])
    rng = np.random.default_rng(m_a * 7 + m_b)
    noise = np.zeros((2, C), dtype=np.int64)
    a, b = np.empty((DRAWS, C), dtype=np.int64), np.empty((DRAWS, C), dtype=np.int64)
    for i in range(DRAWS):
        swapped = dirichlet_noise(rng, m_a, m_b, tables.chain, noise)
        a[i], b[i] = noise[1 if swapped else 0], noise[0 if swapped else 1]
    observed = np.bincount(noise_outcomes(tables, m_a, m_b, a, b), minlength=width)
    keep = law * DRAWS >= 5
    assert chisquare(observed[keep], law[keep] * observed[keep].sum() / law[keep].sum()).pvalue > 1e-4


@pytest.mark.parametrize("k, epsilon", [(1, 0.3), (12, 0.1), (40, 0.4), (5, 0.0), (5, 1.0)])
def test_fire_tables_hold_the_binomial_law(k, epsilon):
    """The alias tables of how many of n responses are replaced give Binomial(n, epsilon) exactly: each outcome's
    probability, read back from the tables (its own column plus what other columns alias to it)."""
    from scipy.stats import binom

    start, prob, alias = fire_law(k, epsilon)
    for n in range(k + 1):
        size = n + 1
        law = prob[start[n]:start[n] + size] / size
        for j in range(size):
            law[alias[start[n] + j]] += (1.0 - prob[start[n] + j]) / size
        np.testing.assert_allclose(law, binom.pmf(np.arange(size), n, epsilon), atol=1e-12)


@pytest.mark.parametrize("k, n_labels", [(1, 2), (7, 3), (30, 5)])
def test_the_beta_binomial_chain_holds_scipys_numbers_to_the_bit(k, n_labels):
    total, at_most = np.arange(k + 1)[:, None], np.arange(k + 1)[None, :]
    for c in range(n_labels - 1):
        want = np.where(at_most >= total, 1.0,
                        betabinom.cdf(at_most, total, 1.0 / n_labels, (n_labels - 1 - c) / n_labels))
        assert np.array_equal(make_rule("dirichlet", np.ones(n_labels)).chain(k)[c], want), c
