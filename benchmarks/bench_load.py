"""Loading a 10-million-rating CSV: wall time and peak memory (``python benchmarks/bench_load.py``).

The file has 1,000,000 items x 10 raters drawn from a pool of 100,000, with 5 labels. It is written once into a
temporary folder (or ``--path``); the load runs in a fresh process so that its peak memory is its own.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv


def write_big_csv(path: Path, n_items: int = 1_000_000, per_item: int = 10, n_raters: int = 100_000) -> int:
    """Write ``n_items * per_item`` ratings with distinct (item, rater) pairs; returns the number of rows."""
    item = np.repeat(np.arange(n_items), per_item)
    slot = np.tile(np.arange(per_item), n_items)
    rater = (item * 7 + slot * 4729) % n_raters
    label = (item + rater) % 5
    pacsv.write_csv(pa.table({"item": item, "rater": rater, "label": label}), path)
    return len(item)


def measure(path: Path) -> None:
    start = time.perf_counter()
    from analysis.data.annotations import load_annotations

    ds = load_annotations(path)
    wall = time.perf_counter() - start
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{ds.n_ratings} ratings, {ds.n_items} items, {ds.n_raters} raters, {ds.n_labels} labels; "
          f"load {wall:.1f} s, peak memory {peak_mib:.0f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--path", type=Path, default=None)
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        measure(args.path)
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = args.path or Path(tmp) / "ten_million.csv"
        if not path.exists():
            rows = write_big_csv(path)
            print(f"wrote {rows} rows ({path.stat().st_size / 2**20:.0f} MiB)")
        subprocess.run([sys.executable, __file__, "--measure", "--path", str(path)], check=True)


if __name__ == "__main__":
    main()
