"""Studies with R raters drawn from a population fitted to a pilot: their designs per sampler, their streams, and
the numbers of raters a plan refuses."""

import numpy as np
import pandas as pd
import pytest

from analysis.data.population import Population
from analysis.engine.samplers import raters_available
from analysis.errors import ParameterError
from analysis.tools.modelled import check_plan_raters, study

MODEL = Population((0, 1, 2), (0.5, 0.3, 0.2), 3.0, 0.3, (0.3, 0.3))


def test_under_s1_a_study_is_fully_crossed_with_r_raters(crossed):
    one = study(MODEL, crossed, "S1", 50, 24, seed=0)
    assert one.topology.kind == "fully crossed" and (one.n_items, one.n_raters) == (50, 24)
    assert raters_available(one, "S1") == 24 and one.name == "crossed-R24"
    assert study(MODEL, crossed, "S1", 50, 24, seed=0).sha256 == one.sha256
    others = {study(MODEL, crossed, "S1", 50, 24, seed=s, panel=p).sha256 for s, p in ((1, 0), (0, 1), (0, 2))}
    assert len(others | {one.sha256}) == 4  # every seed and panel its own raters and items


def test_under_s3_a_study_keeps_the_pilots_batches_with_r_raters_each(batched):
    """The batched fixture: batches of 6 items, 4 raters each of a pool of 200. A study with 8 raters per batch has
    batches of 6 items, whole, and raters that join as many batches on average as the pilot's do."""
    one = study(MODEL, batched, "S3", 40, 8, seed=0)
    batch = one.topology.item_batch
    assert one.topology.kind == "batched" and np.all(np.bincount(batch) == 6) and one.n_items == 42
    per_batch = pd.DataFrame({"b": batch[one.item], "r": one.rater}).drop_duplicates()
    assert (per_batch.groupby("b").size() == 8).all() and raters_available(one, "S3") == 8
    pilot = pd.DataFrame({"b": batched.topology.item_batch[batched.item], "r": batched.rater}).drop_duplicates()
    assert per_batch.groupby("r").size().mean() == pytest.approx(pilot.groupby("r").size().mean(), abs=0.05)


@pytest.mark.parametrize("raters, sampler, ks, message", [
    ([1, 12], "S1", None, "R must be an integer >= 2"),
    ([3, 12], "S1", [5, 10], "R = 3 (--raters) is below every K of --ks (5, 10)"),
    ([12], "S2", None, "S2 draws an item's raters afresh"),
    ([], "S1", None, "needs one number of raters or more")])
def test_bad_numbers_of_raters_are_refused(raters, sampler, ks, message):
    with pytest.raises(ParameterError, match=message.replace("(", r"\(").replace(")", r"\)")):
        check_plan_raters(raters, sampler, ks)


def test_numbers_of_raters_are_taken_once_each_in_order():
    assert check_plan_raters([24, 6, 12, 6], "S3", [2, 6]) == [6, 12, 24]


def test_pooled_power_on_one_study_is_the_planners_with_a_bootstrap_error(crossed):
    """One study with all the replicates is the planner's own cell at the same seed; the error is a bootstrap's,
    zero only where every replicate or none is significant."""
    from analysis.experiment.choices import BOOK
    from analysis.experiment.grid import Cell
    from analysis.tools.modelled import pooled_power
    from analysis.tools.power import Planner

    found, error = pooled_power([crossed], "S1", Cell("S1", BOOK.perturbation, 0.5, 20 * 4, 4), 60, 3,
                                np.random.default_rng(0))
    assert np.array_equal(found, Planner(crossed, "S1", 60, 3).cell(20, 4, 0.5)[0])
    assert np.all((error > 0) | (found == 0) | (found == 1)) and np.all(error < 0.5)
