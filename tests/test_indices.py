"""The package's kernels are compiled without numba's wrap of negative indices, and nothing else is
(:mod:`analysis.engine.indices`)."""

import numba
import numpy as np

import analysis.engine  # noqa: F401  (imports the kernels, and with them the unwrapped indices)
from analysis.engine import indices


def compiled_in(module: str):
    """``x[i]`` compiled as a function of ``module`` (without numba's cache)."""
    namespace = {"__name__": module}
    exec("def at(x, i):\n    return x[i]\n", namespace)
    return numba.njit(namespace["at"])


def test_the_fix_up_is_installed():
    assert indices.installed(), "numba no longer has numba.np.arrayobj.fix_integer_index: kernels run wrapped"


def test_the_package_indexes_unwrapped_and_other_code_wrapped():
    x = np.arange(5.0)
    inside, outside = compiled_in("analysis.probe"), compiled_in("elsewhere.probe")
    assert inside(x, 3) == outside(x, 3) == 3.0
    assert outside(x, -1) == 4.0  # Python's meaning, as numba gives it
    wraps = [len([line for line in f.inspect_llvm(f.signatures[0]).splitlines() if "icmp slt" in line])
             for f in (inside, outside)]
    assert wraps[0] == 0 < wraps[1], wraps
