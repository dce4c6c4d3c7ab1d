"""Ties decided exactly (METHOD section 4): precision and F1 settled on fractions, every plan's recall is accuracy."""

from fractions import Fraction

import numpy as np
import pytest

from analysis.engine.exact import exact_delta, settle
from analysis.experiment.grid import settle_cell
from analysis.engine.metrics import METRICS, REGISTRY, _weighted_from_confusion
from analysis.experiment.pvalues import p_value
from analysis.experiment.choices import REFERENCE

# Two confusion matrices of 12 items with the same exact weighted precision, 5/18, whose float sums differ by an ulp
# (found by a search over random matrices; each is checked below, not assumed).
FIRST = np.array([[2, 1, 1], [1, 2, 1], [3, 1, 0]])
SECOND = np.array([[1, 1, 5], [1, 1, 1], [1, 1, 0]])


def perfect(confusion):
    """A model that predicts the truth of every item of ``confusion``: precision 1 on the same supports."""
    return np.diag(confusion.sum(1))


def test_the_two_matrices_tie_exactly_but_not_in_floats():
    assert _weighted_from_confusion(FIRST, 12)[0] != _weighted_from_confusion(SECOND, 12)[0]
    assert exact_delta(np.stack([FIRST, perfect(FIRST)]), "precision") == \
        exact_delta(np.stack([SECOND, perfect(SECOND)]), "precision")


def test_a_hand_computed_tie_gives_its_exact_p():
    """Alternative deltas: 5/18 - 1 (from FIRST) and 0.5; null deltas: 5/18 - 1 (from SECOND) and -0.9.
    Pairs with null >= alt: only the tie (ties count toward the null), so p = 1/4 exactly."""
    same = np.stack([perfect(FIRST), perfect(FIRST)])  # the second replicates' F1 delta, 0, is exact as it stands
    alt_conf = np.stack([np.stack([FIRST, perfect(FIRST)]), same])
    null_conf = np.stack([np.stack([SECOND, perfect(SECOND)]), same])
    alt = np.zeros((2, len(METRICS)))
    null = np.zeros((2, len(METRICS)))
    m = METRICS.index("precision")
    alt[:, m] = [_weighted_from_confusion(FIRST, 12)[0] - 1.0, 0.5]
    null[:, m] = [_weighted_from_confusion(SECOND, 12)[0] - 1.0, -0.9]
    settled_alt, settled_null = settle_cell(alt, null, alt_conf, null_conf, METRICS)
    assert settled_alt[0, m] == settled_null[0, m] == float(Fraction(5, 18) - 1)
    assert p_value(settled_null[:, m], settled_alt[:, m]) == 0.25
    assert settled_alt[1, m] == 0.5 and settled_null[1, m] == -0.9  # far from any other: left as they were


def test_settle_keeps_the_exact_order_of_close_values():
    """Values within the tolerance are put in the order of their exact fractions, whatever their floats say."""
    pairs = np.stack([np.stack([FIRST, perfect(FIRST)]), np.stack([SECOND, perfect(SECOND)])])
    exact = np.array([exact_delta(p, "precision") for p in pairs])
    wrong = exact + np.array([3e-16, -3e-16])  # within the tolerance, and off by a few ulps in opposite directions
    np.testing.assert_array_equal(settle(wrong, pairs, "precision"), exact)


@pytest.mark.parametrize("sampler, fixture", [("S1", "crossed"), ("S2", "sparse"), ("S3", "batched")])
def test_recall_and_accuracy_give_identical_deltas_and_p_in_every_method(request, sampler, fixture):
    from analysis.experiment.grid import Cell, simulate_cell, summarise_cell
    from analysis.engine import METHODS, Simulator

    ds = request.getfixturevalue(fixture)
    a, r = METRICS.index("accuracy"), METRICS.index("recall")
    for method in METHODS:
        sim = Simulator(ds, sampler, method=method, **REFERENCE.engine())
        for nk, k in ((100, 1), (100, 5), (300, 3)):
            try:
                alt, null = simulate_cell(sim, Cell(sampler, "dirichlet", 0.3, nk, k), 200, 3)
            except ValueError:  # a method that does not serve this sampler or K
                continue
            np.testing.assert_array_equal(alt[:, a], alt[:, r])
            np.testing.assert_array_equal(null[:, a], null[:, r])
            summary = summarise_cell(alt, null)
            assert summary["accuracy"] == summary["recall"]


def test_recall_and_accuracy_p_values_are_identical_in_a_cached_grid(tmp_path, crossed):
    """The cell cache stores each p-value as JSON and reads it back to the bit: a rerun computes nothing and gives
    the same, identical p-values of accuracy and recall."""
    from analysis.experiment.cache import ResultCache
    from analysis.experiment.grid import run

    grid = dict(budgets=(100, 300), ks=(1, 3), epsilons=(0.3,), n_samples=100, seed=1, cache_dir=tmp_path,
                progress=False, averaging="weighted")  # weighted recall is accuracy
    for sampler in ("S1", "S2"):
        first = run(crossed, sampler, **grid)
        computed = ResultCache(tmp_path).computations()
        again = run(crossed, sampler, **grid)
        assert ResultCache(tmp_path).computations() == computed
        for table in (first, again):
            by_metric = table.set_index(["NK", "K", "metric"])["p_value"].unstack()
            assert (by_metric["accuracy"] == by_metric["recall"]).all()
        assert first["p_value"].tolist() == again["p_value"].tolist()


@pytest.mark.parametrize("metric", [m.name for m in REGISTRY if m.quotients])
def test_the_compiled_path_and_python_integers_round_the_same_exact_value(metric):
    """Small counts take the compiled int64 path, large ones (up to 10**7 per cell) Python's integers; both must
    give the correctly rounded exact delta, the one a Fraction gives."""
    from fractions import Fraction

    from analysis.engine.exact import exact_deltas, score_fraction

    def exact_score(confusion, metric):
        return Fraction(*score_fraction(np.asarray(confusion).tolist(), metric))

    rng = np.random.default_rng(5)
    small = rng.integers(0, 6, size=(300, 2, 3, 3))
    sparse = rng.integers(0, 2, size=(300, 2, 5, 5)) * rng.integers(0, 2, size=(300, 2, 5, 5))  # unused labels
    large = rng.integers(0, 10**7, size=(20, 2, 4, 4))
    for pairs in (small, sparse[sparse.sum(axis=(2, 3)).min(axis=1) > 0], large):
        expected = [float(exact_score(p[0], metric) - exact_score(p[1], metric)) for p in pairs]
        assert exact_deltas(pairs, metric).tolist() == expected


@pytest.mark.parametrize("metric", [m.name for m in REGISTRY if m.quotients])
def test_small_counts_take_the_compiled_path(metric):
    """Every quotient metric's small cells are settled in compiled integers, not replicate by replicate in Python."""
    from analysis.engine.exact import KINDS, _compiled_deltas

    pairs = np.random.default_rng(6).integers(1, 6, size=(200, 2, 3, 3))
    done = np.zeros(len(pairs), dtype=np.bool_)
    _compiled_deltas(pairs, KINDS.index(metric), np.empty(len(pairs)), done)
    assert done.all()
