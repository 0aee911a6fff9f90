"""Running the tools' work items on a few threads at a time."""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sized
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any

from zarrx.errors import ZarrError

__all__ = ["workers_for", "run_parallel", "tools_pool", "DEFAULT_WORKERS"]

DEFAULT_WORKERS = 4


def workers_for(workers: int | None) -> int:
    """The number of work items to run at a time (default: up to 4, at most the CPU count)."""
    if workers is None:
        return max(1, min(DEFAULT_WORKERS, os.cpu_count() or 1))
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
        raise ZarrError(f"workers: expected an int >= 1, found {workers!r}")
    return workers


def tools_pool(workers: int) -> ThreadPoolExecutor | None:
    """A pool for several :func:`run_parallel` runs in a row (None for one worker); the
    caller shuts it down."""
    if workers <= 1:
        return None
    return ThreadPoolExecutor(max_workers=workers, thread_name_prefix="zarrx-tools")


def run_parallel(fn: Callable[[Any], None], items: Iterable[Any], workers: int,
                 pool: ThreadPoolExecutor | None = None) -> None:
    """``fn(item)`` for every item, at most ``workers`` at a time (items are drawn lazily, so
    no more than ``workers`` are in memory at once); the first failure stops the run and is
    raised once the calls already running have finished. ``pool``: the threads to run them on
    (from :func:`tools_pool`, for runs in a row), else threads started for this run."""
    if workers <= 1 or (isinstance(items, Sized) and len(items) <= 1):
        for item in items:          # (one item: handing it to a thread only adds a wake-up)
            fn(item)
        return
    own = pool is None
    if pool is None:
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="zarrx-tools")
    pending: set[Future] = set()
    try:
        for item in items:
            if len(pending) >= workers:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for fut in finished:
                    fut.result()
            pending.add(pool.submit(fn, item))
        for fut in pending:
            fut.result()
    finally:
        if own:
            pool.shutdown(wait=True, cancel_futures=True)
        else:                       # the calls still running finish; none queued starts
            for fut in pending:
                fut.cancel()
            wait(pending)
