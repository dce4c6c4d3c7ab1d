"""The compare chapter's worked example: two text classifiers trained on a LeWiDi set's training split, their
outputs on its test split, the comparison under every sampler the design allows, and what it found, in words
computed from the comparison (never prose written for one run's numbers)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from analysis.tools.compare import compare
from analysis.tools.outputs import PROBABILITY_PREFIX, label_text, read_outputs
from analysis.data.annotations import AnnotationDataset
from analysis.data.reading import id_text
from analysis.errors import ParameterError
from analysis.engine.metrics import METRIC_LABELS, REGISTRY, votes
from analysis.paper.tables import Table

SYSTEMS = ("logreg-balanced", "naive-bayes")


def lewidi_texts(name: str) -> pd.DataFrame:
    """The texts of a LeWiDi dataset in the cache; columns ``item`` (``split:id``, as the registry keys it),
    ``split`` and ``text``, one row per item."""
    from analysis.data import datasets

    datasets.verify(name)
    rows = []
    for path in sorted((datasets.data_dir() / name).glob("*_*.json")):
        split = path.stem.rsplit("_", 1)[-1]
        entries = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(entries, dict) and all(isinstance(e, dict) and "text" in e for e in entries.values()):
            rows += [(f"{split}:{key}", split, str(entry["text"])) for key, entry in entries.items()]
    return pd.DataFrame(rows, columns=["item", "split", "text"])


def text_classifiers(seed: int = 0) -> dict:
    """The worked example's scikit-learn systems on TF-IDF features: logistic regression with balanced class
    weights (it gives the rare label its share of the loss, so it votes for it), multinomial naive Bayes (it
    follows the label shares, so on a skewed set it votes the common label), and plain logistic regression."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import MultinomialNB
    from sklearn.pipeline import make_pipeline

    features = dict(ngram_range=(1, 2), min_df=2, sublinear_tf=True)
    logistic = dict(max_iter=2000, random_state=seed)
    return {"logreg-balanced": make_pipeline(TfidfVectorizer(**features),
                                             LogisticRegression(class_weight="balanced", **logistic)),
            "naive-bayes": make_pipeline(TfidfVectorizer(**features), MultinomialNB()),
            "logreg": make_pipeline(TfidfVectorizer(**features), LogisticRegression(**logistic))}


def train_and_predict(ds: AnnotationDataset, texts: pd.DataFrame, systems=SYSTEMS, train: str = "train",
                      test: str = "test", seed: int = 0) -> dict[str, pd.DataFrame]:
    """Train each named system on the ``train`` split's texts and plurality labels; per system a frame of its label
    probabilities on the ``test`` split's items, columns ``item`` and ``p_<label>`` (one per label)."""
    known = text_classifiers(seed)
    unknown = [s for s in systems if s not in known]
    if unknown:
        raise ParameterError(f"unknown system(s) {unknown}; choose from {', '.join(known)}")
    code = {id_text(v): c for c, v in enumerate(ds.item_ids)}
    texts = texts[texts["item"].isin(code)]
    fit, score = texts[texts["split"] == train], texts[texts["split"] == test]
    plurality = ds.item_label_counts.argmax(1)[fit["item"].map(code).to_numpy()]
    out = {}
    for name in systems:
        model = known[name].fit(fit["text"], plurality)
        probs = np.zeros((len(score), ds.n_labels))
        probs[:, model.classes_] = model.predict_proba(score["text"])
        out[name] = pd.DataFrame({"item": score["item"].to_numpy(),
                                  **{f"{PROBABILITY_PREFIX}{label_text(v)}": probs[:, c]
                                     for c, v in enumerate(ds.label_names)}})
    return out


def vote_shares(ds: AnnotationDataset, outputs: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """How the systems vote on the items they answer: one row per system, columns ``system``, one share per label
    (``vote <label>``: the share of items whose plurality vote is that label), and ``differs`` (the share of items
    on which its vote differs from the first system's)."""
    read = {name: read_outputs(ds, frame, name) for name, frame in outputs.items()}
    first = next(iter(read.values()))
    rows = []
    for name, system in read.items():
        vote = votes(system.share)
        row = {"system": name, **{f"vote {v}": float(np.mean(vote == c)) for c, v in enumerate(ds.label_names)}}
        same = np.intersect1d(system.item, first.item)
        row["differs"] = float(np.mean(votes(system.share[np.searchsorted(system.item, same)])
                                       != votes(first.share[np.searchsorted(first.item, same)])))
        rows.append(row)
    return pd.DataFrame(rows)


def vote_table(ds: AnnotationDataset, outputs: dict[str, pd.DataFrame]) -> Table:
    """:func:`vote_shares` as the page shows it: every share in three decimals (a share of 1 too)."""
    shares = vote_shares(ds, outputs)
    return Table(shares.assign(**{c: shares[c].map(lambda v: f"{v:.3f}") for c in shares.columns if c != "system"}))


def compare_samplers(ds: AnnotationDataset, outputs_a, outputs_b, samplers, **options) -> pd.DataFrame:
    """:func:`analysis.tools.compare.compare` under each sampler, one frame with its columns (one row per sampler and
    metric)."""
    return pd.concat([compare(ds, outputs_a, outputs_b, sampler=s, **options) for s in samplers], ignore_index=True)


def verdicts(table: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """Per metric of a comparison under several samplers, what each sampler says; columns ``metric``, ``family``
    (vote or distribution), ``delta``, ``separated_by`` (the samplers with p < ``alpha``, in the table's order),
    ``width_<sampler>`` (each sampler's interval width) and ``p_<sampler>``."""
    samplers = list(dict.fromkeys(table["sampler"]))
    family = {m.name: m.family for m in REGISTRY}
    rows = []
    for metric, part in table.groupby("metric", sort=False):
        by = part.set_index("sampler")
        rows.append({"metric": metric, "family": family[metric], "delta": float(by["delta"].iloc[0]),
                     "separated_by": [s for s in samplers if by.loc[s, "p_value"] < alpha],
                     **{f"width_{s}": float(by.loc[s, "ci_high"] - by.loc[s, "ci_low"]) for s in samplers},
                     **{f"p_{s}": float(by.loc[s, "p_value"]) for s in samplers}})
    return pd.DataFrame(rows)


def _labels(metrics) -> str:
    return ", ".join(METRIC_LABELS[m] for m in metrics)


def finding(table: pd.DataFrame, names=("A", "B"), alpha: float = 0.05) -> str:
    """What a comparison under one or more samplers found, in words (Markdown): which metrics separate the
    systems under every sampler and in whose favour, which under some samplers only, and how much wider the
    rater-modelling sampler's intervals are than S2's on those."""
    row = table.iloc[0]
    samplers = list(dict.fromkeys(table["sampler"]))
    said = verdicts(table, alpha)
    every = said[said["separated_by"].map(len) == len(samplers)]
    some = said[said["separated_by"].map(lambda s: 0 < len(s) < len(samplers))]
    none = said[said["separated_by"].map(len) == 0]
    parts = [f"On {row['items']:,} test items with K = {row['K']} ratings each"]
    for better, sign in ((names[0], 1), (names[1], -1)):
        found = every[np.sign(every["delta"]) == sign]["metric"]
        if len(found):
            parts.append(f"{better} is better on {_labels(found)} (p < {alpha:g} under "
                         f"{'every sampler' if len(samplers) > 1 else samplers[0]})")
    for (by, sign), group in some.groupby([some["separated_by"].map(tuple), np.sign(some["delta"])], sort=False):
        parts.append(f"{_labels(group['metric'])} {'separates' if len(group) == 1 else 'separate'} them under "
                     f"{', '.join(by)} only, in favour of {names[0] if sign > 0 else names[1]}")
    if len(none):
        parts.append(f"neither is shown better on {_labels(none['metric'])}")
    text = "; ".join(parts) + "."
    modelled = [s for s in samplers if s != "S2"]
    if "S2" in samplers and modelled:
        s = modelled[0]
        shown = said[(said["width_S2"] > 0) & np.isfinite(said[f"width_{s}"])]
        if len(shown):
            ratio = shown[f"width_{s}"] / shown["width_S2"]
            text += (f" {s}'s intervals are {ratio.min():.2g} to {ratio.max():.2g} times as wide as S2's (median "
                     f"{ratio.median():.2g}): {s} redraws the same raters for every item, so a rater who leans one "
                     "way moves all items together, where S2 treats each item's raters as new people.")
        if len(some):
            text += (f" Where the samplers disagree, that width decides: the difference clears S2's narrower "
                     f"interval but not {s}'s." if all("S2" in r for r in some["separated_by"]) else
                     " Where the samplers disagree, the narrower interval is not always S2's.")
    return text


def clearest(table: pd.DataFrame) -> pd.Series:
    """The clearest difference of a comparison: the metric with the largest p-value under its samplers being the
    smallest, ties broken by the largest |delta| per interval width (averaged over the samplers); its first row
    (the columns of :func:`analysis.tools.compare.compare`)."""
    width = (table["ci_high"] - table["ci_low"]).replace(0, np.nan)
    ranked = table.assign(worst_p=table.groupby("metric")["p_value"].transform("max"),
                          clarity=(table["delta"].abs() / width).groupby(table["metric"]).transform("mean"))
    return ranked.sort_values(["worst_p", "clarity"], ascending=[True, False]).iloc[0]


def p_contrast(table: pd.DataFrame, first: str = "S1", second: str = "S2") -> str:
    """How the p-values of two samplers compare on one comparison, in words: on how many metrics ``first``'s p is
    above ``second``'s, with the metric where the gap is largest; empty when the table lacks either sampler."""
    said = verdicts(table)
    if f"p_{first}" not in said or f"p_{second}" not in said:
        return ""
    gap = said[f"p_{first}"] - said[f"p_{second}"]
    top = said.loc[gap.idxmax()]
    above, equal, below = int((gap > 0).sum()), int((gap == 0).sum()), int((gap < 0).sum())
    share = f"all {len(said)}" if above == len(said) else f"{above} of {len(said)}"
    rest = "".join(f", {word} on {count}" for word, count in (("equal", equal), ("below", below)) if count)
    return (f"{first}'s p is above {second}'s on {share} metrics{rest}; the largest gap is on "
            f"{METRIC_LABELS[top['metric']]}: p = {top[f'p_{first}']:.3f} under {first} against "
            f"{top[f'p_{second}']:.3f} under {second}.")


def own_test_check(pilot: AnnotationDataset, study, effect: dict, studies: int, seed: int = 0) -> pd.DataFrame:
    """Per metric of the plan ``study``, its cheapest design within the pilot's own raters that reaches the target
    power (else its most powerful one), with the paper's test's power there beside ``compare``'s own test's on
    ``studies`` simulated studies (:class:`analysis.tools.study_power.StudyPower`), at the same effect (``effect``:
    an ``epsilon``, or a ``target_delta`` held at the pilot's N and the design's K, as the plan holds it)."""
    from analysis.tools import power
    from analysis.tools.study_power import StudyPower

    designs = study.designs[~study.designs["beyond_raters"].astype(bool)]
    designs = designs[~designs["modelled"].astype(bool)] if "modelled" in designs else designs
    how = study.provenance["parameters"]
    pilot_n, pilot_k = power.pilot_design(pilot)
    rows = []
    for metric, group in designs.groupby("metric", sort=False):
        pick = power.cheapest(group, study.target).iloc[0]
        if pd.isna(pick["N"]):
            pick = group.sort_values(["power", "cost"], ascending=[False, True]).iloc[0]
        n, k = int(pick["N"]), int(pick["K"])
        size = dict(studies=studies, seed=seed, alpha=how["alpha"], max_n=max(n, pilot_n), max_k=max(k, pilot_k))
        try:
            epsilon = effect.get("epsilon")
            if epsilon is None:  # the studies' own mean Delta of the target metric (the same draws: same sizes)
                name, delta = effect["target_delta"]
                epsilon = StudyPower(pilot, how["sampler"], (name,), **size).epsilon_for(pilot_n, k, 0, delta)
            planner = StudyPower(pilot, how["sampler"], (metric,), **size)
            low, high = planner.band(n, k, epsilon)
            found = f"{planner.cell(n, k, epsilon)[0][0]:.2f} [{low[0]:.2f}, {high[0]:.2f}]"
        except ParameterError as error:  # a target Delta the studies cannot give
            found = f"– ({str(error).split(':')[0]})"
        rows.append({"metric": METRIC_LABELS[metric], "design N × K": f"{n:,} × {k}",
                     "the paper's test (the plan above)": f"{pick['power']:.2f} [{pick['power_low']:.2f}, "
                                                          f"{pick['power_high']:.2f}]",
                     f"compare's own test ({studies} studies)": found})
    return pd.DataFrame(rows)
