"""Reading a table file: its format from its name (CSV, TSV, JSON lines, Parquet; compressed too), the columns
asked for, ids as text (Unicode NFC form, whole numbers without ``.0``), and why a file could not be read, in one line.

Imports pandas and the errors; nothing of the package above.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
import warnings
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from analysis.errors import DataError


def id_text(value) -> str:
    """One id as text: a string in Unicode NFC form (``é`` composed), a whole number without its ``.0`` (a numeric
    column from JSON or Parquet, a CSV reader's float for integers with gaps), another number as Python writes it."""
    if isinstance(value, str):
        return unicodedata.normalize("NFC", value)
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)


def needs_text(values: pd.Series) -> bool:
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


def read_csv_as(path: str | Path, what: str, **options) -> pd.DataFrame:
    """The CSV ``path`` that should hold ``what`` (a results CSV, judgements), read by pandas with ``options``; a
    missing, empty, binary or malformed file is one line of :class:`DataError`."""
    try:
        return pd.read_csv(path, **options)
    except (OSError, ValueError, pd.errors.ParserError, pd.errors.EmptyDataError) as err:
        raise DataError(f"cannot read {path} as {what}: {read_error(err)}") from None


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
    longer than the header; a CSV read as one column whose name holds tabs is told to be named ``.tsv``, and one
    whose name holds semicolons that it is semicolon-separated.

    Keeping only the needed columns keeps memory proportional to (rows x those columns).

    Parameters
    ----------
    path : str or pathlib.Path
        The file; its format follows its name (:func:`file_format`).
    columns : sequence of str, optional
        The columns to read, in this order (default: all).
    dtype : optional
        The CSV reader's dtype (``str`` keeps every field as written).
    hint : str, optional
        The end of the message of missing columns (which option names them).
    text : sequence of str, optional
        Columns read as text in every format.

    Returns
    -------
    pandas.DataFrame
        One row per line or record; a file that cannot be read raises :class:`analysis.DataError` in one line.
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
