"""``plan --test compare`` (issue 51, item 1): the power of ``compare``'s own test, read from simulated studies that
have the planned design, each tested by the very function ``compare`` reports."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.__main__ import main
from analysis.data.annotations import from_table
from analysis.engine.samplers import default_sampler
from analysis.tools import plan_report, power
from analysis.tools.compare import compare, headline_p, observed
from analysis.tools.compare_calibration import Scenario, draw_test_set
from analysis.tools.outputs import read_outputs
from analysis.tools.study_power import StudyPower
from conftest import batched_table, crossed_table, sparse_table

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def crossed():
    return from_table(crossed_table(n_items=40, n_raters=6, n_labels=3, seed=4), name="crossed pilot")


@pytest.fixture(scope="module")
def batched():
    return from_table(batched_table(), batch="batch", name="batched pilot")


@pytest.fixture(scope="module")
def sparse():
    return from_table(sparse_table(n_items=60, n_raters=25, per_item=5, n_labels=3), name="sparse pilot")


@pytest.mark.parametrize("scenario", [Scenario(n_items=40, n_raters=6, n_labels=3),
                                      Scenario(n_items=60, n_raters=3, n_labels=3, pool=20)],
                         ids=["crossed", "sparse"])
def test_headline_p_is_the_p_compare_reports(scenario):
    """The function a plan runs per study gives compare's own p, to the last bit, for every metric (the
    distribution metrics' replicates included)."""
    ds, a, b = draw_test_set(scenario, 3)
    reported = compare(ds, a, b, seed=5, n_samples=200)
    shares = [read_outputs(ds, x, name, "item", "label", False).share for x, name in ((a, "A"), (b, "B"))]
    sampler, k = reported["sampler"].iloc[0], int(reported["K"].iloc[0])
    found = headline_p(ds, *shares, sampler, k, tuple(reported["metric"]), 200, 5)
    assert sampler == ("S1" if scenario.pool is None else "S4")
    assert found.tolist() == reported["p_value"].tolist()


def test_headline_p_is_the_p_compare_reports_on_batches_and_under_s2(batched, sparse):
    """The same under S3 (a batched pilot, systems from its label shares) and under S2 (asked for, on crowd data)."""
    for ds, sampler in ((batched, "S3"), (sparse, "S2")):
        votes = ds.item_label_counts.argmax(1)
        a = pd.DataFrame({"item": ds.item_ids, "label": np.asarray(ds.label_names)[votes]})
        b = a.assign(label=np.asarray(ds.label_names)[(votes + (np.arange(ds.n_items) % 3 == 0)) % ds.n_labels])
        reported = compare(ds, a, b, sampler=sampler, seed=1, n_samples=200)
        shares = [read_outputs(ds, x, name, "item", "label", False).share for x, name in ((a, "A"), (b, "B"))]
        found = headline_p(ds, *shares, sampler, int(reported["K"].iloc[0]), tuple(reported["metric"]), 200, 1)
        assert found.tolist() == reported["p_value"].tolist(), sampler


@pytest.mark.parametrize("name, sampler, kind", [("crossed", "S1", "fully crossed"), ("batched", "S3", "batched"),
                                                 ("sparse", "S4", "sparse")])
def test_a_study_has_the_planned_design_and_compare_reads_it_so(name, sampler, kind, request):
    """A study of N x K is N items with K ratings each (S4: at most K, an item's drawn raters), of the design the
    planned study has, so that compare would choose the same sampler for it; a larger N adds items to the same
    study (common random numbers)."""
    pilot = request.getfixturevalue(name)
    planner = StudyPower(pilot, sampler, ("accuracy",), studies=3, max_n=48, max_k=3)
    for s in range(3):
        small, pilot_small = planner.study(s, 24, 3)
        large, pilot_large = planner.study(s, 48, 3)
        assert small.n_items == 24 and large.n_items == 48
        assert small.topology.kind == kind and default_sampler(small) == sampler
        per_item = small.raters_per_item
        assert (per_item == 3).all() if sampler != "S4" else (per_item <= 3).all() and per_item.max() == 3
        if sampler != "S3":  # S3 fills a batch slot at a time, so only whole batches nest
            assert np.array_equal(pilot_small, pilot_large[:24])
            inner = large.item < 24
            assert np.array_equal(large.label[inner], small.label) and np.array_equal(large.item[inner], small.item)


def test_a_study_within_one_batch_is_tested_as_compare_reads_it(batched):
    """Under S3 a study of no more items than a batch holds draws one batch, a fully crossed table, on which
    ``compare`` runs S1 (and refuses S3): its studies are tested so; a study of two batches keeps S3."""
    planner = StudyPower(batched, "S3", ("accuracy",), studies=4, max_n=12, max_k=3)
    (one, _), (two, _) = planner.study(0, 6, 3), planner.study(0, 12, 3)
    assert one.topology.kind == "fully crossed" and planner.tested_sampler(one) == "S1"
    assert two.topology.kind == "batched" and planner.tested_sampler(two) == "S3"
    rejected, deltas = planner.tested(6, 3, 0.5, range(4))
    assert rejected.shape == deltas.shape == (4, 1) and np.isfinite(deltas).all()
    assert StudyPower(batched, "S2", ("accuracy",), studies=1, max_n=6, max_k=3).tested_sampler(one) == "S2"


@pytest.mark.parametrize("name, sampler", [("crossed", "S1"), ("batched", "S3"), ("sparse", "S4")])
def test_a_grid_with_other_designs_leaves_a_designs_studies_as_they_were(name, sampler, request):
    """Each draw has a stream of its own: planning more items or more ratings per item beside a design changes
    none of its studies, nor B's noise."""
    pilot = request.getfixturevalue(name)
    small = StudyPower(pilot, sampler, ("accuracy",), studies=3, max_n=30, max_k=3)
    large = StudyPower(pilot, sampler, ("accuracy",), studies=3, max_n=90, max_k=5)
    for s in range(3):
        (one, items_one), (two, items_two) = small.study(s, 24, 2), large.study(s, 24, 2)
        assert np.array_equal(items_one, items_two)
        for field in ("item", "rater", "label"):
            assert np.array_equal(getattr(one, field), getattr(two, field)), (s, field)
        assert np.array_equal(small.draw(s).noise, large.draw(s).noise)


def test_under_s4_an_item_keeps_each_copy_of_its_drawn_raters_alike():
    """An item rated by rater a (label 0) and rater b (label 1) keeps, at K = 1, the rating of the rater drawn more
    often with probability max(m_a, m_b) / (m_a + m_b), m the raters' multiplicities in the drawn pool: the copies
    of a rater drawn twice are sorted one by one. (Sorted as a block, a rater drawn twice would be kept half the
    time: 8.8 standard errors below on these draws.) Over 200 studies, each drawn pilot item counted once, the count
    lies within 4 standard errors of its expectation."""
    rows = [(i, f"r{2 * i % 30}", 0) for i in range(40)] + [(i, f"r{(2 * i + 1) % 30}", 1) for i in range(40)]
    pilot = from_table(pd.DataFrame(rows, columns=["item", "rater", "label"]), name="pairs")
    planner = StudyPower(pilot, "S4", ("accuracy",), studies=200, max_n=40, max_k=1)
    zero = pilot.rater[pilot.label == 0][np.argsort(pilot.item[pilot.label == 0])]  # rater a of each item
    one = pilot.rater[pilot.label == 1][np.argsort(pilot.item[pilot.label == 1])]
    seen, expected, variance = 0, 0.0, 0.0
    for s in range(200):
        copies = planner.draw(s).raters
        study, items = planner.study(s, 40, 1)
        items, first = np.unique(items, return_index=True)  # an item drawn twice keeps the same copy
        a, b = copies[zero[items]], copies[one[items]]
        share = np.maximum(a, b) / (a + b)
        seen += int(np.where(a >= b, study.label[first] == 0, study.label[first] == 1).sum())
        expected += share.sum()
        variance += (share * (1 - share)).sum()
    assert abs(seen - expected) <= 4 * np.sqrt(variance), (seen, expected, variance)


def test_a_crossed_study_draws_raters_and_items_with_replacement_from_the_pilot(crossed):
    """Over many studies, a study's share of each label is the pilot's share (S1 draws raters and items uniformly):
    the difference stays within 4 standard errors of the mean over studies."""
    planner = StudyPower(crossed, "S1", ("accuracy",), studies=300, max_n=20, max_k=3)
    shares = np.array([np.bincount(planner.study(s, 20, 3)[0].label, minlength=3) / 60 for s in range(300)])
    pilot = np.bincount(crossed.label, minlength=3) / crossed.n_ratings
    error = shares.std(0, ddof=1) / np.sqrt(300)
    assert (np.abs(shares.mean(0) - pilot) <= 4 * error).all(), (shares.mean(0), pilot)


def test_systems_are_the_pilots_shares_and_b_moves_away_with_epsilon(crossed):
    planner = StudyPower(crossed, "S1", ("accuracy",), studies=2, max_n=10, max_k=3)
    study, pilot = planner.study(0, 10, 3)
    a, b = planner.systems(0, pilot, 0.25)
    assert np.allclose(a, crossed.item_label_counts[pilot] / crossed.raters_per_item[pilot, None])
    assert np.allclose(b.sum(1), 1) and np.allclose((b - 0.75 * a).max(1), 0.25)
    assert np.array_equal(planner.systems(0, pilot, 0.0)[1], a)


def test_compare_power_counts_the_studies_whose_test_rejects(crossed):
    """The power at a design is the share of its studies whose headline p lies below alpha, recomputed here study
    by study; the band is Wilson's of that share."""
    planner = StudyPower(crossed, "S1", ("accuracy", "mae"), studies=12, seed=3, max_n=30, max_k=5, replicates=100)
    found, delta = planner.cell(30, 5, 0.6)
    by_hand, deltas = np.zeros(2), []
    for s in range(12):
        study, pilot = planner.study(s, 30, 5)
        a, b = planner.systems(s, pilot, 0.6)
        seed = int(np.random.SeedSequence([3, s, 30, 5]).generate_state(1)[0])
        by_hand += headline_p(study, a, b, "S1", 5, ("accuracy", "mae"), 100, seed) < 0.05
    assert found.tolist() == (by_hand / 12).tolist() and (delta > 0).all()
    low, high = planner.band(30, 5, 0.6)
    assert np.allclose((low, high), power.wilson(by_hand, 12))


def test_a_plan_of_compares_test_holds_the_target_delta_and_says_whose_test(crossed):
    result = power.plan(crossed, sampler="S1", target_delta=("mae", 0.05), ns=[10, 20, 40], ks=[3, 5],
                        n_samples=20, metrics=["accuracy", "mae"], test="compare")
    designs = result.designs
    for _, line in designs.groupby(["metric", "K"]):
        assert np.all(np.diff(line.sort_values("N")["power"]) >= 0)
    assert result.provenance["parameters"]["test"] == "compare" and result.test == "compare"
    assert result.provenance["parameters"]["perturbation"] == "one-label"
    mae = designs[designs["metric"] == "mae"].set_index(["N", "K"])["delta"]
    assert np.allclose(mae.loc[40], 0.05, atol=0.001)  # the studies' mean Delta at the pilot's N, at every K
    same = StudyPower(crossed, "S1", ("mae",), studies=20, max_n=40, max_k=6)  # the plan's studies
    for (n, k), delta in mae.items():  # at every N the mean of the same studies' first N items: within 4 SE
        per_study = [observed(*same.study(s, n, k)[:1], *same.systems(s, same.study(s, n, k)[1], result.designs[
            "epsilon"][result.designs["K"] == k].iloc[0]), k, ("mae",))["mae"][2] for s in range(20)]
        assert delta == pytest.approx(np.mean(per_study))
        assert abs(delta - 0.05) <= 4 * np.std(per_study, ddof=1) / np.sqrt(20), (n, k)
    text = plan_report.summary(result)
    assert "It is the power of compare's own test" in text and "Wilson's over the simulated studies" in text
    assert "not searched under compare's test" in text and result.pilot["smallest_epsilon"].isna().all()


def test_a_six_rater_pilot_plans_no_power_where_compares_test_cannot_reject(crossed):
    """At alpha 0.01, 6 crossed raters put JSD's p floor above alpha: every study fails, so the simulated power
    itself is 0, where the paper's test passes some."""
    options = dict(sampler="S1", epsilon=0.9, ns=[40], ks=[6], alpha=0.01, metrics=["jsd"])
    row = power.plan(crossed, n_samples=20, test="compare", **options).designs.iloc[0]
    assert not row["can_reject"] and row["simulated_power"] == 0 and row["power"] == 0
    assert power.plan(crossed, n_samples=200, **options).designs.iloc[0]["simulated_power"] > 0.1


@pytest.mark.parametrize("options, message", [
    (["--test", "compare", "--raters", "8"], "--raters plans under the paper's test only"),
    (["--test", "both"], "invalid choice: 'both'"),
    (["--test", "compare", "--jobs", "0"], "--jobs (the worker processes) must be an integer >= 1"),
])
def test_cli_refuses_what_compares_test_cannot_plan(tmp_path, crossed, capsys, options, message):
    data = tmp_path / "pilot.csv"
    crossed.to_frame().to_csv(data, index=False)
    try:  # argparse exits on a value it does not list; main returns 2 on a plan it refuses
        code = main(["plan", "--data", str(data), "--epsilon", "0.3", "--out", str(tmp_path / "plan.csv"), *options])
    except SystemExit as stop:
        code = stop.code
    err = capsys.readouterr().err.strip()
    assert code == 2 and message in err and len(err.splitlines()) <= 2, err  # argparse adds its usage line
    assert not (tmp_path / "plan.csv").exists()


def test_cli_plans_compares_test_and_says_so(tmp_path, crossed, capsys):
    data = tmp_path / "pilot.csv"
    crossed.to_frame().to_csv(data, index=False)
    main(["plan", "--data", str(data), "--epsilon", "0.5", "--test", "compare", "--ns", "20,40", "--ks", "3",
          "--metrics", "accuracy", "--n-samples", "10", "--quiet", "--out", str(tmp_path / "plan.csv")])
    out = capsys.readouterr().out
    assert "10 studies per design; power is the share of studies whose compare test gives p < 0.05" in out
    assert len(pd.read_csv(tmp_path / "plan.csv")) == 2


def test_compares_test_planned_agrees_with_compares_recorded_rejections():
    """benchmarks/plan_against_compare.csv: at each of its 18 designs, plan --test compare's power (its own
    studies, the same system B) and compare's share of rejections (other studies) are two estimates of one rate;
    they differ by less than 3.29 standard errors of two independent binomial shares (two-sided 0.001), where the
    paper's test missed MAE and JSD by up to 0.6; the methods page quotes what the file holds."""
    table = pd.read_csv(ROOT / "benchmarks" / "plan_against_compare.csv")
    assert len(table) == 18 and {"study_power", "compare_power"} <= set(table.columns)
    both = (table["study_power"] + table["compare_power"]) / 2
    error = np.sqrt(np.maximum(both * (1 - both), 1 / table["studies"]) * 2 / table["studies"])
    gap = np.abs(table["study_power"] - table["compare_power"])
    assert (gap <= 3.29 * error).all()
    assert (table["compare_power"] - table["plan_power"]).max() > 0.5
    methods = " ".join((ROOT / "book" / "methods.md").read_text().split())  # what the methods page says of it
    assert gap.max() <= 0.09 and (gap / error).max() <= 1.71
    assert f"lay above them at {(table['study_power'] > table['compare_power']).sum()} of the 18" in methods
    for metric, label in (("accuracy", "accuracy"), ("mae", "MAE"), ("jsd", "JSD")):
        rows = table[table["metric"] == metric]
        assert f"{rows['study_power'].min():.2f} to {rows['study_power'].max():.2f} for {label}" in methods


def test_a_plan_of_compares_test_counts_its_studies_on_stderr(tmp_path, crossed, capsys, monkeypatch):
    """Its bar counts studies (each design's and the pilot's), the unit a long run moves by; no compile notice,
    since compare's test runs no kernel."""
    data = tmp_path / "pilot.csv"
    crossed.to_frame().to_csv(data, index=False)
    monkeypatch.setattr(power, "PROGRESS_DELAY", 0)
    monkeypatch.setattr(power, "kernels_compiled", lambda: False)
    assert main(["plan", "--data", str(data), "--epsilon", "0.5", "--test", "compare", "--ns", "20,40", "--ks", "3",
                 "--metrics", "accuracy", "--n-samples", "5"]) == 0
    err = capsys.readouterr().err
    assert "15/15 [" in err and "study/s]" in err, err[-400:]
    assert "compiling the kernels" not in err
    assert "testing 15 studies with compare's test: about 0 min (one study of the largest design timed)" in err


def test_any_number_of_workers_gives_the_same_plan(crossed):
    """Two workers test the studies in two runs; the shares and the mean Deltas are the same to the last bit."""
    options = dict(sampler="S1", epsilon=0.6, ns=[20, 40], ks=[3], n_samples=6, metrics=["accuracy", "mae"],
                   test="compare")
    one, two = power.plan(crossed, **options), power.plan(crossed, **options, n_jobs=2)
    columns = ["power", "power_low", "power_high", "simulated_power", "delta"]
    assert one.designs[columns].equals(two.designs[columns]) and one.pilot["power"].equals(two.pilot["power"])


def test_the_estimate_scales_one_timed_study_by_the_designs_items(crossed, monkeypatch):
    from analysis.tools import study_power

    ticks = iter([10.0, 12.0])  # the timed study takes 2 s
    monkeypatch.setattr(study_power.time, "perf_counter", lambda: next(ticks))
    planner = StudyPower(crossed, "S1", ("accuracy",), studies=5, max_n=40, max_k=3)
    assert planner.seconds([(10, 3), (40, 3), (20, 2)]) == pytest.approx(2 * 5 * 70 / 40)


@pytest.mark.parametrize("test", ["paper", "compare"])
def test_a_sampler_the_design_does_not_allow_is_refused_before_any_work(sparse, test):
    from analysis.errors import TopologyError

    for sampler in ("S1", "S3"):
        with pytest.raises(TopologyError, match=f"{sampler} does not run on 'sparse pilot', whose design is sparse; "
                                                "its design allows S2, S4"):
            power.plan(sparse, sampler=sampler, epsilon=0.5, ns=[20], ks=[3], n_samples=20, test=test)


def test_the_bands_of_compares_test_cover_as_recorded():
    """benchmarks/plan_compare_coverage.csv: the 95 % bands of plans of 100 studies held the power of 4,000 other
    studies in 90-98 % of at least 200 (design, metric) cases, over powers from below 0.2 to above 0.8, on a crossed,
    a batched and a sparse pilot; the methods page quotes the share, overall and per pilot."""
    table = pd.read_csv(ROOT / "benchmarks" / "plan_compare_coverage.csv")
    share = table["fitted_covers"].mean()
    assert len(table) >= 200 and 0.90 <= share <= 0.98
    assert table["true"].min() < 0.2 and table["true"].max() > 0.8
    assert set(table["pilot"]) == {"crossed", "batched", "sparse"}
    methods = " ".join((ROOT / "book" / "methods.md").read_text().split())
    assert f"in {100 * share:.1f} % of {len(table):,} cases" in methods
    for pilot, part in table.groupby("pilot"):
        assert f"{100 * part['fitted_covers'].mean():.1f} % of {len(part)} on a {pilot}" in methods, pilot
