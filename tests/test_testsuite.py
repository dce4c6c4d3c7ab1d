"""The MT test-suite module: TQ-AutoTest judging semantics, tables, analyses, clusters, bootstrap and review."""

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.data import datasets
from analysis.testsuite import suite as ts
from analysis.__main__ import main
from analysis.errors import DataError, ParameterError
from conftest import cached


def rule(**kw):
    base = dict(item_id="1", category="C", phenomenon="P", source="s")
    return ts.SuiteRule(**{**base, **kw})


@pytest.mark.parametrize("output, expected", [
    ("he will go", ("pass", "positive regex")),
    ("he goes", ("fail", "negative regex")),
    ("he will go, he goes", ("warning", "both regexes")),
    ("something else", ("warning", "no rule matched")),
])
def test_regex_outcomes(output, expected):
    r = rule(positive_regex=r"will go", negative_regex=r"goes")
    assert ts.judge(r, output) == expected


def test_regexes_are_searched_unanchored_and_case_sensitive():
    r = rule(positive_regex=r"will go")
    assert ts.judge(r, "Tomorrow he will go home.")[0] == "pass"
    assert ts.judge(r, "Tomorrow he WILL GO home.")[0] == "warning"
    assert ts.judge(rule(positive_regex=r" will"), "he will")[0] == "pass"
    assert ts.judge(rule(positive_regex=r" will"), "will")[0] == "warning"  # the leading space is significant


def test_tokens_decide_only_when_no_regex_matched():
    r = rule(positive_regex=r"will go", negative_regex=r"goes", positive_tokens=("he goes home",),
             negative_tokens=("will go",))
    # a regex matched: tokens are not consulted even though a token of the other side is present
    assert ts.judge(r, "he goes home") == ("fail", "negative regex")
    assert ts.judge(r, "I will go") == ("pass", "positive regex")
    t = rule(positive_tokens=("Bank", ""), negative_tokens=("bench",))
    assert ts.judge(t, "the Bank") == ("pass", "positive token")
    assert ts.judge(t, "the bench") == ("fail", "negative token")
    assert ts.judge(t, "the Bank bench") == ("warning", "both tokens")
    assert ts.judge(t, "the bank") == ("warning", "no rule matched")  # tokens are case-sensitive substrings


def test_empty_output_is_not_scored_and_bad_rules_are_errors_with_the_item_id():
    r = rule(positive_regex="x")
    assert ts.judge(r, "") is None and ts.judge(r, "   ") is None and ts.judge(r, float("nan")) is None
    with pytest.raises(ts.RuleError, match="item 7: a rule contains a newline"):
        ts.judge(rule(item_id="7", positive_tokens=("a\nb",)), "a")
    with pytest.raises(ts.RuleError, match="item 8: invalid regex"):
        ts.judge(rule(item_id="8", negative_regex="(unclosed"), "a")


def demo():
    rules = ts.load_rules(ts.demo_paths()[0])
    return rules, ts.judge_all(rules, ts.load_outputs(ts.demo_paths()[1]))


def test_judge_all_counts_what_it_does_not_score():
    rules, j = demo()
    outputs = ts.load_outputs(ts.demo_paths()[1])
    assert len(rules) == 40 and len(j) == len(outputs) == 160  # one row per output, scored or not
    assert j.attrs["not_scored"] == {"unknown item": 0, "empty output": 1, "rule error": 0}
    assert (j["judgement"] == "unscored").sum() == 1 and len(ts.judged(j)) == 159
    extra = pd.DataFrame({"item_id": ["99999999", "00000001", "00000002"], "system": ["X", "X", "X"],
                          "output": ["a", "b", ""]})
    broken = dict(rules)
    broken["00000001"] = rule(item_id="00000001", positive_regex="[")
    j2 = ts.judge_all(broken, extra)
    assert j2.attrs["not_scored"] == {"unknown item": 1, "empty output": 1, "rule error": 1}
    assert "00000001" in j2.attrs["rule_errors"]
    assert j2["judgement"].tolist() == ["unscored", "error", "unscored"]
    assert j2["decided_by"].str.split(":").str[0].tolist() == ["unknown item", "rule error", "empty output"]
    assert ts.not_scored(j2).to_dict() == {("error", "rule error"): 1, ("unscored", "empty output"): 1,
                                           ("unscored", "unknown item"): 1}


def test_analyses_and_averages_by_hand():
    rows = [  # item, system, category, phenomenon, judgement
        ("1", "A", "C1", "P1", "pass"), ("1", "B", "C1", "P1", "fail"),
        ("2", "A", "C1", "P1", "pass"), ("2", "B", "C1", "P1", "warning"),
        ("3", "A", "C2", "P2", "fail"), ("3", "B", "C2", "P2", "pass"),
        ("4", "A", "C2", "P2", "pass"), ("4", "B", "C2", "P2", "pass"),
        ("5", "A", "C2", "P2", "pass"), ("5", "B", "C2", "P2", "pass"),
    ]
    j = pd.DataFrame(rows, columns=["item_id", "system", "category", "phenomenon", "judgement"])
    a1 = ts.accuracy(j, analysis=1)  # item 2 is dropped for both systems
    assert a1.loc["C1", "A"] == 100 and a1.loc["C1", "B"] == 0
    assert a1.loc["C2", "A"] == pytest.approx(200 / 3) and a1.loc["C2", "B"] == 100
    a2 = ts.accuracy(j, analysis=2)  # item 2 is dropped for B only
    assert a2.loc["C1", "A"] == 100
    avg = ts.averages(j, analysis=2)
    assert avg.loc["A", "non-weighted"] == pytest.approx(80.0)  # 4 of 5
    assert avg.loc["A", "weighted"] == pytest.approx((100 + 200 / 3) / 2)
    assert avg.loc["B", "non-weighted"] == pytest.approx(75.0)  # 3 of 4
    assert ts.warning_rates(j).to_dict() == {"A": 0.0, "B": 20.0}
    with pytest.raises(ParameterError):
        ts.accuracy(j, analysis=3)


def test_z_test_matches_a_hand_computation():
    # 45/50 against 35/50: pooled p = 0.8, se = sqrt(0.8 * 0.2 * (2/50)) = 0.08, z = 0.2 / 0.08 = 2.5
    z, p = ts.z_test(45, 50, 35, 50)
    assert z == pytest.approx(2.5)
    assert p == pytest.approx(2 * (1 - 0.5 * (1 + math.erf(2.5 / math.sqrt(2)))))
    assert p == pytest.approx(0.012419, abs=1e-6)
    assert ts.z_test(5, 5, 5, 5) == (0.0, 1.0)


def test_clusters_keep_the_best_and_drop_significantly_worse_systems():
    rows = [(str(i), s, "C", "P", "pass" if i < n else "fail") for s, n in (("good", 45), ("close", 42), ("bad", 30))
            for i in range(50)]
    j = pd.DataFrame(rows, columns=["item_id", "system", "category", "phenomenon", "judgement"])
    z = ts.z_clusters(j).loc["C"]
    assert z.to_dict() == {"bad": False, "close": True, "good": True}
    table = ts.cluster_table(j)
    assert table.loc["C", "good"] == "**90.0**" and table.loc["C", "bad"] == "60.0"


def test_bootstrap_clusters_are_reproducible_and_paired():
    _, j = demo()
    first = ts.bootstrap_clusters(j, seed=3)
    pd.testing.assert_frame_equal(first, ts.bootstrap_clusters(j, seed=3))
    # pairing: a system identical to the best on every item always stays in the cluster
    twin = j[j["system"] == "Alpha"].assign(system="AlphaTwin")
    both = ts.bootstrap_clusters(pd.concat([j, twin]), seed=3)
    assert both["AlphaTwin"].all() and both["Alpha"].all()


def test_items_needed_grows_as_the_gap_shrinks():
    assert ts.items_needed(0.9, 0.1) < ts.items_needed(0.9, 0.05) < ts.items_needed(0.9, 0.02)
    n = ts.items_needed(0.9, 0.1)
    # at that size the Z statistic of the expected counts is about z_alpha/2 + z_power = 1.96 + 0.84
    z, _ = ts.z_test(round(0.9 * n), n, round(0.8 * n), n)
    assert 2.6 < z < 3.0
    with pytest.raises(ParameterError):
        ts.items_needed(0.5, 0.6)


def reviewed_by_hand(path, verdicts):
    """Fill the review column of the reviews CSV at ``path``: ``verdicts`` maps (item_id, system) to pass/fail."""
    review = pd.read_csv(path, dtype=str, keep_default_na=False)
    review["review"] = [verdicts.get((i, s), r) for i, s, r in zip(review["item_id"], review["system"],
                                                                   review["review"])]
    review.to_csv(path, index=False)
    return review


def test_warnings_round_trip_through_manual_review(tmp_path):
    rules, j = demo()
    path = tmp_path / "reviews.csv"
    assert ts.export_warnings(j, rules, path) == {"warnings": 15, "reviewed": 0, "other": 0}
    exported = pd.read_csv(path, dtype=str, keep_default_na=False)
    assert list(exported.columns) == list(ts.REVIEW_COLUMNS) and (exported["review"] == "").all()
    assert exported["source"].tolist() == [rules[i].source for i in exported["item_id"]]
    keys = list(zip(exported["item_id"], exported["system"]))
    verdicts = {**{k: "pass" for k in keys[:4]}, **{k: "fail" for k in keys[4:10]}}  # the last five stay blank
    reviewed_by_hand(path, verdicts)
    updated = ts.apply_reviews(j, path)
    assert updated.attrs["reviews"] == {"applied": 10, "not applied": 0}
    after = dict(zip(zip(updated["item_id"], updated["system"]), updated["judgement"]))
    before = dict(zip(zip(j["item_id"], j["system"]), j["judgement"]))
    assert {k for k in after if after[k] != before[k]} == set(verdicts)  # nothing else changed
    assert all(after[k] == v for k, v in verdicts.items()) and all(after[k] == "warning" for k in keys[10:])
    assert set(updated.loc[updated["decided_by"] == "manual review", "item_id"]) == {i for i, _ in verdicts}


def test_a_review_holds_for_the_output_it_judged_only(tmp_path):
    rules, j = demo()
    path = tmp_path / "reviews.csv"
    ts.export_warnings(j, rules, path)
    first = pd.read_csv(path, dtype=str, keep_default_na=False).iloc[0]
    reviewed_by_hand(path, {(first["item_id"], first["system"]): "pass"})
    rerun = j.copy()  # the system was run again and gave another output, still a warning
    row = (rerun["item_id"] == first["item_id"]) & (rerun["system"] == first["system"])
    rerun.loc[row, "output"] = "another output"
    applied = ts.apply_reviews(rerun, path)
    assert applied.attrs["reviews"] == {"applied": 0, "not applied": 1}
    assert applied.loc[row, "judgement"].item() == "warning"
    # exporting the rerun keeps the old review at the end of the file and asks for the new output
    assert ts.export_warnings(rerun, rules, path) == {"warnings": 15, "reviewed": 0, "other": 1}
    assert ts.apply_reviews(rerun, path).attrs["reviews"] == {"applied": 0, "not applied": 1}
    assert ts.apply_reviews(j, path).attrs["reviews"] == {"applied": 1, "not applied": 0}  # the old output again


@pytest.mark.parametrize("edit, message", [
    (lambda r: r.assign(review=["maybe"] + [""] * (len(r) - 1)), "the review column holds ['maybe']"),
    (lambda r: pd.concat([r, r.iloc[:1]]), "is reviewed twice"),
    (lambda r: r.drop(columns="review"), "write the file with 'testsuite review export'"),
])
def test_bad_reviews_files_are_one_line_errors(edit, message, tmp_path, capsys):
    rules, j = demo()
    path = tmp_path / "reviews.csv"
    ts.export_warnings(j, rules, path)
    edit(pd.read_csv(path, dtype=str, keep_default_na=False)).to_csv(path, index=False)
    with pytest.raises(DataError, match=re.escape(message)):
        ts.apply_reviews(j, path)
    judged_file = tmp_path / "j.csv"
    j.to_csv(judged_file, index=False)
    capsys.readouterr()
    assert main(["testsuite", "review", "apply", str(judged_file), "--reviews", str(path), "--out",
                 str(tmp_path / "out.csv")]) == 2
    err = capsys.readouterr().err
    assert "error:" in err and len(err.strip().splitlines()) == 1 and not (tmp_path / "out.csv").exists()


def test_review_commands_round_trip_and_a_rerun_applies_the_saved_reviews(tmp_path, capsys):
    judged_file, reviews, reviewed = tmp_path / "j.csv", tmp_path / "reviews.csv", tmp_path / "reviewed.csv"
    assert main(["testsuite", "judge", "--rules", "demo", "--outputs", "demo", "--out", str(judged_file)]) == 0
    assert main(["testsuite", "review", "export", str(judged_file), "--rules", "demo", "--out", str(reviews)]) == 0
    exported = pd.read_csv(reviews, dtype=str, keep_default_na=False)
    keys = list(zip(exported["item_id"], exported["system"]))
    verdicts = {keys[0]: "pass", keys[1]: "fail", keys[2]: "fail"}
    reviewed_by_hand(reviews, verdicts)
    assert main(["testsuite", "review", "apply", str(judged_file), "--reviews", str(reviews), "--out",
                 str(reviewed)]) == 0
    assert "applied 3 reviews" in capsys.readouterr().err
    before = pd.read_csv(judged_file, dtype=str, keep_default_na=False)
    after = pd.read_csv(reviewed, dtype=str, keep_default_na=False)
    changed = before["judgement"] != after["judgement"]
    assert set(zip(after.loc[changed, "item_id"], after.loc[changed, "system"])) == set(verdicts)
    assert {(i, s): v for i, s, v in after.loc[changed, ["item_id", "system", "judgement"]].itertuples(index=False)} \
        == verdicts
    # a rerun: judge again, export to the same reviews file (the reviews are kept), apply: the same judgements
    assert main(["testsuite", "judge", "--rules", "demo", "--outputs", "demo", "--out", str(judged_file)]) == 0
    assert main(["testsuite", "review", "export", str(judged_file), "--rules", "demo", "--out", str(reviews)]) == 0
    assert "(3 reviewed)" in capsys.readouterr().err
    assert main(["testsuite", "review", "apply", str(judged_file), "--reviews", str(reviews), "--out",
                 str(tmp_path / "again.csv")]) == 0
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "again.csv", dtype=str, keep_default_na=False), after)
    capsys.readouterr()
    assert main(["testsuite", "report", str(reviewed)]) == 0
    assert "Analysis 1" in capsys.readouterr().out


def test_the_demo_reviews_review_every_demo_warning(tmp_path):
    rules, j = demo()
    review = pd.read_csv(ts.demo_reviews(), dtype=str, keep_default_na=False)
    warned = j[j["judgement"] == "warning"]
    assert sorted(zip(review["item_id"], review["system"], review["output"])) == \
        sorted(zip(warned["item_id"], warned["system"], warned["output"]))
    applied = ts.apply_reviews(j, ts.demo_reviews())
    assert applied.attrs["reviews"] == {"applied": (review["review"] != "").sum(), "not applied": 0}
    assert (applied["judgement"] == "warning").sum() == (review["review"] == "").sum()


def test_excluding_a_system_keeps_the_items_only_it_warned_on(capsys, tmp_path):
    rows = [("1", "A", "pass"), ("1", "B", "pass"), ("1", "U", "warning"),
            ("2", "A", "pass"), ("2", "B", "fail"), ("2", "U", "pass"),
            ("3", "A", "fail"), ("3", "B", "warning"), ("3", "U", "fail")]
    j = pd.DataFrame([(i, s, "C", "P", v, "", "o") for i, s, v in rows], columns=list(ts.COLUMNS))
    assert set(ts.scored(j, 1)["item_id"]) == {"2"}
    kept = ts.scored(ts.without_systems(j, ["U"]), 1)
    assert set(kept["item_id"]) == {"1", "2"} and set(kept["system"]) == {"A", "B"}
    assert ts.accuracy(ts.without_systems(j, ["U"]), 1).loc["C"].to_dict() == {"A": 100.0, "B": 50.0}
    with pytest.raises(ParameterError, match="no system named V"):
        ts.without_systems(j, ["V"])
    path = tmp_path / "j.csv"
    j.to_csv(path, index=False)
    assert main(["testsuite", "report", str(path), "--exclude-systems", "U"]) == 0
    printed = capsys.readouterr().out
    assert "left out: U" in printed and "50.0" in printed and " U " not in printed.splitlines()[2]


def test_the_missing_data_note_names_the_files_of_the_pair_asked_for(tmp_path, monkeypatch):
    monkeypatch.setenv(datasets.DATA_ENV, str(tmp_path))
    for pair in ("de-en", "en-de"):
        with pytest.raises(DataError, match=rf"testset/{pair}/items.json is missing"):
            ts.suite_paths("wmt23", pair)
    items = tmp_path / "dfki_mt_testsuite" / "testset" / "de-en" / "items.json"
    items.parent.mkdir(parents=True)
    items.write_text("{}")
    with pytest.raises(DataError, match=r"wmt23\.de-en\.dfki_items\.jsonl is missing"):
        ts.suite_paths("wmt23", "de-en")


def test_cli_judge_and_report(tmp_path, capsys):
    items, outputs = ts.demo_paths()
    out = tmp_path / "j.csv"
    assert main(["testsuite", "judge", "--rules", str(items), "--outputs", str(outputs), "--out", str(out)]) == 0
    table = pd.read_csv(out, dtype={"item_id": str})
    assert len(table) == 160 and (table["judgement"] == "unscored").sum() == 1
    assert set(table["decided_by"]) >= {"positive regex", "negative regex", "no rule matched"}
    capsys.readouterr()
    assert main(["testsuite", "report", str(out), "--analysis", "2", "--by", "phenomenon"]) == 0
    printed = capsys.readouterr().out
    assert "Quotation marks" in printed and "**" in printed and "weighted average" in printed
    assert "159 scored" in printed and "1 not scored" in printed and "empty output" in printed
    assert main(["testsuite", "report", str(out), "--by", "tense"]) == 0
    by_tense = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in by_tense[3:5]] == ["Future", "Present"]  # the demo's two verb phenomena
    assert main(["testsuite", "report", str(out), "--by", "verb-type"]) == 0
    assert "names a verb type" in capsys.readouterr().out  # the demo names none
    assert main(["testsuite", "report", str(items)]) == 2


@pytest.fixture
def shared():
    cached("tq_autotest")
    cached("dfki_mt_testsuite")
    return datasets.data_dir()


# the TQ-AutoTest example sentences: the suite's rules checked against the published judgements

def load_examples(path: str | Path) -> pd.DataFrame:
    """TQ-AutoTest's published example file (tab-separated de-en, or semicolon-separated en-de CSV) as a long
    table: source, category, phenomenon, kind (``correct``/``incorrect``), translation. Empty cells are dropped."""
    path = Path(path)
    sep = "\t" if path.suffix == ".txt" else ";"
    raw = pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False, encoding="utf-8-sig", header=0,
                      quoting=3 if sep == "\t" else 0)
    raw = raw.iloc[:, :8]
    raw.columns = ["direction", "category", "phenomenon", "source", "correct1", "correct2", "incorrect1",
                   "incorrect2"]
    raw = raw[raw["source"].str.strip() != ""]
    long = raw.melt(id_vars=["direction", "category", "phenomenon", "source"], var_name="column",
                    value_name="translation")
    long = long[long["translation"].str.strip() != ""]
    long["kind"] = np.where(long["column"].str.startswith("correct"), "correct", "incorrect")
    return long.drop(columns="column").reset_index(drop=True)


def judge_examples(rules: dict[str, ts.SuiteRule], examples: pd.DataFrame) -> pd.DataFrame:
    """Judge each example translation with the rules of the suite item that has the same source sentence
    (compared after stripping spaces); examples whose source matches no item, or only a faulty rule, are left out."""
    by_source = {}
    for rule in rules.values():
        by_source.setdefault(rule.source.strip(), rule)
    rows = []
    for example in examples.itertuples(index=False):
        rule = by_source.get(example.source.strip())
        if rule is None:
            continue
        try:
            verdict = ts.judge(rule, example.translation)
        except ts.RuleError:
            continue
        if verdict is not None:
            rows.append((rule.item_id, example.kind, verdict[0], verdict[1]))
    return pd.DataFrame(rows, columns=["item_id", "kind", "judgement", "decided_by"])


@pytest.mark.parametrize("pair, file, expected", [
    ("de-en", "Auswahl_Test-Suite_De-En_Publish.txt",
     {("correct", "pass"): 217, ("correct", "fail"): 2, ("correct", "warning"): 9,
      ("incorrect", "pass"): 4, ("incorrect", "fail"): 117, ("incorrect", "warning"): 49}),
    ("en-de", "Auswahl_Test-Suite_En-De_Publish.csv",
     {("correct", "pass"): 255, ("correct", "fail"): 0, ("correct", "warning"): 4,
      ("incorrect", "pass"): 1, ("incorrect", "fail"): 134, ("incorrect", "warning"): 4}),
])
def test_tq_autotest_examples_mostly_pass_when_correct_and_fail_when_not(shared, pair, file, expected):
    datasets.verify("tq_autotest")
    examples = load_examples(shared / "tq_autotest" / file)
    assert len(examples) == datasets.COUNTS["tq_autotest"][f"{pair} examples"]  # the registry's counts
    judged = judge_examples(ts.load_rules(shared / "dfki_mt_testsuite" / "testset" / pair / "items.json"), examples)
    got = judged.groupby(["kind", "judgement"]).size().to_dict()
    assert {key: got.get(key, 0) for key in expected} == expected


@pytest.mark.parametrize("campaign, pair", [("wmt23", "de-en"), ("wmt22", "en-de")])
def test_wmt_outputs_judged_one_row_per_output(campaign, pair, tmp_path, capsys):
    cached("wmt_dfki_testsuite_outputs")
    items, path = ts.suite_paths(campaign, pair)  # through the registry: every sha256 checked
    expected = datasets.COUNTS["wmt_dfki_testsuite_outputs"]
    outputs = ts.load_outputs(path)
    assert outputs["system"].nunique() == expected[f"{campaign}.{pair} systems"]
    assert outputs["item_id"].nunique() == expected[f"{campaign}.{pair} items"]
    assert len(outputs) == expected[f"{campaign}.{pair} outputs"]
    rules = ts.load_rules(items)
    assert len(rules) == datasets.COUNTS["dfki_mt_testsuite"][f"{pair} items"]
    j = ts.judge_all(rules, outputs)
    assert len(j) == len(outputs)  # nothing lost
    assert list(zip(j["item_id"], j["system"])) == list(zip(outputs["item_id"], outputs["system"]))
    assert j.attrs["not_scored"]["empty output"] == expected[f"{campaign}.{pair} empty outputs"]
    assert (j["judgement"] == "unscored").sum() == expected[f"{campaign}.{pair} empty outputs"]
    if pair == "de-en":
        assert set(j.attrs["rule_errors"]) == {"00476010"}
        assert (j["judgement"] == "error").sum() == (outputs["item_id"] == "00476010").sum() > 0
    out = tmp_path / "j.csv"
    assert main(["testsuite", "judge", "--rules", str(items), "--outputs", str(path), "--out", str(out)]) == 0
    assert len(pd.read_csv(out, dtype={"item_id": str})) == len(outputs)
    capsys.readouterr()
    assert main(["testsuite", "report", str(out)]) == 0
    printed = capsys.readouterr().out
    not_scored = len(outputs) - len(ts.judged(j))
    assert f"{len(outputs) - not_scored} scored" in printed and f"{not_scored} not scored" in printed


def test_analysis_1_scores_every_system_on_one_item_set():
    """An output that is not scored (empty: 'unscored'; a broken rule: 'error') or missing drops its item for every
    system under Analysis 1, as a warning does; Analysis 2 drops only that output. On the demo, every system of
    Analysis 1 has the same items."""
    rows = [("1", "A", "pass"), ("1", "B", "unscored"), ("2", "A", "fail"), ("2", "B", "pass"),
            ("3", "A", "pass"), ("4", "A", "pass"), ("4", "B", "error")]
    j = pd.DataFrame([(i, s, "C", "P", v, "", "o") for i, s, v in rows], columns=list(ts.COLUMNS))
    one = ts.scored(j, 1)
    assert set(one["item_id"]) == {"2"} and one.groupby("system")["item_id"].nunique().to_dict() == {"A": 1, "B": 1}
    assert set(ts.scored(j, 2).query("system == 'A'")["item_id"]) == {"1", "2", "3", "4"}
    rules, demo_judgements = demo()
    items = ts.scored(demo_judgements, 1).groupby("system")["item_id"].apply(frozenset)
    assert items.nunique() == 1, items.map(len).to_dict()
