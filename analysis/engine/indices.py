"""The kernels' array indices: numba compiles this package's code without wrapping negative indices.

numba gives every array access with a signed integer index Python's meaning of a negative one (``x[-1]`` is the
last element): a shift, a mask and an add per access, and, in a kernel with twenty arrays, a load of the
dimension spilled to the stack. The kernels never index with a negative number, and the wrapping took 14 to 24 %
of the time of S3's cells at K = 2 to 10 (``benchmarks/README.md``). :func:`install` replaces numba's index fix-up
with one that leaves the index as it is in functions compiled from this package (their LLVM names start with the
package's mangled name) and wraps it as before everywhere else: numba's own functions and a user's keep Python's
meaning. Importing this module installs it; the modules that define kernels import it first.

Without the wrapping, a negative index in a kernel reads outside the array, as an index past its end already
does (numba checks no bounds). ``tests/test_indices.py`` checks that this package's code is compiled unwrapped and
other code wrapped; ``tests/test_reference.py`` that the kernels draw the same law. A numba without the fix-up
this module replaces (``numba.np.arrayobj.fix_integer_index``, numba 0.59 to 0.68 at least) keeps its own: the
kernels then run as before, only slower, and that test says so.
"""

from __future__ import annotations

import numba.np.arrayobj as arrayobj
from numba.core import types

PACKAGE_PREFIX = "_ZN8analysis"  # how numba's mangled LLVM names of this package's functions begin
_wrapping = getattr(arrayobj, "fix_integer_index", None)  # numba's own fix-up, kept for every other function


def _fix_index(context, builder, idxty, idx, size):
    """numba's fix-up of an integer index, without the wrap in this package's functions."""
    if idxty.signed and builder.function.name.startswith(PACKAGE_PREFIX):
        return context.cast(builder, idx, idxty, types.intp)
    return _wrapping(context, builder, idxty, idx, size)


def install() -> None:
    """Make numba compile this package's array indices without the wrap (idempotent; nothing where numba has no
    such fix-up)."""
    if _wrapping is not None:
        arrayobj.fix_integer_index = _fix_index


def installed() -> bool:
    """Whether numba compiles this package's indices unwrapped now."""
    return arrayobj.fix_integer_index is _fix_index


install()
