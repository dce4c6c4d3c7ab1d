"""The kernels' array indices: unsigned at the subscript, so that numba compiles them without the wrap of negative ones.

numba gives an array access with a *signed* integer index Python's meaning of a negative one (``x[-1]`` is the
last element): a compare and a select per access (on x86 a shift, a mask and an add), and, in a kernel with twenty
arrays, a load of the dimension spilled to the stack. An index of an *unsigned* type is used as it is. The kernels
therefore subscript with ``ix(i)``, ``i`` as ``np.uintp`` (the same bits: no extra instruction), wherever the
compiler cannot prove ``i`` non-negative itself (it can for most ``range`` counters, which stay as they are). The
wrap took 10 to 24 % of the time of S3's cells at K = 2 to 10 (``benchmarks/README.md``).

The cast is made at the subscript, not on a loop's variables: numba types int64 mixed with uint64 in arithmetic as
float64. A kernel must never index with a negative number: as ``np.uintp`` it is an index past the array's end,
which numba does not check; ``make test-boundscheck`` runs the reference tests with numba's bounds checks, which
catch it. ``tests/test_indices.py`` reads the compiled kernels for any wrap left.
"""

import numpy as np

ix = np.uintp  # ``a[ix(i)]``: index ``a`` by ``i`` unwrapped
