"""``compare`` on a large crowd file, timed: MD-Agreement (10,753 items, 819 raters, about 5 ratings an item), A
answering each item with its plurality label and B the same with a fifth of its answers redrawn at random; the
default sampler (S4 there) and 1000 replicates. Needs the dataset in the cache (``make data``):

    .venv/bin/python benchmarks/compare_large.py

Time the whole command (``benchmarks/README.md``); it prints the first rows and its own seconds.
"""

import sys
import time

import numpy as np
import pandas as pd

from analysis.data import datasets
from analysis.tools.compare import compare

NAME = "lewidi23_md_agreement"

if __name__ == "__main__":
    if not datasets.available(NAME):
        sys.exit(f"{NAME} is not in the dataset cache {datasets.data_dir()}: run `make data`")
    ds = datasets.load(NAME)
    rng = np.random.default_rng(0)
    plurality = ds.item_label_counts.argmax(1)
    redrawn = np.where(rng.random(ds.n_items) < 0.2, rng.integers(0, ds.n_labels, ds.n_items), plurality)
    started = time.perf_counter()
    names = np.asarray(ds.label_names, dtype=object)  # the systems answer in the file's own labels
    result = compare(ds, pd.DataFrame({"item": ds.item_ids, "label": names[plurality]}),
                     pd.DataFrame({"item": ds.item_ids, "label": names[redrawn]}), n_samples=1000, seed=0)
    print(result[["metric", "sampler", "delta", "p_value"]].head(3).to_string())
    print(f"compare: {time.perf_counter() - started:.1f} s")
