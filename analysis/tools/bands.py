"""A binomial share's 95 % band (Wilson's): what a plan's power band is built on."""

from __future__ import annotations

import numpy as np

Z95 = 1.959963984540054


def wilson(successes: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Wilson 95 % band of a binomial share ``successes / n``."""
    share = np.asarray(successes, float) / n
    centre = (share + Z95**2 / (2 * n)) / (1 + Z95**2 / n)
    half = Z95 / (1 + Z95**2 / n) * np.sqrt(share * (1 - share) / n + Z95**2 / (4 * n**2))
    return centre - half, centre + half
