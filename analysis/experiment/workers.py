"""Worker processes: the pool that :func:`analysis.experiment.grid.run` and :func:`in_workers` start, which leaves
Ctrl-C to its parent and dies with it, and BLAS held to one thread in each process (the package parallelises by
processes)."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Callable, Hashable, Mapping

from threadpoolctl import threadpool_limits

from analysis.errors import ParameterError


def one_blas_thread() -> None:
    """Run BLAS on one thread in this process from now on. The package parallelises by processes (``n_jobs``); its
    matrix products are small, and BLAS threads left spinning between them take the cores that the other workers
    need. Its workers, command line and chapters call this; the numbers are the same."""
    threadpool_limits(1, user_api="blas")


PR_SET_PDEATHSIG = 1  # linux/prctl.h
WATCHDOG_SECONDS = 0.5  # how often a worker checks that its parent is alive


def _init_pool_worker(parent: int, initializer: Callable | None, *args) -> None:
    """A worker process leaves Ctrl-C to its parent, which stops the pool (no traceback from every worker), and
    dies with its parent, even one killed with SIGKILL: by the kernel's parent-death signal on Linux, and by a
    watchdog thread that sees the parent's pid change anywhere."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # forked with SIGINT blocked (see sigint_held); now ignored
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass  # the watchdog below still stops the worker
    if os.getppid() != parent:  # the parent died before the kernel could be told
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True, name="parent-watchdog").start()
    one_blas_thread()
    if initializer:  # the pool's own set-up (a grid's: its simulator, replicates and seed)
        initializer(*args)


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(WATCHDOG_SECONDS)
    os._exit(1)


@contextlib.contextmanager
def sigint_held():
    """Hold Ctrl-C back while worker processes start (a KeyboardInterrupt raised during a fork, inside the
    interpreter's at-fork handlers, prints "Exception ignored in ..." and can leave a lock held), or while a
    finished cell is cached and counted (so that the count said on Ctrl-C is the cache's). SIGINT is blocked
    in this thread (the workers inherit the mask, then ignore SIGINT), and one that reaches another thread is only
    recorded; on leaving, a held-back Ctrl-C is handed to the previous handler (a KeyboardInterrupt)."""
    held = []
    main = threading.current_thread() is threading.main_thread()
    handler = signal.signal(signal.SIGINT, lambda *_: held.append(True)) if main else None
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # a blocked SIGINT arrives now, and is recorded
        if main:
            signal.signal(signal.SIGINT, handler)
            if held and callable(handler):
                handler(signal.SIGINT, None)


@contextlib.contextmanager
def worker_pool(n_jobs: int, calls: list, initializer: Callable | None = None, initargs: tuple = ()):
    """The futures of ``calls`` (picklable callables) in ``n_jobs`` worker processes, started with Ctrl-C held back
    (:func:`sigint_held`) and set up by :func:`_init_pool_worker`, then ``initializer(*initargs)``; on Ctrl-C, an
    error or an early close the workers are killed, not awaited."""
    pool, interrupted = None, False
    try:
        with sigint_held():
            pool = ProcessPoolExecutor(n_jobs, initializer=_init_pool_worker,
                                       initargs=(os.getpid(), initializer, *initargs))
            futures = [pool.submit(call) for call in calls]  # forks every worker (the first submit)
        yield futures
    except BaseException:  # Ctrl-C, an error, or the caller closing its generator early
        interrupted = True
        for process in list((getattr(pool, "_processes", None) or {}).values()):
            process.kill()
        raise
    finally:
        if pool:
            pool.shutdown(wait=not interrupted, cancel_futures=True)


def check_jobs(n_jobs) -> int:
    """The number of worker processes as an int >= 1, or a :class:`ParameterError` (the command line's ``--jobs``)."""
    if int(n_jobs) != n_jobs or n_jobs < 1:
        raise ParameterError(f"n_jobs (the worker processes) must be an integer >= 1, got {n_jobs!r}")
    return int(n_jobs)


def in_workers(calls: Mapping[Hashable, Callable], n_jobs: int = 1) -> dict:
    """Each call's result, by key, in the order of ``calls``: in up to ``n_jobs`` worker processes, which leave
    Ctrl-C to this process and die with it, as a grid's do; in this process with one job or one call.
    ``calls`` are picklable callables (module functions, ``functools.partial`` of them)."""
    n_jobs = check_jobs(n_jobs)
    if n_jobs == 1 or len(calls) < 2:
        return {key: call() for key, call in calls.items()}
    with worker_pool(min(n_jobs, len(calls)), list(calls.values())) as futures:
        return {key: future.result() for key, future in zip(calls, futures)}
