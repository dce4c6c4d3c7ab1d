"""Multi-level bootstrap p-values for comparing two models against disaggregated human ratings.

The package is built in layers; each imports only the layers below it (``ARCHITECTURE.md``; a test keeps it so):

- :mod:`analysis.errors`, :mod:`analysis.io`, :mod:`analysis.wording`: the errors a user sees, atomic writes, counts in words;
- :mod:`analysis.data`: annotation datasets, the dataset registry, the seeded stand-ins;
- :mod:`analysis.engine`: the samplers S1-S3, the simulation of G, A and B, the eight metrics, exact ties;
- :mod:`analysis.experiment`: the grid of cells, its cache, p-values, calibration, timing, Table 1's rule;
- :mod:`analysis.tools`: compare two systems, plan a study (the user's own data);
- :mod:`analysis.paper`: the comparison with the paper's tables, findings and verdicts;
- :mod:`analysis.book`: what the chapters call; :mod:`analysis.testsuite`: the MT test suite, a system of its own.

``from analysis import compare, datasets, grid, power`` gives the modules the README names, and
``compare_report`` and ``plan_report`` what they print (their tables, sentences and summaries).
"""

import hashlib
import importlib
import os
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

HERE = Path(__file__).parent
# the sources whose numba kernels inline each other
KERNEL_SOURCES = tuple(sorted((HERE / "engine").rglob("*.py")))


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

# the modules the README and the API page name, by their short names, imported when first used
PUBLIC_MODULES = {"datasets": "analysis.data.datasets", "grid": "analysis.experiment.grid",
                  "compare": "analysis.tools.compare", "power": "analysis.tools.power",
                  "compare_report": "analysis.tools.compare_report", "plan_report": "analysis.tools.plan_report"}


def __getattr__(name: str):
    if name in PUBLIC_MODULES:
        return importlib.import_module(PUBLIC_MODULES[name])
    raise AttributeError(f"module 'analysis' has no attribute {name!r}")
