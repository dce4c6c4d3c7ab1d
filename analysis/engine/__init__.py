"""The simulation engine (the methods page): one module per concept.

- :mod:`~analysis.engine.simulator`: :class:`Simulator`, which plans each cell and runs its kernel;
- :mod:`~analysis.engine.path`: :func:`~analysis.engine.path.choose_path`, the one place where a cell's path is chosen;
- :mod:`~analysis.engine.kernels`: the compiled kernels, one file per way of drawing a cell (direct, by item,
  counts, law, pigeonhole);
- :mod:`~analysis.engine.rule` (B's perturbation), :mod:`~analysis.engine.split` (the null split),
  :mod:`~analysis.engine.lookup` (tables and alias helpers), :mod:`~analysis.engine.perturbation` (the
  perturbation's tables on count vectors);
The slow reference the tests hold every plan to is ``tests/reference.py``, apart from the package on purpose.

The metrics the kernels accumulate are :mod:`analysis.engine.metrics`'s; their exact ties, :mod:`analysis.engine.exact`'s.
"""

from analysis.engine.path import METHODS, KernelPath
from analysis.engine.rule import PERTURBATIONS, check_perturbation
from analysis.engine.simulator import Replicates, Simulator

__all__ = ["METHODS", "PERTURBATIONS", "KernelPath", "Replicates", "Simulator", "check_perturbation"]
