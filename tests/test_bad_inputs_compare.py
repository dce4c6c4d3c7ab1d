"""Every bad system output a user reported for ``compare``, and what it gets: one `error:` line that says what is
wrong, exit code 2, no traceback, and no file written or changed. Also the cases that are not errors but once
printed something misleading (rounded probabilities, identical systems, labels spelt otherwise)."""

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.__main__ import main

ITEMS = [f"{n:05d}" for n in range(12)]  # zero-padded ids, as many real files write them


def write_files(folder: Path) -> None:
    """Annotations (12 items x 4 raters, labels no/yes) and system outputs of every bad kind, into ``folder``."""
    rows = [(item, f"r{r}", "yes" if (n + r) % 3 == 0 else "no") for n, item in enumerate(ITEMS) for r in range(4)]
    pd.DataFrame(rows, columns=["item", "rater", "label"]).to_csv(folder / "ratings.csv", index=False)
    votes = ["yes" if n % 3 == 0 else "no" for n in range(len(ITEMS))]
    good = pd.DataFrame({"item": ITEMS, "label": votes})
    good.to_csv(folder / "a.csv", index=False)
    good.assign(label=["no"] * len(ITEMS)).to_csv(folder / "b.csv", index=False)
    probs = pd.DataFrame({"item": ITEMS, "p_no": 0.7, "p_yes": 0.3})
    probs.assign(p_yes=[np.nan] + [0.3] * 11).to_csv(folder / "nan.csv", index=False)
    probs.assign(p_yes=["abc"] + [0.3] * 11).to_csv(folder / "text_prob.csv", index=False)
    probs.assign(p_no=[1.2] + [0.7] * 11, p_yes=[-0.2] + [0.3] * 11).to_csv(folder / "negative.csv", index=False)
    probs.assign(p_no=0.5).to_csv(folder / "sum.csv", index=False)
    probs.assign(label=votes).to_csv(folder / "both.csv", index=False)
    good.iloc[:-2].to_csv(folder / "fewer.csv", index=False)
    good.assign(item=[str(int(i)) for i in ITEMS]).to_csv(folder / "unpadded.csv", index=False)
    good.assign(label=[v.upper() for v in votes]).to_csv(folder / "upper.csv", index=False)
    third = pd.DataFrame({"item": ITEMS, "p_no": 0.667, "p_yes": 0.334})  # rounded to 3 decimals: sums 1.001
    third.to_csv(folder / "rounded.csv", index=False)
    good.iloc[:0].to_csv(folder / "header.csv", index=False)
    probs.iloc[:0].to_csv(folder / "header_probs.csv", index=False)


def snapshot(folder: Path) -> dict:
    """Every file under ``folder`` with its content, to see that nothing changed."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def call(args, capsys) -> tuple[int, str, str]:
    try:
        code = main(args)
    except SystemExit as exit_:
        code = exit_.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


COMPARE = ["compare", "--data", "ratings.csv", "--n-samples", "40", "--out", "out.csv"]

# (name, system A's file, what the one error line must contain, what it must not contain)
BAD_OUTPUTS = [
    ("a missing probability", "nan.csv", "item '00000' has no number in p_yes (empty)", "sum to"),
    ("a probability that is not a number", "text_prob.csv", "no number in p_yes ('abc')", "sum to"),
    ("a negative probability", "negative.csv", "item '00000' has a negative probability, p_yes = -0.2", "not 1"),
    ("probabilities that do not sum to 1", "sum.csv", "sum to 0.8, not 1", "negative"),
    ("both a label and probabilities", "both.csv", "both a 'label' column and p_<label> columns", "sum"),
    ("items only one system lists", "fewer.csv", "A and B list different items: 2 only in B (e.g. ['00010', "
     "'00011'])", "only in A"),
    ("ids without their zeros", "unpadded.csv", "have no annotations, e.g. ['0', '1', '10'] (item ids are matched "
     "as text", "Traceback"),
    ("labels in another case", "upper.csv", "give --normalize-labels", "Traceback"),
    ("a header without rows", "header.csv", "A: no row gives a label (the outputs have 0 row(s))", "Traceback"),
    ("probability columns without rows", "header_probs.csv", "A: no row gives probabilities", "Traceback"),
]
# (what, options that make it bad, the error line's words)
BAD_OPTIONS = [
    ("a negative seed", ["--seed", "-3"], "the seed (--seed) must be an integer >= 0, got -3"),
    ("K above every item's raters", ["--k", "1000"], "K (--k) 1000 is more than the 4 raters any rater pool has"),
    ("an output that is not CSV", ["--out", "x.xlsx"], "--out x.xlsx: the output is written as CSV"),
]


@pytest.mark.parametrize("name, options, message", BAD_OPTIONS, ids=[c[0] for c in BAD_OPTIONS])
def test_bad_options_get_one_error_line_exit_2_and_change_nothing(name, options, message, tmp_path, monkeypatch,
                                                                  capsys):
    monkeypatch.chdir(tmp_path)
    write_files(tmp_path)
    before = snapshot(tmp_path)
    code, out, err = call([*COMPARE, "--a", "a.csv", "--b", "b.csv", *options], capsys)
    assert code == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "error:" in lines[0] and message in lines[0], err
    assert "Traceback" not in err and snapshot(tmp_path) == before


def test_blank_labels_that_change_the_design_are_noted_in_the_cli_the_json_and_the_sentence(tmp_path, monkeypatch,
                                                                                            capsys):
    """A fully crossed file with blank labels is no longer crossed: the default sampler is then S3 or S2, not S1.
    The run says so (a note, the sidecar) and the sentence counts the dropped ratings."""
    monkeypatch.chdir(tmp_path)
    write_files(tmp_path)
    ratings = pd.read_csv("ratings.csv", dtype=str)
    ratings.loc[[1, 6, 11], "label"] = ""
    ratings.to_csv("ratings.csv", index=False)
    code, out, err = call([*COMPARE, "--a", "a.csv", "--b", "b.csv"], capsys)
    assert code == 0, err
    notes = [line for line in err.splitlines() if line.startswith("note:")]
    assert any("3 rating(s) with a blank label were dropped" in n and "not fully crossed" in n and "not S1" in n
               for n in notes), err
    provenance = json.loads(Path("out.csv.json").read_text())
    assert any("blank label" in note for note in provenance["notes"])
    assert "(3 blank rating(s) dropped" in out


def test_a_pilot_plan_with_a_negative_seed_is_one_error_line(capsys):
    code, out, err = call(["plan", "--data", "dices-synthetic", "--epsilon", "0.2", "--seed", "-3"], capsys)
    assert code == 2 and err.strip().count("\n") == 0 and "the seed (--seed) must be an integer >= 0" in err, err


@pytest.mark.parametrize("name, system, message, absent", BAD_OUTPUTS, ids=[c[0] for c in BAD_OUTPUTS])
def test_bad_outputs_get_one_error_line_exit_2_and_change_nothing(name, system, message, absent, tmp_path,
                                                                   monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    write_files(tmp_path)
    (tmp_path / "out.csv").write_text("an older result\n")  # must survive
    before = snapshot(tmp_path)
    code, out, err = call([*COMPARE, "--a", system, "--b", "b.csv"], capsys)
    assert code == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(("error:", "python -m analysis")) and "error:" in lines[0], err
    assert message in lines[0] and absent not in lines[0], lines[0]
    assert out == "" and snapshot(tmp_path) == before


def test_rounded_probabilities_are_renormalised_with_a_note(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    write_files(tmp_path)
    code, out, err = call([*COMPARE, "--a", "rounded.csv", "--b", "b.csv"], capsys)
    assert code == 0, err
    assert "note: A: the probabilities of 12 item(s) sum to 1 only within 0.001" in err and "renormalised" in err
    provenance = json.loads(Path("out.csv.json").read_text())
    assert any("renormalised" in note for note in provenance["notes"])


def test_normalize_labels_reaches_the_system_files(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    write_files(tmp_path)
    code, out, err = call([*COMPARE, "--a", "upper.csv", "--b", "a.csv", "--normalize-labels"], capsys)
    assert code == 0, err
    table = pd.read_csv("out.csv")
    assert (table["delta"] == 0).all()


def test_identical_systems_print_no_negative_zero(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    write_files(tmp_path)
    code, out, err = call([*COMPARE, "--a", "a.csv", "--b", "a.csv", "--two-sided"], capsys)
    assert code == 0, err
    assert "-0" not in out.replace("--", ""), out
    table = pd.read_csv("out.csv")
    assert (table[["delta", "ci_low", "ci_high"]] == 0).all().all()
    assert not np.signbit(table[["delta", "ci_low", "ci_high"]].to_numpy()).any()
    assert (table["p_value"] == 1).all() and (table["p_given_ratings"] == 1).all()


def test_help_explains_both_p_values_without_pointing_at_files_users_lack(capsys):
    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    text = capsys.readouterr().out
    assert "p given ratings" in text and "same ones that give the 95 % interval" in text
    assert "METHOD" not in text and "raters modelled" not in text
