"""Execute one chapter with papermill for make: ``python config/execute_chapter.py NOTEBOOK OUTPUT [OPTIONS]``.

Papermill (with its progress bar, and the OPTIONS given) writes to a hidden name beside OUTPUT, which replaces OUTPUT
only once every cell has run: an interrupted or failed chapter leaves the last good notebook where it was, and
nothing that make could take for a finished chapter. Ctrl-C stops papermill, its kernel and the kernel's worker
processes, and says so in one line (exit code 130). A chapter stopped by a user's error (a misspelt column, a
sampler the data do not allow: the package's AnalysisError) gets that error in one line instead of papermill's
traceback; any other failure keeps the traceback.
"""

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import psutil

TRACEBACK = b"Traceback (most recent call last)"
USER_ERRORS = ("AnalysisError", "DataError", "TopologyError", "ParameterError")  # analysis.errors


def forward(stream, held: list[bytes]) -> None:
    """Copy papermill's stderr (its progress bar) to ours as it comes, holding back everything from a traceback on,
    which ``held`` then holds."""
    out, tail = sys.stderr.buffer, b""
    while chunk := os.read(stream.fileno(), 65536):
        if held:
            held.append(chunk)
            continue
        text = tail + chunk
        at = text.find(TRACEBACK)
        if at < 0:  # keep the last bytes back, in case the marker is split between two reads
            keep = len(TRACEBACK) - 1
            out.write(text[:-keep] if len(text) > keep else b"")
            tail = text[-keep:] if len(text) > keep else text
        else:
            out.write(text[:at])
            held.append(text[at:])
        out.flush()
    if not held:
        out.write(tail)
        out.flush()


def user_error(notebook: Path) -> str | None:
    """The message of the package error that stopped ``notebook``, if a user's error stopped it."""
    try:
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError, KeyError):
        return None
    for cell in cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error" and output.get("ename") in USER_ERRORS:
                return output.get("evalue")
    return None


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
    process = subprocess.Popen([str(papermill), notebook, str(partial), *options], start_new_session=True,
                               stderr=subprocess.PIPE)
    held: list[bytes] = []
    copier = threading.Thread(target=forward, args=(process.stderr, held), daemon=True)
    copier.start()
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # make stopped by SIGTERM: the same clean-up
    try:
        code = process.wait()
        copier.join()
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the clean-up short
        stop(process.pid)
        partial.unlink(missing_ok=True)
        print(f"\n{target.stem}: interrupted; {target} not changed", file=sys.stderr)
        return 130
    if code:
        message = user_error(partial)
        if message:
            print(f"{target.stem}: error: {message}; {target} not changed", file=sys.stderr)
            partial.unlink(missing_ok=True)
            return 2
        sys.stderr.buffer.write(b"".join(held))
        print(f"{target.stem}: papermill failed (exit code {code}); {target} not changed, the notebook as far as it "
              f"ran is {partial}", file=sys.stderr)
        return code
    partial.replace(target)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
