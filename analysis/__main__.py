"""Command line: ``python -m analysis run|table1 ...`` (see ``--help`` of each command)."""

from __future__ import annotations

import argparse
import json
import sys

import pandas as pd

from analysis import __version__
from analysis.errors import AnalysisError


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (and exit code 2), like the package's own errors."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message}\n")


def _comma_list(cast, what: str):
    """An argparse type for comma-separated values of ``cast``."""
    def parse(text: str) -> list:
        try:
            values = [cast(v) for v in text.split(",") if v.strip()]
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected comma-separated {what}, got {text!r}") from None
        if not values:
            raise argparse.ArgumentTypeError("expected at least one value")
        return values
    return parse


_ints, _floats = _comma_list(int, "integers"), _comma_list(float, "numbers")


def _parser() -> argparse.ArgumentParser:
    from analysis.grid import PAPER_BUDGETS, PAPER_EPSILONS, PAPER_KS

    parser = _Parser(prog="python -m analysis", description=__doc__)
    parser.add_argument("--version", action="version", version=f"analysis {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("run", help="simulate a grid of budgets and write the tidy p-value table",
                              description="Simulate the N x K grid for one dataset and sampler.")
    run.add_argument("--data", required=True, help="a dataset name (e.g. dices-synthetic) or a CSV/TSV/JSONL/Parquet file")
    run.add_argument("--item", default="item", help="item id column of the file (default: item)")
    run.add_argument("--rater", default="rater", help="rater id column of the file (default: rater)")
    run.add_argument("--label", default="label", help="label column of the file (default: label)")
    run.add_argument("--batch", default=None, help="optional batch column (needed by S3 unless batches can be inferred)")
    run.add_argument("--duplicates", choices=("error", "first", "last"), default="error",
                     help="what to do with a repeated (item, rater) pair (default: error)")
    run.add_argument("--sampler", required=True, choices=("S1", "S2", "S3"), help="bootstrap sampler")
    run.add_argument("--budgets", type=_ints, default=list(PAPER_BUDGETS), help="comma-separated N*K budgets (default: the paper's)")
    run.add_argument("--ks", type=_ints, default=list(PAPER_KS), help="comma-separated responses per item K (default: the paper's)")
    run.add_argument("--epsilons", type=_floats, default=list(PAPER_EPSILONS), help="comma-separated perturbations (default: 0.1,0.2,0.3,0.4)")
    run.add_argument("--perturbation", choices=("dirichlet", "uniform"), default="dirichlet",
                     help="how B is perturbed: per-item Dirichlet noise as in VET (default) or a uniform other label")
    run.add_argument("--metrics", default="all", help="comma-separated metrics or 'all' (accuracy,mae,wins,precision,recall,f1,kl_div,jsd)")
    run.add_argument("--n-samples", type=int, default=1000, help="replicates for the alternative and for the null (default: 1000)")
    run.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    run.add_argument("--jobs", type=int, default=1, help="worker processes (default: 1)")
    run.add_argument("--cache-dir", default=None, help="cache of finished cells (default: $ANALYSIS_CACHE_DIR or ~/.cache/annotator-bootstrap)")
    run.add_argument("--no-cache", action="store_true", help="neither read nor write the cell cache")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    run.add_argument("--out", required=True, help="output CSV; provenance goes to OUT.json")

    t1 = commands.add_parser("table1", help="print the Table 1 summary of a results CSV",
                             description="Smallest budget with p < alpha per metric, as in the paper's Table 1.")
    t1.add_argument("results", help="a CSV written by 'run'")
    t1.add_argument("--alpha", type=float, default=0.05, help="significance level (default: 0.05)")
    data = commands.add_parser("datasets", help="the dataset registry: list, info, fetch",
                               description="Registered datasets and their cache ($ANNOTATION_DATA_DIR).")
    actions = data.add_subparsers(dest="action", required=True)
    actions.add_parser("list", help="every registered dataset and stand-in, and whether it is in the cache")
    info = actions.add_parser("info", help="print one JSON object of counts, design and file hashes")
    info.add_argument("name")
    fetch = actions.add_parser("fetch", help="download into the cache and check the sha256 of every file")
    fetch.add_argument("name", nargs="?", help="a registered dataset")
    fetch.add_argument("--all", action="store_true", help="every registered dataset that can be downloaded")
    suite = commands.add_parser("testsuite", help="regex-checked MT test suites: judge outputs, report accuracy",
                                description="Judge MT outputs with a test suite's rules and report accuracy.")
    steps = suite.add_subparsers(dest="action", required=True)
    judge = steps.add_parser("judge", help="write one row per (item, system) with the judgement and its reason")
    judge.add_argument("--rules", required=True, help="the suite's items.json (DFKI schema)")
    judge.add_argument("--outputs", required=True, help="outputs: CSV/TSV (item_id, system, output) or WMT JSON lines")
    judge.add_argument("--out", required=True, help="judgements CSV")
    report = steps.add_parser("report", help="accuracy per category or phenomenon, first clusters in bold")
    report.add_argument("judgements", help="a CSV written by 'testsuite judge'")
    report.add_argument("--analysis", type=int, choices=(1, 2), default=1,
                        help="1: drop items with a warning for any system; 2: drop warnings per system (default 1)")
    report.add_argument("--by", choices=("category", "phenomenon"), default="category")
    return parser


def _testsuite(args) -> None:
    from analysis import testsuite
    from analysis.grid import write_atomic

    if args.action == "judge":
        table = testsuite.judge_all(testsuite.load_rules(args.rules), testsuite.load_outputs(args.outputs))
        write_atomic(args.out, table.to_csv(index=False))
        skipped = ", ".join(f"{n} {why}" for why, n in table.attrs["not_scored"].items() if n)
        print(f"wrote {len(table)} judgements to {args.out}" + (f"; not scored: {skipped}" if skipped else ""),
              file=sys.stderr)
    else:
        try:
            table = pd.read_csv(args.judgements, dtype={"item_id": str})
        except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as err:
            raise AnalysisError(f"cannot read {args.judgements}: {err}") from err
        missing = {"item_id", "system", "category", "phenomenon", "judgement"} - set(table.columns)
        if missing:
            raise AnalysisError(f"{args.judgements} lacks column(s) {sorted(missing)}; write it with 'testsuite judge'")
        print(f"Analysis {args.analysis}; accuracy in %; first significance cluster (Z-test, alpha 0.05) in **bold**")
        print(testsuite.cluster_table(table, args.analysis, args.by).to_string())


def _datasets(args) -> None:
    from analysis import datasets

    if args.action == "list":
        for name in datasets.names():
            spec = datasets.ENTRIES.get(name)
            where = "stand-in" if spec is None else ("in cache" if datasets.available(name) else "not in cache")
            print(f"{name:28s} {where:13s} {spec.description if spec else 'synthetic (analysis.synthetic)'}")
    elif args.action == "info":
        print(json.dumps(datasets.info(args.name), indent=2))
    else:
        if bool(args.all) == bool(args.name):
            raise AnalysisError("give one dataset name or --all")
        chosen = [n for n, e in datasets.ENTRIES.items() if not any(f.local_only for f in e.files)] \
            if args.all else [args.name]
        failed = []
        for name in chosen:
            try:
                print(f"{name}: {datasets.fetch(name)}")
            except Exception as err:  # a download can fail in many ways; report each and go on
                failed.append(name)
                print(f"{name}: not fetched: {err}", file=sys.stderr)
        if failed:
            raise AnalysisError(f"{len(failed)} dataset(s) not fetched: {', '.join(failed)}")


def _run(args) -> None:
    from analysis import datasets, grid

    ds = datasets.load(args.data, item=args.item, rater=args.rater, label=args.label, batch=args.batch,
                       duplicates=args.duplicates)
    if ds.n_dropped:
        print(f"dropped {ds.n_dropped} row(s) without a label", file=sys.stderr)
    metrics = "all" if args.metrics == "all" else args.metrics.split(",")
    table = grid.run(ds, args.sampler, budgets=args.budgets, ks=args.ks, epsilons=args.epsilons, metrics=metrics,
                     perturbation=args.perturbation, n_samples=args.n_samples, seed=args.seed, n_jobs=args.jobs, cache_dir=args.cache_dir,
                     use_cache=not args.no_cache, progress=not args.quiet)
    grid.save_results(table, args.out)
    print(f"wrote {len(table)} rows to {args.out}", file=sys.stderr)


def _table1(args) -> None:
    from analysis import grid

    try:
        results = pd.read_csv(args.results)
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as err:
        raise AnalysisError(f"cannot read {args.results}: {err}") from err
    print(grid.table1_wide(grid.table1(results, alpha=args.alpha)).to_string())


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    handlers = {"run": _run, "table1": _table1, "datasets": _datasets, "testsuite": _testsuite}
    try:
        handlers[args.command](args)
    except AnalysisError as err:
        print(f"{parser.prog} {args.command}: error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
