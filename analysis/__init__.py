"""Multi-level bootstrap p-values for comparing two models against disaggregated human ratings.

The package owns the engine behind the book: annotation datasets (:mod:`analysis.data`), seeded
synthetic stand-ins (:mod:`analysis.synthetic`), the samplers S1-S3 (:mod:`analysis.samplers`),
the simulation engine for G, A and B (:mod:`analysis.engine`), the eight metrics (:mod:`analysis.metrics`),
p-values (:mod:`analysis.pvalues`) and the experiment grid with its cache (:mod:`analysis.grid`).
"""

import hashlib
import os
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

HERE = Path(__file__).parent
# the sources whose numba kernels inline each other
KERNEL_SOURCES = (HERE / "indices.py", HERE / "samplers.py", HERE / "metrics.py", HERE / "exact.py",
                  *sorted((HERE / "engine").glob("*.py")))


def _kernel_cache_dir() -> str:
    """A numba cache folder named by a hash of the kernel sources.

    numba revalidates a cached kernel against the timestamp of its own file only, so a kernel that inlines a
    helper from another module would keep the helper's old machine code after an edit. Keying the folder by all
    kernel sources makes any edit compile afresh. A ``NUMBA_CACHE_DIR`` set by the user is left alone.
    """
    digest = hashlib.sha256()
    for source in KERNEL_SOURCES:
        digest.update(source.read_bytes())
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return str(base / "annotator-bootstrap" / "numba" / digest.hexdigest()[:16])


os.environ.setdefault("NUMBA_CACHE_DIR", _kernel_cache_dir())  # before any module imports numba

try:
    __version__ = version("annotator-bootstrap")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.0.0+local"

from analysis.errors import AnalysisError, DataError, ParameterError, TopologyError  # noqa: E402

__all__ = ["AnalysisError", "DataError", "ParameterError", "TopologyError", "__version__"]
