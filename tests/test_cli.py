"""The command line: a run, its Table 1, and error exits with a one-line reason."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest

from analysis.__main__ import main
from conftest import sparse_table

ROOT = Path(__file__).resolve().parents[1]


def test_run_then_table1(tmp_path, capsys):
    out = tmp_path / "results.csv"
    code = main(["run", "--data", "dices-synthetic", "--sampler", "S1", "--budgets", "500,2000", "--ks", "5,50",
                 "--epsilons", "0.4", "--metrics", "mae,jsd", "--n-samples", "60", "--seed", "2", "--quiet",
                 "--no-cache", "--out", str(out)])
    assert code == 0
    table = pd.read_csv(out)
    assert len(table) == 2 * 2 * 2 and set(table["metric"]) == {"mae", "jsd"}
    assert (tmp_path / "results.csv.json").exists()
    capsys.readouterr()
    assert main(["table1", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "dices-synthetic:S1 (ε=0.4)" in printed and "MAE" in printed


def test_own_file_with_named_columns(tmp_path):
    path = tmp_path / "mine.tsv"
    sparse_table().rename(columns={"item": "q", "rater": "who", "label": "y"}).to_csv(path, sep="\t", index=False)
    out = tmp_path / "r.csv"
    code = main(["run", "--data", str(path), "--item", "q", "--rater", "who", "--label", "y", "--sampler", "S2",
                 "--budgets", "100", "--ks", "2", "--epsilons", "0.3", "--n-samples", "20", "--quiet", "--no-cache",
                 "--out", str(out)])
    assert code == 0 and len(pd.read_csv(out)) == 8


@pytest.mark.parametrize("args, message", [
    (["run", "--data", "nowhere.csv", "--sampler", "S2", "--out", "x.csv"], "no such file: nowhere.csv"),
    (["run", "--data", "dices-synthetic", "--sampler", "S3", "--out", "x.csv"], "S3 needs batched"),
    (["run", "--data", "dices-synthetic", "--sampler", "S2", "--ks", "0", "--out", "x.csv"], ">= 1"),
    (["run", "--data", "dices-synthetic", "--sampler", "S2", "--metrics", "bleu", "--out", "x.csv"], "unknown metric"),
    (["table1", "missing.csv"], "cannot read"),
])
def test_bad_arguments_exit_2_with_one_line(args, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("args", [["run", "--sampler", "S4"], ["run", "--data", "x", "--budgets", "a,b"], []])
def test_argparse_errors_exit_2_with_one_line(args, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "error:" in err


def test_help_documents_every_option():
    text = subprocess.run([sys.executable, "-m", "analysis", "run", "--help"], capture_output=True, text=True).stdout
    for option in ("--data", "--item", "--rater", "--label", "--labels", "--batch", "--sampler", "--budgets", "--ks",
                   "--epsilons", "--metrics", "--n-samples", "--seed", "--jobs", "--out", "--normalize-labels",
                   "--cache-dir"):
        assert option in text


@pytest.mark.parametrize("argv", [["--help"], ["table1", "--help"], ["datasets", "list"],
                                  ["testsuite", "report", "--help"], ["compare", "--help"]])
def test_only_the_engine_commands_load_the_engine(argv):
    """--help and the commands that need no engine start without numba (a fraction of a second, not 2.5 s); a
    command that simulates loads it when named."""
    script = ("import sys\nfrom analysis.__main__ import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit:\n"
              "    pass\nprint('numba' in sys.modules, file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", script, *argv], capture_output=True, text=True, cwd=ROOT)
    assert done.stderr.splitlines()[-1] == str(argv[0] == "compare"), done.stderr
    assert ("dices-synthetic" if argv == ["datasets", "list"] else "usage: python -m analysis") in done.stdout
    if argv[0] == "compare":
        assert "--two-sided" in done.stdout  # its own options, built when it is named

def test_explain_prints_every_cells_plan_and_writes_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = main(["run", "--data", "toxicity-synthetic", "--sampler", "S3", "--budgets", "100,50000", "--ks", "1,40",
                 "--epsilons", "0.3", "--explain"])
    assert code == 0
    printed = capsys.readouterr().out
    lines = [line for line in printed.splitlines() if line.strip().startswith("0.3")]
    assert len(lines) == 4  # every cell once
    assert "gather, defer" in printed and "by-item" in printed and "4 cells" in printed
    assert list(tmp_path.iterdir()) == []


def _chapter(tmp_path, source: str) -> tuple[subprocess.Popen, Path, Path]:
    """config/execute_chapter.py on a one-cell notebook, started as a terminal starts a command."""
    import nbformat

    notebook, output = tmp_path / "in.ipynb", tmp_path / "out.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)]), notebook)
    process = subprocess.Popen([sys.executable, str(ROOT / "config" / "execute_chapter.py"), str(notebook),
                                str(output), "--kernel", "python3", "--log-level", "WARNING"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                               preexec_fn=lambda: (os.setpgrp(), signal.signal(signal.SIGINT, signal.SIG_DFL)))
    return process, output, tmp_path / ".out.part.ipynb"


@pytest.mark.slow
def test_a_chapter_appears_only_once_executed_and_ctrl_c_leaves_nothing(tmp_path):
    import psutil

    process, output, partial = _chapter(tmp_path, "print(6 * 7)")
    assert process.wait(timeout=120) == 0, process.stderr.read()
    assert "42" in output.read_text() and not partial.exists()
    before = output.read_bytes()

    process, output, partial = _chapter(tmp_path, "import time; time.sleep(120)")
    deadline = time.time() + 120
    while time.time() < deadline and not psutil.Process(process.pid).children(recursive=True)[1:]:
        time.sleep(0.2)  # papermill and its kernel are up
    time.sleep(2)
    family = psutil.Process(process.pid).children(recursive=True)
    os.killpg(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 130 and "Traceback" not in err and "interrupted" in err, err
    assert output.read_bytes() == before and not partial.exists()  # the last good notebook stays, nothing half-done
    assert not [p for p in family if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]


BIG_GRID = ["run", "--data", "dices-synthetic", "--sampler", "S2", "--budgets", "5000,10000,20000", "--ks",
            "1,5,10,20,50", "--epsilons", "0.1,0.2,0.3", "--n-samples", "1000", "--jobs", "2", "--quiet", "--no-cache"]


def _start(args, out: Path) -> subprocess.Popen:
    """``python -m analysis ARGS`` as a terminal starts it (SIGINT not ignored), with its output to ``out``."""
    return subprocess.Popen([sys.executable, "-m", "analysis", *args, "--out", str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _workers(psutil, process: subprocess.Popen, count: int, timeout: float = 120.0) -> list:
    """The first ``count`` worker processes of ``process`` (forked: the same command line), as soon as they exist."""
    parent = psutil.Process(process.pid)
    deadline = time.time() + timeout
    while time.time() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the run ended (rc {process.returncode}) before {count} workers started: "
                                 f"{process.communicate()[1]}")
        try:
            found = [child for child in parent.children() if child.cmdline() == parent.cmdline()]
        except psutil.Error:
            found = []
        if len(found) >= count:
            return found
        time.sleep(0.001)
    raise AssertionError(f"no {count} workers within {timeout} s")


@pytest.mark.slow
def test_workers_die_with_a_parent_killed_by_sigkill(tmp_path):
    """kill -9 of a --jobs 2 run leaves no worker behind for more than a few seconds (they used to wait, as
    orphans of PID 1, for a parent that would never come back)."""
    psutil = pytest.importorskip("psutil")
    process = _start(BIG_GRID, tmp_path / "r.csv")
    workers = _workers(psutil, process, 2)
    time.sleep(1.0)  # the workers are computing
    process.kill()
    process.communicate(timeout=30)
    killed = time.time()
    gone, alive = psutil.wait_procs(workers, timeout=5)
    assert not alive, f"{len(alive)} worker(s) alive 5 s after the parent was killed"
    assert time.time() - killed < 5 and not (tmp_path / "r.csv").exists()


@pytest.mark.slow
def test_ctrl_c_while_the_workers_start_never_prints_a_traceback(tmp_path):
    """Ctrl-C sent the moment the first worker process exists (while the pool forks the next one), with a delay
    of 0 to 10 ms, and once before any worker: every run exits 130 with the one message, and no worker survives.
    A Ctrl-C inside a fork used to print 'Exception ignored in: <function _releaseLock ...> KeyboardInterrupt'.
    ``make test`` runs it beside a second test worker, which loads the machine as a busy CI runner would."""
    psutil = pytest.importorskip("psutil")
    for attempt, delay in enumerate((0, 0.001, 0.003, 0.01, -1)):
        process = _start(BIG_GRID, tmp_path / "r.csv")
        if delay >= 0:
            workers = _workers(psutil, process, 1)
            time.sleep(delay)
        else:  # while the parent loads the data and builds its tables, before any worker
            time.sleep(1.0)
            workers = []
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
        assert process.returncode == 130, (attempt, err)
        assert "Traceback" not in err and "Exception ignored" not in err and err.count("interrupted") == 1, err
        assert not psutil.wait_procs(workers, timeout=5)[1], "a worker outlived the interrupted run"
    assert not (tmp_path / "r.csv").exists()


@pytest.mark.slow
def test_an_object_that_ctrl_c_cut_short_does_not_print_when_freed(tmp_path):
    """Ctrl-C inside a constructor (llvmlite's, while a kernel compiles) leaves a half-built object whose __del__
    fails when the interrupted frames are freed, after the message. The CLI exits 130 with its one message and no
    'Exception ignored in ...' (CI saw one from llvmlite's ObjectRef)."""
    err = _stopped_run(tmp_path, """
        class HalfBuilt:
            def __init__(self):
                raise KeyboardInterrupt  # before the handle the destructor needs is set
            def __del__(self):
                self.handle.close()

        def check(args):
            HalfBuilt()

        sys.unraisablehook = cli._quiet_unraisable  # as ``python -m analysis`` sets it
        cli._check_run = check
    """)
    assert "Exception ignored" not in err


def _stopped_run(tmp_path, setup: str) -> str:
    """Standard error of ``python -m analysis run`` on the DICES stand-in, its module ``cli`` changed first by
    ``setup`` (Python, with ``os``, ``signal``, ``sys`` and ``types`` imported), after checking that it exited 130
    with the one message."""
    script = tmp_path / "stopped.py"
    script.write_text("import os, signal, sys, types\nimport analysis.__main__ as cli\n" + textwrap.dedent(setup)
                      + '\nsys.argv = ["analysis", "run", "--data", "dices-synthetic", "--sampler", "S2"]\n'
                      + "cli.entry_point()\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 130, done.stderr
    assert done.stderr.count("interrupted") == 1, done.stderr
    return done.stderr


@pytest.mark.parametrize("first", ["before main", "in main"])
def test_a_second_ctrl_c_while_the_first_is_handled_is_absorbed(tmp_path, first):
    """The impatient user's second Ctrl-C reaches Python at whatever call comes next while the first is handled
    (CI saw it raise inside ``signal.signal``, with a traceback and exit -2). Here it comes as the CLI sets Ctrl-C
    to be ignored on its way out, after a first Ctrl-C that came while the modules loaded, or that main handled.
    The CLI still exits 130 with its one message."""
    err = _stopped_run(tmp_path, f"""
        ignored = []
        def set_handler(number, handler):
            if handler is signal.SIG_IGN:
                ignored.append(handler)
                if len(ignored) == (1 if {first!r} == "before main" else 2):  # the exit's, after main's own
                    os.kill(os.getpid(), signal.SIGINT)  # the second Ctrl-C: raised at the next Python call
            return signal.signal(number, handler)

        def stopped(*args):
            raise KeyboardInterrupt

        cli.signal = types.SimpleNamespace(**{{**vars(signal), "signal": set_handler}})
        if {first!r} == "before main":
            cli.main = stopped
        else:
            cli._check_run = stopped
    """)
    assert "Traceback" not in err


LOST = """
import os, signal, sys, time, weakref
import analysis.__main__ as cli
sys.unraisablehook = cli._quiet_unraisable  # as ``python -m analysis`` sets them
cli._catch_ctrl_c()
{lose}
print("lost", flush=True)
start = time.monotonic()
try:
    time.sleep(10)
except KeyboardInterrupt:
    print(f"raised again after {{time.monotonic() - start:.2f}} s", flush=True)
"""
LOSE = {
    "a bare except": """
try:
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(1)
except:
    pass
""",
    "a weakref callback": """
class Referent:
    pass
def callback(_):
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(1)  # the KeyboardInterrupt is raised here: it cannot leave the callback
referent = Referent()
ref = weakref.ref(referent, callback)
del referent
"""}


@pytest.mark.parametrize("where", LOSE)
def test_a_ctrl_c_that_is_lost_is_raised_again(where):
    """A KeyboardInterrupt cleared by code that catches every error (a library's bare except, a C function that
    suppresses errors) or raised in a callback the interpreter cannot raise from (it would print 'Exception ignored
    in ...') would leave the run going on: the CLI raises it again, LOST_AFTER seconds on."""
    from analysis.__main__ import LOST_AFTER

    done = subprocess.run([sys.executable, "-c", LOST.format(lose=LOSE[where])], capture_output=True, text=True,
                          cwd=ROOT, timeout=60, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert done.returncode == 0 and done.stdout.startswith("lost\nraised again after "), (done.stdout, done.stderr)
    assert "Exception ignored" not in done.stderr, done.stderr
    waited = float(done.stdout.split()[-2])
    assert waited < LOST_AFTER + 1.0, waited  # raised LOST_AFTER after the first, which came at most 1 s before
