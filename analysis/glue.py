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
