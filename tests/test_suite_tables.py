"""The source's further test-suite tables: verbs by tense and type, well-filled phenomena, decisive categories,
and the two analyses side by side; hand-made judgements whose answers are counted by hand."""

import re

import pandas as pd
import pytest

from analysis.testsuite import breakdowns as st
from analysis.testsuite import suite as ts
from analysis.errors import ParameterError

VERB = st.VERB_CATEGORY


def table(rows):
    """Judgements from (item, system, category, phenomenon, judgement) tuples."""
    return pd.DataFrame([(*row, "", "o") for row in rows], columns=list(ts.COLUMNS))


def passes(item0, system, category, phenomenon, n_pass, n_fail):
    """Rows for items item0, item0 + 1, ...: ``n_pass`` passes, then ``n_fail`` fails."""
    return [(str(item0 + k), system, category, phenomenon, "pass" if k < n_pass else "fail")
            for k in range(n_pass + n_fail)]


def test_tense_and_type_are_read_from_the_phenomenon_names():
    names = ["Modal - perfect", "Transitive  - future II progressive", "Modal negated - preterite subjunctive II",
             "Imperative", "Modal", "Future I", "Causative - present", "Causative", "Reflexive"]
    j = table([(str(k), "A", VERB, name, "pass") for k, name in enumerate(names)]
              + [("9", "A", "MWE", "Idiom", "pass")])
    parts = st.verb_parts(j).set_index("phenomenon")[["verb type", "tense"]]
    assert "Idiom" not in parts.index  # other categories are left out
    assert parts.loc["Modal - perfect"].tolist() == ["Modal", "Perfect"]
    assert parts.loc["Transitive  - future II progressive"].tolist() == ["Transitive", "Future II progressive"]
    assert parts.loc["Modal negated - preterite subjunctive II"].tolist() == ["Modal negated",
                                                                             "Preterite subjunctive II"]
    assert pd.isna(parts.loc["Imperative", "verb type"]) and parts.loc["Imperative", "tense"] == "Imperative"
    assert parts.loc["Modal", "verb type"] == "Modal" and pd.isna(parts.loc["Modal", "tense"])
    assert pd.isna(parts.loc["Future I", "verb type"]) and parts.loc["Future I", "tense"] == "Future I"
    # a type of the source's Table 5 alone, and a new type seen before " - ", are types without a tense
    assert parts.loc["Reflexive", "verb type"] == "Reflexive" and pd.isna(parts.loc["Reflexive", "tense"])
    assert parts.loc["Causative", "verb type"] == "Causative" and pd.isna(parts.loc["Causative", "tense"])


def test_verb_tables_group_the_phenomena_and_average_over_their_rows():
    rows = (passes(0, "A", VERB, "Modal - perfect", 9, 1) + passes(0, "B", VERB, "Modal - perfect", 5, 5)
            + passes(10, "A", VERB, "Reflexive - perfect", 3, 7) + passes(10, "B", VERB, "Reflexive - perfect", 3, 7)
            + passes(20, "A", VERB, "Modal - present", 4, 0) + passes(20, "B", VERB, "Modal - present", 4, 0)
            + passes(30, "A", "MWE", "Idiom", 0, 5) + passes(30, "B", "MWE", "Idiom", 5, 0))
    j = table(rows)
    tenses = st.verb_table(j, 1, "tense")
    assert list(tenses.index) == ["Perfect", "Present", "non-weighted average", "weighted average"]
    assert tenses.loc["Perfect", "A"] == "**60.0**" and tenses.loc["Perfect", "B"] == "**40.0**"  # 12/20 and 8/20
    assert tenses.loc["non-weighted average", "A"] == f"{100 * 16 / 24:.1f}"  # the idioms are not verbs
    assert tenses.loc["weighted average", "B"] == f"{(40 + 100) / 2:.1f}"
    types = st.verb_table(j, 1, "verb type")
    assert list(types.index[:2]) == ["Modal", "Reflexive"]
    assert types.loc["Modal", "A"].strip("*") == f"{100 * 13 / 14:.1f}" and types.loc["Reflexive", "B"] == "**30.0**"
    assert types.loc["weighted average", "A"] == f"{(100 * 13 / 14 + 30) / 2:.1f}"
    assert st.verb_table(table(passes(0, "A", "MWE", "Idiom", 1, 1)), 1, "tense").empty
    with pytest.raises(ParameterError):
        st.verb_table(j, 1, "mood")


def test_well_filled_phenomena_count_valid_sentences_per_analysis():
    rows = (passes(0, "A", "C1", "P15", 15, 0) + passes(0, "B", "C1", "P15", 10, 5)
            + passes(100, "A", "C1", "P16", 16, 0) + passes(100, "B", "C1", "P16", 15, 0)
            + [("115", "B", "C1", "P16", "warning")]
            + passes(200, "A", "C2", "P14", 14, 0) + passes(200, "B", "C2", "P14", 14, 0))
    j = table(rows)
    assert st.valid_items(j, 1).to_dict() == {"P14": 14, "P15": 15, "P16": 15}  # P16 loses its warned item
    assert st.valid_items(j, 2).to_dict() == {"P14": 14, "P15": 15, "P16": 15}  # B's 15, the fewer
    got = st.well_filled(j, 1)
    assert list(got.index) == ["P15", "P16"] and got["items"].tolist() == [15, 15]
    assert got.loc["P15", "category"] == "C1" and got.loc["P15", "B"] == f"{100 * 10 / 15:.1f}"
    assert list(st.well_filled(j, 1, min_items=14).index) == ["P14", "P15", "P16"]
    assert st.well_filled(j, 1, min_items=17).empty
    with pytest.raises(ParameterError):
        st.well_filled(j, 1, min_items=0)


def test_decisive_categories_are_those_the_z_test_splits():
    rows = (passes(0, "good", "C1", "P1", 45, 5) + passes(0, "close", "C1", "P1", 42, 8)
            + passes(0, "bad", "C1", "P1", 30, 20)  # C1 is decisive: bad is left out
            + passes(100, "good", "C2", "P2", 8, 2) + passes(100, "close", "C2", "P2", 7, 3)
            + passes(100, "bad", "C2", "P2", 7, 3)  # C2 is not: ten items separate nobody
            + passes(200, "good", "C3", "P3", 20, 30) + passes(200, "close", "C3", "P3", 48, 2)
            + passes(200, "bad", "C3", "P3", 47, 3))  # C3 is decisive: good is left out
    counted = st.decisive(table(rows))
    assert counted.to_dict("index") == {"close": {"first cluster": 2, "decisive": 2},
                                        "bad": {"first cluster": 1, "decisive": 2},
                                        "good": {"first cluster": 1, "decisive": 2}}
    # given clusters decide instead of the Z-test
    member = pd.DataFrame({"good": [True, True, True], "close": [True, False, True], "bad": [False, False, True]},
                          index=["C1", "C2", "C3"])
    counted = st.decisive(table(rows), clusters=member)
    assert counted["first cluster"].to_dict() == {"good": 2, "close": 1, "bad": 0}
    assert counted["decisive"].to_dict() == {"good": 2, "close": 2, "bad": 2}


def test_leaving_one_system_out_of_analysis_1():
    rows = [("1", "A", "C", "P", "pass"), ("1", "B", "C", "P", "warning"), ("1", "U", "C", "P", "warning"),
            ("2", "A", "C", "P", "pass"), ("2", "B", "C", "P", "pass"), ("2", "U", "C", "P", "warning"),
            ("3", "A", "C", "P", "fail"), ("3", "B", "C", "P", "pass"), ("3", "U", "C", "P", "fail")]
    got = st.kept_without(table(rows))
    assert got["items kept"].to_dict() == {"U": 2, "B": 1, "A": 1}  # without U, only B's warning on item 1 is left
    assert got.index[0] == "U"
    assert got.loc["U", "warnings"] == pytest.approx(200 / 3) and got.loc["A", "warnings"] == 0


def test_the_analyses_table_prints_one_decimal_and_integer_counts():
    rows = []
    for item in range(1000):  # 931 of 1000 passes for A: 93.1 %, written "93.1", never "93.100"
        rows += [(str(item), "A", "C", "P", "pass" if item < 931 else "fail"),
                 (str(item), "B", "C", "P", "warning" if item < 103 else "pass"),
                 (str(item), "U", "C", "P", "warning" if item % 2 else "fail")]
    j = table(rows)
    both = st.analyses(j, exclude=["U"])
    assert both.loc["A"].tolist() == ["92.3", "92.3", "897", "93.1", "93.1", "1,000", "0.0"]
    assert both.loc["B", "warnings (%)"] == "10.3" and both.loc["B", "Analysis 2, items kept"] == "897"
    assert both.loc["U", "Analysis 1, non-weighted"] == "–" and both.loc["U", "Analysis 2, items kept"] == "500"
    cells = [str(v) for v in both.to_numpy().ravel()] + [str(v) for v in ts.cluster_table(j, 2).to_numpy().ravel()]
    assert not [c for c in cells if re.search(r"\.\d\d", c)]  # no trailing zeros: one decimal at most
