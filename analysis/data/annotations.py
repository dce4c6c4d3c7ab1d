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
import re
import unicodedata
import warnings
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Literal, Sequence

import numpy as np
import pandas as pd

from analysis.errors import DataError, ParameterError

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
    """Validate a long (item, rater, label[, batch]) table and factorise it. ``table`` holds one row per rating;
    ``item``, ``rater``, ``label`` and the optional ``batch`` name its columns; ``label_order`` is the label order
    (default the sorted unique labels); ``duplicates`` says what a repeated (item, rater) pair does: keep the
    ``"first"``, keep the ``"last"``, or raise (``"error"``); ``name`` and ``provenance`` describe the dataset."""
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
        if _needs_text(frame[column]):
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


def id_text(value) -> str:
    """One id as text: a string in Unicode NFC form (``é`` composed), a whole number without its ``.0`` (a numeric
    column from JSON or Parquet, a CSV reader's float for integers with gaps), another number as Python writes it."""
    if isinstance(value, str):
        return unicodedata.normalize("NFC", value)
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)


def _needs_text(values: pd.Series) -> bool:
    """Whether a column of ids must go through :func:`ids_as_text`: it holds text beside numbers (``12`` and ``'12'``
    are then caught as one id spelt two ways) or text not in Unicode NFC form. Others keep their ids as they are."""
    if values.dtype != object and not isinstance(values.dtype, pd.StringDtype):
        return False
    kinds = {isinstance(v, str) for v in pd.unique(values.dropna())} if values.dtype == object else {True}
    return len(kinds) > 1 or unicode_forms(values)[0] > 0


def ids_as_text(values: pd.Series, column: str) -> pd.Series:
    """The ids of one column as text (:func:`id_text`; missing ids stay missing). Texts that differ only in their
    Unicode form become one id (:func:`unicode_forms` counts them); a number and a text that would become one id
    (``12`` and ``'12'``) are an error that names both spellings."""
    codes, uniques = pd.factorize(values)
    texts = pd.Series([id_text(v) for v in uniques], dtype=object)
    number = pd.Series([not isinstance(v, str) for v in uniques], dtype=bool)
    clash = texts.isin(texts[texts.duplicated(keep=False) & number])
    if clash.any():
        same = texts[clash].iloc[0]
        spellings = [uniques[i] for i in np.flatnonzero(clash.to_numpy() & (texts == same).to_numpy())]
        raise DataError(f"column {column!r} spells one id in several ways ({', '.join(map(repr, spellings))}) that "
                        f"would be read as the same id {same!r}; write each id one way (as text, say)")
    out = np.asarray(texts, dtype=object)[codes] if len(texts) else np.full(len(codes), None, dtype=object)
    out[codes < 0] = None
    return pd.Series(out, index=values.index, dtype=object)


def unicode_forms(values: pd.Series) -> tuple[int, int]:
    """How many distinct text ids of ``values`` are not in Unicode NFC form, and how many ids are written in several
    forms (a composed and a decomposed ``é``) that :func:`id_text` reads as one."""
    uniques = np.asarray(pd.unique(values.dropna()), dtype=object)  # Python strings, fast to walk
    text = pd.Series([v for v in uniques if isinstance(v, str) and not v.isascii()], dtype=object)
    normal = text.map(id_text)[lambda nfc: nfc != text]  # ASCII text is in NFC form
    return len(normal), normal[normal.duplicated(keep=False) | normal.isin(uniques)].nunique()


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


def file_sha256(path: str | Path) -> str:
    """sha256 of a file, read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


COLUMN_FLAGS = "Name the right ones with --item, --rater and --label (item=, rater=, label= in Python)."
CHUNK_ROWS = 1_000_000  # rows a CSV with columns beyond the needed ones is read at a time


def _missing_columns(path: Path, found, wanted, hint: str) -> DataError:
    missing = [c for c in wanted if c not in found]
    return DataError(f"column(s) {missing} not found in {path.name}; it has columns {list(found)}. {hint}".rstrip())


def read_error(err: Exception) -> str:
    """Why a file could not be read, in one line."""
    if isinstance(err, UnicodeDecodeError):
        return (f"not UTF-8 text (byte {err.object[err.start]:#04x} at offset {err.start}): save it as UTF-8 "
                "(from Latin-1, for example), unless it is not a text file at all")
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


FORMATS = {".csv": ",", ".tsv": "\t", ".tab": "\t", ".jsonl": "json", ".ndjson": "json", ".parquet": "parquet",
           ".pq": "parquet"}
COMPRESSIONS = (".gz", ".bz2", ".xz", ".zst", ".zip")  # pandas infers the codec from the name


def file_format(path: Path) -> str | None:
    """The separator of a CSV or TSV file, ``"json"`` (JSON lines) or ``"parquet"``, from the file's name
    (``ratings.tsv.gz`` is a compressed TSV); None for a name this reader does not know."""
    name = path.name.lower()
    for codec in COMPRESSIONS:
        if name.endswith(codec):
            name = name[: -len(codec)]
            break
    kind = FORMATS.get(Path(name).suffix)
    return None if kind == "parquet" and name != path.name.lower() else kind


def read_table(path: str | Path, columns: Sequence[str] | None = None, dtype=None, hint: str = "",
               text: Sequence[str] = ()) -> pd.DataFrame:
    """Read a CSV, TSV, JSON-lines or Parquet file (the first three also compressed: ``.gz``, ``.bz2``, ``.xz``,
    ``.zst``, ``.zip``), only ``columns`` when given, with clear errors.

    ``text`` names columns read as text in every format (ids: ``012`` stays ``012``; numbers from JSON or Parquet
    become their text, :func:`ids_as_text`; text stays as written). ``dtype`` is passed to the CSV reader (``str``
    keeps every field as written); ``hint`` ends the message of missing columns. Errors give the line of a CSV row
    longer than the header, and say to name ``.tsv`` a CSV read as one column whose name holds tabs (``;``: a hint).

    Returns the file's columns (only ``columns``, in that order, when given), one row per line or record.
    Keeping only the needed columns keeps memory proportional to (rows x those columns).
    """
    path = Path(path)
    if path.is_dir():
        raise DataError(f"{path} is a folder, not a file")
    if not path.is_file():
        raise DataError(f"no such file: {path}")
    kind = file_format(path)
    try:
        table = _read_kind(path, kind, columns, dtype, hint, text)
    except DataError:
        raise
    except (pd.errors.EmptyDataError, pd.errors.ParserError, ValueError, OSError, EOFError, ImportError) as err:
        raise DataError(f"cannot read {path}: {read_error(err)}") from err
    as_read = kind not in ("parquet", "json") and (dtype is None or dtype is str)  # a CSV read them as text
    for column in () if as_read else text:
        if column in table.columns and pd.api.types.infer_dtype(table[column], skipna=True) != "string":
            table[column] = ids_as_text(table[column], column)
    return table


def _read_kind(path: Path, kind: str | None, columns, dtype, hint: str, text: Sequence[str]) -> pd.DataFrame:
    """The file read by its format (:func:`file_format`); a CSV's ``text`` columns are read as strings."""
    if kind is None:
        raise DataError(f"unknown file type {path.suffix!r} for {path}; use .csv, .tsv, .jsonl or .parquet (the "
                        "first three may be compressed: .csv.gz, ...)")
    if kind == "parquet":
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise DataError(f"reading {path.name} needs pyarrow: pip install 'annotator-bootstrap[parquet]'") from None
        found = pq.read_schema(path).names
        if columns and set(columns) - set(found):
            raise _missing_columns(path, found, columns, hint)
        return pd.read_parquet(path, columns=list(columns) if columns else None)
    if kind == "json":
        table = pd.read_json(path, lines=True, dtype=False)
        if columns and set(columns) - set(table.columns):
            raise _missing_columns(path, table.columns, columns, hint)
        return table[list(columns)] if columns else table
    found = pd.read_csv(path, sep=kind, nrows=0).columns
    if len(found) == 1 and "\t" in str(found[0]) and kind == ",":
        raise DataError(f"{path.name} was read as one column, {str(found[0])!r}, whose name holds tabs: is it "
                        "separated by tabs? Name it .tsv (or save it with commas)")
    if columns and set(columns) - set(found):
        if len(found) == 1 and ";" in str(found[0]) and kind == ",":
            hint = (f"It was read as one column: is it separated by semicolons? Save it with commas (or with tabs, "
                    f"as .tsv). {hint}")
        raise _missing_columns(path, found, columns, hint)
    if dtype is None and text:
        dtype = {column: str for column in text if column in found}
    return _read_csv(path, found, columns, sep=kind, dtype=dtype, keep_default_na=dtype is not str)


def _read_csv(path: Path, found, columns, **options) -> pd.DataFrame:
    """Every field of a CSV parsed, so that a row longer than the header is caught (pandas drops the surplus of a
    row silently when told which columns to keep); the columns beyond ``columns`` are dropped chunk by chunk."""
    options["index_col"] = False  # a longer first row would otherwise become an index, silently
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.ParserWarning)  # pandas' word for that longer first row
            if not columns or set(found) <= set(columns):
                table = pd.read_csv(path, **options)
                return table[list(columns)] if columns else table
            return pd.concat(chunk[list(columns)] for chunk in pd.read_csv(path, chunksize=CHUNK_ROWS, **options))
    except pd.errors.ParserWarning:
        raise DataError(f"{path.name}: the first row after the header has more fields than the header's "
                        f"{len(found)}; quote a field that holds the separator") from None
    except pd.errors.ParserError as err:
        where = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(err))
        if not where:
            raise
        expected, line, saw = where.groups()
        raise DataError(f"{path.name} line {line} has {saw} fields, the header {expected}; quote a field that holds "
                        "the separator") from None


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
    two items and two raters. ``normalize_labels`` counts labels that differ only in case or surrounding
    spaces as one label, spelt as most of its ratings spell it.
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
    or spaces, more than :data:`MAX_LABELS` labels, or numbers with more than :data:`MAX_DECIMALS` decimals."""
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
