"""Planning (METHOD section 11): a design's power agrees with an independent simulation within its band, the
cheapest design is the brute-force one, and bad plans are refused with one line; planning the number of raters R
beside the pilot's own, from a population model fitted to it, marks what it models and tracks the true power."""

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analysis.tools import plan_report, power
from analysis.__main__ import main
from analysis.data import population
from analysis.data.annotations import from_table
from analysis.errors import ParameterError
from analysis.experiment.grid import Cell, simulate_cell
from analysis.engine.metrics import METRIC_LABELS, METRICS, check_metrics
from analysis.engine import Simulator
from analysis.experiment.choices import BOOK
from conftest import crossed_table


@pytest.fixture(scope="module")
def pilot():
    return from_table(crossed_table(n_items=40, n_raters=6, n_labels=3, seed=4), name="pilot")


def share_significant(alt, null, alpha):
    """Per metric, the share of alternative replicates with fewer than alpha * n null replicates at or above them."""
    return np.array([np.mean([(null[:, m] >= a).mean() < alpha for a in alt[:, m]]) for m in range(alt.shape[1])])


def test_wilson_band_is_scipys():
    low, high = power.wilson(np.array([3, 50]), 60)
    for successes, lo, hi in zip((3, 50), low, high):
        ci = stats.binomtest(successes, 60).proportion_ci(method="wilson")
        assert np.isclose(lo, ci.low) and np.isclose(hi, ci.high)


def test_power_agrees_with_an_independent_simulation(pilot):
    """The planner's power (200 replicates, seed 0) against a simulation with another seed and 400 replicates:
    their difference stays within 3.29 standard errors of two independent binomial shares (two-sided 0.001)."""
    n, k, epsilon, alpha = 30, 4, 0.3, 0.05
    result = power.plan(pilot, sampler="S2", epsilon=epsilon, ns=[n], ks=[k], n_samples=200, seed=0)
    planned = result.designs.set_index("metric")["power"]
    alt, null = simulate_cell(Simulator(pilot, "S2", **BOOK.engine(), metrics=BOOK.metrics),  # the planner's
                              Cell("S2", BOOK.perturbation, epsilon, n * k, k), 400, 11)
    independent = share_significant(alt, null, alpha)
    for m, metric in enumerate(check_metrics(BOOK.metrics)):
        both = (planned[metric] * 200 + independent[m] * 400) / 600
        tolerance = 3.29 * np.sqrt(max(both * (1 - both), 1 / 600) * (1 / 200 + 1 / 400))
        assert abs(planned[metric] - independent[m]) <= tolerance, (metric, planned[metric], independent[m])
    assert (result.designs["power_low"] <= result.designs["power"]).all()
    assert (result.designs["power"] <= result.designs["power_high"]).all()


def test_the_cheapest_design_is_the_brute_force_one(pilot):
    ns, ks, cost_item, cost_rating, target = [8, 16, 32, 64], [1, 2, 4], 3.0, 1.0, 0.6
    result = power.plan(pilot, sampler="S2", epsilon=0.4, ns=ns, ks=ks, cost_item=cost_item,
                        cost_rating=cost_rating, power=target, n_samples=100, seed=2)
    simulator = Simulator(pilot, "S2", **BOOK.engine(), metrics=BOOK.metrics)
    found = {}
    for n in ns:
        for k in ks:
            alt, null = simulate_cell(simulator, Cell("S2", BOOK.perturbation, 0.4, n * k, k), 100, 2)
            found[n, k] = share_significant(alt, null, 0.05)
    best = result.cheapest.set_index("metric")
    for m, metric in enumerate(check_metrics(BOOK.metrics)):
        reaching = [(n * cost_item + n * k * cost_rating, -found[n, k][m], n, k) for (n, k) in found
                    if found[n, k][m] >= target]
        if reaching:
            cost, _, n, k = min(reaching)
            assert (best.loc[metric, "N"], best.loc[metric, "K"], best.loc[metric, "cost"]) == (n, k, cost), metric
        else:
            assert pd.isna(best.loc[metric, "N"]), metric
    assert result.designs["extrapolated"].eq(result.designs["N"] > pilot.n_items).all()


def test_the_pilot_design_and_its_smallest_detectable_effect(pilot):
    result = power.plan(pilot, sampler="S2", epsilon=0.3, ns=[40], ks=[6], n_samples=100, metrics=["mae", "jsd"])
    planner = power.Planner(pilot, "S2", 100, 0)
    for _, row in result.pilot.iterrows():
        assert (row["N"], row["K"]) == (40, 6)
        if pd.notna(row["smallest_epsilon"]):
            m = METRICS.index(row["metric"])
            assert planner.cell(40, 6, row["smallest_epsilon"])[0][m] >= 0.8
            assert planner.cell(40, 6, row["smallest_epsilon"] - 1 / 2**power.BISECTION_STEPS)[0][m] < 0.8


def test_a_target_delta_becomes_an_epsilon_and_an_unreachable_one_is_refused(pilot):
    planner = power.Planner(pilot, "S2", 100, 0)
    mae = METRICS.index("mae")
    reachable = planner.cell(40, 6, 0.5)[1][mae]
    epsilon = planner.epsilon_for(40, 6, mae, reachable)
    step = 1 / 2**(power.BISECTION_STEPS + 3)
    assert planner.cell(40, 6, epsilon - step)[1][mae] < reachable <= planner.cell(40, 6, epsilon)[1][mae]
    with pytest.raises(ParameterError, match="out of reach"):
        planner.epsilon_for(40, 6, mae, 10.0)


@pytest.mark.parametrize("options, message", [
    (["--epsilon", "0.3", "--cost-item", "-1"], "--cost-item) must be >= 0"),
    (["--epsilon", "0.3", "--power", "1.5"], "--power) must lie in (0, 1)"),
    (["--epsilon", "0"], "--epsilon) must lie in (0, 1]"),
    (["--target-delta", "accuracy=9", "--n-samples", "20", "--sampler", "S2"], "out of reach"),
    (["--target-delta", "nonsense=0.1"], "unknown metric"),
    (["--epsilon", "0.3", "--test", "compare", "--perturbation", "dirichlet"], "under the one-label law only")])
def test_cli_refuses_a_bad_plan_with_one_line_and_writes_nothing(tmp_path, pilot, capsys, options, message):
    pilot.to_frame().to_csv(tmp_path / "pilot.csv", index=False)
    out = tmp_path / "plan.csv"
    assert main(["plan", "--data", str(tmp_path / "pilot.csv"), *options, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "error:" in err and message in err, err
    assert not out.exists()


def test_cli_prints_the_cheapest_design_and_writes_the_table_and_figure(tmp_path, pilot, capsys):
    pilot.to_frame().to_csv(tmp_path / "pilot.csv", index=False)
    out, fig = tmp_path / "plan.csv", tmp_path / "plan.png"
    assert main(["plan", "--data", str(tmp_path / "pilot.csv"), "--epsilon", "0.4", "--ns", "20,40,80", "--ks",
                 "2,6", "--n-samples", "50", "--cost-item", "2", "--sampler", "S2", "--out", str(out), "--figure", str(fig)]) == 0
    printed = capsys.readouterr()
    assert "cheapest with power >= 0.8" in printed.out and "extrapolation" in printed.err
    assert len(pd.read_csv(out)) == 3 * 2 * 8 and fig.stat().st_size > 0


def test_cli_plans_under_the_law_it_is_given_and_says_so(tmp_path, pilot, capsys):
    pilot.to_frame().to_csv(tmp_path / "pilot.csv", index=False)
    out = tmp_path / "plan.csv"
    assert main(["plan", "--data", str(tmp_path / "pilot.csv"), "--epsilon", "0.4", "--ns", "20", "--ks", "3",
                 "--n-samples", "20", "--metrics", "accuracy", "--perturbation", "dirichlet", "--out", str(out)]) == 0
    assert "B perturbed with Dirichlet noise, not the one-label noise" in capsys.readouterr().out
    assert json.loads(Path(f"{out}.json").read_text())["parameters"]["perturbation"] == "dirichlet"


def test_k_beyond_the_raters_is_an_extrapolation_in_the_table_summary_readable_and_figure(pilot):
    """The pilot has 6 raters: K = 12 redraws them. With K = 12 the only design of the grid, it is the cheapest
    wherever anything reaches the target, and every view says it is an extrapolation."""
    result = power.plan(pilot, sampler="S1", epsilon=1.0, ns=[20], ks=[3, 12], n_samples=40, power=0.01,
                        cost_item=0, cost_rating=1, metrics=["mae", "jsd"])
    assert power.raters_available(pilot, "S1") == 6 == result.provenance["raters"]
    assert result.designs["beyond_raters"].eq(result.designs["K"] > 6).all()
    assert result.designs["beyond_raters"].any()
    text = plan_report.summary(result)
    assert "the number of distinct raters bounds the power" in text and "keeps the pilot's raters" in text
    assert "K ratings costs N × K)" in text  # an item cost of 0 and a rating cost of 1 are not spelled out
    high = power.plan(pilot, sampler="S1", epsilon=1.0, ns=[20], ks=[12], n_samples=40, power=0.01,
                      metrics=["mae"])
    assert high.cheapest["K"].iloc[0] == 12 and high.cheapest["beyond_raters"].iloc[0]
    marks = "K above the 6 raters a drawn item has"
    assert marks in plan_report.summary(high) and marks in plan_report.summary_lines(high)[0]
    assert "(extrapolated: K > the 6 raters)" in plan_report.readable(high)["cheapest N × K"].iloc[0]
    fig = plan_report.figure(high, ["mae"])
    star = [line for line in fig.axes[0].lines if line.get_marker() == "*"]
    assert len(star) == 1 and star[0].get_markerfacecolor() == "white"  # a hollow star: an extrapolated cheapest


def test_s2_summary_has_no_raters_bound_and_the_default_grid_stays_within_the_raters(pilot):
    ns, ks = power.default_grid(pilot, "S2")
    assert max(ks) <= 6 and 6 in ks and min(ns) < pilot.n_items < max(ns)
    result = power.plan(pilot, sampler="S2", epsilon=0.4, ns=[20], ks=[2], n_samples=20, metrics=["mae"])
    assert plan_report.raters_note(result) is None and "bounds the power" not in plan_report.summary(result)


def test_an_alpha_the_replicates_cannot_resolve_is_refused(pilot, tmp_path, capsys, monkeypatch):
    """A replicate's p-value moves in steps of 1/n: with 100 replicates alpha 1e-9 means 'no null replicate at or
    above', which is significant far more often than 1e-9 under the null. Refused before any simulation."""
    pilot.to_frame().to_csv(tmp_path / "pilot.csv", index=False)
    monkeypatch.setattr(power, "plan", lambda *a, **k: pytest.fail("simulated before refusing"))
    assert main(["plan", "--data", str(tmp_path / "pilot.csv"), "--epsilon", "0.3", "--alpha", "1e-9",
                 "--n-samples", "100"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "smallest resolvable alpha is 0.01" in err
    assert "--n-samples 1000000000" in err
    power.check_alpha(0.01, 100)  # the smallest resolvable one is accepted
    with pytest.raises(ParameterError, match="smallest resolvable alpha is 0.05"):
        power.check_alpha(0.049, 20)


@pytest.mark.parametrize("figure, message", [("plan.txt", ".txt is not a figure format"),
                                             ("plan", "no suffix is not a figure format")])
def test_the_figure_format_is_checked_before_any_work(pilot, tmp_path, capsys, monkeypatch, figure, message):
    pilot.to_frame().to_csv(tmp_path / "pilot.csv", index=False)
    monkeypatch.setattr(power, "plan", lambda *a, **k: pytest.fail("simulated before refusing"))
    before = sorted(tmp_path.iterdir())
    assert main(["plan", "--data", str(tmp_path / "pilot.csv"), "--epsilon", "0.3", "--figure",
                 str(tmp_path / figure), "--out", str(tmp_path / "plan.csv")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "error:" in err and message in err and ".png" in err, err
    assert sorted(tmp_path.iterdir()) == before


def test_nothing_reaching_the_target_keeps_every_column_and_the_json_is_valid(pilot, tmp_path):
    result = power.plan(pilot, sampler="S2", epsilon=0.05, ns=[4], ks=[1], n_samples=20, power=0.99,
                        metrics=["mae", "jsd"])
    assert list(result.cheapest.columns) == list(result.designs.columns)
    assert result.cheapest.drop(columns="metric").isna().all().all()
    assert "no design of the grid reaches power 0.99" in plan_report.summary(result)
    assert (plan_report.readable(result)["cheapest N × K"] == "none in the grid").all()
    plan_report.save(result, str(tmp_path / "plan.csv"))

    def no_nan(text):
        raise AssertionError(f"{text} in the JSON")

    note = json.loads((tmp_path / "plan.csv.json").read_text(), parse_constant=no_nan)
    assert note["cheapest"][0]["N"] is None and note["raters"] == 6
    assert isinstance(note["cheapest"][0]["metric"], str)


def test_a_long_plan_shows_its_progress_on_stderr(pilot, tmp_path, capsys, monkeypatch):
    pilot.to_frame().to_csv(tmp_path / "pilot.csv", index=False)
    monkeypatch.setattr(power, "PROGRESS_DELAY", 0)  # as if the plan took long
    assert main(["plan", "--data", str(tmp_path / "pilot.csv"), "--epsilon", "0.4", "--ns", "20,40", "--ks", "2",
                 "--n-samples", "20", "--sampler", "S2", "--metrics", "mae"]) == 0
    printed = capsys.readouterr()
    assert "plan pilot S2" in printed.err and "design" in printed.err and "plan pilot" not in printed.out
    assert main(["plan", "--data", str(tmp_path / "pilot.csv"), "--epsilon", "0.4", "--ns", "20,40", "--ks", "2",
                 "--n-samples", "20", "--sampler", "S2", "--metrics", "mae", "--quiet"]) == 0
    assert "plan pilot" not in capsys.readouterr().err


def test_a_figure_without_matplotlib_is_refused_before_any_work(pilot, tmp_path, capsys, monkeypatch):
    import sys

    pilot.to_frame().to_csv(tmp_path / "pilot.csv", index=False)
    monkeypatch.setitem(sys.modules, "matplotlib.backend_bases", None)  # as if matplotlib were not installed
    monkeypatch.setattr(power, "plan", lambda *a, **k: pytest.fail("simulated before refusing"))
    assert main(["plan", "--data", str(tmp_path / "pilot.csv"), "--epsilon", "0.3", "--figure",
                 str(tmp_path / "plan.png")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--figure needs matplotlib: pip install matplotlib" in err
    assert not (tmp_path / "plan.png").exists()


def test_under_s3_the_raters_available_are_a_batchs_and_bound_the_power(batched):
    """The batched fixture: 15 batches of 6 items, each batch rated by 4 raters of a pool of 200."""
    assert power.raters_available(batched, "S3") == 4 and power.raters_available(batched, "S2") == 4
    assert batched.n_raters > 4 * 10
    result = power.plan(batched, sampler="S3", epsilon=0.4, ns=[30], ks=[2, 8], n_samples=20, metrics=["mae"])
    assert result.designs.set_index("K")["beyond_raters"].to_dict() == {2: False, 8: True}
    assert "from a batch's 4 raters of the pilot: the number of distinct raters bounds the power" in \
        plan_report.summary(result)


def test_the_figure_is_written_with_the_usual_file_mode(tmp_path):
    """Like the CSVs (0644 under umask 022), not private as a temporary file is made (0600)."""
    import os

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from analysis.tools.plan_report import save_figure

    old = os.umask(0o022)
    try:
        save_figure(plt.figure(), str(tmp_path / "plan.png"))
    finally:
        os.umask(old)
    assert (tmp_path / "plan.png").stat().st_mode & 0o777 == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["plan.png"]


# ------------------------------------------------------------------------------------------ planning R

DESIGN_COLUMNS = ["metric", "N", "K", "epsilon", "cost", "power", "power_low", "power_high", "delta", "extrapolated",
                  "beyond_raters", "can_reject"]


@pytest.fixture(scope="module")
def planned_r(pilot):
    """The 6-rater pilot planned at R = 12 and 24 beside its own 6; K = 12 is beyond the pilot's raters."""
    return power.plan(pilot, sampler="S1", epsilon=0.6, ns=[20, 40], ks=[2, 6, 12], n_samples=40, power=0.3,
                      metrics=["mae", "accuracy"], raters=[24, 12])


def test_without_raters_the_plan_is_the_pilots_alone(pilot, planned_r):
    """No R, no modelled, no population: the columns and numbers of the pilot's own designs, as before planning R."""
    alone = power.plan(pilot, sampler="S1", epsilon=0.6, ns=[20, 40], ks=[2, 6, 12], n_samples=40, power=0.3,
                       metrics=["mae", "accuracy"])
    assert list(alone.designs.columns) == DESIGN_COLUMNS + ["simulated_power"] and list(alone.pilot.columns) == [
        "metric", "N", "K", "cost", "power", "power_low", "power_high", "can_reject", "smallest_epsilon",
        "smallest_delta"]
    assert "population" not in alone.provenance and "raters" not in alone.provenance["parameters"]
    own = planned_r.designs[~planned_r.designs["modelled"]]
    pd.testing.assert_frame_equal(own[alone.designs.columns].reset_index(drop=True), alone.designs)
    pd.testing.assert_frame_equal(planned_r.pilot[alone.pilot.columns], alone.pilot)
    assert not any("R =" in line or "modelled" in line for line in plan_report.summary_lines(alone))


def test_planning_r_adds_modelled_designs_with_k_up_to_r(pilot, planned_r):
    designs = planned_r.designs
    assert list(designs.columns) == DESIGN_COLUMNS + ["R", "modelled", "simulated_power"]
    assert set(designs.loc[~designs["modelled"], "R"]) == {6} and set(designs.loc[designs["modelled"], "R"]) == {12, 24}
    for r, group in designs[designs["modelled"]].groupby("R"):
        assert sorted(set(group["K"])) == [2, 6, 12] and not group["beyond_raters"].any()
        assert sorted(set(group["N"])) == [20, 40]
    assert planned_r.provenance["parameters"]["raters"] == [12, 24]
    fitted = planned_r.provenance["population"]
    assert 0 <= fitted["rho_interval"][0] < fitted["rho_interval"][1] <= 1 and fitted["level"] == 0.9
    for _, p in planned_r.pilot.iterrows():  # the best power of the pilot's own 6 raters, K up to 6
        own = designs[(designs["metric"] == p["metric"]) & ~designs["modelled"] & (designs["K"] <= 6)]
        assert p["best_power"] == own["power"].max() and p["best_K"] <= 6


def test_a_modelled_designs_band_spans_its_power_at_both_ends_of_the_rater_shares_interval(pilot):
    """The band of a modelled design holds what the fitted rho leaves open: the power of the same studies' seeds
    drawn at each end of its interval with half the replicates, simulated apart here, lies inside it (one N per K:
    no fit through N)."""
    from analysis.data.population import Population
    from analysis.tools.modelled import PANELS, study

    result = power.plan(pilot, sampler="S1", epsilon=0.6, ns=[40], ks=[2, 6], n_samples=40, metrics=["mae", "accuracy"],
                        raters=[12])
    modelled = result.designs[result.designs["modelled"]].set_index(["K", "metric"])
    fitted = Population(**{k: v for k, v in result.provenance["population"].items() if k != "description"})
    low, high = fitted.rho_interval
    assert [end.rho for end in fitted.interval_ends()] == [low, high] and low < fitted.rho < high
    for end in fitted.interval_ends():
        studies = tuple(study(end, pilot, "S1", 40, 12, 0, panel) for panel in range(PANELS))
        planner = power.Planner(pilot, "S1", 20, 0, studies=studies, metrics=("mae", "accuracy"))  # half of 40
        for k in (2, 6):
            powers = planner.cell(40, k, 0.6)[0]
            for metric in ("mae", "accuracy"):
                row = modelled.loc[(k, metric)]
                if row["can_reject"]:  # else power 0: compare's test could not reject there
                    found = powers[planner.metrics.index(metric)]
                    assert row["power_low"] <= found <= row["power_high"], (end.rho, k, metric, found, row.to_dict())


def test_the_cheapest_design_with_r_is_the_cheapest_then_the_fewest_raters_then_the_most_powerful():
    """Recruiting raters costs what the cost formula leaves out: on equal cost a design within the pilot's raters
    wins, then fewer raters, the pilot's own before a modelled design of the same R, and only then the more
    powerful."""
    rows = [(100, 0.95, 24, True), (100, 0.85, 12, True), (100, 0.90, 12, True), (50, 0.70, 48, True),
            (100, 0.82, 6, True), (100, 0.81, 6, False)]
    designs = pd.DataFrame([{"metric": "mae", "N": 10, "K": 5, "cost": c, "power": p, "R": r, "modelled": m,
                             "extrapolated": False, "beyond_raters": False} for c, p, r, m in rows])
    assert power.cheapest(designs, 0.8).iloc[0][["R", "modelled", "power"]].tolist() == [6, False, 0.81]
    assert power.cheapest(designs[designs["R"] > 6], 0.8).iloc[0][["R", "power"]].tolist() == [12, 0.90]
    assert power.cheapest(designs, 0.6).iloc[0]["R"] == 48
    assert power.cheapest(designs, 0.92).iloc[0]["R"] == 24


def test_a_modelled_cheapest_design_is_marked_in_the_summary_table_and_figure(planned_r, tmp_path):
    modelled = planned_r.designs[planned_r.designs["modelled"]]
    result = replace(planned_r, cheapest=power.cheapest(modelled, 0.0))  # as if only modelled designs reached it
    r = int(result.cheapest["R"].iloc[0])
    line = plan_report.summary_lines(result)[0]
    assert f"of R = {r} raters" in line
    assert f"R = {r} raters, more than the pilot's 6, drawn from the population model fitted to the pilot" in line
    assert "With its own 6 raters the best power any N of the grid reaches is" in line
    text = plan_report.summary(result)
    assert "the designs with R = 12, 24 raters are simulated on studies drawn from a population model" in text
    assert "within the pilot's items and raters" in text
    # the pilot's smallest detectable effect, or that no perturbation up to ε = 1 reaches the target power there
    pilots = result.pilot.copy()
    pilots.loc[pilots.index[0], "smallest_epsilon"] = np.nan
    metric = METRIC_LABELS[pilots["metric"].iloc[0]]
    unreached = [line for line in plan_report.summary(replace(result, pilot=pilots)).splitlines()
                 if line.startswith(f"- {metric}:")]
    assert len(unreached) == 1 and f"no perturbation up to ε = 1 gives it power {result.target:g}." in unreached[0]
    # a modelled pool no larger than the pilot's is within its raters, but not its own: the summary says which
    designs = planned_r.designs.copy()
    first = designs.index[designs["modelled"] & (designs["metric"] == result.cheapest["metric"].iloc[0])][0]
    designs.loc[first, ["R", "power", "cost"]] = [6, 1.0, 1]
    pooled = plan_report.summary(replace(result, designs=designs))
    n, k = int(designs.loc[first, "N"]), int(designs.loc[first, "K"])
    assert f"within the pilot's items and raters, {n:,} × {k} of R = 6 modelled raters (cost 1)" in pooled
    # the page's notation, one sign for each thing: ×, never x, between N and K; ρ, never rho
    assert " x K" not in text and "rho" not in text and "rater share ρ" in text
    best = result.pilot.iloc[0]
    assert f"reaches is {best['best_power']:.2f} ({int(best['best_N']):,} × {int(best['best_K'])})" in text
    cell = plan_report.readable(result)["cheapest N × K"].iloc[0]
    assert f", R = {r} (extrapolated: R = {r} > the pilot's 6)" in cell
    assert "best power with the pilot's 6 raters" in plan_report.readable(result).columns
    fig = plan_report.figure(result, ["mae"])
    assert [ax.get_title() for ax in fig.axes] == ["MAE, R = 6 (the pilot)", "MAE, R = 12 (modelled)",
                                                   "MAE, R = 24 (modelled)"]
    # one legend below the panels, each K once, none inside a panel over its lines and bands
    assert not any(ax.get_legend() for ax in fig.axes) and len(fig.legends) == 1
    shown = [t.get_text() for t in fig.legends[0].get_texts()]
    assert len(shown) == len(set(shown)) and {f"K = {k}" for k in result.designs["K"]} <= {
        t.removesuffix(" (K > raters)") for t in shown}
    stars = [(i, line) for i, ax in enumerate(fig.axes) for line in ax.lines if line.get_marker() == "*"]
    assert len(stars) == 1 and stars[0][0] == [6, 12, 24].index(r) and stars[0][1].get_markerfacecolor() == "white"
    plan_report.save(result, str(tmp_path / "plan.csv"))
    table = pd.read_csv(tmp_path / "plan.csv")
    assert {"R", "modelled"} <= set(table.columns) and table["modelled"].dtype == bool
    note = json.loads((tmp_path / "plan.csv.json").read_text())
    assert note["cheapest"][0]["modelled"] is True and note["population"]["description"].startswith("a population")
    assert "best_power" in note["pilot"][0]


@pytest.mark.parametrize("options, message", [
    (["--raters", "1,12"], "R must be an integer >= 2"),
    (["--raters", "3", "--ks", "5,10"], "R = 3 (--raters) is below every K of --ks (5, 10)"),
    (["--raters", "12", "--sampler", "S2"], "S2 draws an item's raters afresh")])
def test_cli_refuses_bad_raters_with_one_line_and_writes_nothing(tmp_path, pilot, capsys, options, message):
    pilot.to_frame().to_csv(tmp_path / "pilot.csv", index=False)
    out = tmp_path / "plan.csv"
    assert main(["plan", "--data", str(tmp_path / "pilot.csv"), "--epsilon", "0.3", *options, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "error:" in err and message in err, err
    assert not out.exists()


def test_cli_plans_r_and_names_a_cheapest_design_with_its_r_or_none(tmp_path, pilot):
    """The command as a user runs it, in a process of its own: per metric a cheapest (N, K, R), or none."""
    import re
    import subprocess
    import sys

    pilot.to_frame().to_csv(tmp_path / "pilot.csv", index=False)
    done = subprocess.run([sys.executable, "-m", "analysis", "plan", "--data", str(tmp_path / "pilot.csv"),
                           "--raters", "6,12,24", "--epsilon", "0.3", "--ns", "20,40", "--ks", "2,6",
                           "--n-samples", "40", "--metrics", "mae,accuracy", "--out", str(tmp_path / "plan.csv")],
                          capture_output=True, text=True, timeout=600, cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith(("MAE:", "Accuracy:"))]
    named = re.compile(r"cheapest with power >= 0.8: (N = [\d,]+ items x K = \d+ of R = (6|12|24) raters|no design "
                       r"of the grid reaches it)")
    assert len(lines) == 2 and all(named.search(line) for line in lines), done.stdout
    assert "sampler S1" in done.stdout and "population model" in done.stderr
    assert set(pd.read_csv(tmp_path / "plan.csv")["R"]) == {6, 12, 24}


@pytest.mark.slow
def test_planned_power_matches_the_true_populations_at_five_designs():
    """A pilot of 200 items x 12 raters from a known population; five designs, at its 12 raters and at 48. The
    plan's power (from the population fitted to the pilot) against the power on 300 fresh studies from the true
    population, within z = 3.4 (two-sided 0.01 over the 15 comparisons) standard errors of their difference; each
    side's Monte Carlo error by a bootstrap of studies (the plan's from an independent run of the same size)."""
    from analysis.data.population import Population
    from analysis.tools.modelled import PANELS, pooled_power, study

    truth = Population((0, 1, 2), (0.5, 0.3, 0.2), 3.0, 0.25, (0.25, 0.25))
    pilot = truth.draw(200, 12, seed=1, name="pilot")
    metrics, n = ["mae", "jsd", "accuracy"], 300
    result = power.plan(pilot, sampler="S1", epsilon=0.3, ns=[40, 80], ks=[4, 8, 16], n_samples=n, raters=[12, 48],
                        metrics=metrics)
    planned = result.designs[result.designs["modelled"]].set_index(["N", "K", "R", "metric"])["power"]
    fitted = Population(**{k: v for k, v in result.provenance["population"].items() if k != "description"})
    rng, chosen = np.random.default_rng(0), [METRICS.index(m) for m in metrics]
    z = stats.norm.isf(0.005 / 15)
    for n_items, k, r in [(40, 4, 12), (80, 8, 12), (40, 4, 48), (80, 8, 48), (80, 16, 48)]:
        cell = Cell("S1", BOOK.perturbation, 0.3, n_items * k, k)
        fresh = [study(truth, pilot, "S1", 200, r, 7, p) for p in range(n)]
        true, true_se = pooled_power(fresh, "S1", cell, n, 70_000, rng)
        again = [study(fitted, pilot, "S1", 200, r, 8, p) for p in range(PANELS)]
        _, plan_se = pooled_power(again, "S1", cell, n, 80_000, rng)  # the plan's own error, from a run like it
        for metric, m in zip(metrics, chosen):
            gap = planned[(n_items, k, r, metric)] - true[m]
            assert abs(gap) <= z * np.hypot(true_se[m], plan_se[m]), (n_items, k, r, metric, gap, true_se[m],
                                                                       plan_se[m])


def test_s3_plans_r_on_batched_studies(batched):
    result = power.plan(batched, sampler="S3", epsilon=0.5, ns=[30], ks=[2, 4], n_samples=20, metrics=["mae"],
                        raters=[8], pilots=20)
    fitted = population.fit(batched, 0, pilots=20)
    assert result.provenance["parameters"]["pilots"] == 20
    assert result.provenance["population"]["rho"] == fitted.rho  # the fit with the pilots asked for
    modelled = result.designs[result.designs["modelled"]]
    assert set(modelled["R"]) == {8} and set(modelled["K"]) == {2, 4} and result.provenance["raters"] == 4
    assert "a batch's 4 raters of the pilot" in plan_report.summary(result)


# ------------------------------------------------------------------------ a plan a user can act on (issue 51)

@pytest.fixture(scope="module")
def monotone_plan(pilot):
    return power.plan(pilot, sampler="S1", epsilon=0.4, ns=[10, 20, 40, 80, 160], ks=[3, 6], n_samples=60,
                      metrics=["mae", "accuracy", "jsd"], alpha=0.05)


def test_power_cannot_fall_as_n_grows_and_the_simulated_power_is_kept(monotone_plan):
    designs = monotone_plan.designs
    for _, line in designs.groupby(["metric", "K"]):
        line = line.sort_values("N")
        assert (np.diff(line["power"]) >= 0).all(), line[["N", "power", "simulated_power"]]
        assert (line["power_low"] <= line["power"]).all() and (line["power"] <= line["power_high"]).all()
    reachable = designs[designs["can_reject"]]
    pooled = reachable["power"] != reachable["simulated_power"]
    # a pooled run's level is the weighted mean of its simulated powers: inside their range
    for _, line in reachable.groupby(["metric", "K"]):
        low, high = line["simulated_power"].min(), line["simulated_power"].max()
        assert ((line["power"] >= low - 1e-12) & (line["power"] <= high + 1e-12)).all()
    assert pooled.sum() < len(reachable)  # the fit moves only where the simulated powers fall


def test_a_pooled_runs_band_holds_each_designs_own_band():
    """Two designs whose simulated power falls as N grows are pooled to one level; each keeps a band that holds
    both the level's and its own, since the true power may rise within the run."""
    designs = pd.DataFrame({"metric": "mae", "K": 3, "N": [10, 20, 40], "power": [0.6, 0.4, 0.9],
                            "power_low": [0.5, 0.3, 0.85], "power_high": [0.7, 0.5, 0.95], "can_reject": True})
    fitted = power.monotone(designs).set_index("N")
    assert fitted.loc[10, "power"] == fitted.loc[20, "power"] == pytest.approx(0.5) and fitted.loc[40, "power"] == 0.9
    for n in (10, 20):
        own = designs.set_index("N").loc[n]
        assert fitted.loc[n, "power_low"] <= own["power_low"] and fitted.loc[n, "power_high"] >= own["power_high"]
        assert fitted.loc[n, "power_low"] < 0.5 < fitted.loc[n, "power_high"]
    assert fitted.loc[40, ["power_low", "power_high"]].tolist() == [0.85, 0.95]  # not pooled: as simulated


def test_the_band_holds_the_nulls_monte_carlo_error_as_well():
    power_ = np.array([0.0, 0.3, 0.8])
    wilson_low, wilson_high = power.wilson(np.rint(power_ * 200), 200)
    low, high = power.power_band(power_, 200, np.zeros(3))
    assert np.allclose(low, np.clip(wilson_low, 0, 1)) and np.allclose(high, wilson_high)
    wide_low, wide_high = power.power_band(power_, 200, np.full(3, 0.05))
    assert (wide_high - wide_low > high - low).all() and (wide_low >= 0).all() and (wide_high <= 1).all()
    # the null's part alone: 1.96 standard deviations either side of a share whose binomial part is nothing
    assert power.power_band(np.array([1.0]), 10**9, np.array([0.01]))[0][0] == pytest.approx(1 - 0.0196, abs=1e-4)


def test_a_null_resample_spread_is_measured_per_design(pilot):
    planner = power.Planner(pilot, "S1", n_samples=80, seed=3)
    spread = planner.null_spread(20, 3, 0.3)
    assert spread.shape == (len(METRICS),) and (spread >= 0).all() and spread.max() > 0
    assert np.array_equal(spread, planner.null_spread(20, 3, 0.3))  # seeded by the design


def test_a_target_delta_is_the_effect_at_every_k(pilot):
    """The epsilon is found at each K, so that the mean Delta at the pilot's N is the one asked for at every K, not
    only at the pilot's K (where one epsilon for all gives another Delta at another K)."""
    target = 0.1
    result = power.plan(pilot, sampler="S1", target_delta=("accuracy", target), ns=[40], ks=[1, 3, 6],
                        n_samples=100, metrics=["accuracy"])
    designs = result.designs.set_index("K")
    assert designs["epsilon"].nunique() > 1
    se = designs["delta"] * 0 + 0.02  # the Monte Carlo error of a mean Delta over 100 replicates, generously
    assert (abs(designs["delta"] - target) < 3 * se + 0.01).all(), designs[["epsilon", "delta"]]
    assert "ε is chosen at each K so that Accuracy's Δ stays 0.1; the other metrics" in plan_report.summary(result)


def test_a_six_rater_pilot_plans_no_distribution_metric_compare_cannot_pass(pilot):
    """With 6 raters ``compare``'s percentile part cannot give KL or JSD a one-sided p below 0.01 (its floor is
    the same number ``compare`` reports): those designs count as power 0, and none is named cheapest."""
    from analysis.tools import rater_level

    result = power.plan(pilot, sampler="S1", epsilon=0.8, ns=[40, 80], ks=[3, 6], n_samples=100, alpha=0.01,
                        metrics=["accuracy", "jsd", "kl_div"], power=0.5)
    designs = result.designs
    blocked = designs[designs["metric"].isin(["jsd", "kl_div"])]
    assert not blocked["can_reject"].any() and (blocked["power"] == 0).all()
    assert designs.loc[designs["metric"] == "accuracy", "can_reject"].all()
    assert blocked["simulated_power"].max() > 0.1  # the sampler's own replicate test passes some
    best = result.cheapest.set_index("metric")
    assert best.loc[["jsd", "kl_div"], "N"].isna().all()
    assert "cannot reach p < 0.01" in plan_report.summary(result)
    floor = rater_level.smallest_p(6, 1, 80, 1000)
    assert 0.01 <= floor < 0.05
    a = pd.DataFrame({"item": pilot.item_ids, "label": pilot.item_label_counts.argmax(1)})
    from analysis.tools.compare import compare

    reported = compare(pilot, a, a.assign(label=(a["label"] + 1) % 3), n_samples=1000).set_index("metric")
    assert reported.loc["jsd", "p_floor"] == pytest.approx(rater_level.smallest_p(6, 1, pilot.n_items, 1000))


def test_on_equal_cost_a_design_within_the_pilot_beats_an_extrapolation():
    rows = [(100, 0.95, True, False), (100, 0.85, False, False), (100, 0.99, False, True), (80, 0.6, False, False)]
    designs = pd.DataFrame([{"metric": "mae", "N": 10, "K": 5, "cost": c, "power": p, "extrapolated": x,
                             "beyond_raters": b} for c, p, x, b in rows])
    assert power.cheapest(designs, 0.8).iloc[0]["power"] == 0.85
    assert power.cheapest(designs, 0.9).iloc[0]["power"] == 0.99  # only extrapolations reach it: the most powerful


def test_the_plan_names_the_noise_law_it_plans_under(monotone_plan):
    """plan perturbs B under the book's law unless told otherwise; its report names the law, and another law as
    not the book's."""
    assert monotone_plan.provenance["parameters"]["perturbation"] == BOOK.perturbation
    text = plan_report.summary(monotone_plan)
    assert f"B perturbed with {BOOK.perturbation} noise;" in text and "not the" not in text
    named = replace(monotone_plan, provenance={**monotone_plan.provenance, "parameters": {
        **monotone_plan.provenance["parameters"], "perturbation": "dirichlet"}})
    assert (f"B perturbed with Dirichlet noise, not the {BOOK.perturbation} noise of the book's chapters"
            in plan_report.summary(named))


def test_the_table_and_the_figure_agree_on_which_cheapest_design_extrapolates(planned_r):
    """The star is hollow exactly where the table calls the cheapest design an extrapolation, and a design of the
    pilot's own items and raters is neither, on the plan of a 6-rater pilot with modelled R."""
    own = planned_r.designs[~power.beyond_pilot(planned_r.designs)]
    for chosen, hollow in ((own, False), (planned_r.designs[planned_r.designs["R"] > 6], True)):
        result = replace(planned_r, cheapest=power.cheapest(chosen, 0.0))
        cell = plan_report.readable(result)["cheapest N × K"].iloc[0]
        fig = plan_report.figure(result, [result.cheapest["metric"].iloc[0]])
        stars = [line for ax in fig.axes for line in ax.lines if line.get_marker() == "*"]
        assert len(stars) == 1 and (stars[0].get_markerfacecolor() == "white") == hollow
        assert ("(extrapolated:" in cell) == hollow, cell


def test_the_plan_scores_the_averaging_it_is_given_by_default_the_books():
    """``plan``'s "all" is the eight with precision, recall and F1 averaged as asked (the book's macro by default),
    and the provenance says which."""
    from analysis.engine.metrics import averaged

    ds = from_table(crossed_table(n_items=30, n_raters=6, n_labels=3, seed=4), name="pilot")
    for averaging in (None, "weighted"):
        given = {} if averaging is None else {"averaging": averaging}
        result = power.plan(ds, epsilon=0.3, ns=[30], ks=[3], n_samples=20, **given)
        wanted = averaged(averaging or BOOK.averaging)
        assert list(dict.fromkeys(result.designs["metric"])) == list(wanted)
        assert result.provenance["parameters"]["averaging"] == (averaging or BOOK.averaging)


def test_the_plans_word_on_compares_power_is_what_the_recorded_comparison_measured(monotone_plan):
    """The report says that compare's own test proved more powerful than the plan on MAE and JSD: in the recorded
    run of benchmarks/plan_against_compare.py, compare's share of rejections lies above the plan's power by more
    than its own Monte Carlo error (its Wilson band's low end) in every design of those metrics, and the methods page
    quotes the ranges the file holds. (A design the fit pooled keeps its own wide band, so the plan's band can reach
    compare's share where the plan's power stays far below it: MAE at 50 items x 5.)"""
    root = Path(__file__).resolve().parents[1]
    found = pd.read_csv(root / "benchmarks" / "plan_against_compare.csv")
    assert "compare's test of two fixed systems' outputs has proved more powerful" in plan_report.summary(monotone_plan)
    methods = " ".join((root / "book" / "methods.md").read_text().split())
    for metric in ("mae", "jsd"):
        rows = found[found["metric"] == metric]
        assert len(rows) >= 5 and (rows["compare_low"] > rows["plan_power"]).all(), metric
        for column in ("compare_power", "plan_power"):
            assert f"{rows[column].min():.2f} to {rows[column].max():.2f}" in methods, (metric, column)
