"""Effect-size agreement with the paper's Table 1 and appendix, by configuration of the unstated choices, over
several seeds. Outside ``make test`` (minutes at 1000 replicates):

    .venv/bin/python benchmarks/paper_evidence.py --seeds 0 1 2 --n-samples 1000

Each configuration changes one choice (or two) from the book's former defaults (macro averaging over the labels
present, s = 1e-9, Dirichlet(1/C) noise, binary D3code and Toxicity stand-ins); the cells are the paper's own
(N = NK / K, K) of both tables, the appendix at ``--appendix-epsilon``. It prints, per configuration and table, the
count of cells whose Delta is within x1.25 of the paper's, by run, as median (min-max) over the seeds, and writes
every cell's ratio to ``--out``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analysis.data import datasets  # noqa: E402
from analysis.io import write_atomic  # noqa: E402
from analysis.paper import effect_sizes as es  # noqa: E402

CONFIGURATIONS = {
    "former defaults": es.Choices(averaging="macro", smoothing=1e-9, granularity="binary"),
    "one-label noise": es.Choices(averaging="macro", smoothing=1e-9, granularity="binary", perturbation="one-label"),
    "macro over all labels": es.Choices(averaging="macro-all", smoothing=1e-9, granularity="binary"),
    "one-label + all labels": es.Choices(averaging="macro-all", smoothing=1e-9, granularity="binary",
                                         perturbation="one-label"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--n-samples", type=int, default=1000)
    parser.add_argument("--appendix-epsilon", type=float, default=0.2)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", default="benchmarks/paper_evidence.csv")
    args = parser.parse_args()
    cells = es.paper_cells(appendix_epsilon=args.appendix_epsilon)
    simulated: dict[tuple, pd.DataFrame] = {}
    parts = []
    for name, choices in CONFIGURATIONS.items():
        data = {es.paper_name(n): choices.dataset(n) for n in datasets.PAPER_STAND_INS.values()}
        key = (choices.perturbation, choices.smoothing, tuple(sorted(data.items())))
        if key not in simulated:  # the averagings share one simulation
            simulated[key] = es.simulate(cells, seeds=args.seeds, n_samples=args.n_samples,
                                         perturbation=choices.perturbation, data=data, n_jobs=args.jobs,
                                         smoothing=choices.smoothing, metrics=es.ALL_AVERAGINGS)
        effects = es.effect_sizes(cells, es.select(simulated[key], choices.averaging))
        parts.append(effects.assign(configuration=name))
        counts = es.summary(effects)
        shown = counts[counts["by"].isin(["all", "run"])][["table", "group", "spread"]]
        print(f"\n{name} ({choices.label()}):\n{shown.to_string(index=False)}", flush=True)
    write_atomic(args.out, pd.concat(parts, ignore_index=True).to_csv(index=False))


if __name__ == "__main__":
    main()
