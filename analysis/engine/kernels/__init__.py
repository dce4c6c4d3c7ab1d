"""The compiled kernels, one file per way of drawing a cell's replicates: :mod:`.direct` (whole count vectors
from lookup tables), :mod:`.by_item` (item by item, S1 and S3), :mod:`.counts` (S2's count vectors),
:mod:`.law` (S2 from one slot's exact law) and :mod:`.pigeonhole` (S4). :mod:`analysis.engine.path` chooses which
runs a cell; :class:`analysis.engine.simulator.Simulator` calls it."""
