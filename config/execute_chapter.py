"""Execute one chapter with papermill for make: ``python config/execute_chapter.py NOTEBOOK OUTPUT [OPTIONS]``.

Papermill (with its progress bar, and the OPTIONS given) writes to a hidden name beside OUTPUT, which replaces OUTPUT
only once every cell has run: an interrupted or failed chapter leaves the last good notebook where it was, and
nothing that make could take for a finished chapter. Ctrl-C stops papermill, its kernel and the kernel's worker
processes, and says so in one line (exit code 130).
"""

import signal
import subprocess
import sys
from pathlib import Path

import psutil


def stop(pid: int) -> None:
    """End a process and every process below it (papermill's kernel runs in a session of its own, so Ctrl-C does
    not reach it, and the kernel's workers would outlive it)."""
    try:
        root = psutil.Process(pid)
        family = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return
    for process in family:
        try:
            process.terminate()
        except psutil.NoSuchProcess:
            pass
    for process in psutil.wait_procs(family, timeout=5)[1]:
        process.kill()


def main(notebook: str, output: str, *options: str) -> int:
    target = Path(output)
    partial = target.with_name(f".{target.stem}.part{target.suffix}")  # papermill wants the .ipynb ending
    papermill = Path(sys.executable).with_name("papermill")
    process = subprocess.Popen([str(papermill), notebook, str(partial), *options], start_new_session=True)
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # make stopped by SIGTERM: the same clean-up
    try:
        code = process.wait()
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the clean-up short
        stop(process.pid)
        partial.unlink(missing_ok=True)
        print(f"\n{target.stem}: interrupted; {target} not changed", file=sys.stderr)
        return 130
    if code:
        print(f"{target.stem}: papermill failed (exit code {code}); {target} not changed, the notebook as far as it "
              f"ran is {partial}", file=sys.stderr)
        return code
    partial.replace(target)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
