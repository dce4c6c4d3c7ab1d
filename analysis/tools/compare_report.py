"""What a comparison says (the methods page): its table as people read it, the sentence to paste into a paper, its
files, and the ``compare`` command that prints and writes them. The comparison itself is
:mod:`analysis.tools.compare`."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import pandas as pd

from analysis.engine.metrics import AVERAGINGS, METRIC_LABELS
from analysis.experiment.choices import BOOK
from analysis.io import output_file, write_atomic
from analysis.tools import rater_level
from analysis.tools.compare import N_SAMPLES, RATER_LEVEL, SAMPLER_WORDS, compare, swap_floor
from analysis.tools.options import data_arguments, load_data, sampler_argument
from analysis.wording import counted


def _score(value: float) -> str:
    """A system's score: three decimals, as every score of a column."""
    return _value(value, False)


def _scientific(low: float, high: float) -> bool:
    """Whether an interval is printed in scientific notation: where neither finite end reaches 0.01 in size."""
    finite = [abs(float(v)) for v in (low, high) if math.isfinite(float(v))]
    return bool(finite) and 0 < max(finite) < 0.01


def _value(value: float, scientific: bool) -> str:
    """A number in three decimals or, with ``scientific``, in scientific notation; never "-0.000"."""
    value = float(value) + 0.0
    if not math.isfinite(value):
        return str(value)
    text = f"{value:.2e}" if scientific else f"{value:.3f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def _interval(low: float, high: float) -> str:
    """An interval's two ends in one format: three decimals, or both in scientific notation when neither reaches
    0.01 in size."""
    scientific = _scientific(low, high)
    return "[" + ", ".join(_value(v, scientific) for v in (low, high)) + "]"


def _delta(row) -> str:
    """The row's delta in its interval's format."""
    return _value(row["delta"], _scientific(row["ci_low"], row["ci_high"]))


def p_text(p: float) -> str:
    """A p-value as printed: three decimals, or "< 0.001"."""
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def _favour(delta: float, names) -> str:
    return f" in favour of {names[0]}" if delta > 0 else f" in favour of {names[1]}" if delta < 0 else ", no difference"


def _equals(p: float) -> str:
    text = p_text(p)
    return text if text[0] == "<" else f"= {text}"


def at_floor(row) -> bool:
    """Whether the row's p is the smallest its test can give with these replicates (and raters)."""
    floor = row.get("p_floor")
    return floor is not None and not pd.isna(floor) and row["p_value"] <= floor


def _p_words(row) -> str:
    """The row's p for the sentence: ``= 0.034``, or at the floor ``<= 0.002``, the smallest the test can give."""
    if not at_floor(row):
        return _equals(row["p_value"])
    return f"<= {p_text(row['p_floor'])} (the smallest p this test can give with these replicates and raters)"


def metric_label(metric: str) -> str:
    """A metric's label, with its averaging where it has one (precision, recall, F1)."""
    return f"{METRIC_LABELS[metric]} (support-weighted)" if metric in ("precision", "recall", "f1") \
        else METRIC_LABELS[metric]


def sentence(table: pd.DataFrame, metric: str | None = None, names=("system A", "system B")) -> str:
    """One plain sentence with the result of one metric (the first of the table by default), to paste into a paper."""
    row = table.iloc[0] if metric is None else table[table["metric"] == metric].iloc[0]
    sided = "two-sided" if "two-sided" in row["signature"] else "one-sided"
    caveats = table.attrs.get("caveats") or []
    items = counted(row['items'], "item")
    return (f"On {items} with K = {row['K']} ratings each"
            f"{' (' + '; '.join(caveats) + ')' if caveats else ''}, {names[0]} scored "
            f"{_score(row['score_a'])} {metric_label(row['metric'])} against {_score(row['score_b'])} for "
            f"{names[1]} (delta {_delta(row)}{_favour(row['delta'], names)}, 95 % interval "
            f"{_interval(row['ci_low'], row['ci_high'])}, {sided} p {_p_words(row)} from "
            f"{_test_words(row, table.attrs.get('raters_in_data'))}; with "
            f"these raters' labels held fixed, p {_given_words(row)}; {row['signature']})."
            + _small_pool(row))


def _rater_level(row) -> bool:
    """Whether the row's p is the rater-level test's."""
    return row["sampler"] in RATER_LEVEL and "/percentile" not in row["signature"]


def _test_words(row, raters_in_data: int | None = None) -> str:
    """How the row's p was found, for the sentence; ``raters_in_data`` names the distinct raters behind a per-batch
    count."""
    replicates = f"{row['n_samples']:,} replicates of sampler {row['sampler']}, {SAMPLER_WORDS[row['sampler']]}"
    if not _rater_level(row):
        return f"the percentile of {replicates}"
    raters = (f"{raters_in_data:,} raters (about {row['raters']} per batch)" if row["sampler"] == "S3" and raters_in_data
              else f"{row['raters']:,} raters")
    words = f"a t-test on item and rater jackknives for the {raters}"
    if row["metric"] in rater_level.COMPANION:
        words += f", and the widened percentile of {row['n_samples']:,} replicates with rater columns resampled"
    return words


def _small_pool(row) -> str:
    """The sentence's last clause where the rater pool limits the test (:func:`rater_level.raters_for_even_odds`)."""
    needed = row.get("raters_for_even_odds")
    if needed is None or pd.isna(needed):
        return ""
    per = " per batch" if row["sampler"] == "S3" else ""
    return (f" With {row['raters']} raters{per}, no number of items would give this test even odds of detecting a "
            f"difference of this size (about {needed} raters{per} would), so a p above 0.05 here is not evidence "
            "that the two systems are equally good.")


def readable(table: pd.DataFrame, names=("A", "B")) -> pd.DataFrame:
    """The result as people read it, one row per row of ``table``; columns ``sampler``, ``metric`` (its label, with
    its averaging), ``names[0]`` and ``names[1]`` (the scores), ``delta``, ``95% interval``, ``p (one-sided)`` or
    ``p (two-sided)`` (``<= x`` at the smallest p the test can give, :func:`at_floor`) and ``p given ratings``, as
    text."""
    sided = "two-sided" if table["signature"].str.contains("test:two-sided").all() else "one-sided"
    return pd.DataFrame({
        "sampler": table["sampler"], "metric": table["metric"].map(metric_label),
        names[0]: table["score_a"].map(_score), names[1]: table["score_b"].map(_score),
        "delta": [_delta(row) for _, row in table.iterrows()],
        "95% interval": [_interval(lo, hi) for lo, hi in zip(table["ci_low"], table["ci_high"])],
        f"p ({sided})": [f"<= {p_text(row['p_floor'])}" if at_floor(row) else p_text(row["p_value"])
                         for _, row in table.iterrows()],
        "p given ratings": [f"<= {p_text(row['p_given_ratings'])}" if given_at_floor(row)
                            else p_text(row["p_given_ratings"]) for _, row in table.iterrows()]})


def given_at_floor(row) -> bool:
    """Whether ``p_given_ratings`` is the smallest its swaps can give (:func:`analysis.tools.compare.swap_floor`)."""
    return row["p_given_ratings"] <= swap_floor(row["n_samples"], "test:two-sided" in row["signature"])


def _given_words(row) -> str:
    """``p_given_ratings`` for the sentence: ``= 0.034``, or ``<= 0.002`` at the smallest its swaps can give."""
    return f"<= {p_text(row['p_given_ratings'])}" if given_at_floor(row) else _equals(row["p_given_ratings"])


def text_table(table: pd.DataFrame) -> str:
    """The result as a terminal table."""
    return readable(table).drop(columns="sampler").to_string(index=False)


def save(table: pd.DataFrame, path: str | Path) -> None:
    """The result as CSV and its provenance as ``<path>.json``, both written atomically."""
    write_atomic(path, table.to_csv(index=False))
    write_atomic(f"{path}.json", json.dumps(table.attrs.get("provenance", {}), indent=2, default=str))


HELP_P = """\
what the two p-values mean:
  p                  from the sampler's own bootstrap replicates, the same ones that give the 95 % interval:
                     a two-sided p below 0.05 exactly when the interval excludes 0. S1 and S3 resample the
                     raters as the same people across items, so they answer "is A better for the rater
                     population these raters come from?"; S2 treats each item's raters as independent.
  p given ratings    swapping A's and B's answers item by item, with these raters' labels held fixed: "is A
                     better on these very ratings?". No sampler changes it, and it says nothing about other
                     raters.
"""


def add_cli(commands, line: str) -> None:
    """Register ``compare`` on the command line's subparsers, with its one-line help."""
    cli = commands.add_parser("compare", help=line,
                              description="Is system A better than B on a multi-rater test set? Scores both against "
                                          "every rating, with a bootstrap interval and p under a sampler of items "
                                          "and raters.",
                              epilog=HELP_P, formatter_class=argparse.RawDescriptionHelpFormatter)
    data_arguments(cli)
    cli.add_argument("--a", required=True, help="system A's outputs: item,label rows (one or several per item) or "
                                                "item,p_<label>,... rows (CSV, TSV, JSON lines or Parquet)")
    cli.add_argument("--b", required=True, help="system B's outputs, in the same form")
    sampler_argument(cli)
    cli.add_argument("--k", type=int, default=None, help="ratings per item drawn (default: the median per item)")
    cli.add_argument("--metrics", default="all", help="comma-separated metrics or 'all'")
    cli.add_argument("--averaging", choices=AVERAGINGS, default=BOOK.averaging,
                     help=f"how 'all' averages precision, recall and F1 over the labels (default: {BOOK.averaging}, "
                          "as in the book; weighted: by each label's support)")
    cli.add_argument("--n-samples", type=int, default=N_SAMPLES,
                     help="bootstrap replicates (default: 1000; at least 40 for a two-sided p below 0.05)")
    cli.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    cli.add_argument("--two-sided", action="store_true", help="two-sided p: twice the smaller tail, at most 1")
    cli.add_argument("--out", default=None, help="output CSV; provenance goes to OUT.json")


def run_cli(args: argparse.Namespace) -> None:
    """The ``compare`` command."""
    out = output_file(args.out, inputs=[args.data, args.a, args.b], sidecar=".json",
                      suffixes=(".csv",)) if args.out else None
    ds = load_data(args)
    table = compare(ds, args.a, args.b, sampler=args.sampler, k=args.k, n_samples=args.n_samples, seed=args.seed,
                    two_sided=args.two_sided, item=args.item,
                    metrics="all" if args.metrics == "all" else args.metrics.split(","),
                    normalize_labels=args.normalize_labels, progress=True, averaging=args.averaging)
    for note in table.attrs["notes"]:
        print(f"note: {note}", file=sys.stderr)
    left_out = table.attrs["left_out"]
    if left_out:
        print(f"note: {len(left_out)} item(s) that a system did not answer are left out of both: "
              f"{', '.join(left_out[:5])}{' ...' if len(left_out) > 5 else ''}", file=sys.stderr)
    row = table.iloc[0]
    if row["items"] + len(left_out) < ds.n_items:
        print(f"note: the systems list {row['items'] + len(left_out):,} of the {ds.n_items:,} annotated items; the "
              "others are not compared", file=sys.stderr)
    print(table.attrs["design"])
    print(f"A against B on {row['items']:,} items, K = {row['K']}, sampler {row['sampler']} "
          f"({SAMPLER_WORDS[row['sampler']]}), {row['n_samples']:,} replicates; delta > 0 means A is better; "
          "p from " + ("a t-test on item and rater jackknives (for the distribution metrics also the widened "
                       "percentile of rater-column replicates)" if _rater_level(row) else "the sampler's replicates")
          + ", 'p given ratings' with these raters' labels held fixed")
    print(text_table(table))
    if any(at_floor(row) or given_at_floor(row) for _, row in table.iterrows()):
        print("<= x: the smallest p this test can give with these replicates (and, for the distribution metrics, "
              "these raters); more replicates or raters could show a smaller one")
    print(f"\n{sentence(table)}")
    if out:
        save(table, out)
        print(f"wrote {len(table)} rows to {args.out}", file=sys.stderr)
