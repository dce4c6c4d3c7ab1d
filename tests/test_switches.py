"""The switches through the grid: the smoothing, the averaging variants and the centred noise law each change the
numbers they should, and only those, and each has cache keys of its own; and the grid, the command line and the
chapters default to one set of them, the book's."""

import math

import numpy as np
import pytest

from analysis.__main__ import _parser
from analysis.data.annotations import from_table
from analysis.experiment.choices import BOOK, Choices
from analysis.experiment.grid import run
from analysis.engine.metrics import METRICS, averaged
from conftest import crossed_table


@pytest.fixture(scope="module")
def crossed():
    return from_table(crossed_table(n_items=30, n_raters=12), name="crossed")


REFERENCE = Choices()  # the reference choices, from which each test below moves one switch


def grid(ds, tmp_path, **options):
    chosen = dict(budgets=[60], ks=[1], epsilons=[0.3], n_samples=200, seed=3, cache_dir=tmp_path, progress=False,
                  perturbation=REFERENCE.perturbation, smoothing=REFERENCE.smoothing, averaging=REFERENCE.averaging)
    return run(ds, "S2", **{**chosen, **options}).set_index("metric")


def test_the_grid_and_the_command_line_default_to_the_books_choices(crossed, tmp_path):
    """One set of defaults: the grid without switches gives the numbers of the book's choices, bit for bit, and
    ``run``'s flags default to the same values."""
    plain = run(crossed, "S2", budgets=[60], ks=[2], epsilons=[0.3], n_samples=50, seed=3, progress=False,
                use_cache=False)
    book = grid(crossed, tmp_path, ks=[2], n_samples=50, perturbation=BOOK.perturbation, smoothing=BOOK.smoothing,
                averaging=BOOK.averaging).reset_index()
    assert list(plain["metric"]) == list(BOOK.metrics)
    assert plain["delta"].tolist() == book["delta"].tolist() and plain["p_value"].tolist() == book["p_value"].tolist()
    args = _parser().parse_args(["run", "--data", "x.csv", "--sampler", "S2"])
    assert (args.perturbation, args.smoothing, args.averaging) == (BOOK.perturbation, BOOK.smoothing, BOOK.averaging)


def test_the_smoothing_scales_kl_at_k_1_and_leaves_the_rest(crossed, tmp_path):
    """At K = 1 an item's KL is ln(1 + 1/s) / (1 + C s) when G's and the model's labels differ and 0 otherwise,
    so the two smoothings' KL deltas stand in the ratio of those numbers, replicate by replicate, while every
    other metric keeps its numbers to the bit (the same streams)."""
    default, nine = grid(crossed, tmp_path), grid(crossed, tmp_path, smoothing=1e-9)
    c = crossed.n_labels

    def unit(s):
        return math.log(1 + 1 / s) / (1 + c * s)

    assert nine.loc["kl_div", "delta"] == pytest.approx(default.loc["kl_div", "delta"] * unit(1e-9) / unit(1e-12),
                                                        rel=1e-6)
    others = [m for m in METRICS if m not in ("kl_div", "jsd")]
    assert (nine.loc[others, "delta"] == default.loc[others, "delta"]).all()
    assert (nine.loc[others, "p_value"] == default.loc[others, "p_value"]).all()


def test_averaging_variants_run_beside_the_eight(crossed, tmp_path):
    macro = grid(crossed, tmp_path, metrics=averaged("macro") + ("f1_micro",))
    default = grid(crossed, tmp_path)
    assert set(macro.index) == set(averaged("macro")) | {"f1_micro"}
    assert macro.loc["f1_micro", "delta"] == default.loc["accuracy", "delta"]  # micro F1 is accuracy
    assert macro.loc["accuracy", "delta"] == default.loc["accuracy", "delta"]
    assert macro.loc["recall_macro", "delta"] != default.loc["recall", "delta"]


def test_the_centred_noise_law_has_its_own_streams_and_numbers(crossed, tmp_path):
    symmetric = grid(crossed, tmp_path)
    centred = grid(crossed, tmp_path, perturbation="dirichlet-shares")
    assert not np.allclose(symmetric["delta"], centred["delta"])
    assert (centred["perturbation"] == "dirichlet-shares").all()


def test_every_other_entry_point_defaults_to_the_books_choices_or_to_a_named_set(crossed):
    """``calibrate`` and ``time_cells`` without choices run the book's (the numbers of ``choices=BOOK``, bit for bit,
    on the book's eight metrics); ``compare`` and ``plan`` run the sets declared for them beside the book's."""
    import inspect

    from analysis.experiment import calibration, timing
    from analysis.tools.compare import compare
    from analysis.tools import power, study_power

    small = dict(budgets=(60,), ks=(1, 3), n_samples=60, seed=3)
    plain = calibration.calibrate(crossed, "S2", **small)
    book = calibration.calibrate(crossed, "S2", choices=BOOK, **small)
    reference = calibration.calibrate(crossed, "S2", choices=REFERENCE, **small)
    assert plain.cells.equals(book.cells) and plain.p_values.equals(book.p_values)
    assert set(plain.cells["metric"]) == set(BOOK.metrics) != set(reference.cells["metric"])
    assert inspect.signature(timing.time_cells).parameters["choices"].default is BOOK
    assert inspect.signature(power.plan).parameters["perturbation"].default is None  # resolved by its test:
    planned = power.plan(crossed, epsilon=0.3, ns=[20], ks=[3], n_samples=20, metrics=["accuracy"])
    assert planned.provenance["parameters"]["perturbation"] == BOOK.perturbation == study_power.LAW
    assert power.Planner.__dataclass_fields__["perturbation"].default == BOOK.perturbation
    dirichlet = power.plan(crossed, epsilon=0.3, ns=[20], ks=[3], n_samples=20, metrics=["accuracy"],
                           perturbation="dirichlet")  # by name
    assert dirichlet.provenance["parameters"]["perturbation"] == "dirichlet"
    assert not np.allclose(dirichlet.designs["delta"], planned.designs["delta"])  # another law, another effect
    assert inspect.signature(compare).parameters["averaging"].default == BOOK.averaging


def test_the_methods_pages_switch_table_gives_the_books_setting_and_only_values_that_exist():
    """The methods page lists each switch with the book's setting first (read from BOOK here, so the page cannot
    name another) and then values a chapter accepts."""
    from dataclasses import fields
    from pathlib import Path

    from analysis.engine.metrics import AVERAGINGS
    from analysis.engine.rule import PERTURBATIONS
    from analysis.engine.split import NULL_MIXINGS
    from analysis.experiment.choices import DICES_LABELS, GRANULARITIES, STAND_IN_VERSIONS

    text = (Path(__file__).resolve().parents[1] / "book" / "methods.md").read_text()
    rows = {cells[0].strip("` ").split("`")[0]: cells[1:] for cells in
            ([c.strip() for c in line.strip("|").split("|")] for line in text.splitlines()
             if line.startswith("| `"))}
    allowed = {"averaging": AVERAGINGS, "perturbation": PERTURBATIONS, "granularity": GRANULARITIES,
               "stand_ins": STAND_IN_VERSIONS, "dices_labels": tuple(DICES_LABELS), "null_mixing": NULL_MIXINGS}
    for switch in (f.name for f in fields(Choices)):
        setting, others = rows[switch]
        shown = setting.split("`")[1]
        assert (float(shown) == BOOK.smoothing) if switch == "smoothing" else shown == getattr(BOOK, switch), switch
        if switch in allowed:
            named = others.split("`")[1::2]
            assert named and set(named) <= set(allowed[switch]) - {getattr(BOOK, switch)}, (switch, others)
    rq2 = (Path(__file__).resolve().parents[1] / "notebooks" / "rq2.md").read_text()
    assert f"\nappendix_epsilon = {rows['appendix_epsilon'][0].strip('`')} " in rq2  # RQ2's own default


def test_a_set_of_choices_names_every_setting_the_engine_and_the_grid_take_from_it():
    """``Choices.engine()`` holds exactly the Simulator's settings without a default (each a choice, none with a
    default of its own), and ``Choices.grid()`` only keywords of ``grid.run``: a switch added to the engine is
    then passed on by every entry point that builds a simulator or runs a grid from a set of choices."""
    import inspect

    from analysis.engine import Simulator
    from analysis.experiment import grid

    required = {name for name, p in inspect.signature(Simulator.__init__).parameters.items()
                if p.default is inspect.Parameter.empty and name not in ("self", "ds", "sampler")}
    assert set(BOOK.engine()) == required
    assert set(BOOK.grid()) <= set(inspect.signature(grid.run).parameters)
    assert {k: getattr(BOOK, k) for k in BOOK.grid()} == BOOK.grid()


def test_the_choices_in_words_tie_the_label_granularity_to_the_stand_ins():
    """A page of real data shows the choices too: the binary split is worded as the stand-ins', never as if the
    real files were binarised."""
    from analysis.experiment.choices import BOOK, Choices

    assert "the version 2 stand-ins with the published binary split" in BOOK.label()
    assert "version 2 stand-ins with their own labels" in Choices().label() and "binary" not in Choices().label()


def test_the_choices_in_words_name_what_each_switch_changes():
    """The banner's words carry no code notation ("s = 1e-09") and name each switch's subject."""
    from dataclasses import replace

    from analysis.experiment.choices import BOOK, REFERENCE

    assert BOOK.label().startswith("precision, recall and F1 macro-averaged, KL-Div and JSD smoothed by 1e-09, "
                                   "one-label noise for B")
    assert "weighted-averaged" in REFERENCE.label() and "Dirichlet(1/C) noise for B" in REFERENCE.label()
    assert "s = " not in BOOK.label() and "macro over all labels" not in BOOK.label()
    assert "macro-averaged over all labels" in replace(BOOK, averaging="macro-all").label()
    assert "null's columns mixed by pairs" in replace(BOOK, null_mixing="pairs").label()
    from analysis.engine.rule import PERTURBATIONS
    from analysis.experiment.choices import NOISE_WORDS

    for law in PERTURBATIONS:  # the banner names each law as the why page does
        assert f"{NOISE_WORDS[law]} for B" in replace(BOOK, perturbation=law).label()
