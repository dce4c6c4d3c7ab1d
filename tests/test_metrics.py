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
from analysis.engine.metrics import (ALL_METRICS, BY_NAME, METRICS, REGISTRY, SUMS, Accumulator, CellSums, add_item,
                              add_pair, averaged, cell_deltas, check_metrics, check_smoothing, count_sums, deltas,
                              divergence_tables, pair_tables, scores, votes)
from analysis.engine.draws import composition_index, composition_space
from single_draw import fill_sums


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
            for averaging in ("weighted", "macro", "micro"):
                key = name if averaging == "weighted" else f"{name}_{averaging}"
                expected = ref(truth, pred, average=averaging, zero_division=0)
                assert got[key][r] == pytest.approx(expected, abs=1e-12), key
            # the macro average's two label sets: the labels present (labels=None, above) and all C labels
            every = ref(truth, pred, average="macro", labels=list(range(gold.shape[-1])), zero_division=0)
            assert got[f"{name}_macro_all"][r] == pytest.approx(every, abs=1e-12), name


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
def test_the_kernels_accumulator_stores_what_numpy_sums(sets):
    """The kernels' per-item accumulator (add_item, store) and the vectorised count_sums store the same integers,
    so every metric's delta is the same float on both paths."""
    gold, a, b, k = sets
    n_labels = gold.shape[-1]
    want = count_sums(gold, a, b)
    sums = np.zeros((gold.shape[0], SUMS), dtype=np.int64)
    confusion = np.zeros((gold.shape[0], 2, n_labels, n_labels), dtype=np.int64)
    for r in range(gold.shape[0]):
        fill_sums(gold[r], a[r], b[r], gold.shape[1], divergence_tables(k, n_labels), sums[r], confusion[r])
    np.testing.assert_array_equal(sums, want.sums)
    np.testing.assert_array_equal(confusion, want.confusion)
    np.testing.assert_array_equal(cell_deltas(CellSums(sums, confusion, gold.shape[1], k), ALL_METRICS),
                                  cell_deltas(want, ALL_METRICS))


@settings(max_examples=80, deadline=None)
@given(count_sets())
def test_every_registered_delta_is_the_difference_of_the_direct_scores(sets):
    """Each metric's delta from the stored sums (exact where it is a sum of quotients) against its definition,
    computed directly per model by :func:`scores` (which the tests above hold against scikit-learn and scipy)."""
    gold, a, b, k = sets
    got = deltas(gold, a, b, ALL_METRICS)
    score_a, score_b = scores(gold, a), scores(gold, b)
    for metric in REGISTRY:
        sign = 1 if metric.higher_is_better else -1
        if metric.name == "wins":
            want = ((score_a["item_error"] < score_b["item_error"]).mean(-1)
                    - (score_b["item_error"] < score_a["item_error"]).mean(-1))
        else:
            want = sign * (score_a[metric.name] - score_b[metric.name])
        tolerance = 1e-8 if metric.continuous else 1e-12  # divergences: terms on a grid of 2**-32
        np.testing.assert_allclose(got[metric.name], want, atol=tolerance, err_msg=metric.name)
        if metric.quotients:
            for r in range(gold.shape[0]):
                pair = count_sums(gold[r:r + 1], a[r:r + 1], b[r:r + 1]).confusion[0]
                assert got[metric.name][r] == exact_delta(pair, metric.name), metric.name


@settings(max_examples=30, deadline=None)
@given(count_sets(), st.sets(st.sampled_from(ALL_METRICS), min_size=1))
def test_scores_of_some_metrics_are_those_of_all(sets, names):
    """Asked for some metrics, :func:`scores` gives each of them exactly as it does when it computes them all, and
    the per-item errors of Wins with MAE or Wins."""
    gold, a, _, _ = sets
    every, some = scores(gold, a), scores(gold, a, names=names)
    assert names - {"wins"} <= set(some) and ("item_error" in some) == bool(names & {"mae", "wins"})
    for name in set(some) - {"wins"}:
        np.testing.assert_array_equal(some[name], every[name], err_msg=name)


@settings(max_examples=40, deadline=None)
@given(count_sets())
def test_smoothing_and_log_base_match_scipy(sets):
    """KL with the smoothing 1e-9 and both divergences in bits, against scipy's entropy and jensenshannon."""
    gold, model, _, _ = sets
    got = scores(gold, model, smoothing=1e-9)
    sums = count_sums(gold, model, gold, smoothing=1e-9)  # B = G: B's divergences are 0
    for r in range(gold.shape[0]):
        g, m = gold[r] + 1e-9, model[r] + 1e-9
        kl = np.mean([entropy(g[i], m[i]) for i in range(len(g))])
        kl_bits = np.mean([entropy(g[i], m[i], base=2) for i in range(len(g))])
        js_bits = np.mean([jensenshannon(g[i], m[i], base=2) for i in range(len(g))])
        assert got["kl_div"][r] == pytest.approx(kl, rel=1e-9, abs=1e-9)
        assert got["kl_div_bits"][r] == pytest.approx(kl_bits, rel=1e-9, abs=1e-9)
        assert got["jsd_bits"][r] == pytest.approx(js_bits, rel=1e-7, abs=1e-9)
    from_sums = cell_deltas(sums, ("kl_div", "kl_div_bits", "jsd_bits"))
    np.testing.assert_allclose(-from_sums[:, 0], got["kl_div"], atol=1e-8)
    np.testing.assert_allclose(-from_sums[:, 1], got["kl_div_bits"], atol=1e-8)
    np.testing.assert_allclose(-from_sums[:, 2], got["jsd_bits"], atol=1e-8)


def test_the_smoothing_sets_ln_one_over_s_on_disagreeing_one_hot_items():
    """At K = 1 an item's KL is ln(1/s) (to O(s)) when the labels differ: the identity METHOD section 12 reads."""
    gold, model = np.array([[[1, 0], [0, 1]]]), np.array([[[0, 1], [0, 1]]])
    for s in (1e-12, 1e-9):
        assert scores(gold, model, smoothing=s)["kl_div"][0] == pytest.approx(np.log(1 / s) / 2, rel=1e-6)
    with pytest.raises(ParameterError, match="smoothing must be one of"):
        check_smoothing(1e-6)


def test_averaging_switch_names_the_variants_and_keeps_the_other_metrics():
    assert averaged("weighted") == METRICS
    macro = averaged("macro")
    assert [BY_NAME[m].column for m in macro] == list(METRICS)
    assert {"precision_macro", "recall_macro", "f1_macro"} <= set(macro)
    with pytest.raises(ParameterError, match="unknown averaging"):
        averaged("samples")


@numba.njit
def _both_adds(comp, weight, divergence, terms):
    """The accumulators of add_item and add_pair for every triple of count vectors."""
    n, n_labels = comp.shape
    out = []
    for tg in range(n):
        for ta in range(n):
            for tb in range(n):
                sums = np.zeros((2, SUMS), dtype=np.int64)
                conf = np.zeros((4, n_labels, n_labels), dtype=np.int64)
                add_item(comp[tg:tg + 1], comp[ta:ta + 1], comp[tb:tb + 1], 0, divergence,
                         Accumulator(sums[0], conf[0], conf[1]), weight)
                add_pair(tg, ta, tb, terms, Accumulator(sums[1], conf[2], conf[3]), weight)
                out.append((sums, conf))
    return out


@pytest.mark.parametrize("k, n_labels", [(1, 2), (1, 5), (2, 3), (3, 3), (2, 5)])
def test_pair_tables_add_what_the_counts_add(k, n_labels):
    comp, start = composition_space(k, n_labels)
    full = comp[start[k]:]
    code, row_of = composition_index(comp, k)
    assert (comp[row_of[code[1]]] == np.eye(n_labels, dtype=int)[1]).all()  # one response of label 1, by its code
    np.testing.assert_array_equal(row_of[comp @ code], np.arange(len(comp)))  # every vector numbered by its code
    for sums, conf in _both_adds(full, 7, divergence_tables(k, n_labels), pair_tables(full, k)):
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
    from analysis.experiment.choices import BOOK, REFERENCE, selected

    assert selected("all", REFERENCE) == selected(None, REFERENCE) == METRICS == tuple(m.name for m in REGISTRY if m.default)
    assert selected(["all"], BOOK) == BOOK.metrics != METRICS and selected(["jsd"], BOOK) == ("jsd",)
    with pytest.raises(ParameterError, match="depends on the averaging"):
        check_metrics("all")  # the engine never guesses an averaging
    assert check_metrics(["F1-Score (macro)", "jsd"]) == ("jsd", "f1_macro")
    assert check_metrics(["JSD", "accuracy", "F1-Score"]) == ("accuracy", "f1", "jsd")
    with pytest.raises(ParameterError, match="unknown metric 'bleu'"):
        check_metrics(["bleu"])
