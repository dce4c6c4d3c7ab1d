"""How alike a dataset's items are: the concentration ``a0`` of a Dirichlet law of the per-item label shares.

An item's label law is modelled as ``p_i ~ Dirichlet(a)`` and its ``K_i`` ratings as ``Multinomial(K_i, p_i)``, so
the per-item counts follow a Dirichlet-multinomial law. :func:`fit` finds ``a`` by maximum likelihood (items may
have different ``K_i``), starting from the finite-K-corrected moment estimator of :func:`moment_concentration`.
Small ``a0``: most items clear-cut; large ``a0``: most items mixed. Each label's share alone is
``Beta(a_c, a0 - a_c)``, so every label, and every split of the labels into two sides, has the same ``a0``: a label
whose measured ``a0`` differs from the others' does not follow one Dirichlet law (:func:`split_concentrations`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import digamma, gammaln

from analysis.errors import DataError

LOG_BOUNDS = (-12.0, 14.0)  # log a_c: a0 above e**14 means no measurable spread beyond multinomial noise


@dataclass(frozen=True)
class Fit:
    """A Dirichlet-multinomial fit: ``a`` (one entry per label), its sum ``a0`` and the standard error of ``a0``."""

    a: np.ndarray
    a0_se: float

    @property
    def a0(self) -> float:
        return float(self.a.sum())


def _usable(counts) -> np.ndarray:
    counts = np.asarray(counts, dtype=np.int64)
    if counts.ndim != 2 or counts.shape[1] < 2:
        raise DataError(f"per-item label counts must be a 2-D array with at least two labels, got shape {counts.shape}")
    counts = counts[counts.sum(1) >= 2]  # an item with one rating says nothing about the spread
    if len(counts) < 2:
        raise DataError("at least two items with two or more ratings are needed to measure dispersion")
    return counts


def moment_concentration(counts) -> float:
    """``a0`` from the moments of the per-item shares, corrected for finite K (DATA.md), pooled over labels:
    ``a0 = sum_c m_c(1 - m_c) / sum_c v_c - 1`` with ``v_c = Var(p_hat_c) - E[p_hat_c(1 - p_hat_c) / (K - 1)]``."""
    counts = _usable(counts)
    k = counts.sum(1, keepdims=True)
    shares = counts / k
    m = shares.mean(0)
    v = shares.var(0, ddof=1) - (shares * (1 - shares) / (k - 1)).mean(0)
    return float((m * (1 - m)).sum() / v.sum() - 1) if v.sum() > 0 else np.inf


def _negative_log_likelihood(theta: np.ndarray, counts: np.ndarray, k: np.ndarray) -> tuple[float, np.ndarray]:
    a = np.exp(theta)
    a0 = a.sum()
    value = (gammaln(a0) - gammaln(k + a0)).sum() + (gammaln(counts + a) - gammaln(a)).sum()
    gradient = (digamma(a0) - digamma(k + a0)).sum() + (digamma(counts + a) - digamma(a)).sum(0)
    return -value, -gradient * a


def fit(counts) -> Fit:
    """Maximum-likelihood Dirichlet-multinomial fit to per-item label counts (items x labels).

    The standard error of ``a0`` comes from the observed information in ``log a`` (a finite-difference Hessian of
    the exact gradient) by the delta method.
    """
    counts = _usable(counts)
    k = counts.sum(1)
    start = min(max(moment_concentration(counts), 0.1), 1e5)
    shares = np.clip(counts.sum(0) / k.sum(), 1e-4, None)
    from scipy.optimize import minimize  # here, not at the top: it takes a third of a second to import

    result = minimize(_negative_log_likelihood, np.log(start * shares / shares.sum()), args=(counts, k), jac=True,
                      method="L-BFGS-B", bounds=[LOG_BOUNDS] * counts.shape[1])
    theta = result.x
    step = 1e-5
    hessian = np.array([(_negative_log_likelihood(theta + step * e, counts, k)[1]
                         - _negative_log_likelihood(theta - step * e, counts, k)[1]) / (2 * step)
                        for e in np.eye(len(theta))])
    a = np.exp(theta)
    try:
        variance = float(a @ np.linalg.solve((hessian + hessian.T) / 2, a))
    except np.linalg.LinAlgError:
        variance = np.inf
    return Fit(a, float(np.sqrt(variance)) if variance >= 0 else np.inf)


def split(counts, positive) -> np.ndarray:
    """Two-column counts: the labels not in ``positive`` (label codes), then those in it."""
    counts = np.asarray(counts)
    chosen = np.zeros(counts.shape[1], dtype=bool)
    chosen[list(positive)] = True
    return np.stack([counts[:, ~chosen].sum(1), counts[:, chosen].sum(1)], axis=1)


def split_concentrations(counts) -> list[Fit]:
    """One fit per label, of that label against all the others (each should give the same ``a0``)."""
    return [fit(split(counts, [c])) for c in range(np.asarray(counts).shape[1])]
