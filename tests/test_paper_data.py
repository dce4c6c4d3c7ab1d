"""With the paper's three files in the dataset cache the RQ chapters use them; without them, the stand-ins.

The files are written at full size in the upstream schemas (DATA.md) into a temporary cache: DICES-350 (350 x 123,
one CSV row per rating), D3code (4554 items, 4309 raters x 35 items, raw ratings -1..4) and Kumar et al. (107,620
comments in batches of 20, 5 raters each, one JSON line per comment).
"""

import json

import jupytext
import numpy as np
import pandas as pd
import pytest

from analysis.book import chapter
from analysis.experiment.choices import BOOK
from analysis.data import datasets
from analysis.data.datasets import DATA_ENV, paper_or_stand_in
from analysis.errors import DataError
from analysis.data.synthetic import make_stand_in

from test_book import ROOT

PAPER = {"dices350": "dices-synthetic", "d3code": "d3code-synthetic", "toxicity_kumar2021": "toxicity-synthetic"}


def write_dices(folder):
    ds = make_stand_in("dices-synthetic")  # the published design: 350 items x 123 raters
    table = pd.DataFrame({"id": np.arange(ds.n_ratings), "item_id": ds.item_ids[ds.item] + 1000,
                          "rater_id": ds.rater_ids[ds.rater] + 296000,
                          "rater_gender": np.where(ds.rater % 2, "Woman", "Man"),
                          "Q_overall": np.asarray(ds.label_names)[ds.label]})
    table.to_csv(folder / "diverse_safety_adversarial_dialog_350.csv", index=False)


def write_d3code(folder, rng):
    ds = make_stand_in("d3code-synthetic")  # 4554 items; 4309 raters x 35 items
    raw = np.asarray(ds.label_names)[ds.label].astype(int)
    raw[rng.random(len(raw)) < 0.01] = -1  # "did not understand"
    pd.DataFrame({"rating_id": np.arange(len(raw)), "item_id": ds.item, "rater_id": ds.rater + 10_000,
                  "rating_raw": raw, "rating_binary": (raw >= 2).astype(int)}).to_csv(folder / "d3-ratings.csv",
                                                                                        index=False)


def write_kumar(folder, rng):
    n_comments, n_raters = 107_620, 17_280
    scores = rng.integers(0, 5, (n_comments, 5))
    with open(folder / "toxicity_ratings.json", "w") as out:
        for comment in range(n_comments):
            first = (comment // 20) * 5  # batches of 20 comments share 5 raters
            ratings = [{"worker_id": f"w{(first + j) % n_raters}", "toxic_score": int(scores[comment, j]),
                        "is_profane": False} for j in range(5)]
            out.write(json.dumps({"comment_id": f"c{comment}", "comment": "...", "ratings": ratings}) + "\n")


@pytest.fixture(scope="module")
def paper_cache(tmp_path_factory):
    root = tmp_path_factory.mktemp("paper-data")
    rng = np.random.default_rng(0)
    for name, write in (("dices350", write_dices), ("d3code", lambda f: write_d3code(f, rng)),
                        ("toxicity_kumar2021", lambda f: write_kumar(f, rng))):
        (root / name).mkdir()
        write(root / name)
    return root


def test_without_the_files_the_chapters_use_the_stand_ins(tmp_path, monkeypatch):
    monkeypatch.setenv(DATA_ENV, str(tmp_path))
    for paper, stand_in in PAPER.items():
        assert paper_or_stand_in(paper) == stand_in == paper_or_stand_in(stand_in)


def test_with_the_files_the_chapters_use_the_papers_data(paper_cache, monkeypatch):
    monkeypatch.setenv(DATA_ENV, str(paper_cache))
    for paper, stand_in in PAPER.items():
        assert paper_or_stand_in(paper) == paper == paper_or_stand_in(stand_in)
    data = [datasets.load(name) for name in PAPER]
    assert [(ds.n_items, ds.topology.kind) for ds in data] == [(350, "fully crossed"), (4554, "sparse"),
                                                             (107_620, "batched")]
    assert data[1].n_dropped > 0  # D3code's -1 ratings are not labels
    banner = repr(chapter.banner(data, [100], [1], [0.3], 10, None, BOOK.perturbation))
    assert "the paper's data" in banner.lower() and "stand-in" not in banner.lower()


@pytest.mark.parametrize("name", ["rq1", "rq2", "rq3", "rq4"])
def test_each_rq_chapter_defaults_to_the_papers_files_when_present(name, paper_cache, tmp_path, monkeypatch):
    cell = next(c for c in jupytext.read(ROOT / "notebooks" / f"{name}.md").cells
                if "parameters" in c.metadata.get("tags", []))
    chosen = {}
    for cache, expected in ((paper_cache, set(PAPER)), (tmp_path, set(PAPER.values()))):
        monkeypatch.setenv(DATA_ENV, str(cache))
        namespace: dict = {}
        exec(cell.source, namespace)
        chosen[str(cache)] = {v for k, v in namespace.items() if k.endswith("dataset") and isinstance(v, str)}
        assert chosen[str(cache)] and chosen[str(cache)] <= expected, name


def test_a_name_that_is_not_the_papers_is_an_error():
    with pytest.raises(DataError, match="not one of the paper's datasets"):
        paper_or_stand_in("lewidi23_armis")
