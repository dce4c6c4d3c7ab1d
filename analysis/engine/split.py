"""The null split (the methods page): the ``2K'`` rater columns of A and B pooled per group and mixed.

How they mix is a global choice (:data:`NULL_MIXINGS`): ``"half"``, a uniform half of the pooled columns goes to A*,
the rest to B*; ``"pairs"``, A's ``c``-th column and B's ``c``-th go to A* and B* or the other way round, by a coin
per pair (under S2, whose group is one item, a coin per response pair). All pooled columns are iid uniform draws of
the group's raters and A's are independent of B's, so either way A* is ``K'`` fresh columns of which ``H`` are B's:
``H ~ Hypergeometric(2K'; K', K')`` for the half, ``H ~ Binomial(K', 1/2)`` for the pairs; at ``epsilon = 0`` both
give the alternative's law. The kernels draw the group's columns and ``H`` here, and treat the first ``H`` of A*'s
columns and the first ``K' - H`` of B*'s as B's (perturbable) ones.
"""

from __future__ import annotations

import numba
import numpy as np

from analysis.engine.lookup import draw_from_cdf
from analysis.engine.draws import uniform_index
from analysis.engine.indices import ix
from analysis.errors import ParameterError


NULL_MIXINGS = ("half", "pairs")  # the first is the reference choice


def check_null_mixing(null_mixing: str) -> str:
    """``null_mixing`` if it is one of :data:`NULL_MIXINGS`; a :class:`ParameterError` otherwise."""
    if null_mixing not in NULL_MIXINGS:
        raise ParameterError(f"unknown null_mixing {null_mixing!r}; choose one of {', '.join(NULL_MIXINGS)}")
    return null_mixing


def split_distribution(k: int, null_mixing: str):
    """The law of ``H``, how many of B's ``k`` columns the null puts in A* (module docstring), as a frozen
    ``scipy.stats`` distribution."""
    from scipy.stats import binom, hypergeom  # here, not at the top: scipy.stats takes a second to import

    return hypergeom(2 * k, k, k) if check_null_mixing(null_mixing) == "half" else binom(k, 0.5)


def split_law(k: int, null_mixing: str) -> np.ndarray:
    """Cumulative law of ``H`` (:func:`split_distribution`), as the kernels draw it."""
    cdf = split_distribution(k, null_mixing).cdf(np.arange(k + 1))
    cdf[-1] = 1.0
    return cdf


@numba.njit(cache=True, inline="always")
def draw_columns(rng, n_raters, k, epsilon, null, h_cdf, columns, n_perturbed):
    """A drawn group's rater columns (rows G, A, B of ``columns``: uniform draws of its ``n_raters`` raters) and,
    under the null, ``h``, how many of B's columns land in A* (returned; 0 under the alternative). With
    ``epsilon > 0``, ``n_perturbed`` says how many of A*'s and B*'s columns are B's: the first ``h`` of A*'s, the
    first ``k - h`` of B*'s."""
    for side in range(3):
        for c in range(k):
            columns[side, c] = uniform_index(rng, n_raters)
    h = draw_from_cdf(rng, h_cdf) if null else 0
    if epsilon > 0.0:
        n_perturbed[1] = h
        n_perturbed[2] = k - h
    return h


@numba.njit(cache=True)
def weigh_columns(columns, n_perturbed, seen, part_rater, part_weight, part_len):
    """A group's rater columns by part (0: G; 1, 2: A's fixed and perturbable; 3, 4: B's) as distinct raters
    ``part_rater[part, :part_len[part]]`` with their numbers of columns ``part_weight``, so that a kernel reads
    each distinct rater's label once. ``seen`` (parts x raters, all -1) is scratch and is left as it was found."""
    k = columns.shape[1]
    part_len[:] = 0
    for side in range(3):
        for c in range(k):
            part = 0 if side == 0 else 2 * side - 1 + (c < n_perturbed[side])
            rater = columns[side, c]
            j = seen[part, ix(rater)]
            if j < 0:
                j = part_len[part]
                seen[part, ix(rater)] = j
                part_rater[part, ix(j)] = rater
                part_weight[part, ix(j)] = 0
                part_len[part] += 1
            part_weight[part, ix(j)] += 1
    for part in range(5):
        for j in range(part_len[part]):
            seen[part, ix(part_rater[part, j])] = -1
