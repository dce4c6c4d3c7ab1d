"""The kernels index their arrays without numba's wrap of negative indices (:mod:`analysis.engine.indices`), and
by public means: no module of the package assigns to an attribute of numba (the package once replaced numba's
index fix-up, ``numba.np.arrayobj.fix_integer_index``, to the same end)."""

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "analysis"
MODULES = sorted(PACKAGE.rglob("*.py"))
# compiled functions that keep wraps, and why: a slice's bounds keep Python's meaning (numba clamps them), and
# build_alias builds a cell's tables once, outside the loops over slots
KEEP_WRAPS = {"analysis.engine.kernels.by_item.count_by_rater": "slices a group's labels",
              "analysis.engine.metrics.store": "copies the sums by slices",
              "analysis.engine.draws.build_alias": "builds tables, once a cell"}
# the loops over slots and their callees, which the probe must reach
HOT = {"analysis.engine.kernels.direct." + name for name in
       ("direct_replicates", "deferred_slots", "tabled_slots", "general_slots", "settle_triples")} | \
      {"analysis.engine.kernels.by_item." + name for name in
       ("by_item_replicates", "column_law_slots", "read_items", "tabled_items", "untabled_items")} | \
      {"analysis.engine.kernels.pigeonhole." + name for name in
       ("pigeonhole_replicates", "read_by_stream", "read_by_walk", "turn_round", "walk", "hold_items")} | \
      {"analysis.engine.kernels.counts.count_replicates", "analysis.engine.kernels.law.law_replicates",
       "analysis.engine.split.weigh_columns", "analysis.engine.draws.draw_slots"}


def numba_names(tree: ast.AST) -> set[str]:
    """The names a module binds to numba or to anything imported from it."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "numba" or alias.name.startswith("numba."):
                    names.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "numba" or node.module.startswith("numba."):
                names.update(alias.asname or alias.name for alias in node.names)
    return names


def root(node: ast.AST) -> str | None:
    """The name an attribute or subscript chain starts from (``a`` of ``a.b[c].d``)."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def targets(node: ast.AST) -> list[ast.AST]:
    """What an assignment or deletion writes, tuples unpacked."""
    if isinstance(node, ast.Assign):
        found = list(node.targets)
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        found = [node.target]
    elif isinstance(node, ast.Delete):
        found = list(node.targets)
    else:
        return []
    while any(isinstance(t, (ast.Tuple, ast.List, ast.Starred)) for t in found):
        found = [e for t in found for e in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else
                                            [t.value] if isinstance(t, ast.Starred) else [t])]
    return found


def changes_to_numba(source: str) -> list[int]:
    """The lines that assign to (or delete, or ``setattr``) an attribute of a name bound to numba."""
    tree = ast.parse(source)
    names = numba_names(tree)
    lines = []
    for node in ast.walk(tree):
        for target in targets(node):
            if isinstance(target, (ast.Attribute, ast.Subscript)) and root(target) in names:
                lines.append(node.lineno)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("setattr", "delattr")
                and node.args and root(node.args[0]) in names):
            lines.append(node.lineno)
    return lines


def test_the_scan_finds_a_change_to_numba():
    """The patch this package once made, and the other ways of writing one, are found."""
    found = [
        "import numba.np.arrayobj as arrayobj\narrayobj.fix_integer_index = f\n",
        "import numba\nnumba.np.arrayobj.fix_integer_index = f\n",
        "from numba.np import arrayobj\nsetattr(arrayobj, 'fix_integer_index', f)\n",
        "from numba import config\nconfig.BOUNDSCHECK, x = 1, 2\n",
        "import numba.core.config\nnumba.core.config.__dict__['X'] += 1\n",
    ]
    kept = ["import numba\nx = numba.njit(f)\n", "import numpy as np\nnp.x = 1\n", "import numba\nnumba = 2\n"]
    assert all(changes_to_numba(source) for source in found)
    assert not any(changes_to_numba(source) for source in kept)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_no_module_changes_numba(path):
    assert not changes_to_numba(path.read_text()), f"{path.name} assigns to numba's attributes"


def session_wraps() -> dict[str, int] | None:
    """The wrap counts of this session's first compile (tests/conftest.py, under ``pytest -n``), merged over its
    groups; None where there was none, or where a kernel came from numba's cache (numba shows no code of those) and
    no group compiled it."""
    folder = os.environ.get("ANALYSIS_TEST_WRAPS")
    found: dict[str, int] = {}
    loaded: set[str] = set()
    for file in sorted(Path(folder).glob("group-*.json")) if folder else []:
        try:
            probe = json.loads(file.read_text())
        except ValueError:  # a probe that failed: the test runs its own
            return None
        loaded.update(probe["loaded"])
        for function, count in probe["wraps"].items():
            found[function] = max(found.get(function, 0), count)
    return found if found and loaded <= set(found) else None


@pytest.mark.slow
def test_the_compiled_kernels_index_unwrapped(tmp_path):
    """Every kernel, compiled afresh, has no wrap of a signed index left in its optimised code, but the few that
    slice (``KEEP_WRAPS``). Without the unsigned indices the loops over slots hold hundreds. The counts come from the
    session's own first compile where it compiled every kernel (a fresh cache), else from tests/wrap_probe.py run
    on an empty cache (about a minute)."""
    wraps = session_wraps()
    if wraps is None:
        env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}  # numba shows no code of a kernel from its cache
        probe = subprocess.run([sys.executable, str(Path(__file__).with_name("wrap_probe.py"))], env=env,
                               capture_output=True, text=True, check=True)
        result = json.loads(probe.stdout)
        assert not result["loaded"], result["loaded"]
        wraps = result["wraps"]
    assert HOT <= set(wraps), HOT - set(wraps)
    assert all(wraps[name] > 0 for name in KEEP_WRAPS if name in wraps), "a kept wrap is gone: drop it from KEEP_WRAPS"
    left = {name: count for name, count in wraps.items() if count and name not in KEEP_WRAPS}
    assert not left, f"index wraps left (index with ix(i), analysis.engine.indices): {left}"
