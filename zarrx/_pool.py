"""The worker pool shared by chunk reads and writes, re-created after ``fork``.

A pool inherited across ``fork`` has threads that do not exist in the child; using it would
deadlock. The pool is therefore dropped in the child (``os.register_at_fork``) and made again on
first use, and it is resized when ``zarrx.config.threads`` changes.
"""
from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from zarrx import config

T = TypeVar("T")
R = TypeVar("R")

_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_pool_size = 0


def _forget_after_fork() -> None:
    global _pool, _pool_size, _lock
    _pool, _pool_size, _lock = None, 0, threading.Lock()


os.register_at_fork(after_in_child=_forget_after_fork)


def _get_pool(n: int) -> ThreadPoolExecutor:
    global _pool, _pool_size
    with _lock:
        if _pool is None or _pool_size != n:
            old = _pool
            _pool = ThreadPoolExecutor(max_workers=n, thread_name_prefix="zarrx")
            _pool_size = n
            if old is not None:
                old.shutdown(wait=False)
        return _pool


def threads() -> int:
    return int(config.get("threads"))  # type: ignore[arg-type]


def run_batches(fn: Callable[[Sequence[T]], R], items: Sequence[T], *, min_batch: int = 1) -> list[R]:
    """``fn`` over contiguous batches of ``items``: one batch per thread (at most), results in
    order. With one thread (or too few items) everything runs on the calling thread."""
    n = threads()
    if n <= 1 or len(items) < 2 * min_batch or threading.current_thread().name.startswith("zarrx"):
        return [fn(items)]
    nb = min(n, max(1, len(items) // min_batch))
    step = -(-len(items) // nb)
    batches = [items[i:i + step] for i in range(0, len(items), step)]
    pool = _get_pool(n)
    futures = [pool.submit(fn, b) for b in batches[1:]]
    first = fn(batches[0])                       # the caller works too
    return [first] + [f.result() for f in futures]


def run_shared(fn: Callable[[int], None], n_tasks: int) -> None:
    """``fn(i)`` for ``i`` in ``range(n_tasks)``, the workers (and the calling thread) each taking
    the next task until none is left. Workers are woken once per call, not once per task: on a
    virtual machine waking an idle thread can cost milliseconds. The first error stops the
    others from taking more tasks and is raised."""
    n = threads()
    if n <= 1 or n_tasks < 2 or threading.current_thread().name.startswith("zarrx"):
        for i in range(n_tasks):
            fn(i)
        return
    counter = itertools.count()
    failed: list[BaseException] = []

    def work() -> None:
        for i in counter:                     # next() on a count is atomic under the GIL
            if i >= n_tasks or failed:
                return
            try:
                fn(i)
            except BaseException as exc:
                failed.append(exc)
                raise

    pool = _get_pool(n)
    futures = [pool.submit(work) for _ in range(min(n, n_tasks) - 1)]
    try:
        work()
    finally:
        for f in futures:
            try:
                f.result()
            except BaseException:
                pass
    if failed:
        raise failed[0]
