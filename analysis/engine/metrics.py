"""The metrics and their score differences ``delta`` (positive means A is better), computed from counts.

Every metric works on per-item label counts ``n_X[i, c]`` with ``K`` responses per item (the methods page): the
eight of the paper (accuracy, the support-weighted precision, recall and F1 of plurality votes, ties to the lowest
label code, mean absolute error of label distributions, per-item wins, KL divergence and Jensen-Shannon distance
of the distributions smoothed by adding ``s`` to every count), and the variants the methods page compares them
with (macro and micro averaging, divergences in bits).

This module owns the metric interface of the kernels. A kernel keeps one :class:`Accumulator` per replicate:
:func:`add_item` (from counts) and :func:`add_pair` (from the pair tables) say what a slot adds, both through one
writer of the running integer sums, and :func:`store` ends the replicate. What the sums mean is the business of
this module alone: :func:`cell_deltas` turns a cell's stored sums and confusion matrices into the deltas of any
metrics of the :data:`REGISTRY`. Adding a metric is one :class:`Metric` entry with its ``delta`` (and, for a sum of
per-class quotients, its exact fraction in :mod:`analysis.engine.exact`). :func:`deltas` runs the same finish on counts,
plain numpy vectorised over replicates; :func:`scores` computes each model's scores directly, for the tests and for
comparing real systems. Deltas are exact where ties matter (the methods page): every sum is an integer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, NamedTuple

import numba
import numpy as np

from analysis.engine.indices import ix
from analysis.errors import ParameterError

SMOOTHING = 1e-12  # VET's additive smoothing of counts before KL and JSD (the methods page)
#: The KL and JSD smoothing constants on offer, 1e-12 (the reference) and 1e-9 (what the paper's numbers point to).
SMOOTHINGS = (1e-12, 1e-9)
FIXED = 2.0**32  # divergence terms are counted in units of 2**-32, so that their sums are exact integers
LN2 = math.log(2.0)

# The running integer sums of one replicate, A's then B's: plurality hits, absolute errors, wins, KL and JS
# distance (in units of 1 / FIXED). Only this module reads them by position.
HITS, ERRORS, WINS_AT, KL_AT, JSD_AT = 0, 2, 4, 6, 8
SUMS = 10


class CellSums(NamedTuple):
    """A cell's stored replicates: ``sums`` (replicates x SUMS, int64) and the confusion matrices of A's and B's
    votes against G's (replicates x 2 x labels x labels), for ``n_items`` items of ``k`` responses each."""

    sums: np.ndarray
    confusion: np.ndarray
    n_items: int
    k: int

    def difference(self, at: int, b_minus_a: bool = False) -> np.ndarray:
        """The integer difference of one of the sums, A's minus B's (or B's minus A's)."""
        a, b = self.sums[:, at], self.sums[:, at + 1]
        return b - a if b_minus_a else a - b


def _accuracy(c: CellSums) -> np.ndarray:
    return c.difference(HITS) / c.n_items


def _mae(c: CellSums) -> np.ndarray:
    return c.difference(ERRORS, True) / (c.k * c.n_items * c.confusion.shape[-1])


def _wins(c: CellSums) -> np.ndarray:
    return c.difference(WINS_AT) / c.n_items


def _divergence(at: int, scale: float = 1.0) -> Callable[[CellSums], np.ndarray]:
    """A divergence delta (B's minus A's), its per-item terms divided by ``scale`` (a change of log base)."""
    return lambda c: c.difference(at, True) / (FIXED * c.n_items * scale)


def _weighted(column: int) -> Callable[[CellSums], np.ndarray]:
    """Weighted precision (column 0) or F1 (column 1), A's minus B's, from the confusion matrices."""
    return lambda c: _weighted_deltas(np.ascontiguousarray(c.confusion), c.n_items)[:, column]


def _recall_weighted(c: CellSums) -> np.ndarray:
    """Weighted recall is accuracy (``sum_c (s_c / N)(TP_c / s_c) = sum_c TP_c / N``), from the same integers."""
    hits = np.trace(c.confusion, axis1=-2, axis2=-1)
    return (hits[:, 0] - hits[:, 1]) / c.n_items


def _macro(kind: str, all_labels: bool = False) -> Callable[[CellSums], np.ndarray]:
    """Macro-averaged precision, recall or F1, A's minus B's: the plain mean over the labels that G's or the
    model's votes use (scikit-learn's ``average="macro", zero_division=0``, ``labels=None``), or with
    ``all_labels`` over all C labels (``labels=range(C)``: an absent label counts 0)."""
    def delta(c: CellSums) -> np.ndarray:
        score = macro_scores(c.confusion, kind, all_labels)
        return score[:, 0] - score[:, 1]
    return delta


def macro_scores(confusion: np.ndarray, kind: str, all_labels: bool = False) -> np.ndarray:
    """Macro precision, recall or F1 of (... x labels x labels) confusion matrices, truth by prediction: over the
    labels used, or over all of them (``all_labels``)."""
    support = confusion.sum(-1).astype(float)
    predicted = confusion.sum(-2).astype(float)
    hits = np.diagonal(confusion, axis1=-2, axis2=-1).astype(float)
    bottom = {"precision": predicted, "recall": support, "f1": (support + predicted) / 2}[kind]
    present = support + predicted > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        per_class = np.where(bottom > 0, hits / bottom, 0.0)
    return per_class.sum(-1) / (confusion.shape[-1] if all_labels else present.sum(-1))


def _share_bound(n_labels: int) -> float:
    return 1.0  # a difference of two shares


def _mae_bound(n_labels: int) -> float:
    return 2 / n_labels  # two laws differ by at most 2 in total over the labels


def _jsd_bound(n_labels: int) -> float:
    return math.sqrt(LN2)  # the Jensen-Shannon distance in nats


def _unbounded(n_labels: int) -> float:
    return math.inf


@dataclass(frozen=True)
class Metric:
    """One metric, declared once: its name, label, direction and family, and how a cell's sums become its deltas.

    ``family`` is ``"vote"`` for metrics of plurality votes and ``"distribution"`` for metrics of label
    distributions. ``delta`` is always oriented so that positive means A is better, whatever the direction.
    ``continuous``: it takes so many values per cell that ties are rare (the calibration's size check pools these);
    ``quotients``: its score is a sum of per-class quotients, whose ties :mod:`analysis.engine.exact` settles;
    ``default``: one of the eight of the methods page that every run simulates; ``paper``: the paper's column it
    stands for (the methods page compares the variants of a column with the paper's numbers); ``counted``: its
    score is a share of items (a whole count over the items); ``bound``: the largest ``|delta|`` can be, given the
    number of labels (a share's difference is at most 1).
    """

    name: str
    label: str
    higher_is_better: bool
    family: str
    delta: Callable[[CellSums], np.ndarray]
    continuous: bool = False
    quotients: bool = False
    default: bool = True
    paper: str = ""
    counted: bool = False
    bound: Callable[[int], float] = _share_bound

    @property
    def column(self) -> str:
        """The paper's column this metric is compared with."""
        return self.paper or self.name


#: Every metric, the one declaration every module reads; the first eight are the paper's, in its column order.
REGISTRY: tuple[Metric, ...] = (
    Metric("accuracy", "Accuracy", True, "vote", _accuracy, counted=True),
    Metric("mae", "MAE", False, "distribution", _mae, bound=_mae_bound),
    Metric("wins", "Wins", True, "distribution", _wins),
    Metric("precision", "Precision", True, "vote", _weighted(0), quotients=True),
    Metric("recall", "Recall", True, "vote", _recall_weighted, counted=True),
    Metric("f1", "F1-Score", True, "vote", _weighted(1), quotients=True),
    Metric("kl_div", "KL-Div", False, "distribution", _divergence(KL_AT), continuous=True,
           bound=_unbounded),
    Metric("jsd", "JSD", False, "distribution", _divergence(JSD_AT), continuous=True,
           bound=_jsd_bound),
    Metric("precision_macro", "Precision (macro)", True, "vote", _macro("precision"), quotients=True,
           default=False, paper="precision"),
    Metric("recall_macro", "Recall (macro)", True, "vote", _macro("recall"), quotients=True, default=False,
           paper="recall"),
    Metric("f1_macro", "F1-Score (macro)", True, "vote", _macro("f1"), quotients=True, default=False,
           paper="f1"),
    # the macro average over all C labels, an absent one counting 0 (scikit-learn's labels=range(C))
    *(Metric(f"{kind}_macro_all", f"{label} (macro, all labels)", True, "vote", _macro(kind, True), quotients=True,
             default=False, paper=kind) for kind, label in (("precision", "Precision"), ("recall", "Recall"),
                                                              ("f1", "F1-Score"))),
    # micro averaging over single-label votes counts every item once: precision, recall and F1 all equal accuracy
    Metric("precision_micro", "Precision (micro)", True, "vote", _accuracy, default=False, paper="precision", counted=True),
    Metric("recall_micro", "Recall (micro)", True, "vote", _accuracy, default=False, paper="recall", counted=True),
    Metric("f1_micro", "F1-Score (micro)", True, "vote", _accuracy, default=False, paper="f1", counted=True),
    Metric("kl_div_bits", "KL-Div (bits)", False, "distribution", _divergence(KL_AT, LN2), continuous=True,
           default=False, paper="kl_div", bound=_unbounded),
    Metric("jsd_bits", "JSD (bits)", False, "distribution", _divergence(JSD_AT, math.sqrt(LN2)), continuous=True,
           default=False, paper="jsd"),
)
BY_NAME: dict[str, Metric] = {m.name: m for m in REGISTRY}
ALL_METRICS: tuple[str, ...] = tuple(m.name for m in REGISTRY)
METRICS: tuple[str, ...] = tuple(m.name for m in REGISTRY if m.default)  # what every run simulates
METRIC_LABELS: dict[str, str] = {m.name: m.label for m in REGISTRY}
VOTE_METRICS: tuple[str, ...] = tuple(m.name for m in REGISTRY if m.default and m.family == "vote")
DISTRIBUTION_METRICS: tuple[str, ...] = tuple(m.name for m in REGISTRY if m.default and m.family == "distribution")
CONTINUOUS_METRICS: tuple[str, ...] = tuple(m.name for m in REGISTRY if m.continuous)
QUOTIENT_METRICS: tuple[str, ...] = tuple(m.name for m in REGISTRY if m.quotients)
AVERAGINGS = ("weighted", "macro", "micro", "macro-all")  # macro: over the labels used; macro-all: over all


def averaged(averaging: str) -> tuple[str, ...]:
    """The eight metrics with precision, recall and F1 averaged by ``averaging`` (the methods page's switch)."""
    if averaging not in AVERAGINGS:
        raise ParameterError(f"unknown averaging {averaging!r}; choose one of {', '.join(AVERAGINGS)}")
    if averaging == "weighted":
        return METRICS
    suffix = averaging.replace("-", "_")
    return tuple(f"{m}_{suffix}" if m in ("precision", "recall", "f1") else m for m in METRICS)


def check_smoothing(smoothing: float) -> float:
    """The KL and JSD smoothing constant, one of :data:`SMOOTHINGS`."""
    if float(smoothing) not in SMOOTHINGS:
        raise ParameterError(f"smoothing must be one of {', '.join(map(str, SMOOTHINGS))}, got {smoothing}")
    return float(smoothing)


def check_metrics(metrics) -> tuple[str, ...]:
    """Normalise a metric selection (names or labels of any metric of the registry) to names in registry order.
    ``"all"`` depends on the averaging chosen: :func:`analysis.experiment.choices.selected` resolves it."""
    if metrics is None or metrics == "all" or list(metrics) == ["all"]:
        raise ParameterError("'all' depends on the averaging: resolve it with analysis.experiment.choices.selected")
    by_label = {label.lower(): name for name, label in METRIC_LABELS.items()}
    chosen = set()
    for metric in [metrics] if isinstance(metrics, str) else metrics:
        key = str(metric).strip().lower()
        name = key if key in BY_NAME else by_label.get(key)
        if name is None:
            raise ParameterError(f"unknown metric {metric!r}; choose from {', '.join(ALL_METRICS)} or 'all'")
        chosen.add(name)
    return tuple(m for m in ALL_METRICS if m in chosen)


# ---------------------------------------------------------------- numpy (vectorised over replicates)

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


def scores(gold: np.ndarray, model: np.ndarray, smoothing: float = SMOOTHING, names=None) -> dict[str, np.ndarray]:
    """Per-replicate scores of one model against the gold, from counts of shape (..., items, labels): each metric of
    ``names`` (default: the whole registry), computed directly from its definition (only the terms those metrics
    need), and ``item_error``, the per-item error of Wins, where MAE or Wins is among them."""
    gold = np.asarray(gold, dtype=float)
    model = np.asarray(model, dtype=float)
    wanted = set(BY_NAME if names is None else names)
    n_labels = gold.shape[-1]
    out = {}
    if any(BY_NAME[m].family == "vote" for m in wanted):
        vote_g, vote_m = votes(gold), votes(model)
        accuracy = (vote_g == vote_m).mean(-1)
        out["accuracy"] = accuracy
        out["precision"], out["recall"], out["f1"] = _weighted_scores(vote_g, vote_m, n_labels)
        confusion = confusion_matrices(vote_g, vote_m, n_labels)
        for kind in ("precision", "recall", "f1"):
            out[f"{kind}_macro"] = macro_scores(confusion, kind)
            out[f"{kind}_macro_all"] = macro_scores(confusion, kind, True)
            out[f"{kind}_micro"] = accuracy
    if wanted & {"mae", "wins"}:
        k = gold.sum(-1)
        abs_diff = np.abs(model - gold)
        out["mae"] = abs_diff.mean((-1, -2)) / k.mean(-1)
        out["item_error"] = abs_diff.sum(-1) / (k * n_labels)  # summed as integers first: equal errors compare equal
    divergences = wanted & {"kl_div", "kl_div_bits", "jsd", "jsd_bits"}
    if divergences:
        p_g = (gold + smoothing) / (gold + smoothing).sum(-1, keepdims=True)
        p_m = (model + smoothing) / (model + smoothing).sum(-1, keepdims=True)
    if divergences & {"kl_div", "kl_div_bits"}:
        kl = (p_g * np.log(p_g / p_m)).sum(-1)
        out["kl_div"], out["kl_div_bits"] = kl.mean(-1), (kl / LN2).mean(-1)
    if divergences & {"jsd", "jsd_bits"}:
        mid = (p_g + p_m) / 2
        js_div = np.maximum(((p_g * np.log(p_g / mid)).sum(-1) + (p_m * np.log(p_m / mid)).sum(-1)) / 2, 0.0)
        out["jsd"], out["jsd_bits"] = np.sqrt(js_div).mean(-1), np.sqrt(js_div / LN2).mean(-1)
    return out


def confusion_matrices(truth: np.ndarray, pred: np.ndarray, n_labels: int) -> np.ndarray:
    """(truth x prediction) counts of vote vectors, per replicate: shape (..., labels, labels)."""
    onehot_t = (truth[..., None] == np.arange(n_labels)).astype(np.int64)
    onehot_p = (pred[..., None] == np.arange(n_labels)).astype(np.int64)
    return np.einsum("...ic,...id->...cd", onehot_t, onehot_p)


def count_sums(gold: np.ndarray, a: np.ndarray, b: np.ndarray, smoothing: float = SMOOTHING) -> CellSums:
    """The stored sums of replicates given as counts of shape (replicates, items, labels), every item with the
    same number of responses ``K``: what the kernels store, computed in numpy."""
    gold, a, b = (np.asarray(x, dtype=np.int64) for x in (gold, a, b))
    n_items, n_labels = gold.shape[-2:]
    k = int(gold[(0,) * (gold.ndim - 1)].sum())
    if not all((x.sum(-1) == k).all() for x in (gold, a, b)):
        raise ParameterError("deltas needs the same number of responses K on every item of G, A and B")
    tables = divergence_tables(k, n_labels, smoothing)
    vote_g = votes(gold)

    def side(x):
        err = np.abs(x - gold).sum(-1)
        kl = tables.kl[gold, x].sum(-1)
        js = tables.js[gold, x].sum(-1)
        jsd = _jsd_table(js.reshape(-1, js.shape[-1])).reshape(js.shape)
        return (votes(x) == vote_g).sum(-1), err, kl.sum(-1), jsd.sum(-1), confusion_matrices(vote_g, votes(x),
                                                                                              n_labels)

    (hits_a, err_a, kl_a, jsd_a, conf_a), (hits_b, err_b, kl_b, jsd_b, conf_b) = side(a), side(b)
    sums = np.stack([hits_a, hits_b, err_a.sum(-1), err_b.sum(-1), (err_a < err_b).sum(-1), (err_b < err_a).sum(-1),
                     kl_a, kl_b, jsd_a, jsd_b], axis=-1).reshape(-1, SUMS)
    confusion = np.stack([conf_a, conf_b], axis=-3).reshape(-1, 2, n_labels, n_labels)
    return CellSums(sums, confusion, n_items, k)


def score_deltas(score_a: dict, score_b: dict, n_items: int, metrics=METRICS) -> dict[str, np.ndarray]:
    """Deltas of ``metrics`` from two models' direct :func:`scores` (for counts that are not whole numbers): each
    score's difference oriented by its direction, Wins from the per-item errors, and shares of items as whole
    counts over the items, so that their ties stay exact."""
    out = {}
    for name in metrics:
        metric = BY_NAME[name]
        if name == "wins":  # errors rounded to 12 decimals: the order of a sum over labels never decides a tie
            a, b = np.round(score_a["item_error"], 12), np.round(score_b["item_error"], 12)
            out[name] = ((a < b).sum(-1) - (b < a).sum(-1)) / n_items
        elif metric.counted:
            out[name] = (np.rint(score_a[name] * n_items) - np.rint(score_b[name] * n_items)) / n_items
        else:
            out[name] = (score_a[name] - score_b[name]) * (1 if metric.higher_is_better else -1)
    return out


def cell_deltas(cell: CellSums, metrics=METRICS) -> np.ndarray:
    """The deltas of ``metrics`` (replicates x metrics, in that order) from a cell's stored sums. Deltas of sums of
    quotients are floats here; :func:`analysis.engine.exact.settle` makes their ties exact."""
    out = np.empty((len(cell.sums), len(metrics)))
    for m, name in enumerate(metrics):
        out[:, m] = BY_NAME[name].delta(cell)
    return out


def deltas(gold: np.ndarray, a: np.ndarray, b: np.ndarray, metrics=METRICS,
           smoothing: float = SMOOTHING) -> dict[str, np.ndarray]:
    """Score differences, oriented so that positive means A is better, for ``metrics``, with ties exact.

    Counts have shape (..., items, labels), every item with the same number of responses ``K``. As in the kernels,
    each delta is an integer difference over one denominator (divergences in units of ``1 / FIXED``), and deltas
    of sums of quotients are exact fractions rounded once (:mod:`analysis.engine.exact`), so equal exact deltas are
    equal floats.
    """
    from analysis.engine.exact import exact_deltas

    gold = np.asarray(gold)
    shape = gold.shape[:-2]
    cell = count_sums(gold, a, b, smoothing)
    out = {}
    for name in metrics:
        column = exact_deltas(cell.confusion, name) if BY_NAME[name].quotients else BY_NAME[name].delta(cell)
        out[name] = np.asarray(column).reshape(shape)
    return out


# ---------------------------------------------------------------- the kernels' accumulator

class DivergenceTables(NamedTuple):
    """Per-class KL and Jensen-Shannon terms indexed by the gold's and the model's counts (:func:`divergence_tables`)."""

    kl: np.ndarray
    js: np.ndarray


def divergence_tables(k: int, n_labels: int, smoothing: float = SMOOTHING) -> DivergenceTables:
    """Per-class KL and Jensen-Shannon terms of smoothed shares, indexed by the two integer counts, in units of
    ``1 / FIXED`` (int64).

    ``kl[g, x] = p(g) * log(p(g) / p(x))`` and ``js[g, x] = p(g) log(p(g) / m) + p(x) log(p(x) / m)`` with
    ``p(n) = (n + s) / (k + n_labels * s)`` (``s`` the smoothing) and ``m = (p(g) + p(x)) / 2``; summing them over
    classes gives an item's KL divergence and twice its Jensen-Shannon divergence. Each term is rounded once to the
    grid of ``2**-32`` (an error below ``1.2e-10`` per term), so an item's terms, and a replicate's items, add up
    exactly in any order: two replicates whose exact sums are equal get equal deltas (the methods page).
    """
    counts = np.arange(k + 1) + smoothing
    share = counts / (k + n_labels * smoothing)
    log_share = np.log(share)
    p_g, p_x = share[:, None], share[None, :]
    log_mid = np.log((counts[:, None] + counts[None, :]) / (2 * (k + n_labels * smoothing)))
    kl = p_g * (log_share[:, None] - log_share[None, :])
    js = p_g * (log_share[:, None] - log_mid) + p_x * (log_share[None, :] - log_mid)
    return DivergenceTables(np.rint(kl * FIXED).astype(np.int64), np.rint(js * FIXED).astype(np.int64))


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


@numba.njit(cache=True)
def _weighted_deltas(confusion, n_items):
    """Per replicate, the weighted precision and F1 deltas (A minus B) of its two confusion matrices."""
    out = np.empty((confusion.shape[0], 2))
    for r in range(confusion.shape[0]):
        prec_a, f1_a = _weighted_from_confusion(confusion[r, 0], n_items)
        prec_b, f1_b = _weighted_from_confusion(confusion[r, 1], n_items)
        out[r, 0] = prec_a - prec_b
        out[r, 1] = f1_a - f1_b
    return out


class Accumulator(NamedTuple):
    """A replicate's running integer sums (SUMS of them) and the confusion matrices of A's and B's votes."""

    sums: np.ndarray
    conf_a: np.ndarray
    conf_b: np.ndarray


class PairTerms(NamedTuple):
    """What a slot adds, per row of the pair tables (:func:`pair_tables`): each count vector's vote, and per
    (gold, model) pair of rows its absolute error, KL divergence and Jensen-Shannon distance."""

    vote: np.ndarray
    err: np.ndarray
    kl: np.ndarray
    jsd: np.ndarray


@numba.njit(cache=True)
def accumulator(n_labels):
    """A replicate's :class:`Accumulator`, zeroed."""
    return Accumulator(np.zeros(SUMS, dtype=np.int64), np.zeros((n_labels, n_labels), dtype=np.int64),
                       np.zeros((n_labels, n_labels), dtype=np.int64))


@numba.njit(cache=True, inline="always")
def clear(acc):
    """Set a replicate's accumulator back to zero."""
    acc.sums[:] = 0
    acc.conf_a[:] = 0
    acc.conf_b[:] = 0


@numba.njit(cache=True, inline="always")
def _add(acc, vg, va, vb, err_a, err_b, kl_a, kl_b, jsd_a, jsd_b, weight):
    """Add ``weight`` slots with these votes and terms: the one writer of the running sums."""
    acc.conf_a[ix(vg), ix(va)] += weight
    acc.conf_b[ix(vg), ix(vb)] += weight
    sums = acc.sums
    sums[HITS] += weight * (va == vg)
    sums[HITS + 1] += weight * (vb == vg)
    sums[ERRORS] += weight * err_a
    sums[ERRORS + 1] += weight * err_b
    sums[WINS_AT] += weight * (err_a < err_b)
    sums[WINS_AT + 1] += weight * (err_b < err_a)
    sums[KL_AT] += weight * kl_a
    sums[KL_AT + 1] += weight * kl_b
    sums[JSD_AT] += weight * jsd_a
    sums[JSD_AT + 1] += weight * jsd_b


@numba.njit(cache=True, inline="always")
def add_item(g, a, b, j, divergence, acc, weight):
    """Add ``weight`` copies of item ``j`` of counts ``g``, ``a``, ``b`` to a replicate's accumulator.

    One pass over the classes computes the plurality votes (ties to the lowest code), the absolute errors and the
    divergence terms; the votes are selects rather than branches, which the processor cannot predict on random
    counts. ``divergence`` comes from :func:`divergence_tables` for the same ``k``.
    """
    kl_table, js_table = divergence.kl, divergence.js
    n_labels = g.shape[1]
    mg, ma, mb = g[j, 0], a[j, 0], b[j, 0]
    vg = va = vb = 0
    err_a = abs(ma - mg)
    err_b = abs(mb - mg)
    ka = kl_table[ix(mg), ix(ma)]
    kb = kl_table[ix(mg), ix(mb)]
    ja = js_table[ix(mg), ix(ma)]
    jb = js_table[ix(mg), ix(mb)]
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
        ka += kl_table[ix(ng), ix(na)]
        kb += kl_table[ix(ng), ix(nb)]
        ja += js_table[ix(ng), ix(na)]
        jb += js_table[ix(ng), ix(nb)]
    _add(acc, vg, va, vb, err_a, err_b, ka, kb, jsd_units(ja), jsd_units(jb), weight)


def pair_tables(comp: np.ndarray, k: int, smoothing: float = SMOOTHING) -> PairTerms:
    """Per-item metric terms for every (gold, model) pair of the count vectors ``comp`` of ``k`` responses each,
    as :func:`add_item` computes them, indexed by row of ``comp``."""
    tables = divergence_tables(k, comp.shape[1], smoothing)
    gold, model = comp[:, None, :], comp[None, :, :]
    err = np.abs(model - gold).sum(2)
    kl = tables.kl[gold, model].sum(2)
    jsd = _jsd_table(tables.js[gold, model].sum(2))
    return PairTerms(comp.argmax(1), err, kl, jsd)


@numba.njit(cache=True, inline="always")
def add_pair(tg, ta, tb, terms, acc, weight):
    """:func:`add_item` from :func:`pair_tables`: ``weight`` items whose count vectors are rows ``tg`` (gold),
    ``ta`` and ``tb`` of the tables' ``comp``."""
    tg, ta, tb = ix(tg), ix(ta), ix(tb)  # indices only
    _add(acc, terms.vote[tg], terms.vote[ta], terms.vote[tb], terms.err[tg, ta], terms.err[tg, tb],
         terms.kl[tg, ta], terms.kl[tg, tb], terms.jsd[tg, ta], terms.jsd[tg, tb], weight)


@numba.njit(cache=True, inline="always")
def pair_rows(terms):
    """How many count vectors the pair terms number."""
    return terms.vote.shape[0]


@numba.njit(cache=True)
def store(acc, sums, confusion):
    """End a replicate: copy its sums into ``sums`` and its two confusion matrices into ``confusion``
    (2 x labels x labels), from which :func:`cell_deltas` computes any metric."""
    sums[:] = acc.sums
    confusion[0] = acc.conf_a
    confusion[1] = acc.conf_b
