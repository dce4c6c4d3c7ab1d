"""Which plan each documented configuration gets (the methods page's table "Which kernel draws a cell").

The plan changes speed, never the law (tests/test_reference.py); this file pins the choices so that a change to a
threshold is deliberate and shows in the documentation.
"""

import pytest

from analysis.engine import Simulator
from analysis.engine.path import KernelPath, estimated_seconds, work
from analysis.errors import ParameterError
from analysis.data.synthetic import make_stand_in
from analysis.experiment.choices import REFERENCE

# (stand-in, sampler, K values, kernel, options of the alternative's plan) on the paper's grid, epsilon = 0.3
DOCUMENTED = [
    ("dices-synthetic", "S1", (1, 2), "by_item", {"pair_tables", "column_law"}),
    ("dices-synthetic", "S1", (5, 10), "by_item", {"pair_tables", "noise_tables", "rater_major"}),
    ("dices-synthetic", "S1", (40, 100), "by_item", {"noise_tables"}),
    ("dices-synthetic", "S2", (1, 2, 5, 10), "law", set()),
    ("dices-synthetic", "S2", (40, 60), "direct", {"masks", "noise_tables", "rater_loop"}),
    ("dices-synthetic", "S2", (80, 100), "counts", set()),
    ("d3code-synthetic", "S2", (1, 2, 3, 4), "law", set()),
    ("d3code-synthetic", "S2", (5, 6), "direct", {"pair_tables", "perturbation_tables", "masks", "rater_loop"}),
    ("d3code-synthetic", "S2", (10, 20, 60), "direct", {"masks", "noise_tables", "rater_loop"}),
    ("d3code-synthetic", "S2", (80, 100), "counts", set()),
    ("toxicity-synthetic", "S3", (2, 3, 4), "direct", {"pair_tables", "perturbation_tables", "masks", "rater_loop"}),
    ("toxicity-synthetic", "S3", (10, 20), "direct", {"masks", "noise_tables", "rater_loop"}),
    ("toxicity-synthetic", "S3", (40, 60, 100), "by_item", {"noise_tables", "rater_major"}),
]


def options(plan: KernelPath) -> set:
    return {name for name, value in vars(plan).items() if value is True and name != "null"}


@pytest.mark.parametrize("name, sampler, ks, kernel, expected", DOCUMENTED,
                         ids=[f"{d[0]}-{d[1]}-K{d[2][0]}" for d in DOCUMENTED])
def test_documented_configurations_get_their_plan(name, sampler, ks, kernel, expected):
    sim = Simulator(make_stand_in(name), sampler, **REFERENCE.engine())
    for k in ks:
        plan = sim.path(1000 // k, k, 0.3, null=False, perturbation=REFERENCE.perturbation)
        assert plan.kernel == kernel, k
        assert options(plan) - {"perturbation_tables"} == expected - {"perturbation_tables"}, (k, plan)


def test_s3_at_k1_gathers_and_defers_only_at_large_budgets():
    sim = Simulator(make_stand_in("toxicity-synthetic"), "S3", **REFERENCE.engine())
    assert {"gather", "defer"} <= options(sim.path(50000, 1, 0.3, null=True, perturbation=REFERENCE.perturbation))
    assert not {"masks", "rater_loop"} & options(sim.path(50000, 1, 0.3, null=True, perturbation=REFERENCE.perturbation))  # deferred slots use neither
    assert not {"gather", "defer"} & options(sim.path(100, 1, 0.3, null=True, perturbation=REFERENCE.perturbation))


def test_s1_draws_from_the_column_law_where_slots_outnumber_the_triples():
    sim = Simulator(make_stand_in("dices-synthetic"), "S1", **REFERENCE.engine())
    assert "column_law" in options(sim.path(10000 // 3, 3, 0.3, null=True, perturbation=REFERENCE.perturbation))
    assert "column_law" not in options(sim.path(2500 // 3, 3, 0.3, null=True, perturbation=REFERENCE.perturbation))
    assert "column_law" not in options(sim.path(50000, 1, 0.0, null=True, perturbation=REFERENCE.perturbation))  # no perturbation tables without noise


def test_s1_reads_labels_rater_by_rater_where_slots_are_many_for_the_items():
    sim = Simulator(make_stand_in("dices-synthetic"), "S1", **REFERENCE.engine())  # 350 items
    assert "rater_major" in options(sim.path(50000 // 40, 40, 0.3, null=True, perturbation=REFERENCE.perturbation))
    assert "rater_major" not in options(sim.path(2500 // 40, 40, 0.3, null=True, perturbation=REFERENCE.perturbation))


def test_forced_methods_that_cannot_serve_a_cell_say_what_to_use(crossed):
    with pytest.raises(ParameterError, match="method='counts'"):
        Simulator(crossed, "S2", method="law", **REFERENCE.engine()).path(10, 40, 0.3, null=False, perturbation=REFERENCE.perturbation)
    with pytest.raises(ParameterError, match="S2 only"):
        Simulator(crossed, "S1", method="counts", **REFERENCE.engine()).path(10, 2, 0.3, null=False, perturbation=REFERENCE.perturbation)
    with pytest.raises(ParameterError, match="S1 and S3"):
        Simulator(crossed, "S2", method="items", **REFERENCE.engine()).path(10, 2, 0.3, null=False, perturbation=REFERENCE.perturbation)


def test_the_cost_estimate_grows_with_the_work():
    sim = Simulator(make_stand_in("toxicity-synthetic"), "S3", **REFERENCE.engine())
    small, large = (sim.path(n, 10, 0.3, null=False, perturbation=REFERENCE.perturbation) for n in (100, 5000))
    assert work(large, sim.design, 5000, 10) == 50 * work(small, sim.design, 100, 10) == 3 * 5000 * 10
    assert estimated_seconds(large, sim.design, 5000, 10, 1000) > estimated_seconds(small, sim.design, 100, 10, 1000)
