"""The counts kernel: S2 on per-item counts (the methods page).

G and A are ``Multinomial(K', p_i)``, drawn from alias tables or as categorical draws; B has
``M ~ Binomial(K', epsilon)`` noise responses and ``K' - M`` from ``p_i``; under the null,
``H ~ Hypergeometric(2K'; K', K')`` of B's columns land in A*, so A* holds ``Binomial(H, epsilon)`` noise responses
and B* ``Binomial(K' - H, epsilon)``, both drawn from the same urn of the slot.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from analysis.engine.metrics import accumulator, add_item, clear, store
from analysis.engine.rule import urn_label
from analysis.engine.lookup import draw_fired, draw_from_cdf
from analysis.engine.draws import add_counts, composition_entry, draw_label, uniform_index
from analysis.engine.indices import ix


class Shares(NamedTuple):
    """Each item's label shares and, for the uniform rule, the law of a replaced response, both also cumulative
    (items x labels)."""

    share: np.ndarray
    cum: np.ndarray
    noise: np.ndarray
    noise_cum: np.ndarray


@numba.njit(cache=True)
def count_replicates(rng, item_laws, tabled, compositions, draw, chances, divergence, out, confusion):
    """S2 on counts: per slot, multinomial counts of the item's unreplaced responses (from alias tables when
    ``tabled``, else :func:`add_counts`) and the noise responses that replace ``Binomial(., epsilon)`` of them."""
    shares, cum, noise_shares, noise_cum = item_laws
    row, prob, alias, comp, start = compositions
    n, k, epsilon, shared, null, prior, steps = draw
    n_items, n_labels = shares.shape
    g = np.zeros((1, n_labels), dtype=np.int64)  # one item's counts
    a = np.zeros((1, n_labels), dtype=np.int64)
    b = np.zeros((1, n_labels), dtype=np.int64)
    urn = np.zeros(n_labels, dtype=np.int64)
    acc = accumulator(n_labels)
    for r in range(out.shape[0]):
        clear(acc)
        for j in range(n):
            item = uniform_index(rng, n_items)
            if null:
                h = draw_from_cdf(rng, chances.split)  # B's columns in A*
                m_a = draw_fired(rng, chances, h)
                m_b = draw_fired(rng, chances, k - h)
            else:
                m_a = 0
                m_b = draw_fired(rng, chances, k)
            if tabled:
                table_row = row[ix(item)]
                e_g = composition_entry(rng, k, table_row, prob, alias, start)
                e_a = composition_entry(rng, k - m_a, table_row, prob, alias, start)
                e_b = composition_entry(rng, k - m_b, table_row, prob, alias, start)
                for c in range(n_labels):
                    g[0, c] = comp[ix(e_g), c]
                    a[0, c] = comp[ix(e_a), c]
                    b[0, c] = comp[ix(e_b), c]
            else:
                for c in range(n_labels):
                    g[0, c] = 0
                    a[0, c] = 0
                    b[0, c] = 0
                add_counts(rng, k, shares, item, cum, g, 0)
                add_counts(rng, k - m_a, shares, item, cum, a, 0)
                add_counts(rng, k - m_b, shares, item, cum, b, 0)
            for c in range(n_labels):
                urn[c] = 0
            if shared:  # the slot's noise responses, from its urn (written out here: as a helper that
                for _ in range(m_a):  # writes into the counts, this runs several times slower in numba)
                    a[0, ix(urn_label(rng.random(), urn, prior))] += 1
                for _ in range(m_b):
                    b[0, ix(urn_label(rng.random(), urn, prior))] += 1
            else:
                for _ in range(m_a):
                    a[0, ix(draw_label(rng, noise_cum, item))] += 1
                for _ in range(m_b):
                    b[0, ix(draw_label(rng, noise_cum, item))] += 1
            add_item(g, a, b, 0, divergence, acc, 1)
        store(acc, out[r], confusion[r])
