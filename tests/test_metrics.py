"""Metrics against independent references: scikit-learn (votes) and scipy (divergences)."""

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import jensenshannon
from scipy.stats import entropy
from sklearn.metrics import accuracy_score, f1_score, precision_score, recall_score

from analysis.engine.exact import exact_delta
from analysis.errors import ParameterError
from analysis.metrics import (METRICS, QUOTIENT_METRICS, SUMS, add_item, add_pair, check_metrics, deltas,
                              divergence_tables, fill_deltas, pair_tables, scores, votes)
from analysis.samplers import composition_index, composition_space


@st.composite
def count_sets(draw):
    """Counts of G, A and B for a few replicates: (reps, items, labels), each row summing to k."""
    n_labels = draw(st.integers(2, 5))
    n_items = draw(st.integers(1, 25))
    k = draw(st.integers(1, 12))
    reps = draw(st.integers(1, 3))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    skew = rng.dirichlet(np.ones(n_labels) * 0.5, size=(reps, n_items))

    def counts():
        return np.stack([[rng.multinomial(k, p) for p in rep] for rep in skew])

    return counts(), counts(), counts(), k


@settings(max_examples=80, deadline=None)
@given(count_sets())
def test_vote_metrics_equal_scikit_learn(sets):
    gold, model, _, _ = sets
    got = scores(gold, model)
    for r in range(gold.shape[0]):
        truth, pred = votes(gold[r]), votes(model[r])
        assert got["accuracy"][r] == pytest.approx(accuracy_score(truth, pred), abs=1e-12)
        for name, ref in (("precision", precision_score), ("recall", recall_score), ("f1", f1_score)):
            expected = ref(truth, pred, average="weighted", zero_division=0)
            assert got[name][r] == pytest.approx(expected, abs=1e-12), name


@settings(max_examples=80, deadline=None)
@given(count_sets())
def test_distribution_metrics_equal_scipy(sets):
    gold, model, _, k = sets
    got = scores(gold, model)
    for r in range(gold.shape[0]):
        g, m = gold[r] + 1e-12, model[r] + 1e-12
        kl = np.mean([entropy(g[i], m[i]) for i in range(len(g))])
        js = np.mean([jensenshannon(g[i], m[i]) for i in range(len(g))])
        mae = np.abs(model[r] / k - gold[r] / k).mean()
        assert got["kl_div"][r] == pytest.approx(kl, rel=1e-9, abs=1e-12)
        assert got["jsd"][r] == pytest.approx(js, rel=1e-7, abs=1e-9)
        assert got["mae"][r] == pytest.approx(mae, abs=1e-12)


@settings(max_examples=80, deadline=None)
@given(count_sets())
def test_fused_kernel_equals_numpy_reference(sets):
    gold, a, b, k = sets
    expected = deltas(gold, a, b)
    n_labels = gold.shape[-1]
    kl, js = divergence_tables(k, n_labels)
    out = np.empty(len(METRICS))
    conf = np.zeros((n_labels, n_labels), dtype=np.int64)
    confusion = np.zeros((2, n_labels, n_labels), dtype=np.int64)
    for r in range(gold.shape[0]):
        fill_deltas(gold[r], a[r], b[r], gold.shape[1], k, kl, js, conf, conf.copy(), out, confusion)
        for m, name in enumerate(METRICS):
            if name in QUOTIENT_METRICS:  # a float sum of quotients in the kernel; exact once its ties are settled
                assert out[m] == pytest.approx(expected[name][r], rel=1e-12, abs=1e-12), name
                assert exact_delta(confusion, name) == expected[name][r], name
            else:  # integer sums over one denominator: the same float on both paths
                assert out[m] == expected[name][r], name


@numba.njit
def _both_adds(comp, weight, kl_table, js_table, vote, err, kl, jsd):
    """The sums and confusion matrices of add_item and add_pair for every triple of count vectors."""
    n, n_labels = comp.shape
    out = []
    for tg in range(n):
        for ta in range(n):
            for tb in range(n):
                sums = np.zeros((2, SUMS), dtype=np.int64)
                conf = np.zeros((4, n_labels, n_labels), dtype=np.int64)
                add_item(comp[tg:tg + 1], comp[ta:ta + 1], comp[tb:tb + 1], 0, kl_table, js_table, conf[0], conf[1],
                         sums[0], weight)
                add_pair(tg, ta, tb, vote, err, kl, jsd, conf[2], conf[3], sums[1], weight)
                out.append((sums, conf))
    return out


@pytest.mark.parametrize("k, n_labels", [(1, 2), (1, 5), (2, 3), (3, 3), (2, 5)])
def test_pair_tables_add_what_the_counts_add(k, n_labels):
    comp, start = composition_space(k, n_labels)
    full = comp[start[k]:]
    code, row_of = composition_index(comp, k)
    assert (comp[row_of[code[1]]] == np.eye(n_labels, dtype=int)[1]).all()  # one response of label 1, by its code
    np.testing.assert_array_equal(row_of[comp @ code], np.arange(len(comp)))  # every vector numbered by its code
    for sums, conf in _both_adds(full, 7, *divergence_tables(k, n_labels), *pair_tables(full, k)):
        np.testing.assert_array_equal(sums[1], sums[0])
        np.testing.assert_array_equal(conf[2:], conf[:2])


@settings(max_examples=50, deadline=None)
@given(count_sets())
def test_weighted_recall_is_accuracy_and_deltas_are_antisymmetric(sets):
    gold, a, b, _ = sets
    s = scores(gold, a)
    np.testing.assert_allclose(s["recall"], s["accuracy"], atol=1e-12)
    forward, backward = deltas(gold, a, b), deltas(gold, b, a)
    for name in METRICS:
        np.testing.assert_allclose(forward[name], -backward[name], atol=1e-12)
        assert np.all(np.abs(forward[name]) <= (40 if name == "kl_div" else 1.0) + 1e-9)


@settings(max_examples=50, deadline=None)
@given(count_sets())
def test_recall_and_accuracy_deltas_are_the_same_float(sets):
    gold, a, b, _ = sets
    d = deltas(gold, a, b)
    np.testing.assert_array_equal(d["recall"], d["accuracy"])


def test_divergence_sums_do_not_depend_on_the_order_of_items():
    """Items whose terms sum to equal exact totals in another order give the same delta, to the bit."""
    rng = np.random.default_rng(4)
    gold, a, b = (rng.multinomial(7, [0.2, 0.3, 0.5], size=(1, 200)) for _ in range(3))
    order = rng.permutation(200)
    forward, shuffled = deltas(gold, a, b), deltas(gold[:, order], a[:, order], b[:, order])
    for name in METRICS:
        assert forward[name][0] == shuffled[name][0], name


def test_delta_orientation_favours_the_model_closer_to_gold():
    gold = np.array([[[5, 0, 0], [0, 5, 0], [0, 0, 5]]])
    close = gold.copy()
    far = np.array([[[0, 5, 0], [0, 0, 5], [5, 0, 0]]])
    d = deltas(gold, close, far)
    assert all(d[name][0] > 0 for name in METRICS)
    assert d["accuracy"][0] == 1.0 and d["wins"][0] == 1.0


def test_votes_break_ties_toward_the_lowest_label():
    assert votes(np.array([[2, 2, 1], [0, 3, 3], [1, 1, 1]])).tolist() == [0, 1, 0]


def test_metric_names_and_labels_are_accepted_and_unknown_ones_rejected():
    assert check_metrics("all") == METRICS
    assert check_metrics(["JSD", "accuracy", "F1-Score"]) == ("accuracy", "f1", "jsd")
    with pytest.raises(ParameterError, match="unknown metric 'bleu'"):
        check_metrics(["bleu"])
