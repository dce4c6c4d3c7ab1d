"""The grid: seeded reproducibility across workers and chunks, the cache, the tidy table and the Table 1 rule."""

import json

import numpy as np
import pandas as pd
import pytest

from analysis.engine.metrics import SMOOTHING
from analysis.errors import ParameterError
from analysis.experiment.cache import ResultCache
from analysis.experiment.choices import BOOK, REFERENCE
from analysis.experiment.grid import RESULT_COLUMNS, cells, run, save_results
from analysis.experiment.table1 import table1, table1_wide

# the engine's own smoothing and metrics, so that a bare ResultCache (the engine's fingerprint) reads what these runs write
SMALL = dict(budgets=(60, 200), ks=(1, 3, 20), epsilons=(0.2, 0.4), n_samples=50, seed=11, progress=False,
             smoothing=SMOOTHING, averaging="weighted")


def test_same_seed_same_table_whatever_the_workers_and_chunks(crossed, monkeypatch):
    monkeypatch.setattr("analysis.experiment.grid.POOL_FROM", 0)  # worker processes even for this small grid
    one = run(crossed, "S1", n_jobs=1, use_cache=False, **SMALL)
    two = run(crossed, "S1", n_jobs=2, chunk_size=1, use_cache=False, **SMALL)
    chunky = run(crossed, "S1", n_jobs=2, chunk_size=5, use_cache=False, **SMALL)
    pd.testing.assert_frame_equal(one, two)
    pd.testing.assert_frame_equal(one, chunky)
    other_seed = run(crossed, "S1", use_cache=False, **{**SMALL, "seed": 12})
    assert not np.allclose(one["delta"], other_seed["delta"])


def test_a_cell_does_not_depend_on_the_rest_of_the_grid(batched):
    full = run(batched, "S3", use_cache=False, **SMALL)
    alone = run(batched, "S3", use_cache=False, **{**SMALL, "budgets": (200,), "ks": (3,), "epsilons": (0.4,)})
    cell = full[(full["NK"] == 200) & (full["K"] == 3) & (full["epsilon"] == 0.4)].reset_index(drop=True)
    pd.testing.assert_frame_equal(cell, alone)


def test_a_kept_simulator_gives_what_a_new_one_gives(batched, monkeypatch):
    """Runs on the same data and sampler share one simulator (its tables built once); the numbers are those of a
    simulator built afresh for the run."""
    from analysis.experiment import grid

    first = run(batched, "S3", use_cache=False, **SMALL)
    kept = dict(grid._SIMULATORS)
    again = run(batched, "S3", use_cache=False, **SMALL)
    assert grid._SIMULATORS == kept and len(kept) >= 1  # the same simulator object served the second run
    monkeypatch.setattr(grid, "_SIMULATORS", {})
    fresh = run(batched, "S3", use_cache=False, **SMALL)
    pd.testing.assert_frame_equal(first, again)
    pd.testing.assert_frame_equal(first, fresh)


def test_tidy_table_has_one_row_per_cell_and_metric(sparse):
    table = run(sparse, "S2", metrics=["mae", "jsd"], use_cache=False, **SMALL)
    assert list(table.columns) == list(RESULT_COLUMNS)
    assert len(table) == 2 * 2 * 3 * 2  # epsilons x budgets x ks x metrics
    assert not table.duplicated(["epsilon", "NK", "K", "metric"]).any()
    assert (table["N"] == table["NK"] // table["K"]).all()
    assert table["p_value"].between(0, 1).all() and (table["null_sd"] >= 0).all()

def test_cells_skip_budgets_below_k_and_reject_bad_values():
    grid = cells("S2", budgets=(10, 100), ks=(1, 20), epsilons=(0.3,))
    assert [(c.NK, c.K, c.N) for c in grid] == [(10, 1, 10), (100, 1, 100), (100, 20, 5)]
    for bad in (dict(budgets=(0,)), dict(ks=(1.5,)), dict(epsilons=(1.2,))):
        args = dict(budgets=(10,), ks=(1,), epsilons=(0.3,)) | bad
        with pytest.raises(ParameterError):
            cells("S2", **args)
    with pytest.raises(ParameterError, match="unknown sampler"):
        cells("S9", (10,), (1,), (0.3,))


@pytest.mark.parametrize("n_jobs", [0, -1, 1.5])
def test_every_entry_refuses_a_worker_count_that_is_not_a_positive_integer(crossed, n_jobs):
    """grid.run and in_workers share one check, and one message, which the command line words as --jobs."""
    from analysis.experiment.workers import in_workers

    message = r"n_jobs \(the worker processes\) must be an integer >= 1"
    with pytest.raises(ParameterError, match=message):
        run(crossed, "S1", budgets=[60], ks=[2], epsilons=[0.3], n_samples=20, n_jobs=n_jobs, use_cache=False)
    with pytest.raises(ParameterError, match=message):
        in_workers({"a": int, "b": int}, n_jobs)
    assert in_workers({"a": int, "b": float}, 2.0) == {"a": 0, "b": 0.0}


def test_cache_keeps_finished_cells_and_serves_reruns(crossed, tmp_path):
    first = run(crossed, "S2", cache_dir=tmp_path, **SMALL)
    files = sorted(tmp_path.glob("*.json"))
    assert len(files) == len(cells("S2", SMALL["budgets"], SMALL["ks"], SMALL["epsilons"]))
    assert not list(tmp_path.glob("*.tmp")) and not list(tmp_path.glob("*.claim"))
    again = run(crossed, "S2", cache_dir=tmp_path, **SMALL)
    pd.testing.assert_frame_equal(first, again)
    assert ResultCache(tmp_path).computations()["computations"] == len(files)  # read back, not recomputed


def _tamper(path, how):
    """Damage one cache file as a user, a full disk or another program might."""
    entry = json.loads(path.read_text())
    if how == "an edited p-value":
        entry["metrics"]["mae"]["p_value"] = -1.0
    elif how == "a missing metric, checksum redone":
        del entry["metrics"]["jsd"]
        entry["checksum"] = ResultCache.checksum(entry["key"], entry["engine"], entry["metrics"])
    elif how == "no checksum":
        del entry["checksum"]
    elif how == "another cell's file":
        entry = json.loads(sorted(p for p in path.parent.glob("*.json") if p != path)[0].read_text())
    elif how == "a truncated file":
        path.write_text(json.dumps(entry)[:40])
        return
    elif how == "binary garbage":
        path.write_bytes(bytes(range(256)))
        return
    path.write_text(json.dumps(entry))


@pytest.mark.parametrize("how", ["an edited p-value", "a missing metric, checksum redone", "no checksum",
                                 "another cell's file", "a truncated file", "binary garbage"])
def test_a_damaged_cache_file_is_recomputed_with_one_note_never_served(crossed, tmp_path, capsys, how):
    first = run(crossed, "S2", cache_dir=tmp_path, **SMALL)
    computed = ResultCache(tmp_path).computations()["computations"]
    damaged = sorted(tmp_path.glob("*.json"))[0]
    _tamper(damaged, how)
    capsys.readouterr()
    again = run(crossed, "S2", cache_dir=tmp_path, **SMALL)
    pd.testing.assert_frame_equal(first, again)
    notes = capsys.readouterr().err.strip().splitlines()
    assert len(notes) == 1 and notes[0].startswith(f"note: cache file {damaged} not used"), notes
    assert ResultCache(tmp_path).computations()["computations"] == computed + 1  # that cell alone, once
    assert ResultCache(tmp_path).get(damaged.stem) is not None  # and the file is whole again


def test_the_cache_logs_every_computation_and_a_rerun_computes_nothing(crossed, tmp_path):
    run(crossed, "S2", cache_dir=tmp_path, **SMALL)
    run(crossed, "S2", cache_dir=tmp_path, **SMALL)
    n_cells = len(cells("S2", SMALL["budgets"], SMALL["ks"], SMALL["epsilons"]))
    assert ResultCache(tmp_path).computations() == {"cells": n_cells, "computations": n_cells, "computed_twice": 0}


def test_cache_key_changes_with_every_input(tmp_path):
    cache = ResultCache(tmp_path)
    [cell] = cells("S2", (100,), (5,), (0.3,))
    [uniform] = cells("S2", (100,), (5,), (0.3,), perturbation="uniform")
    [pigeonhole] = cells("S4", (100,), (5,), (0.3,))
    base = cache.key("abc", cell, 100, 0)
    others = [cache.key("abc", pigeonhole, 100, 0), cache.key("abd", cell, 100, 0), cache.key("abc", cell, 101, 0), cache.key("abc", cell, 100, 1),
              cache.key("abc", uniform, 100, 0), ResultCache(tmp_path, engine="0" * 16).key("abc", cell, 100, 0)]
    assert len({base, *others}) == 1 + len(others)


def test_every_setting_of_the_simulator_is_in_the_cell_key(crossed):
    """The cache key reads the simulator's settings from its constructor: a setting added there changes the key
    with no list to keep by hand. This test names a second value for each, and fails on one it does not know."""
    import inspect

    from analysis.engine import Simulator
    from analysis.experiment.grid import variant_fingerprint

    others = {"method": "counts", "smoothing": 1e-9, "null_mixing": "pairs", "metrics": ("accuracy", "jsd")}
    settings = [name for name in inspect.signature(Simulator.__init__).parameters if name not in ("self", "ds", "sampler")]
    assert sorted(settings) == sorted(others), "a new Simulator setting: give it a second value here"
    base = Simulator(crossed, "S2", **REFERENCE.engine())
    assert set(base.settings()) == set(settings)
    for name, value in others.items():
        assert getattr(base, name) != value
        varied = {"smoothing": REFERENCE.smoothing, "null_mixing": REFERENCE.null_mixing, name: value}
        assert variant_fingerprint(Simulator(crossed, "S2", **varied)) != variant_fingerprint(base), name


def test_a_changed_engine_recomputes_and_never_mixes_old_cells_in(crossed, tmp_path, monkeypatch):
    """After an engine change a rerun computes every cell afresh; an old file, even under a new key, is refused."""
    first = run(crossed, "S2", cache_dir=tmp_path, **SMALL)
    old_files = sorted(tmp_path.glob("*.json"))
    for path in old_files:  # mark the old entries, so that reading one back would show
        entry = json.loads(path.read_text())
        entry["metrics"]["mae"]["p_value"] = -1.0
        path.write_text(json.dumps(entry))
    import analysis.experiment.grid as grid

    monkeypatch.setattr(grid, "engine_fingerprint", lambda: "f" * 16)
    again = run(crossed, "S2", cache_dir=tmp_path, **SMALL)
    assert (again["p_value"] >= 0).all() and again["engine"].eq("f" * 16).all()
    assert len(list(tmp_path.glob("*.json"))) == 2 * len(old_files)
    # an old entry copied under a new key still carries its old fingerprint and is not served
    new_key = ResultCache(tmp_path).key(crossed.sha256, cells("S2", (60,), (1,), (0.2,))[0], 50, 11)
    (tmp_path / f"{new_key}.json").write_text(old_files[0].read_text())
    assert ResultCache(tmp_path).get(new_key) is None
    pd.testing.assert_frame_equal(first.drop(columns="engine"), again.drop(columns="engine"))


def test_engine_fingerprint_follows_the_kernel_source_and_library_versions():
    from analysis.experiment.cache import ENGINE_SOURCES, engine_fingerprint

    import analysis

    names = {source.relative_to(analysis.HERE).as_posix() for source in ENGINE_SOURCES}
    assert {"engine/samplers.py", "engine/metrics.py", "experiment/pvalues.py", "engine/kernels/direct.py",
            "engine/rule.py", "engine/path.py", "engine/exact.py"} <= names
    assert len(engine_fingerprint()) == 16 and int(engine_fingerprint(), 16) >= 0


def test_repeated_grid_values_are_simulated_once():
    grid = cells("S2", budgets=(100, 100, 200), ks=(5, 5), epsilons=(0.3, 0.3))
    assert [(c.NK, c.K) for c in grid] == [(100, 5), (200, 5)]


def test_results_carry_their_provenance(crossed, tmp_path):
    table = run(crossed, "S2", use_cache=False, **SMALL)
    assert table["data_sha256"].eq(crossed.sha256).all() and table["seed"].eq(11).all()
    save_results(table, tmp_path / "r.csv")
    meta = json.loads((tmp_path / "r.csv.json").read_text())
    assert meta["data_sha256"] == crossed.sha256 and meta["parameters"]["seed"] == 11
    assert meta["parameters"]["n_samples"] == 50 and "version" in meta
    # the default noise law is the book's, recorded with the result
    assert meta["parameters"]["perturbation"] == BOOK.perturbation and meta["engine"] == table["engine"].iloc[0]
    assert {"numpy", "numba"} <= set(meta)
    back = pd.read_csv(tmp_path / "r.csv")
    assert len(back) == len(table)


def hand_results():
    rows = []
    grid = {  # (NK, K): p-value of accuracy; mae never significant
        (100, 1): 0.20, (100, 5): 0.30,
        (500, 1): 0.04, (500, 5): 0.01,
        (1000, 1): 0.001, (1000, 5): 0.002,
    }
    for (nk, k), p in grid.items():
        rows.append(dict(dataset="d", sampler="S2", epsilon=0.3, NK=nk, K=k, metric="accuracy", p_value=p,
                         delta=nk / 10000 + k / 100))
        rows.append(dict(dataset="d", sampler="S2", epsilon=0.3, NK=nk, K=k, metric="mae", p_value=0.5, delta=0.0))
    return pd.DataFrame(rows)


def test_table1_takes_the_smallest_significant_budget_and_its_best_k():
    summary = table1(hand_results()).set_index("metric")
    acc = summary.loc["accuracy"]
    assert (acc["NK"], acc["K"], acc["p_value"]) == (500, 5, 0.01)
    assert acc["delta"] == pytest.approx(500 / 10000 + 5 / 100)
    assert pd.isna(summary.loc["mae", "NK"])
    wide = table1_wide(table1(hand_results()))
    assert wide.loc[("d:S2 (ε=0.3)", "NK"), "Accuracy"] == "500"
    assert wide.loc[("d:S2 (ε=0.3)", "p-value"), "MAE"] == "–"


@pytest.mark.slow
def test_a_dask_cluster_gives_the_local_table_bit_for_bit(crossed, tmp_path):
    distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")
    local = run(crossed, "S1", use_cache=False, **SMALL)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as cluster:
        remote = run(crossed, "S1", cache_dir=tmp_path, scheduler=cluster.scheduler_address, chunk_size=2, **SMALL)
    pd.testing.assert_frame_equal(local, remote)
    # finished cells went into the same cache: a local rerun reads them back
    assert len(list(tmp_path.glob("*.json"))) == len(cells("S1", SMALL["budgets"], SMALL["ks"], SMALL["epsilons"]))


def test_an_unreachable_scheduler_is_one_clear_error(crossed, monkeypatch):
    pytest.importorskip("distributed", reason="the dask extra is not installed")
    import analysis.experiment.grid as grid

    monkeypatch.setattr(grid, "DASK_TIMEOUT", "1s")
    with pytest.raises(ParameterError, match="Dask scheduler"):
        run(crossed, "S1", use_cache=False, scheduler="tcp://127.0.0.1:1", **{**SMALL, "budgets": (60,)})


def test_a_small_grid_runs_in_this_process(crossed, monkeypatch):
    """Below ``POOL_FROM`` simulated responses no worker process is started, whatever ``n_jobs`` says."""
    import analysis.experiment.grid
    import analysis.experiment.workers

    def no_pool(*args, **kwargs):
        raise AssertionError("a worker pool was started for a small grid")

    monkeypatch.setattr(analysis.experiment.workers, "ProcessPoolExecutor", no_pool)
    table = run(crossed, "S1", n_jobs=2, use_cache=False, **SMALL)
    monkeypatch.setattr(analysis.experiment.grid, "POOL_FROM", 0)
    with pytest.raises(AssertionError, match="worker pool"):
        run(crossed, "S1", n_jobs=2, use_cache=False, **SMALL)
    assert len(table) == 2 * 2 * 3 * 8


SHARED_RUN = """
import sys, time
from pathlib import Path
from analysis.data.annotations import from_table
from analysis.experiment.choices import REFERENCE
import analysis.experiment.grid as grid
from conftest import crossed_table

puts = []
put = grid.ResultCache.put
grid.ResultCache.put = lambda self, key, summary: (puts.append(key), put(self, key, summary))
ds = from_table(crossed_table(), name="crossed")
go = Path(sys.argv[2])
go.with_name(go.name + sys.argv[3]).touch()
while not go.exists():  # both processes start their runs together
    time.sleep(0.01)
grid.run(ds, "S2", budgets=(400, 800, 1600), ks=(1, 2, 4, 8), epsilons=(0.1, 0.3), n_samples=200, seed=5,
         cache_dir=sys.argv[1], progress=False)
print(len(puts))
"""


def test_two_runs_on_one_cache_never_compute_a_cell_twice(tmp_path):
    """Two processes start the same grid on one cache at the same moment: each cell is computed once, by one of
    them, and the other reads it back (both compute some, so the runs did overlap)."""
    import os
    import subprocess
    import sys
    import time
    from pathlib import Path

    tests = Path(__file__).parent
    go = tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": f"{tests.parent}{os.pathsep}{tests}"}
    runs = [subprocess.Popen([sys.executable, "-c", SHARED_RUN, str(tmp_path / "cache"), str(go), f".{n}"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) for n in (1, 2)]
    deadline = time.time() + 120
    while not all((tmp_path / f"go.{n}").exists() for n in (1, 2)) and time.time() < deadline:
        time.sleep(0.05)
    go.touch()
    outputs = [process.communicate(timeout=300) for process in runs]
    assert all(process.returncode == 0 for process in runs), outputs
    n_cells = len(cells("S2", (400, 800, 1600), (1, 2, 4, 8), (0.1, 0.3)))
    computed = [int(out) for out, _ in outputs]
    assert sum(computed) == n_cells and min(computed) > 0, computed
    assert ResultCache(tmp_path / "cache").computations() == {"cells": n_cells, "computations": n_cells,
                                                              "computed_twice": 0}
    assert not list((tmp_path / "cache").glob("*.claim"))


def test_a_claim_left_by_a_killed_run_is_taken_over(crossed, tmp_path):
    """A claim whose process is gone (here a process that has exited) does not hold the cell up."""
    import subprocess
    import sys
    import time

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    cache = ResultCache(tmp_path)
    grid = cells("S2", SMALL["budgets"], SMALL["ks"], SMALL["epsilons"])
    for cell in grid:
        (tmp_path / f"{cache.key(crossed.sha256, cell, SMALL['n_samples'], SMALL['seed'])}.claim").write_text(
            f"{dead.pid} {__import__('socket').gethostname()}\n")
    start = time.time()
    table = run(crossed, "S2", cache_dir=tmp_path, **SMALL)
    pd.testing.assert_frame_equal(table, run(crossed, "S2", use_cache=False, **SMALL))
    assert time.time() - start < 60 and cache.computations()["computations"] == len(grid)
    assert not list(tmp_path.glob("*.claim"))


def test_a_cache_file_without_an_extra_metric_asked_for_is_recomputed(crossed, tmp_path, capsys):
    """A metric beyond the eight (here recall_macro) must be in the file too, or the cell is computed again."""
    grid = dict(SMALL, budgets=(60,), ks=(3,), epsilons=(0.4,))
    first = run(crossed, "S2", metrics=["mae", "recall_macro"], cache_dir=tmp_path, **grid)
    [path] = tmp_path.glob("*.json")
    entry = json.loads(path.read_text())
    del entry["metrics"]["recall_macro"]
    entry["checksum"] = ResultCache.checksum(entry["key"], entry["engine"], entry["metrics"])
    path.write_text(json.dumps(entry))
    capsys.readouterr()
    again = run(crossed, "S2", metrics=["mae", "recall_macro"], cache_dir=tmp_path, **grid)
    pd.testing.assert_frame_equal(first, again)
    assert "(a metric is missing)" in capsys.readouterr().err


def _blas_threads() -> set[int]:
    from threadpoolctl import threadpool_info

    return {pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"}


def test_the_workers_and_the_command_line_run_blas_on_one_thread():
    """Forked from a process that allows two BLAS threads, each worker and the command line's engine commands run
    one (:func:`analysis.experiment.workers.one_blas_thread`)."""
    from threadpoolctl import threadpool_limits

    from analysis.__main__ import main
    from analysis.experiment.workers import in_workers

    with threadpool_limits(2, user_api="blas"):
        assert _blas_threads() == {2}
        assert in_workers({0: _blas_threads, 1: _blas_threads}, 2) == {0: {1}, 1: {1}}
        assert main(["run", "--data", "dices-synthetic", "--sampler", "S2", "--budgets", "100", "--ks", "1",
                     "--epsilons", "0.3", "--explain"]) == 0
        assert _blas_threads() == {1}
