"""Files the package writes: atomic writes, values made ready for JSON, and the checks that make a user's output path safe before any work."""

from __future__ import annotations

import math
import os
import stat
import tempfile
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from analysis.errors import ParameterError


def replace_atomic(path: str | Path, write: Callable[[Path], None], suffix: str = ".tmp") -> None:
    """Make ``path`` by ``write(temporary)`` on a temporary file in the same directory (with the usual file mode,
    not mkstemp's private 0600), then a rename: a reader sees the old file or the new one, never a part."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=suffix)
    os.close(handle)
    try:
        os.chmod(tmp, 0o666 & ~_umask())
        write(Path(tmp))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (:func:`replace_atomic`)."""
    replace_atomic(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current


def writable_folder(folder: str | Path, flag: str, named: str | Path | None = None) -> Path:
    """``folder`` checked as a place to write into: a folder, or a path whose nearest existing part is a folder in
    which this user can create files (the rest is created when written). Errors say ``flag`` and what it
    ``named`` (default: the folder)."""
    folder = Path(folder).expanduser()
    existing = next(p for p in (folder, *folder.parents) if p.exists())
    named = folder if named is None else named
    if not existing.is_dir():
        raise ParameterError(f"{flag} {named}: {existing} is a file, not a folder")
    try:  # a real probe: permissions alone say yes to root on /proc or a read-only mount
        handle, probe = tempfile.mkstemp(dir=existing, prefix=".write-check.")
    except OSError as err:
        raise ParameterError(f"{flag} {named}: cannot create a file in {existing} ({err.strerror})") from None
    os.close(handle)
    os.unlink(probe)
    return folder


def output_file(out: str, inputs: Sequence[str | Path] = (), sidecar: str = "", flag: str = "--out",
                suffixes: Sequence[str] = ()) -> Path:
    """The file that ``out`` names, checked before any work; for a symbolic link, the link's target.

    Refused, each with one line: ``-``, a folder, a device, pipe or socket, a path in ``/dev``, ``/proc`` or
    ``/sys`` (``/dev/stdout``, however it resolves), one of ``inputs`` under any name, and a place this user
    cannot write. ``sidecar`` (say ``".json"``) names a second output written beside the first; it is checked
    the same way and may not be a link. ``suffixes``: the only suffixes the file may have (the format written).
    """
    if suffixes and Path(out).suffix.lower() not in suffixes:
        raise ParameterError(f"{flag} {out}: the output is written as {' or '.join(s[1:].upper() for s in suffixes)}; "
                             f"name a {' or '.join(suffixes)} file")
    if out == "-":
        raise ParameterError(f"{flag} -: standard output is not supported; name a file")
    target = Path(out).expanduser()
    for path in (target.absolute(), target.resolve()):
        if path.parts[1:2] in (("dev",), ("proc",), ("sys",)):
            raise ParameterError(f"{flag} {out} is in /{path.parts[1]}, a folder of the system, not of files; name "
                                 "a file elsewhere")
    _check_output(target, inputs, flag)
    target = target.resolve() if target.is_symlink() else target  # the link stays and points at the new file
    if sidecar:
        beside = Path(f"{target}{sidecar}")
        if beside.is_symlink():
            raise ParameterError(f"{flag}: {beside}, where the provenance goes, is a symbolic link; remove it or "
                                 "name another output")
        _check_output(beside, inputs, flag)
    writable_folder(target.parent, flag, named=out)
    return target


def _check_output(path: Path, inputs: Sequence[str | Path], flag: str) -> None:
    try:
        mode = path.stat().st_mode  # follows links: /dev/stdout is the terminal or pipe behind it
    except (FileNotFoundError, NotADirectoryError):  # the folder check says what is wrong with the folders
        mode = None
    except OSError as err:
        raise ParameterError(f"{flag} {path}: {err.strerror}") from None
    if mode is not None and stat.S_ISDIR(mode):
        raise ParameterError(f"{flag} {path} is a folder; name a file in it")
    if mode is not None and not stat.S_ISREG(mode):
        raise ParameterError(f"{flag} {path} is not a regular file (a device, pipe or socket); name a file")
    for source in inputs:
        if _same_file(path, Path(source)):
            raise ParameterError(f"{flag} {path} is the input {source}; name another file, the input would be "
                                 "overwritten")


def _same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file: by inode where both exist (hard links too), else by resolved path."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return a.resolve() == b.resolve()


def json_ready(value):
    """``value`` with NaN as None and numpy scalars as Python ones, so that ``json.dumps`` writes valid JSON."""
    if isinstance(value, dict):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
