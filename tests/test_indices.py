"""No module of the package changes numba: it assigns to no attribute of numba's modules (numba's index fix-up
was once replaced this way, to compile the kernels without the wrap of negative indices)."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "analysis"
MODULES = sorted(PACKAGE.rglob("*.py"))


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
