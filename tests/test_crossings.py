"""p at the paper's own cells and one budget step below, the counts on the paper's side of 0.05, and the spread the
paper's (Δ, p) imply beside ours.

Results tables are hand-made with chosen p-values and standard deviations, except in the one test that runs the
engine on the paper's K = 1 cells of Toxicity under S2.
"""

import numpy as np
import pandas as pd
import pytest

from analysis.errors import ParameterError
from analysis.experiment.choices import BOOK
from analysis.experiment.grid import PAPER_BUDGETS
from analysis.experiment.pvalues import p_value
from analysis.paper import crossings, effect_sizes, why

STAND_IN = {"DICES": "dices-synthetic", "D3code": "d3code-synthetic", "Toxicity": "toxicity-synthetic"}
N = 100  # replicates per hypothesis in the hand-made results: a p is a count of pairs over N²


def results_for(cells: pd.DataFrame, p_at, p_below=0.5, seed: int = 0, null_sd=0.01, delta_sd=0.01) -> pd.DataFrame:
    """Grid results at every cell of :func:`crossings.cells_to_simulate`: ``p_at(cell)`` at each paper cell's own
    (NK, K) for all its metrics, ``p_below`` at every other cell (steps below)."""
    todo = crossings.cells_to_simulate(cells)
    own = set(map(tuple, cells[effect_sizes.CELL].to_numpy()))
    rows = []
    for cell in todo.itertuples(index=False):
        for metric in cells["metric"].unique():
            at = tuple(cell) in own
            rows.append({"dataset": STAND_IN[cell.dataset], "sampler": cell.sampler, "epsilon": cell.epsilon,
                         "NK": cell.NK, "K": cell.K, "metric": metric, "seed": seed, "n_samples": N,
                         "p_value": p_at(cell, metric) if at else p_below, "delta": 0.1, "null_sd": null_sd,
                         "delta_sd": delta_sd})
    return pd.DataFrame(rows)


def test_the_step_below_is_the_previous_budget_of_the_papers_grid():
    for lower, budget in zip(PAPER_BUDGETS, PAPER_BUDGETS[1:]):
        assert crossings.step_below(budget) == lower
    assert crossings.step_below(PAPER_BUDGETS[0]) is None
    with pytest.raises(ParameterError, match="grid"):
        crossings.step_below(300)
    cells = effect_sizes.paper_cells(appendix_epsilon=0.2)
    stepped = crossings.with_step_below(cells)
    for row in stepped.itertuples():
        assert PAPER_BUDGETS.index(row.NK_below) == PAPER_BUDGETS.index(row.NK) - 1


def test_a_step_that_holds_no_item_at_the_cells_k_is_none():
    cells = pd.DataFrame({"NK": [100, 250, 250], "K": [1, 100, 200]})
    assert crossings.with_step_below(cells)["NK_below"].tolist() == [pd.NA, 100, pd.NA]


def test_cells_to_simulate_are_the_papers_and_one_step_below_each_once():
    cells = effect_sizes.paper_cells(appendix_epsilon=0.2)
    todo = crossings.cells_to_simulate(cells)
    assert not todo.duplicated().any()
    lower = cells.assign(NK=[crossings.step_below(nk) for nk in cells["NK"]])
    wanted = set(map(tuple, pd.concat([cells, lower])[effect_sizes.CELL].to_numpy()))
    assert set(map(tuple, todo.to_numpy())) == wanted


def test_which_side_of_alpha_is_decided_on_the_count_of_pairs():
    """A p whose pairs are exactly 5 % of all is 0.05 and not below it, however the replicates' counts fall; one
    pair fewer is below."""
    rng = np.random.default_rng(0)
    n = 60
    null = np.arange(n, dtype=float)
    for _ in range(200):  # replicate counts summing to exactly 5 % of the pairs
        counts = rng.multinomial(n * n // 20, np.full(n, 1 / n))
        if counts.max() > n:
            continue
        p = p_value(null, n - counts - 0.5)
        assert p == 0.05 and not crossings.below(p, n)[()]
    assert crossings.below((n * n // 20 - 1) / n**2, n)[()]
    assert crossings.below([0.0, 0.0499, 0.05, 0.5], [1000] * 4).tolist() == [True, True, False, False]


def test_crossings_set_ours_beside_the_papers_at_the_cell_and_one_step_below():
    cells = effect_sizes.paper_cells(which=("table1",))
    chosen = {("DICES", "S1"): 0.2, ("Toxicity", "S3"): 0.05}  # off the paper's side; every other cell 0.01

    def p_at(cell, metric):
        return chosen.get((cell.dataset, cell.sampler), 0.01)
    results = pd.concat([results_for(cells, p_at, p_below=0.01, seed=0),
                         results_for(cells, p_at, p_below=0.3, seed=1)], ignore_index=True)
    frame = crossings.crossings(cells, results)
    assert len(frame) == 2 * len(cells)
    off = [(r.dataset, r.sampler) in chosen for r in frame.itertuples()]
    assert frame["crosses"].tolist() == [not o for o in off]
    # one step below is another printed cell's own budget at the same K (that cell's p), or no printed cell (p_below)
    own = set(map(tuple, cells[effect_sizes.CELL].to_numpy()))
    for r in frame.itertuples():
        is_own = (r.dataset, r.sampler, r.epsilon, r.NK_below, r.K) in own
        lower = chosen.get((r.dataset, r.sampler), 0.01) if is_own else (0.01, 0.3)[r.seed]
        assert r.p_below == lower and r.holds_below == (lower >= 0.05)


def test_the_counts_are_a_recount_of_the_cells_per_seed():
    cells = effect_sizes.paper_cells(appendix_epsilon=0.2)
    rng = np.random.default_rng(1)
    parts = []
    for seed in range(3):
        draws = {}

        def p_at(cell, metric):
            return draws.setdefault((cell, metric), rng.choice([0.01, 0.049, 0.05, 0.2]))
        parts.append(results_for(cells, p_at, p_below=float(rng.choice([0.01, 0.2])), seed=seed))
    frame = crossings.crossings(cells, pd.concat(parts, ignore_index=True))
    counted = crossings.counts(frame).query("by == 'all'").set_index(["table", "count"])
    for which in effect_sizes.TABLES:
        part = frame[frame["table"] == which]
        at = part.groupby("seed")["p_value"].apply(lambda p: int((p < 0.05).sum()))
        under = part.dropna(subset=["holds_below"]).groupby("seed")["p_below"].apply(lambda p: int((p >= 0.05).sum()))
        for count, per_seed in ((crossings.AT, at), (crossings.BELOW, under)):
            row = counted.loc[(which, count)]
            assert (row["min"], row["median"], row["max"]) == (per_seed.min(), per_seed.median(), per_seed.max())
        assert counted.loc[(which, crossings.AT), "cells"] == len(part) / 3
    sentence = crossings.crossing_sentence(crossings.counts(frame))
    assert counted.loc[("table1", crossings.AT), "spread"] in sentence and "3 seeds" in sentence


def test_a_cell_without_our_results_is_named():
    cells = effect_sizes.paper_cells(which=("table1",))
    results = results_for(cells, lambda cell, metric: 0.01)
    lower = crossings.with_step_below(cells).iloc[0]
    missing = (results["NK"] == lower["NK_below"]) & (results["K"] == lower["K"]) & (
        results["sampler"] == lower["sampler"]) & (results["dataset"] == STAND_IN[lower["dataset"]])
    with pytest.raises(ParameterError, match="one step below"):
        crossings.crossings(cells, results[~missing])


@pytest.mark.parametrize("p", [0.05, 0.01, 0.3])
def test_the_implied_sd_inverts_the_one_sided_normal_p(p):
    from scipy.stats import norm
    sd = 0.04
    delta = sd * norm.isf(p)
    assert crossings.implied_sd(delta, p) == pytest.approx(sd)


def test_the_implied_sd_is_that_of_the_difference_of_an_alternative_and_a_null_replicate():
    """The pairwise p of normal null and alternative replicates, read back through the formula, gives
    √(sd_null² + sd_alt²)."""
    rng = np.random.default_rng(2)
    null, alt = rng.normal(0, 0.03, 40_000), rng.normal(0.08, 0.04, 40_000)
    assert crossings.implied_sd(alt.mean(), p_value(null, alt)) == pytest.approx(0.05, rel=0.02)
    assert np.isnan(crossings.implied_sd([0.1, 0.1], [0.0, 0.5])).all()


def _frame(null_sd, delta_sd, paper_delta=0.1, paper_p=0.05, **cell) -> pd.DataFrame:
    row = {"table": "table1", "dataset": "DICES", "sampler": "S2", "metric": "mae", "NK": 1000, "K": 40,
           "paper_delta": paper_delta, "paper_p": paper_p, "seed": 0, "delta": paper_delta, "p_value": paper_p,
           "null_sd": null_sd, "delta_sd": delta_sd, **cell}
    return pd.DataFrame([row])


@pytest.mark.parametrize("scale, verdict", [(1.0, ""), (0.7, crossings.NARROW), (1.4, crossings.WIDE),
                                            (0.79, crossings.NARROW), (0.81, "")])
def test_a_spread_is_judged_by_its_ratio_to_the_papers(scale, verdict):
    from scipy.stats import norm
    paper_sd = 0.1 / norm.isf(0.05)
    ours = scale * paper_sd
    spread = crossings.spreads(_frame(ours / np.sqrt(2), ours / np.sqrt(2)))
    assert spread.loc[0, "sd"] == pytest.approx(ours)
    assert spread.loc[0, "paper_sd"] == pytest.approx(paper_sd)
    assert spread.loc[0, "ratio"] == pytest.approx(scale)
    assert spread.loc[0, "verdict"] == verdict
    assert spread.loc[0, "family"] == "distribution" and spread.loc[0, "run"] == "DICES S2"


def test_the_printed_digits_widen_what_the_paper_allows():
    """Δ 0.013 printed allows 0.0125 to 0.0135: ×0.79 of the point value is too narrow without that margin and not
    with it."""
    from scipy.stats import norm
    paper_sd = 0.013 / norm.isf(0.036)
    spread = crossings.spreads(_frame(0.0, 0.79 * paper_sd, paper_delta=0.013, paper_p=0.036))
    assert spread.loc[0, "ratio"] < 1 / crossings.FACTOR and spread.loc[0, "verdict"] == ""


def test_a_run_or_family_is_named_where_most_of_its_cells_are():
    spread = pd.DataFrame({"table": "table1", "run": ["DICES S2"] * 4 + ["Toxicity S2"] * 2,
                           "family": ["vote", "distribution", "distribution", "distribution", "vote", "vote"],
                           "ratio": [0.5, 0.6, 1.0, 0.7, 2.0, 0.5],
                           "verdict": [crossings.NARROW, crossings.NARROW, "", crossings.NARROW, crossings.WIDE,
                                       crossings.NARROW],
                           "normal": 1.0})
    by_run = crossings.spread_verdicts(spread, ["run"]).set_index("run")
    assert by_run.loc["DICES S2", ["cells", "narrow", "verdict"]].tolist() == [4, 3, crossings.NARROW]
    assert by_run.loc["Toxicity S2", ["narrow", "wide", "verdict"]].tolist() == [1, 1, ""]  # no majority
    by_family = crossings.spread_verdicts(spread, ["family"]).set_index("family")
    assert by_family.loc["vote", ["narrow", "wide", "verdict"]].tolist() == [2, 1, crossings.NARROW]
    assert by_family.loc["distribution", ["narrow", "verdict"]].tolist() == [2, crossings.NARROW]
    both = crossings.spread_verdicts(spread).set_index(["run", "family"])
    assert both.loc[("DICES S2", "distribution"), ["cells", "narrow", "median_ratio"]].tolist() == [3, 2, 0.7]
    sentence = crossings.spread_sentence(spread)
    assert "the distribution metrics of DICES S2 (2 of 3 cells, median ratio 0.70)" in sentence
    assert "the vote metrics of DICES S2 (1 of 1 cells" in sentence
    assert "Toxicity S2" not in sentence and "4 of 6 cells of Table 1" in sentence
    shown = crossings.verdicts_table(spread).frame.set_index("run")
    assert shown.loc["DICES S2", "Table 1, distribution metrics"] == "0.70 (2 of 3 too narrow)"
    assert shown.loc["Toxicity S2", "Table 1, vote metrics"] == "1.25" and shown.loc[
        "Toxicity S2", "Table 1, distribution metrics"] == "–"


def test_the_cells_table_shows_each_printed_cell_and_its_seeds_on_the_papers_side():
    cells = effect_sizes.paper_cells(which=("table1",))
    results = pd.concat([results_for(cells, lambda cell, metric: 0.01 if seed else 0.2, seed=seed)
                         for seed in range(3)], ignore_index=True)
    frame = crossings.crossings(cells, results)
    table = crossings.cells_table(frame, crossings.spreads(frame)).frame
    assert len(table) == 39
    assert table["p: ours"].str.endswith("(2/3)").all()
    assert (table["p: the paper's"].tolist() == [f"{p:.3f}" for p in cells["paper_p"]])


def test_simulate_asks_for_the_cells_the_why_chapter_draws_for_the_books_choices(monkeypatch):
    """The same data, grid settings and metrics as the why-chapter's run of the book's choices, so the cell cache
    serves each cell it drew."""
    (data, settings), = why._groups({why.BASELINE: BOOK})
    asked = {}

    def record(cells, **options):
        asked.update(options, cells=cells)
        return pd.DataFrame(columns=["dataset", "metric", "NK", "K", "seed"])
    monkeypatch.setattr(effect_sizes, "simulate", record)
    cells = effect_sizes.paper_cells(appendix_epsilon=0.2)
    crossings.simulate(cells, seeds=[0, 1, 2], n_samples=1000)
    assert asked["data"] == {effect_sizes.paper_dataset(name): name for name in data}
    assert tuple(sorted((k, v) for k, v in asked["choices"].grid().items() if k != "averaging")) == settings
    assert asked["metrics"] == effect_sizes.ALL_AVERAGINGS and asked["n_samples"] == 1000
    assert asked["cells"].equals(crossings.cells_to_simulate(cells))


def test_the_papers_k1_cells_of_one_run_through_the_engine(tmp_path, monkeypatch):
    monkeypatch.setenv("ANALYSIS_CACHE_DIR", str(tmp_path))
    cells = effect_sizes.paper_cells(which=("table1",))
    cells = cells[(cells["dataset"] == "Toxicity") & (cells["sampler"] == "S2") & (cells["K"] == 1)]
    results = crossings.simulate(cells, seeds=[0], n_samples=30)
    frame = crossings.crossings(cells, results)
    assert len(frame) == len(cells) and set(frame["NK_below"]) == {250, 500}  # below 500 and 1000
    assert frame["crosses"].tolist() == crossings.below(frame["p_value"], 30).tolist()
    spread = crossings.spreads(frame)
    assert (spread["sd"] > 0).all() and spread["paper_sd"].notna().all()


def test_the_mixing_table_sets_each_nulls_counts_and_spread_side_by_side():
    cells = effect_sizes.paper_cells(appendix_epsilon=0.2)
    wide = crossings.crossings(cells, results_for(cells, lambda cell, metric: 0.01, null_sd=0.03, delta_sd=0.04))
    narrow = crossings.crossings(cells, results_for(cells, lambda cell, metric: 0.2, null_sd=0.003, delta_sd=0.004))
    mixings = {"half": narrow, "pairs": wide}
    table = crossings.mixing_table({m: crossings.counts(f) for m, f in mixings.items()},
                                   {m: crossings.spreads(f) for m, f in mixings.items()}).frame
    assert table["the null's columns"].tolist() == ["a uniform half (the book's)", "a coin per pair of columns"]
    at = "Table 1, " + crossings.AT
    assert table[at].tolist() == ["0 (0–0) of 39", "39 (39–39) of 39"]  # p 0.2 everywhere, then 0.01 everywhere
    ratios = table["spread ratio, vote metrics"].astype(float)
    assert ratios[1] == pytest.approx(10 * ratios[0], rel=0.01)  # every sd ten times as wide


def _readings(ratios: dict) -> pd.DataFrame:
    rows = [{"run": run, "metric": metric, "family": family, "reading": reading, "ratio": ratio, "n_samples": 300}
            for (run, family), by_reading in ratios.items() for metric in ("m1", "m2", "m3")
            for reading, ratio in by_reading.items()]
    return pd.DataFrame(rows)


def test_the_readings_say_how_far_they_move_the_spread_and_whether_any_reaches_the_papers():
    readings = _readings({("DICES S1", "distribution"): {"half": 0.5, "pairs": 0.55, "coin per response": 0.6},
                          ("DICES S1", "vote"): {"half": 0.7, "pairs": 0.9, "coin per response": 0.75}})
    summary = crossings.readings_summary(readings)
    assert summary["cells"].eq(3).all() and len(summary) == 6
    sentence = crossings.readings_sentence(readings)
    assert "by more than 0.20 from the book's null (the largest: the vote metrics of DICES S1, " \
           f"{crossings.MIXING_WORDS['pairs']})" in sentence
    assert "the distribution metrics, the median ratio over the runs is 0.50 under the book's null and 0.55 to 0.60 " \
           "under the others, none of 2 within ×1.25" in sentence
    assert "0.75 to 0.90 under the others, 1 reading of 2 within ×1.25" in sentence
    table = crossings.readings_table(readings).frame
    assert table.columns.tolist()[:2] == ["run", "metrics"] and table.iloc[0, 2] == "0.50"


def test_missing_readings_are_none(tmp_path):
    assert crossings.load_readings(tmp_path / "absent.csv") is None
    _readings({("r", "vote"): {"half": 1.0, "pairs": 1.0}}).to_csv(tmp_path / "r.csv", index=False)
    assert len(crossings.load_readings(tmp_path / "r.csv")) == 6


def test_the_halves_sentence_says_which_spread_falls_short():
    """The paper's implied sd over √2 is each half's share: an alternative at half of that falls short, one at
    the full share does not."""
    rows = [{"run": run, "metric": "m", "family": family, "reading": "half", "ratio": 1.0, "n_samples": 300,
             "paper_sd": np.sqrt(2), "delta_sd": alt, "null_sd": null}
            for run, family, alt, null in (("A", "distribution", 0.5, 0.4), ("B", "distribution", 0.6, 0.45),
                                           ("A", "vote", 1.0, 0.9), ("B", "vote", 1.1, 1.0))]
    sentence = crossings.halves_sentence(pd.DataFrame(rows))
    assert ("for the distribution metrics, our alternative's sd is 0.50 to 0.60 of that and our null's 0.40 to "
            "0.45, the alternative's more than ×1.25 short in all of the 2 runs") in sentence
    assert "for the vote metrics, our alternative's sd is 1.00 to 1.10" in sentence and "short in none of" in sentence


def test_a_reading_closes_the_gap_only_where_it_brings_a_group_inside_the_factor():
    far = _readings({("A", "distribution"): {"half": 0.5, "pairs": 0.6}, ("A", "vote"): {"half": 1.0, "pairs": 1.4}})
    assert crossings.readings_verdict(far).startswith("Of the 1 group of runs and metric families whose spread lies "
                                                      "beyond ×1.25 of the paper's under the book's null, no reading")
    near = _readings({("A", "distribution"): {"half": 0.5, "pairs": 0.85}, ("A", "vote"): {"half": 1.0, "pairs": 1.0},
                      ("B", "vote"): {"half": 1.27, "pairs": 1.24}})  # B: inside, but within Monte Carlo error
    assert crossings.readings_verdict(near) == ("Some readings close part of the gap: the distribution metrics of A "
                                                f"under {crossings.MIXING_WORDS['pairs']} (0.85).")
