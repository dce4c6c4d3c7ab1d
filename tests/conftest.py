"""Shared fixtures: small datasets of each design, built in memory; the dataset cache for tests of real data."""

import itertools
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import settings

from analysis.data.annotations import from_table
from analysis.experiment.workers import one_blas_thread
from analysis.engine.metrics import METRICS
from analysis.data.synthetic import make_stand_in

# Tests read real data through the dataset cache ($ANNOTATION_DATA_DIR, which `make data` fills). Where it is not set,
# the project's shared data folder beside the checkout serves, as the Makefile does; without either, they skip.
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
if not os.environ.get("ANNOTATION_DATA_DIR") and SHARED_DATA.is_dir():
    os.environ["ANNOTATION_DATA_DIR"] = str(SHARED_DATA)
one_blas_thread()  # as the package's own processes: make test's two workers share two cores

# Property tests draw the same examples on every run, so a run that passed passes again on a fresh clone;
# `pytest --hypothesis-profile=explore` draws new ones (and a failure found so becomes an @example).
settings.register_profile("reproducible", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile("reproducible")


# the longest files, by --durations on a fresh clone (summed seconds: 202, 82, 71, 63 at 137b2f8)
LONGEST_FIRST = ("test_book.py", "test_reference.py", "test_packaging.py", "test_compare_calibration.py")


def pytest_collection_modifyitems(items):
    """The longest test files first, then the other files with slow tests, then the rest, each in its own order:
    ``make test``'s workers (``--no-loadscope-reorder``) start on the long ones and end on short ones, rather than
    one worker running a long file alone at the end."""
    slow = {item.path for item in items if item.get_closest_marker("slow")}

    def rank(item):
        name = item.path.name
        return LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST) + (item.path not in slow)

    items.sort(key=rank)


def cached(name: str) -> Path:
    """The folder of dataset ``name`` in the dataset cache, or a skip that says what to run."""
    from analysis.data import datasets

    if not os.environ.get("ANNOTATION_DATA_DIR"):
        pytest.skip("no dataset cache: set ANNOTATION_DATA_DIR or run `make data`")
    folder = datasets.data_dir() / name
    if not folder.is_dir():
        pytest.skip(f"{name} is not in the dataset cache {datasets.data_dir()}; run `make data`")
    return folder


def crossed_table(n_items=30, n_raters=12, n_labels=3, seed=0):
    rng = np.random.default_rng(seed)
    item, rater = np.divmod(np.arange(n_items * n_raters), n_raters)
    bias = rng.normal(0, 1, n_raters)
    latent = rng.normal(0, 1, n_items)[item] + bias[rater] + rng.normal(0, 0.5, len(item))
    label = np.digitize(latent, np.linspace(-1, 1, n_labels - 1))
    return pd.DataFrame({"item": item, "rater": rater, "label": label})


def batched_table(n_batches=15, batch_size=6, raters_per_batch=4, n_labels=3, seed=1, ragged=False):
    rng = np.random.default_rng(seed)
    rows = []
    for b in range(n_batches):
        raters = rng.choice(200, raters_per_batch, replace=False)
        dropped = dict.fromkeys(raters, 0)  # ragged: each rater still rates at least half of the batch's items
        for i in range(batch_size):
            for r in raters:
                if ragged and rng.random() < 0.25 and dropped[r] < batch_size // 2:
                    dropped[r] += 1
                    continue
                rows.append((f"b{b}i{i}", f"r{r}", int(rng.integers(n_labels)), b))
    return pd.DataFrame(rows, columns=["item", "rater", "label", "batch"])


def sparse_table(n_items=40, n_raters=60, per_item=7, n_labels=4, seed=2):
    rng = np.random.default_rng(seed)
    rows = [(i, int(r), int(rng.integers(n_labels))) for i in range(n_items)
            for r in rng.choice(n_raters, per_item, replace=False)]
    return pd.DataFrame(rows, columns=["item", "rater", "label"])


def crowd_table(rng, n_items, pool, per_item, sets=None):
    """Each item rated by ``per_item`` raters of ``pool`` drawn for it, or by one of ``sets`` such rater sets in
    turn (overlapping sets of a small pool), three labels at random."""
    groups = [rng.choice(pool, per_item, replace=False) for _ in range(sets or n_items)]
    rows = [(f"i{i}", f"r{r}", int(rng.integers(3))) for i in range(n_items) for r in groups[i % len(groups)]]
    return pd.DataFrame(rows, columns=["item", "rater", "label"])


@pytest.fixture(scope="session")
def crossed():
    return from_table(crossed_table(), name="crossed")


@pytest.fixture(scope="session")
def batched():
    return from_table(batched_table(), batch="batch", name="batched")


@pytest.fixture(scope="session")
def sparse():
    return from_table(sparse_table(), name="sparse")


@pytest.fixture(scope="session")
def dices():
    return make_stand_in("dices-synthetic")


def grid_results(runs: dict, budgets=(100, 1000, 10000), ks=(1, 5, 20), epsilon=0.3, imitates=None,
                 null_sd=None) -> pd.DataFrame:
    """A results table built by hand: ``runs`` maps (dataset, sampler) to a function (NK, K, metric) -> p-value;
    ``imitates`` maps a dataset to the paper dataset it imitates; ``null_sd`` a sampler to its null sd (S2 0.02,
    others 0.03)."""
    null_sd = {"S2": 0.02, **(null_sd or {})}
    rows = []
    for (dataset, sampler), p in runs.items():
        for nk, k, metric in itertools.product(budgets, ks, METRICS):
            rows.append({"dataset": dataset, "sampler": sampler, "perturbation": "dirichlet", "epsilon": epsilon,
                         "NK": nk, "K": k, "metric": metric, "p_value": p(nk, k, metric), "delta": 0.1 * k ** 0.1,
                         "null_sd": null_sd.get(sampler, 0.03), "imitates": (imitates or {}).get(dataset)})
    return pd.DataFrame(rows)


def falling(scale=1.0):
    """p falls with the budget; ``scale`` > 1 makes it fall later (a more cautious sampler)."""
    return lambda nk, k, metric: min(1.0, scale * 50 / nk * (1 + 0.01 * k))




# Where the session's first compile of the kernels leaves its count of index wraps, for tests/test_indices.py
WRAPS_ENV = "ANALYSIS_TEST_WRAPS"


def pytest_sessionstart(session):
    """Under ``pytest -n`` (make test), compile the engine's numba kernels once before the workers start, a group of
    :data:`analysis.experiment.warmup.KERNEL_GROUPS` in each of two processes: every worker and notebook kernel then
    loads them from numba's cache instead of compiling its own copy. The processes are tests/wrap_probe.py's, so
    that a compile made anyway is also read for index wraps (their counts under $ANALYSIS_TEST_WRAPS)."""
    import subprocess
    import sys
    import tempfile

    from analysis.experiment.warmup import KERNEL_GROUPS

    if os.environ.get("PYTEST_XDIST_WORKER") or not getattr(session.config.option, "numprocesses", None):
        return
    folder = Path(tempfile.mkdtemp(prefix="wrap-counts-"))
    os.environ[WRAPS_ENV] = str(folder)  # the workers start after this hook and inherit it
    probe = Path(__file__).with_name("wrap_probe.py")
    processes = []
    for i, group in enumerate(KERNEL_GROUPS):
        with open(folder / f"group-{i}.json", "w") as out:
            processes.append(subprocess.Popen([sys.executable, str(probe), "--kernels", ",".join(group)], stdout=out))
    for process in processes:
        process.wait()


def pytest_sessionfinish(session):
    import shutil

    folder = os.environ.get(WRAPS_ENV)
    if folder and not os.environ.get("PYTEST_XDIST_WORKER"):
        shutil.rmtree(folder, ignore_errors=True)
