"""Agreement with the paper's Table 1 and appendix, by configuration of the unstated choices, over several seeds.
Outside ``make test`` (tens of minutes at the defaults):

    .venv/bin/python benchmarks/paper_evidence.py --seeds 0 1 2 --n-samples 1000

Each configuration changes one choice (or two) from the book's former defaults (macro averaging over the labels
present, s = 1e-9, Dirichlet(1/C) noise, binary D3code and Toxicity stand-ins, DICES's three labels). Per
configuration it runs the five runs of the paper's tables through :func:`analysis.paper.why.simulate`: the grid
(the paper's budgets and K, budget by budget until every metric is significant) for the best-K class and the
budget step, and the paper's own cells for Δ, all at ``--n-samples`` replicates. It prints, per configuration and
table, the three counts and the Δ count by run, as median (min-max) over the seeds, then the cells whose p lies on
the paper's side of 0.05 at the paper's own cell and one budget step below, by run
(:mod:`analysis.paper.crossings`), and writes every cell to ``--out``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analysis.experiment.grid import PAPER_BUDGETS, PAPER_KS  # noqa: E402
from analysis.io import write_atomic  # noqa: E402
from analysis.paper import crossings, effect_sizes, why  # noqa: E402
from analysis.experiment.choices import Choices  # noqa: E402
from analysis.paper.tables import PAPER_EPSILON  # noqa: E402

FORMER = dict(averaging="macro", smoothing=1e-9, granularity="binary")
CONFIGURATIONS = {
    "former defaults": Choices(**FORMER),
    "one-label noise (adopted)": Choices(**FORMER, perturbation="one-label"),
    "macro over all labels": Choices(**{**FORMER, "averaging": "macro-all"}),
    "DICES Unsure as No": Choices(**FORMER, dices_labels="unsure-as-no"),
    "DICES Unsure as Yes": Choices(**FORMER, dices_labels="unsure-as-yes"),
}


def by_run(frame: pd.DataFrame) -> pd.DataFrame:
    """Per table and run, the Δ count as median (min-max) of n over seeds."""
    rows = []
    judged = frame.dropna(subset=["within"]).assign(run=lambda f: f["dataset"] + " " + f["sampler"])
    for (table, run), group in judged.groupby(["table", "run"], sort=False):
        per_seed = group.groupby("seed")["within"].sum()
        rows.append({"table": why.TABLES[table], "run": run,
                     "Δ within ×1.25": f"{why._spread(per_seed)} of {group.groupby('seed').size().max()}"})
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--n-samples", type=int, default=1000)
    parser.add_argument("--appendix-epsilon", type=float, default=0.2)
    parser.add_argument("--configurations", nargs="+", default=list(CONFIGURATIONS), choices=list(CONFIGURATIONS))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", default="benchmarks/paper_evidence.csv")
    args = parser.parse_args()
    chosen = {name: CONFIGURATIONS[name] for name in args.configurations}
    runs = why.simulate(chosen, PAPER_BUDGETS, PAPER_KS, sorted({PAPER_EPSILON, args.appendix_epsilon}), args.seeds,
                        args.n_samples, args.appendix_epsilon, n_jobs=args.jobs)
    frames = {name: why.cells(found, args.appendix_epsilon) for name, found in runs.items()}
    print(why.counts_table(frames).to_string(index=False))
    cells = effect_sizes.paper_cells(appendix_epsilon=args.appendix_epsilon)
    for name, frame in frames.items():
        print(f"\n{name} ({chosen[name].label()}):\n{by_run(frame).to_string(index=False)}", flush=True)
        crossed = crossings.crossings(cells, crossings.simulate(cells, chosen[name], args.seeds, args.n_samples,
                                                                n_jobs=args.jobs))
        print(crossings.counts_table(crossings.counts(crossed)).frame.to_string(index=False), flush=True)
    write_atomic(args.out, pd.concat([f.assign(configuration=n) for n, f in frames.items()],
                                     ignore_index=True).to_csv(index=False))


if __name__ == "__main__":
    main()
