"""The experiment: the grid of cells over the engine, its cache, p-values, calibration, timing and Table 1's rule.

- :mod:`~analysis.experiment.grid`: ``run`` a grid of (NK, K, epsilon) cells, seeded per cell;
- :mod:`~analysis.experiment.cache`: cells cached by a key of everything that sets their numbers;
- :mod:`~analysis.experiment.pvalues`: the pairwise p-value, exact on ties;
- :mod:`~analysis.experiment.table1`: the paper's Table 1 rule; :mod:`~analysis.experiment.calibration`: the
  null at epsilon = 0; :mod:`~analysis.experiment.timing`: seconds per cell.

Imports the data and the engine; nothing above.
"""
