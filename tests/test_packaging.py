"""The wheel works for anyone who installs it: built from this tree, installed into a fresh virtual environment
with only the package's own dependencies (no book extra), and every command run from another directory on the
bundled demo. About a minute (most of it the install); part of `make test` (marker: packaging)."""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from conftest import SHARED_DATA

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.packaging


def run(command, cwd, env=None, check=True, timeout=600):
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if check and done.returncode != 0:
        raise AssertionError(f"{command} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(python of a fresh venv holding only the wheel and its dependencies, a work directory outside the tree)."""
    base = tmp_path_factory.mktemp("packaging")
    source = base / "src"  # a copy of the tree, so that building leaves nothing in the checkout
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".venv", "_build", ".git", "build", "dist", "*.egg-info",
                                                                "__pycache__", ".pytest_cache", ".hypothesis"))
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(base / "dist"), str(source)], base)
    wheels = list((base / "dist").glob("annotator_bootstrap-*.whl"))
    assert len(wheels) == 1, wheels
    import zipfile

    names = zipfile.ZipFile(wheels[0]).namelist()
    for resource in ("registry.csv", "counts.csv", "paper_tables.csv", "demo_testsuite/items.json",
                     "demo_testsuite/outputs.csv", "demo_testsuite/README.md"):
        assert f"analysis/resources/{resource}" in names, resource
    venv = base / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], base)  # this pip installs into it
    python = venv / "bin" / "python"
    started = time.time()
    # --no-compile: Python compiles the modules a command imports as it imports them, where pip would byte-compile
    # every file of every dependency first (20 s of the install's 26 s here)
    run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-compile", str(wheels[0])],
        base)
    print(f"wheel installed in {time.time() - started:.0f} s")
    work = base / "elsewhere"
    work.mkdir()
    return python, work


def env_for(work: Path) -> dict:
    """The commands' environment: the data and cell caches under ``work``; the venv's modules byte-compiled by the
    first command that imports them (the install left them uncompiled) and read back by the next, even where
    PYTHONDONTWRITEBYTECODE is set here (it would have every command compile pandas, scipy and numba afresh)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONDONTWRITEBYTECODE")}
    return {**env, "ANNOTATION_DATA_DIR": str(work / "data"), "ANALYSIS_CACHE_DIR": str(work / "cache")}


def test_the_wheel_has_no_book_toolchain_and_imports_from_site_packages(installed):
    python, work = installed
    done = run([str(python), "-c", "import analysis, importlib.util as u; print(analysis.__file__, analysis.__version__,"
                " *(u.find_spec(m) is not None for m in ('matplotlib', 'jupyter_book', 'papermill', 'nbval')))"],
               work, env_for(work))
    path, version, *present = done.stdout.split()
    assert path.startswith(str(python.parent.parent)) and version == "0.1.0"
    assert present == ["True", "False", "False", "False"]  # matplotlib: a dependency of plan --figure


def test_every_command_runs_from_another_directory(installed):
    python, work = installed
    env = env_for(work)
    cli = [str(python), "-m", "analysis"]
    helped = run([*cli, "--help"], work, env).stdout
    assert all(command in helped for command in ("run", "table1", "datasets", "testsuite"))
    run([*cli, "run", "--data", "dices-synthetic", "--sampler", "S2", "--budgets", "200", "--ks", "2,5",
         "--epsilons", "0.3", "--metrics", "mae", "--n-samples", "20", "--quiet", "--out", "r.csv"], work, env)
    assert len(pd.read_csv(work / "r.csv")) == 2
    assert "MAE" in run([*cli, "table1", "r.csv"], work, env).stdout
    assert "wmt_dfki_testsuite_outputs" in run([*cli, "datasets", "list"], work, env).stdout
    info = json.loads(run([*cli, "datasets", "info", "truthinfer_duck"], work, env).stdout)
    assert info["in_cache"] is False and info["counts"]["items"] == 108
    if (SHARED_DATA / "truthinfer_duck").is_dir():  # files already in the cache: fetch checks them, no download
        shutil.copytree(SHARED_DATA / "truthinfer_duck", work / "data" / "truthinfer_duck")
        assert "truthinfer_duck" in run([*cli, "datasets", "fetch", "truthinfer_duck"], work, env).stdout
        assert json.loads(run([*cli, "datasets", "info", "truthinfer_duck"], work, env).stdout)["items"] == 108
    else:  # no data and no download here: a clean one-line error
        failed = run([*cli, "datasets", "fetch", "espeland_caries"], work, env, check=False)
        assert failed.returncode == 2 and "Traceback" not in failed.stderr and "error:" in failed.stderr
    demo = run([str(python), "-c", "from analysis.testsuite import suite; print(*suite.demo_paths())"], work,
               env).stdout.split()
    assert all(p.startswith(str(python.parent.parent)) for p in demo)
    judged = run([*cli, "testsuite", "judge", "--rules", demo[0], "--outputs", demo[1], "--out", "j.csv"], work, env)
    assert "wrote 160 judgements" in judged.stderr
    report = run([*cli, "testsuite", "report", "j.csv"], work, env).stdout
    assert "159 scored, 1 not scored" in report and "weighted average" in report
