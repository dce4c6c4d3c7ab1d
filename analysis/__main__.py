"""Command line: ``python -m analysis run|table1|datasets|testsuite ...`` (see ``--help`` of each command).

  run        simulate a grid of budgets for one dataset and sampler; write the tidy p-value table
  table1     print the paper's Table 1 summary of a results CSV
  datasets   the dataset registry: list, info NAME, fetch NAME|--all
  testsuite  MT test suites: judge outputs with a suite's rules, report accuracy per category
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import multiprocessing
import os
import re
import signal
import sys
import threading
import time


_STOPPING = threading.Event()  # set once a Ctrl-C has reached the CLI's handler: the process is on its way out


# seconds: a Ctrl-C raised this long ago that the CLI has not taken was lost. Well above what a Ctrl-C takes to
# reach the CLI (the workers killed, the cache's claims released: milliseconds), since one sent again while those
# run would cut them short as a second Ctrl-C does
LOST_AFTER = 2.0
_RAISED: list[float] = []  # when each Ctrl-C was raised as a KeyboardInterrupt (time.monotonic)


def _raise_ctrl_c(signum, frame) -> None:
    """The CLI's Ctrl-C handler: a KeyboardInterrupt, as the interpreter's own, its time kept for :func:`_watch`."""
    _RAISED.append(time.monotonic())
    raise KeyboardInterrupt


def _watch() -> None:
    """Raise a lost Ctrl-C again. Code that clears every error (a bare ``except``, a C function that suppresses
    errors, a callback the interpreter cannot raise from) can swallow the KeyboardInterrupt, and the run would go
    on as if nobody had pressed it. Until the CLI has taken a Ctrl-C (``_STOPPING``), one raised more than
    ``LOST_AFTER`` seconds ago is sent again to the main thread (a signal, which wakes it where it waits, as the first
    one did); this thread never takes a SIGINT itself."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    while not _STOPPING.wait(0.1):
        if _RAISED and time.monotonic() - _RAISED[-1] > LOST_AFTER:
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)


def _catch_ctrl_c() -> None:
    """Take Ctrl-C with :func:`_raise_ctrl_c`, and start :func:`_watch`, unless SIGINT is ignored (a run started
    in the background)."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _raise_ctrl_c)
        threading.Thread(target=_watch, daemon=True, name="ctrl-c-watch").start()


def _quiet_unraisable(unraisable) -> None:
    """Drop the 'Exception ignored in ...' report of a Ctrl-C that landed in a callback the interpreter cannot raise
    from (a weakref's, during an import, say): :func:`_watch` raises it again. Once the CLI is stopping on Ctrl-C,
    every unraisable error is dropped: they come from objects the Ctrl-C cut short while they were built
    (llvmlite's, in a kernel's compilation), freed with the interrupted frames. Any other is reported as usual."""
    if _STOPPING.is_set() or (unraisable.exc_type is not None and issubclass(unraisable.exc_type, KeyboardInterrupt)):
        return
    sys.__unraisablehook__(unraisable)


if __name__ == "__main__":  # before the imports below, which a Ctrl-C can meet too
    sys.unraisablehook = _quiet_unraisable
    _catch_ctrl_c()

from analysis import __version__  # noqa: E402
from analysis.errors import AnalysisError  # noqa: E402
from analysis.tools.options import data_arguments, floats, ints, load_data, perturbation_argument, split  # noqa: E402


PROG = "python -m analysis"
DESCRIPTION = ("Multi-level bootstrap p-values for comparing two models against disaggregated human ratings: "
               "simulate a grid of budgets, summarise it as the paper's Table 1, manage the registered datasets, "
               "judge MT test suites.")


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (and exit code 2), like the package's own errors."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message}\n")


class _CommandsHelp(argparse.HelpFormatter):
    """argparse's help, with room for every command name (listed one level in) before its help text."""

    def add_argument(self, action):
        super().add_argument(action)
        names = getattr(action, "choices", None) or {}
        self._action_max_length = max(self._action_max_length, *(4 + len(name) for name in names), 0)


def _metrics(text: str) -> str | list[str]:
    return text if text == "all" else split(text)


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
    """Command-line checks of 'run', before any work, that name the flag: ranges, the output and the cache folder,
    the memory a cell needs; repeated grid values are removed, with a note. ``args.out`` becomes the file to write."""
    from analysis.experiment.cache import default_cache_dir
    from analysis.io import output_file, writable_folder

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
    if args.seed < 0:
        raise AnalysisError(f"--seed must be an integer >= 0, got {args.seed}")
    args.budgets, args.ks = _unique(args.budgets, "--budgets"), _unique(args.ks, "--ks")
    args.epsilons = _unique(args.epsilons, "--epsilons")
    if args.explain:
        return
    if args.out is None:
        raise AnalysisError("the following arguments are required: --out (or give --explain)")
    args.out = output_file(args.out, inputs=[args.data], sidecar=".json")
    if args.cache_dir and not args.no_cache:
        writable_folder(args.cache_dir, "--cache-dir")
    elif not args.no_cache:  # the default folder: name it as what it is, not as a flag the user never gave
        try:
            writable_folder(default_cache_dir(), "the cell cache")
        except AnalysisError as err:
            raise AnalysisError(f"{err}; give --no-cache, or --cache-dir with a folder you can write to") from None
    _check_memory(args)


# Memory of one cell beyond the engine's capped table caches, an upper bound measured on the engine
# (tests/test_bad_inputs.py checks the first): the metric tables hold (K + 1)**2 entries (S2 measured 47 bytes an
# entry, S1 110, S3 118), the replicates' deltas a row each, and the S1 and S3 kernels a few words per drawn item.
BYTES_PER_TABLE_ENTRY, BYTES_PER_REPLICATE, BYTES_PER_ITEM = 192, 2048, 64


def cell_bytes(n: int, k: int, n_samples: int) -> int:
    """The memory one cell of N items and K responses per item needs, at most, with ``n_samples`` replicates."""
    return BYTES_PER_TABLE_ENTRY * (k + 1) ** 2 + BYTES_PER_REPLICATE * n_samples + BYTES_PER_ITEM * n


def _memory() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def _check_memory(args) -> None:
    """Refuse a grid whose largest cell, times the worker processes, would not fit in this machine's memory."""
    cells = [(b // k, k) for b in args.budgets for k in args.ks if b >= k]
    if not cells:
        return
    n, k = max(cells, key=lambda cell: cell_bytes(*cell, args.n_samples))
    workers = min(args.jobs, len(cells))
    need, have = workers * cell_bytes(n, k, args.n_samples), _memory()
    if need <= have:
        return
    share = have // workers - BYTES_PER_REPLICATE * args.n_samples - BYTES_PER_ITEM * n
    fits = math.isqrt(share // BYTES_PER_TABLE_ENTRY) - 1 if share > BYTES_PER_TABLE_ENTRY else 0
    lower = f"lower --ks (K up to {fits} fits)" if fits >= 1 else "lower --n-samples or --budgets"
    raise AnalysisError(f"the cell N = {n}, K = {k} needs about {need / 2**30:,.1f} GiB of memory"
                        f"{f' with --jobs {workers}' if workers > 1 else ''}, more than this machine's "
                        f"{have / 2**30:.1f} GiB; {lower}{' or --jobs' if workers > 1 else ''}")


def _notes(ds, args) -> None:
    """One line each: dropped rows, a K beyond every item's rater pool, a budget of far more items than the data
    hold, and labels given with --labels that no rating has."""
    if ds.n_dropped:
        print(f"note: dropped {ds.n_dropped} row(s) without a label", file=sys.stderr)
    largest = int(ds.raters_per_item.max())
    above = [k for k in args.ks if k > largest]
    if above:
        print(f"note: K {','.join(map(str, above))} exceeds the largest rater pool of an item ({largest}); raters "
              "are drawn with replacement", file=sys.stderr)
    n, budget, k = max((b // k, b, k) for b in args.budgets for k in args.ks)
    if n >= FAR_MORE_ITEMS * ds.n_items:
        print(f"note: --budgets {budget} at K {k} draws N = {n:,} items, {n // ds.n_items:,} times the "
              f"{ds.n_items} items of the data (with replacement)", file=sys.stderr)
    unseen = [str(name) for name, count in zip(ds.label_names, ds.item_label_counts.sum(axis=0)) if count == 0]
    if args.labels and unseen:
        print(f"note: no rating has the label(s) {', '.join(unseen)} given with --labels", file=sys.stderr)


FAR_MORE_ITEMS = 1000  # a budget whose N is this many times the data's items gets a note


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


#: The commands that load the engine (numba, scipy), with their help line; only a named one's options are built.
ENGINE_COMMANDS = {"run": "simulate a grid of budgets and write the tidy p-value table",
                   "compare": "compare two systems' outputs against multi-rater annotations",
                   "plan": "plan a study: power of N x K designs, the cheapest reaching a target"}


def _named_command(argv: list[str]) -> str | None:
    """The command ``argv`` names: its first word that is not an option (the top level has no option that takes a
    value)."""
    return next((word for word in argv if not word.startswith("-")), None)


def _parser(engine_commands=tuple(ENGINE_COMMANDS)) -> argparse.ArgumentParser:
    """The command line; of the :data:`ENGINE_COMMANDS`, only those in ``engine_commands`` get their options (the
    others are listed with their help line)."""
    parser = _Parser(prog=PROG, description=DESCRIPTION, formatter_class=_CommandsHelp)
    parser.add_argument("--version", action="version", version=f"analysis {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                     title="commands (python -m analysis COMMAND --help for its options)")
    _add_engine_command(commands, "run", engine_commands)  # in the order --help lists them
    _add_light_commands(commands)
    for name in ("compare", "plan"):
        _add_engine_command(commands, name, engine_commands)
    return parser


def _add_engine_command(commands, name: str, engine_commands) -> None:
    """Engine command ``name`` with its options where it is among ``engine_commands``, else its help line alone."""
    if name not in engine_commands:
        commands.add_parser(name, help=ENGINE_COMMANDS[name])
    else:
        add = _add_run if name == "run" else importlib.import_module(f"analysis.tools.{name}_report").add_cli
        add(commands, ENGINE_COMMANDS[name])


def _add_run(commands, line: str) -> None:
    """Register ``run`` on the command line's subparsers, with its one-line help, as the tools register theirs."""
    from analysis.experiment.choices import BOOK
    from analysis.experiment.grid import PAPER_BUDGETS, PAPER_EPSILONS, PAPER_KS
    from analysis.engine.metrics import ALL_METRICS, AVERAGINGS, METRICS, SMOOTHINGS
    from analysis.engine.split import NULL_MIXINGS
    from analysis.engine.samplers import SAMPLERS

    run = commands.add_parser("run", help=line, description="Simulate the N x K grid for one dataset and sampler.")
    data_arguments(run)
    run.add_argument("--sampler", required=True, choices=SAMPLERS, help="bootstrap sampler")
    run.add_argument("--budgets", type=ints, default=list(PAPER_BUDGETS), help="comma-separated N*K budgets (default: the paper's)")
    run.add_argument("--ks", type=ints, default=list(PAPER_KS), help="comma-separated responses per item K (default: the paper's)")
    run.add_argument("--epsilons", type=floats, default=list(PAPER_EPSILONS), help="comma-separated perturbations (default: 0.1,0.2,0.3,0.4)")
    perturbation_argument(run)
    run.add_argument("--metrics", type=_metrics, default="all",
                     help=f"comma-separated metrics, or 'all' for the paper's eight ({','.join(METRICS)}, with "
                          f"precision, recall and F1 averaged by --averaging); also "
                          f"{','.join(m for m in ALL_METRICS if m not in METRICS)}")
    run.add_argument("--averaging", choices=AVERAGINGS, default=BOOK.averaging,
                     help=f"how 'all' averages precision, recall and F1 over the labels (default: {BOOK.averaging}, "
                          "as in the book)")
    run.add_argument("--smoothing", type=float, choices=SMOOTHINGS, default=BOOK.smoothing,
                     help=f"the constant added to every count before KL and JSD (default: {BOOK.smoothing:g}, as in "
                          "the book; 1e-12 is VET's)")
    run.add_argument("--null-mixing", choices=NULL_MIXINGS, default=BOOK.null_mixing,
                     help=f"how the null mixes A's and B's rater columns (default: {BOOK.null_mixing}, a uniform "
                          "half of them to A*; pairs: a coin per pair of A's and B's columns)")
    run.add_argument("--n-samples", type=int, default=1000, help="replicates for the alternative and for the null (default: 1000)")
    run.add_argument("--seed", type=int, default=0, help="random seed, an integer >= 0 (default: 0)")
    run.add_argument("--jobs", type=int, default=1, help="worker processes (default: 1)")
    run.add_argument("--scheduler", default=None,
                     help="address of a dask.distributed scheduler (tcp://HOST:8786): run the cells on that cluster "
                          "(same seeds, same numbers; needs the dask extra)")
    run.add_argument("--cache-dir", default=None, help="cache of finished cells (default: $ANALYSIS_CACHE_DIR or ~/.cache/annotator-bootstrap)")
    run.add_argument("--no-cache", action="store_true", help="neither read nor write the cell cache")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    run.add_argument("--out",
                     help="output CSV, provenance to OUT.json beside it; a link is written through to its target; "
                          "never an input, a folder, a device or '-' (required unless --explain)")
    run.add_argument("--explain", action="store_true",
                     help="print each cell's plan (which kernel and tables draw it) and a rough cost, then exit")


def _add_light_commands(commands) -> None:
    """``table1``, ``datasets`` and ``testsuite``, whose work needs no engine."""
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
    fetch.add_argument("--missing", action="store_true",
                       help="with --all: only those not yet in the cache (intact)")
    fetch.add_argument("--if-online", action="store_true",
                       help="with --all: first try to reach the datasets' host for a few seconds; without network, "
                            "say so in one line and fetch nothing (make book does this)")
    suite = commands.add_parser("testsuite", help="regex-checked MT test suites: judge outputs, review warnings, "
                                                  "report accuracy",
                                description="Judge MT outputs with a test suite's rules, review the warnings by "
                                            "hand, and report accuracy.")
    steps = suite.add_subparsers(dest="action", required=True)
    judge = steps.add_parser("judge", help="write one row per (item, system) with the judgement and its reason",
                             description="Judge outputs with a suite's rules. 'testsuite judge --rules demo "
                                         "--outputs demo --out judgements.csv' runs the bundled demo suite.")
    judge.add_argument("--rules", required=True,
                       help="the suite's items.json (DFKI schema), or 'demo' for the bundled 40-item demo suite")
    judge.add_argument("--outputs", required=True, help="outputs: CSV/TSV (item_id, system, output) or WMT JSON "
                                                        "lines, or 'demo' for the demo suite's outputs")
    judge.add_argument("--out", required=True, help="judgements CSV (never an input, a folder, a device or '-')")
    report = steps.add_parser("report", help="accuracy per category, phenomenon, tense or verb type, first clusters "
                                             "in bold")
    report.add_argument("judgements", help="a CSV written by 'testsuite judge' (or 'testsuite review apply')")
    report.add_argument("--analysis", type=int, choices=(1, 2), default=1,
                        help="1: drop items with a warning for any system; 2: drop warnings per system (default 1)")
    report.add_argument("--by", choices=("category", "phenomenon", "tense", "verb-type"), default="category",
                        help="tense and verb-type: the verb category's phenomena, read from their names "
                             "('Modal - perfect')")
    report.add_argument("--exclude-systems", type=split, default=[], metavar="A,B",
                        help="systems left out (as the source leaves its unsupervised systems out of Analysis 1)")
    review = steps.add_parser("review", help="the manual review of warnings: export them, apply the reviews",
                              description="Export the warnings for a reviewer, then apply the reviews (pass or "
                                          "fail). The reviews file persists: export again after a new judge run "
                                          "keeps its reviews, and apply applies them to the new judgements.")
    turns = review.add_subparsers(dest="turn", required=True)
    export = turns.add_parser("export", help="write the warnings as a reviews CSV (fill its review column)")
    export.add_argument("judgements", help="a CSV written by 'testsuite judge'")
    export.add_argument("--rules", required=True, help="the suite's items.json (for the source sentences), or 'demo'")
    export.add_argument("--out", required=True, help="reviews CSV; reviews already in it are kept (a warning of the "
                                                     "same output takes its review)")
    apply = turns.add_parser("apply", help="replace reviewed warnings by their review; write new judgements")
    apply.add_argument("judgements", help="a CSV written by 'testsuite judge'")
    apply.add_argument("--reviews", required=True,
                       help="a reviews CSV (from 'review export', review filled), or 'demo' for the demo's reviews")
    apply.add_argument("--out", required=True, help="judgements CSV with the reviews applied")


def _testsuite(args) -> None:
    from analysis.testsuite.command import run

    run(args)


def _datasets(args) -> None:
    from analysis.data import datasets

    if args.action == "list":
        for name in datasets.names():
            spec = datasets.ENTRIES.get(name)
            where = "stand-in" if spec is None else ("in cache" if datasets.available(name) else "not in cache")
            print(f"{name:28s} {where:13s} {spec.description if spec else 'synthetic (analysis.data.synthetic)'}")
    elif args.action == "info":
        print(json.dumps(datasets.info(args.name), indent=2, ensure_ascii=False))
    else:
        if bool(args.all) == bool(args.name):
            raise AnalysisError("give one dataset name or --all")
        chosen = [n for n, e in datasets.ENTRIES.items() if not any(f.local_only for f in e.files)] \
            if args.all else [args.name]
        if (args.missing or args.if_online) and not args.all:
            raise AnalysisError("--missing and --if-online go with --all")
        if args.missing:
            chosen = [name for name in chosen if not datasets.available(name)]
            if not chosen:
                print("every registered dataset that can be downloaded is in the cache", file=sys.stderr)
                return
        if args.if_online and not datasets.online(chosen):
            print(f"no network: {len(chosen)} registered dataset(s) not fetched ({', '.join(chosen)}); the chapters "
                  "say what is missing, and `make data` fetches them later", file=sys.stderr)
            return
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
    from analysis.experiment import grid

    ds = load_data(args)
    _notes(ds, args)
    if args.explain:
        from analysis.engine import Simulator
        from analysis.experiment.timing import FIRST_COMPILE_SECONDS, kernels_compiled

        compiled = kernels_compiled()  # before the plans, which may compile some
        grid_cells = grid.cells(args.sampler, args.budgets, args.ks, args.epsilons, args.perturbation)
        simulator = Simulator(ds, args.sampler, smoothing=args.smoothing, null_mixing=args.null_mixing)
        plans = grid.explain(simulator, grid_cells, args.n_samples)
        print(plans.to_string(index=False))
        seconds = plans["seconds (rough)"].sum()
        print(f"{len(plans)} cells, {f'about {seconds:.0f} s' if seconds >= 1 else 'under 1 s'} on one core once "
              "the kernels are compiled (a rough estimate from the benchmark machine)"
              + ("" if compiled else "; the first run of this engine on this machine compiles them first, a one-off "
                 f"of about {FIRST_COMPILE_SECONDS[0]}-{FIRST_COMPILE_SECONDS[1]} s"))
        return
    table = grid.run(ds, args.sampler, budgets=args.budgets, ks=args.ks, epsilons=args.epsilons, metrics=args.metrics,
                     perturbation=args.perturbation, n_samples=args.n_samples, seed=args.seed, n_jobs=args.jobs,
                     cache_dir=args.cache_dir, use_cache=not args.no_cache, progress=not args.quiet,
                     scheduler=args.scheduler, smoothing=args.smoothing, averaging=args.averaging,
                     null_mixing=args.null_mixing)
    grid.save_results(table, args.out)
    print(f"wrote {len(table)} rows to {args.out}", file=sys.stderr)


def _table1(args) -> None:
    import pandas as pd

    from analysis.data.reading import read_csv_as

    results = read_csv_as(args.results, "a results CSV")
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
    from analysis.experiment import table1

    print(table1.table1_text(results, args.alpha, table1.data_size(args.results)))


# per command, the flags whose lower values use less memory (a test checks that each command has them)
MEMORY_FLAGS = {"run": "--ks, --budgets, --n-samples or --jobs", "plan": "--ns, --ks or --n-samples",
                "compare": "--k or --n-samples"}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _parser(engine_commands={_named_command(argv)} & set(ENGINE_COMMANDS))
    args = parser.parse_args(argv)
    args.argv = argv  # what reproduces the run (plan --html shows it)
    if args.command in ENGINE_COMMANDS:
        from analysis.experiment.workers import one_blas_thread

        one_blas_thread()
    try:
        if args.command == "run":
            _check_run(args)
            _run(args)
        elif args.command in ENGINE_COMMANDS:
            importlib.import_module(f"analysis.tools.{args.command}_report").run_cli(args)
        else:
            {"table1": _table1, "datasets": _datasets, "testsuite": _testsuite}[args.command](args)
    except AnalysisError as err:
        print(f"{parser.prog} {args.command}: error: {_cli_words(str(err))}", file=sys.stderr)
        return 2
    except MemoryError:  # a safety net: _check_memory refuses the cells known to be too large
        lower = f"; lower {MEMORY_FLAGS[args.command]}" if args.command in MEMORY_FLAGS else ""
        print(f"{parser.prog} {args.command}: error: out of memory{lower}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as stop:
        _STOPPING.set()
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not break the message
        cached = getattr(stop, "cached", None)
        kept = "" if cached is None else (f"; {cached[0]} of {cached[1]} cells are cached in {cached[2]}, and the "
                                          "same command resumes from them" if cached[2] else
                                          f"; {cached[0]} of {cached[1]} cells were finished, none cached (--no-cache)")
        print(f"\n{parser.prog} {args.command}: interrupted{kept}; no output written", file=sys.stderr)
        signal.signal(signal.SIGINT, previous)
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


def _by_ctrl_c(error: BaseException | None) -> bool:
    """Whether ``error`` is, or was caused by, Ctrl-C (an extension module interrupted while it loads raises an
    ImportError from the KeyboardInterrupt)."""
    while error is not None:
        if isinstance(error, KeyboardInterrupt):
            return True
        error = error.__cause__ or error.__context__
    return False


def entry_point() -> None:
    stopped_by = None  # the error that ended the run before main could catch it
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet_stdout()
        code = 141
    except BaseException as error:  # Ctrl-C before main could catch it (while the modules load), or a bug
        stopped_by, code = error, 130
    while code == 130:
        # After Ctrl-C, ignore the next one. An impatient user's second Ctrl-C, already on its way, raises at the
        # next Python call, which may be one of these: it is absorbed and the step done again.
        try:
            if stopped_by is not None and not _by_ctrl_c(stopped_by):
                raise stopped_by
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            break
        except KeyboardInterrupt:
            continue
    if stopped_by is not None:
        _STOPPING.set()
        print(f"\n{PROG}: interrupted; no output written", file=sys.stderr)
    if code == 130:
        # Leave at once: the interpreter's shutdown would wait for the worker pool's threads, and a second Ctrl-C
        # there prints a traceback ("Exception ignored in: <module 'threading'>"). Workers that Ctrl-C met before
        # the run could stop them would go on computing: they are stopped here.
        for worker in multiprocessing.active_children():
            worker.kill()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    entry_point()
