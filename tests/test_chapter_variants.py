"""A chapter re-run with other parameters, as `make chapter` does: another epsilon, and a user's own file.

Each run executes one chapter with papermill at a small scale, in the test's own folder with its own caches (apart
from the small build of tests/test_book.py, so that both can run at once under ``pytest -n``).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import jupytext
import pytest

from tests.conftest import crossed_table

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow  # each test executes chapters with papermill


def _run_chapter(name: str, folder: Path, *parameters: str) -> dict:
    """Execute one chapter with papermill at the small scale plus ``parameters``, in ``folder`` with its own caches
    (apart from the small build, so that the two can run at once), in one process (the test workers fill the
    cores); return the executed notebook."""
    source, output = folder / f"{name}.md.ipynb", folder / f"{name}.ipynb"
    jupytext.write(jupytext.read(ROOT / "notebooks" / f"{name}.md"), source)
    command = [sys.executable, "-m", "papermill", "--cwd", str(ROOT), "--kernel", "python3", "--log-level", "ERROR",
               str(source), str(output), "-p", "n_jobs", "1", "-p", "n_samples", "30",
               "-y", "{budgets: [100, 1000], ks: [1, 5]}", *parameters]
    (folder / "empty-dataset-cache").mkdir(exist_ok=True)
    env = {**os.environ, "ANALYSIS_CACHE_DIR": str(folder / "cache"), "BOOK_BUILD_DIR": str(folder),
           "ANNOTATION_DATA_DIR": str(folder / "empty-dataset-cache")}
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(output.read_text())


def _outputs(notebook: dict) -> str:
    texts = []
    for cell in notebook["cells"]:
        for output in cell.get("outputs", []):
            data = {kind.removeprefix("application/papermill.record/"): value  # glued values included
                    for kind, value in output.get("data", {}).items()}
            texts += ["".join(data.get(kind, "")) for kind in ("text/plain", "text/html", "text/markdown")]
    return "\n".join(texts)


def test_another_epsilon_and_a_users_file_label_what_they_compare(tmp_path):
    """``make chapter NB=rq3 PARAMS="-p epsilon 0.2"`` labels both epsilons; a user's CSV gets no paper values."""
    rq3 = _outputs(_run_chapter("rq3", tmp_path, "-p", "epsilon", "0.2", "-y", "{epsilons: [0.2]}"))
    assert "ours at ε = 0.2, the paper's at ε = 0.3" in rq3 and "Tables and figures at ε = 0.2" in rq3
    csv = tmp_path / "ratings.csv"
    crossed_table().to_csv(csv, index=False)
    rq1 = _outputs(_run_chapter("rq1", tmp_path, "-p", "dataset", str(csv)))  # a user's file: only the chapter's ε
    assert "our values only" in rq1 and "ours (paper)" not in rq1
    assert "regenerated" not in rq1 and "which these data are not" in rq1
