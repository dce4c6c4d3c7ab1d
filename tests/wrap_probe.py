"""Compile the kernels and count the index wraps left in their machine code (for tests/test_indices.py).

Every configuration of tests/test_reference.py is drawn once (they reach every kernel and every option), and the
exact ties settled once; with ``--kernels`` only the configurations whose plan runs one of the named kernels, and
beside them every plan of the book that runs one (:func:`analysis.experiment.warmup.compile_group`), so that the
run also fills numba's cache for the tests. Then each compiled function of the package is read in LLVM's optimised
IR for numba's wrap of a signed index, ``i + (i < 0 ? n : 0)``: an ``icmp slt i, 0`` (or ``icmp sgt i, -1``) that
selects a dimension or zero. Prints ``{"wraps": {function: wraps}, "loaded": [kernel, ...]}`` as JSON: the largest
count over the compiled versions of each function, and the kernels loaded from numba's cache instead of compiled,
whose code numba does not show (the counts are complete only where none was).
"""

import argparse
import json
import re
import sys

import numpy as np
from numba.core.dispatcher import Dispatcher

import test_reference as reference
from analysis.engine import Simulator, exact
from analysis.experiment.choices import REFERENCE
from analysis.experiment.warmup import compile_group

NEGATIVE = re.compile(r"(%[\w.]+) = icmp (slt i64 %[\w.]+, 0|sgt i64 %[\w.]+, -1)$")
SELECT = re.compile(r"= select i1 (%[\w.]+), i64 ([^,]+), i64 ([^,\s]+)")
DEFINE = re.compile(r"^define .*?@_ZN((?:\d+[\w$]+?)+)B\d")


def demangled(mangled: str) -> str:
    """``8analysis6engine4draw`` -> ``analysis.engine.draw``."""
    parts, at = [], 0
    while at < len(mangled) and mangled[at].isdigit():
        digits = re.match(r"\d+", mangled[at:]).group()
        at += len(digits)
        parts.append(mangled[at:at + int(digits)])
        at += int(digits)
    return ".".join(parts)


def wraps(ir: str) -> dict[str, int]:
    """The wraps in each of the package's functions defined in one module of LLVM IR."""
    counts, function, negative = {}, None, {}
    for line in ir.splitlines():
        if line.startswith("define"):
            match = DEFINE.match(line)
            function = demangled(match.group(1)) if match else None
            if function is not None and not function.startswith("analysis."):
                function = None
            if function:
                counts.setdefault(function, 0)
            negative = {}
            continue
        if function is None:
            continue
        line = line.strip()
        match = NEGATIVE.search(line)
        if match:
            negative[match.group(1)] = match.group(2).startswith("slt")
            continue
        match = SELECT.search(line)
        if match and match.group(1) in negative:
            zero_arm = match.group(3) if negative[match.group(1)] else match.group(2)
            counts[function] += zero_arm.strip() == "0"
    return counts


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="Count the index wraps in the compiled kernels.")
    parser.add_argument("--kernels", help="only the plans of these kernels, comma-separated (default: every one)")
    args = parser.parse_args(argv)
    kernels = tuple(args.kernels.split(",")) if args.kernels else None
    for config in reference.CONFIGURATIONS:
        sampler, data, method, n, k, epsilon, rule, patches = config
        saved = [(reference.MODULES[m], name, getattr(reference.MODULES[m], name)) for m, name, _ in patches]
        for m, name, value in patches:
            setattr(reference.MODULES[m], name, value)
        sim = Simulator(reference.DATA[data](), sampler, method=method, **REFERENCE.engine())
        for null in (False, True):
            if kernels is None or sim.path(n, k, epsilon, null, rule).kernel in kernels:
                sim.draw(n, k, epsilon, 2, np.random.default_rng(0), null, rule)
        for module, name, value in saved:
            setattr(module, name, value)
    if kernels is None or "direct" in kernels:
        confusion = np.random.default_rng(0).integers(0, 5, size=(4, 2, 3, 3))
        exact.settle(np.zeros(4), confusion, "precision")
    if kernels is not None:
        compile_group(kernels)
    found: dict[str, int] = {}
    loaded = set()
    for module in [m for name, m in sorted(sys.modules.items()) if name.startswith("analysis.")]:
        for kernel in vars(module).values():
            if isinstance(kernel, Dispatcher):
                if kernel.stats.cache_hits:
                    loaded.add(f"{kernel.py_func.__module__}.{kernel.py_func.__name__}")
                    continue
                for signature in kernel.signatures:
                    for function, count in wraps(kernel.inspect_llvm(signature)).items():
                        found[function] = max(found.get(function, 0), count)
    json.dump({"wraps": found, "loaded": sorted(loaded)}, sys.stdout, indent=0, sort_keys=True)


if __name__ == "__main__":
    main()
