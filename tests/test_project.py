"""Project files agree with each other."""

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~ \[]", requirement.strip(), maxsplit=1)[0].lower()


def _names(requirement: str) -> set[str]:
    """The package and, for conda, each extra it names (``dask[distributed]`` is conda's dask and distributed)."""
    extras = re.search(r"\[([^\]]+)\]", requirement)
    return {_name(requirement)} | ({e.strip().lower() for e in extras.group(1).split(",")} if extras else set())


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _makefile_extras() -> set[str]:
    return set(re.search(r"^EXTRAS \?= (.+)$", (ROOT / "Makefile").read_text(), re.M).group(1).split(","))


def test_environment_yml_lists_the_same_dependencies_as_pyproject():
    project = _project()
    wanted = set()
    for requirement in project["dependencies"] + [r for extra in _makefile_extras()
                                                  for r in project["optional-dependencies"][extra]]:
        wanted |= _names(requirement)
    listed = set()
    text = (ROOT / "environment.yml").read_text()
    for line in text[text.index("dependencies:"):].splitlines():
        match = re.match(r"\s+-\s+(?!-e)([A-Za-z0-9_.\-]+)", line)
        if match and match.group(1) not in ("pip", "python"):
            listed.add(_name(match.group(1)))
    assert wanted == listed


def test_jupyter_book_is_pinned_below_2():
    project = _project()
    pin = [r for r in project["optional-dependencies"]["book"] if r.startswith("jupyter-book")]
    assert pin == ["jupyter-book>=1.0.4.post1,<2"]
    assert "jupyter-book>=1.0.4.post1,<2" in (ROOT / "environment.yml").read_text()


def test_numba_and_llvmlite_are_pinned_alike_with_an_upper_bound():
    """The kernels rely on numba's jit options as tested: both files pin numba and llvmlite to the same range."""
    pins = {_name(r): r for r in _project()["dependencies"] if _name(r) in ("numba", "llvmlite")}
    assert set(pins) == {"numba", "llvmlite"}
    text = (ROOT / "environment.yml").read_text()
    for name, requirement in pins.items():
        assert "<" in requirement, f"{name} has no upper bound: {requirement}"
        assert re.search(rf"^\s+-\s+{re.escape(requirement)}$", text, re.M), f"environment.yml lacks {requirement}"


def test_ci_runs_the_readme_test_command():
    assert "make test" in (ROOT / ".ci" / "run").read_text()
    assert "make test" in (ROOT / "README.md").read_text()


def test_the_package_needs_only_the_engine_and_make_installs_every_extra():
    project = _project()
    runtime = {_name(r) for r in project["dependencies"]}
    book_tools = {"jupyter-book", "jupytext", "papermill", "ipykernel", "nbval", "seaborn", "pytest"}  # matplotlib: plan --figure
    assert not runtime & book_tools, runtime & book_tools
    assert _makefile_extras() == set(project["optional-dependencies"]), "make install must install every extra"
    assert project["name"] != "analysis"  # the index's "analysis" is an unrelated project
    assert project["license"] == "MIT" and (ROOT / "LICENSE").is_file()


def test_build_outputs_are_ignored():
    ignored = (ROOT / ".gitignore").read_text().split()
    assert "build/" in ignored and "dist/" in ignored


def test_kernel_tcp_and_shutdown_notices_are_filtered_and_other_messages_kept():
    """make install copies config/ipython_kernel_config.py into the venv, where every kernel reads it."""
    import logging

    assert "etc/ipython" in (ROOT / "Makefile").read_text()
    exec((ROOT / "config" / "ipython_kernel_config.py").read_text(), {})
    logger = logging.getLogger("IPKernelApp")

    def passes(message):
        return all(f.filter(logging.LogRecord("IPKernelApp", logging.WARNING, "", 0, message, (), None))
                   for f in logger.filters)

    assert not passes("Kernel is running over TCP without encryption. All communication ...")
    assert not passes("KeyboardInterrupt caught in kernel.")  # the interrupt that begins every shutdown
    assert passes("Kernel died") and passes("Exception in message handler:")


def test_numba_caches_kernels_by_a_hash_of_every_kernel_source(tmp_path, monkeypatch):
    """numba checks a cached kernel against its own file only; the cache folder is keyed by all kernel sources, so
    an edit to a helper that another module's kernel inlines compiles afresh."""
    import hashlib
    import os

    import numba

    import analysis

    digest = hashlib.sha256(b"".join(source.read_bytes() for source in analysis.KERNEL_SOURCES)).hexdigest()[:16]
    if os.environ.get("NUMBA_CACHE_DIR") == analysis._kernel_cache_dir():
        assert numba.config.CACHE_DIR.endswith(digest)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert analysis._kernel_cache_dir() == str(tmp_path / "annotator-bootstrap" / "numba" / digest)


def test_the_longest_test_files_named_first_exist():
    from conftest import LONGEST_FIRST

    assert all((ROOT / "tests" / name).is_file() for name in LONGEST_FIRST), LONGEST_FIRST


def test_every_folder_of_the_package_is_in_the_wheel():
    """setuptools lists the packages by hand (the resources are data folders): a new folder of modules must join
    the list, or the installed package fails to import it (the packaging test would find it, a minute later)."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    folders = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "analysis").rglob("*.py")}
    assert folders <= listed, folders - listed
