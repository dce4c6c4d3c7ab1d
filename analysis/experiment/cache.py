"""The cell cache (the methods page): one JSON file per finished grid cell, keyed by everything that determines its
numbers, proved by a checksum, and claimed before it is computed so that two runs never compute a cell twice.

The engine's fingerprint is a hash of the simulating modules' source and of the numpy and numba versions: any
change to the kernels, the metrics, the p-value or the seeding changes it, so cached cells are recomputed.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import socket
import sys
import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import Sequence

import numba
import numpy as np

from analysis import KERNEL_SOURCES
from analysis.io import write_atomic
from analysis.engine.metrics import METRICS

CACHE_ENV = "ANALYSIS_CACHE_DIR"
COMPUTED_LOG = "computed.log"
HERE = Path(__file__).parent
ENGINE_SOURCES = (HERE.parent / "data" / "annotations.py", HERE / "pvalues.py", HERE / "grid.py") + KERNEL_SOURCES


@functools.lru_cache(maxsize=1)
def engine_fingerprint() -> str:
    """A hash of the simulating modules' source and of the numpy and numba versions (16 hex digits).

    Any change to the kernels, the metrics, the p-value or the seeding changes it, so cached cells are recomputed.
    """
    digest = hashlib.sha256(f"numpy {np.__version__}; numba {numba.__version__}".encode())
    for source in ENGINE_SOURCES:
        digest.update(source.read_bytes())
    return digest.hexdigest()[:16]


SUMMARY_FIELDS = ("p_value", "delta", "delta_sd", "null_mean", "null_sd", "share_below_alpha")  # summarise_cell's
CLAIM_STALE_SECONDS = 3600  # a claim this old is another machine's (or a reused pid's) and is taken over
CLAIM_POLL_SECONDS = 0.2  # how often a run looks for the cells that another process is computing


class ResultCache:
    """One JSON file per finished cell under ``directory``, written atomically, keyed as the methods page says.

    Each file holds its key, the engine fingerprint and a sha256 checksum of both with the cell's numbers.
    :meth:`get` serves a file only when its checksum, key and fingerprint are right and it has every metric;
    any other file is not served (one note line) and the cell is recomputed. A process that computes a cell
    claims it first (:meth:`claim`, a ``<key>.claim`` file created exclusively), so that two runs on one cache
    never compute the same cell twice; a claim whose process is gone is taken over.
    """

    def __init__(self, directory: str | Path, engine: str | None = None, metrics: Sequence[str] = METRICS):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.engine = engine or engine_fingerprint()
        self.metrics = tuple(metrics)  # what a file must hold to be served
        self._claimed: set[str] = set()
        self._noted: set[str] = set()

    def key(self, data_sha256: str, cell, n_samples: int, seed: int) -> str:
        """The cell's key: a hash of the data, the cell's fields (a dataclass), ``n_samples``, the seed and the engine."""
        fields = {"data": data_sha256, **asdict(cell), "n_samples": n_samples, "seed": seed, "engine": self.engine}
        return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:32]

    @staticmethod
    def checksum(key: str, engine: str, summary: dict) -> str:
        """sha256 of a cell's key, engine fingerprint and numbers (JSON with sorted keys)."""
        return hashlib.sha256(json.dumps([key, engine, summary], sort_keys=True).encode()).hexdigest()

    def get(self, key: str) -> dict | None:
        """The cell's summary (per metric its SUMMARY_FIELDS), or None when it is absent or not to be trusted."""
        path = self.directory / f"{key}.json"
        try:
            entry = json.loads(path.read_bytes())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as err:
            return self._refuse(key, f"unreadable ({type(err).__name__})")
        if not isinstance(entry, dict) or entry.get("engine") != self.engine:
            return self._refuse(key, "written by another engine") if isinstance(entry, dict) else \
                self._refuse(key, "not a cache entry")
        summary = entry.get("metrics")
        if entry.get("key") != key:
            return self._refuse(key, "its key is not its name")
        if entry.get("checksum") != self.checksum(key, self.engine, summary):
            return self._refuse(key, "its checksum does not match its content")
        if not isinstance(summary, dict) or any(not isinstance(summary.get(m), dict) or
                                                any(f not in summary[m] for f in SUMMARY_FIELDS)
                                                for m in self.metrics):
            return self._refuse(key, "a metric is missing")
        return summary

    def _refuse(self, key: str, why: str) -> None:
        if key not in self._noted:
            self._noted.add(key)
            print(f"note: cache file {self.directory / key}.json not used ({why}); the cell is recomputed",
                  file=sys.stderr)
        return None

    def put(self, key: str, summary: dict) -> None:
        """Store a freshly computed cell, note its key in the cache's log of computations, release its claim."""
        entry = {"key": key, "engine": self.engine, "checksum": self.checksum(key, self.engine, summary),
                 "metrics": summary}
        write_atomic(self.directory / f"{key}.json", json.dumps(entry))
        self._noted.discard(key)
        with open(self.directory / COMPUTED_LOG, "a") as log:  # one short line per append: atomic on POSIX
            log.write(f"{key}\n")
        self.release(key)

    def claim(self, key: str) -> bool:
        """Claim a cell for this process: True when it is ours to compute (no claim, or a stale one taken over),
        False while another live process holds it. Claims are made under one lock of the cache folder."""
        if key in self._claimed:
            return True
        path = self.directory / f"{key}.claim"
        with open(self.directory / ".claims.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if path.exists() and not self._stale(path):
                return False
            path.unlink(missing_ok=True)
            handle = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            with os.fdopen(handle, "w") as claim:
                claim.write(f"{os.getpid()} {socket.gethostname()}\n")
        self._claimed.add(key)
        return True

    @staticmethod
    def _stale(path: Path) -> bool:
        """Whether a claim's process is gone: on this machine, its pid is not running; elsewhere, or with a pid
        that may have been reused, the claim is older than CLAIM_STALE_SECONDS."""
        try:
            pid, host = path.read_text().split()
            age = time.time() - path.stat().st_mtime
        except (OSError, ValueError):
            return True
        if age > CLAIM_STALE_SECONDS:
            return True
        if host != socket.gethostname():
            return False
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return True
        except (PermissionError, ValueError):
            return False
        return False

    def release(self, key: str) -> None:
        """Give up this process's claim on a cell (finished, or not to be computed after all)."""
        if key in self._claimed:
            self._claimed.discard(key)
            (self.directory / f"{key}.claim").unlink(missing_ok=True)

    def release_all(self) -> None:
        for key in list(self._claimed):
            self.release(key)

    def computations(self) -> dict[str, int]:
        """Cells computed into this cache (by key) and how often each was computed; more than once means a cell
        was simulated twice, which the claims prevent."""
        path = self.directory / COMPUTED_LOG
        keys = path.read_text().split() if path.exists() else []
        return {"cells": len(set(keys)), "computations": len(keys),
                "computed_twice": sum(1 for n in Counter(keys).values() if n > 1)}


def default_cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV, Path.home() / ".cache" / "annotator-bootstrap"))
