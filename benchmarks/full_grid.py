"""One full paper grid (all budgets, K and the four epsilons, 1000 + 1000 replicates, no cache) for one sampler, as
one process: the command to time whole, paired against another checkout (``benchmarks/README.md``).

    python benchmarks/full_grid.py S3 --jobs 2
"""

import argparse

from analysis import datasets, grid

DATA = {"S1": "dices-synthetic", "S2": "dices-synthetic", "S3": "toxicity-synthetic", "S4": "d3code-synthetic",
        "S2-sparse": "d3code-synthetic"}  # S2-sparse: S2 on S4's data, the pair for S4's ratio
EIGHT = ("accuracy", "mae", "wins", "precision", "recall", "f1", "kl_div", "jsd")

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sampler", choices=sorted(DATA))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--n-samples", type=int, default=1000)
    args = parser.parse_args()
    # the reference workload (Dirichlet noise, s = 1e-12, the weighted eight), named so that the same call runs
    # against a checkout whose defaults were those (181c389) and against one whose defaults are the book's
    grid.run(datasets.load(DATA[args.sampler]), args.sampler.split("-")[0], n_samples=args.n_samples, n_jobs=args.jobs,
             use_cache=False, progress=False, perturbation="dirichlet", smoothing=1e-12, metrics=list(EIGHT))
