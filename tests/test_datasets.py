"""The dataset registry against the real files in the shared data folder, and the loaders on edge cases."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.data import datasets
from analysis.data.annotations import BATCHED, FULLY_CROSSED, SPARSE
from analysis.errors import DataError

ROOT = Path(__file__).resolve().parents[1]


REAL = sorted(name for name, entry in datasets.ENTRIES.items() if not entry.paper and entry.kind == "annotations")
FILES = sorted(name for name, entry in datasets.ENTRIES.items() if not entry.paper)


@pytest.fixture
def shared_cache():
    """The dataset cache ($ANNOTATION_DATA_DIR; conftest points it at ../shared/data where that exists)."""
    if not os.environ.get(datasets.DATA_ENV) or not datasets.data_dir().is_dir():
        pytest.skip("no dataset cache: set ANNOTATION_DATA_DIR or run `make data`")
    return datasets.data_dir()


@pytest.mark.parametrize("name", REAL)
def test_real_dataset_has_its_registered_counts(name, shared_cache):
    folder = shared_cache / name
    if not folder.is_dir():
        pytest.skip(f"{name} is not in the dataset cache {shared_cache}; run `make data`")
    stated = datasets.COUNTS[name]  # the registry's counts, checked once against the origin's SOURCE.md
    ds = datasets.load(name)
    assert (ds.n_ratings, ds.n_items, ds.n_raters, ds.n_labels) == (
        stated["ratings"], stated["items"], stated["raters"], stated["labels"])
    per_item = ds.raters_per_item
    assert (per_item.min(), float(np.median(per_item)), per_item.max()) == (
        stated["raters_per_item_min"], stated["raters_per_item_median"], stated["raters_per_item_max"])
    assert ds.topology.kind == stated["topology"]


def test_registry_hashes_equal_the_shared_files(shared_cache):
    for name in FILES:
        for remote in datasets.ENTRIES[name].files:
            path = shared_cache / name / remote.name
            if path.exists() and remote.role != "derived":
                assert datasets.file_sha256(path) == remote.sha256, path
                assert remote.url.startswith("https://raw.githubusercontent.com/") and re.search(r"/[0-9a-f]{40}/",
                                                                                                remote.url)


def copy_dataset(name, cache):
    shutil.copytree(datasets.data_dir() / name, cache / name)


def test_tampered_file_is_refused_with_what_to_run(shared_cache, tmp_path, monkeypatch):
    copy_dataset("truthinfer_duck", tmp_path)
    monkeypatch.setenv(datasets.DATA_ENV, str(tmp_path))
    answer = tmp_path / "truthinfer_duck" / "answer.csv"
    answer.write_bytes(answer.read_bytes().replace(b"\n1", b"\n2", 1))
    with pytest.raises(DataError, match=r"corrupted.*datasets fetch truthinfer_duck"):
        datasets.load("truthinfer_duck")
    assert not datasets.available("truthinfer_duck")


def test_missing_dataset_says_what_to_run(tmp_path, monkeypatch):
    monkeypatch.setenv(datasets.DATA_ENV, str(tmp_path))
    with pytest.raises(DataError, match="not in the cache.*make data"):
        datasets.load("lewidi23_armis")


def write_paper_files(cache: Path) -> None:
    """Small files in the published schemas of DICES-350, D3code and Kumar et al."""
    dices = cache / "dices350"
    dices.mkdir(parents=True)
    rows = [{"item_id": i, "rater_id": r, "Q_overall": ["No", "Yes", "Unsure"][(i + r) % 3], "degree_of_harm": "x"}
            for i in range(4) for r in range(3)]
    pd.DataFrame(rows).to_csv(dices / "diverse_safety_adversarial_dialog_350.csv", index=False)
    d3 = cache / "d3code"
    d3.mkdir()
    rows = [{"rating_id": n, "item_id": i, "rater_id": r, "rating_raw": (-1 if n == 0 else (i * r) % 5),
             "rating_binary": 0} for n, (i, r) in enumerate([(1, 10), (1, 11), (2, 10), (2, 12), (3, 11), (3, 12)])]
    pd.DataFrame(rows).to_csv(d3 / "d3-ratings.csv", index=False)
    kumar = cache / "toxicity_kumar2021"
    kumar.mkdir()
    lines = []
    for batch in range(2):
        workers = [f"w{batch}{j}" for j in range(5)]
        for c in range(3):
            ratings = [{"worker_id": w, "toxic_score": (c + j) % 5, "is_profane": False} for j, w in enumerate(workers)]
            lines.append(json.dumps({"comment": "text", "comment_id": batch * 10 + c, "ratings": ratings}))
    (kumar / "toxicity_ratings.json").write_text("\n".join(lines) + "\n")


def test_paper_dataset_parsers_read_their_published_schemas(tmp_path, monkeypatch):
    write_paper_files(tmp_path)
    monkeypatch.setenv(datasets.DATA_ENV, str(tmp_path))
    dices = datasets.load("dices350")
    assert (dices.n_items, dices.n_raters, dices.label_names) == (4, 3, ("No", "Unsure", "Yes"))
    assert dices.topology.kind == FULLY_CROSSED
    d3 = datasets.load("d3code")
    assert d3.n_ratings == 5 and d3.n_dropped == 1 and d3.label_names == (0, 1, 2, 3, 4)
    kumar = datasets.load("toxicity_kumar2021")
    assert (kumar.n_items, kumar.n_raters, kumar.n_ratings) == (6, 10, 30)
    assert kumar.topology.kind == BATCHED and kumar.topology.n_batches == 2


def test_recorded_hash_of_a_paper_dataset_is_checked(tmp_path, monkeypatch):
    write_paper_files(tmp_path)
    monkeypatch.setenv(datasets.DATA_ENV, str(tmp_path))
    (tmp_path / "dices350" / datasets.RECORDED).write_text("0" * 64 + "  diverse_safety_adversarial_dialog_350.csv\n")
    with pytest.raises(DataError, match="corrupted"):
        datasets.load("dices350")


def test_wrong_columns_and_bad_lines_get_clear_errors(tmp_path, monkeypatch):
    write_paper_files(tmp_path)
    monkeypatch.setenv(datasets.DATA_ENV, str(tmp_path))
    pd.DataFrame({"item_id": [1], "rater_id": [2]}).to_csv(
        tmp_path / "dices350" / "diverse_safety_adversarial_dialog_350.csv", index=False)
    with pytest.raises(DataError, match=r"\['Q_overall'\] not found.*'item_id', 'rater_id'"):
        datasets.load("dices350")
    (tmp_path / "toxicity_kumar2021" / "toxicity_ratings.json").write_text('{"comment_id": 1}\n')
    with pytest.raises(DataError, match="line 1 does not follow the published schema"):
        datasets.load("toxicity_kumar2021")


def test_empty_and_single_label_files(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(DataError, match="cannot read"):
        datasets.load(empty)
    header_only = tmp_path / "header.csv"
    header_only.write_text("item,rater,label\n")
    with pytest.raises(DataError, match="no rating"):
        datasets.load(header_only)
    one = tmp_path / "one.csv"
    pd.DataFrame({"item": [1, 2], "rater": [1, 1], "label": ["x", "x"]}).to_csv(one, index=False)
    with pytest.raises(DataError, match="single value"):
        datasets.load(one)


@pytest.mark.slow
def test_ten_million_rows_load_in_bounded_memory(tmp_path):
    """1M items x 10 raters; loaded in a fresh process whose peak memory is checked (about 0.9 GiB measured)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_load import write_big_csv

    path = tmp_path / "ten_million.csv"
    assert write_big_csv(path) == 10_000_000
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_load.py"), "--measure", "--path",
                           str(path)], capture_output=True, text=True, check=True)
    found = re.search(r"(\d+) ratings, (\d+) items, (\d+) raters, 5 labels; load ([\d.]+) s, peak memory (\d+) MiB",
                      done.stdout)
    assert found, done.stdout
    assert found.groups()[:3] == ("10000000", "1000000", "100000")
    assert int(found.group(5)) < 2048, f"peak memory {found.group(5)} MiB"
    print(done.stdout.strip())


def test_cli_lists_and_describes_datasets(shared_cache, capsys):
    from analysis.__main__ import main

    assert main(["datasets", "list"]) == 0
    listed = capsys.readouterr().out
    assert "lewidi25_csc" in listed and "in cache" in listed and "dices-synthetic" in listed
    assert main(["datasets", "info", "lewidi25_csc"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["topology"] == BATCHED and info["items"] == 1408 and len(info["files"]) == 3
    assert main(["datasets", "fetch"]) == 2
    assert main(["datasets", "fetch", "espeland_caries"]) == 0  # local-only files present: nothing to download


def test_fetching_the_missing_datasets_offline_says_so_in_one_line_and_fetches_nothing(tmp_path, monkeypatch,
                                                                                     capsys):
    """What `make book` runs first: with no network (no host answers), one line names what is missing and nothing
    is written; with every dataset present, nothing is tried."""
    import socket

    from analysis.__main__ import main

    tried = []

    def refuse(address, timeout):
        tried.append((address, timeout))
        raise OSError("network is unreachable")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setenv(datasets.DATA_ENV, str(tmp_path / "empty"))
    assert main(["datasets", "fetch", "--all", "--missing", "--if-online"]) == 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("no network:") and "make data" in err
    assert len(tried) == 1 and tried[0][1] == datasets.CONNECT_SECONDS and not (tmp_path / "empty").exists()
    present = [n for n, e in datasets.ENTRIES.items() if not any(f.local_only for f in e.files)]
    monkeypatch.setattr(datasets, "available", lambda name: name in present)
    assert main(["datasets", "fetch", "--all", "--missing", "--if-online"]) == 0
    assert "is in the cache" in capsys.readouterr().err and len(tried) == 1
    assert main(["datasets", "fetch", "lewidi25_csc", "--missing"]) == 2  # the options go with --all
