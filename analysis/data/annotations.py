"""The annotation dataset: a validated long table of (item, rater, label) with factorised codes and its topology.

A dataset is built from a pandas table (:func:`from_table`) or a file (:func:`load_annotations`). A file's ids are
text as written, in every format (``012`` and ``12`` are two items), in Unicode NFC form; ids of one table spelt
differently that would read as one (``12`` the number and ``'12'`` the text) are an error that names both. Ids are
factorised to ``0..N-1`` (items) and ``0..R-1`` (raters), labels to ``0..C-1`` in a fixed label order. Rows with a
missing label are dropped and counted; a repeated (item, rater) pair is an error unless a policy is chosen. The
design of the table (fully crossed, batched or sparse) is detected once and cached on the object.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Literal, Sequence

import numpy as np
import pandas as pd

from analysis.errors import DataError, ParameterError
from analysis.data.reading import COLUMN_FLAGS, needs_text, file_sha256, ids_as_text, read_table, unicode_forms

DuplicatePolicy = Literal["first", "last", "error"]
FULLY_CROSSED, BATCHED, SPARSE = "fully crossed", "batched", "sparse"
OVERLAPPING = "overlapping rater sets"  # items grouped by identical rater sets that share raters: not batches


@dataclass(frozen=True)
class Topology:
    """The design of a dataset: its kind and, when batched, each item's batch code."""

    kind: str
    item_batch: np.ndarray | None = field(default=None, repr=False)
    inferred: bool = False

    @property
    def n_batches(self) -> int:
        return 0 if self.item_batch is None else int(self.item_batch.max()) + 1


@dataclass(frozen=True, eq=False)
class AnnotationDataset:
    """One annotation dataset in factorised form (one entry per rating)."""

    item: np.ndarray
    rater: np.ndarray
    label: np.ndarray
    item_ids: np.ndarray
    rater_ids: np.ndarray
    label_names: tuple
    name: str = "annotations"
    item_batch: np.ndarray | None = field(default=None, repr=False)
    n_dropped: int = 0
    provenance: str = ""

    @property
    def n_items(self) -> int:
        return len(self.item_ids)

    @property
    def n_raters(self) -> int:
        return len(self.rater_ids)

    @property
    def n_labels(self) -> int:
        return len(self.label_names)

    @property
    def n_ratings(self) -> int:
        return len(self.label)

    @cached_property
    def raters_per_item(self) -> np.ndarray:
        return np.bincount(self.item, minlength=self.n_items)

    @cached_property
    def item_label_counts(self) -> np.ndarray:
        """Per-item label counts, shape (n_items, n_labels)."""
        counts = np.zeros((self.n_items, self.n_labels), dtype=np.int64)
        np.add.at(counts, (self.item, self.label), 1)
        return counts

    @cached_property
    def sha256(self) -> str:
        """Hash of the dataset's content (codes, ids, label order, batches); stable across file formats."""
        digest = hashlib.sha256()
        for array in (self.item, self.rater, self.label):
            digest.update(np.ascontiguousarray(array, dtype=np.int64).tobytes())
        for names in (self.item_ids, self.rater_ids, self.label_names):
            digest.update("\x1f".join(map(str, names)).encode())
        if self.item_batch is not None:
            digest.update(np.ascontiguousarray(self.item_batch, dtype=np.int64).tobytes())
        return digest.hexdigest()

    @cached_property
    def topology(self) -> Topology:
        return detect_topology(self)

    def summary(self) -> dict:
        """Counts and design in one flat dict (for provenance tables and ``datasets info``)."""
        per_item = self.raters_per_item
        topo = self.topology
        return {
            "name": self.name,
            "ratings": self.n_ratings,
            "items": self.n_items,
            "raters": self.n_raters,
            "raters_per_item_min": int(per_item.min()),
            "raters_per_item_median": float(np.median(per_item)),
            "raters_per_item_max": int(per_item.max()),
            "labels": [str(x) for x in self.label_names],
            "topology": topo.kind,
            "batches": topo.n_batches,
            "dropped_missing_labels": self.n_dropped,
            "sha256": self.sha256,
        }

    def to_frame(self) -> pd.DataFrame:
        """The long table with original ids and labels: columns ``item``, ``rater``, ``label`` and, when batched,
        ``batch`` (the batch code), one row per rating."""
        frame = pd.DataFrame(
            {
                "item": self.item_ids[self.item],
                "rater": self.rater_ids[self.rater],
                "label": np.asarray(self.label_names, dtype=object)[self.label],
            }
        )
        if self.item_batch is not None:
            frame["batch"] = self.item_batch[self.item]
        return frame


def from_table(
    table: pd.DataFrame,
    item: str = "item",
    rater: str = "rater",
    label: str = "label",
    batch: str | None = None,
    label_order: Sequence | None = None,
    duplicates: DuplicatePolicy = "error",
    name: str = "annotations",
    provenance: str = "",
) -> AnnotationDataset:
    """Validate a long (item, rater, label[, batch]) table and factorise it.

    Parameters
    ----------
    table : pandas.DataFrame
        One row per rating.
    item : str, default "item"
        The column of item ids.
    rater : str, default "rater"
        The column of rater ids.
    label : str, default "label"
        The column of labels; a row without one is dropped and counted.
    batch : str, optional
        The column of batch ids, for a design in batches (each batch one set of raters).
    label_order : sequence, optional
        The labels in their order (ordinal labels need it); default: the sorted distinct labels.
    duplicates : {"error", "first", "last"}, default "error"
        What a repeated (item, rater) pair does: raise, or keep its first or last rating.
    name : str, default "annotations"
        The dataset's name in reports.
    provenance : str, optional
        Where the table came from, in words (reports and provenance records carry it).

    Returns
    -------
    AnnotationDataset
        Ids as codes ``0..N-1`` and ``0..R-1``, labels as codes ``0..C-1`` in the label order, and the design
        detected. A missing column, an id spelt two ways or a repeated pair under ``"error"`` raises
        :class:`analysis.DataError`.
    """
    if duplicates not in ("first", "last", "error"):
        raise ParameterError(f"duplicates must be 'first', 'last' or 'error', got {duplicates!r}")
    wanted = [item, rater, label] + ([batch] if batch else [])
    missing = [c for c in wanted if c not in table.columns]
    if missing:
        raise DataError(
            f"column(s) {missing} not found; the table has columns {list(table.columns)}. "
            "Name the right ones with --item, --rater and --label (item=, rater=, label= in Python)."
        )
    frame = table[wanted].copy()
    for column in dict.fromkeys([item, rater] + ([batch] if batch else [])):
        if needs_text(frame[column]):
            frame[column] = ids_as_text(frame[column], column)
    if frame[[item, rater]].isna().any().any():
        raise DataError(f"{int(frame[[item, rater]].isna().any(axis=1).sum())} row(s) have no item or rater id")
    has_label = frame[label].notna()
    n_dropped = int((~has_label).sum())
    frame = frame[has_label]
    if frame.empty:
        raise DataError("the table has no rating with a label")

    item_codes, item_ids = pd.factorize(frame[item], sort=True)
    rater_codes, rater_ids = pd.factorize(frame[rater], sort=True)
    pairs = pd.Series(item_codes.astype(np.int64) * len(rater_ids) + rater_codes)  # one integer per (item, rater)
    is_dup = pairs.duplicated(keep=False).to_numpy()
    if is_dup.any():
        if duplicates == "error":
            shown = frame.loc[is_dup, [item, rater]].drop_duplicates().head(3).to_records(index=False).tolist()
            merged = sum(unicode_forms(table[column])[1] for column in dict.fromkeys([item, rater]))
            raise DataError(
                f"{int(pairs.duplicated().sum())} repeated (item, rater) pair(s), e.g. {shown}"
                + (f" ({merged} item or rater id(s) are written in several Unicode forms, such as a composed and a "
                   "decomposed 'é', and each was read as one id)" if merged else "")
                + "; give --duplicates first or --duplicates last (duplicates='first' or 'last' in Python) to keep one "
                "rating per pair"
            )
        kept = ~pairs.duplicated(keep=duplicates).to_numpy()  # a dropped rating's item and rater stay, in its twin
        frame, item_codes, rater_codes = frame[kept], item_codes[kept], rater_codes[kept]
    values = frame[label]
    if label_order is None:
        values = _label_values(values, label)
        label_names = tuple(pd.unique(values.sort_values()))
    else:
        label_names = tuple(label_order)
        values = _match_label_order(values, label_names)
        unknown = sorted(set(values.astype(object)) - set(label_names), key=str)
        if unknown:
            raise DataError(f"label(s) {unknown[:5]} are not in the label order {list(label_names)} given with "
                            "--labels (label_order= in Python)")
    if len(label_names) < 2:
        raise DataError(
            f"the label column {label!r} has a single value {label_names!r}; comparing models needs two labels or more"
        )
    if len(label_names) > 127:
        raise DataError(f"{len(label_names)} distinct labels; at most 127 are supported (is {label!r} the label?)")
    label_codes = pd.Categorical(values, categories=list(label_names)).codes

    item_batch = None
    if batch:
        batch_per_row, _ = pd.factorize(frame[batch], sort=True)
        per_item = pd.DataFrame({"i": item_codes, "b": batch_per_row}).drop_duplicates()
        if per_item["i"].duplicated().any():
            bad = per_item.loc[per_item["i"].duplicated(), "i"].iloc[0]
            raise DataError(f"item {item_ids[bad]!r} appears in more than one batch of column {batch!r}")
        item_batch = np.empty(len(item_ids), dtype=np.int32)
        item_batch[per_item["i"].to_numpy()] = per_item["b"].to_numpy()
        _check_batches(item_batch[item_codes], rater_codes, item_batch, frame[batch].to_numpy(), rater_ids, batch)
        item_batch = pd.factorize(item_batch, sort=True)[0].astype(np.int32)

    return AnnotationDataset(
        item=item_codes.astype(np.int32),
        rater=rater_codes.astype(np.int32),
        label=label_codes.astype(np.int8),
        item_ids=np.asarray(item_ids, dtype=object),
        rater_ids=np.asarray(rater_ids, dtype=object),
        label_names=label_names,
        name=name,
        item_batch=item_batch,
        n_dropped=n_dropped,
        provenance=provenance,
    )


def from_codes(item: np.ndarray, rater: np.ndarray, label: np.ndarray, label_names: Sequence,
               batch: np.ndarray | None = None, name: str = "annotations", provenance: str = "") -> AnnotationDataset:
    """The dataset that :func:`from_table` builds from a table of integer item and rater ids, label codes
    (``label_names[code]``, given as ``label_order``) and integer batch ids, one row per rating, without a table's
    parsing: for draws of a simulation (a few times faster). A repeated (item, rater) pair, an item in two batches
    or a code outside the labels raises :class:`analysis.DataError`."""
    item_ids, item_codes = np.unique(item, return_inverse=True)
    rater_ids, rater_codes = np.unique(rater, return_inverse=True)
    label = np.asarray(label)
    if len(label_names) < 2 or len(label) == 0 or label.min() < 0 or label.max() >= len(label_names):
        raise DataError(f"label codes must lie in 0..{len(label_names) - 1} for the labels {list(label_names)}, "
                        "two labels or more")
    pairs = item_codes.astype(np.int64) * len(rater_ids) + rater_codes
    repeated = pairs.size - np.unique(pairs).size
    if repeated:
        raise DataError(f"{repeated} repeated (item, rater) pair(s)")
    item_batch = None
    if batch is not None:
        batch_per_row = np.unique(batch, return_inverse=True)[1]
        item_batch = np.empty(len(item_ids), dtype=np.int32)
        item_batch[item_codes] = batch_per_row
        if (item_batch[item_codes] != batch_per_row).any():
            raise DataError("an item appears in more than one batch")
        _check_batches(batch_per_row, rater_codes, item_batch, np.asarray(batch), rater_ids, "batch")
        item_batch = np.unique(item_batch, return_inverse=True)[1].astype(np.int32)
    return AnnotationDataset(item=item_codes.astype(np.int32), rater=rater_codes.astype(np.int32),
                             label=label.astype(np.int8), item_ids=item_ids.astype(object),
                             rater_ids=rater_ids.astype(object), label_names=tuple(label_names), name=name,
                             item_batch=item_batch, provenance=provenance)


def _check_batches(row_batch, row_rater, item_batch, batch_names, rater_ids, column: str) -> None:
    """Each batch must have one rater set: every rater of a batch rated at least half of its items (a few missing
    ratings are fine: S3 fills them from the item's other raters)."""
    n_items = np.bincount(item_batch)
    pairs, rated = np.unique(np.stack([row_batch, row_rater]), axis=1, return_counts=True)
    short = rated * 2 < n_items[pairs[0]]
    if short.any():
        b, r = pairs[:, np.argmax(short)]
        name = batch_names[np.argmax(row_batch == b)]
        raise DataError(f"batch {name!r} of column {column!r} has no fixed rater set: rater {rater_ids[r]!r} rated "
                        f"{rated[np.argmax(short)]} of its {n_items[b]} items; fix the batch column, or leave --batch "
                        "out (S3 then infers batches from items with the same raters; S2 needs none)")


def _label_values(values: pd.Series, label: str) -> pd.Series:
    """Labels as read, made numeric when every one is a number written as text (so that 10 sorts after 9).

    A column that mixes numbers and text (``1, two, @@, 3.5``, or a 1-10 scale with a stray ``?``) is refused:
    its order cannot be guessed, so the user must give it.
    """
    if pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
        return values
    as_text = values.astype(str).str.strip()
    numbers = pd.to_numeric(as_text, errors="coerce")
    is_number = numbers.notna() & (as_text != "")
    if is_number.all():
        return numbers.astype("int64") if (numbers == numbers.round()).all() else numbers
    if is_number.any():
        text = sorted(pd.unique(as_text[~is_number]))[:3]
        some = sorted(pd.unique(numbers[is_number]))[:3]
        raise DataError(
            f"the label column {label!r} mixes numbers ({', '.join(f'{v:g}' for v in some)}, ...) and text "
            f"({', '.join(map(repr, text))}); give the order of every label with --labels (label_order= in "
            "Python), e.g. --labels 1,2,3,?, or remove the stray values")
    return values


def _match_label_order(values: pd.Series, order: tuple) -> pd.Series:
    """Labels matched to a given order by their text when their types differ (``--labels 1,2,?`` on a file)."""
    known = set(order)
    if set(pd.unique(values)) <= known:
        return values
    by_text = {str(v).strip(): v for v in order}
    as_text = values.map(lambda v: str(int(v)) if isinstance(v, float) and v.is_integer() else str(v).strip())
    return as_text.map(lambda t: by_text.get(t, t))


def detect_topology(ds: AnnotationDataset) -> Topology:
    """Fully crossed if every rater rated every item; batched if a batch column was given or if grouping items
    by their exact rater set gives groups of two items or more (median) whose rater sets are disjoint (the median
    rater in one set); overlapping rater sets where the median rater is in several (each item keeps its set's code
    in ``item_batch``); sparse otherwise."""
    if ds.n_ratings == ds.n_items * ds.n_raters:
        return Topology(FULLY_CROSSED)
    if ds.item_batch is not None:
        return Topology(BATCHED, ds.item_batch)
    order = np.lexsort((ds.rater, ds.item))
    raters_sorted = ds.rater[order]
    starts = np.concatenate([[0], np.cumsum(ds.raters_per_item)])
    signatures = [raters_sorted[starts[i] : starts[i + 1]].tobytes() for i in range(ds.n_items)]
    groups = pd.factorize(pd.Series(signatures), sort=False)[0].astype(np.int32)
    sizes = np.bincount(groups)
    if len(sizes) > 1 and np.median(sizes[groups]) >= 2 and np.median(sizes) >= 2:
        sets_of_rater = np.bincount(np.unique(groups[ds.item].astype(np.int64) * ds.n_raters + ds.rater) % ds.n_raters,
                                    minlength=ds.n_raters)
        return Topology(BATCHED if np.median(sets_of_rater) <= 1 else OVERLAPPING, groups, inferred=True)
    return Topology(SPARSE)


def keep_raters(ds: AnnotationDataset, n_raters: int, seed: int) -> AnnotationDataset:
    """Keep every item and ``n_raters`` raters chosen without replacement with ``seed`` (the paper's RQ4 cut)."""
    if not 1 <= n_raters <= ds.n_raters:
        raise ParameterError(f"n_raters must be between 1 and {ds.n_raters}, got {n_raters}")
    chosen = np.sort(np.random.default_rng(seed).choice(ds.n_raters, size=n_raters, replace=False))
    frame = ds.to_frame()
    frame = frame[np.isin(ds.rater, chosen)]
    kept = from_table(
        frame,
        batch="batch" if ds.item_batch is not None else None,
        label_order=ds.label_names,
        name=f"{ds.name}-{n_raters}raters",
        provenance=f"{ds.provenance}; {n_raters} of {ds.n_raters} raters kept with seed {seed}".lstrip("; "),
    )
    if kept.n_items < ds.n_items:
        raise DataError(f"{ds.n_items - kept.n_items} item(s) lost every rating when cutting to {n_raters} raters")
    return kept


def load_annotations(
    path: str | Path,
    item: str = "item",
    rater: str = "rater",
    label: str = "label",
    batch: str | None = None,
    label_order: Sequence | None = None,
    duplicates: DuplicatePolicy = "error",
    normalize_labels: bool = False,
) -> AnnotationDataset:
    """Load one's own annotation file (CSV, TSV, JSON lines, Parquet; compressed too) as a dataset.

    Item, rater and batch ids are text as written, whatever the format (:func:`read_table`). Beyond
    :func:`from_table`'s checks, a file's labels must look like categories (see :func:`check_labels`), and it needs
    two items and two raters.

    Parameters
    ----------
    path : str or pathlib.Path
        The file: ``.csv``, ``.tsv``, ``.jsonl``, ``.parquet``, and the first three compressed (``.gz``, ...).
    item : str, default "item"
        The item column.
    rater : str, default "rater"
        The rater column.
    label : str, default "label"
        The label column.
    batch : str, optional
        The batch column, if the design has batches.
    label_order : sequence, optional
        The labels in order, as :func:`from_table` takes it.
    duplicates : {"error", "first", "last"}, default "error"
        What a repeated (item, rater) pair does, as :func:`from_table` takes it.
    normalize_labels : bool, default False
        Count labels that differ only in case or surrounding spaces as one label, spelt as most of its ratings
        spell it.

    Returns
    -------
    AnnotationDataset
        The file's ratings, named after the file, its provenance the file's name and sha256.
    """
    path = Path(path)
    ids = [item, rater] + ([batch] if batch else [])
    table = read_table(path, columns=[item, rater, label] + ([batch] if batch else []), hint=COLUMN_FLAGS, text=ids)
    if normalize_labels:
        table[label] = normalized_labels(table[label])
    if label_order is None:
        check_labels(table[label], label)
    ds = from_table(
        table,
        item=item,
        rater=rater,
        label=label,
        batch=batch,
        label_order=label_order,
        duplicates=duplicates,
        name=path.stem,
        provenance=f"file {path.name} (sha256 {file_sha256(path)})",
    )
    for what, count in (("item", ds.n_items), ("rater", ds.n_raters)):
        if count < 2:
            raise DataError(f"{path.name} has {count} {what} with a label; comparing models needs 2 {what}s or more")
    return ds


MAX_LABELS = 50  # more distinct labels than this need their order given (--labels)
MAX_DECIMALS = 2  # numeric labels with more decimals than this look like measurements, not categories


def _variants(values: pd.Series) -> pd.Series:
    """The spellings of the text labels, grouped by their case-folded, stripped form: a list for each label."""
    text = pd.Series(pd.unique(values.dropna()), dtype=object)
    text = text[text.map(lambda v: isinstance(v, str))]
    return text.groupby(text.str.strip().str.casefold().to_numpy()).agg(list)


def normalized_labels(values: pd.Series) -> pd.Series:
    """Labels that differ only in case or surrounding spaces, replaced by their most frequent spelling (on a tie,
    one without surrounding spaces, then one in lower case)."""
    counts = values.value_counts()
    spelling = {}
    for forms in _variants(values):
        chosen = max(sorted(forms), key=lambda form: (counts[form], form == form.strip(), form == form.lower()))
        spelling.update({form: chosen for form in forms if form != chosen})
    return values.replace(spelling) if spelling else values


def check_labels(values: pd.Series, label: str) -> None:
    """Refuse labels that are probably not the categories meant: spellings of one label that differ only in case
    or spaces, more than :data:`MAX_LABELS` labels, or numbers with more than :data:`MAX_DECIMALS` decimals.

    Parameters
    ----------
    values : pandas.Series
        The labels of every rating.
    label : str
        The column's name, for the message.

    Returns
    -------
    None
        Or raises :class:`analysis.DataError` naming the labels at fault and the option that accepts them.
    """
    groups = [forms for forms in _variants(values) if len(forms) > 1]
    if groups:
        shown = "; ".join(", ".join(repr(form) for form in sorted(forms)) for forms in groups[:3])
        raise DataError(f"the label column {label!r} spells a label in several ways ({shown}); give "
                        "--normalize-labels to count them as one (normalize_labels=True in Python), or list every "
                        "spelling in order with --labels if they are different labels")
    distinct = pd.unique(values.dropna())
    numbers = pd.to_numeric(pd.Series(distinct).astype(str).str.strip(), errors="coerce")
    if numbers.notna().all() and (numbers.round(MAX_DECIMALS) != numbers).any():
        fine = numbers[numbers.round(MAX_DECIMALS) != numbers].head(3)
        raise DataError(f"the label column {label!r} holds numbers such as {', '.join(f'{v:g}' for v in fine)}, "
                        f"{len(distinct)} distinct values that look like measurements, not categories; bin them "
                        "into categories first, or give every label in order with --labels (label_order= in Python)")
    if len(distinct) > MAX_LABELS:
        raise DataError(f"the label column {label!r} has {len(distinct)} distinct labels, more than {MAX_LABELS}; "
                        f"is {label!r} the label? If it is, give every label in order with --labels (label_order= "
                        "in Python)")
