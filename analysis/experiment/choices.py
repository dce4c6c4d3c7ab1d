"""The global choices the paper leaves unstated, and the one set of defaults every entry point shares.

:class:`Choices` holds one value of each switch of the methods page's "choices the paper leaves unstated": the
averaging of precision, recall and F1, the KL/JSD smoothing, the noise law, how the null mixes A's and B's
columns, and three about the stand-ins. Its field defaults are the reference choices, written down before the
paper's numbers were read. :data:`BOOK` is the
set the why-chapter infers from the paper's own cells (a test checks that the inference gives it); it is the
default of every entry point: the chapters, :func:`analysis.experiment.grid.run`, ``python -m analysis run`` (with
``--explain``), :func:`~analysis.experiment.calibration.calibrate` and :func:`~analysis.experiment.timing.time_cells`.
``compare`` and ``plan`` take them too (``plan`` checked under the book's noise law: the methods page, "Planning a
study").
:func:`selected` resolves a metric selection (``"all"``) through a set of choices. The engine's signatures carry no
default noise law or smoothing: they take the choice resolved here.

Imports the data and the engine; nothing above.
"""

from __future__ import annotations

from dataclasses import dataclass

from analysis.data import synthetic
from analysis.engine.rule import PERTURBATIONS, check_perturbation
from analysis.engine.metrics import SMOOTHINGS, averaged, check_metrics, check_smoothing
from analysis.engine.split import NULL_MIXINGS, check_null_mixing
from analysis.errors import ParameterError

GRANULARITIES = ("levels", "binary")  # a dataset's own labels, or the published binary split (stand-ins only)
# DICES's label set: its three labels, or Unsure merged into No or into Yes (stand-ins only)
DICES_LABELS = {"three": "", "unsure-as-no": "-unsure-no", "unsure-as-yes": "-unsure-yes"}
STAND_IN_VERSIONS = ("v2", "v3")


#: Each noise law of B's perturbation in words, on every page that names one (the why page's switch values too).
NOISE_WORDS = {"dirichlet": "Dirichlet(1/C) noise", "uniform": "uniform noise, response by response",
               "dirichlet-shares": "noise centred on the label shares", "one-label": "one-label noise"}


@dataclass(frozen=True)
class Choices:
    """One value of each global switch the paper leaves unstated (the methods page): ``averaging`` of precision, recall and F1
    (:data:`analysis.engine.metrics.AVERAGINGS`), the KL/JSD ``smoothing``, the noise law (``perturbation``), how the
    null mixes A's and B's rater columns (``null_mixing``, :data:`analysis.engine.split.NULL_MIXINGS`), the label
    ``granularity`` of D3code's and Toxicity's stand-ins, DICES's label set (``dices_labels``) and the ``stand_ins``
    version (``v3``: read from the paper's K = 1 cells)."""

    averaging: str = "weighted"
    smoothing: float = SMOOTHINGS[0]
    perturbation: str = PERTURBATIONS[0]
    null_mixing: str = NULL_MIXINGS[0]
    granularity: str = "levels"
    stand_ins: str = "v2"
    dices_labels: str = "three"

    def __post_init__(self):
        averaged(self.averaging), check_smoothing(self.smoothing), check_perturbation(self.perturbation)
        check_null_mixing(self.null_mixing)
        for name, value, allowed in (("granularity", self.granularity, GRANULARITIES),
                                     ("stand_ins", self.stand_ins, STAND_IN_VERSIONS),
                                     ("dices_labels", self.dices_labels, tuple(DICES_LABELS))):
            if value not in allowed:
                raise ParameterError(f"unknown {name} {value!r}; choose one of {', '.join(allowed)}")

    @property
    def metrics(self) -> tuple[str, ...]:
        """The eight metrics under this averaging (:func:`analysis.engine.metrics.averaged`)."""
        return averaged(self.averaging)

    def engine(self) -> dict:
        """The settings a :class:`~analysis.engine.Simulator` takes from these choices, by name: a switch that changes
        the engine's numbers is added here, and reaches every simulator built from a set of choices."""
        return {"smoothing": self.smoothing, "null_mixing": self.null_mixing}

    def grid(self) -> dict:
        """The arguments :func:`analysis.experiment.grid.run` takes from these choices, by name."""
        return {"perturbation": self.perturbation, "averaging": self.averaging, **self.engine()}

    def dataset(self, name: str) -> str:
        """The stand-in these choices put in place of the version 2 stand-in ``name`` (v3 before binary); the name
        itself where the variant would generate the same data (v3 of a dataset without K = 1 cells), is not a
        stand-in with that variant, or is not a stand-in at all."""
        for wanted, suffix in ((self.stand_ins == "v3", synthetic.V3),
                               (self.granularity == "binary", synthetic.BINARY),
                               (self.dices_labels != "three", DICES_LABELS[self.dices_labels])):
            variant = name + suffix
            if wanted and variant in synthetic.STAND_INS and not synthetic.generates_v2(variant):
                return variant
        return name

    def label(self) -> str:
        """The choices in words a reader without the code follows, e.g. ``precision, recall and F1 macro-averaged,
        KL-Div and JSD smoothed by 1e-09, one-label noise for B, the version 2 stand-ins with their own labels``
        (the granularity reads only on stand-ins: a dataset's own files keep their labels)."""
        return (f"precision, recall and F1 {self.averaging.replace('macro-all', 'macro')}-averaged"
                + (" over all labels" if self.averaging == "macro-all" else "")
                + f", KL-Div and JSD smoothed by {self.smoothing:g}, {NOISE_WORDS[self.perturbation]} for B, "
                f"the version {self.stand_ins.removeprefix('v')} stand-ins with "
                f"{'the published binary split' if self.granularity == 'binary' else 'their own labels'}"
                + ("" if self.dices_labels == "three" else f", DICES {self.dices_labels.replace('-', ' ')}")
                + ("" if self.null_mixing == NULL_MIXINGS[0] else f", the null's columns mixed by {self.null_mixing}"))


#: The one set of defaults, declared once, the book's choices (macro averaging, s = 1e-9, the one-label noise law,
#: the binary stand-ins), which the why-chapter infers from the paper's own cells. The chapters, ``grid.run`` and
#: ``python -m analysis run`` default to it; a chapter's parameters, a function's arguments or the command line's
#: flags override any one of them by name.
BOOK = Choices(averaging="macro", smoothing=1e-9, perturbation="one-label", granularity="binary")

#: The reference choices (the field defaults): what a results table that predates a switch's column was run with.
REFERENCE = Choices()

def selected(metrics, choices: Choices) -> tuple[str, ...]:
    """A metric selection under ``choices``: ``"all"`` (or None) is the eight of the methods page averaged as
    ``choices`` say; names or labels of metrics of the registry otherwise, in registry order."""
    every = metrics is None or metrics == "all" or (not isinstance(metrics, str) and list(metrics) == ["all"])
    return choices.metrics if every else check_metrics(metrics)

#: How a plurality tie is read. The book's simulations keep the paper's reading (the lowest label code wins, as the
#: kernels vote); ``compare`` scores two real systems with each tied label given an equal share of the item's vote,
#: so that relabelling the classes leaves every score unchanged (the methods page, "Comparing two real systems").
TIES = {"simulations": "lowest code", "compare": "shared"}
