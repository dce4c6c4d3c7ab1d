"""Loading, validation, factorisation, topology detection and the rater cut."""

import numpy as np
import pandas as pd
import pytest

from analysis.data.annotations import (BATCHED, FULLY_CROSSED, SPARSE, from_codes, from_table, keep_raters,
                                       load_annotations)
from analysis.errors import DataError, ParameterError
from conftest import batched_table, crossed_table, sparse_table


def test_codes_round_trip_to_the_original_table():
    table = crossed_table(n_items=5, n_raters=4)
    table["item"] = "q" + table["item"].astype(str)
    ds = from_table(table)
    back = ds.to_frame()
    assert (back["item"].to_numpy() == table["item"].to_numpy()).all()
    assert (back["label"].astype(int).to_numpy() == table["label"].to_numpy()).all()
    assert ds.n_items == 5 and ds.n_raters == 4 and ds.n_labels == 3


def _integer_ids(table: pd.DataFrame) -> pd.DataFrame:
    """The table with its ids as integers that sort in another order than the rows (as a draw's may)."""
    out = table.copy()
    for column in [c for c in ("item", "rater", "batch") if c in out]:
        out[column] = 1000 - pd.factorize(out[column])[0] * 7
    return out


@pytest.mark.parametrize("make, batch", [(crossed_table, None), (sparse_table, None),
                                         (lambda: batched_table(ragged=True), "batch")])
def test_from_codes_builds_what_from_table_builds(make, batch):
    table = _integer_ids(make())
    labels = sorted(table["label"].unique())
    by_table = from_table(table, batch=batch, label_order=labels, name="n", provenance="p")
    codes = np.searchsorted(labels, table["label"].to_numpy())
    by_codes = from_codes(table["item"].to_numpy(), table["rater"].to_numpy(), codes, labels,
                          table[batch].to_numpy() if batch else None, name="n", provenance="p")
    assert by_codes.sha256 == by_table.sha256 and by_codes.topology.kind == by_table.topology.kind
    for field in ("item", "rater", "label", "item_batch"):
        left, right = getattr(by_codes, field), getattr(by_table, field)
        assert (left is None and right is None) or (left.dtype == right.dtype and np.array_equal(left, right))
    assert list(by_codes.item_ids) == list(by_table.item_ids) and by_codes.label_names == by_table.label_names


def test_from_codes_refuses_what_from_table_refuses():
    item, rater = np.array([0, 0, 1, 1]), np.array([5, 6, 5, 6])
    with pytest.raises(DataError, match="1 repeated"):
        from_codes(np.array([0, 0, 1]), np.array([5, 5, 6]), np.array([0, 1, 1]), ["a", "b"])
    with pytest.raises(DataError, match="more than one batch"):
        from_codes(item, rater, np.array([0, 1, 1, 0]), ["a", "b"], batch=np.array([0, 1, 1, 1]))
    with pytest.raises(DataError, match="label codes"):
        from_codes(item, rater, np.array([0, 1, 2, 0]), ["a", "b"])


def test_label_order_is_respected_and_unknown_labels_rejected():
    table = pd.DataFrame({"item": [1, 1, 2], "rater": [1, 2, 1], "label": ["Yes", "No", "Unsure"]})
    ds = from_table(table, label_order=["No", "Unsure", "Yes"])
    assert ds.label.tolist() == [2, 0, 1]
    with pytest.raises(DataError, match="not in the label order.*--labels"):
        from_table(table, label_order=["No", "Yes"])


def test_missing_column_names_what_exists():
    with pytest.raises(DataError, match=r"column\(s\) \['score'\] not found.*'label'"):
        from_table(crossed_table(), label="score")


def test_single_label_is_rejected():
    table = crossed_table()
    table["label"] = 1
    with pytest.raises(DataError, match="single value"):
        from_table(table)


def test_duplicated_pair_is_an_error_unless_a_policy_is_chosen():
    table = pd.DataFrame({"item": [1, 1, 1, 2], "rater": [1, 1, 2, 1], "label": [0, 1, 1, 0]})
    with pytest.raises(DataError, match="repeated"):
        from_table(table)
    assert from_table(table, duplicates="first").n_ratings == 3
    last = from_table(table, duplicates="last")
    assert last.label[(last.item == 0) & (last.rater == 0)].tolist() == [1]
    with pytest.raises(ParameterError):
        from_table(table, duplicates="mean")


def test_missing_labels_are_dropped_and_counted():
    table = crossed_table(n_items=4, n_raters=3).astype({"label": float})
    table.loc[[0, 5], "label"] = np.nan
    ds = from_table(table)
    assert ds.n_dropped == 2 and ds.n_ratings == len(table) - 2
    assert ds.summary()["dropped_missing_labels"] == 2


def test_topologies_are_detected():
    assert from_table(crossed_table()).topology.kind == FULLY_CROSSED
    given = from_table(batched_table(), batch="batch")
    assert given.topology.kind == BATCHED and given.topology.n_batches == 15
    inferred = from_table(batched_table().drop(columns="batch"))
    assert inferred.topology.kind == BATCHED and inferred.topology.inferred
    assert inferred.topology.n_batches == 15
    assert from_table(sparse_table()).topology.kind == SPARSE


def test_an_item_in_two_batches_is_rejected():
    table = batched_table()
    table.loc[0, "batch"] = 99
    with pytest.raises(DataError, match="more than one batch"):
        from_table(table, batch="batch")


def test_keep_raters_keeps_items_and_is_seeded(crossed):
    cut = keep_raters(crossed, 5, seed=3)
    assert cut.n_raters == 5 and cut.n_items == crossed.n_items
    assert cut.topology.kind == FULLY_CROSSED
    assert keep_raters(crossed, 5, seed=3).sha256 == cut.sha256
    assert keep_raters(crossed, 5, seed=4).sha256 != cut.sha256
    with pytest.raises(ParameterError):
        keep_raters(crossed, 0, seed=1)


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl", ".parquet"])
def test_files_load_in_every_format(tmp_path, suffix):
    table = crossed_table(n_items=6, n_raters=3)
    path = tmp_path / f"ratings{suffix}"
    {".csv": lambda: table.to_csv(path, index=False), ".tsv": lambda: table.to_csv(path, sep="\t", index=False),
     ".jsonl": lambda: table.to_json(path, orient="records", lines=True),
     ".parquet": lambda: table.to_parquet(path)}[suffix]()
    ds = load_annotations(path)
    assert (ds.n_items, ds.n_raters, ds.n_ratings) == (6, 3, 18)
    assert "sha256" in ds.provenance


def test_bad_files_get_clear_errors(tmp_path):
    with pytest.raises(DataError, match="no such file"):
        load_annotations(tmp_path / "absent.csv")
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(DataError, match="cannot read"):
        load_annotations(empty)
    odd = tmp_path / "ratings.xlsx"
    odd.write_text("x")
    with pytest.raises(DataError, match="unknown file type"):
        load_annotations(odd)


def test_numeric_labels_sort_numerically_and_mixed_labels_need_an_order():
    scale = pd.DataFrame({"item": range(12), "rater": 0, "label": [str(v) for v in range(1, 11)] + ["10", "2"]})
    ds = from_table(scale)
    assert ds.label_names == tuple(range(1, 11))  # not '1', '10', '2', ...
    stray = scale.assign(label=scale["label"].where(scale.index != 3, "?"))
    with pytest.raises(DataError, match=r"mixes numbers .* and text \('\?'\).*--labels"):
        from_table(stray)
    garbage = pd.DataFrame({"item": range(4), "rater": 0, "label": ["1", "two", "@@", "3.5"]})
    with pytest.raises(DataError, match="mixes numbers"):
        from_table(garbage)
    ordered = from_table(stray, label_order=[*range(1, 11), "?"])
    assert ordered.label_names[-1] == "?" and ordered.n_labels == 11
    assert from_table(garbage, label_order=["@@", "two", "1", "3.5"]).label.tolist() == [2, 1, 0, 3]


def test_label_spellings_are_refused_or_merged_on_request(tmp_path):
    path = tmp_path / "spellings.csv"
    table = crossed_table(n_items=6, n_raters=4, n_labels=2)
    table["label"] = table["label"].map({0: "safe", 1: "unsafe"})
    table.loc[[0, 1], "label"] = ["Safe", " safe"]
    table.to_csv(path, index=False)
    with pytest.raises(DataError, match=r"several ways \(' safe', 'Safe', 'safe'\).*--normalize-labels"):
        load_annotations(path)
    merged = load_annotations(path, normalize_labels=True)
    assert merged.label_names == ("safe", "unsafe") and merged.n_ratings == len(table)
    assert load_annotations(path, label_order=["safe", "Safe", "unsafe"]).label_names == ("safe", "Safe", "unsafe")


def test_a_long_row_is_an_error_and_extra_columns_are_read_and_dropped(tmp_path):
    path = tmp_path / "extra.csv"
    crossed_table(n_items=4, n_raters=3).assign(note="n").to_csv(path, index=False)
    assert load_annotations(path).n_ratings == 12
    path.write_text(path.read_text() + "9,9,1,n,surplus\n")
    with pytest.raises(DataError, match="extra.csv line 14 has 5 fields, the header 4"):
        load_annotations(path)


def test_a_batch_column_needs_one_rater_set_per_batch_but_allows_a_missing_rating(tmp_path):
    table = batched_table()
    assert from_table(table.iloc[1:], batch="batch").topology.kind == BATCHED  # one rating missing: fine
    stray = table.copy()
    stray.loc[stray.index[0], "rater"] = "stray"
    with pytest.raises(DataError, match=r"batch .* has no fixed rater set: rater .* rated 1 of its"):
        from_table(stray, batch="batch")


def test_files_need_two_items_and_two_raters(tmp_path):
    path = tmp_path / "tiny.csv"
    pd.DataFrame({"item": [1, 1], "rater": ["a", "b"], "label": [0, 1]}).to_csv(path, index=False)
    with pytest.raises(DataError, match="has 1 item with a label"):
        load_annotations(path)


def _write(table: pd.DataFrame, path) -> None:
    """``table`` written in the format its suffix names, every id as text (as a user's file spells it)."""
    name = str(path)
    if name.endswith(".parquet"):
        table.to_parquet(path)
    elif ".jsonl" in name:
        table.to_json(path, orient="records", lines=True)
    else:
        table.to_csv(path, sep="\t" if ".tsv" in name else ",", index=False)


@pytest.mark.parametrize("name", ["ids.csv", "ids.tsv", "ids.jsonl", "ids.parquet", "ids.csv.gz", "ids.tsv.bz2",
                                  "ids.jsonl.gz"])
def test_ids_are_text_in_every_format(tmp_path, name):
    """Items 12, 012, 1e3, 1000, 7 and raters 01, 1 are five items and two raters, spelt as written, whatever the
    format: a reader that parses ids as numbers would merge them into three items and one rater."""
    items, raters = ["12", "012", "1e3", "1000", "7"], ["01", "1"]
    table = pd.DataFrame([(i, r, (n + m) % 2) for n, i in enumerate(items) for m, r in enumerate(raters)],
                         columns=["item", "rater", "label"])
    path = tmp_path / name
    _write(table, path)
    ds = load_annotations(path)
    assert sorted(ds.item_ids) == sorted(items) and sorted(ds.rater_ids) == sorted(raters)
    assert (ds.n_items, ds.n_raters, ds.n_ratings) == (5, 2, 10)
    back = ds.to_frame().sort_values(["item", "rater"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(back.astype({"label": int}), table.sort_values(["item", "rater"])
                                  .reset_index(drop=True), check_dtype=False)


def test_every_format_gives_the_same_dataset(tmp_path):
    table = crossed_table(n_items=6, n_raters=3).astype({"item": str, "rater": str})
    table["item"] = "0" + table["item"]
    hashes = set()
    for name in ("a.csv", "a.tsv", "a.jsonl", "a.parquet", "a.csv.gz"):
        _write(table, tmp_path / name)
        hashes.add(load_annotations(tmp_path / name).sha256)
    assert len(hashes) == 1


def test_numeric_ids_from_json_and_parquet_read_as_their_text(tmp_path):
    table = pd.DataFrame({"item": [1, 1, 2, 2], "rater": [10, 20, 10, 20], "label": [0, 1, 1, 0]})
    for name in ("n.jsonl", "n.parquet", "n.csv"):
        _write(table, tmp_path / name)
        ds = load_annotations(tmp_path / name)
        assert list(ds.item_ids) == ["1", "2"] and list(ds.rater_ids) == ["10", "20"], name


def test_one_id_spelt_two_ways_is_an_error_that_names_both(tmp_path):
    table = pd.DataFrame({"item": [12, "12", 7, 7], "rater": ["a", "b", "a", "b"], "label": [0, 1, 1, 0]})
    with pytest.raises(DataError, match=r"column 'item' spells one id in several ways \(12, '12'\)"):
        from_table(table)
    path = tmp_path / "mixed.jsonl"
    path.write_text('{"item": 12, "rater": "a", "label": 0}\n{"item": "12", "rater": "b", "label": 1}\n'
                    '{"item": 7, "rater": "a", "label": 1}\n{"item": 7, "rater": "b", "label": 0}\n')
    with pytest.raises(DataError, match=r"\(12, '12'\)"):
        load_annotations(path)


def test_a_semicolon_separated_file_gets_a_hint(tmp_path):
    path = tmp_path / "semi.csv"
    path.write_text("item;rater;label\n1;a;0\n1;b;1\n2;a;1\n2;b;0\n")
    with pytest.raises(DataError, match="read as one column: is it separated by semicolons"):
        load_annotations(path)


def test_numeric_ids_keep_their_order_through_a_round_trip():
    """A table of numeric ids (as the registry's parsers give) keeps its ids, codes and hash when it is rebuilt
    from its own frame (the rater cut, compare's subset): 2 stays before 10."""
    ds = from_table(crossed_table(n_items=12, n_raters=3))
    again = from_table(ds.to_frame())
    assert list(again.item_ids) == list(range(12)) and again.sha256 == ds.sha256


def test_a_compressed_file_whose_codec_is_missing_gets_one_clear_error(tmp_path):
    try:
        import zstandard  # noqa: F401
        pytest.skip("zstandard is installed, so .zst files are read")
    except ImportError:
        pass
    path = tmp_path / "ratings.csv.zst"
    path.write_text("item,rater,label\n1,a,0\n")
    with pytest.raises(DataError, match="cannot read .*zstandard"):
        load_annotations(path)
