"""Every bad input a user reported, and what it gets: one `error:` line naming the flag or the file, exit code 2,
no partial output and no traceback. The table below is the record of that behaviour; keep it in step."""

import json
import os
import re
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from analysis.data import datasets
from analysis.testsuite import suite as ts
from analysis.__main__ import main

ROOT = Path(__file__).resolve().parents[1]
BINARY = bytes(range(256)) * 8
RUN = ["run", "--sampler", "S2", "--budgets", "100", "--ks", "2", "--epsilons", "0.3", "--n-samples", "20",
       "--quiet", "--no-cache"]


def ratings(labels) -> pd.DataFrame:
    """Ten items rated by three raters each, with labels drawn in turn from ``labels``."""
    rows = [(i, r) for i in range(10) for r in range(3)]
    return pd.DataFrame({"item": [i for i, _ in rows], "rater": [r for _, r in rows],
                         "label": [labels[n % len(labels)] for n in range(len(rows))]})


def make_files(folder: Path) -> None:
    """The inputs of the table, written into ``folder``."""
    (folder / "binary.csv").write_bytes(BINARY)
    (folder / "binary.json").write_bytes(BINARY)
    (folder / "binary.jsonl").write_bytes(BINARY)
    pd.DataFrame({"dataset": ["d"], "sampler": ["S2"], "epsilon": [0.3], "NK": [100], "K": [2], "metric": ["mae"],
                  "p_value": ["oops"], "delta": [0.1]}).to_csv(folder / "text_p.csv", index=False)
    (folder / "results_header.csv").write_text("dataset,sampler,epsilon,NK,K,metric,p_value,delta\n")
    (folder / "outputs_header.csv").write_text("item_id,system,output\n")
    (folder / "judgements_header.csv").write_text("item_id,system,category,phenomenon,judgement,decided_by,output\n")
    pd.DataFrame({"item_id": ["1", "2"], "system": ["A", "A"], "category": ["C", "C"], "phenomenon": ["P", "P"],
                  "judgement": ["pass", "maybe"]}).to_csv(folder / "judgements_odd.csv", index=False)
    ratings(["1", "two", "@@", "3.5"]).to_csv(folder / "garbage.csv", index=False)
    ratings([str(v) for v in range(1, 11)] + ["?"]).to_csv(folder / "stray.csv", index=False)
    ratings([1, 2, 3]).to_csv(folder / "good.csv", index=False)
    pd.concat([ratings([1, 2]), ratings([2, 1]).head(1)]).to_csv(folder / "dup.csv", index=False)
    (folder / "link.csv").symlink_to("good.csv")
    (folder / "adir").mkdir()
    (folder / "afile").write_text("not a folder\n")
    (folder / "sidecar.csv.json").mkdir()
    ratings(["safe", " safe", "Safe", "safe ", "unsafe"]).to_csv(folder / "variants.csv", index=False)
    ratings([round(0.1234 + n / 97, 4) for n in range(30)]).to_csv(folder / "floats.csv", index=False)
    pd.DataFrame({"item": [n // 2 for n in range(80)], "rater": [n % 2 for n in range(80)],
                  "label": [n % 60 for n in range(80)]}).to_csv(folder / "many.csv", index=False)
    (folder / "ragged.csv").write_text("item,rater,label\n1,a,x\n1,b,y\n2,a,x\n2,b,y,z\n")
    (folder / "ragged_first.csv").write_text("item,rater,label,note\n1,a,x,,extra\n1,b,y,\n2,a,x,\n")
    ratings([1, 2]).query("item == 0").to_csv(folder / "one_item.csv", index=False)
    ratings([1, 2]).query("rater == 0").to_csv(folder / "one_rater.csv", index=False)
    batched = ratings([1, 2]).assign(batch=lambda t: "b" + (t["item"] // 5).astype(str))
    batched.loc[batched.index[-1], "rater"] = 7  # one item of batch b1 has a rater the others lack
    batched.to_csv(folder / "batch.csv", index=False)
    (folder / "latin1.csv").write_bytes("item,rater,label\n1,a,caf\u00e9\n1,b,th\u00e9\n".encode("latin-1"))
    (folder / "no_items.json").write_text('{"rules": []}')
    os.mkfifo(folder / "pipe")


def snapshot(folder: Path) -> dict:
    """Every path under ``folder`` with its content (links as their target), to see that nothing changed."""
    return {str(p.relative_to(folder)): os.readlink(p) if p.is_symlink() else p.read_bytes() if p.is_file() else None
            for p in sorted(folder.rglob("*"))}


# (name, arguments, what stderr must contain); every case exits 2 with one line and writes nothing
BAD_INPUTS = [
    ("table1 on a binary file", ["table1", "binary.csv"], "binary.csv"),
    ("table1 with text in p_value", ["table1", "text_p.csv"], "p_value holds 'oops'"),
    ("table1 on a header-only file", ["table1", "results_header.csv"], "no result row"),
    ("table1 on a missing file", ["table1", "missing.csv"], "cannot read missing.csv"),
    ("table1 --alpha 5", ["table1", "text_p.csv", "--alpha", "5"], "--alpha"),
    ("table1 --alpha 0", ["table1", "text_p.csv", "--alpha", "0"], "(0, 1)"),
    ("table1 --alpha text", ["table1", "text_p.csv", "--alpha", "x"], "--alpha"),
    ("judge --rules binary", ["testsuite", "judge", "--rules", "binary.json", "--outputs", "OUTPUTS", "--out",
                              "out.csv"], "binary.json"),
    ("judge --outputs binary CSV", ["testsuite", "judge", "--rules", "RULES", "--outputs", "binary.csv", "--out",
                                    "out.csv"], "binary.csv"),
    ("judge --outputs binary JSON lines", ["testsuite", "judge", "--rules", "RULES", "--outputs", "binary.jsonl",
                                           "--out", "out.csv"], "binary.jsonl"),
    ("judge on a header-only outputs file", ["testsuite", "judge", "--rules", "RULES", "--outputs",
                                             "outputs_header.csv", "--out", "out.csv"], "has no output"),
    ("report on a binary file", ["testsuite", "report", "binary.csv"], "binary.csv"),
    ("report with unknown judgements", ["testsuite", "report", "judgements_odd.csv"], "unknown judgement value(s) ['maybe']"),
    ("report on a header-only file", ["testsuite", "report", "judgements_header.csv"], "no judgement"),
    ("report on the rules file", ["testsuite", "report", "RULES"], "cannot read"),
    ("run with labels 1, two, @@, 3.5", [*RUN, "--data", "garbage.csv", "--out", "out.csv"], "--labels"),
    ("run with a 1-10 scale and a stray ?", [*RUN, "--data", "stray.csv", "--out", "out.csv"], "mixes numbers"),
    ("run --labels missing a label", [*RUN, "--data", "good.csv", "--labels", "1,2", "--out", "out.csv"],
     "not in the label order [1, 2] given with --labels"),
    ("run with repeated pairs", [*RUN, "--data", "dup.csv", "--out", "out.csv"], "--duplicates first"),
    ("run with a wrong label column", [*RUN, "--data", "good.csv", "--label", "score", "--out", "out.csv"],
     "--label"),
    ("run --n-samples 1", [*RUN, "--data", "good.csv", "--n-samples", "1", "--out", "out.csv"], "--n-samples"),
    ("run --jobs 0", [*RUN, "--data", "good.csv", "--jobs", "0", "--out", "out.csv"], "--jobs"),
    ("run --epsilons 2", [*RUN, "--data", "good.csv", "--epsilons", "2", "--out", "out.csv"], "--epsilons"),
    ("run --ks 0", [*RUN, "--data", "good.csv", "--ks", "0", "--out", "out.csv"], "--ks"),
    ("run --budgets a,b", [*RUN, "--data", "good.csv", "--budgets", "a,b", "--out", "out.csv"], "--budgets"),
    ("run --sampler S3 on a sparse table", [*RUN, "--data", "good.csv", "--sampler", "S3", "--out", "out.csv"],
     "S3"),
    ("datasets info of an unknown name", ["datasets", "info", "nope"], "nope"),
    ("datasets fetch with no name", ["datasets", "fetch"], "give one dataset name or --all"),
    ("datasets fetch of an unknown name", ["datasets", "fetch", "nope"], "unknown dataset"),
    # outputs: never an input, a folder, a device, a file of the system or standard output; checked before any work
    ("run --out the input", [*RUN, "--data", "good.csv", "--out", "good.csv"], "is the input good.csv"),
    ("run --out a link to the input", [*RUN, "--data", "good.csv", "--out", "link.csv"], "is the input good.csv"),
    ("run --out /dev/stdout", [*RUN, "--data", "good.csv", "--out", "/dev/stdout"], "is in /dev"),
    ("run --out /proc/r.csv", [*RUN, "--data", "good.csv", "--out", "/proc/r.csv"], "is in /proc"),
    ("run --out -", [*RUN, "--data", "good.csv", "--out", "-"], "standard output is not supported"),
    ("run --out a folder", [*RUN, "--data", "good.csv", "--out", "adir"], "adir is a folder"),
    ("run --out a named pipe", [*RUN, "--data", "good.csv", "--out", "pipe"], "pipe is not a regular file"),
    ("run --out in a file", [*RUN, "--data", "good.csv", "--out", "afile/r.csv"], "afile is a file, not a folder"),
    ("run --out whose .json is a folder", [*RUN, "--data", "good.csv", "--out", "sidecar.csv"],
     "sidecar.csv.json is a folder"),
    ("judge --out the outputs file", ["testsuite", "judge", "--rules", "RULES", "--outputs", "good.csv", "--out",
                                      "good.csv"], "is the input good.csv"),
    # run parameters
    ("run with a cell too large for memory", [*RUN, "--data", "good.csv", "--budgets", "100000", "--ks", "100000",
                                              "--out", "r.csv"], "GiB of memory"),
    ("run --seed -1", [*RUN, "--data", "good.csv", "--seed", "-1", "--out", "r.csv"], "--seed must be"),
    ("run --cache-dir a file", [*RUN[:-1], "--data", "good.csv", "--cache-dir", "afile", "--out", "r.csv"],
     "--cache-dir afile: afile is a file"),
    ("run --ks 1,,5", [*RUN, "--data", "good.csv", "--ks", "1,,5", "--out", "r.csv"], "an empty value in '1,,5'"),
    ("run --budgets 100,", [*RUN, "--data", "good.csv", "--budgets", "100,", "--out", "r.csv"], "an empty value"),
    ("run --metrics mae,,jsd", [*RUN, "--data", "good.csv", "--metrics", "mae,,jsd", "--out", "r.csv"],
     "an empty value"),
    ("run --labels 1,,2", [*RUN, "--data", "good.csv", "--labels", "1,,2,3", "--out", "r.csv"], "an empty value"),
    ("run --data a folder", [*RUN, "--data", "adir", "--out", "r.csv"], "adir is a folder, not a file"),
    ("run --data a mistyped name", [*RUN, "--data", "dices-synthtic", "--out", "r.csv"],
     "did you mean dices-synthetic"),
    ("run --data a missing path", [*RUN, "--data", "data/ratings.csv", "--out", "r.csv"],
     "no such file: data/ratings.csv"),
    # dirty data, named
    ("run with labels spelt four ways", [*RUN, "--data", "variants.csv", "--out", "r.csv"],
     "(' safe', 'Safe', 'safe', 'safe '); give --normalize-labels"),
    ("plan with labels spelt four ways", ["plan", "--data", "variants.csv", "--epsilon", "0.3"],
     "(' safe', 'Safe', 'safe', 'safe '); give --normalize-labels"),
    ("plan --ks 1,,5", ["plan", "--data", "good.csv", "--epsilon", "0.3", "--ks", "1,,5"], "an empty value in '1,,5'"),
    ("compare --labels missing a label", ["compare", "--data", "good.csv", "--labels", "1,2", "--a", "a.csv", "--b",
                                          "a.csv"], "not in the label order [1, 2] given with --labels"),
    ("run with continuous labels", [*RUN, "--data", "floats.csv", "--out", "r.csv"], "look like measurements"),
    ("run with 60 labels", [*RUN, "--data", "many.csv", "--out", "r.csv"], "60 distinct labels, more than 50"),
    ("run with a long row", [*RUN, "--data", "ragged.csv", "--out", "r.csv"], "line 5 has 4 fields, the header 3"),
    ("run with a long first row", [*RUN, "--data", "ragged_first.csv", "--out", "r.csv"],
     "the first row after the header has more fields than the header's 4"),
    ("run on one item", [*RUN, "--data", "one_item.csv", "--out", "r.csv"], "has 1 item with a label"),
    ("run on one rater", [*RUN, "--data", "one_rater.csv", "--out", "r.csv"], "has 1 rater with a label"),
    ("run --batch with a stray rater", [*RUN, "--data", "batch.csv", "--batch", "batch", "--sampler", "S3", "--out",
                                        "r.csv"], "batch 'b1' of column 'batch' has no fixed rater set"),
    ("run on a Latin-1 file", [*RUN, "--data", "latin1.csv", "--out", "r.csv"], "not UTF-8 text (byte 0xe9"),
    ("judge --rules without items", ["testsuite", "judge", "--rules", "no_items.json", "--outputs", "OUTPUTS",
                                     "--out", "out.csv"], "it has no 'items' key"),
]


def call(args, capsys) -> tuple[int, str, str]:
    try:
        code = main(args)
    except SystemExit as done:  # argparse's own errors
        code = done.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("name, args, message", BAD_INPUTS, ids=[case[0] for case in BAD_INPUTS])
def test_bad_input_gets_one_error_line_and_exit_2(name, args, message, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    make_files(tmp_path)
    rules, outputs = ts.demo_paths()
    args = [str(rules) if a == "RULES" else str(outputs) if a == "OUTPUTS" else a for a in args]
    before = snapshot(tmp_path)
    code, out, err = call(args, capsys)
    assert code == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "error:" in lines[0] and message in lines[0], err
    assert "Traceback" not in err and out == ""
    assert snapshot(tmp_path) == before  # nothing written, replaced or left behind


@pytest.mark.slow
def test_no_traceback_from_a_real_process(tmp_path):
    """The same in a fresh interpreter, for two of the cases above."""
    make_files(tmp_path)
    for args in (["table1", "binary.csv"], ["testsuite", "report", "judgements_odd.csv"]):
        done = subprocess.run([sys.executable, "-m", "analysis", *args], cwd=tmp_path, capture_output=True,
                              text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert done.returncode == 2 and "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1


def test_explicit_labels_accept_mixed_values_and_numbers_sort_numerically(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    make_files(tmp_path)
    code, _, err = call([*RUN, "--data", "stray.csv", "--labels", "1,2,3,4,5,6,7,8,9,10,?", "--out", "r.csv"], capsys)
    assert code == 0, err
    provenance = json.loads((tmp_path / "r.csv.json").read_text())
    assert provenance["dataset"] == "stray"
    ds = datasets.load(tmp_path / "stray.csv", label_order=[*range(1, 11), "?"])
    assert ds.label_names[:3] == (1, 2, 3) and ds.n_labels == 11
    from analysis.data.annotations import from_table

    assert from_table(ratings([str(v) for v in range(1, 11)])).label_names == tuple(range(1, 11))


def test_repeated_grid_values_are_removed_with_a_note(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    make_files(tmp_path)
    code, _, err = call(["run", "--sampler", "S2", "--data", "good.csv", "--budgets", "100,100", "--ks", "2,2",
                         "--epsilons", "0.3,0.3", "--metrics", "mae", "--n-samples", "20", "--quiet", "--no-cache",
                         "--out", "r.csv"], capsys)
    assert code == 0, err
    assert len(pd.read_csv(tmp_path / "r.csv")) == 1
    notes = [line for line in err.splitlines() if line.startswith("note: repeated")]
    assert len(notes) == 3 and "--budgets" in notes[0] and "--ks" in notes[1] and "--epsilons" in notes[2]


def test_k_above_the_largest_rater_pool_gets_a_note(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    make_files(tmp_path)
    code, _, err = call([*RUN, "--data", "good.csv", "--ks", "2,5", "--out", "r.csv"], capsys)
    assert code == 0, err
    notes = [line for line in err.splitlines() if "drawn with replacement" in line]
    assert len(notes) == 1 and "K 5 " in notes[0] and "(3)" in notes[0]


def test_outputs_and_cache_files_get_the_usual_mode(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    make_files(tmp_path)
    old = os.umask(0o022)
    try:
        code, _, err = call([*RUN[:-1], "--data", "good.csv", "--cache-dir", "cache", "--out", "r.csv"], capsys)
    finally:
        os.umask(old)
    assert code == 0, err
    files = [tmp_path / "r.csv", tmp_path / "r.csv.json", *(tmp_path / "cache").glob("*.json")]
    assert len(files) > 2
    assert {stat.S_IMODE(f.stat().st_mode) for f in files} == {0o644}


def test_help_names_every_command_once_in_plain_text(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    for command in ("run", "table1", "datasets", "testsuite"):
        assert len(re.findall(rf"^ +{command} +\S", text, re.M)) == 1, text
    assert "`" not in text and "{run," not in text  # no reStructuredText, no list of commands in the usage line


def test_datasets_info_works_before_a_download(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(datasets.DATA_ENV, str(tmp_path))
    code, out, err = call(["datasets", "info", "lewidi25_csc"], capsys)
    assert code == 0, err
    info = json.loads(out)
    assert info["in_cache"] is False and "datasets fetch lewidi25_csc" in info["to_download"]
    assert len(info["files"]) == 3 and info["counts"]["items"] == 1408 and info["licence"]
    code, out, _ = call(["datasets", "info", "wmt_dfki_testsuite_outputs"], capsys)
    info = json.loads(out)
    assert code == 0 and "WMT" in info["licence"] and info["counts"]["wmt23.de-en systems"] == 13
    assert {f["role"] for f in info["files"] if "role" in f} == {"upstream", "derived"}
    code, out, _ = call(["datasets", "info", "dices350"], capsys)
    counts = json.loads(out)["counts"]
    assert code == 0 and (counts["items"], counts["raters"], counts["labels"]) == (350, 123, 3)
    assert list(tmp_path.iterdir()) == []  # info never downloads


def test_a_failed_fetch_leaves_no_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(datasets.DATA_ENV, str(tmp_path))
    import pooch

    def offline(*args, **kwargs):
        Path(kwargs["path"]).mkdir(parents=True, exist_ok=True)  # as pooch does before it downloads
        raise OSError("network is unreachable")

    monkeypatch.setattr(pooch, "retrieve", offline)
    code, _, err = call(["datasets", "fetch", "truthinfer_duck"], capsys)
    assert code == 2 and "truthinfer_duck not fetched: network is unreachable" in err and len(err.splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_output_piped_into_head_is_quiet(tmp_path):
    rules, outputs = ts.demo_paths()
    judgements = tmp_path / "j.csv"
    assert main(["testsuite", "judge", "--rules", str(rules), "--outputs", str(outputs), "--out", str(judgements)]) == 0
    python = f"{sys.executable} -m analysis"
    # `true` exits without reading, so every write meets a closed pipe (as with `head` on a long output)
    for command in (f"{python} datasets list", f"{python} testsuite report {judgements}",
                    f"{python} datasets info wmt_dfki_testsuite_outputs"):
        done = subprocess.run(["bash", "-c", f"{command} | true; {command} | head -1"], capture_output=True,
                              text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert done.stderr == "", done.stderr


def interruptible(args) -> subprocess.Popen:
    """``python -m analysis ARGS`` in a process that takes Ctrl-C as a terminal's would (SIGINT not ignored)."""
    return subprocess.Popen([sys.executable, "-m", "analysis", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


GRID = ["run", "--data", "dices-synthetic", "--sampler", "S2", "--budgets", "5000,10000,20000", "--ks",
        "1,5,10,20,50", "--epsilons", "0.1,0.2,0.3", "--n-samples", "1000", "--jobs", "2", "--quiet"]


@pytest.mark.slow
def test_ctrl_c_stops_at_once_and_says_what_was_cached(tmp_path):
    process = interruptible([*GRID, "--cache-dir", str(tmp_path / "cache"), "--out", str(tmp_path / "r.csv")])
    deadline = time.time() + 120
    while time.time() < deadline and len(list((tmp_path / "cache").glob("*.json"))) < 2:
        time.sleep(0.1)
    sent = time.time()
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)
    took = time.time() - sent
    assert process.returncode == 130, err
    assert took < 2, f"took {took:.1f} s to stop"
    assert "Traceback" not in err and "interrupted" in err
    cached = len(list((tmp_path / "cache").glob("*.json")))
    assert f"{cached} of 45 cells are cached" in err
    assert not (tmp_path / "r.csv").exists()


def test_notes_for_unseen_labels_and_a_budget_far_beyond_the_data(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    make_files(tmp_path)
    code, _, err = call([*RUN, "--data", "good.csv", "--labels", "1,2,3,4", "--budgets", "20000", "--ks", "1",
                         "--out", "r.csv"], capsys)
    assert code == 0, err
    assert "note: no rating has the label(s) 4 given with --labels" in err
    assert "note: --budgets 20000 at K 1 draws N = 20,000 items, 2,000 times the 10 items of the data" in err


def test_spellings_of_one_label_merge_on_request(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    make_files(tmp_path)
    code, _, err = call([*RUN, "--data", "variants.csv", "--normalize-labels", "--out", "r.csv"], capsys)
    assert code == 0, err
    assert json.loads((tmp_path / "r.csv.json").read_text())["data_provenance"].startswith("file variants.csv")
    assert datasets.load(tmp_path / "variants.csv", normalize_labels=True).label_names == ("safe", "unsafe")
    pd.DataFrame({"item": range(10), "label": ["safe"] * 10}).to_csv(tmp_path / "a.csv", index=False)
    code, out, err = call(["compare", "--data", "variants.csv", "--normalize-labels", "--a", "a.csv", "--b", "a.csv",
                           "--n-samples", "20"], capsys)  # compare and plan read the annotations as run does
    assert code == 0 and "A against B on 10 items" in out, err


def test_out_through_a_link_writes_the_target_and_keeps_the_link(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    make_files(tmp_path)
    (tmp_path / "results").mkdir()
    (tmp_path / "latest.csv").symlink_to("results/r.csv")
    code, _, err = call([*RUN, "--data", "good.csv", "--out", "latest.csv"], capsys)
    assert code == 0, err
    assert (tmp_path / "latest.csv").is_symlink() and os.readlink(tmp_path / "latest.csv") == "results/r.csv"
    assert len(pd.read_csv(tmp_path / "results" / "r.csv")) == 8 and (tmp_path / "results" / "r.csv.json").is_file()


def test_the_bundled_demo_suite_runs_from_the_command_line(tmp_path, capsys):
    out = tmp_path / "judgements.csv"
    code, _, err = call(["testsuite", "judge", "--rules", "demo", "--outputs", "demo", "--out", str(out)], capsys)
    assert code == 0, err
    judged = pd.read_csv(out, dtype={"item_id": str})
    assert judged["item_id"].nunique() == 40 and f"wrote {len(judged)} judgements" in err


def test_judge_names_only_flags_it_has(tmp_path, capsys):
    outputs = tmp_path / "outputs.csv"
    outputs.write_text("id,model,text\n1,A,hello\n")
    code, _, err = call(["testsuite", "judge", "--rules", "demo", "--outputs", str(outputs), "--out",
                         str(tmp_path / "j.csv")], capsys)
    assert code == 2 and "['item_id', 'system', 'output'] not found" in err
    assert "--item" not in err and "--rater" not in err and not (tmp_path / "j.csv").exists()


def test_the_memory_bound_of_a_cell_holds():
    """_check_memory's K-squared term, measured: from K = 101 to K = 1501 the peak allocation of a one-cell run
    grows by at most BYTES_PER_TABLE_ENTRY per table entry, and by more than a sixth of that (S2, whose tables are
    the metrics' alone; S1 and S3 measured 110 and 118 bytes an entry at K = 1000 and 600, too slow for a test)."""
    import tracemalloc

    from analysis.__main__ import BYTES_PER_TABLE_ENTRY
    from analysis.experiment.grid import run

    ds = datasets.load("dices-synthetic")
    peaks = {}
    for k in (100, 101, 1500, 1501):  # 100 and 1500 compile and fill the engine's caches; 101 and 1501 are measured
        tracemalloc.start()
        run(ds, "S2", budgets=[40 * k], ks=[k], epsilons=[0.3], n_samples=200, use_cache=False, progress=False)
        peaks[k] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    growth = (peaks[1501] - peaks[101]) / (1502**2 - 102**2)
    assert BYTES_PER_TABLE_ENTRY / 6 < growth <= BYTES_PER_TABLE_ENTRY, growth


@pytest.mark.slow
def test_ten_interrupts_in_a_row_never_print_a_traceback(tmp_path):
    """Ctrl-C at ten moments of a --jobs 2 run (loading, starting the workers, computing), every other time twice
    as an impatient user does: each exits 130 with the one message, never a traceback."""
    for attempt in range(10):
        process = interruptible([*GRID, "--no-cache", "--out", str(tmp_path / "r.csv")])
        time.sleep(0.5 + 0.2 * attempt)
        process.send_signal(signal.SIGINT)
        if attempt % 2:
            time.sleep(0.05)
            process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
        assert process.returncode == 130, (attempt, err)
        assert "Traceback" not in err and "Exception ignored" not in err and err.count("interrupted") == 1, err
    assert not (tmp_path / "r.csv").exists()


def test_progress_shows_cells_and_time_not_response_counts(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    make_files(tmp_path)
    code, _, err = call([arg for arg in RUN if arg != "--quiet"] + ["--data", "good.csv", "--ks", "1,2",
                                                                     "--out", "r.csv"], capsys)
    assert code == 0, err
    assert "100%" in err and "2/2 cells" in err and "resp" not in err and "G/" not in err, err


# ---------------------------------------------------------------------------------------- messages that misled

def _results(folder: Path, sampler: str, ks, significant_from=None, raters=None) -> str:
    """A results CSV (and, given ``raters``, its provenance) whose p falls below 0.05 from budget
    ``significant_from`` on (never when None)."""
    rows = [{"dataset": "d", "sampler": sampler, "epsilon": 0.3, "NK": nk, "K": k, "metric": m, "delta": 0.05,
             "p_value": 0.01 if significant_from and nk >= significant_from else 0.4}
            for nk in (100, 1000) for k in ks for m in ("accuracy", "mae")]
    pd.DataFrame(rows).to_csv(folder / f"{sampler}.csv", index=False)
    if raters:
        (folder / f"{sampler}.csv.json").write_text(json.dumps({"data_items": 50, "data_raters_per_item_max": raters}))
    return f"{sampler}.csv"


@pytest.mark.parametrize("sampler, ks, significant_from, raters, hint", [
    ("S2", (1, 5), 1000, 6, None),  # no dash: no legend, no hint
    ("S2", (1, 5), None, 6, "try larger --budgets"),
    ("S1", (1, 5), None, None, "try larger --budgets"),  # raters unknown: the plain hint
    ("S1", (1, 3), None, 5, "try larger --budgets"),  # K below the 5 raters: more K or budget may help
    ("S1", (1, 5), None, 5, "under S1 every replicate redraws those same raters")])
def test_table1_hints_at_larger_budgets_only_for_a_dash_they_could_fill(tmp_path, monkeypatch, capsys, sampler, ks,
                                                                       significant_from, raters, hint):
    monkeypatch.chdir(tmp_path)
    path = _results(tmp_path, sampler, ks, significant_from, raters)
    before = snapshot(tmp_path)
    code, out, err = call(["table1", path], capsys)
    assert code == 0 and err == "", err
    if hint is None:
        assert "–" not in out and "try larger" not in out and "no budget" not in out
    else:
        assert "–" in out and out.count(hint) == 1
        assert ("try larger" in out) == (hint == "try larger --budgets")
    assert snapshot(tmp_path) == before


def test_datasets_info_offers_no_fetch_for_a_set_that_cannot_be_downloaded(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(datasets.DATA_ENV, str(tmp_path))
    undownloadable = [name for name, spec in datasets.ENTRIES.items() if any(f.local_only for f in spec.files)]
    assert undownloadable
    for name in undownloadable:
        code, out, err = call(["datasets", "info", name], capsys)
        info = json.loads(out)
        assert code == 0 and err == "" and "to_download" not in info and "fetch" not in out, out
        assert "cannot be downloaded" in info["to_obtain"] and str(tmp_path / name) in info["to_obtain"]
    assert list(tmp_path.iterdir()) == []


def test_explain_before_a_first_compile_says_so_and_never_about_0_s(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    make_files(tmp_path)
    before = snapshot(tmp_path)
    explain = ["run", "--data", "good.csv", "--sampler", "S2", "--budgets", "100", "--ks", "2", "--epsilons", "0.3",
               "--n-samples", "20", "--explain"]
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "adir"))  # an empty numba cache: nothing compiled yet
    code, out, err = call(explain, capsys)
    last = out.strip().splitlines()[-1]
    assert code == 0 and "about 0 s" not in out and "under 1 s" in last, out
    assert "the first run of this engine on this machine compiles them first, a one-off of about 10-30 s" in last
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    (tmp_path / "numba" / "m").mkdir(parents=True)
    (tmp_path / "numba" / "m" / "kernel-1.py311.nbi").write_bytes(b"")  # as numba leaves a compiled kernel
    code, out, err = call(explain, capsys)
    assert code == 0 and "compiles" not in out
    (tmp_path / "numba" / "m" / "kernel-1.py311.nbi").unlink()
    (tmp_path / "numba" / "m").rmdir()
    (tmp_path / "numba").rmdir()
    assert snapshot(tmp_path) == before


def test_an_unwritable_home_suggests_no_cache_and_names_no_flag_never_given(tmp_path, monkeypatch, capsys):
    """A home where nothing can be written (here a file: as root, permissions would not stop the probe)."""
    monkeypatch.chdir(tmp_path)
    make_files(tmp_path)
    monkeypatch.delenv("ANALYSIS_CACHE_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "afile"))
    before = snapshot(tmp_path)
    code, out, err = call([*RUN[:-1], "--data", "good.csv", "--out", "r.csv"], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and out == "", err
    assert f"the cell cache {tmp_path}/afile/.cache/annotator-bootstrap: {tmp_path}/afile is a file" in lines[0]
    assert "give --no-cache" in lines[0] and "--cache-dir /" not in lines[0] and "--cache-dir " + str(tmp_path) \
        not in lines[0]
    assert snapshot(tmp_path) == before
    code, _, err = call([*RUN, "--data", "good.csv", "--out", "r.csv"], capsys)
    assert code == 0, err  # and --no-cache runs


@pytest.mark.slow
def test_a_chapter_with_a_misspelt_column_says_so_in_one_line_with_chapter_parameters(tmp_path):
    """make chapter PARAMS="-p dataset ratings.csv -p item question" on a file without 'question': one line that
    names the chapter's parameters (not the command line's --item), no traceback, and no notebook written."""
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("papermill")
    make_files(tmp_path)
    source = "from analysis.book import chapter\nchapter.load('good.csv', item='question')"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)]), tmp_path / "in.ipynb")
    before = snapshot(tmp_path)
    done = subprocess.run([sys.executable, str(ROOT / "config" / "execute_chapter.py"), "in.ipynb", "out.ipynb",
                           "--kernel", "python3", "--log-level", "WARNING"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    lines = [line for line in done.stderr.splitlines() if line.strip() and "Executing" not in line]
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert lines[0].startswith("out: error: column(s) ['question'] not found in good.csv") and "-p item" in lines[0]
    assert "--item" not in lines[0] and "Traceback" not in done.stderr
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("command", ["run", "plan", "compare"])
def test_out_of_memory_names_only_flags_the_command_has(command, monkeypatch, capsys, tmp_path):
    """The out-of-memory hint of each command names only flags that command takes, and ends the run with one line."""
    import argparse

    from analysis import __main__ as cli

    sub = next(a for a in cli._parser()._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    flags = {option for action in sub._actions for option in action.option_strings}
    named = set(re.findall(r"--[a-z-]+", cli.MEMORY_FLAGS[command]))
    assert named and named <= flags, named - flags

    def exhausted(args):
        raise MemoryError

    monkeypatch.setattr(cli, "_check_run", lambda args: None)
    handler = {"run": "_run", "plan": None, "compare": None}[command]
    if handler:
        monkeypatch.setattr(cli, handler, exhausted)
    else:
        from analysis.tools import compare_report, plan_report

        monkeypatch.setattr({"plan": plan_report, "compare": compare_report}[command], "run_cli", exhausted)
    argv = {"run": ["run", "--data", "dices-synthetic", "--sampler", "S2", "--out", str(tmp_path / "r.csv")],
            "plan": ["plan", "--data", "dices-synthetic", "--epsilon", "0.3"],
            "compare": ["compare", "--data", "dices-synthetic", "--a", "a.csv", "--b", "b.csv"]}[command]
    code, _, err = call(argv, capsys)
    assert code == 2 and err.strip() == f"python -m analysis {command}: error: out of memory; lower " \
                                        f"{cli.MEMORY_FLAGS[command]}"
