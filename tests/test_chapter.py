"""The helpers the chapters call: sampler choices, comparisons, banners and provenance records."""

import json
from pathlib import Path
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from analysis.book import chapter, realdata
from analysis.data.annotations import from_table
from analysis.paper import effect_sizes, findings, tables
from analysis.paper.effect_sizes import BOOK
from analysis.errors import TopologyError
from analysis.experiment.grid import run

ROOT = Path(__file__).resolve().parents[1]

SMALL = dict(budgets=(100, 400), ks=(1, 4), epsilons=(0.3,), n_samples=30, seed=5, use_cache=False, progress=False)


def test_samplers_and_comparisons_follow_the_design(crossed, batched, sparse):
    assert chapter.samplers_for(crossed) == ["S1", "S2"]
    assert chapter.samplers_for(batched) == ["S2", "S3"]
    assert chapter.samplers_for(sparse) == ["S2", "S4"]
    assert [(m, i) for _, m, i in chapter.sampler_comparisons([crossed, batched, sparse])] == [
        ("S1", "S2"), ("S3", "S2"), ("S4", "S2")]
    once = from_table(pd.DataFrame({"item": np.repeat(np.arange(20), 3), "rater": np.arange(60),
                                    "label": np.arange(60) % 2}), name="once")
    assert chapter.samplers_for(once) == ["S2"]
    with pytest.raises(TopologyError, match="every rater rated a single item"):
        chapter.sampler_comparisons([once])


def test_compare_runs_counts_cells_and_direction(crossed):
    results = pd.concat([run(crossed, s, **SMALL) for s in ("S1", "S2")])
    stats = chapter.compare_runs(results, ("crossed", "S1"), ("crossed", "S2"), 0.3)
    assert stats["cells"] == 2 * 2 * 8
    assert 0 <= stats["share_higher"] <= 1
    a = results[results["sampler"] == "S1"]["p_value"].to_numpy()
    b = results[results["sampler"] == "S2"]["p_value"].to_numpy()
    differ = a != b
    assert stats["share_higher"] == pytest.approx((a[differ] > b[differ]).mean())
    assert stats["significant_first"] == int((a < 0.05).sum())


def test_banner_flags_stand_ins_and_small_grids(dices, crossed):
    text = repr(chapter.banner([dices], [100], [1], [0.3], 50, None, BOOK.perturbation))
    assert "Synthetic stand-ins" in text and "50 replicates per hypothesis instead of 1000" in text
    assert "verdicts provisional" in text and f"sha256 {dices.sha256[:12]};" in text
    full = chapter.banner([crossed], chapter.PAPER_BUDGETS, chapter.PAPER_KS, chapter.PAPER_EPSILONS, 1000, None,
                          BOOK.perturbation)
    assert full.title == "Data used" and "verdicts provisional" not in repr(full)
    assert '<div class="admonition' in full._repr_html_()


def test_a_stand_in_banner_names_the_papers_set_missing_from_the_cache_and_how_to_get_it(dices, monkeypatch):
    from analysis.data import datasets

    monkeypatch.setattr(datasets, "available", lambda name: False)
    text = repr(chapter.banner([dices], [100], [1], [0.3], 50, None, BOOK.perturbation))
    assert "`dices350` is not in the dataset cache, so this chapter runs on its stand-in; run `make data`" in text
    assert "d3code" not in text
    monkeypatch.setattr(datasets, "available", lambda name: True)  # the set is there; the chapter chose a stand-in
    assert "not in the dataset cache" not in repr(chapter.banner([dices], [100], [1], [0.3], 50, None,
                                                                 BOOK.perturbation))


def test_banner_states_what_the_chapter_ran_with(crossed):
    text = repr(chapter.banner([crossed], [100, 1000], [1, 5], [0.2], 40, seed=7, perturbation="uniform",
                               epsilon=0.2))
    assert "ε = 0.2" in text and "the paper's Table 1 uses ε = 0.3" in text
    assert "budgets N×K in {100, 1000}" in text and "K in {1, 5}" in text and "40 replicates" in text
    assert "seed 7" in text and "perturbation of B: uniform" in text


def test_setup_loads_runs_and_identifies_runs_by_columns(tmp_path, monkeypatch):
    monkeypatch.setenv("ANALYSIS_CACHE_DIR", str(tmp_path))
    book = chapter.setup("rqX", ["toxicity-synthetic"], {"epsilon": 0.3, "epsilons": [0.3], "budgets": [100],
                                                         "ks": [1, 5], "n_samples": 20, "seed": 1, "n_jobs": 1,
                                                         "perturbation": "dirichlet", "unrelated": 3})
    assert book.grid_epsilons == [0.3] and "unrelated" not in book.params
    # the switches a chapter does not name are the book's: binary labels put the binary stand-in in place
    assert book.choices == replace(BOOK, perturbation="dirichlet") and book.params["averaging"] == BOOK.averaging
    comparisons = book.comparisons()
    assert comparisons == [(("toxicity-synthetic-binary", "S3"), ("toxicity-synthetic-binary", "S2"))]
    results = book.simulate(book.pairs(comparisons))
    assert set(results["origin"]) == {"stand-in"} and set(results["imitates"]) == {"Toxicity"}
    assert set(results["perturbation"]) == {"dirichlet"} and list(dict.fromkeys(results["sampler"])) == ["S3", "S2"]
    # the banner names the further seeds the verdicts read, and their replicates (a quarter of 20)
    assert "Each verdict also reads seeds 2 and 3 (its margin over the seeds), at the chapter's ε with 5 replicates" \
        in repr(book.banner())
    # a page without verdicts (the why page) names no margin seeds, and says what else it runs
    plain = repr(book.banner(margins=False, runs="Counts are medians over 3 seeds."))
    assert "Each verdict" not in plain and "Counts are medians over 3 seeds." in plain
    # a section on its own grid reads its margins there
    margins = findings.margin_results(book, book.pairs(comparisons), budgets=[100], ks=[5])
    assert sorted(margins) == [2, 3]
    assert all(set(r["K"]) == {5} and set(r["n_samples"]) == {5} for r in margins.values())


def test_sparse_data_compare_s4_with_s2(sparse):
    book = chapter.Setup("rqX", [], extra_data=[sparse], epsilon=0.3, budgets=[100], ks=[1])
    assert book.comparisons() == [(("sparse", "S4"), ("sparse", "S2"))]
    assert book.pairs() == [(sparse, "S2"), (sparse, "S4")]


def test_missing_data_say_what_to_run_and_never_give_a_verdict():
    sentence = chapter.missing_sentence(["lewidi25_csc"])
    assert "`lewidi25_csc` is not in the dataset cache" in sentence and "make data" in sentence
    text = realdata.section_text(None, [], ["a", "b"], "the RQ1 check")
    assert "are not in the dataset cache" in text and "nothing to show" in text
    assert "agrees" not in text and "nan" not in text


def test_the_front_pages_gap_list_names_each_chapter_and_section_and_forgets_a_rerun_with_data(monkeypatch, tmp_path):
    from analysis.book import missing

    monkeypatch.setenv("BOOK_BUILD_DIR", str(tmp_path))
    assert missing.summary(missing.read()) == "Every chapter of this build found the data it needs in the dataset cache."
    missing.record("realdata", "the RQ1 check on crossed data", ["truthinfer_duck", "lewidi23_armis"])
    missing.record("realdata", "the large-K check", ["prolific_toxicity_gender"])
    missing.record("compare", "the comparison of two real models", ["lewidi23_hs_brexit"])
    missing.record("testsuite", "the whole chapter", [])  # it had its data: no gap
    text = missing.summary(missing.read(), order=["compare", "realdata"])
    assert text.index("{ref}`chapter-compare`") < text.index("{ref}`chapter-realdata`")
    assert "(the RQ1 check on crossed data, without truthinfer_duck, lewidi23_armis; the large-K check" in text
    assert "4 registered datasets were not in the dataset cache" in text and "`make data`" in text
    assert "testsuite" not in text and text.count("{ref}") == 2 and "\n" not in text
    missing.record("realdata", "the large-K check", [])  # the section ran with its data this time
    assert "large-K" not in missing.summary(missing.read())
    chapter.record_provenance("realdata", [])  # a chapter's rerun starts from no gap
    assert [row["chapter"] for row in missing.read()] == ["compare"]
    assert "1 registered dataset was not" in missing.summary(missing.read())


def test_a_stand_in_is_a_gap_only_where_the_papers_file_is_missing(monkeypatch, tmp_path, dices):
    from analysis.book import missing
    from analysis.data import datasets

    monkeypatch.setenv(datasets.DATA_ENV, str(tmp_path / "empty"))
    assert missing.paper_data_missing([dices]) == ["dices350"]
    monkeypatch.setattr(datasets, "available", lambda name: True)
    assert missing.paper_data_missing([dices]) == []


def test_data_note_and_origin(dices, crossed):
    assert tables.origin(dices) == "stand-in" and tables.origin(crossed) == "file"
    note = chapter.data_note([dices, crossed])
    assert "stand-ins (dices-synthetic)" in note and "crossed is not one of the paper's datasets" in note


def test_small_helpers():
    assert chapter.nearest([100, 1000, 2500, 10000], 4000) == 2500
    assert repr(chapter.PlainText("no quotes")) == "no quotes"
    watermark = chapter.watermark()
    assert {"python", "numpy", "numba", "pandas", "scipy"} <= set(watermark["package"])


def test_read_runs_lists_executed_chapters(tmp_path, monkeypatch):
    monkeypatch.setenv(chapter.BUILD_ENV, str(tmp_path))
    folder = tmp_path / "src" / "notebooks"
    folder.mkdir(parents=True)
    (folder / "rq2.ipynb").write_text(json.dumps({"metadata": {"papermill": {
        "parameters": {"epsilon": 0.2}, "end_time": "2026-01-01T10:00:00.5", "duration": 12.4}}}))
    (folder / "provenance.ipynb").write_text("{}")
    runs = chapter.read_runs()
    assert list(runs["chapter"]) == ["rq2"] and runs.loc[0, "parameters changed from the defaults"] == "epsilon = 0.2"
    assert runs.loc[0, "seconds"] == 12


def test_provenance_round_trips_through_the_build_folder(tmp_path, monkeypatch, crossed):
    monkeypatch.setenv(chapter.BUILD_ENV, str(tmp_path))
    path = chapter.record_provenance("rqX", [crossed, crossed], n_samples=10, seed=3)
    note = json.loads(path.read_text())
    assert note["parameters"] == {"n_samples": 10, "seed": 3} and len(note["datasets"]) == 1
    table = chapter.read_provenance()
    assert table.loc[0, "sha256"] == crossed.sha256 and table.loc[0, "chapter"] == "rqX"
    assert table.loc[0, "design"] == note["datasets"][0]["topology"]  # the word every page uses for it


def test_redact_hides_the_paths_of_the_building_machine(monkeypatch, tmp_path):
    from pathlib import Path

    from analysis.data import datasets

    monkeypatch.setenv(datasets.DATA_ENV, str(tmp_path / "data"))
    monkeypatch.setenv("ANALYSIS_CACHE_DIR", str(tmp_path / "cells"))
    message = f"dataset 'x' is not in the cache: {tmp_path}/data/x/a.csv is missing; cells in {tmp_path}/cells"
    assert chapter.redact(message) == ("dataset 'x' is not in the cache: $ANNOTATION_DATA_DIR/x/a.csv is missing; "
                                       "cells in $ANALYSIS_CACHE_DIR")
    assert chapter.redact(f"{Path.home()}/notes.txt") == "~/notes.txt"


def test_registry_table_cites_each_set_with_source_licence_and_size():
    from analysis.data import datasets

    names = ["lewidi23_armis", "truthinfer_duck"]
    frame = realdata.registry_table(names).frame
    for row, name in zip(frame.itertuples(), names):
        entry = datasets.registered(name)
        assert row.dataset == name and row.licence == entry["licence"] and row._2 == entry["description"]
        assert (row.items, row.raters, row.ratings) == tuple(entry["counts"][k] for k in ("items", "raters",
                                                                                            "ratings"))
        assert row.source.startswith("github.com/") and "raw.githubusercontent" not in row.source
    assert str(datasets.data_dir()) not in repr(realdata.registry_table(names))
    halves = [list(realdata.registry_table(names, part).frame.columns) for part in ("size", "origin")]
    assert halves == [["dataset", "what it is", "items", "raters", "ratings", "in the cache"],
                      ["dataset", "source", "licence"]]


def test_a_chapter_simulates_the_epsilons_it_shows(crossed, dices):
    """Unless a chapter names its epsilons, it runs the ones its tables and figures show (its ε, and RQ2's
    appendix ε), on any data; the banner names the paper's others without calling the numbers smaller-scale."""
    assert chapter.grid_epsilons(None, [0.3]) == [0.3]
    assert chapter.grid_epsilons(None, [0.3, 0.2]) == [0.2, 0.3]
    assert chapter.grid_epsilons([0.1, 0.4], [0.3]) == [0.1, 0.4]
    book = chapter.Setup("rqX", [], extra_data=[crossed], epsilon=0.2, epsilons=None, budgets=chapter.PAPER_BUDGETS,
                         ks=chapter.PAPER_KS)
    shown = repr(book.banner())
    assert book.grid_epsilons == [0.2] and "paper's grid adds 0.1, 0.3, 0.4" in shown and "verdicts provisional" not in shown
    rq2 = chapter.Setup("rqX", [], extra_data=[dices], epsilon=0.3, appendix_epsilon=0.2, epsilons=None,
                        budgets=[100], ks=[1])
    assert rq2.grid_epsilons == [0.2, 0.3]
    # a user's file has no paper appendix beside it: RQ2 on it runs its ε alone (half the grid)
    own = chapter.Setup("rqX", [], extra_data=[crossed], epsilon=0.3, appendix_epsilon=0.2, epsilons=None,
                        budgets=[100], ks=[1])
    assert own.grid_epsilons == [0.3]
    assert chapter.Setup("rqX", [], extra_data=[dices], epsilon=0.3, epsilons=[0.1, 0.4], budgets=[100],
                         ks=[1]).grid_epsilons == [0.1, 0.3, 0.4]


def test_the_switches_are_chapter_parameters_and_replace_stand_ins(crossed):
    found = chapter.Setup("x", ["toxicity-synthetic-binary"], epsilon=0.3, budgets=[100], ks=[1], granularity="binary",
                          averaging="macro", smoothing=1e-9, extra_data=[crossed])
    assert set(chapter.SWITCH_NAMES) <= set(chapter.PARAMETER_NAMES)
    assert found.choices == BOOK
    assert found.dataset("toxicity-synthetic").name == "toxicity-synthetic-binary"
    assert "Choices the paper leaves unstated (methods page): precision, recall and F1 macro-averaged, KL-Div and JSD smoothed by 1e-09" in repr(found.banner())


def test_a_chapter_simulates_the_chosen_averaging_under_the_papers_names(crossed):
    macro = chapter.Setup("x", [], epsilon=0.3, budgets=[100], ks=[4], epsilons=[0.3], n_samples=20, seed=1,
                          averaging="macro", smoothing=1e-9, perturbation="dirichlet", extra_data=[crossed])
    found = macro.simulate([(crossed, "S2")]).set_index("metric")
    direct = run(crossed, "S2", budgets=[100], ks=[4], epsilons=[0.3], n_samples=20, seed=1, use_cache=False,
                 progress=False, smoothing=1e-9, perturbation="dirichlet",
                 metrics=["recall_macro", "kl_div"]).set_index("metric")
    assert list(found.index) == ["accuracy", "mae", "wins", "precision", "recall", "f1", "kl_div", "jsd"]
    assert found.loc["recall", "delta"] == direct.loc["recall_macro", "delta"]
    assert found.loc["kl_div", "delta"] == direct.loc["kl_div", "delta"]


def _effects(ratios, table="table1"):
    """An effect_sizes frame: one cell per (run, ratio per seed)."""
    rows = [{"table": table, "dataset": dataset, "sampler": sampler, "metric": "accuracy", "seed": seed, "NK": 500,
             "K": 1, "paper_delta": 0.1, "delta": 0.1 * r, "ratio": r, "within": 0.8 <= r <= 1.25}
            for (dataset, sampler), per_seed in ratios.items() for seed, r in enumerate(per_seed)]
    return pd.DataFrame(rows)


def test_effects_note_and_tables_count_cells_within_the_factor_over_seeds():
    effects = pd.concat([_effects({("DICES", "S1"): [1.0, 2.0, 1.1], ("Toxicity", "S2"): [2.0, 2.0, 2.0]}),
                         _effects({("DICES", "S1"): [1.0, 1.0, 1.0]}, table="appendix")])
    note = chapter.effects_note(effects, [0, 1, 2], 200, 0.2)
    assert "Over 3 seeds of 200 replicates each" in note
    assert "in 1 (0–1) of 2 of Table 1's cells and 1 (1–1) of 1 of the appendix's (read at ε = 0.2" in note
    by_run, by_metric, cells_table1, cells_appendix = chapter.effects_tables(effects)
    assert "Table 1 cell by cell" in cells_table1.caption and "appendix cell by cell" in cells_appendix.caption
    assert list(cells_table1.frame["Accuracy"]) == ["0.110 vs 0.100 ✓", "0.200 vs 0.100 ×2.00"]
    assert list(by_run.frame["run"]) == ["DICES S1", "Toxicity S2"]
    assert list(by_run.frame.columns) == ["run", "Table 1", "appendix"]
    assert by_run.frame.set_index("run").loc["Toxicity S2", "Table 1"] == "0 (0–0) of 1"
    assert list(by_metric.frame["metric"]) == ["Accuracy"]
    assert "no cell of the paper's tables" in chapter.effects_note(None, [0], 200, 0.2)
    assert chapter.effects_tables(None) == []
    assert "ln(1/s) = 20.7" in chapter.smoothing_note(1e-9)


def test_banners_cut_every_sha256_to_12_digits():
    """A dataset's provenance names each file's sha256; the banner shows 12 digits of each, so that a page of ten
    datasets does not open with screens of hashes."""
    text = "a.csv sha256 " + "0d5e4236" * 8 + ", b.json sha256 " + "ab" * 32 + "; short abc123 stays"
    assert chapter.short_hashes(text) == "a.csv sha256 0d5e42360d5e…, b.json sha256 abababababab…; short abc123 stays"


def test_the_front_pages_note_links_each_chapter_by_its_title(monkeypatch, tmp_path):
    from analysis.book import missing

    monkeypatch.setenv("BOOK_BUILD_DIR", str(tmp_path))
    assert 'class="admonition note"' in missing.Note([])._repr_html_()
    missing.record("compare", "the two real models", ["lewidi23_hs_brexit"])
    page = missing.Note(missing.read())._repr_html_()
    title = next(line[2:] for line in (ROOT / "notebooks" / "compare.md").read_text().splitlines()
                 if line.startswith("# "))
    assert f'<a href="../notebooks/compare.html">{title}</a>: the two real models, without lewidi23_hs_brexit' in page
    assert "<code>make data</code>" in page and 'class="admonition warning"' in page
    assert repr(missing.Note(missing.read())) == missing.summary(missing.read())


def test_on_a_users_own_file_the_k_grid_stops_at_its_raters(tmp_path, monkeypatch):
    """A 6-rater file asked for K up to 100 runs K up to 6 and says so first in its banner; the book's own data keep
    the paper's grid."""
    from conftest import crossed_table

    monkeypatch.delenv("BOOK_BUILD_DIR", raising=False)
    path = tmp_path / "mine.csv"
    crossed_table(n_items=30, n_raters=6).to_csv(path, index=False)
    ks = [1, 2, 3, 6, 10, 20, 100]
    params = {"epsilon": 0.3, "epsilons": [0.3], "budgets": [100], "ks": ks, "n_samples": 10}
    book = chapter.setup("rqX", [str(path)], params)
    assert book.params["ks"] == [1, 2, 3, 6]
    assert repr(book.banner()).split("\n- ")[1].startswith("K stops at 6, the most raters a drawn item of mine")
    assert "K = 10, 20, 100 of the `ks` parameter" in repr(book.banner())
    stand_in = chapter.setup("rqX", ["toxicity-synthetic"], params)
    assert stand_in.params["ks"] == ks and stand_in.ks_note is None

