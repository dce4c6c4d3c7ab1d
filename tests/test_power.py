"""Planning (METHOD section 11): a design's power agrees with an independent simulation within its band, the
cheapest design is the brute-force one, and bad plans are refused with one line."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analysis import power
from analysis.__main__ import main
from analysis.data import from_table
from analysis.errors import ParameterError
from analysis.grid import Cell, simulate_cell
from analysis.metrics import METRICS
from analysis.engine import Simulator
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
    alt, null = simulate_cell(Simulator(pilot, "S2"), Cell("S2", "dirichlet", epsilon, n * k, k), 400, 11)
    independent = share_significant(alt, null, alpha)
    for m, metric in enumerate(METRICS):
        both = (planned[metric] * 200 + independent[m] * 400) / 600
        tolerance = 3.29 * np.sqrt(max(both * (1 - both), 1 / 600) * (1 / 200 + 1 / 400))
        assert abs(planned[metric] - independent[m]) <= tolerance, (metric, planned[metric], independent[m])
    assert (result.designs["power_low"] <= result.designs["power"]).all()
    assert (result.designs["power"] <= result.designs["power_high"]).all()


def test_the_cheapest_design_is_the_brute_force_one(pilot):
    ns, ks, cost_item, cost_rating, target = [8, 16, 32, 64], [1, 2, 4], 3.0, 1.0, 0.6
    result = power.plan(pilot, sampler="S2", epsilon=0.4, ns=ns, ks=ks, cost_item=cost_item,
                        cost_rating=cost_rating, power=target, n_samples=100, seed=2)
    simulator = Simulator(pilot, "S2")
    found = {}
    for n in ns:
        for k in ks:
            alt, null = simulate_cell(simulator, Cell("S2", "dirichlet", 0.4, n * k, k), 100, 2)
            found[n, k] = share_significant(alt, null, 0.05)
    best = result.cheapest.set_index("metric")
    for m, metric in enumerate(METRICS):
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
    (["--target-delta", "nonsense=0.1"], "unknown metric")])
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


def test_table1_prints_small_p_a_legend_and_the_cheapest_significant_design():
    rows = [{"dataset": "d", "sampler": "S2", "epsilon": 0.3, "NK": nk, "K": k, "metric": m, "delta": 0.05,
             "p_value": 0.0001 if m == "accuracy" and nk >= 1000 else 0.2}
            for nk in (100, 1000) for k in (1, 5) for m in METRICS]
    text = power.table1_text(pd.DataFrame(rows), data={"items": 40, "raters": 6})
    assert "< 0.001" in text and "0.000" not in text
    assert "–: no budget of the grid reaches p < 0.05" in text
    assert "Accuracy 1000 x 1" in text and "MAE none" in text
    assert "N = 1,000 items, 25 times the 40 of the data" in text
    assert "note" not in power.table1_text(pd.DataFrame(rows), data={"items": 5000, "raters": 6})


def test_table1_on_the_command_line_notes_designs_beyond_the_data(tmp_path, capsys):
    rows = [{"dataset": "d", "sampler": "S2", "epsilon": 0.3, "NK": nk, "K": 1, "metric": m, "delta": 0.05,
             "p_value": 0.01 if nk == 1000 else 0.3} for nk in (100, 1000) for m in METRICS]
    pd.DataFrame(rows).to_csv(tmp_path / "results.csv", index=False)
    (tmp_path / "results.csv.json").write_text('{"data_items": 40, "data_raters_per_item_max": 6}')
    assert main(["table1", str(tmp_path / "results.csv")]) == 0
    printed = capsys.readouterr().out
    assert "N = 1,000 items, 25 times the 40 of the data" in printed and "Accuracy 1000 x 1" in printed
