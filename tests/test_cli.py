"""The command line: a run, its Table 1, and error exits with a one-line reason."""

import subprocess
import sys

import pandas as pd
import pytest

from analysis.__main__ import main
from conftest import sparse_table


def test_run_then_table1(tmp_path, capsys):
    out = tmp_path / "results.csv"
    code = main(["run", "--data", "dices-synthetic", "--sampler", "S1", "--budgets", "500,2000", "--ks", "5,50",
                 "--epsilons", "0.4", "--metrics", "mae,jsd", "--n-samples", "60", "--seed", "2", "--quiet",
                 "--no-cache", "--out", str(out)])
    assert code == 0
    table = pd.read_csv(out)
    assert len(table) == 2 * 2 * 2 and set(table["metric"]) == {"mae", "jsd"}
    assert (tmp_path / "results.csv.json").exists()
    capsys.readouterr()
    assert main(["table1", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "dices-synthetic:S1 (ε=0.4)" in printed and "MAE" in printed


def test_own_file_with_named_columns(tmp_path):
    path = tmp_path / "mine.tsv"
    sparse_table().rename(columns={"item": "q", "rater": "who", "label": "y"}).to_csv(path, sep="\t", index=False)
    out = tmp_path / "r.csv"
    code = main(["run", "--data", str(path), "--item", "q", "--rater", "who", "--label", "y", "--sampler", "S2",
                 "--budgets", "100", "--ks", "2", "--epsilons", "0.3", "--n-samples", "20", "--quiet", "--no-cache",
                 "--out", str(out)])
    assert code == 0 and len(pd.read_csv(out)) == 8


@pytest.mark.parametrize("args, message", [
    (["run", "--data", "nowhere.csv", "--sampler", "S2", "--out", "x.csv"], "no such file: nowhere.csv"),
    (["run", "--data", "dices-synthetic", "--sampler", "S3", "--out", "x.csv"], "S3 needs batched"),
    (["run", "--data", "dices-synthetic", "--sampler", "S2", "--ks", "0", "--out", "x.csv"], ">= 1"),
    (["run", "--data", "dices-synthetic", "--sampler", "S2", "--metrics", "bleu", "--out", "x.csv"], "unknown metric"),
    (["table1", "missing.csv"], "cannot read"),
])
def test_bad_arguments_exit_2_with_one_line(args, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("args", [["run", "--sampler", "S4"], ["run", "--data", "x", "--budgets", "a,b"], []])
def test_argparse_errors_exit_2_with_one_line(args, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "error:" in err


def test_help_documents_every_option():
    text = subprocess.run([sys.executable, "-m", "analysis", "run", "--help"], capture_output=True, text=True).stdout
    for option in ("--data", "--item", "--rater", "--label", "--labels", "--batch", "--sampler", "--budgets", "--ks",
                   "--epsilons", "--metrics", "--n-samples", "--seed", "--jobs", "--out"):
        assert option in text


def test_explain_prints_every_cells_plan_and_writes_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = main(["run", "--data", "toxicity-synthetic", "--sampler", "S3", "--budgets", "100,50000", "--ks", "1,40",
                 "--epsilons", "0.3", "--explain"])
    assert code == 0
    printed = capsys.readouterr().out
    lines = [line for line in printed.splitlines() if line.strip().startswith("0.3")]
    assert len(lines) == 4  # every cell once
    assert "gather, defer" in printed and "by-item" in printed and "4 cells" in printed
    assert list(tmp_path.iterdir()) == []
