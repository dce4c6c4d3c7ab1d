"""Multi-level bootstrap p-values for comparing two models against disaggregated human ratings.

The package owns the engine behind the book: annotation datasets (:mod:`analysis.data`), seeded
synthetic stand-ins (:mod:`analysis.synthetic`), the samplers S1-S3 (:mod:`analysis.samplers`),
the simulation of G, A and B (:mod:`analysis.simulate`), the eight metrics (:mod:`analysis.metrics`),
p-values (:mod:`analysis.pvalues`) and the experiment grid with its cache (:mod:`analysis.grid`).
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("annotator-bootstrap")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.0.0+local"

from analysis.errors import AnalysisError, DataError, ParameterError, TopologyError  # noqa: E402

__all__ = ["AnalysisError", "DataError", "ParameterError", "TopologyError", "__version__"]
