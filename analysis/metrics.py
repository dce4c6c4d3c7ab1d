"""The eight metrics and their score differences ``delta`` (positive means A is better), computed from counts.

Every metric works on per-item label counts ``n_X[i, c]`` with ``K`` responses per item (METHOD section 5):
accuracy and the support-weighted precision, recall and F1 of plurality votes (ties go to the lowest label code),
mean absolute error of label distributions, per-item wins, KL divergence and Jensen-Shannon distance of the
distributions smoothed by adding ``1e-12`` to every count.

Two implementations live here: :func:`deltas`, plain numpy vectorised over replicates (the reference), and
:func:`fill_deltas`, a fused numba kernel used by the simulation that makes one pass over the items and takes
its divergence terms from tables indexed by integer counts.
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
    """

    name: str
    label: str
    higher_is_better: bool
    family: str


# The one declaration every module reads. The order is the paper's column order and the kernels' output order.
REGISTRY: tuple[Metric, ...] = (
    Metric("accuracy", "Accuracy", True, "vote"),
    Metric("mae", "MAE", False, "distribution"),
    Metric("wins", "Wins", True, "distribution"),
    Metric("precision", "Precision", True, "vote"),
    Metric("recall", "Recall", True, "vote"),
    Metric("f1", "F1-Score", True, "vote"),
    Metric("kl_div", "KL-Div", False, "distribution"),
    Metric("jsd", "JSD", False, "distribution"),
)
METRICS: tuple[str, ...] = tuple(m.name for m in REGISTRY)
METRIC_LABELS: dict[str, str] = {m.name: m.label for m in REGISTRY}
VOTE_METRICS: tuple[str, ...] = tuple(m.name for m in REGISTRY if m.family == "vote")
DISTRIBUTION_METRICS: tuple[str, ...] = tuple(m.name for m in REGISTRY if m.family == "distribution")
SMOOTHING = 1e-12


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


def deltas(gold: np.ndarray, a: np.ndarray, b: np.ndarray) -> dict[str, np.ndarray]:
    """Score differences, oriented so that positive means A is better, for every metric."""
    sa, sb = scores(gold, a), scores(gold, b)
    out = {m: sa[m] - sb[m] for m in ("accuracy", "precision", "recall", "f1")}
    out.update({m: sb[m] - sa[m] for m in ("mae", "kl_div", "jsd")})
    out["wins"] = ((sa["item_error"] < sb["item_error"]).astype(float)
                   - (sb["item_error"] < sa["item_error"])).mean(-1)
    return {m: out[m] for m in METRICS}


# ---------------------------------------------------------------- fused kernel

def divergence_tables(k: int, n_labels: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-class KL and Jensen-Shannon terms of smoothed shares, indexed by the two integer counts.

    ``kl[g, x] = p(g) * log(p(g) / p(x))`` and ``js[g, x] = p(g) log(p(g) / m) + p(x) log(p(x) / m)`` with
    ``p(n) = (n + 1e-12) / (k + n_labels * 1e-12)`` and ``m = (p(g) + p(x)) / 2``; summing them over classes gives
    an item's KL divergence and twice its Jensen-Shannon divergence.
    """
    counts = np.arange(k + 1) + SMOOTHING
    share = counts / (k + n_labels * SMOOTHING)
    log_share = np.log(share)
    p_g, p_x = share[:, None], share[None, :]
    log_mid = np.log((counts[:, None] + counts[None, :]) / (2 * (k + n_labels * SMOOTHING)))
    kl = p_g * (log_share[:, None] - log_share[None, :])
    js = p_g * (log_share[:, None] - log_mid) + p_x * (log_share[None, :] - log_mid)
    return kl, js


@numba.njit(cache=True)
def _weighted_from_confusion(conf, n_items):
    """Weighted precision, recall and F1 from a (truth x prediction) confusion matrix."""
    n_labels = conf.shape[0]
    precision = recall = f1 = 0.0
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
        recall += hits
    return precision / n_items, recall / n_items, f1 / n_items


SUMS = 10  # running sums of one replicate: hits, absolute errors, wins, KL and JS distance, for A then B


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
    sums[8] += weight * math.sqrt(max(ja / 2.0, 0.0))
    sums[9] += weight * math.sqrt(max(jb / 2.0, 0.0))


def pair_tables(comp: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per-item metric terms for every (gold, model) pair of the count vectors ``comp`` of ``k`` responses each:
    each vector's plurality vote (ties to the lowest label), and per pair the absolute error, the KL divergence
    and the Jensen-Shannon distance, as :func:`add_item` computes them. Indexed by row of ``comp``."""
    kl_table, js_table = divergence_tables(k, comp.shape[1])
    gold, model = comp[:, None, :], comp[None, :, :]
    err = np.abs(model - gold).sum(2)
    kl = kl_table[gold, model].sum(2)
    jsd = np.sqrt(np.maximum(js_table[gold, model].sum(2) / 2.0, 0.0))
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
def finish_deltas(sums, conf_a, conf_b, n_items, k, n_labels, out):
    """Write the eight deltas (METRICS order) of a replicate of ``n_items`` items from its sums into ``out``."""
    prec_a, rec_a, f1_a = _weighted_from_confusion(conf_a, n_items)
    prec_b, rec_b, f1_b = _weighted_from_confusion(conf_b, n_items)
    out[0] = (sums[0] - sums[1]) / n_items
    out[1] = (sums[3] - sums[2]) / (k * n_items * n_labels)
    out[2] = (sums[4] - sums[5]) / n_items
    out[3] = prec_a - prec_b
    out[4] = rec_a - rec_b
    out[5] = f1_a - f1_b
    out[6] = (sums[7] - sums[6]) / n_items
    out[7] = (sums[9] - sums[8]) / n_items


@numba.njit(cache=True)
def fill_deltas(g, a, b, n_items, k, kl_table, js_table, conf_a, conf_b, out):
    """Write the eight deltas (METRICS order) of counts ``g``, ``a``, ``b`` (first ``n_items`` rows) into ``out``."""
    sums = np.zeros(SUMS)
    conf_a[:] = 0
    conf_b[:] = 0
    for j in range(n_items):
        add_item(g, a, b, j, kl_table, js_table, conf_a, conf_b, sums, 1)
    finish_deltas(sums, conf_a, conf_b, n_items, k, g.shape[1], out)
