"""A system's outputs read against the annotations (the inputs of the methods page's comparison): one label per item,
several (a generative system's samples), or ``p_<label>`` probabilities, matched to the annotated items by their id as
text (in Unicode NFC form) and to the annotations' labels by value where those are numbers, by their text otherwise.
Every way a file can be wrong is one :class:`~analysis.errors.DataError` naming the system and the fix."""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.data.annotations import AnnotationDataset
from analysis.data.reading import id_text, ids_as_text, read_table, unicode_forms
from analysis.errors import DataError

PROBABILITY_PREFIX = "p_"
PROBABILITY_TOLERANCE = 1e-6  # sums this close to 1 are taken as they are
ROUNDING_TOLERANCE = 0.01  # sums this close to 1 (rounded probabilities, as 3 decimals give) are renormalised, noted
SHOWN = 3  # items an error names

@dataclass(frozen=True)
class SystemOutputs:
    """One system's answers on the annotated items: per item code its label distribution and the output's form."""

    item: np.ndarray  # dataset item codes, sorted
    share: np.ndarray  # (items, labels) label distribution per item
    form: str  # "label", "samples" or "probabilities"
    sha256: str
    unanswered: np.ndarray  # dataset item codes listed without an answer
    notes: tuple[str, ...] = ()  # what was done to the outputs on the way (renormalised probabilities)


def label_text(value) -> str:
    """A label as text, ``1.0`` read as ``1`` (CSV readers turn integer columns with gaps into floats)."""
    return id_text(value).strip()


def _is_number(value) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def _label_value(value):
    """A label's value as a number: a number as it is, a text that reads as a finite number as that number (``"1.0"``
    is 1), anything else as its text."""
    if _is_number(value):
        return float(value)
    try:
        number = float(str(value).strip())
    except ValueError:
        return label_text(value)
    return number if math.isfinite(number) else label_text(value)


def _label_codes(ds: AnnotationDataset, normalize: bool) -> tuple[dict, callable]:
    """The annotations' labels, and the key a system's label is looked up by. Numeric labels are matched by value
    (``1``, ``1.0`` and the text ``"1.0"`` are one label, however each file was read); text labels by their exact
    text, or whatever their case and surrounding spaces when ``normalize`` (``--normalize-labels``)."""
    if all(_is_number(v) for v in ds.label_names):
        key = _label_value
    else:
        key = (lambda v: label_text(v).casefold()) if normalize else label_text
    return {key(v): c for c, v in enumerate(ds.label_names)}, key


def _spelt(values) -> str:
    """Labels as written, text quoted and numbers bare (``'1.0'`` beside ``1.0``), so two spellings never look alike."""
    return ", ".join(repr(v.item() if isinstance(v, np.generic) else v) for v in values)


def _label_error(name: str, strange, ds: AnnotationDataset, normalize: bool, what: str = "label(s)") -> DataError:
    known = [str(v) for v in ds.label_names]
    folded = {v.strip().casefold() for v in known}
    close = not normalize and any(str(v).strip().casefold() in folded for v in strange)
    return DataError(f"{name}: {what} [{_spelt(list(strange)[:5])}] are not labels of the annotations "
                     f"([{_spelt(ds.label_names)}])"
                     + ("; give --normalize-labels (normalize_labels=True in Python) to match labels whatever their "
                        "case and surrounding spaces" if close else ""))


def _probabilities(name: str, keys: pd.Series, outputs: pd.DataFrame, columns: list) -> tuple[np.ndarray, ...]:
    """A system's probability rows, checked: (answered rows, probabilities, notes). A row with no probability is
    unanswered; one with some missing or a negative one is an error, and so are sums off 1 by more than
    :data:`ROUNDING_TOLERANCE` (the error counts them and names the first); sums off by less are renormalised, with
    a note that counts them."""
    raw = outputs[columns]
    probs = raw.apply(pd.to_numeric, errors="coerce").to_numpy(float)
    given = np.column_stack([raw[c].notna().to_numpy() if pd.api.types.is_numeric_dtype(raw[c]) else
                             (raw[c].notna() & (raw[c].astype(str).str.strip() != "")).to_numpy() for c in columns])
    answered = given.any(1)
    unreadable = answered[:, None] & (~given | np.isnan(probs) | ~np.isfinite(probs))
    if unreadable.any():
        row, col = np.argwhere(unreadable)[0]
        value = raw.iloc[row, col]
        raise DataError(f"{name}: item {keys.iloc[row]!r} has no number in {columns[col]} "
                        f"({'empty' if not given[row, col] else repr(value)}); give every probability of an answered "
                        "item, or none to leave the item unanswered")
    negative = answered[:, None] & (probs < 0)
    if negative.any():
        row, col = np.argwhere(negative)[0]
        raise DataError(f"{name}: item {keys.iloc[row]!r} has a negative probability, {columns[col]} = "
                        f"{probs[row, col]:g}")
    total = np.where(answered, probs.sum(1), 1.0)
    off = np.round(np.abs(total - 1), 12)  # 0.01 + 1.0 is 1.0100000000000000089 in floats: within 0.01
    bad = np.flatnonzero(off > ROUNDING_TOLERANCE)
    if len(bad):
        more = f" and {len(bad) - SHOWN:,} more" if len(bad) > SHOWN else ""
        raise DataError(f"{name}: the probabilities of {len(bad):,} item(s) sum to "
                        + ", ".join(f"{total[row]:.6g} ({keys.iloc[row]!r})" for row in bad[:SHOWN])
                        + f"{more}, not 1 (sums within {ROUNDING_TOLERANCE:g} of 1 are renormalised)")
    notes = ()
    rounded = off > PROBABILITY_TOLERANCE
    if rounded.any():
        notes = (f"{name}: the probabilities of {int(rounded.sum())} item(s) sum to 1 only within "
                 f"{ROUNDING_TOLERANCE:g} (largest gap {off.max():.2g}), as rounded values do; they were renormalised",)
    return answered, probs / total[:, None], notes


def read_outputs(ds: AnnotationDataset, outputs: pd.DataFrame, name: str = "system", item: str = "item",
                 label: str = "label", normalize_labels: bool = False) -> SystemOutputs:
    """Validate one system's outputs against the annotations: one or several ``label`` rows per item, or one row of
    ``p_<label>`` probabilities per item. Items are matched by their id as text, as written (``00012`` is not ``12``)
    but in Unicode NFC form (a composed and a decomposed ``é`` are one id; a note counts the ids put in that form);
    rows without an answer mark the item as unanswered. ``normalize_labels`` matches labels whatever their case and
    surrounding spaces."""
    if item not in outputs.columns:
        raise DataError(f"{name}: no item column {item!r}; the outputs have columns {list(outputs.columns)}")
    codes = {id_text(v): c for c, v in enumerate(ds.item_ids)}
    keys = ids_as_text(outputs[item], f"{name}'s {item}")
    if keys.isna().any():
        raise DataError(f"{name}: {int(keys.isna().sum())} row(s) have no item id")
    unknown = sorted(set(keys) - set(codes))
    if unknown:
        raise DataError(f"{name}: {len(unknown)} item(s) have no annotations, e.g. {unknown[:SHOWN]} (item ids are "
                        "matched as text, exactly as written but for their Unicode form)")
    changed, merged = unicode_forms(outputs[item])
    notes = (f"{name}: {changed:,} item id(s) were matched in Unicode NFC form (a decomposed 'é' as the composed one)"
             + (f"; {merged:,} id(s) written in several forms were each read as one id" if merged else ""),
             ) if changed else ()
    labels, key = _label_codes(ds, normalize_labels)
    prob_columns = [c for c in outputs.columns if str(c).startswith(PROBABILITY_PREFIX)]
    item_code = keys.map(codes).to_numpy()
    share = np.zeros((ds.n_items, ds.n_labels))
    if prob_columns and label in outputs.columns:
        raise DataError(f"{name}: both a {label!r} column and {PROBABILITY_PREFIX}<label> columns "
                        f"({', '.join(map(str, prob_columns[:3]))}); give one form of outputs per file")
    if prob_columns:
        form = "probabilities"
        strange = [c for c in prob_columns if key(c[len(PROBABILITY_PREFIX):]) not in labels]
        if strange:
            raise _label_error(name, strange, ds, normalize_labels, "column(s)")
        if keys.duplicated().any():
            raise DataError(f"{name}: probabilities need one row per item; item {keys[keys.duplicated()].iloc[0]!r} "
                            "has several" + (" (ids written in several Unicode forms are one id)" if merged else ""))
        answered, probs, rounded = _probabilities(name, keys, outputs, prob_columns)
        notes += rounded
        if not answered.any():
            raise DataError(f"{name}: no row gives probabilities (the outputs have {len(outputs):,} row(s))")
        columns = [labels[key(c[len(PROBABILITY_PREFIX):])] for c in prob_columns]
        if len(set(columns)) < len(columns):
            raise DataError(f"{name}: columns {prob_columns} name one label twice")
        share[np.ix_(item_code[answered], columns)] = probs[answered]
    else:
        if label not in outputs.columns:
            raise DataError(f"{name}: neither a {label!r} column nor {PROBABILITY_PREFIX}<label> columns; the outputs "
                            f"have columns {list(outputs.columns)}")
        answered = outputs[label].notna().to_numpy() & (outputs[label].map(label_text) != "").to_numpy()
        if not answered.any():
            raise DataError(f"{name}: no row gives a label (the outputs have {len(outputs):,} row(s))")
        values = outputs[label][answered].map(key)
        strange = sorted(set(values) - set(labels), key=str)
        if strange:
            raise _label_error(name, outputs[label][answered][values.isin(strange)].map(label_text).unique(), ds,
                               normalize_labels)
        np.add.at(share, (item_code[answered], values.map(labels).to_numpy()), 1.0)
        several = keys[answered][keys[answered].duplicated()].nunique()
        form = "samples" if several else "label"
        if several:
            notes += (f"{name}: {several:,} item(s) have several label rows, read as samples of the system's answers "
                      "(each item's answer is the shares of its rows); if they are repeated rows, remove them",)
    listed = np.unique(item_code)
    has = np.zeros(ds.n_items, bool)
    has[item_code[answered]] = True
    done = listed[has[listed]]
    share = share[done] / share[done].sum(1, keepdims=True)
    digest = hashlib.sha256(form.encode())
    digest.update(np.ascontiguousarray(done, np.int64).tobytes())
    digest.update(np.ascontiguousarray(share).tobytes())
    return SystemOutputs(done, share, form, digest.hexdigest(), listed[~has[listed]], notes)


def read_system(path: str | Path) -> pd.DataFrame:
    """A system's outputs file (CSV, TSV, JSON lines, Parquet; compressed too) with its columns as written (``item``
    and ``label`` or ``p_<label>``, and any others), every field as text and the item ids as written.

    Parameters
    ----------
    path : str or pathlib.Path
        The file (formats as :func:`analysis.data.reading.read_table` reads them).

    Returns
    -------
    pandas.DataFrame
        Its columns as written, every field as text.
    """
    return read_table(path, dtype=str, text=("item",))


# ------------------------------------------------------------------------------------------ command line
