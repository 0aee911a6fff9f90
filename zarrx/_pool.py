"""The one thread pool of zarrx: chunk decoding/encoding and store I/O share it.

Entry points:

- :func:`run_batches` and :func:`run_shared` spread CPU work (decoding, encoding, copying) over
  at most ``zarrx.config.threads`` threads, the calling thread included;
- :func:`map_io` runs blocking calls (file reads, network requests: anything that releases the
  GIL while it waits) concurrently, up to :data:`IO_THREADS` at a time, results in order.

The rules that keep this free of deadlocks and of thread explosions:

1. Every worker of the pool marks itself (a thread-local flag set by the pool's initializer;
   thread names play no part). CPU fan-out asked for on a worker runs inline on that worker:
   the work it belongs to is already spread over the pool.
2. A caller never waits for an item nobody has started. It always does a share of the work
   itself, and when it is done it takes back (cancels and runs itself) every item still queued,
   waiting only for items another thread is running. So :func:`map_io` may be called from any
   thread, a pool worker included (a store's ``get_many`` inside a chunk task), and nested
   calls finish even when every worker is busy: the pool's size bounds the threads, never
   progress.
3. With ``zarrx.config.set(threads=1)`` everything runs on the calling thread and no pool is
   made.

A pool inherited across ``fork`` has threads that do not exist in the child; using it would
deadlock. The pool is therefore dropped in the child (:mod:`zarrx._fork`) and made again on
first use.
"""
from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

from zarrx import _fork, config

__all__ = ["IO_THREADS", "in_worker", "inline", "map_io", "run_batches", "run_ranges",
           "run_shared", "threads"]

T = TypeVar("T")
R = TypeVar("R")

#: the most blocking calls one :func:`map_io` runs at once (the caller's included)
IO_THREADS = 8

_lock = threading.Lock()
_local = threading.local()
_pool: ThreadPoolExecutor | None = None
_pool_size = 0


def _forget_after_fork() -> None:
    global _pool, _pool_size, _lock, _local
    _pool, _pool_size, _lock, _local = None, 0, threading.Lock(), threading.local()


_fork.at_fork(_forget_after_fork)


def _mark_worker() -> None:
    _local.worker = True


def in_worker() -> bool:
    """True on a worker thread of the pool, or inside :func:`inline`."""
    return getattr(_local, "worker", False)


class inline:
    """CPU fan-out asked for on this thread runs on it, as on a pool worker, until the block
    ends (``with inline():``): for work that a caller already spreads over threads or
    processes (a dask task), or too small to spread. A class rather than a generator: a small
    write enters one."""

    __slots__ = ("_was",)

    def __enter__(self) -> None:
        self._was = getattr(_local, "worker", False)
        _local.worker = True

    def __exit__(self, *exc: object) -> None:
        _local.worker = self._was


def threads() -> int:
    """``zarrx.config.threads``: how many threads one read or write spreads its CPU work on."""
    return int(config.get("threads"))  # type: ignore[arg-type]


def _get_pool() -> ThreadPoolExecutor:
    """The pool, made again when ``zarrx.config.threads`` asks for another size. The pool it
    replaces is not shut down: a read or write on another thread may hold it between taking it
    and submitting its work (a shut-down pool refuses work). Its threads end once it is no
    longer referenced (``ThreadPoolExecutor`` wakes them when it is collected)."""
    global _pool, _pool_size
    n = max(threads(), IO_THREADS)
    with _lock:
        if _pool is None or _pool_size != n:
            _pool = ThreadPoolExecutor(max_workers=n, thread_name_prefix="zarrx",
                                       initializer=_mark_worker)
            _pool_size = n
        return _pool


class _Call:
    """The pool work of one call. Once the call has ended (:meth:`end`), a task of it that has
    not started does nothing, and ``end`` waits for those running: no work of a call goes on
    after the call returns or raises, even when it is interrupted (``KeyboardInterrupt``) while
    it hands out its tasks or waits for them, and a task submitted but never waited for (its
    future lost to the interrupt) cannot start later."""

    __slots__ = ("_cond", "_running", "_ended", "futures", "_fn", "_args")

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._running = 0
        self._ended = False
        self.futures: list[Future] = []
        self._fn: Callable[..., Any] | None = None
        self._args: list[tuple] | None = None

    def start(self, fn: Callable[..., R], args: Sequence[tuple]) -> None:
        """Submit ``fn(*a)`` for each ``a`` of ``args`` to the pool (futures in :attr:`futures`).
        The pool's work items name a task by its number only: what ``fn`` and ``args`` refer
        to (a read's output, say) is let go by :meth:`end`, not when each worker thread next
        runs (a worker drops its last work item only then)."""
        pool = _get_pool()
        self._fn, self._args = fn, list(args)
        for k in range(len(self._args)):
            self.futures.append(pool.submit(self._run, k))

    def _run(self, k: int) -> Any:
        with self._cond:
            if self._ended:
                return None                  # the call is over: nothing is left to do
            self._running += 1
            fn, args = self._fn, self._args[k]          # type: ignore[index]
        try:
            return fn(*args)                            # type: ignore[misc]
        finally:
            del fn, args
            with self._cond:
                self._running -= 1
                if not self._running:
                    self._cond.notify_all()

    def end(self) -> BaseException | None:
        """Cancel the tasks still queued and wait for the running ones (their errors are the
        caller's to collect), then let go of the tasks' function and arguments. An interrupt
        while waiting does not cut the wait short: it is returned, for a caller that is not
        raising already to raise."""
        for f in self.futures:
            f.cancel()
        interrupt: BaseException | None = None
        while True:
            try:
                with self._cond:
                    self._ended = True
                    while self._running:
                        self._cond.wait()
                    self._fn = self._args = None
                return interrupt
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                interrupt = interrupt or exc


def _join(futures: list[Future], run: Callable[[int], R]) -> list[R]:
    """The results of ``futures`` in order; an item still queued is cancelled and run here
    (``run(i)``), so the caller waits only for items that other threads are running. On an
    error the caller ends its :class:`_Call`, which waits for the items still running."""
    return [run(i) if f.cancel() else f.result() for i, f in enumerate(futures)]


def _split(items: Sequence[T], nb: int) -> list[Sequence[T]]:
    step = -(-len(items) // nb)
    return [items[i:i + step] for i in range(0, len(items), step)]


def run_batches(fn: Callable[[Sequence[T]], R], items: Sequence[T], *, min_batch: int = 1) -> list[R]:
    """``fn`` over contiguous batches of ``items``: one batch per thread (at most), results in
    order. With one thread, too few items, or on a pool worker, one call on this thread."""
    n = threads()
    if n <= 1 or len(items) < 2 * min_batch or in_worker():
        return [fn(items)]
    batches = _split(items, min(n, max(1, len(items) // min_batch)))
    call = _Call()
    try:
        call.start(fn, [(b,) for b in batches[1:]])
        first = fn(batches[0])                   # the caller works too
        rest = _join(call.futures, lambda i: fn(batches[i + 1]))
    except BaseException:
        call.end()                               # nothing keeps running after we return
        raise
    call.end()                                   # (every task has returned: lets go of fn)
    return [first, *rest]


def run_shared(fn: Callable[[int], None], n_tasks: int) -> None:
    """``fn(i)`` for ``i`` in ``range(n_tasks)``, the workers (and the calling thread) each taking
    the next task until none is left. Workers are woken once per call, not once per task: on a
    virtual machine waking an idle thread can cost milliseconds. The first error stops the
    others from taking more tasks (but those taken before it); once the tasks under way have
    returned, the error of the lowest-numbered failed task is raised, the one a single thread
    would have met first (tasks are taken in order, so every lower one has run). An interrupt
    of the calling thread (``KeyboardInterrupt``, ``SystemExit``), in its task or while it
    waits for the others, is raised before any task's error. On a pool worker everything runs inline."""
    n = threads()
    if n <= 1 or n_tasks < 2 or in_worker():
        for i in range(n_tasks):
            fn(i)
        return
    counter = itertools.count()
    failed: list[tuple[int, BaseException]] = []

    def work() -> None:
        for i in counter:                     # next() on a count is atomic under the GIL
            # a task taken before a failed one runs (a single thread would have run it)
            if i >= n_tasks or failed and i > min(k for k, _ in failed):
                return
            try:
                fn(i)
            except BaseException as exc:
                failed.append((i, exc))
                raise

    call = _Call()
    try:
        call.start(work, [()] * (min(n, n_tasks) - 1))
        work()
    except BaseException as exc:
        if not isinstance(exc, Exception) or not any(e is exc for _, e in failed):
            failed.append((-1, exc))          # an interrupt, or not a task's: it comes first
        interrupt = call.end()                # the others take no more tasks
        if interrupt is not None:             # (the task's error is its context)
            raise interrupt
        if _first(failed) is exc:
            raise
    else:
        interrupt = call.end()                # a task not yet started has nothing left to do
        if interrupt is not None:
            raise interrupt
        if not failed:
            return
    raise _first(failed)


def _first(failed: list[tuple[int, BaseException]]) -> BaseException:
    """The error of the lowest-numbered task among ``failed``."""
    return min(failed, key=lambda f: f[0])[1]


def run_ranges(fn: Callable[[int, int], list[int]], n: int, per_task: int) -> list[int]:
    """``fn(lo, hi)`` over ranges that cover ``range(n)`` once, the lists it returns joined in
    order: one call with one thread or ``n <= per_task``; else ranges of about ``per_task``
    items (at most four per thread) that the threads take as in :func:`run_shared`."""
    nthreads = threads()
    if nthreads <= 1 or n <= per_task:
        return fn(0, n)
    step = -(-n // min(-(-n // per_task), 4 * nthreads))
    tasks = -(-n // step)                   # every task's range holds an item
    parts: list[list[int]] = [[] for _ in range(tasks)]

    def task(i: int) -> None:
        parts[i] = fn(i * step, min(n, (i + 1) * step))

    run_shared(task, tasks)
    return [x for part in parts for x in part]


def map_io(fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
    """``[fn(x) for x in items]`` with up to :data:`IO_THREADS` calls in flight: for blocking
    calls that release the GIL (reads of files, requests to a server). Contiguous batches go to
    the pool; the calling thread runs the first itself and then any batch no worker has picked
    up yet. Safe on any thread, pool workers included (see the module's rules). With
    ``zarrx.config.set(threads=1)`` or fewer than two items, everything runs on this thread.
    The first error is raised after every started call has returned."""
    if len(items) < 2 or threads() <= 1:
        return [fn(x) for x in items]
    batches = _split(items, min(IO_THREADS, len(items)))

    def run(batch: Sequence[T]) -> list[R]:
        return [fn(x) for x in batch]

    call = _Call()
    try:
        call.start(run, [(b,) for b in batches[1:]])
        out = run(batches[0])
        for part in _join(call.futures, lambda i: run(batches[i + 1])):
            out.extend(part)
    except BaseException:
        call.end()
        raise
    call.end()
    return out
