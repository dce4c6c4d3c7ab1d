"""Text a chapter glues for other pages (myst-nb's ``glue``): Markdown, or plain text without quotes."""

from __future__ import annotations


class PlainText(str):
    """A string whose text/plain form has no quotes, for ``{glue:text}`` from another page (``doc::key``)."""

    def __repr__(self) -> str:
        return str(self)


def glue_text(**values) -> None:
    """Glue strings as Markdown (for ``{glue:md}`key:myst```) and numbers as they are."""
    from IPython.display import Markdown
    from myst_nb import glue

    for key, value in values.items():
        plain = isinstance(value, PlainText) or not isinstance(value, str)
        glue(key, value if plain else Markdown(value), display=False)


def finding(result, key: str, title: str = "Finding") -> None:
    """Glue a :class:`~analysis.paper.verdicts.Finding`: the box as ``<key>`` (Markdown), the verdict as
    ``<key>_verdict``, our numbers as ``<key>_ours``, the answer in words as ``<key>_answer``, and the intro's row as plain text: ``<key>_row_claim``,
    ``_row_paper``, ``_row_ours``, ``_row_verdict``."""
    from IPython.display import Markdown
    from myst_nb import glue

    glue(key, Markdown(result.markdown(title)), display=False)
    glue(f"{key}_verdict", Markdown(result.verdict_phrase()), display=False)
    glue(f"{key}_ours", Markdown(result.ours), display=False)
    glue(f"{key}_answer", Markdown(result.answer()), display=False)
    for column, text in result.row().items():
        glue(f"{key}_row_{column}", PlainText(text), display=False)
