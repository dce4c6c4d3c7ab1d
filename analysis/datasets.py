"""Named datasets: the synthetic stand-ins and, through the registry, real annotation files; or a path.

:func:`load` is the one entry point the notebooks and the command line use: it accepts a registered name or the
path of one's own annotation file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from analysis.data import AnnotationDataset, load_annotations
from analysis.errors import DataError
from analysis.synthetic import STAND_INS, make_stand_in


def names() -> list[str]:
    """Every name :func:`load` accepts (besides file paths)."""
    return sorted(STAND_INS)


def load(
    name_or_path: str | Path,
    item: str = "item",
    rater: str = "rater",
    label: str = "label",
    batch: str | None = None,
    label_order: Sequence | None = None,
    duplicates: str = "error",
) -> AnnotationDataset:
    """Load a stand-in by name, or an annotation file (CSV, TSV, JSON lines, Parquet) by path."""
    key = str(name_or_path)
    if key in STAND_INS:
        return make_stand_in(key)
    if Path(key).is_file():
        return load_annotations(key, item=item, rater=rater, label=label, batch=batch, label_order=label_order,
                                duplicates=duplicates)
    raise DataError(f"{key!r} is neither a dataset name ({', '.join(names())}) nor an existing file")
