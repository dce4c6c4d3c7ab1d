"""The package's shape, as the engine's issue asks for it: one home per concept, no import circles, short modules.

Each check reads the source with :mod:`ast`, so it fails on the line that breaks the rule, whoever wrote it.
"""

import ast
from pathlib import Path

import pytest

from analysis.engine.rule import PERTURBATIONS

PACKAGE = Path(__file__).resolve().parents[1] / "analysis"
MODULES = sorted(PACKAGE.rglob("*.py"))
MAX_LINES = 589  # room to grow: a module at 590 lines is split by concern before it takes more
# module constants of the engine that are layouts, memory bounds or laws, not path thresholds
NOT_THRESHOLDS = {"MASK_BITS", "MASK20", "CHUNK_ITEMS", "LAW_CACHE_ENTRIES", "PERTURB_CACHE_ENTRIES",
                  "NOISE_CACHE_ENTRIES", "CONCENTRATION", "MAX_PLAN_CELLS"}


def name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """Every module of the package that ``path`` imports, at the top or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("analysis"):
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("analysis"))
    known = {name(p) for p in MODULES}
    return {m for m in found if m in known} - {name(path)}


def test_no_module_imports_a_module_that_imports_it_back():
    graph = {name(p): imports(p) for p in MODULES}
    graph = {m: {d for d in deps if not m.startswith(d + ".") and d != "analysis"} for m, deps in graph.items()}

    def cycle_from(start):
        stack, seen = [(start, [start])], set()
        while stack:
            node, path = stack.pop()
            for nxt in graph.get(node, ()):
                if nxt == start:
                    return path + [start]
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, path + [nxt]))
        return None

    circles = [c for c in map(cycle_from, graph) if c]
    assert not circles, " -> ".join(circles[0])


# the layers, bottom up, and what each may import: "base" is the package's own top-level modules (errors, io, wording)
LAYERS = {"base": {"base"},
          "data": {"base", "data"},
          "engine": {"base", "data", "engine"},
          "experiment": {"base", "data", "engine", "experiment"},
          "tools": {"base", "data", "engine", "experiment", "tools"},
          "paper": {"base", "data", "engine", "experiment", "paper"},
          "testsuite": {"base", "data", "testsuite"},
          "book": {"base", "data", "engine", "experiment", "tools", "paper", "testsuite", "book"}}


def layer(module: str) -> str | None:
    """A module's layer: its subpackage, ``"base"`` for a top-level module, ``None`` for the package's face."""
    parts = module.split(".")
    if module in ("analysis", "analysis.__main__"):
        return None
    return parts[1] if len(parts) > 2 or parts[1] in LAYERS else "base"


def test_every_module_is_in_a_layer():
    assert {layer(name(p)) for p in MODULES} - {None} == set(LAYERS)


@pytest.mark.parametrize("path", [p for p in MODULES if layer(name(p))], ids=name)
def test_no_module_imports_a_higher_layer(path):
    """Each layer imports only the layers under it (ARCHITECTURE.md): the engine knows no grid, the tools and the
    paper's comparison know no book, and nothing but the command line imports the book."""
    own = layer(name(path))
    above = sorted(m for m in imports(path) if m != "analysis" and layer(m) not in LAYERS[own])
    assert not above, f"{name(path)} ({own}) imports {above}"


@pytest.mark.parametrize("path", MODULES, ids=name)
def test_no_module_reaches_590_lines(path):
    assert len(path.read_text().splitlines()) <= MAX_LINES


def test_no_class_or_module_name_means_two_things():
    """One name per concept: no class name defined in two places, no module file name used twice."""
    classes, files = {}, {}
    for path in MODULES:
        if path.name != "__init__.py":
            files.setdefault(path.stem, []).append(name(path))
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                classes.setdefault(node.name, []).append(name(path))
    assert not {k: v for k, v in classes.items() if len(v) > 1}
    assert not {k: v for k, v in files.items() if len(v) > 1}


def test_only_the_plan_holds_path_thresholds():
    """A number at module level in the engine or the samplers decides a path only in engine/path.py."""
    engine = [p for p in MODULES if p.parent.name == "engine" and p.name not in ("metrics.py", "exact.py")]
    held = []
    for path in engine:
        if path.name == "path.py":
            continue
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Assign) and isinstance(node.value, (ast.Constant, ast.BinOp)):
                for target in node.targets:
                    if (isinstance(target, ast.Name) and target.id.isupper() and target.id not in NOT_THRESHOLDS
                            and isinstance(getattr(node.value, "value", 0), (int, float))):
                        held.append(f"{path.name}: {target.id}")
    assert not held


def test_no_module_but_the_rule_branches_on_a_rule_name():
    """Comparisons with a rule's name (``== "dirichlet"``, ``in ("uniform", ...)``) live in engine/rule.py, and in
    the separate reference, which stays separate on purpose."""
    found = []
    for path in MODULES:
        if path.name in ("rule.py", "reference.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Compare):
                for operand in [node.left, *node.comparators]:
                    values = operand.elts if isinstance(operand, (ast.Tuple, ast.List, ast.Set)) else [operand]
                    if any(isinstance(v, ast.Constant) and v.value in PERTURBATIONS for v in values):
                        found.append(f"{name(path)}:{node.lineno}")
    assert not found


def test_only_the_samplers_decide_which_design_allows_which_sampler():
    """The designs' names appear in comparisons only where designs are detected (data) and matched to samplers."""
    found = []
    for path in MODULES:
        if path.name in ("annotations.py", "samplers.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Name) and node.id in ("FULLY_CROSSED", "BATCHED", "SPARSE"):
                found.append(f"{name(path)}:{node.lineno}")
    assert not found


def test_no_compiled_function_is_longer_than_120_lines():
    long = []
    for path in MODULES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and any("njit" in ast.unparse(d) for d in node.decorator_list):
                if node.end_lineno - node.lineno + 1 > 120:
                    long.append(f"{name(path)}.{node.name}: {node.end_lineno - node.lineno + 1} lines")
    assert not long


def test_the_loops_that_borrow_a_work_group_count_no_references():
    """A compiled loop handed the kernel's work arrays (a ``work`` argument) is called once a replicate or a group
    and only borrows them: compiled with reference counting, each call pays two atomic counts an array it reads
    (S3 at K = 25 to 100 ran 1.10 to 1.16 times slower, benchmarks/README.md)."""
    counted = []
    for path in MODULES:
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.FunctionDef) and "work" in [a.arg for a in node.args.args]
                    and any("njit" in ast.unparse(d) for d in node.decorator_list)
                    and not any("_nrt=False" in ast.unparse(d) for d in node.decorator_list)):
                counted.append(f"{name(path)}.{node.name}")
    assert not counted


DEFAULTS_HOMES = {"experiment/choices.py", "engine/rule.py", "engine/metrics.py", "engine/split.py"}
CHOICE_PARAMETERS = {"smoothing", "perturbation", "averaging", "null_mixing"}


def _defaults(tree: ast.AST):
    """(parameter or field name, default expression) of every function and dataclass field of a module."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            positional = a.posonlyargs + a.args
            yield from zip((p.arg for p in positional[len(positional) - len(a.defaults):]), a.defaults)
            yield from ((p.arg, d) for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None)
        elif isinstance(node, ast.AnnAssign) and node.value is not None and isinstance(node.target, ast.Name):
            yield node.target.id, node.value


def test_no_choice_has_a_default_outside_its_home():
    """The noise law, the smoothing, the averaging and the null's mixing have one source of defaults (``experiment/choices.py``): no
    literal law name or smoothing value is a default elsewhere, nor the engine's own names for them, and the engine
    takes every choice resolved (none of its parameters named after a choice has a default)."""
    from analysis.engine.metrics import AVERAGINGS, SMOOTHINGS
    from analysis.engine.split import NULL_MIXINGS

    literal = set(PERTURBATIONS) | set(SMOOTHINGS) | set(AVERAGINGS) | set(NULL_MIXINGS)
    found = []
    for path in MODULES:
        name = path.relative_to(PACKAGE).as_posix()
        if name in DEFAULTS_HOMES:
            continue
        for parameter, default in _defaults(ast.parse(path.read_text())):
            if isinstance(default, ast.Constant) and type(default.value) in (str, float) and default.value in literal:
                found.append(f"{name}: {parameter} = {default.value!r}")
            elif isinstance(default, ast.Name) and default.id in {"SMOOTHING", "DEFAULT"}:
                found.append(f"{name}: {parameter} = {default.id}")
            elif name.startswith("engine/") and parameter in CHOICE_PARAMETERS:
                found.append(f"{name}: {parameter} has a default ({ast.unparse(default)})")
    assert not found, found


def test_the_default_check_finds_a_literal_default():
    tree = ast.parse('def f(x, perturbation="dirichlet", smoothing=1e-12):\n    pass\n')
    assert [(p, d.value) for p, d in _defaults(tree)] == [("perturbation", "dirichlet"), ("smoothing", 1e-12)]


def test_every_function_the_api_page_shows_documents_its_parameters_and_returns():
    """numpy-style sections (the API page renders them): a Parameters section naming every parameter, and a
    Returns section."""
    import importlib
    import inspect
    import re

    page = (PACKAGE.parent / "book" / "api.md").read_text()
    shown = re.findall(r"autofunction:: (\S+)", page)
    assert len(shown) >= 15
    missing = []
    for name in shown:
        module, function = name.rsplit(".", 1)
        f = getattr(importlib.import_module(module), function)
        doc = inspect.getdoc(f) or ""
        parameters = [p for p in inspect.signature(f).parameters]
        if "Returns\n-------" not in doc:
            missing.append(f"{name}: no Returns")
        if parameters and "Parameters\n----------" not in doc:
            missing.append(f"{name}: no Parameters")
        for p in parameters:
            if not re.search(rf"^\**{p} :|^(\w+, )*\**{p}(, \w+)*( :|$)", doc, re.M):
                missing.append(f"{name}: {p} undocumented")
    assert not missing, missing
