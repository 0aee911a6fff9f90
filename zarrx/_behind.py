"""Write-behind: with ``zarrx.config.threads=1``, a write of several stored objects makes each
one (gathers and encodes its chunks) on the calling thread and hands it to one I/O thread, which
stores it (creates the file, writes it, links it in; or sends the request) while the next one
is made. A file system's work on a new file (on ext4 the choice of an inode number, 0.3-1 ms a
file on the benchmark machine) then overlaps the encoding, as tensorstore's separate I/O
thread overlaps it; the encoding itself stays on the one thread.

Rules:

- Objects are stored one at a time, in order, on one thread per call. At most :data:`DEPTH`
  made objects wait for it: the caller blocks when that many wait.
- A made object may live in a buffer the calling thread reuses (a shard slab): :func:`lane`
  tells the maker which of :data:`LANES` buffers it may use, and the lanes are handed out so
  that a buffer is never made into while the object it held waits or is being stored.
- The first error (on either side) stops the call: nothing more is made or stored, and the call
  raises it once the object being stored, if any, is done. No store call of a write runs after
  the write returns or raises, interrupted (``KeyboardInterrupt``) or not.
- Only where it helps: one thread (``threads=1``), not on a pool worker or inside
  :func:`zarrx._pool.inline` (a dask task: dask runs one task per core already), a store whose
  writes release the GIL (``parallel_writes``), at least two objects of
  :data:`MIN_OBJECT` to :data:`MAX_OBJECT` bytes each (smaller ones are mostly Python work
  under the GIL, which two threads would only take turns on), and
  ``zarrx.config.write_behind`` (default True).
"""
from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from zarrx import _fork, _pool, config

__all__ = ["DEPTH", "LANES", "MAX_OBJECT", "MIN_OBJECT", "enabled", "lane", "run"]

T = TypeVar("T")

#: made objects that may wait for the I/O thread at once
DEPTH = 2
#: buffers a maker cycles through: one being made, DEPTH waiting, one being stored
LANES = DEPTH + 2
#: the largest stored object (decoded bytes) a write hands on: at most LANES of them are held
MAX_OBJECT = 16 << 20
#: the smallest
MIN_OBJECT = 64 << 10
#: I/O threads at most (one per write in progress; more writes at once wait for one)
MAX_THREADS = 32

_local = threading.local()
_lock = threading.Lock()
_executor: ThreadPoolExecutor | None = None


def _forget_after_fork() -> None:
    global _executor, _lock, _local
    _executor, _lock, _local = None, threading.Lock(), threading.local()


_fork.at_fork(_forget_after_fork)


def _get_executor() -> ThreadPoolExecutor:
    global _executor
    with _lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=MAX_THREADS,
                                           thread_name_prefix="zarrx-io")
        return _executor


def lane() -> int:
    """Which of :data:`LANES` reused buffers the object being made on this thread may be made
    in: 0 outside :func:`run`."""
    return getattr(_local, "lane", 0)


def enabled(store: Any, n_objects: int, object_bytes: int | None) -> bool:
    """Whether a write of ``n_objects`` stored objects of ``object_bytes`` each (decoded; None:
    not known) into ``store`` goes through :func:`run` (see the module's rules)."""
    return (n_objects >= 2 and object_bytes is not None
            and MIN_OBJECT <= object_bytes <= MAX_OBJECT and _pool.threads() == 1
            and not _pool.in_worker() and bool(getattr(store, "parallel_writes", False))
            and bool(config.get("write_behind")))


class _Stage:
    """The objects of one call waiting for its I/O thread, and how the call stands."""

    __slots__ = ("cond", "waiting", "closed", "stopped", "busy", "error")

    def __init__(self) -> None:
        self.cond = threading.Condition(threading.Lock())
        self.waiting: deque = deque()
        self.closed = False        # nothing more will be handed on
        self.stopped = False       # store nothing more (an error, an interrupt)
        self.busy = False          # an object is being stored
        self.error: BaseException | None = None

    def drain(self, store: Callable[[Any], None]) -> None:
        """The I/O thread: store the objects handed on, in order, until the call is closed."""
        with _pool.inline():       # work asked for from here runs here
            while True:
                with self.cond:
                    while not self.waiting and not self.closed and not self.stopped:
                        self.cond.wait()
                    if self.stopped or not self.waiting:
                        self.waiting.clear()
                        return
                    item = self.waiting.popleft()
                    self.busy = True
                    self.cond.notify_all()          # room for the next one
                try:
                    store(item)
                except BaseException as exc:  # noqa: BLE001 - raised by the caller
                    with self.cond:
                        self.error = self.error or exc
                        self.stopped = True
                finally:
                    with self.cond:
                        self.busy = False
                        self.cond.notify_all()

    def hand_on(self, item: Any) -> bool:
        """Queue ``item`` once there is room: False (not queued) when the call has stopped."""
        with self.cond:
            while len(self.waiting) >= DEPTH and not self.stopped:
                self.cond.wait()
            if self.stopped:
                return False
            self.waiting.append(item)
            self.cond.notify_all()
            return True

    def finish(self, stop: bool) -> BaseException | None:
        """Close the call (``stop``: storing nothing more) and wait until its I/O thread is
        done. An interrupt while waiting does not cut the wait short: it is returned."""
        interrupt: BaseException | None = None
        while True:
            try:
                with self.cond:
                    self.closed = True
                    self.stopped = self.stopped or stop
                    self.cond.notify_all()
                    while self.busy or (self.waiting and not self.stopped):
                        self.cond.wait()
                return interrupt
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                interrupt = interrupt or exc


def run(make: Callable[[int], T | None], store: Callable[[T], None], n: int) -> None:
    """``store(make(i))`` for ``i`` in ``range(n)``: ``make`` on the calling thread, ``store``
    on an I/O thread, in order, overlapping (see the module's rules). ``make`` returns None
    for an object it stored itself."""
    stage = _Stage()
    try:
        _get_executor().submit(stage.drain, store)
    except RuntimeError:                 # the interpreter is shutting down: no new threads
        for i in range(n):
            item = make(i)
            if item is not None:
                store(item)
        return
    try:
        for i in range(n):
            if stage.stopped:
                break                  # the I/O thread failed: make nothing more
            _local.lane = i % LANES
            item = make(i)
            if item is not None and not stage.hand_on(item):
                break
    except BaseException:
        stage.finish(stop=True)
        raise
    finally:
        _local.lane = 0
    interrupt = stage.finish(stop=False)
    if stage.error is not None:
        raise stage.error
    if interrupt is not None:
        raise interrupt
