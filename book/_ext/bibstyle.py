"""The bibliography's style: pybtex's alpha, with the letter that tells two papers of one year apart (a ``year`` of
``2026a``, ``2026b``) kept after the year's two digits in the label (``PKWH26b``, not ``PKWH6b``)."""

from string import ascii_lowercase

from pybtex.plugin import register_plugin
from pybtex.style.formatting.alpha import Style as Alpha
from pybtex.style.labels.alpha import LabelStyle as AlphaLabels


class YearLetterLabels(AlphaLabels):
    def format_label(self, entry):
        label, year = super().format_label(entry), entry.fields.get("year", "")
        digits = year.rstrip(ascii_lowercase)
        return label[:-2] + digits[-2:] + year[len(digits):] if digits != year else label


class YearLetterStyle(Alpha):
    default_label_style = YearLetterLabels


def setup(app):
    register_plugin("pybtex.style.formatting", "alpha_year_letter", YearLetterStyle)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
