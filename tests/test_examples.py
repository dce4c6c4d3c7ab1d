"""Every Python example of README.md and book/*.md runs as it stands: each fenced ``python`` block is executed in
a folder that holds the small files the examples name (``ratings.csv``, ``system_a.csv``, ``system_b.csv``), with
the cell cache in that folder. A block that needs what a test machine cannot have skips, saying why. Shell
examples are not run."""

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [ROOT / "README.md", *sorted((ROOT / "book").glob("*.md"))]
FENCE = re.compile(r"^```(?:python|\{code-block\} python)[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)
NEEDS = {"dask_jobqueue": "it starts Slurm jobs, which need dask-jobqueue and a Slurm cluster"}
LABELS = ("safe", "unsure", "unsafe")


def examples() -> list[tuple[str, str]]:
    """(where, code) of every Python block, where as ``FILE:LINE`` of its first line."""
    found = []
    for source in SOURCES:
        text = source.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            line = text.count("\n", 0, match.start(1)) + 1
            found.append((f"{source.relative_to(ROOT)}:{line}", match.group(1)))
    return found


def write_inputs(folder: Path) -> None:
    """30 items rated by 5 workers each (both item columns the examples use), and two systems' labels."""
    rng = np.random.default_rng(0)
    items = [f"q{i:02d}" for i in range(30)]
    leaning = rng.dirichlet(np.ones(3), size=len(items))
    rows = [(item, f"w{w}", LABELS[rng.choice(3, p=leaning[i])]) for i, item in enumerate(items) for w in range(5)]
    table = pd.DataFrame(rows, columns=["question", "worker", "answer"])
    table.insert(1, "question_id", table["question"])
    table.to_csv(folder / "ratings.csv", index=False)
    majority = [LABELS[int(np.argmax(p))] for p in leaning]
    pd.DataFrame({"item": items, "label": majority}).to_csv(folder / "system_a.csv", index=False)
    pd.DataFrame({"item": items, "label": [LABELS[rng.integers(3)] for _ in items]}).to_csv(folder / "system_b.csv",
                                                                                               index=False)


def test_the_examples_are_found():
    where = [w for w, _ in examples()]
    assert any(w.startswith("README.md") for w in where) and any(w.startswith("book/own-data.md") for w in where)
    assert len(where) >= 4, where


@pytest.mark.parametrize("where, code", examples(), ids=[w for w, _ in examples()])
def test_every_python_example_runs(where, code, tmp_path, monkeypatch, capsys):
    for module, why in NEEDS.items():
        if re.search(rf"^\s*(from|import)\s+{module}\b", code, re.M):
            pytest.skip(f"{where} is not run: {why}")
    write_inputs(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ANALYSIS_CACHE_DIR", str(tmp_path / "cache"))
    exec(compile(code, where, "exec"), {"__name__": "__example__"})
    assert capsys.readouterr().out.strip(), f"{where} printed nothing"  # every example shows its result
