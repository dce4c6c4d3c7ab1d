"""Every plan against the separate reference (METHOD sections 2-5): same law of all eight deltas.

:mod:`analysis.engine.reference` draws replicates one at a time in plain numpy, from the annotation table, with
nothing from the kernels. For each configuration below, a plan's kernel and the reference draw the alternative
and the null on independent streams, and every metric must agree:

- its mean within ``Z`` standard errors of the difference, ``sqrt(v_plan / n_plan + v_ref / n_ref)``;
- its spread: ``log(sd_plan / sd_ref)`` within ``Z`` times its standard error, ``sqrt((kurt_plan - 1) / (4 n_plan)
  + (kurt_ref - 1) / (4 n_ref))`` (the delta method for a sample variance, with each sample's own kurtosis, since
  deltas of discrete metrics are far from normal).

``Z = 4.5`` bounds a correct engine's chance to fail one comparison by 7e-6, about 0.5 % over every comparison of
this file; the seeds are fixed, so a run is deterministic. The configurations reach every kernel and every option
of :class:`analysis.engine.path.KernelPath`, which the last test checks.
"""

import zlib
from functools import lru_cache

import numpy as np
import pytest

from analysis.data.annotations import from_table
from analysis.engine import Simulator, lookup, path
from analysis.engine.path import KERNELS, KernelPath
from reference import reference_deltas
from analysis.engine.metrics import ALL_METRICS, METRICS
from analysis.experiment.choices import REFERENCE
from conftest import batched_table, crossed_table, sparse_table

Z = 4.5
N_PLAN, N_REF = 2000, 400

DATA = {
    "crossed": lambda: from_table(crossed_table(n_items=30, n_raters=12), name="crossed"),
    "sparse": lambda: from_table(sparse_table(n_items=40, n_labels=4), name="sparse"),
    "ragged": lambda: from_table(batched_table(ragged=True), batch="batch", name="ragged"),
    "ragged5": lambda: from_table(batched_table(ragged=True, n_labels=5), batch="batch", name="ragged5"),
}

# (sampler, data, method, n, k, epsilon, rule, patches): patches shrink a module's limit to reach a plan's option
CONFIGURATIONS = [
    ("S1", "crossed", "auto", 20, 5, 0.3, "dirichlet", ()),  # by item, perturbation and noise tables
    ("S1", "crossed", "items", 20, 1, 0.3, "uniform", ()),  # by item, one perturbable response
    ("S1", "crossed", "auto", 200, 1, 0.3, "uniform", ()),  # by item, the column law
    ("S1", "crossed", "auto", 500, 2, 0.3, "dirichlet", ()),  # by item, the column law with its tables
    ("S1", "crossed", "items", 20, 5, 0.3, "dirichlet", (("path", "PAIR_ROWS", 0),)),  # by item, no pair tables
    ("S1", "crossed", "items", 20, 6, 0.1, "uniform", (("path", "BY_RATER_FROM", 1e9),)),  # labels item by item
    ("S1", "crossed", "responses", 20, 3, 0.3, "dirichlet", ()),  # direct, response by response
    ("S1", "crossed", "tables", 20, 3, 0.3, "dirichlet", ()),  # direct: perturbation tables, masks, rater loop
    ("S1", "crossed", "tables", 20, 4, 0.3, "dirichlet", (("path", "ROW_TABLE_ENTRIES", 0),)),  # noise tables
    ("S2", "sparse", "auto", 20, 2, 0.3, "dirichlet", ()),  # the slot law
    ("S2", "sparse", "law", 300, 1, 0.3, "uniform", ()),  # the slot law as a chain of binomials
    ("S2", "sparse", "counts", 20, 3, 0.3, "dirichlet", ()),  # counts, alias tables
    ("S2", "sparse", "counts", 20, 6, 0.3, "uniform", (("path", "TABLE_ENTRIES", 0),)),  # counts, no alias tables
    ("S2", "sparse", "tables", 20, 6, 0.3, "dirichlet", (("path", "PAIR_ROWS", 0),)),  # direct, packed counts
    ("S3", "ragged", "auto", 24, 3, 0.3, "dirichlet", ()),  # direct on ragged batches
    ("S3", "ragged", "items", 24, 4, 0.3, "uniform", ()),  # by item on ragged batches
    ("S3", "ragged", "tables", 240, 1, 0.3, "dirichlet", ()),  # direct, slots gathered, K = 1 deferred
    ("S3", "ragged5", "auto", 24, 7, 0.3, "dirichlet", ()),  # direct, five labels: pair and perturbation tables
    ("S4", "sparse", "auto", 20, 5, 0.3, "dirichlet", ()),  # pigeonhole: raters shared across a sparse table
    ("S4", "sparse", "auto", 20, 5, 0.3, "dirichlet", (("path", "WALK_COST", 1e9), ("path", "TAIL_COST", 1e9))),
    # ... read by the whole stream, to the last column
    ("S4", "sparse", "auto", 20, 5, 0.3, "dirichlet", (("path", "WALK_COST", 1e9), ("path", "TAIL_COST", 0.3))),
    # ... by the whole stream until 9 items are short, then by those items' walk
    ("S4", "ragged", "auto", 24, 1, 0.3, "uniform", ()),  # pigeonhole on ragged batches, one response
    ("S4", "sparse", "auto", 400, 1, 0.3, "dirichlet", ()),  # K = 1, ten slots an item: triples, deferred
    ("S4", "sparse", "auto", 400, 1, 0.3, "uniform", (("path", "WALK_COST", 0.0),)),  # ... read by the items' walk
    ("S4", "sparse", "auto", 400, 1, 0.0, "uniform", ()),  # ... unperturbed: triples, not deferred
    ("S4", "sparse", "auto", 800, 2, 0.3, "dirichlet", ()),  # perturbation tables, slots counted per outcome
    ("S4", "sparse", "auto", 200, 4, 0.1, "uniform", (("path", "PERTURB_ENTRIES", 0),)),  # slots split on keeping all
    ("S4", "sparse", "auto", 20, 12, 0.3, "dirichlet", ()),  # B's responses thinned by masks, noise tables
    ("S4", "sparse", "auto", 20, 12, 0.3, "dirichlet", (("path", "PAIR_ROWS", 0),)),  # ... counts packed
    ("S4", "sparse", "auto", 20, 12, 0.3, "dirichlet", (("path", "MASK_WORD", 0),)),  # replacements per label
    ("S4", "sparse", "auto", 20, 12, 0.3, "uniform", ()),  # ... each replaced by another label
    ("S4", "sparse", "auto", 100, 5, 0.0, "uniform", ()),  # unperturbed: an item's slots added once
]
# The noise law centred on the label shares (METHOD section 12) through every plan that the Dirichlet rule takes.
# ... and the one-label law (METHOD section 3), the Dirichlet's limit of a vanishing concentration.
CONFIGURATIONS += [config[:6] + (rule,) + config[7:] for rule in ("dirichlet-shares", "one-label")
                   for config in CONFIGURATIONS if config[6] == "dirichlet"]
MODULES = {"path": path, "lookup": lookup}


@lru_cache(maxsize=None)
def reference(data: str, sampler: str, n: int, k: int, epsilon: float, rule: str, null: bool) -> np.ndarray:
    """Reference replicates of one cell, drawn once for every plan that is compared with them."""
    seed = zlib.crc32(repr((data, sampler, n, k, epsilon, rule, null)).encode())
    return reference_deltas(DATA[data](), sampler, n, k, epsilon, N_REF, np.random.default_rng(seed), null, rule)


def same_law(got: np.ndarray, ref: np.ndarray, metrics=METRICS) -> list[str]:
    """The metrics whose mean or spread differs beyond the tolerances of the module docstring."""
    failed = []
    for m, metric in enumerate(metrics):
        a, b = got[:, m], ref[:, m]
        se = np.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))
        if abs(a.mean() - b.mean()) > Z * se + 1e-12:
            failed.append(f"{metric} mean {a.mean():.5f} vs {b.mean():.5f} (se {se:.5f})")
        if a.std() > 0 and b.std() > 0:
            kurt = [((x - x.mean()) ** 4).mean() / x.var() ** 2 for x in (a, b)]
            se_log = np.sqrt((kurt[0] - 1) / (4 * len(a)) + (kurt[1] - 1) / (4 * len(b)))
            if abs(np.log(a.std() / b.std())) > Z * se_log:
                failed.append(f"{metric} sd {a.std():.5f} vs {b.std():.5f}")
        elif a.std() != b.std():
            failed.append(f"{metric}: one side never varies")
    return failed


def planned(monkeypatch, sampler, data, method, n, k, epsilon, rule, patches, null) -> tuple[Simulator, KernelPath]:
    for module, name, value in patches:
        monkeypatch.setattr(MODULES[module], name, value)
    sim = Simulator(DATA[data](), sampler, method=method, **REFERENCE.engine())
    return sim, sim.path(n, k, epsilon, null, rule)


@pytest.mark.parametrize("null", [False, True], ids=["alternative", "null"])
@pytest.mark.parametrize("config", CONFIGURATIONS, ids=lambda c: f"{c[0]}-{c[2]}-n{c[3]}-k{c[4]}-{c[6]}")
def test_every_plan_draws_the_reference_law(monkeypatch, config, null):
    sampler, data, method, n, k, epsilon, rule, patches = config
    sim, cell = planned(monkeypatch, *config, null)
    got = sim.replicates(n, k, epsilon, N_PLAN, np.random.default_rng(17), null=null, perturbation=rule)
    failed = same_law(got, reference(data, sampler, n, k, epsilon, rule, null))
    assert not failed, f"{cell.describe()}: {failed}"


def test_the_configurations_reach_every_kernel_and_every_option(monkeypatch):
    reached = set()
    for config in CONFIGURATIONS:
        with monkeypatch.context() as patch:
            _, cell = planned(patch, *config, True)
        reached.add(cell.kernel)
        reached.update(name for name, value in vars(cell).items() if value is True and name != "null")
    options = {name for name, value in vars(KernelPath("direct", False)).items() if value is False and name != "null"}
    assert reached >= set(KERNELS) | options, set(KERNELS) | options - reached


@pytest.mark.parametrize("sampler, data, k, epsilon, rule", [
    ("S1", "crossed", 1, 0.3, "uniform"), ("S1", "crossed", 3, 0.1, "dirichlet"), ("S1", "crossed", 6, 0.3, "dirichlet"),
    ("S1", "crossed", 30, 0.3, "dirichlet"), ("S3", "ragged", 4, 0.1, "uniform"), ("S3", "ragged", 30, 0.3, "dirichlet"),
])
def test_reading_labels_rater_by_rater_gives_the_same_draws(monkeypatch, sampler, data, k, epsilon, rule):
    """The by-item kernel's two ways of counting a group's labels give the same counts, hence the same replicates
    bit for bit (ragged batches: missing labels; small epsilon: slots that list their perturbable responses)."""
    n = 24
    runs = []
    for threshold in (0.0, 1e9):
        monkeypatch.setattr(path, "BY_RATER_FROM", threshold)
        sim = Simulator(DATA[data](), sampler, method="items", **REFERENCE.engine())
        for null in (False, True):
            assert sim.path(n, k, epsilon, null, rule).rater_major == (threshold == 0.0)
            runs.append(sim.draw(n, k, epsilon, 300, np.random.default_rng(5), null, rule))
    for with_raters, item_by_item in zip(runs[:2], runs[2:]):
        assert np.array_equal(with_raters.deltas, item_by_item.deltas)
        assert np.array_equal(with_raters.confusion, item_by_item.confusion)


def _skewed():
    table = crossed_table(n_items=30, n_raters=12)
    table["label"] = np.where(np.arange(len(table)) % 10 < 8, 0, table["label"])  # label 0 on most ratings
    return from_table(table, name="skewed")


@pytest.mark.parametrize("data, k, epsilon, other", [
    (_skewed, 5, 0.8, "dirichlet-shares"),  # labels far from equal shares: the centred prior differs
    (lambda: from_table(crossed_table(n_items=30, n_raters=12), name="crossed"), 10, 0.5, "one-label"),
], ids=["centred prior", "one label"])
def test_the_comparison_tells_another_noise_law_from_the_dirichlet(data, k, epsilon, other):
    """Power: the Dirichlet(1/C) rule's replicates pass against their own reference and fail against another law's
    (the prior centred on skewed label shares; one label per slot, which at K = 10 moves B's plurality far more), so
    the configurations above test each law."""
    ds = data()
    sim = Simulator(ds, "S2", method="counts", **REFERENCE.engine())
    got = sim.replicates(20, k, epsilon, N_PLAN, np.random.default_rng(3), null=False, perturbation="dirichlet")
    own = reference_deltas(ds, "S2", 20, k, epsilon, N_REF, np.random.default_rng(4), False, "dirichlet")
    theirs = reference_deltas(ds, "S2", 20, k, epsilon, N_REF, np.random.default_rng(4), False, other)
    assert not same_law(got, own)
    assert same_law(got, theirs)


@pytest.mark.parametrize("null", [False, True], ids=["alternative", "null"])
@pytest.mark.parametrize("rule", ["dirichlet", "uniform"])
@pytest.mark.parametrize("walk_cost, tail_cost", [(0.0, 1.0), (1e9, 1e9), (1e9, 0.125)],
                         ids=["items' walk", "whole stream", "stream then walk"])
@pytest.mark.parametrize("n, k", [(20, 5), (200, 1)], ids=["k5", "k1"])
def test_s4_has_s1s_law_on_a_fully_crossed_table(monkeypatch, null, rule, walk_cost, tail_cost, n, k):
    """METHOD section 2: on a fully crossed table every item's first K' raters in the stream are the stream's
    first K', so S4 draws S1's replicates: held to S1's reference, as S1's own plans are (every way of reading)."""
    monkeypatch.setattr(path, "WALK_COST", walk_cost)
    monkeypatch.setattr(path, "TAIL_COST", tail_cost)
    got = Simulator(DATA["crossed"](), "S4", **REFERENCE.engine()).replicates(n, k, 0.3, N_PLAN, np.random.default_rng(23), null=null,
                                                         perturbation=rule)
    assert not same_law(got, reference("crossed", "S1", n, k, 0.3, rule, null))


def test_s4_keeps_raters_that_s2_treats_as_new_people():
    """Power of the comparison: on a sparse table S4's replicates spread wider than S2's (a rater's leaning is
    shared by every item they rated), so the S4 configurations above do tell the two laws apart."""
    got = Simulator(DATA["sparse"](), "S4", **REFERENCE.engine()).replicates(20, 5, 0.3, N_PLAN, np.random.default_rng(29), null=False, perturbation=REFERENCE.perturbation)
    failed = same_law(got, reference("sparse", "S2", 20, 5, 0.3, "dirichlet", False))
    assert len(failed) >= 2 and all(" sd " in f for f in failed), failed


# One plan of each kernel and of each way a kernel draws the null's H (the column law, the slot law and its chain,
# gathered and deferred slots, the pigeonhole's tables and masks), for the null mixed pair by pair.
PAIRED = [CONFIGURATIONS[i] for i in (0, 3, 7, 9, 10, 11, 14, 16, 18, 22, 25, 27)]


@pytest.mark.parametrize("config", PAIRED, ids=lambda c: f"{c[0]}-{c[2]}-n{c[3]}-k{c[4]}-{c[6]}")
def test_every_kernel_draws_the_reference_law_of_the_null_mixed_pair_by_pair(monkeypatch, config):
    sampler, data, method, n, k, epsilon, rule, patches = config
    for module, name, value in patches:
        monkeypatch.setattr(MODULES[module], name, value)
    sim = Simulator(DATA[data](), sampler, method=method, smoothing=REFERENCE.smoothing, null_mixing="pairs")
    got = sim.replicates(n, k, epsilon, N_PLAN, np.random.default_rng(37), null=True, perturbation=rule)
    seed = zlib.crc32(repr((data, sampler, n, k, epsilon, rule, "pairs")).encode())
    ref = reference_deltas(DATA[data](), sampler, n, k, epsilon, N_REF, np.random.default_rng(seed), True, rule,
                           null_mixing="pairs")
    failed = same_law(got, ref)
    assert not failed, f"{sim.path(n, k, epsilon, True, rule).describe()}: {failed}"


def test_the_paired_plans_reach_every_kernel():
    assert {Simulator(DATA[c[1]](), c[0], method=c[2], smoothing=REFERENCE.smoothing,
                      null_mixing="pairs").path(c[3], c[4], c[5], True, c[6]).kernel for c in PAIRED} == set(KERNELS)


@pytest.mark.parametrize("config", CONFIGURATIONS[:22], ids=lambda c: f"{c[0]}-{c[2]}-n{c[3]}-k{c[4]}-{c[6]}")
def test_every_plan_draws_the_reference_law_of_every_metric_at_the_other_smoothing(monkeypatch, config):
    """METHOD section 12's switches through every plan: the registry's every metric (macro and micro averages,
    divergences in bits) with the smoothing 1e-9, under the null (whose law involves every part of a plan)."""
    sampler, data, method, n, k, epsilon, rule, patches = config
    for module, name, value in patches:
        monkeypatch.setattr(MODULES[module], name, value)
    sim = Simulator(DATA[data](), sampler, method=method, smoothing=1e-9, null_mixing=REFERENCE.null_mixing, metrics=ALL_METRICS)
    got = sim.replicates(n, k, epsilon, N_PLAN, np.random.default_rng(19), null=True, perturbation=rule)
    seed = zlib.crc32(repr((data, sampler, n, k, epsilon, rule, "1e-9")).encode())
    ref = reference_deltas(DATA[data](), sampler, n, k, epsilon, N_REF, np.random.default_rng(seed), True, rule,
                           metrics=ALL_METRICS, smoothing=1e-9)
    failed = same_law(got, ref, ALL_METRICS)
    assert not failed, f"{sim.path(n, k, epsilon, True, rule).describe()}: {failed}"
