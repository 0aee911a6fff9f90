"""Writes and shape changes through one handle take turns (docs/RELIABILITY.md): neither a
stream of writes nor a stream of shape changes keeps the other waiting."""
from __future__ import annotations

import threading
import time

import numpy as np

import zarrx
from zarrx.store import MemoryStore
from zarrx.store.locks import KeyedSharedLocks


def _hammer(enter, stop):
    """Take the lock with ``enter()`` again and again until ``stop`` is set, each time for a
    moment of work that lets other threads run (as I/O does)."""
    def run():
        while not stop.is_set():
            with enter():
                time.sleep(0.0005)
    t = threading.Thread(target=run)
    t.start()
    return t


def _waits(enter, timeout=5.0):
    """Seconds taken to get the lock with ``enter()`` (None: not within ``timeout``)."""
    got = threading.Event()

    def run():
        with enter():
            got.set()
    t0 = time.perf_counter()
    threading.Thread(target=run, daemon=True).start()
    return time.perf_counter() - t0 if got.wait(timeout) else None


def test_a_stream_of_exclusive_holders_never_keeps_a_shared_one_waiting():
    locks, stop = KeyedSharedLocks(), threading.Event()
    t = _hammer(lambda: locks.exclusive("k"), stop)
    try:
        waits = [_waits(lambda: locks.shared("k")) for _ in range(5)]
    finally:
        stop.set()
        t.join()
    assert None not in waits, waits         # before: most of them waited past 10 s


def test_a_stream_of_shared_holders_never_keeps_an_exclusive_one_waiting():
    locks, stop = KeyedSharedLocks(), threading.Event()
    ts = [_hammer(lambda: locks.shared("k"), stop) for _ in range(2)]
    try:
        waits = [_waits(lambda: locks.exclusive("k")) for _ in range(5)]
    finally:
        stop.set()
        for t in ts:
            t.join()
    assert None not in waits, waits


def test_a_write_through_a_handle_another_thread_appends_through_in_a_loop_goes_in():
    a = zarrx.create_array(MemoryStore(), shape=(50, 8), chunks=(10, 8), dtype="i4",
                           fill_value=-1)
    stop = threading.Event()

    def appending():
        while not stop.is_set():
            a.append(np.ones((1, 8), "i4"))
    t = threading.Thread(target=appending)
    t.start()
    try:
        waits = [_waits(lambda: _Write(a, row)) for row in range(5)]
    finally:
        stop.set()
        t.join()
    assert None not in waits, waits         # before: 2-5 of 5 writes waited past 10 s
    np.testing.assert_array_equal(a[:5], 5)


class _Write:
    """A context whose entry writes row ``row`` of ``a`` (for ``_waits``)."""

    def __init__(self, a, row):
        self.a, self.row = a, row

    def __enter__(self):
        self.a[self.row, :] = 5

    def __exit__(self, *exc):
        return False
