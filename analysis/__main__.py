"""Command line: ``python -m analysis run|table1|datasets|testsuite ...`` (see ``--help`` of each command).

  run        simulate a grid of budgets for one dataset and sampler; write the tidy p-value table
  table1     print the paper's Table 1 summary of a results CSV
  datasets   the dataset registry: list, info NAME, fetch NAME|--all
  testsuite  MT test suites: judge outputs with a suite's rules, report accuracy per category
"""

from __future__ import annotations

import argparse
import json
import os
import re
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


def _labels(text: str) -> list:
    """--labels: comma-separated labels, numbers when every one is a number."""
    values = [v.strip() for v in text.split(",") if v.strip()]
    if len(values) < 2:
        raise argparse.ArgumentTypeError(f"expected two labels or more, got {text!r}")
    if len(set(values)) < len(values):
        raise argparse.ArgumentTypeError(f"a label is repeated in {text!r}")
    try:
        numbers = [float(v) for v in values]
    except ValueError:
        return [int(v) if re.fullmatch(r"-?\d+", v) else v for v in values]
    return [int(n) if n.is_integer() else n for n in numbers]


def _alpha(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"the significance level must lie in (0, 1), got {text}")
    return value


def _unique(values: list, flag: str) -> list:
    """The values in their order without repeats, with a note when some were removed."""
    kept = list(dict.fromkeys(values))
    if len(kept) < len(values):
        print(f"note: repeated {flag} values removed: {','.join(f'{v:g}' for v in values)} -> "
              f"{','.join(f'{v:g}' for v in kept)}", file=sys.stderr)
    return kept


def _check_run(args) -> None:
    """Command-line checks of 'run' that name the flag: ranges, and repeated grid values (removed, with a note)."""
    for flag, values in (("--budgets", args.budgets), ("--ks", args.ks)):
        bad = [v for v in values if v < 1]
        if bad:
            raise AnalysisError(f"{flag} values must be integers >= 1, got {bad[0]}")
    bad = [e for e in args.epsilons if not 0 <= e <= 1]
    if bad:
        raise AnalysisError(f"--epsilons values must lie in [0, 1], got {bad[0]:g}")
    if args.n_samples < 2:
        raise AnalysisError(f"--n-samples must be >= 2, got {args.n_samples}")
    if args.jobs < 1:
        raise AnalysisError(f"--jobs must be >= 1, got {args.jobs}")
    args.budgets, args.ks = _unique(args.budgets, "--budgets"), _unique(args.ks, "--ks")
    args.epsilons = _unique(args.epsilons, "--epsilons")


def _note_large_k(ds, ks) -> None:
    """One line when K exceeds every item's rater pool: raters are then drawn with replacement."""
    largest = int(ds.raters_per_item.max())
    above = [k for k in ks if k > largest]
    if above:
        print(f"note: K {','.join(map(str, above))} exceeds the largest rater pool of an item ({largest}); raters "
              "are drawn with replacement", file=sys.stderr)


# Python argument names in the library's messages, and the flags that set them on the command line
_FLAGS = ((r"\bduplicates='first' or 'last'", "--duplicates first or --duplicates last"),
          (r"\blabel_order\b", "--labels"), (r"\bn_samples\b", "--n-samples"), (r"\bn_jobs\b", "--jobs"),
          (r"\bbudgets and K values\b", "--budgets and --ks values"), (r"^epsilon must", "--epsilons values must"))


def _cli_words(message: str) -> str:
    if " in Python" in message:  # the message names the flag already
        return message
    for pattern, flag in _FLAGS:
        message = re.sub(pattern, flag, message)
    return message


def _read_csv(path: str, what: str, **options) -> pd.DataFrame:
    """A CSV read with one-line errors for a missing, empty, binary or malformed file."""
    try:
        return pd.read_csv(path, **options)
    except (OSError, ValueError, pd.errors.ParserError, pd.errors.EmptyDataError) as err:
        reason = "not a UTF-8 text file (binary?)" if isinstance(err, UnicodeDecodeError) else \
            str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise AnalysisError(f"cannot read {path} as {what}: {reason}") from None


def _parser() -> argparse.ArgumentParser:
    from analysis.grid import PAPER_BUDGETS, PAPER_EPSILONS, PAPER_KS

    parser = _Parser(prog="python -m analysis", description=__doc__,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"analysis {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("run", help="simulate a grid of budgets and write the tidy p-value table",
                              description="Simulate the N x K grid for one dataset and sampler.")
    run.add_argument("--data", required=True, help="a dataset name (e.g. dices-synthetic) or a CSV/TSV/JSONL/Parquet file")
    run.add_argument("--item", default="item", help="item id column of the file (default: item)")
    run.add_argument("--rater", default="rater", help="rater id column of the file (default: rater)")
    run.add_argument("--label", default="label", help="label column of the file (default: label)")
    run.add_argument("--batch", default=None, help="optional batch column (needed by S3 unless batches can be inferred)")
    run.add_argument("--labels", type=_labels, default=None,
                     help="comma-separated label order, e.g. 1,2,3,? (default: sorted; needed when labels mix "
                          "numbers and text)")
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
    run.add_argument("--scheduler", default=None,
                     help="address of a dask.distributed scheduler (tcp://HOST:8786): run the cells on that cluster "
                          "(same seeds, same numbers; needs the dask extra)")
    run.add_argument("--cache-dir", default=None, help="cache of finished cells (default: $ANALYSIS_CACHE_DIR or ~/.cache/annotator-bootstrap)")
    run.add_argument("--no-cache", action="store_true", help="neither read nor write the cell cache")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    run.add_argument("--out", required=True, help="output CSV; provenance goes to OUT.json")

    t1 = commands.add_parser("table1", help="print the Table 1 summary of a results CSV",
                             description="Smallest budget with p < alpha per metric, as in the paper's Table 1.")
    t1.add_argument("results", help="a CSV written by 'run'")
    t1.add_argument("--alpha", type=_alpha, default=0.05, help="significance level in (0, 1) (default: 0.05)")
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
    from analysis import compare, power

    compare.add_cli(commands)
    power.add_cli(commands)
    return parser


def _testsuite(args) -> None:
    from analysis import testsuite
    from analysis.io import write_atomic

    if args.action == "judge":
        table = testsuite.judge_all(testsuite.load_rules(args.rules), testsuite.load_outputs(args.outputs))
        write_atomic(args.out, table.to_csv(index=False))
        skipped = ", ".join(f"{n} {why}" for why, n in table.attrs["not_scored"].items() if n)
        print(f"wrote {len(table)} judgements ({len(testsuite.judged(table))} scored) to {args.out}"
              + (f"; not scored: {skipped}" if skipped else ""), file=sys.stderr)
    else:
        table = _read_csv(args.judgements, "judgements", dtype={"item_id": str})
        testsuite.check_judgements(table, args.judgements)
        rest = testsuite.not_scored(table)
        why = "; ".join(f"{n} {judgement} ({reason})" for (judgement, reason), n in rest.items())
        print(f"{len(table)} outputs: {len(table) - int(rest.sum())} scored, {int(rest.sum())} not scored"
              + (f": {why}" if why else ""))
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
        print(json.dumps(datasets.info(args.name), indent=2, ensure_ascii=False))
    else:
        if bool(args.all) == bool(args.name):
            raise AnalysisError("give one dataset name or --all")
        chosen = [n for n, e in datasets.ENTRIES.items() if not any(f.local_only for f in e.files)] \
            if args.all else [args.name]
        if not args.all:
            datasets.entry(args.name)  # an unknown name is one error line
            try:
                print(f"{args.name}: {datasets.fetch(args.name)}")
            except AnalysisError:
                raise
            except Exception as err:  # a download can fail in many ways: one line, and no folder left behind
                raise AnalysisError(f"{args.name} not fetched: {err}") from None
            return
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
                       duplicates=args.duplicates, label_order=args.labels)
    if ds.n_dropped:
        print(f"dropped {ds.n_dropped} row(s) without a label", file=sys.stderr)
    _note_large_k(ds, args.ks)
    metrics = "all" if args.metrics == "all" else args.metrics.split(",")
    table = grid.run(ds, args.sampler, budgets=args.budgets, ks=args.ks, epsilons=args.epsilons, metrics=metrics,
                     perturbation=args.perturbation, n_samples=args.n_samples, seed=args.seed, n_jobs=args.jobs,
                     cache_dir=args.cache_dir, use_cache=not args.no_cache, progress=not args.quiet,
                     scheduler=args.scheduler)
    grid.save_results(table, args.out)
    print(f"wrote {len(table)} rows to {args.out}", file=sys.stderr)


def _table1(args) -> None:
    from analysis import grid

    results = _read_csv(args.results, "a results CSV")
    if "p_value" in results.columns:
        p = pd.to_numeric(results["p_value"], errors="coerce")
        bad = results.loc[p.isna() & results["p_value"].notna(), "p_value"]
        if len(bad) or ((p < 0) | (p > 1)).any():
            example = bad.iloc[0] if len(bad) else p[(p < 0) | (p > 1)].iloc[0]
            raise AnalysisError(f"{args.results}: column p_value holds {example!r}, not a p-value in [0, 1]; is it a "
                                "results CSV written by 'run'?")
        results["p_value"] = p
    if results.empty:
        raise AnalysisError(f"{args.results} has no result row (only a header)")
    print(grid.table1_wide(grid.table1(results, alpha=args.alpha)).to_string())


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    from analysis import compare, power

    handlers = {"run": _run, "table1": _table1, "datasets": _datasets, "testsuite": _testsuite,
                "compare": compare.run_cli, "plan": power.run_cli}
    try:
        if args.command == "run":
            _check_run(args)
        handlers[args.command](args)
    except AnalysisError as err:
        print(f"{parser.prog} {args.command}: error: {_cli_words(str(err))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as stop:
        cached = getattr(stop, "cached", None)
        kept = "" if cached is None else (f"; {cached[0]} of {cached[1]} cells are cached in {cached[2]}, and the "
                                          "same command resumes from them" if cached[2] else
                                          f"; {cached[0]} of {cached[1]} cells were finished, none cached (--no-cache)")
        print(f"\n{parser.prog} {args.command}: interrupted{kept}; no output written", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (``| head``): stop quietly, as other tools do
        _quiet_stdout()
        return 141
    return 0


def _quiet_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's final flush does not complain about the closed pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def entry_point() -> None:
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet_stdout()
        code = 141
    sys.exit(code)


if __name__ == "__main__":
    entry_point()
