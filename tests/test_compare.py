"""Comparing two real systems (METHOD section 10): a clear difference is found, the p-value is calibrated when A and
B are exchangeable, and bad outputs are refused with one line."""

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analysis.__main__ import main
from analysis.compare import compare, read_outputs, sentence
from analysis.data import from_table
from conftest import batched_table, crossed_table


@pytest.fixture(scope="module")
def small():
    return from_table(crossed_table(n_items=40, n_raters=8, n_labels=3, seed=3), name="small")


def votes(ds):
    return ds.item_label_counts.argmax(1)


def samples(ds, m, rng):
    """``m`` labels per item drawn from the item's rater shares."""
    cum = np.cumsum(ds.item_label_counts / ds.raters_per_item[:, None], axis=1)
    labels = (rng.random((ds.n_items, m, 1)) >= cum[:, None, :-1]).sum(-1)
    return pd.DataFrame({"item": np.repeat(ds.item_ids, m), "label": labels.ravel()})


def test_a_large_difference_is_found_under_every_sampler(small):
    rng = np.random.default_rng(0)
    truth = votes(small)
    a = pd.DataFrame({"item": small.item_ids, "label": truth})
    wrong = rng.random(small.n_items) < 0.8
    b = pd.DataFrame({"item": small.item_ids, "label": np.where(wrong, (truth + 1) % 3, truth)})
    for sampler in ("S1", "S2"):
        result = compare(small, a, b, sampler=sampler, n_samples=200, seed=1).set_index("metric")
        assert (result["score_a"] > result["score_b"]).loc[["accuracy", "f1"]].all()
        assert (result["delta"] > 0).all()
        assert (result["p_value"] < 0.05).all()
        assert (result["ci_low"] > 0).all(), result[["ci_low", "ci_high"]]


def test_p_is_uniform_when_a_and_b_are_exchangeable(small):
    """Over many seeds, A and B are two independent sets of five samples from the same label shares. For every
    metric the share of p <= 0.05 stays below 5 % plus three binomial standard errors (validity), and for the
    distribution metrics, whose p takes many values, the empirical law of p lies within the DKW band (level 0.001)
    of the uniform law, widened by the null's resolution 1 / n_samples."""
    n_seeds, n_samples = 120, 100
    ps = []
    for seed in range(n_seeds):
        rng = np.random.default_rng(seed + 100)
        ps.append(compare(small, samples(small, 5, rng), samples(small, 5, rng), sampler="S2",
                          n_samples=n_samples, seed=seed)["p_value"].to_numpy())
    ps = np.array(ps)
    metrics = list(compare(small, samples(small, 5, rng), samples(small, 5, rng), n_samples=2)["metric"])
    bound = 0.05 + 3 * np.sqrt(0.05 * 0.95 / n_seeds)
    for m, metric in enumerate(metrics):
        assert (ps[:, m] <= 0.05).mean() <= bound, metric
    band = np.sqrt(np.log(2 / 0.001) / (2 * n_seeds)) + 1 / n_samples
    for metric in ("mae", "kl_div", "jsd"):
        distance = stats.kstest(ps[:, metrics.index(metric)], "uniform").statistic
        assert distance <= band, (metric, distance, band)


def test_the_three_output_forms_agree(small):
    """One label, several copies of that label, and a probability of 1 on it are the same system."""
    labels = votes(small)
    one = pd.DataFrame({"item": small.item_ids, "label": labels})
    copies = pd.concat([one, one], ignore_index=True)
    probs = pd.DataFrame({"item": small.item_ids, **{f"p_{c}": (labels == c).astype(float) for c in range(3)}})
    other = pd.DataFrame({"item": small.item_ids, "label": (labels + 1) % 3})
    results = [compare(small, a, other, n_samples=50, seed=2).drop(columns="signature") for a in (one, copies, probs)]
    for result in results[1:]:
        pd.testing.assert_frame_equal(result, results[0])
    assert [read_outputs(small, x).form for x in (one, copies, probs)] == ["label", "samples", "probabilities"]


def test_unanswered_items_are_dropped_from_both_and_reported(small):
    a = pd.DataFrame({"item": small.item_ids, "label": votes(small)})
    b = a.assign(label=a["label"].astype(float))
    b.loc[:2, "label"] = np.nan
    result = compare(small, a, b, n_samples=20)
    assert result["items"].iloc[0] == small.n_items - 3
    assert result.attrs["left_out"] == [str(v) for v in small.item_ids[:3]]


def test_same_seed_same_result_and_the_signature_says_how(small):
    a = pd.DataFrame({"item": small.item_ids, "label": votes(small)})
    b = samples(small, 3, np.random.default_rng(5))
    first, again = compare(small, a, b, n_samples=50, seed=4), compare(small, a, b, n_samples=50, seed=4)
    pd.testing.assert_frame_equal(first, again)
    signature = first["signature"].iloc[0]
    for part in ("sampler:S1", "K:8", "reps:50", "seed:4", f"data:{small.sha256[:12]}"):
        assert part in signature
    assert signature in sentence(first) and "Accuracy" in sentence(first)


@pytest.fixture
def files(tmp_path, small):
    frame = small.to_frame()
    frame.to_csv(tmp_path / "ratings.csv", index=False)
    a = pd.DataFrame({"item": small.item_ids, "label": votes(small)})
    a.to_csv(tmp_path / "a.csv", index=False)
    a.assign(label=(a["label"] + 1) % 3).to_csv(tmp_path / "b.csv", index=False)
    a.iloc[:-1].to_csv(tmp_path / "fewer.csv", index=False)
    pd.concat([a, pd.DataFrame({"item": ["nowhere"], "label": [0]})]).to_csv(tmp_path / "unknown.csv", index=False)
    a.assign(label=7).to_csv(tmp_path / "label7.csv", index=False)
    pd.DataFrame({"item": small.item_ids, "p_0": 0.5, "p_1": 0.2, "p_2": 0.2}).to_csv(tmp_path / "sum.csv", index=False)
    return tmp_path


def test_cli_writes_a_table_a_sentence_a_csv_and_its_sidecar(files, capsys):
    out = files / "result.csv"
    assert main(["compare", "--data", str(files / "ratings.csv"), "--a", str(files / "a.csv"), "--b",
                 str(files / "b.csv"), "--n-samples", "50", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "Accuracy" in printed and "sampler:S1" in printed
    assert len(pd.read_csv(out)) == 8
    assert json.loads((files / "result.csv.json").read_text())["items_used"] == 40


@pytest.mark.parametrize("system, message", [
    ("unknown.csv", "no annotations"), ("fewer.csv", "different items"), ("label7.csv", "not labels"),
    ("sum.csv", "sum to 0.9")])
def test_cli_refuses_bad_outputs_with_one_line_and_writes_nothing(files, capsys, system, message):
    out = files / "never.csv"
    assert main(["compare", "--data", str(files / "ratings.csv"), "--a", str(files / system), "--b",
                 str(files / "b.csv"), "--n-samples", "20", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "error:" in err and message in err, err
    assert not out.exists()


def test_two_sided_p_of_identical_votes_is_one(small):
    a = pd.DataFrame({"item": small.item_ids, "label": votes(small)})
    result = compare(small, a, a.copy(), n_samples=50, two_sided=True, metrics=["accuracy"])
    assert result["p_value"].iloc[0] == 1.0 and result["delta"].iloc[0] == 0


def test_the_gold_draw_follows_the_sampler(batched):
    """Raters who always give the same label: under S1 every item of a replicate takes its labels from the same
    drawn raters, so all its slots have one count vector; under S2 each item draws its own raters."""
    from analysis.compare import draw_gold
    from analysis.samplers import make_plan

    table = crossed_table(n_items=30, n_raters=9, n_labels=3, seed=0)
    table["label"] = table["rater"] % 3
    ds = from_table(table)
    rng = np.random.default_rng(0)
    for sampler, shared in (("S1", True), ("S2", False)):
        item, gold = draw_gold(make_plan(ds, sampler), ds.n_items, 4, 50, rng)
        assert gold.shape == (50, 30, 3) and (gold.sum(-1) == 4).all()
        same = (gold == gold[:, :1]).all(axis=(1, 2))
        assert same.all() if shared else same.mean() < 0.05
    item, gold = draw_gold(make_plan(batched, "S3"), batched.n_items, 3, 20, rng)
    assert (gold.sum(-1) == 3).all() and item.shape[1] <= batched.n_items


def test_s3_compares_on_a_ragged_batched_design():
    ds = from_table(batched_table(ragged=True), batch="batch")
    a = pd.DataFrame({"item": ds.item_ids, "label": ds.item_label_counts.argmax(1)})
    result = compare(ds, a, a.assign(label=(a["label"] + 1) % 3), n_samples=50)
    assert (result["sampler"] == "S3").all() and (result.set_index("metric").loc["accuracy", "delta"] > 0)


def test_cli_notes_annotated_items_the_systems_do_not_list(files, small, capsys):
    a = pd.read_csv(files / "a.csv").iloc[:30]
    a.to_csv(files / "part_a.csv", index=False)
    a.assign(label=(a["label"] + 1) % 3).to_csv(files / "part_b.csv", index=False)
    assert main(["compare", "--data", str(files / "ratings.csv"), "--a", str(files / "part_a.csv"), "--b",
                 str(files / "part_b.csv"), "--n-samples", "20", "--sampler", "S2"]) == 0
    assert "list 30 of the 40 annotated items" in capsys.readouterr().err
