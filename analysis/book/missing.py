"""What each chapter of a book build ran without: the registered datasets a chapter or one of its sections needed
and did not find in the dataset cache, so that the front page can list them beside the one command that fills
them (``make data``).

A chapter records its gaps as it runs, in ``$BOOK_BUILD_DIR/missing/<chapter>.json`` (a section's entry replaced
when the section records again, removed when it records no dataset); the chapter's provenance record
(:func:`analysis.book.chapter.record_provenance`, its first call) clears the file, so a chapter rerun with the data
leaves no stale gap. The provenance page reads every file (:func:`read`) and glues :func:`summary` for the front
page.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from analysis.data import datasets
from analysis.data.synthetic import base_name
from analysis.io import write_atomic
from analysis.wording import counted

BUILD_ENV = "BOOK_BUILD_DIR"
COMMAND = "make data"  # the one command that fills the dataset cache
WHOLE = "the whole chapter, on synthetic stand-ins of the paper's data"


def _path(chapter: str) -> Path | None:
    build = os.environ.get(BUILD_ENV)
    return Path(build) / "missing" / f"{chapter}.json" if build else None


def clear(chapter: str) -> None:
    """Forget a chapter's gaps (at the start of its run)."""
    path = _path(chapter)
    if path is not None and path.is_file():
        path.unlink()


def record(chapter: str, section: str, names) -> None:
    """Record that ``section`` of ``chapter`` ran without the registered datasets ``names`` (none: it had them)."""
    path = _path(chapter)
    if path is None:
        return
    entries = json.loads(path.read_text()) if path.is_file() else []
    entries = [e for e in entries if e["section"] != section]
    if names:
        entries.append({"section": section, "datasets": list(dict.fromkeys(names))})
    if entries:
        write_atomic(path, json.dumps(entries, indent=2))
    elif path.is_file():
        path.unlink()


def paper_data_missing(data) -> list[str]:
    """The paper's registered datasets whose synthetic stand-ins ``data`` hold because their files are not in the
    cache (a stand-in chosen while the real files are there is not a gap)."""
    real = {stand_in: paper for paper, stand_in in datasets.PAPER_STAND_INS.items()}
    names = dict.fromkeys(real[base_name(ds.name)] for ds in data if base_name(ds.name) in real)
    return [name for name in names if not datasets.available(name)]


def read() -> list[dict]:
    """Every chapter's recorded gaps: ``chapter``, ``section``, ``datasets``, in chapter-name order."""
    build = os.environ.get(BUILD_ENV)
    rows = []
    for path in sorted(Path(build).glob("missing/*.json")) if build else []:
        rows += [{"chapter": path.stem, **entry} for entry in json.loads(path.read_text())]
    return rows


def toc_order() -> list[str] | None:
    """The chapters in the book's order, read from ``_toc.yml`` beside the package (None outside a checkout)."""
    import re

    toc = Path(__file__).resolve().parents[2] / "_toc.yml"
    return re.findall(r"file: notebooks/(\w+)", toc.read_text()) if toc.is_file() else None


def summary(rows: list[dict], order: list[str] | None = None) -> str:
    """The front page's note, as one Markdown paragraph (another page glues it inline): each chapter (a reference
    to its page) and section that ran without data, with the datasets it lacked, and the command that fills them;
    one sentence when nothing was missing.
    ``order`` lists the chapters in the book's order (others follow by name)."""
    if not rows:
        return "Every chapter of this build found the data it needs in the dataset cache."
    rank = {name: i for i, name in enumerate(order or [])}
    by_chapter: dict[str, list[dict]] = {}
    for row in sorted(rows, key=lambda r: (rank.get(r["chapter"], len(rank)), r["chapter"])):
        by_chapter.setdefault(row["chapter"], []).append(row)
    parts = []
    for name, entries in by_chapter.items():
        sections = "; ".join(f"{e['section']}, without {', '.join(e['datasets'])}" for e in entries)
        parts.append(f"{{ref}}`chapter-{name}` ({sections})")
    every = sorted({d for row in rows for d in row["datasets"]})
    return (f"**This build ran without some of its data.** {counted(len(every), 'registered dataset')} "
            f"{'was' if len(every) == 1 else 'were'} not in the dataset cache, so these chapters ran without them, "
            f"in whole or in part: {'; '.join(parts)}. `{COMMAND}` downloads and verifies every one of them, and "
            "`make book` then fills these pages.")


def _title(chapter: str) -> str:
    """A chapter's title, its page's first heading (its name where the source is not beside the package)."""
    source = Path(__file__).resolve().parents[2] / "notebooks" / f"{chapter}.md"
    if source.is_file():
        for line in source.read_text().splitlines():
            if line.startswith("# "):
                return line[2:].strip()
    return chapter


class Note:
    """The front page's note as HTML (an admonition whose links lead from ``book/`` to each chapter's page) and as
    text elsewhere; another page pastes it with ``{glue}`` and ``:doc:``, which keeps HTML but not Markdown."""

    def __init__(self, rows: list[dict], order: list[str] | None = None):
        self.rows, self.order = rows, order

    def _repr_html_(self) -> str:
        import html

        def esc(text):
            return html.escape(text)
        if not self.rows:
            body = f"<p>{esc(summary([]))}</p>"
        else:
            every = sorted({d for row in self.rows for d in row["datasets"]})
            items = []
            rank = {name: i for i, name in enumerate(self.order or [])}
            chapters = sorted({r["chapter"] for r in self.rows}, key=lambda c: (rank.get(c, len(rank)), c))
            for name in chapters:
                sections = "; ".join(f"{esc(r['section'])}, without {esc(', '.join(r['datasets']))}"
                                     for r in self.rows if r["chapter"] == name)
                items.append(f'<li><a href="../notebooks/{name}.html">{esc(_title(name))}</a>: {sections}</li>')
            body = (f"<p>{counted(len(every), 'registered dataset')} {'was' if len(every) == 1 else 'were'} not in "
                    "the dataset cache, so these chapters ran without them, in whole or in part:</p>"
                    f"<ul>{''.join(items)}</ul><p><code>{COMMAND}</code> downloads and verifies every one of them, "
                    "and <code>make book</code> then fills these pages.</p>")
        title = "This build ran without some of its data" if self.rows else "The data of this build"
        kind = "warning" if self.rows else "note"
        return f'<div class="admonition {kind}"><p class="admonition-title">{title}</p>{body}</div>'

    def __repr__(self) -> str:
        return summary(self.rows, self.order)
