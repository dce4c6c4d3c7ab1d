"""The command line's shared option types and the options that name an annotation file (``run``, ``compare``,
``plan``): comma-separated lists that refuse empty values, label orders, the file's columns and how to read it."""

from __future__ import annotations

import argparse
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from analysis.data.annotations import AnnotationDataset


def split(text: str) -> list[str]:
    """Comma-separated values, stripped; an empty one (``1,,5``, a trailing comma) is refused."""
    values = [v.strip() for v in text.split(",")]
    if "" in values:
        raise argparse.ArgumentTypeError(f"an empty value in {text!r}; separate the values by single commas")
    return values


def comma_list(cast, what: str):
    """An argparse type for comma-separated values of ``cast``."""
    def parse(text: str) -> list:
        values = split(text)
        try:
            return [cast(v) for v in values]
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected comma-separated {what}, got {text!r}") from None
    return parse


ints, floats = comma_list(int, "integers"), comma_list(float, "numbers")


def labels(text: str) -> list:
    """--labels: comma-separated labels, numbers when every one is a number."""
    values = split(text)
    if len(values) < 2:
        raise argparse.ArgumentTypeError(f"expected two labels or more, got {text!r}")
    if len(set(values)) < len(values):
        raise argparse.ArgumentTypeError(f"a label is repeated in {text!r}")
    try:
        numbers = [float(v) for v in values]
    except ValueError:
        return [int(v) if re.fullmatch(r"-?\d+", v) else v for v in values]
    return [int(n) if n.is_integer() else n for n in numbers]


def data_arguments(parser: argparse.ArgumentParser) -> None:
    """The options that name the annotations: a dataset name or file, its columns, and how to read its labels."""
    parser.add_argument("--data", required=True,
                        help="a dataset name (e.g. dices-synthetic) or a CSV/TSV/JSONL/Parquet file (the first "
                             "three may be compressed: .gz, .bz2, .xz, .zip, .zst)")
    parser.add_argument("--item", default="item", help="item id column of the file (default: item)")
    parser.add_argument("--rater", default="rater", help="rater id column of the file (default: rater)")
    parser.add_argument("--label", default="label", help="label column of the file (default: label)")
    parser.add_argument("--batch", default=None,
                        help="optional batch column (needed by S3 unless batches can be inferred)")
    parser.add_argument("--labels", type=labels, default=None,
                        help="comma-separated label order, e.g. 1,2,3,? (default: sorted; needed when labels mix "
                             "numbers and text, look continuous or are more than 50)")
    parser.add_argument("--normalize-labels", action="store_true",
                        help="count labels that differ only in case or surrounding spaces as one (each group takes "
                             "its most frequent spelling); without it such labels are an error")
    parser.add_argument("--duplicates", choices=("error", "first", "last"), default="error",
                        help="what to do with a repeated (item, rater) pair (default: error)")


def sampler_argument(parser: argparse.ArgumentParser) -> None:
    """``--sampler``, defaulting to the one that models raters as the design allows
    (:func:`analysis.engine.samplers.default_sampler`)."""
    from analysis.engine.samplers import SAMPLERS

    parser.add_argument("--sampler", choices=SAMPLERS, default=None,
                        help="bootstrap sampler (default: S1 when fully crossed, S3 when batched, S4 on any other "
                             "design where raters rate several items, else S2)")


def perturbation_argument(parser: argparse.ArgumentParser, note: str = "") -> None:
    """``--perturbation``, B's noise law, defaulting to the book's; ``note`` adds a clause to its help."""
    from analysis.engine.rule import PERTURBATIONS
    from analysis.experiment.choices import BOOK

    parser.add_argument("--perturbation", choices=PERTURBATIONS, default=BOOK.perturbation,
                        help=f"how B is perturbed (default: {BOOK.perturbation}, one label per perturbed item, as in "
                             f"the book{note}): also per-item Dirichlet(1/C) noise as in VET, a uniform other label, "
                             "or Dirichlet noise centred on the data's label shares")


def load_data(args: argparse.Namespace) -> AnnotationDataset:
    """The annotations named by :func:`data_arguments`' options."""
    from analysis.data import datasets

    return datasets.load(args.data, item=args.item, rater=args.rater, label=args.label, batch=args.batch,
                         duplicates=args.duplicates, label_order=args.labels, normalize_labels=args.normalize_labels)
