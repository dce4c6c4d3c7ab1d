"""Project files agree with each other."""

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~ \[]", requirement.strip(), maxsplit=1)[0].lower()


def test_environment_yml_lists_the_same_dependencies_as_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = {_name(r) for r in project["dependencies"] + project["optional-dependencies"]["test"]}
    listed = set()
    text = (ROOT / "environment.yml").read_text()
    for line in text[text.index("dependencies:"):].splitlines():
        match = re.match(r"\s+-\s+(?!-e)([A-Za-z0-9_.\-]+)", line)
        if match and match.group(1) not in ("pip", "python"):
            listed.add(_name(match.group(1)))
    assert wanted == listed


def test_jupyter_book_is_pinned_below_2():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pin = [r for r in project["dependencies"] if r.startswith("jupyter-book")]
    assert pin == ["jupyter-book>=1.0.4.post1,<2"]
    assert "jupyter-book>=1.0.4.post1,<2" in (ROOT / "environment.yml").read_text()


def test_ci_runs_the_readme_test_command():
    assert "make test" in (ROOT / ".ci" / "run").read_text()
    assert "make test" in (ROOT / "README.md").read_text()
