"""The simulation engine (METHOD sections 2-5, 9): one module per concept.

- :mod:`~analysis.engine.simulator`: :class:`Simulator`, which plans each cell and runs its kernel;
- :mod:`~analysis.engine.plan`: :func:`~analysis.engine.plan.plan`, the one place where a cell's path is chosen;
- the kernels, one file each: :mod:`~analysis.engine.direct`, :mod:`~analysis.engine.by_item`,
  :mod:`~analysis.engine.counts`, :mod:`~analysis.engine.law`;
- :mod:`~analysis.engine.rule` (B's perturbation), :mod:`~analysis.engine.split` (the null split),
  :mod:`~analysis.engine.tables` (tables and alias helpers), :mod:`~analysis.engine.perturbation` (the
  perturbation's tables on count vectors);
- :mod:`~analysis.engine.reference` (the slow reference, separate on purpose).

The metrics the kernels accumulate are :mod:`analysis.engine.metrics`'s; their exact ties, :mod:`analysis.engine.exact`'s.
"""

from analysis.engine.plan import METHODS, Plan
from analysis.engine.rule import DEFAULT, PERTURBATIONS, check_perturbation
from analysis.engine.simulator import Replicates, Simulator

__all__ = ["DEFAULT", "METHODS", "PERTURBATIONS", "Plan", "Replicates", "Simulator", "check_perturbation"]
