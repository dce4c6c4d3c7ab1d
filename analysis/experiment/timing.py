"""How fast the engine is: wall time of single grid cells, for the benchmark script and the book's speed page.

A cell is timed as the grid runs it (alternative and null replicates, all eight metrics, one process), after a
two-replicate run of the same cell has loaded the kernels it draws with. VET's published-toolkit times for the same cell are kept here as
measured figures with their source, so that the page can put the two side by side.
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

import pandas as pd

from analysis.data.annotations import AnnotationDataset
from analysis.experiment.grid import Cell, simulate_cell
from analysis.engine import Simulator
from analysis.experiment.choices import BOOK, Choices
from analysis.wording import counted

# VET (Homan-Lab/vet, branch dpk-dev, commit 875552dd): N = 100, K = 10, C = 3, 1000 + 1000 trials, one idle core,
# seconds for ONE metric each, measured once by this project's maintainers when the engine was planned (issue 11);
# VET is not a dependency, so no build measures it again.
VET_SECONDS = {"Wins": 6.5, "MAE": 6.7, "KL-Div": 7.7, "Accuracy": 8.9, "F1-Score": 13.0}


# The first run of an engine on a machine compiles its kernels into numba's cache (NUMBA_CACHE_DIR, keyed by the
# kernel sources): measured 13 s for S2 on this project's loaded two-core machine, 26 s in issue 29's fresh clone.
FIRST_COMPILE_SECONDS = (10, 30)


def kernels_compiled() -> bool:
    """Whether numba's cache already holds compiled kernels of this engine (else the first run compiles them)."""
    folder = os.environ.get("NUMBA_CACHE_DIR")
    return bool(folder) and Path(folder).is_dir() and any(Path(folder).rglob("*.nbi"))


def time_cell(simulator: Simulator, cell: Cell, n_samples: int, repeats: int = 3) -> list[float]:
    """Wall seconds of ``repeats`` fresh simulations of one cell (each with its own seed), after two replicates
    of it have loaded (or compiled) the kernels its plan draws with, which a cell beside it may not use."""
    simulate_cell(simulator, cell, 2, 0)
    timings = []
    for repeat in range(repeats):
        start = time.perf_counter()
        simulate_cell(simulator, cell, n_samples, repeat)
        timings.append(time.perf_counter() - start)
    return timings


def time_cells(ds: AnnotationDataset, sampler: str, budgets, ks, n_samples: int = 1000, epsilon: float = 0.3,
               repeats: int = 3, choices: Choices = BOOK) -> pd.DataFrame:
    """Median, minimum and maximum wall seconds per (NK, K) cell, one process, the eight metrics of ``choices``
    under its noise law and smoothing.

    Columns: dataset, sampler, NK, K, N, seconds (the median), min, max, repeats, n_samples.
    """
    simulator = Simulator(ds, sampler, **choices.engine(), metrics=choices.metrics)
    perturbation = choices.perturbation
    rows = []
    for nk in budgets:
        for k in ks:
            if nk // k < 1:
                continue
            seconds = time_cell(simulator, Cell(simulator.sampler, perturbation, epsilon, nk, k), n_samples, repeats)
            rows.append({"dataset": ds.name, "sampler": simulator.sampler, "NK": nk, "K": k, "N": nk // k,
                         "seconds": statistics.median(seconds), "min": min(seconds), "max": max(seconds),
                         "repeats": repeats, "n_samples": n_samples})
    return pd.DataFrame(rows)


def _duration(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s" if minutes else f"{rest} s"


SIDE_BY_SIDE = 0.9  # chapters whose span from first start to last end is below this share of their sum overlapped


def _span(timed: pd.DataFrame) -> float | None:
    """Seconds from the first chapter's start (its end less its duration) to the last one's end; None where a
    chapter's end is not known."""
    if "executed" not in timed:
        return None
    ends = pd.to_datetime(timed["executed"], format="%Y-%m-%d %H:%M:%S", errors="coerce")  # as read_runs writes it
    if ends.isna().any():
        return None
    return (ends.max() - (ends - pd.to_timedelta(timed["seconds"], unit="s")).min()).total_seconds()


def build_time(runs: pd.DataFrame, page: str = "speed") -> str:
    """What executing the book's chapters took, from :func:`analysis.book.chapter.read_runs`: the total, the span
    from the first start to the last end where chapters ran side by side (``make book`` runs them ``JOBS`` at a
    time), the slowest chapter, and how many chapters ran with parameters changed from their defaults. The
    ``page`` that says so is left out: it runs after the others, and its own record is a previous build's."""
    timed = runs[runs["chapter"] != page].dropna(subset=["seconds"])
    if timed.empty:
        return "No other chapter of this build has been executed yet, so there is no total to give."
    slowest = timed.loc[timed["seconds"].idxmax()]
    total = timed["seconds"].sum()
    # this page runs after the others, alone, so it counts them without itself: "the other 9", never "the 9"
    text = (f"Executing the other {counted(len(timed), 'chapter')} of this build (all but this page and the "
            f"provenance page, which run after them) took {_duration(total)} in all on this machine")
    span = _span(timed)
    if span is not None and span < SIDE_BY_SIDE * total:
        text += f"; they ran side by side, {_duration(span)} from the first start to the last end"
    text += f", the longest being {slowest['chapter']} at {_duration(slowest['seconds'])}"
    changed = int((~timed["parameters changed from the defaults"].str.startswith("none")).sum())
    if changed:
        return text + (f"; {changed} of them ran with parameters changed from the defaults, so this is not the time "
                       "of the book at its defaults.")
    return text + ", every chapter at its own defaults."


def vet_comparison(reference: pd.DataFrame) -> str:
    """One sentence setting this machine's times for the cell N = 100, K = 10 (``reference``: a row per sampler)
    beside VET's per-metric times, against the median over samplers rather than one sampler's time."""
    if reference.empty:
        return "The grid of this run has no cell with N×K = 1000 and K = 10, so no comparison with VET is drawn."
    seconds = reference["seconds"]
    vet = list(VET_SECONDS.values())
    return (f"On this machine one cell with N = 100 and K = 10 ({int(reference['n_samples'].iloc[0])} + "
            f"{int(reference['n_samples'].iloc[0])} replicates, all eight metrics at once) takes "
            f"{seconds.min():.3f}–{seconds.max():.3f} s depending on the sampler, {seconds.median():.3f} s in the "
            f"median. VET takes {min(vet):.1f}–{max(vet):.1f} s for the same cell and *one* metric, {sum(vet):.1f} s "
            f"for the {len(vet)} metrics it was timed on: about {sum(vet) / seconds.median():,.0f} times that median.")
