"""Running the tools' work items on a few threads at a time."""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any

from zarrx.errors import ZarrError

__all__ = ["workers_for", "run_parallel", "DEFAULT_WORKERS"]

DEFAULT_WORKERS = 4


def workers_for(workers: int | None) -> int:
    """The number of work items to run at a time (default: up to 4, at most the CPU count)."""
    if workers is None:
        return max(1, min(DEFAULT_WORKERS, os.cpu_count() or 1))
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
        raise ZarrError(f"workers: expected an int >= 1, found {workers!r}")
    return workers


def run_parallel(fn: Callable[[Any], None], items: Iterable[Any], workers: int) -> None:
    """``fn(item)`` for every item, at most ``workers`` at a time (items are drawn lazily, so
    no more than ``workers`` are in memory at once); the first failure stops the run and is
    raised once the calls already running have finished."""
    if workers <= 1:
        for item in items:
            fn(item)
        return
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
        pool.shutdown(wait=True, cancel_futures=True)
