"""Every bad system output a user reported for ``compare``, and what it gets: one `error:` line that says what is
wrong, exit code 2, no traceback, and no file written or changed. Also the cases that are not errors but once
printed something misleading (rounded probabilities, identical systems, labels spelt otherwise, ids in another
Unicode form)."""

import json
import os
import unicodedata
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
    ("probabilities that do not sum to 1", "sum.csv", "A: the probabilities of 12 item(s) sum to 0.8 ('00000'), 0.8 "
     "('00001'), 0.8 ('00002') and 9 more, not 1 (sums within 0.01 of 1 are renormalised)", "negative"),
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
    assert "note: A: the probabilities of 12 item(s) sum to 1 only within 0.01" in err and "renormalised" in err
    provenance = json.loads(Path("out.csv.json").read_text())
    assert any("renormalised" in note for note in provenance["notes"])


FIVE = ["a", "b", "c", "d", "e"]


def write_five_labels(folder: Path) -> None:
    """Annotations with five labels (the 12 items x 4 raters of :func:`write_files`) and system B's votes."""
    rows = [(item, f"r{r}", FIVE[(n + r) % 5]) for n, item in enumerate(ITEMS) for r in range(4)]
    pd.DataFrame(rows, columns=["item", "rater", "label"]).to_csv(folder / "ratings.csv", index=False)
    pd.DataFrame({"item": ITEMS, "label": "a"}).to_csv(folder / "b.csv", index=False)


def test_five_probabilities_rounded_to_3_decimals_are_renormalised_with_a_note_counting_the_items(
        tmp_path, monkeypatch, capsys):
    """1/7, 1/7, 1/7, 2/7, 2/7 rounded to 3 decimals sum to 1.001, and 1/3 beside four sixths to 1.002: within
    0.01, so renormalised; the note counts every item whose sum was not 1."""
    monkeypatch.chdir(tmp_path)
    write_five_labels(tmp_path)
    rounded = [[0.143, 0.143, 0.143, 0.286, 0.286], [0.2, 0.2, 0.2, 0.2, 0.2], [0.334, 0.167, 0.167, 0.167, 0.167]]
    probs = pd.DataFrame([rounded[n % 3] for n in range(len(ITEMS))], columns=[f"p_{c}" for c in FIVE])
    probs.insert(0, "item", ITEMS)
    probs.to_csv("p5.csv", index=False)
    code, out, err = call([*COMPARE, "--a", "p5.csv", "--b", "b.csv"], capsys)
    assert code == 0, err
    notes = [line for line in err.splitlines() if "renormalised" in line]
    assert notes == ["note: A: the probabilities of 8 item(s) sum to 1 only within 0.01 (largest gap 0.002), as "
                     "rounded values do; they were renormalised"], err
    assert "error" not in err and Path("out.csv").exists()


def test_sums_beyond_the_tolerance_are_one_error_line_that_counts_the_items_and_names_the_first(tmp_path, monkeypatch,
                                                                                                 capsys):
    monkeypatch.chdir(tmp_path)
    write_five_labels(tmp_path)
    probs = pd.DataFrame([[0.2] * 5] * len(ITEMS), columns=[f"p_{c}" for c in FIVE])
    probs.loc[[2, 5, 7, 11], "p_a"] = [0.25, 0.1, 0.3, 0.4]  # sums 1.05, 0.9, 1.1, 1.2; the others 1
    probs.loc[4, "p_a"] = 0.209  # sum 1.009: within the tolerance
    probs.insert(0, "item", ITEMS)
    probs.to_csv("off.csv", index=False)
    before = snapshot(tmp_path)
    code, out, err = call([*COMPARE, "--a", "off.csv", "--b", "b.csv"], capsys)
    assert code == 2 and out == "" and snapshot(tmp_path) == before, (out, err)
    lines = err.strip().splitlines()
    assert lines == ["python -m analysis compare: error: A: the probabilities of 4 item(s) sum to 1.05 ('00002'), 0.9 "
                     "('00005'), 1.1 ('00007') and 1 more, not 1 (sums within 0.01 of 1 are renormalised)"], err


NFC, NFD = (unicodedata.normalize(form, "café") for form in ("NFC", "NFD"))


def write_accented(folder: Path, annotated: str, system: str) -> None:
    """Annotations whose item ids hold an "é" written as ``annotated`` spells it, and system A's outputs on the same
    items with the "é" written as ``system`` spells it (B's as the annotations')."""
    items = [f"{annotated}-{n}" for n in range(6)]
    rows = [(item, f"r{r}", "yes" if (n + r) % 3 == 0 else "no") for n, item in enumerate(items) for r in range(3)]
    pd.DataFrame(rows, columns=["item", "rater", "label"]).to_csv(folder / "ratings.csv", index=False)
    pd.DataFrame({"item": [f"{system}-{n}" for n in range(6)], "label": "yes"}).to_csv(folder / "a.csv", index=False)
    pd.DataFrame({"item": items, "label": "no"}).to_csv(folder / "b.csv", index=False)


@pytest.mark.parametrize("annotated, system, noted", [(NFC, NFD, True), (NFD, NFC, False)],
                         ids=["decomposed outputs", "decomposed annotations"])
def test_ids_in_another_unicode_form_match(annotated, system, noted, tmp_path, monkeypatch, capsys):
    """A composed and a decomposed "é" look the same: the ids match, and a note says which system's ids were read
    in the composed form."""
    assert NFC != NFD
    monkeypatch.chdir(tmp_path)
    write_accented(tmp_path, annotated, system)
    code, out, err = call([*COMPARE, "--a", "a.csv", "--b", "b.csv"], capsys)
    assert code == 0, err
    assert (pd.read_csv("out.csv")["items"] == 6).all()
    note = "note: A: 6 item id(s) were matched in Unicode NFC form (a decomposed 'é' as the composed one)"
    assert (note in err.splitlines()) == noted and "left out" not in err, err


def test_one_system_id_written_in_two_unicode_forms_is_one_item_with_a_note(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    write_accented(tmp_path, NFC, NFC)
    pd.DataFrame({"item": [f"{NFC}-{n}" for n in range(6)] + [f"{NFD}-0"], "label": ["yes"] * 6 + ["no"]}).to_csv(
        "a.csv", index=False)
    code, out, err = call([*COMPARE, "--a", "a.csv", "--b", "b.csv"], capsys)
    assert code == 0, err
    assert ("note: A: 1 item id(s) were matched in Unicode NFC form (a decomposed 'é' as the composed one); 1 id(s) "
            "written in several forms were each read as one id") in err.splitlines(), err
    assert "note: A: 1 item(s) have several label rows" in err


def test_annotation_ids_in_two_unicode_forms_that_repeat_a_pair_are_one_error_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    write_accented(tmp_path, NFC, NFC)
    ratings = pd.read_csv("ratings.csv", dtype=str)
    pd.concat([ratings, pd.DataFrame({"item": [f"{NFD}-0"], "rater": ["r0"], "label": ["no"]})]).to_csv(
        "ratings.csv", index=False)
    before = snapshot(tmp_path)
    code, out, err = call([*COMPARE, "--a", "a.csv", "--b", "b.csv"], capsys)
    assert code == 2 and out == "" and snapshot(tmp_path) == before, (out, err)
    lines = err.strip().splitlines()
    repeated = f"1 repeated (item, rater) pair(s), e.g. [('{NFC}-0', 'r0')] (1 item or rater id(s) are written in "
    assert len(lines) == 1 and repeated + "several Unicode forms" in lines[0] and "--duplicates first" in lines[0], err


@pytest.mark.parametrize("which", ["annotations", "outputs"])
def test_a_tab_separated_csv_is_told_to_be_named_tsv(which, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    write_files(tmp_path)
    name = "ratings.csv" if which == "annotations" else "a.csv"
    pd.read_csv(name, dtype=str).to_csv(name, sep="\t", index=False)
    header = "item\\trater\\tlabel" if which == "annotations" else "item\\tlabel"
    before = snapshot(tmp_path)
    code, out, err = call([*COMPARE, "--a", "a.csv", "--b", "b.csv"], capsys)
    assert code == 2 and out == "" and snapshot(tmp_path) == before, (out, err)
    assert err.strip().splitlines() == [f"python -m analysis compare: error: {name} was read as one column, "
                                        f"'{header}', whose name holds tabs: is it separated by tabs? Name it .tsv "
                                        "(or save it with commas)"], err
    os.replace(name, name.replace(".csv", ".tsv"))
    args = ["--data", "ratings.tsv"] if which == "annotations" else ["--a", "a.tsv"]
    code, out, err = call([*COMPARE, "--a", "a.csv", "--b", "b.csv", *args], capsys)
    assert code == 0, err


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
