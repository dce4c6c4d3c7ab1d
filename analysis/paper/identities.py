"""Identities that the paper's own numbers obey, and what each reveals about a choice the paper leaves unstated.

the methods page. Each function reads the paper's tables (or a hand-made table of the same columns: ``table``,
``dataset``, ``sampler``, ``metric``, ``NK``, ``K``, ``p_value``, ``delta``) and returns an :class:`Inference`: the
answer, the cells it rests on, the candidates it weighed, and a printable explanation with the arithmetic.

* :func:`kl_smoothing`: at K = 1 both laws are one-hot, so the smoothed KL of an item is ``log(1/s)`` when the
  labels differ and 0 when they agree (to O(s)); two cells of one run at the same (NK, K = 1) give
  ``Δ_KL / Δ_acc = log(1/s)``, which names ``s`` and the base of the logarithm.
* :func:`appendix_epsilon`: the paper's Table 1 Δ over its appendix Δ (same run and metric, same K) against our
  engine's ``Δ(0.3) / Δ(e)`` at the same cells; the ``e`` closest in most cells is the appendix's ε.
* :func:`averaging`: weighted recall and micro F1 equal accuracy in every replicate, so a Recall (F1) Δ that differs
  from the Accuracy Δ of the same run and K beyond rounding and Monte Carlo error is not weighted (not micro).
* :func:`agreement_moment`: at K = 1, ``Δ_acc = ε (E[Σ p²] − E[Σ p η])`` exactly, so each K = 1 accuracy cell gives
  the data's ``E[Σ_c p_c²]`` once the noise law is fixed (:data:`LAWS`).

Printed values carry three decimals, so each is known to within :data:`HALF_UNIT`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from analysis.data import datasets, synthetic
from analysis.paper import tables
from analysis.paper.effect_sizes import REGISTRY_NAMES, TABLE_NAMES, paper_name, paper_table
from analysis.data.synthetic import STAND_INS
from analysis.engine.metrics import METRIC_LABELS

HALF_UNIT = 0.0005  # half a unit of the printed third decimal
SMOOTHINGS = ((1e-12, "e"), (1e-9, "e"), (1e-12, "2"), (1e-9, "2"))  # (s, base of the logarithm)
APPENDIX_CANDIDATES = (0.1, 0.2, 0.4)
LAWS = ("dirichlet", "centred", "uniform")


@dataclass
class Inference:
    """What an identity infers: ``answer``, the cells it rests on (``evidence``), the candidates weighed
    (``fits``, where there are candidates) and ``explanation``, the arithmetic as text (what ``str`` prints)."""

    question: str
    answer: object
    evidence: pd.DataFrame
    explanation: str
    fits: pd.DataFrame | None = None

    def __str__(self) -> str:
        return f"{self.question}\n{self.explanation}"


def _table(table: pd.DataFrame | None) -> pd.DataFrame:
    """The paper's two tables when ``table`` is None; a hand-made one gets ``table = "table1"`` if it has none."""
    if table is None:
        return paper_table()
    return table if "table" in table.columns else table.assign(table="table1")


def _run(row) -> str:
    return (f"{row['dataset']} {row['sampler']} ({TABLE_NAMES.get(row['table'], row['table'])}, NK {int(row['NK'])}, "
            f"K {int(row['K'])})")


def _cells(n: int) -> str:
    return f"{n} cell" if n == 1 else f"{n} cells"


def _log(x: float, base: str) -> float:
    return math.log(x) if base == "e" else math.log2(x)


# --------------------------------------------------------------------------------------------- KL smoothing

def kl_smoothing(table: pd.DataFrame | None = None, candidates=SMOOTHINGS, half_unit: float = HALF_UNIT) -> Inference:
    """The KL smoothing ``s`` and log base from ``Δ_KL / Δ_acc = log(1/s)`` at cells sharing (run, NK, K = 1).

    ``evidence`` columns: ``table``, ``dataset``, ``sampler``, ``NK``, ``K``, ``accuracy``, ``kl_div``, ``ratio``,
    ``low``, ``high`` (the ratio's range under the printed digits' rounding), ``s_natural`` (``exp(-ratio)``),
    ``s_log2`` (``2**-ratio``). ``fits`` columns: ``s``, ``base``, ``log(1/s)``, ``cells within rounding``,
    ``mean |log(ratio / log(1/s))|``. ``answer``: ``{"s": ..., "base": ...}`` of the best candidate (most cells
    within rounding, then closest), or None without such cells.
    """
    table = _table(table)
    at_one = table[(table["K"] == 1) & table["metric"].isin(["accuracy", "kl_div"])].dropna(subset=["delta"])
    wide = at_one.pivot_table(index=["table", "dataset", "sampler", "NK", "K"], columns="metric", values="delta")
    wide = wide.dropna(subset=[m for m in ("accuracy", "kl_div") if m in wide.columns]).reset_index()
    if "kl_div" not in wide.columns or "accuracy" not in wide.columns or wide.empty:
        return Inference("KL smoothing", None, wide, "No run has Accuracy and KL-Div at the same (NK, K = 1).")
    acc, kl = wide["accuracy"], wide["kl_div"]
    wide["ratio"] = kl / acc
    wide["low"], wide["high"] = (kl - half_unit) / (acc + half_unit), (kl + half_unit) / (acc - half_unit)
    wide["s_natural"], wide["s_log2"] = np.exp(-wide["ratio"]), 2.0 ** -wide["ratio"]
    fits = pd.DataFrame([{"s": s, "base": base, "log(1/s)": _log(1 / s, base),
                          "cells within rounding": int(((wide["low"] <= _log(1 / s, base))
                                                        & (_log(1 / s, base) <= wide["high"])).sum()),
                          "mean |log(ratio / log(1/s))|": float(np.abs(np.log(wide["ratio"] / _log(1 / s, base)))
                                                                .mean())} for s, base in candidates])
    best = fits.sort_values(["cells within rounding", "mean |log(ratio / log(1/s))|"],
                            ascending=[False, True]).iloc[0]
    lines = [f"{_run(r)}: Δ_KL / Δ_acc = {r['kl_div']:.3f} / {r['accuracy']:.3f} = {r['ratio']:.2f} "
             f"({r['low']:.2f} to {r['high']:.2f} within the printed digits' rounding); as ln(1/s) that is "
             f"s = {r['s_natural']:.2g}, as log2(1/s) s = {r['s_log2']:.2g}." for _, r in wide.iterrows()]
    lines += [f"Candidate s = {f['s']:g} with log base {f['base']}: log(1/s) = {f['log(1/s)']:.2f}, within "
              f"rounding in {f['cells within rounding']} of {_cells(len(wide))}." for _, f in fits.iterrows()]
    lines.append(f"Best fit: s = {best['s']:g} with the {'natural' if best['base'] == 'e' else 'base-2'} log.")
    return Inference("KL smoothing: Δ_KL / Δ_acc = log(1/s) at K = 1", {"s": float(best["s"]), "base": best["base"]},
                     wide, "\n".join(lines), fits)


# --------------------------------------------------------------------------------------------- appendix ε

def appendix_pairs(table: pd.DataFrame | None = None, max_k_ratio: float = 1.0) -> pd.DataFrame:
    """(run, metric) cells printed in both Table 1 and the appendix at K within a factor ``max_k_ratio``.

    Columns: ``dataset``, ``sampler``, ``metric``, ``NK_table1``, ``K_table1``, ``delta_table1``, ``NK_appendix``,
    ``K_appendix``, ``delta_appendix``, ``paper_ratio`` (Table 1 over appendix).
    """
    table = _table(table).dropna(subset=["delta"])
    keep = ["dataset", "sampler", "metric", "NK", "K", "delta"]
    both = table[table["table"] == "table1"][keep].merge(table[table["table"] == "appendix"][keep],
                                                          on=["dataset", "sampler", "metric"],
                                                          suffixes=("_table1", "_appendix"))
    k_ratio = np.maximum(both["K_table1"] / both["K_appendix"], both["K_appendix"] / both["K_table1"])
    both = both[(k_ratio <= max_k_ratio) & (both["delta_table1"] > 0) & (both["delta_appendix"] > 0)].copy()
    both["paper_ratio"] = both["delta_table1"] / both["delta_appendix"]
    return both.reset_index(drop=True)


def epsilon_cells(pairs: pd.DataFrame, candidates: Iterable[float] = APPENDIX_CANDIDATES,
                  reference: float = tables.PAPER_EPSILON) -> pd.DataFrame:
    """The cells our engine simulates to read ``Δ(reference) / Δ(e)`` for :func:`appendix_pairs`: each Table 1
    cell at ``reference`` and each appendix cell at every candidate. Columns: ``dataset``, ``sampler``,
    ``metric``, ``epsilon``, ``NK``, ``K``, ``N`` (as :func:`analysis.paper.effect_sizes.cells_to_simulate` reads)."""
    rows = []
    for p in pairs.itertuples():
        rows.append((p.dataset, p.sampler, p.metric, float(reference), int(p.NK_table1), int(p.K_table1)))
        rows += [(p.dataset, p.sampler, p.metric, float(e), int(p.NK_appendix), int(p.K_appendix))
                 for e in candidates]
    out = pd.DataFrame(rows, columns=["dataset", "sampler", "metric", "epsilon", "NK", "K"]).drop_duplicates()
    return out.assign(N=out["NK"] // out["K"]).reset_index(drop=True)


def _ours(ours: pd.DataFrame) -> pd.Series:
    """Our Δ, averaged over seeds, keyed by (paper dataset, sampler, metric, ε, NK, K)."""
    frame = ours.assign(dataset=ours["dataset"].map(paper_name), epsilon=ours["epsilon"].round(9))
    return frame.groupby(["dataset", "sampler", "metric", "epsilon", "NK", "K"])["delta"].mean()


def appendix_epsilon(ours: pd.DataFrame, table: pd.DataFrame | None = None,
                     candidates: Iterable[float] = APPENDIX_CANDIDATES, reference: float = tables.PAPER_EPSILON,
                     max_k_ratio: float = 1.0) -> Inference:
    """The appendix's ε: the candidate ``e`` whose ``Δ(reference) / Δ(e)`` (ours) is closest to the paper's Table 1
    Δ over appendix Δ in the most cells (ties: the smaller median distance).

    ``ours``: our Δ at the cells of :func:`epsilon_cells`, columns ``dataset`` (paper or stand-in name),
    ``sampler``, ``metric``, ``epsilon``, ``NK``, ``K``, ``delta`` (several seeds are averaged). ``evidence``
    columns: those of :func:`appendix_pairs`, ``ours at e`` per candidate, ``closest``. ``fits`` columns:
    ``epsilon``, ``cells closest``, ``median |log(paper / ours)|``.
    """
    candidates = [float(e) for e in candidates]
    pairs = appendix_pairs(table, max_k_ratio)
    by_cell = _ours(ours)

    def at(p, which, e):
        key = (p["dataset"], p["sampler"], p["metric"], round(e, 9), p[f"NK_{which}"], p[f"K_{which}"])
        return by_cell.get(key, np.nan)

    for e in candidates:
        pairs[f"ours at {e:g}"] = [at(p, "table1", reference) / at(p, "appendix", e) for _, p in pairs.iterrows()]
    columns = [f"ours at {e:g}" for e in candidates]
    ratios = pairs[columns].where(pairs[columns] > 0)
    distance = np.abs(np.log(ratios.to_numpy(float) / pairs["paper_ratio"].to_numpy(float)[:, None]))
    usable = ~np.isnan(distance).all(axis=1)
    closest = np.full(len(pairs), np.nan)
    closest[usable] = np.asarray(candidates)[np.nanargmin(distance[usable], axis=1)]
    pairs["closest"] = closest
    fits = pd.DataFrame({"epsilon": candidates, "cells closest": [int((closest == e).sum()) for e in candidates],
                         "median |log(paper / ours)|": [float(np.nanmedian(distance[:, j])) if usable.any()
                                                        else np.nan for j in range(len(candidates))]})
    if not usable.any():
        return Inference("The appendix's ε", None, pairs, "No cell pairs Table 1 with the appendix and our Δ.", fits)
    best = fits.sort_values(["cells closest", "median |log(paper / ours)|"], ascending=[False, True]).iloc[0]
    lines = [f"{p['dataset']} {p['sampler']} {METRIC_LABELS[p['metric']]} (K {p['K_table1']} and {p['K_appendix']}): "
             f"the paper's {p['delta_table1']:.3f} / {p['delta_appendix']:.3f} = {p['paper_ratio']:.2f}; ours "
             f"Δ({reference:g}) / Δ(ε) = " + ", ".join(f"{p[c]:.2f} (ε = {e:g})" for e, c in zip(candidates, columns))
             + (f"; closest ε = {p['closest']:g}." if not np.isnan(p["closest"]) else "; not usable.")
             for _, p in pairs.iterrows()]
    closest_counts = ", ".join(f"ε = {e:g}: {n}" for e, n in zip(fits["epsilon"], fits["cells closest"]))
    lines.append(f"Cells closest: {closest_counts} of {int(usable.sum())}. The appendix's ε is most likely "
                 f"{best['epsilon']:g}.")
    return Inference("The appendix's ε: Table 1 Δ / appendix Δ against our Δ(0.3) / Δ(ε)", float(best["epsilon"]),
                     pairs, "\n".join(lines), fits)


def epsilon_sentence(found: Inference) -> str:
    """What :func:`appendix_epsilon` found, as one clause for the differences page: the closest candidate and in how
    many pairs, and the range of Table 1's Δ over the appendix's in the paper's pairs and in ours at that ε, each
    end named by its cell, computed here so that no page prints the ranges from its own prose."""
    if found.answer is None:
        return "no pair of cells could be read"
    closest = found.fits.set_index("epsilon")["cells closest"]
    pairs = found.evidence
    column = f"ours at {found.answer:g}"

    def ends(values: pd.Series) -> str:
        values = values.dropna()
        low, high = (pairs.loc[values.idxmin()], values.min()), (pairs.loc[values.idxmax()], values.max())
        return " to ".join(f"{v:.2f} ({p['dataset']} {p['sampler']} {METRIC_LABELS[p['metric']]})"
                           for p, v in (low, high))
    return (f"ε = {found.answer:g} is the closest candidate in {closest[found.answer]} of {int(closest.sum())} "
            f"pairs of cells; the ratio of Table 1's Δ to the appendix's runs from {ends(pairs['paper_ratio'])} in "
            f"the paper's pairs, and ours (reference choices, first seed), Δ({tables.PAPER_EPSILON:g}) / "
            f"Δ({found.answer:g}), from "
            f"{ends(pairs[column])}")


# --------------------------------------------------------------------------------------------- averaging

IDENTITIES = {"recall": ("weighted", "weighted recall"), "f1": ("micro", "micro F1")}


def averaging(table: pd.DataFrame | None = None, n_replicates: int = 1000, z: float = 3.0,
              half_unit: float = HALF_UNIT) -> Inference:
    """Whether the paper's Recall is support-weighted and its F1 micro-averaged: both would equal Accuracy.

    Compared per run at the same K: at the same NK (the same replicates), Δ and p would agree to the printed
    digits; at another NK, Δ would agree in expectation, within rounding plus ``z`` Monte Carlo standard errors
    bounded as for items drawn independently (each item's difference lies in [-1, 1], so the standard error of
    Δ is at most ``1 / sqrt(N · n_replicates)``; an approximation where raters span items). ``evidence`` columns:
    ``table``, ``dataset``, ``sampler``, ``metric``, ``NK``, ``K``, ``delta``, ``p_value``, ``accuracy_NK``,
    ``accuracy_delta``, ``accuracy_p``, ``same_cell``, ``difference``, ``tolerance``, ``differs``,
    ``p_differs`` (same cell only). ``answer``: per metric, ``"not <averaging>"``, ``"consistent with
    <averaging>"`` or ``"no evidence"``.
    """
    table = _table(table).dropna(subset=["delta"])
    acc = table[table["metric"] == "accuracy"][["table", "dataset", "sampler", "K", "NK", "delta", "p_value"]]
    acc = acc.rename(columns={"NK": "accuracy_NK", "delta": "accuracy_delta", "p_value": "accuracy_p"})
    rows = table[table["metric"].isin(list(IDENTITIES))][["table", "dataset", "sampler", "metric", "NK", "K",
                                                          "delta", "p_value"]]
    ev = rows.merge(acc, on=["table", "dataset", "sampler", "K"])
    ev["same_cell"] = ev["NK"] == ev["accuracy_NK"]
    ev["difference"] = ev["delta"] - ev["accuracy_delta"]
    n_items, n_acc = ev["NK"] // ev["K"], ev["accuracy_NK"] // ev["K"]
    mc = z * np.sqrt(1 / (n_items * n_replicates) + 1 / (n_acc * n_replicates))
    ev["tolerance"] = 2 * half_unit + np.where(ev["same_cell"], 0.0, mc)
    ev["differs"] = ev["difference"].abs() > ev["tolerance"] + 1e-12
    ev["p_differs"] = ev["same_cell"] & ~np.isclose(ev["p_value"], ev["accuracy_p"], rtol=0, atol=1e-9)
    answer, lines = {}, []
    for metric, (kind, name) in IDENTITIES.items():
        chosen = ev[ev["metric"] == metric]
        for _, r in chosen.iterrows():
            where = "the same cell" if r["same_cell"] else f"accuracy at NK {int(r['accuracy_NK'])}"
            p_text = (f"; p {r['p_value']:.3f} against {r['accuracy_p']:.3f}"
                      + (" differ, so they differ in some replicates" if r["p_differs"] else " agree")
                      if r["same_cell"] else "")
            lines.append(f"{_run(r)}, {METRIC_LABELS[metric]} against {where}: Δ {r['delta']:.3f} − "
                         f"{r['accuracy_delta']:.3f} = "
                         f"{r['difference']:+.3f}, tolerance {r['tolerance']:.3f}: "
                         f"{'differs' if r['differs'] else 'equal'}{p_text}.")
        against = chosen["differs"] | chosen["p_differs"]
        answer[metric] = ("no evidence" if chosen.empty else f"not {kind}" if against.any()
                          else f"consistent with {kind}")
        lines.append(f"{name[0].upper()}{name[1:]} would equal accuracy: {int(against.sum())} of {_cells(len(chosen))} "
                     f"contradict it, so the paper's {METRIC_LABELS[metric]} is {answer[metric]}.")
    return Inference("Averaging of Recall and F1: weighted recall and micro F1 equal accuracy", answer,
                     ev.reset_index(drop=True), "\n".join(lines))


# --------------------------------------------------------------------------------------------- E[Σ p²]

def label_shares(dataset: str) -> dict[int, tuple]:
    """Label shares per granularity for a paper dataset, from its default stand-in: ``{C: shares}`` for its own
    labels and, where the published fit is binary, ``{2: (negative, positive)}`` at the published split."""
    spec = STAND_INS[datasets.PAPER_STAND_INS[REGISTRY_NAMES[dataset]]]
    out = {len(spec.labels): tuple(spec.label_shares)}
    if spec.positive:
        positive = sum(s for label, s in zip(spec.labels, spec.label_shares) if label in spec.positive)
        out[2] = (1 - positive, positive)
    return out


RULE_OF_LAW = dict(zip(LAWS, ("dirichlet", "dirichlet-shares", "uniform")))  # each law's perturbation rule


def _rule(law: str, shares: tuple):
    from analysis.engine.rule import make_rule

    if law not in RULE_OF_LAW:
        raise ValueError(f"unknown noise law {law!r}; choose from {LAWS}")
    return make_rule(RULE_OF_LAW[law], np.asarray(shares, dtype=float))


def noise_term(law: str, shares: tuple) -> float | None:
    """``E[Σ_c p_c η_c]`` under a noise law drawn independently of the item (None for the uniform rule, whose
    replacement depends on the response itself): ``1/C`` for Dirichlet(1/C, ..., 1/C), whose mean is 1/C per label;
    ``Σ π_c²`` for a law centred on the shares ``π``, since ``E[p_c] = π_c`` when ``π`` are item-averaged shares
    (:meth:`analysis.engine.rule.Rule.noise_agreement`)."""
    return _rule(law, shares).noise_agreement(np.asarray(shares, dtype=float))


def sum_p_squared(delta: float, epsilon: float, law: str, shares: tuple) -> float:
    """``E[Σ_c p_c²]`` that an accuracy Δ at K = 1 implies (:meth:`analysis.engine.rule.Rule.sum_p2`). Dirichlet and
    centred laws: ``Δ = ε (E[Σ p²] − E[Σ p η])``, so ``E[Σ p²] = Δ / ε + E[Σ p η]``. Uniform rule (a response
    replaced by one of the ``C − 1`` other labels): ``Δ = ε (C E[Σ p²] − 1) / (C − 1)``, so
    ``E[Σ p²] = (1 + (C − 1) Δ / ε) / C``."""
    return _rule(law, shares).sum_p2(delta / epsilon, np.asarray(shares, dtype=float))


def agreement_moment(table: pd.DataFrame | None = None, appendix_epsilon: float | None = None,
                     shares: Mapping[str, Mapping[int, tuple]] | None = None, laws: Iterable[str] = LAWS,
                     samplers: Iterable[str] = ("S2",), multiples: Mapping[str, float] | None = None) -> Inference:
    """The data's ``E[Σ_c p_c²]`` from each K = 1 accuracy-family cell, per dataset, granularity and noise law.

    At K = 1, G, A and B each give an item one label, drawn independently from its law ``p`` (A, G) or
    ``q = (1 − ε) p + ε η`` (B), so ``acc(A) − acc(B) = ε (Σ p² − Σ p η)`` per item in expectation.
    ``multiples``: metrics whose K = 1 Δ is a known multiple of the accuracy Δ (``{"kl_div": ln(1/s)}``); accuracy
    (1) always. The appendix is read only with ``appendix_epsilon``. ``shares``: ``{dataset: {C: shares}}``, default
    :func:`label_shares`. ``evidence`` columns: ``table``, ``dataset``, ``sampler``, ``metric``, ``NK``,
    ``epsilon``, ``delta``, ``accuracy_delta``, ``C``, ``law``, ``noise_term``, ``sum_p2``, ``possible`` (within
    ``[1/C, 1]``). ``answer``: ``{(dataset, C, law): mean sum_p2 over the cells}``.
    """
    factors = {"accuracy": 1.0, **(multiples or {})}
    table = _table(table).dropna(subset=["delta"])
    chosen = table[(table["K"] == 1) & table["metric"].isin(list(factors)) & table["sampler"].isin(list(samplers))]
    rows, lines = [], []
    for _, r in chosen.iterrows():
        epsilon = tables.PAPER_EPSILON if r["table"] == "table1" else appendix_epsilon
        if epsilon is None:
            continue
        acc = r["delta"] / factors[r["metric"]]
        options = (shares or {}).get(r["dataset"]) or label_shares(r["dataset"])
        for n_labels, law_shares in options.items():
            for law in laws:
                value = sum_p_squared(acc, epsilon, law, law_shares)
                term = noise_term(law, law_shares)
                rows.append({"table": r["table"], "dataset": r["dataset"], "sampler": r["sampler"],
                             "metric": r["metric"], "NK": int(r["NK"]), "epsilon": epsilon, "delta": r["delta"],
                             "accuracy_delta": acc, "C": n_labels, "law": law, "noise_term": term, "sum_p2": value,
                             "possible": 1 / n_labels - 1e-12 <= value <= 1 + 1e-12})
                arithmetic = (f"(1 + {n_labels - 1} × {acc:.4f} / {epsilon:g}) / {n_labels}" if term is None else
                              f"{acc:.4f} / {epsilon:g} + {term:.4f}")
                lines.append(f"{_run(r)}, {r['metric']}, C = {n_labels}, {law} noise: E[Σ p²] = {arithmetic} = "
                             f"{value:.3f}.")
    evidence = pd.DataFrame(rows, columns=["table", "dataset", "sampler", "metric", "NK", "epsilon", "delta",
                                           "accuracy_delta", "C", "law", "noise_term", "sum_p2", "possible"])
    answer = {key: float(v) for key, v in evidence.groupby(["dataset", "C", "law"])["sum_p2"].mean().items()}
    return Inference("E[Σ p²] from the K = 1 accuracy-family cells: Δ_acc = ε (E[Σ p²] − E[Σ p η])", answer,
                     evidence, "\n".join(lines) or "No K = 1 accuracy-family cell in these samplers.")


# --------------------------------------------------------------------------------------------- stand-ins v3

APPENDIX_EPSILON = 0.2  # what appendix_epsilon infers (23 of 23 pairs); the why-chapter reruns the inference


def granularity(table: pd.DataFrame | None = None) -> Inference:
    """Which label granularity the K = 1 accuracy-family cells allow: at each number of labels ``C`` they imply
    the empirical ``E[Σ p̂²]`` (:func:`v3_cells`), hence the laws' ``E[Σ p²]`` at the stand-in's ratings per item
    (:func:`analysis.data.synthetic.latent_moment`), which a Dirichlet with the published shares reaches only between
    ``Σ π²`` and 1; where it does, the concentration it needs sits beside the published one.

    ``evidence`` columns: ``dataset``, ``C``, ``cells``, ``sum_p_hat2`` (mean over the cells), ``ratings``,
    ``sum_p2``, ``floor`` (``Σ π²``), ``reachable``, ``a0`` (needed; NaN where unreachable), ``published_a0``.
    ``answer``: ``{dataset: "binary" | "levels" | None}`` (None: both or neither reachable).
    """
    cells = v3_cells(table)
    rows, lines, answer = [], [], {}
    for (dataset, n_labels), group in cells.groupby(["dataset", "C"], sort=False):
        spec = STAND_INS[datasets.PAPER_STAND_INS[REGISTRY_NAMES[dataset]]]
        shares = label_shares(dataset)[n_labels]
        empirical = float(group["sum_p2"].mean())
        ratings = synthetic.ratings_per_item(spec)
        latent, floor = synthetic.latent_moment(empirical, ratings), float(np.square(shares).sum())
        reachable = floor < latent < 1
        a0 = synthetic.concentration_for(latent, shares) if reachable else np.nan
        rows.append({"dataset": dataset, "C": n_labels, "cells": len(group), "sum_p_hat2": empirical,
                     "ratings": ratings, "sum_p2": latent, "floor": floor, "reachable": reachable, "a0": a0,
                     "published_a0": spec.published_a0})
        lines.append(f"{dataset}, C = {n_labels}: the {_cells(len(group))} at K = 1 give E[Σ p̂²] = {empirical:.3f}; "
                     f"at {ratings:g} ratings per item E[Σ p²] = ({ratings:g} × {empirical:.3f} − 1) / "
                     f"({ratings:g} − 1) = {latent:.3f}, against Σ π² = {floor:.3f}: "
                     + (f"a0 = (1 − {latent:.3f}) / ({latent:.3f} − {floor:.3f}) = {a0:.2f} (published "
                        f"{spec.published_a0:.2f})." if reachable else "below it, so no law with these shares "
                                                                      "gives the paper's number."))
    evidence = pd.DataFrame(rows, columns=["dataset", "C", "cells", "sum_p_hat2", "ratings", "sum_p2", "floor",
                                           "reachable", "a0", "published_a0"])
    for dataset, group in evidence.groupby("dataset", sort=False):
        ok = dict(zip(group["C"], group["reachable"]))
        binary = ok.get(2, False) and not any(v for c, v in ok.items() if c != 2)
        levels = not ok.get(2, False) and any(v for c, v in ok.items() if c != 2)
        answer[dataset] = "binary" if binary else "levels" if levels else None
        lines.append(f"{dataset}: the paper's cells fit {answer[dataset] or 'both or neither granularity'}.")
    return Inference("Label granularity: E[Σ p²] reachable at C labels", answer, evidence,
                     "\n".join(lines) or "No K = 1 accuracy-family cell.")


def v3_cells(table: pd.DataFrame | None = None) -> pd.DataFrame:
    """The cells stand-ins v3 are fitted on, with what each implies: every K = 1 Accuracy and KL-Div cell under S2
    (KL-Div as ``ln(1/s)`` times Accuracy, ``s`` from :func:`kl_smoothing`), the appendix at
    :data:`APPENDIX_EPSILON`, read under the Dirichlet(1/C) noise law at each granularity of
    :func:`label_shares`.

    Columns: those of :func:`agreement_moment`'s evidence and ``stand_in`` (the version 2 stand-in it sets).
    """
    smoothing = kl_smoothing(table).answer
    multiples = {"kl_div": _log(1 / smoothing["s"], smoothing["base"])} if smoothing else {}
    found = agreement_moment(table, APPENDIX_EPSILON, laws=("dirichlet",), multiples=multiples)
    return found.evidence.assign(stand_in=found.evidence["dataset"].map(
        lambda d: datasets.PAPER_STAND_INS[REGISTRY_NAMES[d]]))


_V3: dict[tuple[str, int], float] = {}


def v3_moments() -> dict[tuple[str, int], float]:
    """``E[Σ p̂²]`` per (version 2 stand-in name, number of labels), the mean over its :func:`v3_cells`
    (stand-ins without such cells are left out)."""
    if not _V3:
        cells = v3_cells()
        _V3.update({key: float(v) for key, v in cells.groupby(["stand_in", "C"])["sum_p2"].mean().items()})
    return dict(_V3)
