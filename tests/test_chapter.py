"""The helpers the chapters call: sampler choices, comparisons, banners and provenance records."""

import json

import pandas as pd
import pytest

from analysis import chapter
from analysis.errors import TopologyError
from analysis.grid import run

SMALL = dict(budgets=(100, 400), ks=(1, 4), epsilons=(0.3,), n_samples=30, seed=5, use_cache=False, progress=False)


def test_samplers_and_comparisons_follow_the_design(crossed, batched, sparse):
    assert chapter.samplers_for(crossed) == ["S1", "S2"]
    assert chapter.samplers_for(batched) == ["S2", "S3"]
    assert chapter.samplers_for(sparse) == ["S2"]
    assert [(m, i) for _, m, i in chapter.sampler_comparisons([crossed, batched, sparse])] == [("S1", "S2"),
                                                                                               ("S3", "S2")]
    with pytest.raises(TopologyError, match="sparse, which only S2"):
        chapter.sampler_comparisons([sparse])


def test_compare_runs_counts_cells_and_direction(crossed):
    results = pd.concat([run(crossed, s, **SMALL) for s in ("S1", "S2")])
    stats = chapter.compare_runs(results, "crossed:S1", "crossed:S2", 0.3)
    assert stats["cells"] == 2 * 2 * 8
    assert 0 <= stats["share_higher"] <= 1
    a = results[results["sampler"] == "S1"]["p_value"].to_numpy()
    b = results[results["sampler"] == "S2"]["p_value"].to_numpy()
    differ = a != b
    assert stats["share_higher"] == pytest.approx((a[differ] > b[differ]).mean())
    assert stats["significant_first"] == int((a < 0.05).sum())


def test_banner_flags_stand_ins_and_small_grids(dices, crossed):
    text = repr(chapter.banner([dices], [100], [1], [0.3], 50))
    assert "Synthetic stand-ins" in text and "50 replicates per hypothesis instead of 1000" in text
    assert "not results" in text and dices.sha256[:16] in text
    full = chapter.banner([crossed], chapter.PAPER_BUDGETS, chapter.PAPER_KS, chapter.PAPER_EPSILONS, 1000)
    assert full.title == "Data used" and "not results" not in repr(full)
    assert '<div class="admonition' in full._repr_html_()


def test_provenance_round_trips_through_the_build_folder(tmp_path, monkeypatch, crossed):
    monkeypatch.setenv(chapter.BUILD_ENV, str(tmp_path))
    path = chapter.record_provenance("rqX", [crossed, crossed], n_samples=10, seed=3)
    note = json.loads(path.read_text())
    assert note["parameters"] == {"n_samples": 10, "seed": 3} and len(note["datasets"]) == 1
    table = chapter.read_provenance()
    assert table.loc[0, "sha256"] == crossed.sha256 and table.loc[0, "chapter"] == "rqX"


def test_bold_table_marks_cells_in_html_only():
    table = chapter.BoldTable(pd.DataFrame({"A": ["**90.0**", "80.0"]}))
    assert "<strong>90.0</strong>" in table._repr_html_() and "**90.0**" in repr(table)
