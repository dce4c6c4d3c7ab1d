"""The eight metrics and their score differences ``delta`` (positive means A is better), computed from counts.

Every metric works on per-item label counts ``n_X[i, c]`` with ``K`` responses per item (METHOD section 5):
accuracy and the support-weighted precision, recall and F1 of plurality votes (ties go to the lowest label code),
mean absolute error of label distributions, per-item wins, KL divergence and Jensen-Shannon distance of the
distributions smoothed by adding ``1e-12`` to every count.

Two implementations live here: :func:`scores` and :func:`deltas`, plain numpy vectorised over replicates, and
the accumulators the kernels call per item (:func:`add_item`, :func:`add_pair`) and per replicate
(:func:`finish_deltas`), which take their divergence terms from integer tables indexed by counts;
:func:`fill_deltas` runs those accumulators over one replicate, so that the tests can hold them against
:func:`deltas`. Deltas are exact where ties matter (METHOD section 4): every sum is an integer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numba
import numpy as np

from analysis.errors import ParameterError



@dataclass(frozen=True)
class Metric:
    """One metric, declared once: its name, the paper's label, whether a higher score is better, and its family.

    ``family`` is ``"vote"`` for metrics of plurality votes and ``"distribution"`` for metrics of label
    distributions. ``delta`` is always oriented so that positive means A is better, whatever the direction.
    ``continuous``: it takes so many values per cell that ties are rare (the calibration's size check pools these);
    ``quotients``: its score is a sum of per-class quotients, whose ties :mod:`analysis.engine.exact` settles.
    """

    name: str
    label: str
    higher_is_better: bool
    family: str
    continuous: bool = False
    quotients: bool = False


# The one declaration every module reads. The order is the paper's column order and the kernels' output order.
REGISTRY: tuple[Metric, ...] = (
    Metric("accuracy", "Accuracy", True, "vote"),
    Metric("mae", "MAE", False, "distribution"),
    Metric("wins", "Wins", True, "distribution"),
    Metric("precision", "Precision", True, "vote", quotients=True),
    Metric("recall", "Recall", True, "vote"),
    Metric("f1", "F1-Score", True, "vote", quotients=True),
    Metric("kl_div", "KL-Div", False, "distribution", continuous=True),
    Metric("jsd", "JSD", False, "distribution", continuous=True),
)
METRICS: tuple[str, ...] = tuple(m.name for m in REGISTRY)
METRIC_LABELS: dict[str, str] = {m.name: m.label for m in REGISTRY}
VOTE_METRICS: tuple[str, ...] = tuple(m.name for m in REGISTRY if m.family == "vote")
DISTRIBUTION_METRICS: tuple[str, ...] = tuple(m.name for m in REGISTRY if m.family == "distribution")
CONTINUOUS_METRICS: tuple[str, ...] = tuple(m.name for m in REGISTRY if m.continuous)
QUOTIENT_METRICS: tuple[str, ...] = tuple(m.name for m in REGISTRY if m.quotients)
# each metric's column in the kernels' output rows, read from the registry (numba takes them as constants)
ACCURACY, MAE, WINS, PRECISION, RECALL, F1, KL_DIV, JSD = (METRICS.index(name) for name in (
    "accuracy", "mae", "wins", "precision", "recall", "f1", "kl_div", "jsd"))
SMOOTHING = 1e-12
FIXED = 2.0**32  # divergence terms are counted in units of 2**-32, so that their sums are exact integers


def check_metrics(metrics) -> tuple[str, ...]:
    """Normalise a metric selection (``"all"``, names or paper labels) to names in canonical order."""
    if metrics is None or metrics == "all" or list(metrics) == ["all"]:
        return METRICS
    by_label = {label.lower(): name for name, label in METRIC_LABELS.items()}
    chosen = set()
    for metric in [metrics] if isinstance(metrics, str) else metrics:
        key = str(metric).strip().lower()
        name = key if key in METRICS else by_label.get(key)
        if name is None:
            raise ParameterError(f"unknown metric {metric!r}; choose from {', '.join(METRICS)} or 'all'")
        chosen.add(name)
    return tuple(m for m in METRICS if m in chosen)


# ---------------------------------------------------------------- numpy reference (vectorised over replicates)

def votes(counts: np.ndarray) -> np.ndarray:
    """Plurality label per item; ties go to the lowest label code."""
    return np.argmax(counts, axis=-1)


def _weighted_scores(truth: np.ndarray, pred: np.ndarray, n_labels: int) -> tuple[np.ndarray, ...]:
    """Support-weighted precision, recall and F1 per replicate (rows of ``truth`` and ``pred``)."""
    n_items = truth.shape[-1]
    onehot_t = truth[..., None] == np.arange(n_labels)
    onehot_p = pred[..., None] == np.arange(n_labels)
    support = onehot_t.sum(-2).astype(float)
    predicted = onehot_p.sum(-2).astype(float)
    hits = (onehot_t & onehot_p).sum(-2).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(predicted > 0, hits / predicted, 0.0)
        f1 = np.where(support + predicted > 0, 2 * hits / (support + predicted), 0.0)
    weight = support / n_items
    return (weight * precision).sum(-1), hits.sum(-1) / n_items, (weight * f1).sum(-1)


def scores(gold: np.ndarray, model: np.ndarray) -> dict[str, np.ndarray]:
    """Per-replicate scores of one model against the gold, from counts of shape (..., items, labels)."""
    gold = np.asarray(gold, dtype=float)
    model = np.asarray(model, dtype=float)
    n_labels = gold.shape[-1]
    k = gold.sum(-1, keepdims=True)
    vote_g, vote_m = votes(gold), votes(model)
    precision, recall, f1 = _weighted_scores(vote_g, vote_m, n_labels)
    abs_diff = np.abs(model - gold)
    p_g = (gold + SMOOTHING) / (gold + SMOOTHING).sum(-1, keepdims=True)
    p_m = (model + SMOOTHING) / (model + SMOOTHING).sum(-1, keepdims=True)
    mid = (p_g + p_m) / 2
    kl = (p_g * np.log(p_g / p_m)).sum(-1)
    js_div = ((p_g * np.log(p_g / mid)).sum(-1) + (p_m * np.log(p_m / mid)).sum(-1)) / 2
    return {
        "accuracy": (vote_g == vote_m).mean(-1),
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "mae": abs_diff.mean((-1, -2)) / k[..., 0].mean(-1),
        # summed as integers first, so that equal errors compare equal in ``wins``
        "item_error": abs_diff.sum(-1) / (k[..., 0] * n_labels),
        "kl_div": kl.mean(-1),
        "jsd": np.sqrt(np.maximum(js_div, 0.0)).mean(-1),
    }


def confusion_matrices(truth: np.ndarray, pred: np.ndarray, n_labels: int) -> np.ndarray:
    """(truth x prediction) counts of vote vectors, per replicate: shape (..., labels, labels)."""
    onehot_t = (truth[..., None] == np.arange(n_labels)).astype(np.int64)
    onehot_p = (pred[..., None] == np.arange(n_labels)).astype(np.int64)
    return np.einsum("...ic,...id->...cd", onehot_t, onehot_p)


def deltas(gold: np.ndarray, a: np.ndarray, b: np.ndarray) -> dict[str, np.ndarray]:
    """Score differences, oriented so that positive means A is better, for every metric, with ties exact.

    Counts have shape (..., items, labels), every item with the same number of responses ``K``. As in the kernels,
    each delta is an integer difference over one denominator (divergences in units of ``1 / FIXED``), and precision
    and F1 are exact fractions rounded once (:mod:`analysis.engine.exact`), so equal exact deltas are equal floats.
    """
    from analysis.engine.exact import exact_deltas

    gold, a, b = (np.asarray(x, dtype=np.int64) for x in (gold, a, b))
    n_items, n_labels = gold.shape[-2:]
    k = int(gold[(0,) * (gold.ndim - 1)].sum())
    if not all((x.sum(-1) == k).all() for x in (gold, a, b)):
        raise ParameterError("deltas needs the same number of responses K on every item of G, A and B")
    vote_g, vote_a, vote_b = votes(gold), votes(a), votes(b)
    hits = (vote_a == vote_g).sum(-1) - (vote_b == vote_g).sum(-1)
    err_a, err_b = np.abs(a - gold).sum(-1), np.abs(b - gold).sum(-1)
    kl_table, js_table = divergence_tables(k, n_labels)

    def divergence(x):
        kl = kl_table[gold, x].sum((-1, -2))
        js = js_table[gold, x].sum(-1)
        return kl, _jsd_table(js.reshape(-1, js.shape[-1])).reshape(js.shape).sum(-1)

    (kl_a, jsd_a), (kl_b, jsd_b) = divergence(a), divergence(b)
    confusion = np.stack([confusion_matrices(vote_g, vote_a, n_labels),
                          confusion_matrices(vote_g, vote_b, n_labels)], axis=-3)
    flat = confusion.reshape(-1, 2, n_labels, n_labels)
    out = {
        "accuracy": hits / n_items,
        "mae": (err_b.sum(-1) - err_a.sum(-1)) / (k * n_items * n_labels),
        "wins": ((err_a < err_b).sum(-1) - (err_b < err_a).sum(-1)) / n_items,
        "precision": exact_deltas(flat, "precision").reshape(hits.shape),
        "recall": hits / n_items,
        "f1": exact_deltas(flat, "f1").reshape(hits.shape),
        "kl_div": (kl_b - kl_a) / (FIXED * n_items),
        "jsd": (jsd_b - jsd_a) / (FIXED * n_items),
    }
    return {m: out[m] for m in METRICS}


# ---------------------------------------------------------------- fused kernel

def divergence_tables(k: int, n_labels: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-class KL and Jensen-Shannon terms of smoothed shares, indexed by the two integer counts, in units of
    ``1 / FIXED`` (int64).

    ``kl[g, x] = p(g) * log(p(g) / p(x))`` and ``js[g, x] = p(g) log(p(g) / m) + p(x) log(p(x) / m)`` with
    ``p(n) = (n + 1e-12) / (k + n_labels * 1e-12)`` and ``m = (p(g) + p(x)) / 2``; summing them over classes gives
    an item's KL divergence and twice its Jensen-Shannon divergence. Each term is rounded once to the grid of
    ``2**-32`` (an error below ``1.2e-10`` per term), so an item's terms, and a replicate's items, add up exactly
    in any order: two replicates whose exact sums are equal get equal deltas (METHOD section 4).
    """
    counts = np.arange(k + 1) + SMOOTHING
    share = counts / (k + n_labels * SMOOTHING)
    log_share = np.log(share)
    p_g, p_x = share[:, None], share[None, :]
    log_mid = np.log((counts[:, None] + counts[None, :]) / (2 * (k + n_labels * SMOOTHING)))
    kl = p_g * (log_share[:, None] - log_share[None, :])
    js = p_g * (log_share[:, None] - log_mid) + p_x * (log_share[None, :] - log_mid)
    return np.rint(kl * FIXED).astype(np.int64), np.rint(js * FIXED).astype(np.int64)


@numba.njit(cache=True)
def jsd_units(js_sum):
    """An item's Jensen-Shannon distance in units of ``1 / FIXED``, from the sum of its :func:`divergence_tables`
    terms: the square root of half that sum, rounded once to the grid."""
    return np.int64(np.rint(math.sqrt(max(js_sum, 0) / (2.0 * FIXED)) * FIXED))


@numba.njit(cache=True)
def _jsd_table(js_sum):
    """:func:`jsd_units` of every entry of a 2-D array of term sums."""
    out = np.empty(js_sum.shape, dtype=np.int64)
    for i in range(js_sum.shape[0]):
        for j in range(js_sum.shape[1]):
            out[i, j] = jsd_units(js_sum[i, j])
    return out


@numba.njit(cache=True)
def _weighted_from_confusion(conf, n_items):
    """Weighted precision and F1 from a (truth x prediction) confusion matrix (weighted recall is accuracy)."""
    n_labels = conf.shape[0]
    precision = f1 = 0.0
    for c in range(n_labels):
        support = 0
        predicted = 0
        for d in range(n_labels):
            support += conf[c, d]
            predicted += conf[d, c]
        hits = conf[c, c]
        if predicted > 0:
            precision += support * hits / predicted
        if support + predicted > 0:
            f1 += support * 2.0 * hits / (support + predicted)
    return precision / n_items, f1 / n_items


SUMS = 10  # running integer sums of one replicate: hits, absolute errors, wins, KL and JS distance (in units of
# 1 / FIXED), for A then B


@numba.njit(cache=True)
def accumulators(n_labels):
    """A replicate's running integer sums and the confusion matrices of A's and B's votes against G's."""
    return (np.zeros(SUMS, dtype=np.int64), np.zeros((n_labels, n_labels), dtype=np.int64),
            np.zeros((n_labels, n_labels), dtype=np.int64))


@numba.njit(cache=True, inline="always")
def clear(sums, conf_a, conf_b):
    """Set a replicate's accumulators back to zero."""
    sums[:] = 0
    conf_a[:] = 0
    conf_b[:] = 0


@numba.njit(cache=True, inline="always")
def add_item(g, a, b, j, kl_table, js_table, conf_a, conf_b, sums, weight):
    """Add ``weight`` copies of item ``j`` of counts ``g``, ``a``, ``b`` to a replicate's running ``sums`` and
    confusion matrices.

    One pass over the classes computes the plurality votes (ties to the lowest code), the absolute errors and the
    divergence terms; the votes are selects rather than branches, which the processor cannot predict on random
    counts. ``kl_table`` and ``js_table`` come from :func:`divergence_tables` for the same ``k``.
    """
    n_labels = g.shape[1]
    mg, ma, mb = g[j, 0], a[j, 0], b[j, 0]
    vg = va = vb = 0
    err_a = abs(ma - mg)
    err_b = abs(mb - mg)
    ka = kl_table[mg, ma]
    kb = kl_table[mg, mb]
    ja = js_table[mg, ma]
    jb = js_table[mg, mb]
    for c in range(1, n_labels):
        ng, na, nb = g[j, c], a[j, c], b[j, c]
        vg = c if ng > mg else vg
        mg = max(ng, mg)
        va = c if na > ma else va
        ma = max(na, ma)
        vb = c if nb > mb else vb
        mb = max(nb, mb)
        err_a += abs(na - ng)
        err_b += abs(nb - ng)
        ka += kl_table[ng, na]
        kb += kl_table[ng, nb]
        ja += js_table[ng, na]
        jb += js_table[ng, nb]
    conf_a[vg, va] += weight
    conf_b[vg, vb] += weight
    sums[0] += weight * (va == vg)
    sums[1] += weight * (vb == vg)
    sums[2] += weight * err_a
    sums[3] += weight * err_b
    sums[4] += weight * (err_a < err_b)
    sums[5] += weight * (err_b < err_a)
    sums[6] += weight * ka
    sums[7] += weight * kb
    sums[8] += weight * jsd_units(ja)
    sums[9] += weight * jsd_units(jb)


def pair_tables(comp: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per-item metric terms for every (gold, model) pair of the count vectors ``comp`` of ``k`` responses each:
    each vector's plurality vote (ties to the lowest label), and per pair the absolute error, the KL divergence
    and the Jensen-Shannon distance, as :func:`add_item` computes them. Indexed by row of ``comp``."""
    kl_table, js_table = divergence_tables(k, comp.shape[1])
    gold, model = comp[:, None, :], comp[None, :, :]
    err = np.abs(model - gold).sum(2)
    kl = kl_table[gold, model].sum(2)
    jsd = _jsd_table(js_table[gold, model].sum(2))
    return comp.argmax(1), err, kl, jsd


@numba.njit(cache=True, inline="always")
def add_pair(tg, ta, tb, vote, err, kl, jsd, conf_a, conf_b, sums, weight):
    """:func:`add_item` from :func:`pair_tables`: ``weight`` items whose count vectors are rows ``tg`` (gold),
    ``ta`` and ``tb`` of the tables' ``comp``."""
    vg = vote[tg]
    va = vote[ta]
    vb = vote[tb]
    err_a = err[tg, ta]
    err_b = err[tg, tb]
    conf_a[vg, va] += weight
    conf_b[vg, vb] += weight
    sums[0] += weight * (va == vg)
    sums[1] += weight * (vb == vg)
    sums[2] += weight * err_a
    sums[3] += weight * err_b
    sums[4] += weight * (err_a < err_b)
    sums[5] += weight * (err_b < err_a)
    sums[6] += weight * kl[tg, ta]
    sums[7] += weight * kl[tg, tb]
    sums[8] += weight * jsd[tg, ta]
    sums[9] += weight * jsd[tg, tb]


@numba.njit(cache=True)
def finish_deltas(sums, conf_a, conf_b, n_items, k, n_labels, out, confusion):
    """Write the eight deltas (METRICS order, each at its registry column) of a replicate of ``n_items`` items from its sums into ``out``, and
    its two confusion matrices into ``confusion`` (2 x labels x labels), from which :mod:`analysis.exact` settles
    the ties of precision and F1.

    Every delta but those two is an integer difference over the cell's one denominator, so deltas that are equal
    in exact arithmetic are equal floats, and distinct ones keep their order. Weighted recall is accuracy
    (``sum_c (s_c / N)(TP_c / s_c) = sum_c TP_c / N``): both come from the same two integers.
    """
    prec_a, f1_a = _weighted_from_confusion(conf_a, n_items)
    prec_b, f1_b = _weighted_from_confusion(conf_b, n_items)
    hits_a = 0
    hits_b = 0
    for c in range(n_labels):
        hits_a += conf_a[c, c]
        hits_b += conf_b[c, c]
        for d in range(n_labels):
            confusion[0, c, d] = conf_a[c, d]
            confusion[1, c, d] = conf_b[c, d]
    out[ACCURACY] = (sums[0] - sums[1]) / n_items
    out[MAE] = (sums[3] - sums[2]) / (k * n_items * n_labels)
    out[WINS] = (sums[4] - sums[5]) / n_items
    out[PRECISION] = prec_a - prec_b
    out[RECALL] = (hits_a - hits_b) / n_items
    out[F1] = f1_a - f1_b
    out[KL_DIV] = (sums[7] - sums[6]) / (FIXED * n_items)
    out[JSD] = (sums[9] - sums[8]) / (FIXED * n_items)


@numba.njit(cache=True)
def fill_deltas(g, a, b, n_items, k, kl_table, js_table, conf_a, conf_b, out, confusion):
    """Write the eight deltas (METRICS order) of counts ``g``, ``a``, ``b`` (first ``n_items`` rows) into ``out``."""
    sums = np.zeros(SUMS, dtype=np.int64)
    clear(sums, conf_a, conf_b)
    for j in range(n_items):
        add_item(g, a, b, j, kl_table, js_table, conf_a, conf_b, sums, 1)
    finish_deltas(sums, conf_a, conf_b, n_items, k, g.shape[1], out, confusion)
