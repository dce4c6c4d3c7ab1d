"""Kernels compiled side by side before grids that run one after another: one cell per kernel each grid needs,
cached, so that the grids then compute every other cell once and give exactly the numbers they give alone."""

from analysis.data.annotations import from_table
from analysis.experiment import warmup
from analysis.experiment.cache import ResultCache
from analysis.experiment.choices import BOOK
from analysis.paper import tables
from conftest import crossed_table

GRID = dict(budgets=[60, 200], ks=[1, 3], epsilons=[0.3])


def test_the_warm_cells_are_the_grids_own_and_nothing_is_simulated_twice(tmp_path):
    ds = from_table(crossed_table(n_items=30, n_raters=8), name="crossed")
    pairs = [(ds, "S1"), (ds, "S2")]
    chosen = {tuple(warmup.kernel_cells(ds, s, **GRID, choices=BOOK))
              for s in ("S1", "S2")}
    assert all(len(c) >= 1 for c in chosen)
    warmed = tables.simulate(pairs, **GRID, n_samples=40, seed=2, n_jobs=2, cache_dir=tmp_path / "warm")
    alone = tables.simulate(pairs, **GRID, n_samples=40, seed=2, n_jobs=1, cache_dir=tmp_path / "alone")
    assert warmed.drop(columns=["seconds"], errors="ignore").equals(alone.drop(columns=["seconds"], errors="ignore"))
    cells = len(warmed.drop_duplicates(["sampler", "epsilon", "NK", "K"]))
    assert ResultCache(tmp_path / "warm").computations()["computations"] == cells  # every cell once, warm ones too
    assert ResultCache(tmp_path / "alone").computations()["computations"] == cells


def test_the_kernel_groups_share_out_every_kernel_and_each_group_reaches_its_own(monkeypatch):
    """``make book`` compiles the kernels once, ahead of the chapters: every kernel of the engine is in exactly one
    group, and a group's plans reach each of its kernels and no other (recorded, not drawn)."""
    from analysis.engine import Simulator
    from analysis.engine.path import KERNELS

    assert sorted(sum(warmup.KERNEL_GROUPS, ())) == sorted(KERNELS)
    for group in warmup.KERNEL_GROUPS:
        reached = set()
        monkeypatch.setattr(Simulator, "draw", lambda self, n, k, epsilon, n_samples, rng, null, perturbation:
                            reached.add(self.path(n, k, epsilon, null, perturbation).kernel))
        assert warmup.compile_group(group) >= len(group)
        assert reached == set(group)
