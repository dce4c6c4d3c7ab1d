"""Comparing two real systems against multi-rater annotations, with raters modelled (METHOD section 10).

A system's outputs give, per item, a label distribution ``q_i``: its one label (a point mass), the shares of its
sampled labels, or its label probabilities (``p_<label>`` columns). In a bootstrap replicate the sampler (S1, S2
or S3) draws the items and the gold's ``K`` rater columns, and each system answers every drawn item with its
``q_i`` on the scale of ``K`` responses (for a system of one label per item, that label ``K`` times; for samples
or probabilities, their expected counts rather than ``K`` draws, so that replicates and the observed scores treat
a system alike). A and B answer the same drawn items (paired). The null replicates are the same drawn items with
A's and B's answers swapped per item slot with probability 1/2.

The p-value is the observed delta's own p-value against the null replicates, ``(1 + #{delta*_i >= delta}) /
(1 + n)`` (:func:`permutation_p`, ties toward the null), not the pairwise p of METHOD section 4: with one observed
study, this is the test whose p is uniform when A and B are exchangeable on every item, whatever the raters.

The interval is the 95 % percentile interval of the replicates' deltas around their mean, placed at the observed
delta: a replicate's gold has ``K`` ratings drawn with replacement, a noisier gold than all of an item's ratings,
which moves the level of non-linear metrics (MAE, Wins, JSD) more than their spread. Everything is plain numpy on
count arrays; the metrics are :func:`analysis.metrics.scores` and :func:`analysis.metrics.deltas`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import __version__
from analysis.data import BATCHED, FULLY_CROSSED, AnnotationDataset, from_table
from analysis.errors import DataError, ParameterError
from analysis.grid import engine_fingerprint
from analysis.io import output_file, write_atomic
from analysis.metrics import METRIC_LABELS, METRICS, REGISTRY, check_metrics, deltas, scores
from analysis.options import data_arguments, load_data
from analysis.pvalues import replicate_p_values
from analysis.samplers import check_sampler, group_layout, make_plan

PROBABILITY_PREFIX = "p_"
PROBABILITY_TOLERANCE = 1e-6
CHUNK_RESPONSES = 4_000_000  # labels drawn per chunk of replicates (bounds memory)
LEVEL = 0.95
SAMPLER_WORDS = {"S1": "items and raters resampled", "S2": "items and raters within items resampled",
                 "S3": "batches, items and batch raters resampled"}


@dataclass(frozen=True)
class SystemOutputs:
    """One system's answers on the annotated items: per item code its label distribution and the output's form."""

    item: np.ndarray  # dataset item codes, sorted
    share: np.ndarray  # (items, labels) label distribution per item
    form: str  # "label", "samples" or "probabilities"
    sha256: str
    unanswered: np.ndarray  # dataset item codes listed without an answer


def default_sampler(ds: AnnotationDataset) -> str:
    """The sampler that models raters as the design allows: S1 (fully crossed), S3 (batched), else S2."""
    return {FULLY_CROSSED: "S1", BATCHED: "S3"}.get(ds.topology.kind, "S2")


def _text(value) -> str:
    """An id or a label as text, ``1.0`` read as ``1`` (CSV readers turn integer columns with gaps into floats)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def read_outputs(ds: AnnotationDataset, outputs: pd.DataFrame, name: str = "system", item: str = "item",
                 label: str = "label") -> SystemOutputs:
    """Validate one system's outputs against the annotations: one or several ``label`` rows per item, or one row of
    ``p_<label>`` probabilities per item. Rows without an answer mark the item as unanswered."""
    if item not in outputs.columns:
        raise DataError(f"{name}: no item column {item!r}; the outputs have columns {list(outputs.columns)}")
    codes = {_text(v): c for c, v in enumerate(ds.item_ids)}
    keys = outputs[item].map(_text)
    unknown = sorted(set(keys) - set(codes))
    if unknown:
        raise DataError(f"{name}: {len(unknown)} item(s) have no annotations, e.g. {unknown[:3]}")
    labels = {_text(v): c for c, v in enumerate(ds.label_names)}
    prob_columns = [c for c in outputs.columns if str(c).startswith(PROBABILITY_PREFIX)]
    item_code = keys.map(codes).to_numpy()
    share = np.zeros((ds.n_items, ds.n_labels))
    if prob_columns:
        form = "probabilities"
        strange = [c for c in prob_columns if c[len(PROBABILITY_PREFIX):] not in labels]
        if strange:
            raise DataError(f"{name}: column(s) {strange} name label(s) the annotations do not have; their labels "
                            f"are {[str(v) for v in ds.label_names]}")
        if keys.duplicated().any():
            raise DataError(f"{name}: probabilities need one row per item; item {keys[keys.duplicated()].iloc[0]!r} "
                            "has several")
        probs = outputs[prob_columns].apply(pd.to_numeric, errors="coerce").to_numpy(float)
        answered = ~np.isnan(probs).all(1)
        probs = np.nan_to_num(probs)
        total = probs.sum(1)
        bad = answered & ((probs < 0).any(1) | (np.abs(total - 1) > PROBABILITY_TOLERANCE))
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise DataError(f"{name}: the probabilities of item {keys.iloc[row]!r} sum to {total[row]:.6g}, not 1 "
                            "(or one is negative)")
        columns = [labels[c[len(PROBABILITY_PREFIX):]] for c in prob_columns]
        share[np.ix_(item_code[answered], columns)] = probs[answered]
    else:
        if label not in outputs.columns:
            raise DataError(f"{name}: neither a {label!r} column nor {PROBABILITY_PREFIX}<label> columns; the outputs "
                            f"have columns {list(outputs.columns)}")
        answered = outputs[label].notna().to_numpy() & (outputs[label].map(_text) != "").to_numpy()
        values = outputs[label][answered].map(_text)
        strange = sorted(set(values) - set(labels))
        if strange:
            raise DataError(f"{name}: label(s) {strange[:5]} are not labels of the annotations "
                            f"({[str(v) for v in ds.label_names]})")
        np.add.at(share, (item_code[answered], values.map(labels).to_numpy()), 1.0)
        form = "samples" if keys[answered].duplicated().any() else "label"
    listed = np.unique(item_code)
    has = np.zeros(ds.n_items, bool)
    has[item_code[answered]] = True
    done = listed[has[listed]]
    share = share[done] / share[done].sum(1, keepdims=True)
    digest = hashlib.sha256(form.encode())
    digest.update(np.ascontiguousarray(done, np.int64).tobytes())
    digest.update(np.ascontiguousarray(share).tobytes())
    return SystemOutputs(done, share, form, digest.hexdigest(), listed[~has[listed]])


def _paired(ds: AnnotationDataset, a: SystemOutputs, b: SystemOutputs) -> tuple[np.ndarray, np.ndarray]:
    """The items both systems answered (dataset codes) and the ones left out because one did not."""
    listed_a, listed_b = np.union1d(a.item, a.unanswered), np.union1d(b.item, b.unanswered)
    if not np.array_equal(listed_a, listed_b):
        only_a, only_b = np.setdiff1d(listed_a, listed_b), np.setdiff1d(listed_b, listed_a)
        raise DataError(f"A and B list different items: {len(only_a)} only in A (e.g. "
                        f"{[str(v) for v in ds.item_ids[only_a[:3]]]}), {len(only_b)} only in B (e.g. "
                        f"{[str(v) for v in ds.item_ids[only_b[:3]]]}); give both systems' outputs on the same items")
    both = np.intersect1d(a.item, b.item)
    if both.size == 0:
        raise DataError("no item was answered by both systems")
    return both, np.setdiff1d(listed_a, both)


def subset(ds: AnnotationDataset, items: np.ndarray) -> AnnotationDataset:
    """The annotations of the given item codes only (same labels, same batches)."""
    if len(items) == ds.n_items:
        return ds
    frame = ds.to_frame()[np.isin(ds.item, items)]
    return from_table(frame, batch="batch" if ds.item_batch is not None else None, label_order=ds.label_names,
                      name=ds.name, provenance=ds.provenance)


def draw_gold(plan, n: int, k: int, reps: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``reps`` replicates of the sampler's draw (METHOD section 2): per slot its item (plan's item index) and the
    gold's label counts from the drawn rater columns, shapes (reps, slots) and (reps, slots, labels)."""
    n_drawn, per_group = group_layout(n, plan.single_group, plan.group_size)
    n_groups = len(plan.item_start) - 1
    group = np.zeros((reps, n_drawn), np.int64) if plan.single_group else rng.integers(n_groups, size=(reps, n_drawn))
    items_in = np.diff(plan.item_start)[group][..., None]
    raters_in = np.diff(plan.rater_start)[group][..., None]
    local = np.minimum((rng.random((reps, n_drawn, per_group)) * items_in).astype(np.int64), items_in - 1)
    column = np.minimum((rng.random((reps, n_drawn, k)) * raters_in).astype(np.int64), raters_in - 1)
    item = plan.items[plan.item_start[group][..., None] + local]
    cell = (plan.matrix_start[group][..., None] + local * raters_in)[..., None] + column[:, :, None, :]
    labels = plan.matrix[cell].astype(np.int64)
    missing = labels < 0  # a ragged batch: the response comes from the item's own labels
    if missing.any():
        cum = plan.item_cum[np.broadcast_to(item[..., None], labels.shape)[missing]]
        labels[missing] = (rng.random(len(cum))[:, None] >= cum[:, :-1]).sum(1)
    counts = (labels[..., None] == np.arange(plan.n_labels)).sum(-2)
    return item.reshape(reps, -1), counts.reshape(reps, -1, plan.n_labels)


def full_counts(ds: AnnotationDataset, share_a: np.ndarray, share_b: np.ndarray, k: int) -> list[np.ndarray]:
    """The gold's, A's and B's label counts per item on the scale of ``k`` responses, from all of an item's
    ratings and each system's whole label distribution (what the observed scores use)."""
    return [ds.item_label_counts / ds.raters_per_item[:, None] * k, share_a * k, share_b * k]


def delta_values(gold: np.ndarray, a: np.ndarray, b: np.ndarray) -> dict[str, np.ndarray]:
    """Deltas of counts on one scale, with leading replicate axes: :func:`analysis.metrics.deltas`' exact ones where
    every count is a whole number, else differences of :func:`analysis.metrics.scores` (accuracy, recall and wins
    still as whole counts over the items, so that their ties stay exact)."""
    if all(np.allclose(x, np.rint(x), rtol=0, atol=1e-9) for x in (gold, a, b)):
        return deltas(*(np.rint(x).astype(np.int64) for x in (gold, a, b)))
    sa, sb = scores(gold, a), scores(gold, b)
    n_items = gold.shape[-2]
    out = {m.name: (sa[m.name] - sb[m.name]) * (1 if m.higher_is_better else -1) for m in REGISTRY
           if m.name != "wins"}
    out["accuracy"] = out["recall"] = (np.rint(sa["accuracy"] * n_items) - np.rint(sb["accuracy"] * n_items)) / n_items
    out["wins"] = ((sa["item_error"] < sb["item_error"]).sum(-1) - (sb["item_error"] < sa["item_error"]).sum(-1)) / n_items
    return {m: out[m] for m in METRICS}


def replicate_deltas(ds: AnnotationDataset, share_a: np.ndarray, share_b: np.ndarray, sampler: str, k: int,
                     n_samples: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(alternative, null) deltas, each (n_samples, 8) in METRICS order; ``share_a[i]`` is A's label distribution
    on item ``i`` of ``ds``.

    An alternative replicate draws items and the gold's ``k`` rater columns with the sampler; each system answers a
    drawn item with its whole label distribution on the scale of ``k`` responses (drawing ``k`` labels from it would
    add noise that the observed scores do not have, and move the interval away from the estimate). Its null twin
    takes the same drawn items, swaps A and B per item slot with probability 1/2, and scores them as the observed
    delta is scored (all ratings): under the hypothesis that A and B are exchangeable on every item, that is the
    observed delta's exact permutation law, whatever the raters.
    """
    plan = make_plan(ds, sampler)
    full = full_counts(ds, share_a, share_b, k)
    rng = np.random.default_rng(seed)
    chunk = max(1, CHUNK_RESPONSES // (ds.n_items * k))
    alt, null = [], []
    for start in range(0, n_samples, chunk):
        reps = min(chunk, n_samples - start)
        item, gold = draw_gold(plan, ds.n_items, k, reps, rng)
        a, b = full[1][item], full[2][item]
        alt.append(delta_values(gold, a, b))
        swap = rng.random(item.shape)[..., None] < 0.5
        null.append(delta_values(full[0][item], np.where(swap, b, a), np.where(swap, a, b)))
    stack = lambda parts: np.column_stack([np.concatenate([p[m] for p in parts]) for m in METRICS])  # noqa: E731
    return stack(alt), stack(null)


def observed(ds: AnnotationDataset, share_a: np.ndarray, share_b: np.ndarray, k: int) -> dict[str, tuple]:
    """Per metric (score A, score B, delta) on every item with all its ratings, on the scale of ``k`` responses."""
    counts = full_counts(ds, share_a, share_b, k)
    sa, sb = scores(counts[0], counts[1]), scores(counts[0], counts[2])
    delta = delta_values(*counts)
    wins = [(sa["item_error"] < sb["item_error"]).mean(), (sb["item_error"] < sa["item_error"]).mean()]
    out = {m: (float(sa[m]), float(sb[m]), float(delta[m])) for m in METRICS if m != "wins"}
    out["wins"] = (float(wins[0]), float(wins[1]), float(delta["wins"]))
    return out


def permutation_p(null: np.ndarray, delta: float) -> float:
    """``(1 + #{null_i >= delta}) / (1 + n)``: the observed answers count as one of the equally likely swaps, so
    that ``P(p <= a) <= a`` holds exactly (ties count toward the null, :func:`analysis.pvalues.replicate_p_values`)."""
    above = np.rint(replicate_p_values(null, [delta])[0] * len(null))
    return float((1 + above) / (1 + len(null)))


def engine() -> str:
    """The fingerprint of what decides compare's numbers: the simulating engine's and this module's source."""
    digest = hashlib.sha256(engine_fingerprint().encode())
    digest.update(Path(__file__).read_bytes())
    return digest.hexdigest()[:16]


def compare(ds: AnnotationDataset, outputs_a: pd.DataFrame, outputs_b: pd.DataFrame, sampler: str | None = None,
            k: int | None = None, n_samples: int = 1000, seed: int = 0, metrics="all", two_sided: bool = False,
            item: str = "item", label: str = "label") -> pd.DataFrame:
    """Compare systems A and B on the annotated items they both answered; one row per metric.

    ``outputs_a`` and ``outputs_b`` hold an ``item`` column and either a ``label`` column (one row per item, or
    several: sampled labels) or ``p_<label>`` columns. ``sampler`` defaults to the one that models raters as the
    design allows, ``k`` to the median number of ratings per item. The frame's ``attrs`` hold the items left out
    (``"left_out"``) and the provenance.
    """
    chosen = check_metrics(metrics)
    if int(n_samples) != n_samples or n_samples < 2:
        raise ParameterError(f"n_samples must be an integer >= 2, got {n_samples!r}")
    a = read_outputs(ds, outputs_a, "A", item, label)
    b = read_outputs(ds, outputs_b, "B", item, label)
    both, left_out = _paired(ds, a, b)
    used = subset(ds, both)
    sampler = check_sampler(sampler or default_sampler(used))
    k = int(np.median(used.raters_per_item)) if k is None else k
    if int(k) != k or k < 1:
        raise ParameterError(f"K (--k) must be an integer >= 1, got {k!r}")
    share_a = a.share[np.searchsorted(a.item, both)]
    share_b = b.share[np.searchsorted(b.item, both)]
    alt, null = replicate_deltas(used, share_a, share_b, sampler, int(k), int(n_samples), int(seed))
    seen = observed(used, share_a, share_b, int(k))
    signature = "|".join([f"sampler:{sampler}", f"K:{k}", f"reps:{n_samples}", f"seed:{seed}",
                          f"test:{'two-sided' if two_sided else 'one-sided'}", f"data:{ds.sha256[:12]}",
                          f"a:{a.sha256[:12]}", f"b:{b.sha256[:12]}", f"engine:{engine()}", f"v:{__version__}"])
    rows = []
    for m, metric in enumerate(METRICS):
        if metric not in chosen:
            continue
        score_a, score_b, delta = seen[metric]
        p = permutation_p(null[:, m], delta)
        if two_sided:  # each tail counts its ties, so that a delta inside a block of equal null deltas gets p = 1
            p = min(1.0, 2 * min(p, permutation_p(-null[:, m], -delta)))
        low, high = delta + np.quantile(alt[:, m] - alt[:, m].mean(), [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
        rows.append({"metric": metric, "score_a": score_a, "score_b": score_b, "delta": delta,
                     "ci_low": float(low), "ci_high": float(high),
                     "p_value": p, "items": len(both), "K": int(k),
                     "sampler": sampler, "n_samples": int(n_samples), "seed": int(seed), "signature": signature})
    table = pd.DataFrame(rows)
    table.attrs["left_out"] = [str(v) for v in ds.item_ids[left_out]]
    table.attrs["provenance"] = {
        "version": __version__, "engine": engine(), "dataset": ds.name, "data_sha256": ds.sha256,
        "data_provenance": ds.provenance, "system_a": {"form": a.form, "sha256": a.sha256},
        "system_b": {"form": b.form, "sha256": b.sha256}, "items_used": len(both),
        "items_left_out": table.attrs["left_out"], "signature": signature,
        "parameters": {"sampler": sampler, "K": int(k), "n_samples": int(n_samples), "seed": int(seed),
                       "two_sided": two_sided, "metrics": list(chosen)}}
    return table


def _number(value: float) -> str:
    return f"{value:.3g}" if abs(value) >= 0.001 or value == 0 else f"{value:.2e}"


def p_text(p: float) -> str:
    """A p-value as printed: three decimals, or "< 0.001"."""
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def _favour(delta: float, names) -> str:
    return f" in favour of {names[0]}" if delta > 0 else f" in favour of {names[1]}" if delta < 0 else ", no difference"


def sentence(table: pd.DataFrame, metric: str | None = None, names=("system A", "system B")) -> str:
    """One plain sentence with the result of one metric (the first of the table by default), to paste into a paper."""
    row = table.iloc[0] if metric is None else table[table["metric"] == metric].iloc[0]
    sided = "two-sided" if "two-sided" in row["signature"] else "one-sided"
    p = p_text(row["p_value"])
    return (f"On {row['items']:,} items with K = {row['K']} ratings each, {names[0]} scored "
            f"{_number(row['score_a'])} {METRIC_LABELS[row['metric']]} against {_number(row['score_b'])} for {names[1]} "
            f"(delta {_number(row['delta'])}{_favour(row['delta'], names)}, 95 % bootstrap interval [{_number(row['ci_low'])}, "
            f"{_number(row['ci_high'])}], {sided} p {'= ' if p[0] != '<' else ''}{p}; {row['n_samples']:,} "
            f"replicates of sampler {row['sampler']}, {SAMPLER_WORDS[row['sampler']]}; {row['signature']}).")


def readable(table: pd.DataFrame, names=("A", "B")) -> pd.DataFrame:
    """The result as people read it: per sampler and metric, both scores, delta, interval and p."""
    return pd.DataFrame({
        "sampler": table["sampler"], "metric": table["metric"].map(METRIC_LABELS),
        names[0]: table["score_a"].map(_number), names[1]: table["score_b"].map(_number),
        "delta": table["delta"].map(_number),
        "95% interval": [f"[{_number(lo)}, {_number(hi)}]" for lo, hi in zip(table["ci_low"], table["ci_high"])],
        "p": table["p_value"].map(p_text)})


def finding(table: pd.DataFrame, names=("A", "B"), alpha: float = 0.05) -> str:
    """What a comparison under one or more samplers found, in words (Markdown)."""
    row = table.iloc[0]
    parts = [f"On {row['items']:,} test items with K = {row['K']} ratings each"]
    significant = table.groupby("metric", sort=False)["p_value"].max() < alpha
    direction = table.groupby("metric", sort=False)["delta"].first()
    for better, sign in ((names[0], 1), (names[1], -1)):
        found = [METRIC_LABELS[m] for m in significant.index if significant[m] and np.sign(direction[m]) == sign]
        if found:
            parts.append(f"{better} is better on {', '.join(found)} (p < {alpha:g} under every sampler)")
    tied = [METRIC_LABELS[m] for m in significant.index if not significant[m]]
    if tied:
        parts.append(f"neither is shown better on {', '.join(tied)}")
    text = "; ".join(parts) + "."
    widths = (table["ci_high"] - table["ci_low"]).replace(0, np.nan).groupby(table["sampler"]).median()
    if len(widths) > 1:
        text += (" The median width of the intervals that are not a single point is "
                 + ", ".join(f"{w:.3g} under {s}" for s, w in widths.items())
                 + ": modelling the raters as the same people across items "
                 + ("widens" if widths.get("S1", widths.get("S3", 0)) > widths.get("S2", 0) else "does not widen")
                 + " the intervals.")
    return text


def text_table(table: pd.DataFrame) -> str:
    """The result as a terminal table."""
    return readable(table).drop(columns="sampler").to_string(index=False)


def save(table: pd.DataFrame, path: str | Path) -> None:
    """The result as CSV and its provenance as ``<path>.json``, both written atomically."""
    write_atomic(path, table.to_csv(index=False))
    write_atomic(f"{path}.json", json.dumps(table.attrs.get("provenance", {}), indent=2, default=str))


def read_system(path: str) -> pd.DataFrame:
    """A system's outputs file (CSV, TSV, JSON lines, Parquet), ids and labels kept as written."""
    from analysis.data import read_table

    return read_table(path, dtype=str)


# ------------------------------------------------------------------------------------------ command line

def add_cli(commands) -> None:
    """Register ``compare`` on the command line's subparsers."""
    cli = commands.add_parser("compare", help="compare two real systems against the annotations, raters modelled",
                              description="Is system A better than B on a multi-rater test set? (METHOD section 10)")
    data_arguments(cli)
    cli.add_argument("--a", required=True, help="system A's outputs: item,label rows (one or several per item) or "
                                                "item,p_<label>,... rows")
    cli.add_argument("--b", required=True, help="system B's outputs, in the same form")
    cli.add_argument("--sampler", choices=("S1", "S2", "S3"), default=None,
                     help="bootstrap sampler (default: S1 when fully crossed, S3 when batched, else S2)")
    cli.add_argument("--k", type=int, default=None, help="ratings per item drawn (default: the median per item)")
    cli.add_argument("--metrics", default="all", help="comma-separated metrics or 'all'")
    cli.add_argument("--n-samples", type=int, default=1000, help="bootstrap replicates (default: 1000)")
    cli.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    cli.add_argument("--two-sided", action="store_true", help="two-sided p: twice the smaller tail, at most 1")
    cli.add_argument("--out", default=None, help="output CSV; provenance goes to OUT.json")


def run_cli(args: argparse.Namespace) -> None:
    """The ``compare`` command."""
    out = output_file(args.out, inputs=[args.data, args.a, args.b], sidecar=".json") if args.out else None
    ds = load_data(args)
    table = compare(ds, read_system(args.a), read_system(args.b), sampler=args.sampler, k=args.k,
                    n_samples=args.n_samples, seed=args.seed, two_sided=args.two_sided,
                    metrics="all" if args.metrics == "all" else args.metrics.split(","))
    left_out = table.attrs["left_out"]
    if left_out:
        print(f"note: {len(left_out)} item(s) that a system did not answer are left out of both: "
              f"{', '.join(left_out[:5])}{' ...' if len(left_out) > 5 else ''}", file=sys.stderr)
    row = table.iloc[0]
    if row["items"] + len(left_out) < ds.n_items:
        print(f"note: the systems list {row['items'] + len(left_out):,} of the {ds.n_items:,} annotated items; the "
              "others are not compared", file=sys.stderr)
    print(f"A against B on {row['items']:,} items, K = {row['K']}, sampler {row['sampler']} "
          f"({SAMPLER_WORDS[row['sampler']]}), {row['n_samples']:,} replicates; delta > 0 means A is better")
    print(text_table(table))
    print(f"\n{sentence(table)}")
    if out:
        save(table, out)
        print(f"wrote {len(table)} rows to {args.out}", file=sys.stderr)


# ------------------------------------------------------------------------------------------ the chapter's worked example

def lewidi_texts(name: str) -> pd.DataFrame:
    """The texts of a LeWiDi dataset in the cache: one row per item (``split:id``, as the registry keys it), with its
    split and text."""
    from analysis import datasets

    datasets.verify(name)
    rows = []
    for path in sorted((datasets.data_dir() / name).glob("*_*.json")):
        split = path.stem.rsplit("_", 1)[-1]
        entries = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(entries, dict) and all(isinstance(e, dict) and "text" in e for e in entries.values()):
            rows += [(f"{split}:{key}", split, str(entry["text"])) for key, entry in entries.items()]
    return pd.DataFrame(rows, columns=["item", "split", "text"])


def text_classifiers(seed: int = 0) -> dict:
    """The two scikit-learn systems of the worked example: TF-IDF features with logistic regression, and with
    multinomial naive Bayes."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import MultinomialNB
    from sklearn.pipeline import make_pipeline

    features = dict(ngram_range=(1, 2), min_df=2, sublinear_tf=True)
    return {"tfidf-logreg": make_pipeline(TfidfVectorizer(**features), LogisticRegression(max_iter=2000,
                                                                                          random_state=seed)),
            "tfidf-nb": make_pipeline(TfidfVectorizer(**features), MultinomialNB())}


def train_and_predict(ds: AnnotationDataset, texts: pd.DataFrame, systems=("tfidf-logreg", "tfidf-nb"),
                      train: str = "train", test: str = "test", seed: int = 0) -> dict[str, pd.DataFrame]:
    """Train each named system on the ``train`` split's texts and plurality labels and return its label
    probabilities on the ``test`` split's items (``item`` and ``p_<label>`` columns)."""
    known = text_classifiers(seed)
    unknown = [s for s in systems if s not in known]
    if unknown:
        raise ParameterError(f"unknown system(s) {unknown}; choose from {', '.join(known)}")
    code = {_text(v): c for c, v in enumerate(ds.item_ids)}
    texts = texts[texts["item"].isin(code)]
    fit, score = texts[texts["split"] == train], texts[texts["split"] == test]
    votes = ds.item_label_counts.argmax(1)[fit["item"].map(code).to_numpy()]
    out = {}
    for name in systems:
        model = known[name].fit(fit["text"], votes)
        probs = np.zeros((len(score), ds.n_labels))
        probs[:, model.classes_] = model.predict_proba(score["text"])
        out[name] = pd.DataFrame({"item": score["item"].to_numpy(),
                                  **{f"{PROBABILITY_PREFIX}{_text(v)}": probs[:, c]
                                     for c, v in enumerate(ds.label_names)}})
    return out


def compare_samplers(ds: AnnotationDataset, outputs_a: pd.DataFrame, outputs_b: pd.DataFrame, samplers, **options):
    """:func:`compare` under each sampler, one frame."""
    return pd.concat([compare(ds, outputs_a, outputs_b, sampler=s, **options) for s in samplers], ignore_index=True)


def clearest(table: pd.DataFrame) -> pd.Series:
    """The clearest difference of a comparison: the metric with the largest p-value under its samplers being the
    smallest, ties broken by the largest |delta| per interval width (averaged over the samplers); its first row."""
    width = (table["ci_high"] - table["ci_low"]).replace(0, np.nan)
    ranked = table.assign(worst_p=table.groupby("metric")["p_value"].transform("max"),
                          clarity=(table["delta"].abs() / width).groupby(table["metric"]).transform("mean"))
    return ranked.sort_values(["worst_p", "clarity"], ascending=[True, False]).iloc[0]
