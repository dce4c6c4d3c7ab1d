"""Simulation of G, A, B and the permutation null (METHOD sections 3-4, 9).

Tolerances: a mean is compared with its expectation within 4.5 standard errors estimated from the sample; a share
of n independent draws within the 1e-4 and 1 - 1e-4 quantiles of its binomial law. With fixed seeds each test is
deterministic; the limits say how far a correct engine may stray.
"""

import numpy as np
import pytest
from scipy.stats import binom

from analysis.data.annotations import from_table
from analysis.errors import ParameterError
from analysis.experiment.grid import run
from analysis.engine.metrics import METRICS
from analysis.experiment.pvalues import p_values, replicate_p_values
from analysis.engine import Simulator
from analysis.engine import path as paths
from analysis.engine.rule import make_rule
from single_draw import perturb_labels
from analysis.engine.split import split_law
from analysis.data.synthetic import make_stand_in
from analysis.experiment.choices import REFERENCE
from conftest import batched_table, crossed_table

Z = 4.5


def binomial_limits(n, p):
    return binom.ppf([1e-4, 1 - 1e-4], n, p)


def within_se(values, expected):
    values = np.asarray(values, dtype=float)
    se = values.std(ddof=1) / np.sqrt(len(values))
    return abs(values.mean() - expected) <= Z * se + 1e-12


def assert_same_law(a, b, skip=()):
    """Two samples of deltas (replicates x metrics) from the same law, on different random streams: every mean
    agrees within Z standard errors, and every spread within 15 % (for metrics that vary and are not in ``skip``)."""
    n_a, n_b = len(a), len(b)
    se = np.sqrt(a.var(0, ddof=1) / n_a + b.var(0, ddof=1) / n_b)
    assert np.all(np.abs(a.mean(0) - b.mean(0)) <= Z * se + 1e-12)
    varies = b.std(0) > 0
    for metric in skip:
        varies[METRICS.index(metric)] = False
    assert np.all(np.abs(a.std(0)[varies] / b.std(0)[varies] - 1) < 0.15)


@pytest.mark.parametrize("epsilon", [0.1, 0.3])
def test_uniform_rule_changes_an_epsilon_share_and_never_redraws_the_same_label(epsilon):
    rng = np.random.default_rng(7)
    labels = rng.integers(0, 4, size=(500, 40)).astype(np.int8)
    before = labels.copy()
    perturb_labels(rng, labels, 500, 40, epsilon, False, np.zeros(4, dtype=np.int64), np.full(4, 0.25))
    changed = labels != before
    low, high = binomial_limits(labels.size, epsilon)
    assert low <= changed.sum() <= high
    # replacements are uniform over the three other labels
    moved = (labels[changed] - before[changed]) % 4
    counts = np.bincount(moved, minlength=4)
    assert counts[0] == 0
    third = changed.sum() / 3
    assert np.all(np.abs(counts[1:] - third) < Z * np.sqrt(third))


@pytest.mark.parametrize("epsilon", [0.2, 0.5])
def test_dirichlet_rule_changes_responses_at_rate_eps_c_minus_1_over_c_and_mixes_in_a_uniform_mean(epsilon):
    """A response changes with probability eps (C-1)/C on average; B's item law averages (1-eps) p + eps/C."""
    n_labels, rows, k = 4, 4000, 30
    share = np.array([0.6, 0.3, 0.1, 0.0])
    rng = np.random.default_rng(11)
    labels = rng.choice(n_labels, size=(rows, k), p=share).astype(np.int8)
    before = labels.copy()
    perturb_labels(rng, labels, rows, k, epsilon, True, np.zeros(n_labels, dtype=np.int64),
                   make_rule("dirichlet", np.ones(n_labels)).urn())
    # responses of one slot share their noise law, so slots (rows) are the independent units
    assert within_se((labels != before).mean(1), epsilon * (n_labels - 1) / n_labels)
    for c in range(n_labels):
        assert within_se((labels == c).mean(1), (1 - epsilon) * share[c] + epsilon / n_labels)


def test_dirichlet_noise_is_shared_within_a_slot_as_a_polya_urn():
    """With every response replaced, two responses of a slot agree with probability (1 + 1/C) / 2
    (a Dirichlet(1/C) law), against 1/C for independent uniform labels."""
    n_labels, rows = 3, 20_000
    labels = np.zeros((rows, 2), dtype=np.int8)
    perturb_labels(np.random.default_rng(5), labels, rows, 2, 1.0, True, np.zeros(n_labels, dtype=np.int64),
                   make_rule("dirichlet", np.ones(n_labels)).urn())
    agree = int((labels[:, 0] == labels[:, 1]).sum())
    low, high = binomial_limits(rows, (1 + 1 / n_labels) / 2)
    assert low <= agree <= high
    first = np.bincount(labels[:, 0], minlength=n_labels)
    low, high = binomial_limits(rows, 1 / n_labels)
    assert ((low <= first) & (first <= high)).all()


def test_one_label_noise_gives_every_replaced_response_of_a_slot_one_uniform_label():
    """With every response replaced, the two responses of a slot always agree, and the slot's label is uniform."""
    n_labels, rows = 3, 20_000
    labels = np.zeros((rows, 2), dtype=np.int8)
    perturb_labels(np.random.default_rng(5), labels, rows, 2, 1.0, True, np.zeros(n_labels, dtype=np.int64),
                   make_rule("one-label", np.ones(n_labels)).urn())
    assert (labels[:, 0] == labels[:, 1]).all()
    first = np.bincount(labels[:, 0], minlength=n_labels)
    low, high = binomial_limits(rows, 1 / n_labels)
    assert ((low <= first) & (first <= high)).all()


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_split_law_counts_bs_columns_in_a_star_over_every_split(k):
    """H, B's columns in A*, counted over every way to mix: each half of the 2k pooled columns (A's numbered below
    k), and each coin vector of the pairs."""
    from itertools import combinations, product

    halves = np.bincount([sum(c >= k for c in half) for half in combinations(range(2 * k), k)], minlength=k + 1)
    coins = np.bincount([sum(flips) for flips in product((0, 1), repeat=k)], minlength=k + 1)
    for mixing, counts in (("half", halves), ("pairs", coins)):
        assert np.allclose(np.diff(split_law(k, mixing), prepend=0.0), counts / counts.sum()), mixing
    assert k == 1 or not np.allclose(halves / halves.sum(), coins / coins.sum())  # the two laws differ from k = 2


def _calibration(sim, n, k, n_samples, seed):
    alt = sim.replicates(n, k, 0.0, n_samples, np.random.default_rng(seed), null=False, perturbation=REFERENCE.perturbation)
    null = sim.replicates(n, k, 0.0, n_samples, np.random.default_rng(seed + 1), null=True, perturbation=REFERENCE.perturbation)
    return alt, null


@pytest.mark.parametrize("sampler, method, fixture", [("S1", "items", "crossed"), ("S2", "law", "crossed"),
                                                      ("S3", "responses", "batched")])
def test_the_null_mixed_pair_by_pair_is_calibrated_at_epsilon_zero(request, sampler, method, fixture):
    """At eps = 0 the pairs' null, too, has the alternative's law: equal spreads within the 4.5-sigma band of
    :func:`test_null_is_calibrated_at_epsilon_zero` (2000 replicates a side)."""
    sim = Simulator(request.getfixturevalue(fixture), sampler, method=method, smoothing=REFERENCE.smoothing,
                    null_mixing="pairs")
    alt, null = _calibration(sim, 200, 5, 2000, seed=7)
    ratios = [null[:, m].std(ddof=1) / alt[:, m].std(ddof=1) for m in range(len(METRICS)) if alt[:, m].std() > 0]
    assert ratios and all(0.9 <= r <= 1.1 for r in ratios), ratios


@pytest.mark.parametrize("sampler, method, fixture", [
    ("S1", "responses", "crossed"), ("S1", "items", "crossed"), ("S2", "responses", "crossed"),
    ("S2", "counts", "crossed"), ("S2", "law", "crossed"), ("S2", "responses", "sparse"), ("S3", "responses", "batched"),
    ("S3", "items", "batched"),
])
@pytest.mark.slow
@pytest.mark.parametrize("k", [1, 2, 5])
def test_null_is_calibrated_at_epsilon_zero(request, sampler, method, fixture, k):
    """At eps = 0, (A*, B*) has the law of (A, B): equal spreads, and p_j < 0.05 for about 5 % of replicates.

    With n = 2000 replicates each, the ratio of two sample sds has a standard error of about
    sqrt(1 / (n - 1)) = 0.022, so [0.9, 1.1] is a 4.5-sigma band. The share of p_j below 0.05 varies with the
    alternative sample (binomial) and with the null sample that fixes the 5 % quantile, so its standard error is
    sqrt(0.05 * 0.95 * (1/n + 1/n)). Ties count toward the null, so discrete metrics may only fall short of 5 %.
    """
    n_samples = 2000
    sim = Simulator(request.getfixturevalue(fixture), sampler, method=method, **REFERENCE.engine())
    alt, null = _calibration(sim, 200, k, n_samples, seed=100 + k)
    for m in range(len(METRICS)):
        if alt[:, m].std() == 0:  # e.g. accuracy is always 0 when no vote can differ
            continue
        assert 0.9 <= null[:, m].std(ddof=1) / alt[:, m].std(ddof=1) <= 1.1, METRICS[m]
    tolerance = Z * np.sqrt(0.05 * 0.95 * 2 / n_samples)
    for m in range(len(METRICS)):
        share = (replicate_p_values(null[:, m], alt[:, m]) < 0.05).mean()
        assert share <= 0.05 + tolerance, METRICS[m]
        if METRICS[m] in ("kl_div", "jsd"):  # nearly continuous: close to 5 % from both sides
            assert share >= 0.05 - tolerance, METRICS[m]


def test_the_old_with_replacement_pool_was_too_narrow_at_k1(crossed):
    """Why the null is a permutation: drawing A* and B* with replacement from the two pooled columns makes them
    share their only column half of the time, so the null's spread shrinks by about sqrt(1/2)."""
    sim = Simulator(crossed, "S2", method="responses", **REFERENCE.engine())
    alt, null = _calibration(sim, 40, 1, 2000, seed=3)
    rng = np.random.default_rng(4)
    mae = METRICS.index("mae")
    # the old null at K = 1, on the alternative's own columns: each of A*, B* picks A's or B's column at random
    picks = rng.integers(0, 2, size=(2000, 2))
    same = picks[:, 0] == picks[:, 1]
    old = np.where(same, 0.0, alt[:, mae] * np.where(picks[:, 0] == 0, 1.0, -1.0))
    assert 0.9 <= null[:, mae].std() / alt[:, mae].std() <= 1.1
    assert old.std() / alt[:, mae].std() < 0.8


@pytest.mark.parametrize("perturbation", ["dirichlet", "uniform"])
@pytest.mark.parametrize("null", [False, True])
@pytest.mark.parametrize("k", [3, 20, 60])
def test_s2_counts_path_agrees_with_the_response_path(dices, perturbation, null, k):
    """Same law, different random streams: every delta's mean agrees within 4.5 standard errors, and its spread
    within 15 % (the sd of a ratio of two sds from 800 replicates is about 0.035). K = 3 and 20 draw their
    multinomials from alias tables, K = 60 as binomial chains."""
    n_samples = 800
    assert paths.alias_fits(Simulator(dices, "S2", **REFERENCE.engine()).design, k) == (k < 60)
    out = {}
    for method in ("counts", "responses"):
        sim = Simulator(dices, "S2", method=method, **REFERENCE.engine())
        out[method] = sim.replicates(30, k, 0.3, n_samples, np.random.default_rng(9), null=null,
                                     perturbation=perturbation)
    assert_same_law(out["counts"], out["responses"])


@pytest.fixture(scope="module")
def ragged():
    return from_table(batched_table(ragged=True), batch="batch", name="ragged")


@pytest.fixture(scope="module")
def unanimous():
    """Crossed data on which every rater gives each item the same label: the deltas then vary only with the item
    draws and B's replacements, so a wrong replacement rate shows at once."""
    table = crossed_table(n_items=30, n_raters=12)
    table["label"] = table["item"] % 3
    return from_table(table, name="unanimous")


@pytest.fixture(scope="module")
def unanimous_ragged():
    table = batched_table(ragged=True)
    table["label"] = table["item"].str.len() % 3
    return from_table(table, batch="batch", name="unanimous-ragged")


@pytest.mark.parametrize("sampler, fixture, n, k, epsilon, perturbation", [
    ("S1", "crossed", 300, 1, 0.3, "dirichlet"),  # one perturbable response; replacements shared out by a multinomial
    ("S1", "unanimous", 300, 1, 0.3, "dirichlet"),
    ("S1", "unanimous", 300, 1, 0.3, "uniform"),
    ("S1", "crossed", 60, 2, 0.1, "dirichlet"),  # most slots keep all: first replaced response by inversion
    ("S1", "unanimous", 60, 2, 0.1, "dirichlet"),
    ("S1", "crossed", 40, 8, 0.3, "dirichlet"),  # replacements drawn per label as binomials
    ("S1", "unanimous", 40, 8, 0.3, "dirichlet"),
    ("S1", "unanimous", 40, 8, 0.3, "uniform"),
    ("S1", "unanimous", 40, 30, 0.3, "dirichlet"),  # no perturbation tables: Dirichlet labels from the noise tables
    ("S3", "batched", 60, 2, 0.3, "dirichlet"),  # one response at a time
    ("S3", "ragged", 60, 2, 0.3, "dirichlet"),  # ... with missing labels drawn per slot
    ("S3", "unanimous_ragged", 60, 2, 0.3, "uniform"),
    ("S3", "ragged", 60, 6, 0.3, "uniform"),  # per label, with missing labels
    ("S3", "unanimous_ragged", 60, 6, 0.3, "dirichlet"),
])
@pytest.mark.parametrize("null", [False, True])
def test_item_kernel_agrees_with_the_response_kernel(request, sampler, fixture, n, k, epsilon, perturbation, null):
    """METHOD section 9: the by-item kernel is an exact rearrangement of the direct one. Same law, different
    streams: every delta's mean agrees within 4.5 standard errors, and its spread within 15 % (the sd of a ratio
    of two sds from 1500 replicates is about 0.026 for normal deltas, more for S1's heavy-tailed ones)."""
    n_samples = 1500
    ds = request.getfixturevalue(fixture)
    out = {}
    for method in ("items", "responses"):
        sim = Simulator(ds, sampler, method=method, **REFERENCE.engine())
        out[method] = sim.replicates(n, k, epsilon, n_samples, np.random.default_rng(21), null=null,
                                     perturbation=perturbation)
    skip = ("kl_div",) if fixture.startswith("unanimous") else ()  # KL's spread there hangs on the few slots where B lost every gold label
    assert_same_law(out["items"], out["responses"], skip)


@pytest.mark.parametrize("fixture, n, k, perturbation, paired", [
    ("batched", 60, 1, "dirichlet", True),  # slots counted per (gold, A, B) triple (n >= 27 triples)
    ("ragged", 600, 1, "dirichlet", True),  # ... and replaced per triple by binomials (n >= 8 * 27)
    ("unanimous_ragged", 600, 1, "uniform", True),
    ("batched", 300, 2, "dirichlet", True),  # perturbation tables, slots counted per triple
    ("ragged", 60, 2, "uniform", True),  # ... with missing labels drawn per slot, added slot by slot
    ("ragged", 1200, 3, "dirichlet", True),
    ("unanimous_ragged", 60, 4, "dirichlet", True),
    ("batched", 60, 6, "uniform", True),
    ("ragged", 60, 8, "dirichlet", True),  # null tables too large: replaced responses picked by masks
    ("ragged", 60, 6, "dirichlet", False),  # without pair tables: masks too
    ("unanimous_ragged", 60, 12, "uniform", False),  # ... two masks a slot
    ("batched", 40, 14, "dirichlet", False),
    ("ragged", 40, 20, "dirichlet", True),  # the direct kernel's largest K (ITEMS_FROM): noise tables, two masks
])
@pytest.mark.parametrize("null", [False, True])
def test_direct_kernel_tables_agree_with_the_response_kernel(request, monkeypatch, fixture, n, k, perturbation,
                                                             paired, null):
    """S3's direct kernel with B's perturbation drawn from tables (analysis.engine.perturbation) and slots counted per
    triple of count vectors, or without pair tables with the replaced responses picked by masks, is an exact
    rearrangement of the response-by-response kernel: same tolerances as the by-item test, from 1500
    replicates."""
    n_samples = 1500
    if not paired:
        monkeypatch.setattr(paths, "PAIR_ROWS", 0)
    ds = request.getfixturevalue(fixture)
    assert paths.auto_method(Simulator(ds, "S3", **REFERENCE.engine()).design, k) == "tables"
    out = {}
    for method in ("tables", "responses"):
        out[method] = Simulator(ds, "S3", method=method, **REFERENCE.engine()).replicates(n, k, 0.3, n_samples, np.random.default_rng(31),
                                                                   null=null, perturbation=perturbation)
    skip = ("kl_div",) if fixture.startswith("unanimous") else ()
    assert_same_law(out["tables"], out["responses"], skip)


@pytest.mark.parametrize("fixture, n, k, perturbation", [
    ("sparse", 60, 6, "dirichlet"),  # 7 raters an item: the rater loop
    ("sparse", 60, 5, "dirichlet"),  # ... response by response
    ("crossed", 40, 20, "uniform"),  # replaced responses picked by masks, uniform labels
    ("crossed", 12, 70, "dirichlet"),  # more responses than one mask word: masks one response at a time, the urn
])
@pytest.mark.parametrize("null", [False, True])
def test_s2_direct_kernel_tables_agree_with_the_response_kernel(request, fixture, n, k, perturbation, null):
    """S2 takes the direct kernel's tables where neither the slot law nor the multinomial tables serve (on the
    D3code stand-in from K = 5 to MASK_WORD): the same law as response by response, same tolerances as above."""
    ds = request.getfixturevalue(fixture)
    out = {}
    for method in ("tables", "responses"):
        out[method] = Simulator(ds, "S2", method=method, **REFERENCE.engine()).replicates(n, k, 0.3, 1500, np.random.default_rng(17),
                                                                   null=null, perturbation=perturbation)
    # at K = 70, KL's spread hangs on rare slots where the gold has a label B lacks: from 6000 replicates it
    # varies from 0.032 to 0.035 between seeds of one method
    assert_same_law(out["tables"], out["responses"], skip=("kl_div",) if k > 50 else ())


def test_s2_kernel_choice_on_many_item_distributions():
    sim = Simulator(make_stand_in("d3code-synthetic"), "S2", **REFERENCE.engine())
    assert [paths.auto_method(sim.design, k) for k in (4, 5, 40, 63, 64)] == ["law", "tables", "tables", "tables", "counts"]


@pytest.mark.parametrize("sampler, fixture, method, k, epsilon, most", [
    ("S1", "unanimous", "items", 30, 0.3, 0),  # three labels: tables of no replaced response at all
    ("S3", "unanimous_ragged", "tables", 8, 0.5, 1),  # two labels: of at most one (1 + 4 pairs of noise vectors)
])
@pytest.mark.parametrize("null", [False, True])
def test_kernels_draw_noise_beyond_their_tables_by_chain(request, monkeypatch, sampler, fixture, method, k,
                                                              epsilon, most, null):
    """The by-item kernel and the direct kernel's thinned path take the labels of a slot's replaced responses from
    the noise tables up to their size limit, and beyond it by a chain of beta-binomials split between the sides
    (dirichlet_noise): same law as the response kernel,
    same tolerances as above. On unanimous items B's votes move only by the noise, so the test sees noise that is
    not shared by a slot's replaced responses."""
    monkeypatch.setattr(paths, "NOISE_ENTRIES", 5)
    monkeypatch.setattr(paths, "ROW_TABLE_ENTRIES", 0)  # no perturbation tables: the thinned path throughout
    ds = request.getfixturevalue(fixture)
    sim = Simulator(ds, sampler, method=method, **REFERENCE.engine())
    assert sim.noise_tables(k, "dirichlet").most == most
    out = {method: sim.replicates(60, k, epsilon, 1500, np.random.default_rng(7), null=null, perturbation=REFERENCE.perturbation)}
    out["responses"] = Simulator(ds, sampler, method="responses", **REFERENCE.engine()).replicates(60, k, epsilon, 1500,
                                                                            np.random.default_rng(7), null=null, perturbation=REFERENCE.perturbation)
    assert_same_law(out[method], out["responses"], skip=("kl_div",))


@pytest.mark.parametrize("sampler, fixture", [("S2", "crossed"), ("S3", "ragged")])
@pytest.mark.parametrize("k", [1, 3])
def test_pair_tables_change_no_number(request, monkeypatch, sampler, fixture, k):
    """Adding a slot by its rows in the pair tables draws the same random numbers as counting its labels, so the
    deltas agree to rounding."""
    ds = request.getfixturevalue(fixture)
    paired = Simulator(ds, sampler, method="responses", **REFERENCE.engine())
    assert paired.pair_tables(k).paired
    monkeypatch.setattr(paths, "PAIR_ROWS", 0)
    counted = Simulator(ds, sampler, method="responses", **REFERENCE.engine())
    assert not counted.pair_tables(k).paired
    for null in (False, True):
        a, b = (sim.replicates(40, k, 0.3, 50, np.random.default_rng(8), null=null, perturbation=REFERENCE.perturbation) for sim in (paired, counted))
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("fixture, n, k", [("crossed", 30, 1), ("crossed", 900, 1), ("unanimous", 900, 1),
                                           ("crossed", 40, 3), ("crossed", 4000, 2), ("sparse", 300, 2),
                                           ("crossed", 200, 8)])
@pytest.mark.parametrize("perturbation", ["dirichlet", "uniform"])
@pytest.mark.parametrize("null", [False, True])
def test_s2_from_the_slot_law_agrees_with_the_response_path(request, fixture, n, k, perturbation, null):
    """S2 from the exact law of one slot: slot by slot from its alias table where slots are few (n = 30, 40,
    200, 300), as a chain of binomials where they outnumber the law's entries (n = 900 at K = 1, 4000 at K = 2). Same
    tolerances as above, from 1500 replicates."""
    n_samples = 1500
    ds = request.getfixturevalue(fixture)
    sim = Simulator(ds, "S2", method="law", **REFERENCE.engine())
    chain = paths.chain(n, sim.law_tables(k, 0.3, perturbation, null).order.size)
    assert chain == (n >= 900)
    out = {}
    for method in ("law", "responses"):
        out[method] = Simulator(ds, "S2", method=method, **REFERENCE.engine()).replicates(n, k, 0.3, n_samples, np.random.default_rng(5),
                                                                     null=null, perturbation=perturbation)
    assert_same_law(out["law"], out["responses"])


@pytest.mark.parametrize("sampler, fixture", [("S1", "dices"), ("S2", "dices"), ("S3", "batched")])
def test_a_big_effect_at_a_large_budget_is_significant(request, sampler, fixture):
    ds = request.getfixturevalue(fixture)
    table = run(ds, sampler, budgets=(50000,), ks=(40,), epsilons=(0.4,), n_samples=300, seed=1,
                use_cache=False, progress=False, metrics=["mae", "jsd"])
    assert (table["p_value"] < 0.01).all()
    assert (table["delta"] > 0).all()


def test_dirichlet_effect_on_votes_grows_with_k_and_uniform_effect_does_not():
    """METHOD section 3: per-item Dirichlet noise moves pluralities, so accuracy's effect grows with K; uniform
    replacement keeps every item's label order, so it does not (d3code stand-in, S2, NK = 5000, eps = 0.3)."""
    ds = make_stand_in("d3code-synthetic")
    deltas = {}
    for rule in ("dirichlet", "uniform"):
        table = run(ds, "S2", budgets=(5000,), ks=(1, 100), epsilons=(0.3,), n_samples=200, seed=2,
                    use_cache=False, progress=False, metrics=["accuracy"], perturbation=rule)
        deltas[rule] = table.set_index("K")["delta"]
    assert deltas["dirichlet"][100] >= 2 * deltas["dirichlet"][1]
    assert deltas["uniform"][100] < 1.5 * deltas["uniform"][1]


@pytest.mark.parametrize("sampler", ["S1", "S2"])
def test_null_deltas_centre_on_zero_and_alternative_on_a_positive_mae(crossed, sampler):
    sim = Simulator(crossed, sampler, **REFERENCE.engine())
    alt = sim.replicates(60, 5, 0.3, 400, np.random.default_rng(2), null=False, perturbation=REFERENCE.perturbation)
    null = sim.replicates(60, 5, 0.3, 400, np.random.default_rng(3), null=True, perturbation=REFERENCE.perturbation)
    mae = METRICS.index("mae")
    assert within_se(null[:, mae], 0.0)
    assert alt[:, mae].mean() > 0
    assert p_values(null, alt)[mae] < 0.5


def test_bad_simulation_parameters_are_rejected(crossed):
    sim = Simulator(crossed, "S2", **REFERENCE.engine())
    with pytest.raises(ParameterError, match="epsilon"):
        sim.replicates(10, 2, 1.5, 10, np.random.default_rng(0), null=False, perturbation=REFERENCE.perturbation)
    with pytest.raises(ParameterError, match="K"):
        sim.replicates(10, 0, 0.1, 10, np.random.default_rng(0), null=False, perturbation=REFERENCE.perturbation)
    with pytest.raises(ParameterError, match="perturbation"):
        sim.replicates(10, 2, 0.1, 10, np.random.default_rng(0), null=False, perturbation="gauss")
    with pytest.raises(ParameterError, match="method"):
        Simulator(crossed, "S2", method="fast", **REFERENCE.engine())


def test_counts_too_wide_to_pack_go_to_the_kernels_that_count():
    """Without pair tables the direct kernel packs a slot's counts into one int64, bit_length(K) bits a label: with
    13 labels K = 19 needs 65 bits, so S3 (below ITEMS_FROM) takes the by-item kernel and an explicit request for
    the direct one says what to use instead; K = 15 (52 bits) still packs, and draws the by-item kernel's law (a
    field too narrow would carry into the next label and shift every metric)."""
    ds = from_table(batched_table(n_labels=13, seed=4), batch="batch", name="many labels")
    assert ds.n_labels == 13
    assert not paths.packs(19, 13) and paths.packs(15, 13)
    assert paths.auto_method(Simulator(ds, "S3", **REFERENCE.engine()).design, 19) == "items"
    assert paths.auto_method(Simulator(ds, "S3", **REFERENCE.engine()).design, 15) == "tables"
    with pytest.raises(ParameterError, match="method='items'"):
        Simulator(ds, "S3", method="responses", **REFERENCE.engine()).replicates(12, 19, 0.3, 5, np.random.default_rng(0), null=False, perturbation=REFERENCE.perturbation)
    out = {method: Simulator(ds, "S3", method=method, **REFERENCE.engine()).replicates(12, 15, 0.3, 800, np.random.default_rng(2), null=True, perturbation=REFERENCE.perturbation)
           for method in ("responses", "items")}
    assert_same_law(out["responses"], out["items"])
