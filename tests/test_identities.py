"""The identities of METHOD section 12: each recovers a known answer from a hand-made table, and reads the paper's.

Hand-made tables print three decimals, as the paper's do, so every inference has to survive the rounding.
"""

import math

import numpy as np
import pandas as pd
import pytest

from analysis.data import datasets
from analysis.engine import metrics
from analysis.engine.metrics import METRIC_LABELS
from analysis.experiment import grid
from analysis.paper import identities
from analysis.data.annotations import from_table
from analysis.experiment.choices import BOOK


def cells(*rows, table="table1"):
    """A table of the paper's layout from (dataset, sampler, metric, NK, K, p, delta) tuples."""
    frame = pd.DataFrame(rows, columns=["dataset", "sampler", "metric", "NK", "K", "p_value", "delta"])
    return frame.assign(table=table)


# --------------------------------------------------------------------------------------------- KL smoothing

@pytest.mark.parametrize("s, base", identities.SMOOTHINGS)
def test_kl_smoothing_recovers_the_constant_and_base_a_table_was_made_with(s, base):
    acc = 0.061
    kl = round(acc * (math.log(1 / s) if base == "e" else math.log2(1 / s)), 3)
    found = identities.kl_smoothing(cells(("X", "S2", "accuracy", 500, 1, 0.03, acc),
                                          ("X", "S2", "kl_div", 500, 1, 0.03, kl)))
    assert found.answer == {"s": s, "base": base}
    assert found.fits.set_index(["s", "base"]).loc[(s, base), "cells within rounding"] == 1
    assert f"{kl:.3f} / {acc:.3f}" in found.explanation


def data_moment(ds, positive=None) -> float:
    """``E[Σ_c p̂_c²]`` of a dataset's empirical per-item laws (what S2 resamples), over items; with ``positive``,
    of the binary split of those labels against the rest."""
    counts = ds.item_label_counts.astype(float)
    if positive is not None:
        mask = np.isin(np.asarray(ds.label_names, dtype=object), list(positive))
        counts = np.stack([counts[:, ~mask].sum(axis=1), counts[:, mask].sum(axis=1)], axis=1)
    laws = counts / counts.sum(axis=1, keepdims=True)
    return float(np.square(laws).sum(axis=1).mean())


def test_kl_smoothing_pairs_only_cells_of_one_run_at_the_same_budget_and_k_1():
    table = cells(("X", "S2", "accuracy", 500, 1, 0.03, 0.061), ("X", "S2", "kl_div", 1000, 1, 0.03, 1.268),
                  ("X", "S3", "kl_div", 500, 1, 0.03, 1.268), ("Y", "S2", "kl_div", 500, 1, 0.03, 1.268),
                  ("X", "S2", "accuracy", 500, 2, 0.03, 0.061), ("X", "S2", "kl_div", 500, 2, 0.03, 1.268))
    found = identities.kl_smoothing(table)
    assert found.answer is None and "No run" in found.explanation


def test_our_engines_k_1_cells_obey_the_kl_identity_with_its_own_smoothing():
    # one-hot laws smoothed by s: KL = ln(1 + 1/s) / (1 + C s) where the labels differ, 0 where they agree
    ds = datasets.load("toxicity-synthetic")
    cell = grid.run(ds, "S2", budgets=[500], ks=[1], epsilons=[0.3], n_samples=50, use_cache=False,
                    progress=False).set_index("metric")["delta"]
    s = BOOK.smoothing  # the grid's default
    exact = math.log(1 + 1 / s) / (1 + ds.n_labels * s)
    assert cell["kl_div"] / cell["accuracy"] == pytest.approx(exact, rel=1e-6)
    table = cells(("X", "S2", "accuracy", 500, 1, 0.03, round(cell["accuracy"], 3)),
                  ("X", "S2", "kl_div", 500, 1, 0.03, round(cell["kl_div"], 3)))
    assert identities.kl_smoothing(table).answer == {"s": s, "base": "e"}


def test_the_papers_toxicity_row_puts_the_kl_smoothing_at_1e_9_with_the_natural_log():
    found = identities.kl_smoothing()
    assert found.answer == {"s": 1e-9, "base": "e"}
    assert list(zip(found.evidence["dataset"], found.evidence["sampler"], found.evidence["NK"])) == [
        ("Toxicity", "S2", 500)]
    row = found.evidence.iloc[0]
    assert row["low"] < math.log(1e9) < row["high"] and not row["low"] < math.log(1e12) < row["high"]


# --------------------------------------------------------------------------------------------- appendix ε

def engine_like(pairs, law):
    """Our Δ at the cells :func:`identities.epsilon_cells` lists, from a known law of ε per metric."""
    out = identities.epsilon_cells(pairs)
    return out.assign(delta=[law[m](e) for m, e in zip(out["metric"], out["epsilon"])])


LAWS = {"accuracy": lambda e: 0.2 * e, "mae": lambda e: 0.1 * e ** 1.5, "wins": lambda e: math.sqrt(e)}


@pytest.mark.parametrize("appendix", [0.1, 0.2, 0.4])
def test_appendix_epsilon_recovers_the_epsilon_a_table_was_made_with(appendix):
    rows = [(("X", "S2", m, 1000, 5, 0.01, round(f(0.3), 3)), ("X", "S2", m, 2500, 5, 0.02, round(f(appendix), 3)))
            for m, f in LAWS.items()]
    table = pd.concat([cells(*[t for t, _ in rows]), cells(*[a for _, a in rows], table="appendix")])
    pairs = identities.appendix_pairs(table)
    found = identities.appendix_epsilon(engine_like(pairs, LAWS), table)
    assert found.answer == appendix
    assert (found.evidence["closest"] == appendix).all()
    assert found.fits.set_index("epsilon").loc[appendix, "cells closest"] == 3


def test_the_epsilon_sentence_gives_the_ranges_it_computed_with_the_cells_at_their_ends():
    rows = [(("X", "S2", m, 1000, 5, 0.01, round(f(0.3), 3)), ("X", "S2", m, 2500, 5, 0.02, round(f(0.2), 3)))
            for m, f in LAWS.items()]
    table = pd.concat([cells(*[t for t, _ in rows]), cells(*[a for _, a in rows], table="appendix")])
    found = identities.appendix_epsilon(engine_like(identities.appendix_pairs(table), LAWS), table)
    text = identities.epsilon_sentence(found)
    paper = found.evidence.set_index("metric")["paper_ratio"]
    ours = found.evidence.set_index("metric")["ours at 0.2"]
    assert text.startswith("ε = 0.2 is the closest candidate in 3 of 3 pairs")
    assert (f"from {paper.min():.2f} (X S2 {METRIC_LABELS[paper.idxmin()]}) to {paper.max():.2f} "
            f"(X S2 {METRIC_LABELS[paper.idxmax()]}) in the paper's pairs") in text
    assert f"Δ(0.3) / Δ(0.2), from {ours.min():.2f}" in text and f"to {ours.max():.2f}" in text
    assert paper.min() < paper.max()  # the ranges are ranges, not one number
    assert identities.epsilon_sentence(identities.Inference("q", None, pd.DataFrame(), "")) == \
        "no pair of cells could be read"


def test_appendix_pairs_need_the_same_k_unless_told_otherwise():
    table = pd.concat([cells(("X", "S2", "mae", 500, 9, 0.01, 0.076)),
                       cells(("X", "S2", "mae", 1000, 8, 0.01, 0.043), table="appendix")])
    assert identities.appendix_pairs(table).empty
    assert len(identities.appendix_pairs(table, max_k_ratio=1.2)) == 1


def test_a_pair_without_our_delta_is_left_unused():
    table = pd.concat([cells(("X", "S2", "accuracy", 500, 1, 0.01, 0.06)),
                       cells(("X", "S2", "accuracy", 500, 1, 0.01, 0.04), table="appendix")])
    found = identities.appendix_epsilon(pd.DataFrame(columns=["dataset", "sampler", "metric", "epsilon", "NK", "K",
                                                              "delta"]), table)
    assert found.answer is None and found.evidence["closest"].isna().all()


def test_the_papers_k_1_accuracy_cells_put_the_appendix_at_0_2():
    # Under S2 and S3 at K = 1 accuracy's Δ is exactly linear in ε (agreement_moment's identity), so an engine
    # law proportional to ε is exact there: Δ(0.3) / Δ(e) = 0.3 / e.
    pairs = identities.appendix_pairs()
    pairs = pairs[(pairs["metric"] == "accuracy") & (pairs["K_table1"] == 1)]
    assert set(zip(pairs["dataset"], pairs["sampler"])) == {("Toxicity", "S2"), ("Toxicity", "S3")}
    found = identities.appendix_epsilon(engine_like(pairs, {"accuracy": lambda e: 0.2 * e}))
    assert found.answer == 0.2


# --------------------------------------------------------------------------------------------- averaging

def test_recall_equal_to_accuracy_in_delta_and_p_is_consistent_with_weighting():
    found = identities.averaging(cells(("X", "S2", "accuracy", 1000, 5, 0.020, 0.100),
                                       ("X", "S2", "recall", 1000, 5, 0.020, 0.100),
                                       ("X", "S2", "f1", 1000, 5, 0.020, 0.120)))
    assert found.answer == {"recall": "consistent with weighted", "f1": "not micro"}


def test_a_p_value_that_differs_at_the_same_cell_rules_weighting_out():
    found = identities.averaging(cells(("X", "S2", "accuracy", 1000, 1, 0.035, 0.061),
                                       ("X", "S2", "recall", 1000, 1, 0.028, 0.061)))
    assert found.answer["recall"] == "not weighted" and found.answer["f1"] == "no evidence"
    assert found.evidence["p_differs"].tolist() == [True] and found.evidence["differs"].tolist() == [False]


@pytest.mark.parametrize("recall, verdict", [(0.103, "consistent with weighted"), (0.115, "not weighted")])
def test_at_another_budget_the_tolerance_holds_the_monte_carlo_error(recall, verdict):
    # 400 items against 200, 1000 replicates each: 0.001 + 3 sqrt(1/400000 + 1/200000) = 0.0092
    found = identities.averaging(cells(("X", "S2", "accuracy", 1000, 5, 0.02, 0.100),
                                       ("X", "S2", "recall", 2000, 5, 0.01, recall),
                                       ("X", "S2", "recall", 2000, 4, 0.01, 0.5)))  # another K: not compared
    assert found.answer["recall"] == verdict
    assert found.evidence["tolerance"].iloc[0] == pytest.approx(0.001 + 3 * math.sqrt(1 / 400_000 + 1 / 200_000))


def test_the_papers_recall_is_not_weighted_and_its_f1_not_micro():
    found = identities.averaging()
    assert found.answer == {"recall": "not weighted", "f1": "not micro"}
    ev = found.evidence.set_index(["table", "dataset", "sampler", "metric"])
    # DICES: recall far above accuracy at K 40; Toxicity at K 1: the same Δ, different p
    assert ev.loc[("table1", "DICES", "S1", "recall"), "differs"]
    toxicity = ev.loc[("table1", "Toxicity", "S2", "recall")]
    assert not toxicity["differs"] and toxicity["p_differs"]


# --------------------------------------------------------------------------------------------- E[Σ p²]

def expected_delta(laws: np.ndarray, epsilon: float, law: str) -> float:
    """Accuracy Δ at K = 1 computed directly: P(A = G) − P(B = G) per item, with B's mean law under ``law``."""
    n_labels = laws.shape[1]
    shares = laws.mean(axis=0)
    noise = {"dirichlet": np.full_like(laws, 1 / n_labels), "centred": np.broadcast_to(shares, laws.shape),
             "uniform": (1 - laws) / (n_labels - 1)}[law]
    q = (1 - epsilon) * laws + epsilon * noise
    return float(((laws * laws).sum(axis=1) - (laws * q).sum(axis=1)).mean())


@pytest.mark.parametrize("law", identities.LAWS)
def test_sum_p_squared_inverts_the_k_1_accuracy_delta(law):
    laws = np.random.default_rng(3).dirichlet([0.7, 0.4, 1.5, 0.2], size=200)
    delta = expected_delta(laws, 0.3, law)
    found = identities.sum_p_squared(delta, 0.3, law, tuple(laws.mean(axis=0)))
    assert found == pytest.approx(float((laws ** 2).sum(axis=1).mean()), rel=1e-12)


@pytest.mark.parametrize("perturbation, law", [("dirichlet", "dirichlet"), ("uniform", "uniform")])
def test_our_engines_k_1_accuracy_delta_gives_back_the_datas_sum_p_squared(perturbation, law):
    ds = datasets.load("toxicity-synthetic")
    cell = grid.run(ds, "S2", budgets=[4000], ks=[1], epsilons=[0.3], metrics=["accuracy"], n_samples=300,
                    use_cache=False, progress=False, perturbation=perturbation).iloc[0]
    shares = tuple(ds.item_label_counts.sum(axis=0) / ds.n_ratings)
    found = identities.sum_p_squared(cell["delta"], 0.3, law, shares)
    # the standard error of the implied E[sum p^2]: that of delta / 0.3, times (C - 1) / C = 4 / 5 for the uniform rule
    se = cell["delta_sd"] / math.sqrt(300) / 0.3 * (4 / 5 if law == "uniform" else 1)
    assert abs(found - data_moment(ds)) < 4 * se


def test_agreement_moment_reads_each_k_1_cell_under_each_law_and_granularity():
    shares = {3: (0.5, 0.3, 0.2), 2: (0.8, 0.2)}
    table = pd.concat([cells(("X", "S2", "accuracy", 500, 1, 0.03, 0.080), ("X", "S2", "accuracy", 500, 2, 0.03, 0.5),
                             ("X", "S3", "accuracy", 500, 1, 0.03, 0.5), ("X", "S2", "kl_div", 500, 1, 0.03, 1.6)),
                       cells(("X", "S2", "accuracy", 500, 1, 0.03, 0.040), table="appendix")])
    found = identities.agreement_moment(table, shares={"X": shares}, multiples={"kl_div": 20.0})
    # Table 1 only (no appendix ε given): accuracy and KL (1.6 / 20 = 0.08), 2 granularities, 3 laws
    assert len(found.evidence) == 2 * 2 * 3 and set(found.evidence["table"]) == {"table1"}
    assert found.answer[("X", 3, "dirichlet")] == pytest.approx(0.08 / 0.3 + 1 / 3)
    assert found.answer[("X", 2, "centred")] == pytest.approx(0.08 / 0.3 + 0.68)
    with_appendix = identities.agreement_moment(table, appendix_epsilon=0.2, shares={"X": shares})
    assert with_appendix.answer[("X", 3, "dirichlet")] == pytest.approx((0.08 / 0.3 + 0.04 / 0.2) / 2 + 1 / 3)


def test_the_papers_k_1_accuracy_cells_are_all_toxicitys():
    found = identities.agreement_moment(appendix_epsilon=0.2)
    assert set(found.evidence["dataset"]) == {"Toxicity"} and set(found.evidence["C"]) == {5, 2}
    assert set(found.evidence["table"]) == {"table1", "appendix"} and found.evidence["possible"].all()


def test_label_shares_give_the_published_binary_split():
    assert identities.label_shares("DICES") == {3: (0.59, 0.10, 0.31)}
    assert identities.label_shares("D3code")[2] == pytest.approx((0.68, 0.32))
    assert identities.label_shares("Toxicity")[2] == pytest.approx((0.51, 0.49))


def test_data_moment_of_a_hand_made_table():
    table = pd.DataFrame({"item": [0, 0, 0, 0, 1, 1, 1, 1], "rater": [0, 1, 2, 3] * 2,
                          "label": ["a", "a", "b", "c", "a", "a", "a", "a"]})
    ds = from_table(table, label_order=("a", "b", "c"))
    # item 0: (1/2, 1/4, 1/4), sum of squares 0.375; item 1: (1, 0, 0), 1; binary a | b, c: 0.5 and 1
    assert data_moment(ds) == pytest.approx((0.375 + 1.0) / 2)
    assert data_moment(ds, positive=("b", "c")) == pytest.approx((0.5 + 1.0) / 2)


# --------------------------------------------------------------------------------------------- granularity, v3

@pytest.mark.parametrize("delta, answer", [(0.061, "binary"), (0.100, None), (0.020, None)])
def test_granularity_is_the_one_at_which_the_k_1_cells_are_reachable(delta, answer):
    """Toxicity at five ratings per item: at C labels E[Σ p²] = (5 (Δ / 0.3 + 1/C) − 1) / 4, reachable above
    Σ π² (0.331 at five labels, 0.500 at two): Δ 0.061 only at two, 0.100 at both, 0.020 at neither."""
    found = identities.granularity(cells(("Toxicity", "S2", "accuracy", 500, 1, 0.03, delta)))
    assert found.answer == {"Toxicity": answer}
    two = found.evidence.set_index("C").loc[2]
    assert two["sum_p2"] == pytest.approx((5 * (delta / 0.3 + 0.5) - 1) / 4)
    assert "E[Σ p²] = (5 × " in found.explanation


def test_the_papers_toxicity_needs_binary_labels_and_then_its_published_a0():
    found = identities.granularity()
    assert found.answer == {"Toxicity": "binary"}
    two = found.evidence.set_index("C").loc[2]
    assert two["cells"] == 3 and abs(two["a0"] / two["published_a0"] - 1) < 0.05  # 2.79 against 2.70


def test_v3_is_fitted_on_the_k_1_accuracy_and_kl_cells_alone():
    fitted = identities.v3_cells()
    assert set(fitted["stand_in"]) == {"toxicity-synthetic"} and set(fitted["metric"]) == {"accuracy", "kl_div"}
    assert set(map(tuple, fitted[["table", "NK"]].drop_duplicates().to_numpy())) == {("table1", 500),
                                                                                     ("appendix", 1000)}
    assert identities.v3_moments()[("toxicity-synthetic", 2)] == pytest.approx(
        fitted[fitted["C"] == 2]["sum_p2"].mean())
