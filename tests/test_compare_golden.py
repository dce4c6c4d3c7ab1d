"""compare's printed report, pinned for a crossed, a batched, a sparse and an overlapping file: which design it read
and why that sampler, the sided p column, floors, averaging, the sentence. The signature's engine and version are
masked (they change with any source change); everything else must match the file in tests/golden/ exactly.
``UPDATE_GOLDEN=1`` rewrites the files after a change meant to alter the report (then read the diff)."""

import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.__main__ import main
from conftest import batched_table, crossed_table, crowd_table

GOLDEN = Path(__file__).with_name("golden")


def crowd(n_items: int, pool: int, per_item: int, sets: int | None, seed: int) -> pd.DataFrame:
    """Each item rated by ``per_item`` raters of ``pool``, or by one of ``sets`` such rater sets."""
    return crowd_table(np.random.default_rng(seed), n_items, pool, per_item, sets)


DESIGNS = {
    "crossed": lambda: crossed_table(n_items=40, n_raters=6, seed=5),
    "batched": lambda: batched_table(n_batches=12, batch_size=5, raters_per_batch=4, seed=6),
    "sparse": lambda: crowd(60, 30, 3, None, 7),
    "overlapping": lambda: crowd(60, 8, 3, 12, 8),
}


def systems(table: pd.DataFrame, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A answers each item's most frequent label, B the same with a third of its answers moved on."""
    rng = np.random.default_rng(seed)
    top = table.groupby("item")["label"].agg(lambda labels: labels.value_counts().index[0])
    moved = np.where(rng.random(len(top)) < 0.3, (top.to_numpy() + 1) % 3, top.to_numpy())
    return (pd.DataFrame({"item": top.index, "label": top.to_numpy()}),
            pd.DataFrame({"item": top.index, "label": moved}))


@pytest.mark.parametrize("design", list(DESIGNS))
def test_the_report_reads_as_pinned(design, tmp_path, capsys):
    table = DESIGNS[design]()
    a, b = systems(table, 9)
    table.to_csv(tmp_path / "ratings.csv", index=False)
    a.to_csv(tmp_path / "a.csv", index=False)
    b.to_csv(tmp_path / "b.csv", index=False)
    batch = ["--batch", "batch"] if "batch" in table else []
    main(["compare", "--data", str(tmp_path / "ratings.csv"), *batch, "--a", str(tmp_path / "a.csv"),
          "--b", str(tmp_path / "b.csv"), "--n-samples", "200", "--seed", "1", "--two-sided"])
    shown = re.sub(r"engine:[0-9a-f]+", "engine:*", capsys.readouterr().out)
    shown = re.sub(r"\|v:[^|)\s]+", "|v:*", shown)
    golden = GOLDEN / f"compare_{design}.txt"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(shown)
    assert shown == golden.read_text()
