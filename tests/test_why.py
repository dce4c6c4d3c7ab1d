"""Why Table 1 differs: the agreement rules per cell, the identities' combined choices, counts over seeds, and
which switch explains which departure.

Results tables are built so that the Table 1 rule returns chosen (budget, K) per cell: p = 0.01 at the chosen cell,
0.5 everywhere else; the comparison frames of :func:`why.cells` are hand-made with known ratios per seed.
"""

import dataclasses

import numpy as np
import pandas as pd
import pytest

from analysis.paper import effect_sizes, identities, tables, why
from analysis.experiment.choices import BOOK, Choices
from analysis.experiment.grid import PAPER_BUDGETS, PAPER_KS

STAND_IN = {"DICES": "dices-synthetic", "D3code": "d3code-synthetic", "Toxicity": "toxicity-synthetic"}


def results_with(chosen: dict, suffix: str = "", which: str = "table1") -> pd.DataFrame:
    """A results table whose Table 1 gives, per paper cell (dataset, sampler, metric), the (NK, K) of ``chosen``
    (None: no budget significant), and the paper's own (NK, K) for every other cell."""
    rows = []
    for cell in tables.paper_table(which).itertuples():
        nk, k = chosen.get((cell.dataset, cell.sampler, cell.metric),
                           (None, None) if pd.isna(cell.NK) else (int(cell.NK), int(cell.K)))
        for budget in PAPER_BUDGETS:
            for kk in PAPER_KS:
                rows.append({"dataset": STAND_IN[cell.dataset] + suffix, "sampler": cell.sampler, "epsilon": 0.3,
                             "metric": cell.metric, "NK": budget, "K": kk, "delta": 0.1,
                             "p_value": 0.01 if (budget, kk) == (nk, k) else 0.5})
    return pd.DataFrame(rows)


def test_the_papers_own_table_agrees_in_every_cell():
    cells = effect_sizes.agreement(results_with({}))
    assert len(cells) == 40 and cells["k_class"].all() and cells["budget"].all()
    assert cells["comparable"].sum() == 39  # DICES S1 precision: no budget in the paper


def test_the_appendix_is_compared_with_the_appendix():
    cells = effect_sizes.agreement(results_with({}, which="appendix"), which="appendix")
    assert len(cells) == 40 and cells["k_class"].all() and cells["budget"].all()
    assert not effect_sizes.agreement(results_with({}, which="appendix"), which="table1")["budget"].all()


@pytest.mark.parametrize("nk, k, k_class, budget", [
    (2500, 40, True, True),    # one budget step below 5000, same class
    (1000, 40, True, False),   # two steps below
    (10000, 20, True, True),   # one step above; K 20 is "many" as is the paper's 40
    (5000, 10, False, True),   # K 10 is "few"
    (None, None, False, False),  # never significant, where the paper is
])
def test_each_rule_on_one_cell(nk, k, k_class, budget):
    cells = effect_sizes.agreement(results_with({("DICES", "S2", "accuracy"): (nk, k)})).set_index(
        ["dataset", "sampler", "metric"])
    row = cells.loc[("DICES", "S2", "accuracy")]
    assert (row["k_class"], row["budget"]) == (k_class, budget)
    assert cells[["k_class", "budget"]].drop(("DICES", "S2", "accuracy")).all().all()


def test_every_variant_of_a_stand_in_is_compared_with_the_paper_dataset_it_imitates():
    for name, paper in (("dices-synthetic-v1", "DICES"), ("toxicity-synthetic-binary", "Toxicity"),
                        ("d3code-synthetic-v3", "D3code"), ("my-file", None), ("dices-synthetic-5raters", None)):
        assert effect_sizes.paper_dataset(name) == paper
    assert len(effect_sizes.agreement(results_with({}, suffix="-binary"))) == 40 - 16  # DICES has no binary variant


# ------------------------------------------------------------------------------------------ the identities

def _inference(answer) -> identities.Inference:
    return identities.Inference("q", answer, pd.DataFrame(), "")


@pytest.mark.parametrize("recall, f1, averaging", [("not weighted", "not micro", "macro"),
                                                   ("consistent with weighted", "not micro", "weighted"),
                                                   ("no evidence", "no evidence", "weighted")])
def test_inferred_takes_the_one_averaging_no_identity_rules_out(recall, f1, averaging):
    found = why.inferred(_inference({"s": 1e-9, "base": "e"}), _inference({"recall": recall, "f1": f1}),
                         _inference({"Toxicity": "binary"}))
    assert found == Choices(averaging=averaging, smoothing=1e-9, granularity="binary", perturbation="one-label")


def test_inferred_leaves_a_switch_no_identity_pins_at_the_baseline():
    found = why.inferred(_inference({"s": 1e-9, "base": "2"}), _inference({}), _inference({"Toxicity": None}))
    assert found == Choices(perturbation=BOOK.perturbation)
    found = why.inferred(_inference(None), _inference({}), _inference({"Toxicity": "binary", "D3code": "levels"}))
    assert found == Choices(perturbation=BOOK.perturbation)


def test_the_papers_identities_infer_the_books_declared_choices():
    """The one declaration of the book's choices (what every chapter runs by default) is what the paper's own
    cells infer: macro averaging, s = 1e-9, binary labels, and the one-label noise law."""
    found = why.inferred(identities.kl_smoothing(), identities.averaging(), identities.granularity())
    assert found == BOOK == Choices(averaging="macro", smoothing=1e-9, granularity="binary", perturbation="one-label")


def test_each_alternative_changes_one_choice_of_the_books_and_the_reference_changes_them_all():
    found = why.alternatives(BOOK)
    assert found[why.BASELINE] == BOOK and found[why.REFERENCE] == Choices()
    for name, choices in found.items():
        changed = [f for f in why.VALUES if getattr(choices, f) != getattr(BOOK, f)]
        assert name in (why.BASELINE, why.REFERENCE) or len(changed) == 1, name
    # every other value of every switch, once: 3 averagings, 1 smoothing, 3 noise laws, 1 granularity, 1 version,
    # 2 DICES label sets, 1 null mixing
    assert len(found) == 2 + 3 + 1 + 3 + 1 + 1 + 2 + 1
    assert found["DICES's Unsure merged into Yes"].dataset("dices-synthetic") == "dices-synthetic-unsure-yes"
    by_switch = why.choices_by_switch(BOOK)
    assert by_switch["noise law"] == (why.BASELINE, "Dirichlet(1/C) noise", "uniform noise, response by response",
                                      "noise centred on the label shares")
    assert by_switch["averaging"] == (why.BASELINE, "weighted averaging", "micro averaging", "macro over all labels")


def test_the_alternatives_cover_every_allowed_value_of_every_switch():
    """A value added to a switch (a new noise law, say) joins the why page's comparison, or this test fails."""
    from analysis.engine.metrics import AVERAGINGS, SMOOTHINGS
    from analysis.engine.rule import PERTURBATIONS
    from analysis.engine.split import NULL_MIXINGS
    from analysis.experiment.choices import DICES_LABELS, GRANULARITIES, STAND_IN_VERSIONS

    allowed = {"averaging": AVERAGINGS, "smoothing": SMOOTHINGS, "perturbation": PERTURBATIONS,
               "granularity": GRANULARITIES, "stand_ins": STAND_IN_VERSIONS, "dices_labels": tuple(DICES_LABELS),
               "null_mixing": NULL_MIXINGS}
    assert set(allowed) == {f.name for f in dataclasses.fields(Choices)}
    for switch, values in allowed.items():
        assert set(why.VALUES[switch]) == set(values), switch


def test_averagings_share_one_simulation_and_other_switches_do_not():
    groups = why._groups(why.alternatives(BOOK))
    names = {tuple(v) for v in groups.values()}
    assert (why.BASELINE, "weighted averaging", "micro averaging", "macro over all labels") in names
    assert ("smoothing 1e-12",) in names and ("DICES's Unsure merged into No",) in names
    assert len(groups) == len(why.alternatives(BOOK)) - 3


# ------------------------------------------------------------------------------------------ counts

def cells_frame(ratios: dict, seeds=(0, 1, 2), rules=None) -> pd.DataFrame:
    """A :func:`why.cells` frame: per (table, dataset, sampler, metric), the ratio per seed (one value: every
    seed; a list: seed by seed); rules hold unless ``rules`` names (key, rule) -> per-seed booleans."""
    rows = []
    for key, ratio in ratios.items():
        for i, seed in enumerate(seeds):
            r = ratio[i] if isinstance(ratio, (list, tuple)) else ratio
            row = dict(zip(["table", "dataset", "sampler", "metric"], key), seed=seed, K=1, paper_delta=0.1,
                       delta=0.1 * r, ratio=r, within=1 / effect_sizes.FACTOR <= r <= effect_sizes.FACTOR)
            for rule in effect_sizes.RULES:
                row[rule] = (rules or {}).get((key, rule), [True] * len(seeds))[i]
            rows.append(row)
    return pd.DataFrame(rows)


A = ("table1", "DICES", "S2", "accuracy")
B = ("table1", "DICES", "S2", "mae")
C = ("appendix", "Toxicity", "S2", "jsd")


def test_counts_table_gives_median_and_range_over_seeds_per_table():
    frame = cells_frame({A: [1.0, 0.5, 1.1], B: 1.0, C: 2.0})
    table = why.counts_table({"x": frame}).set_index("table")
    assert table.loc["Table 1", effect_sizes.WITHIN] == "2 (1–2) of 2"
    assert table.loc["appendix", effect_sizes.WITHIN] == "0 (0–0) of 1"
    assert table.loc["Table 1", "best-K class"] == "2 (2–2) of 2"
    assert why.count_values(frame, "table1") == (2.0, 1, 2)


def test_a_switch_explains_a_departure_only_beyond_the_reseeded_spread():
    base = cells_frame({A: [0.5, 0.55, 0.6], B: [0.5, 0.7, 0.9], C: 2.0})
    moves = cells_frame({A: [1.0, 1.05, 0.95], B: [0.85, 1.0, 1.05], C: 2.0})
    departed = why.departures({why.BASELINE: base, "switch": moves}).set_index(["run", "metric"])
    assert departed.loc[("DICES S2", "Accuracy"), "cause"] == "switch"
    assert departed.loc[("DICES S2", "Accuracy"), "under the cause"] == "1.00 (0.95–1.05)"
    both = why.departures({why.BASELINE: base, "switch": moves, "other": moves}).set_index(["run", "metric"])
    assert both.loc[("DICES S2", "Accuracy"), "under the cause"] == "switch: 1.00 (0.95–1.05); other: 1.00 (0.95–1.05)"
    assert departed.loc[("DICES S2", "MAE"), "cause"] == "unexplained"  # the baseline reaches 0.9 in one seed
    assert departed.loc[("Toxicity S2", "JSD"), "cause"] == "unexplained"
    assert departed.loc[("Toxicity S2", "JSD"), "baseline"] == "2.00 (2.00–2.00)"
    assert set(departed["departs"]) == {"Δ"}


def test_a_rule_departure_is_explained_when_it_holds_in_every_seed_under_the_switch():
    fails = {(A, "k_class"): [False] * 3, (B, "budget"): [False, False, True]}
    base = cells_frame({A: 1.0, B: 1.0}, rules=fails)
    moves = cells_frame({A: 1.0, B: 1.0})
    departed = why.departures({why.BASELINE: base, "switch": moves})
    assert list(zip(departed["metric"], departed["departs"], departed["cause"])) == [
        ("Accuracy", "best-K class", "switch"), ("MAE", "budget within one step", "unexplained")]
    assert departed.loc[0, "baseline"] == "fails in 3 of 3 seeds"


def test_causes_and_finding_count_what_each_switch_explains():
    base = cells_frame({A: 0.5, B: 0.5, C: 2.0})
    first = cells_frame({A: 1.0, B: 0.5, C: 2.0})
    both = cells_frame({A: 1.0, B: 1.0, C: 2.0})
    by_alternative = {why.BASELINE: base, "first": first, why.REFERENCE: both}
    departed = why.departures(by_alternative)
    causes = why.causes(departed).set_index(["cause", "table"])["departures"]
    assert causes[("first", "Table 1")] == 1 and causes[(why.REFERENCE, "Table 1")] == 2
    assert causes[("unexplained", "appendix")] == 1
    text = why.finding(by_alternative, departed, 0.2)
    assert text.startswith("Over 3 seeds, our Δ lies within ×1.25 of the paper's in 0 (0–0) of 2 Table 1 cells and "
                           "0 (0–0) of 1 appendix cells (ε = 0.2)")
    assert "(ε = 0.2) under the book's choices, and in 2 (2–2) of 2 and 0 (0–0) of 1 under reference choices" in text
    assert "Of the 3 Δ departures under the book's choices, 2 move" in text and "first 1; reference choices 2" in text
    assert "1 stay unexplained: Toxicity S2 1 (ratio 2.00)" in text


def test_fitted_and_predicted_cells_are_counted_apart():
    frame = cells_frame({A: 1.0, B: 2.0, C: 1.0})
    fitted = pd.DataFrame([A], columns=["table", "dataset", "sampler", "metric"])
    apart = why.fitted_apart({"x": frame}, fitted)
    x = apart.set_index("table")
    assert x.loc["Table 1", "fitted cells"] == "1 (1–1) of 1"
    assert x.loc["Table 1", "predicted cells"] == "0 (0–0) of 1"
    assert x.loc["appendix", "fitted cells"] == "none" and x.loc["appendix", "predicted cells"] == "1 (1–1) of 1"
    per_seed = why.predicted_per_seed({"x": frame}, fitted)
    assert list(per_seed["predicted"]) == [1, 1, 1]  # C alone: A is fitted, B departs


def test_another_value_replaces_the_default_only_beyond_the_reseeded_spread():
    fitted = pd.DataFrame([A], columns=["table", "dataset", "sampler", "metric"])
    default = cells_frame({A: 1.0, B: [2.0, 1.0, 2.0], C: 2.0})  # predicted: 0, 1, 0
    overlaps = cells_frame({A: 2.0, B: 1.0, C: [1.0, 1.0, 2.0]})  # 2, 2, 1: its least equals the default's most
    clear = cells_frame({A: 2.0, B: 1.0, C: 1.0})  # 2, 2, 2
    per_seed = why.predicted_per_seed({"d": default, "o": overlaps, "c": clear}, fitted)
    assert why.best_on_predicted(per_seed, ["d", "o"]) == "d"
    assert why.best_on_predicted(per_seed, ["d", "o", "c"]) == "c"
    assert why.best_on_predicted(per_seed, ["c", "d"]) == "c"  # a default is never replaced by a worse value


def test_counts_sentence_names_each_alternatives_count_in_both_tables():
    counts = why.counts_table({"x": cells_frame({A: 1.0, C: 2.0}), "y": cells_frame({A: 2.0, C: 1.0})})
    assert why.counts_sentence(counts) == ("Cells with Δ within ×1.25 of the paper's, median (min–max) over seeds: "
                                           "x 1 (1–1) of 1 in Table 1 and 0 (0–0) of 1 in the appendix; "
                                           "y 0 (0–0) of 1 in Table 1 and 1 (1–1) of 1 in the appendix.")
    named = why.counts_sentence(counts, ["y", "z"])  # those asked for, in their order; z was not run
    assert named.endswith(": y 0 (0–0) of 1 in Table 1 and 1 (1–1) of 1 in the appendix.") and "x 1" not in named


def test_the_definition_alternatives_change_the_averaging_or_the_smoothing_alone():
    chosen = why.definition_alternatives(BOOK)
    assert chosen[0] == why.BASELINE and why.REFERENCE not in chosen  # the reference changes the noise law too
    by_switch = why.choices_by_switch(BOOK)
    assert set(chosen[1:]) == set(by_switch["averaging"][1:]) | set(by_switch["smoothing"][1:])
    assert not set(chosen) & set(by_switch["noise law"][1:])


def test_a_grid_is_settled_once_every_metric_is_significant_at_every_epsilon():
    rows = pd.DataFrame({"epsilon": [0.3, 0.3, 0.3, 0.2, 0.2], "metric": ["a", "a", "b", "a", "b"],
                         "K": [1, 4, 1, 1, 1], "p_value": [0.5, 0.01, 0.04, 0.01, 0.01]})
    assert why.settled(rows, [0.3, 0.2])
    assert not why.settled(rows.assign(p_value=[0.5, 0.01, 0.05, 0.01, 0.01]), [0.3, 0.2])  # b at 0.3: p = 0.05
    assert not why.settled(rows, [0.3, 0.2, 0.1])  # nothing at 0.1


def test_preferred_sentence_names_each_switchs_value_with_its_spread():
    frames = {why.BASELINE: cells_frame({A: 2.0, B: 1.0}), "weighted averaging": cells_frame({A: 1.0, B: 1.0}),
              "micro averaging": cells_frame({A: 2.0, B: 2.0}), "macro over all labels": cells_frame({A: 2.0, B: 2.0}),
              "noise centred on the label shares": cells_frame({A: 2.0, B: [1.0, 1.0, 2.0]}),
              "Dirichlet(1/C) noise": cells_frame({A: 2.0, B: 2.0}),
              "uniform noise, response by response": cells_frame({A: 2.0, B: 2.0})}
    fitted = pd.DataFrame([A], columns=["table", "dataset", "sampler", "metric"])
    per_seed = why.predicted_per_seed(frames, fitted)
    table = why.preferred_table(per_seed, BOOK).set_index(["choice", "value"])
    # A is fitted, so only B counts: weighted and the book's tie at 1 in every seed, so the book's is kept, unticked
    assert table.loc[("averaging", "macro averaging (the book's)")].to_list() == ["1 (1–1)", "kept"]
    assert table.loc[("averaging", "weighted averaging")].to_list() == ["1 (1–1)", ""]
    assert table.loc[("averaging", "micro averaging")].to_list() == ["0 (0–0)", ""]
    assert set(table.index.get_level_values("choice")) == {"averaging", "noise law"}  # the others were not run
    assert why.preferred_sentence(per_seed, BOOK) == ("On the predicted cells, no other value beats the book's "
                                                      "beyond the reseeded spread for averaging or noise law.")
    better = {**frames, "weighted averaging": cells_frame({A: 2.0, B: 1.0, C: 1.0})}  # 2 against the book's 1
    better[why.BASELINE] = cells_frame({A: 2.0, B: 1.0, C: 2.0})
    assert "Another value beats the book's for: averaging, weighted averaging." in why.preferred_sentence(
        why.predicted_per_seed(better, fitted), BOOK)
    ticked = why.preferred_table(why.predicted_per_seed(better, fitted), BOOK).set_index(["choice", "value"])
    assert ticked.loc[("averaging", "weighted averaging"), "favoured"] == "✓"  # 2 in every seed against 1 or 0
    alone = {**frames, "weighted averaging": cells_frame({A: 2.0, B: 2.0})}  # now only the book's reproduces B
    clear = why.preferred_table(why.predicted_per_seed(alone, fitted), BOOK).set_index(["choice", "value"])
    assert clear.loc[("averaging", "macro averaging (the book's)"), "favoured"] == "✓"


@pytest.mark.slow
def test_the_groups_in_workers_give_what_one_process_gives(tmp_path, monkeypatch):
    """Two groups of alternatives (two noise laws) and two seeds, simulated in two worker processes and in this
    process, each into an empty cell cache of its own: the same tables, alternative by alternative and seed by seed."""
    chosen = {why.BASELINE: BOOK, "Dirichlet(1/C) noise": dataclasses.replace(BOOK, perturbation="dirichlet")}
    runs = {}
    for n_jobs in (1, 2):
        monkeypatch.setenv("ANALYSIS_CACHE_DIR", str(tmp_path / f"cache{n_jobs}"))
        runs[n_jobs] = why.simulate(chosen, [100], [1, 5], [0.3], [0, 1], 10, 0.2, cell_samples=5, n_jobs=n_jobs)
    assert list(runs[1]) == list(runs[2]) == list(chosen)
    for name in chosen:
        assert list(runs[1][name]) == list(runs[2][name]) == [0, 1]
        for seed in (0, 1):
            pd.testing.assert_frame_equal(runs[1][name][seed], runs[2][name][seed])


def test_the_fitted_cells_table_names_the_papers_tables_and_the_metrics_as_the_page_does():
    fitted = identities.v3_cells()
    shown = why.fitted_table(fitted).frame
    assert set(shown["table"]) <= {"Table 1", "appendix"} and "Table 1" in set(shown["table"])
    assert set(shown["metric"]) <= {"Accuracy", "KL-Div"} and len(shown) == len(fitted)
    assert list(shown.columns) == ["table", "dataset", "sampler", "metric", "NK", "C", "E[Σ p̂²]"]


def test_the_nulls_readings_have_one_name_on_every_page():
    """The why page's switch values and its table of the null's readings word each reading alike."""
    from analysis.paper import crossings

    for reading, words in why.VALUES["null_mixing"].items():
        assert words == f"the null's columns: {crossings.MIXING_WORDS[reading]}"
    assert crossings.mixing_words("half") == "a uniform half (the book's)"
