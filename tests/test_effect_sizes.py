"""Effect-size agreement (METHOD section 12): the paper's cells, the cells to simulate, ours beside the paper's, and
the counts within ×1.25 with their spread over seeds.

Results tables are hand-made with known ratios to the paper's Δ, except in the one test that runs the engine on
two of the paper's cells.
"""

import numpy as np
import pandas as pd
import pytest

from analysis.data import datasets
from analysis.experiment import grid
from analysis.paper import effect_sizes, tables
from analysis.paper import effect_sizes as es
from analysis.errors import ParameterError
from analysis.experiment.choices import Choices

STAND_IN = {"DICES": "dices-synthetic", "D3code": "d3code-synthetic", "Toxicity": "toxicity-synthetic"}


def results_for(cells: pd.DataFrame, ratios, seed: int = 0, n_samples: int = 100) -> pd.DataFrame:
    """Grid results at ``cells`` whose Δ is ``ratio`` times the paper's, with delta_sd 0.5, on the stand-ins."""
    return pd.DataFrame({"dataset": cells["dataset"].map(STAND_IN), "sampler": cells["sampler"],
                         "metric": cells["metric"], "epsilon": cells["epsilon"], "NK": cells["NK"], "K": cells["K"],
                         "delta": cells["paper_delta"].to_numpy() * np.asarray(ratios), "delta_sd": 0.5,
                         "p_value": 0.01, "n_samples": n_samples, "seed": seed})


def test_paper_cells_are_every_printed_cell_of_both_tables():
    cells = effect_sizes.paper_cells(appendix_epsilon=0.2)
    printed = effect_sizes.paper_table().dropna(subset=["delta"])
    assert len(cells) == len(printed) == 39 + 37  # Table 1 has one dash, the appendix three
    assert (cells["N"] == cells["NK"] // cells["K"]).all()
    assert set(cells.loc[cells["table"] == "table1", "epsilon"]) == {tables.PAPER_EPSILON}
    assert set(cells.loc[cells["table"] == "appendix", "epsilon"]) == {0.2}
    row = cells.set_index(["table", "dataset", "sampler", "metric"]).loc[("table1", "Toxicity", "S2", "kl_div")]
    assert (row["NK"], row["K"], row["paper_delta"], row["paper_p"]) == (500, 1, 1.268, 0.035)


def test_the_appendix_needs_its_epsilon():
    with pytest.raises(ParameterError, match="appendix_epsilon"):
        effect_sizes.paper_cells()
    assert set(effect_sizes.paper_cells(which=("table1",))["table"]) == {"table1"}


def test_cells_to_simulate_are_distinct_and_use_the_stand_ins_without_the_papers_files():
    cells = effect_sizes.paper_cells(which=("table1",))
    todo = effect_sizes.cells_to_simulate(cells)
    assert not todo.duplicated(["dataset", "sampler", "epsilon", "NK", "K"]).any()
    assert len(todo) == len(cells.drop_duplicates(["dataset", "sampler", "NK", "K"]))
    expected = {p: datasets.paper_or_stand_in(effect_sizes.REGISTRY_NAMES[p]) for p in STAND_IN}
    assert dict(zip(todo["dataset"], todo["data"])) == expected
    chosen = effect_sizes.cells_to_simulate(cells, data={"DICES": "dices-synthetic-v1"})
    assert set(chosen.loc[chosen["dataset"] == "DICES", "data"]) == {"dices-synthetic-v1"}


@pytest.mark.parametrize("ratio, within", [(1.0, True), (1.24, True), (1.26, False), (0.81, True), (0.79, False),
                                           (-1.0, False)])
def test_a_cell_is_judged_by_its_ratio_to_the_papers_delta(ratio, within):
    cells = effect_sizes.paper_cells(which=("table1",))
    found = effect_sizes.effect_sizes(cells, results_for(cells, ratio, n_samples=100))
    assert len(found) == len(cells)
    assert np.allclose(found["ratio"], ratio) and (found["within"] == within).all()
    assert np.allclose(found["se"], 0.5 / 10)
    assert set(found["data"]) == set(STAND_IN.values())


def test_results_missing_a_cell_are_refused():
    cells = effect_sizes.paper_cells(which=("table1",))
    with pytest.raises(ParameterError, match="1 paper cell"):
        effect_sizes.effect_sizes(cells, results_for(cells, 1.0).iloc[1:])


def test_two_datasets_for_one_paper_dataset_are_refused():
    cells = effect_sizes.paper_cells(which=("table1",))
    results = results_for(cells, 1.0)
    twice = pd.concat([results, results.assign(dataset=results["dataset"] + "-v1")])
    with pytest.raises(ParameterError, match="two datasets"):
        effect_sizes.effect_sizes(cells, twice)


def grid_with_papers_cells(drop=()) -> pd.DataFrame:
    """Grid results whose Table 1 is the paper's own (p 0.01 only at its cell), but never significant in ``drop``."""
    rows = []
    for cell in tables.paper_table().itertuples():
        hit = not pd.isna(cell.NK) and (cell.dataset, cell.sampler, cell.metric) not in drop
        nk, k = (int(cell.NK), int(cell.K)) if hit else (100, 1)
        rows.append({"dataset": STAND_IN[cell.dataset], "sampler": cell.sampler, "epsilon": 0.3,
                     "metric": cell.metric, "NK": nk, "K": k, "delta": 0.1, "p_value": 0.01 if hit else 0.5})
    return pd.DataFrame(rows)


def test_summary_counts_cells_per_seed_and_gives_min_median_max():
    cells = effect_sizes.paper_cells(which=("table1",))
    toxicity = (cells["dataset"] == "Toxicity").to_numpy()
    accuracy = (cells["metric"] == "accuracy").to_numpy()
    # seed 0: every cell within; seed 1: Toxicity at twice the paper's; seed 2: accuracy at twice the paper's too
    per_seed = [np.ones(len(cells)), np.where(toxicity, 2.0, 1.0), np.where(toxicity | accuracy, 2.0, 1.0)]
    effects = pd.concat([effect_sizes.effect_sizes(cells, results_for(cells, r, seed=s))
                         for s, r in enumerate(per_seed)])
    grids = {0: grid_with_papers_cells(), 1: grid_with_papers_cells(drop={("DICES", "S2", "accuracy")}),
             2: grid_with_papers_cells()}
    found = effect_sizes.summary(effects, grids).set_index(["table", "by", "group", "count"])
    n_toxicity, n_accuracy = int(toxicity.sum()), int(accuracy.sum())
    every = found.loc[("table1", "all", "every cell", effect_sizes.WITHIN)]
    assert (every["cells"], every["seeds"]) == (39, 3)
    assert (every["min"], every["median"], every["max"]) == (39 - n_toxicity - n_accuracy + 2, 39 - n_toxicity, 39)
    run = found.loc[("table1", "run", "Toxicity S2", effect_sizes.WITHIN)]
    assert (run["min"], run["median"], run["max"]) == (0, 0, 8)
    metric = found.loc[("table1", "metric", "Accuracy", effect_sizes.WITHIN)]
    assert (metric["cells"], metric["min"], metric["median"], metric["max"]) == (5, 0, 3, 5)
    k_class = found.loc[("table1", "all", "every cell", "best-K class")]
    assert (k_class["cells"], k_class["min"], k_class["median"], k_class["max"]) == (40, 39, 40, 40)
    assert found.loc[("table1", "run", "DICES S2", "budget within one step"), "spread"] == "8 (7–8) of 8"


def test_simulate_runs_exactly_the_papers_cells_through_the_grid():
    cells = effect_sizes.paper_cells(which=("table1",))
    cells = cells[(cells["dataset"] == "Toxicity") & (cells["sampler"] == "S2")
                  & cells["metric"].isin(["accuracy", "wins", "jsd"])]  # (500, 1), (500, 4) and (500, 10)
    results = effect_sizes.simulate(cells, seeds=(0, 1), n_samples=20, data=STAND_IN, use_cache=False)
    assert set(zip(results["NK"], results["K"], results["seed"])) == {(500, k, s) for k in (1, 4, 10) for s in (0, 1)}
    assert set(results["imitates"]) == {"Toxicity"} and set(results["epsilon"]) == {0.3}
    direct = grid.run(datasets.load("toxicity-synthetic"), "S2", budgets=[500], ks=[4], epsilons=[0.3],
                      n_samples=20, seed=1, use_cache=False, progress=False)
    ours = results[(results["K"] == 4) & (results["seed"] == 1)]
    assert np.array_equal(ours["delta"].to_numpy(), direct["delta"].to_numpy())
    found = effect_sizes.effect_sizes(cells, results)
    assert len(found) == 2 * len(cells) and found["delta"].notna().all()


def test_measure_compares_the_papers_cells_in_one_call():
    effects, counted = effect_sizes.measure(which=("table1",), seeds=(3,), n_samples=10, data=STAND_IN,
                                            use_cache=False)
    assert len(effects) == 39 and set(effects["seed"]) == {3}
    every = counted.set_index(["table", "by", "group"]).loc[("table1", "all", "every cell")]
    assert every["cells"] == 39 and every["min"] == int(effects["within"].sum())


# ------------------------------------------------------------------------------------------ the switches

def test_choices_refuse_an_unknown_value_of_any_switch():
    for wrong in ({"averaging": "samples"}, {"smoothing": 1e-6}, {"perturbation": "gaussian"},
                  {"granularity": "ternary"}, {"stand_ins": "v4"}, {"dices_labels": "two"}):
        with pytest.raises(ParameterError):
            Choices(**wrong)


def test_choices_name_the_stand_in_variant_that_differs_from_version_2():
    binary, v3 = Choices(granularity="binary"), Choices(stand_ins="v3")
    assert [binary.dataset(n) for n in STAND_IN.values()] == ["dices-synthetic", "d3code-synthetic-binary",
                                                              "toxicity-synthetic-binary"]
    # only Toxicity has K = 1 cells, so only its v3 differs from version 2
    assert [v3.dataset(n) for n in STAND_IN.values()] == ["dices-synthetic", "d3code-synthetic",
                                                          "toxicity-synthetic-v3"]
    assert binary.dataset("dices350") == "dices350" and binary.dataset("ratings.csv") == "ratings.csv"
    assert Choices(averaging="macro").metrics == ("accuracy", "mae", "wins", "precision_macro",
                                                               "recall_macro", "f1_macro", "kl_div", "jsd")


@pytest.mark.parametrize("averaging", ["weighted", "macro", "micro"])
def test_select_keeps_one_averaging_under_the_papers_column_names(averaging):
    rows = pd.DataFrame({"metric": list(effect_sizes.ALL_AVERAGINGS), "delta": range(len(effect_sizes.ALL_AVERAGINGS))})
    chosen = effect_sizes.select(rows, averaging)
    assert list(chosen["metric"]) == ["accuracy", "mae", "wins", "precision", "recall", "f1", "kl_div", "jsd"]
    names = dict(zip(rows["delta"], rows["metric"]))
    assert [names[d] for d in chosen["delta"]] == list(Choices(averaging=averaging).metrics)


def test_one_simulation_serves_every_averaging_and_micro_recall_is_accuracy():
    cells = effect_sizes.paper_cells(which=("table1",))
    cells = cells[(cells["dataset"] == "Toxicity") & (cells["sampler"] == "S2") & (cells["K"] == 1)]
    found = effect_sizes.simulate(cells, seeds=[0], n_samples=20, metrics=effect_sizes.ALL_AVERAGINGS,
                                  use_cache=False)
    micro = effect_sizes.select(found, "micro").set_index(["NK", "metric"])["delta"]
    assert micro.loc[(500, "recall")] == micro.loc[(500, "accuracy")] == micro.loc[(500, "f1")]
    weighted = effect_sizes.select(found, "weighted").set_index(["NK", "metric"])["delta"]
    assert weighted.loc[(500, "recall")] == weighted.loc[(500, "accuracy")]  # weighted recall is accuracy too
    assert effect_sizes.select(found, "macro").set_index(["NK", "metric"])["delta"].loc[(500, "kl_div")] == \
        weighted.loc[(500, "kl_div")]  # the same replicates


def test_rq2_and_the_why_chapter_count_the_same_cells_for_the_same_choices():
    """RQ2 simulates only its averaging's metrics, the why-chapter every averaging at once: the numbers, and so the
    counts the two pages print for the book's choices, are the same."""
    from analysis.book.chapter import Setup
    from analysis.paper import why

    book = Choices(averaging="macro", smoothing=1e-9, granularity="binary", perturbation="one-label")
    setup = Setup("rq2", ["toxicity-synthetic"], epsilon=0.3, budgets=[500], ks=[1], n_jobs=1,
                  **{k: getattr(book, k) for k in ("averaging", "smoothing", "granularity", "perturbation")})
    rq2 = setup.effect_sizes([0, 1], 30, 0.2)
    cells = effect_sizes.paper_cells(appendix_epsilon=0.2)
    cells = cells[cells["dataset"] == "Toxicity"]
    found = effect_sizes.simulate(cells, seeds=[0, 1], n_samples=30, choices=book,
                                  data={"Toxicity": book.dataset("toxicity-synthetic")},
                                  metrics=effect_sizes.ALL_AVERAGINGS)
    ours = effect_sizes.effect_sizes(cells, effect_sizes.select(found, book.averaging))
    key = ["table", "sampler", "metric", "seed"]
    assert rq2.sort_values(key)["delta"].to_list() == ours.sort_values(key)["delta"].to_list()
    counted = effect_sizes.summary(rq2).query("by == 'all'").set_index("table")
    for which in ("table1", "appendix"):
        median, low, high = why.count_values(ours, which)
        assert (counted.loc[which, "median"], counted.loc[which, "min"], counted.loc[which, "max"]) == \
            (median, low, high)


def test_the_cells_table_marks_each_printed_cell_by_its_median_ratio():
    cells = es.paper_cells(["table1"]).head(3)
    rows = [cells.assign(seed=seed, delta=cells["paper_delta"] * factor, ratio=factor)
            for seed, factor in ((0, 1.0), (1, 1.1), (2, 2.0))]
    shown = es.cells_table(pd.concat(rows, ignore_index=True))
    texts = [v for v in shown.frame.drop(columns="run").to_numpy().ravel() if v != "–"]
    assert len(texts) == 3 and all(t.endswith("✓") for t in texts)  # median ratio 1.1
    far = es.cells_table(pd.concat([r.assign(ratio=r["ratio"] * 2) for r in rows], ignore_index=True))
    assert all(t.endswith("×2.20") for t in far.frame.drop(columns="run").to_numpy().ravel() if t != "–")


def test_a_ratio_just_outside_the_factor_never_prints_as_the_factor():
    """The cell-by-cell tables mark a ratio outside ×1.25 with the ratio; rounded to ×1.25 it would read as inside."""
    assert effect_sizes.ratio_mark(1.2504) == "×1.2504" and effect_sizes.ratio_mark(1.25) == "✓"
    assert effect_sizes.ratio_mark(0.7999) == "×0.7999" and effect_sizes.ratio_mark(1.4) == "×1.40"
    assert effect_sizes.ratio_mark(1.0) == "✓" and effect_sizes.ratio_mark(0.8) == "✓"


def test_a_cell_prints_our_delta_with_the_digits_that_show_its_side_of_the_factor():
    """0.0713 against the paper's 0.057 is ×1.251, outside ×1.25; printed as 0.071 it would read as ×1.246, inside:
    the cell prints our Δ with a fourth decimal, and a cell whose three decimals already show the side keeps three."""
    outside = effect_sizes.cell_text(0.0713, 0.057, 0.0713 / 0.057)
    ours = float(outside.split(" vs ")[0])
    assert outside.startswith("0.0713 vs 0.057 ×") and ours / 0.057 > es.FACTOR
    assert effect_sizes.cell_text(0.080, 0.057, 0.080 / 0.057) == "0.080 vs 0.057 ×1.40"
    assert effect_sizes.cell_text(0.060, 0.057, 0.060 / 0.057) == "0.060 vs 0.057 ✓"
    for ours, paper in ((0.0705, 0.0564), (0.0451, 0.0564), (-0.0713, -0.057)):  # at the edges, either sign
        shown = effect_sizes.cell_text(ours, paper, ours / paper)
        printed = float(shown.split(" vs ")[0]) / paper
        assert (1 / es.FACTOR <= printed <= es.FACTOR) == shown.endswith("✓"), shown


def test_a_ratio_prints_with_the_digits_that_show_its_side_of_the_factor():
    assert effect_sizes.ratio_text(1.2503) == "1.2503" and float(effect_sizes.ratio_text(1.2503)) > es.FACTOR
    assert effect_sizes.ratio_text(1.2497) == "1.25"  # inside, and 1.25 is inside too
    assert effect_sizes.ratio_text(1 / 1.2503) == "0.7998" and effect_sizes.ratio_text(1.31) == "1.31"
