"""The marks a table sets beside the paper's numbers, by the rules the book counts agreement with: Δ within a factor
of the paper's, a budget within one step of the paper's grid, a best K on the paper's side of 10; and a number
printed with the digits that show which side of a threshold it lies on. :mod:`analysis.paper.effect_sizes` counts
by these rules, :func:`analysis.paper.tables.compare_with_paper` marks each cell by them."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.experiment import grid

FACTOR = 1.25  # a cell agrees when ours / paper's lies in [1 / FACTOR, FACTOR]
FEW_K = 10  # the best-K classes: K <= FEW_K against K > FEW_K (the paper's grid has no K between 10 and 20)


def on_its_side(value: float, side, digits: int, most: int = 6) -> str:
    """``value`` with ``digits`` decimals, or with as many more (up to ``most``) as it takes for the printed number
    to fall on the same side of a threshold as the value itself (``side(x)``: which side ``x`` is on), so that a
    printed 0.050 never stands for a p counted below 0.05."""
    while side(round(value, digits)) != side(value) and digits < most:
        digits += 1
    return f"{value:.{digits}f}"


def budget_step(budget) -> int | None:
    """The index of a budget on the paper's grid of budgets (None for none)."""
    return None if budget is None or pd.isna(budget) else int(np.searchsorted(grid.PAPER_BUDGETS, int(budget)))


def within_factor(ratio: float) -> bool:
    """Whether a Δ ratio (ours / the paper's) lies within the factor either way."""
    return 1 / FACTOR <= ratio <= FACTOR


def ratio_text(ratio: float) -> str:
    """A Δ ratio to two decimals, or as many more as it takes to print it on its own side of the factor: 1.2503,
    outside ×1.25, prints as "1.2503", not "1.25"."""
    return on_its_side(ratio, within_factor, 2)


def ratio_mark(ratio: float) -> str:
    """✓ for a ratio within the factor, else the ratio with the digits that show it lies outside (×1.2504, not
    ×1.25)."""
    return "✓" if within_factor(ratio) else f"×{ratio_text(ratio)}"


LACKS_MARK = "‡"  # a Δ read at our own cell where the grid lacks the paper's († marks a design beyond the data)
# the marks of the regenerated tables (tables.compare_with_paper), by the rules effect_sizes counts with
MARKS_WORDS = (f"✓ or ✗: our budget within one step of the paper's grid, our K on the paper's side of {FEW_K} "
               f"(budget and best-K rules); Δ: ours at the paper's own N×K and K, ✓ within ×{FACTOR:g} or the "
               f"ratio ours / the paper's; {LACKS_MARK}: the grid lacks the paper's cell, so ours is at our own N×K "
               "and K, not comparable")


def agreement_mark(stat: str, ours, paper) -> str:
    """The mark a regenerated table's cell carries beside the paper's value: the budget rule for NK, the best-K
    class for K, the Δ factor for Δ (``ours`` then our Δ at the paper's own cell, None where the grid lacks it);
    no mark for a p-value, which no rule compares."""
    def missing(v):
        return v is None or pd.isna(v)
    if stat == "delta":
        if missing(paper) or not float(paper):
            return ""
        return f" {LACKS_MARK}" if missing(ours) else f" {ratio_mark(float(ours) / float(paper))}"
    if stat == "NK":
        holds = (missing(ours) and missing(paper)) or (not missing(ours) and not missing(paper)
                                                        and abs(budget_step(ours) - budget_step(paper)) <= 1)
    elif stat == "K":
        if missing(ours) or missing(paper):
            return ""
        holds = (float(ours) <= FEW_K) == (float(paper) <= FEW_K)
    else:
        return ""
    return " ✓" if holds else " ✗"
