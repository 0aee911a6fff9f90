"""Which error :func:`zarrx._pool.run_shared` raises when several of its tasks fail: an
interrupt of the calling thread always, else the lowest-numbered failed task's, every lower
task having run (as with one thread)."""
from __future__ import annotations

import sys
import threading
import time
import types

import pytest

import zarrx
from zarrx import _pool

from test_pool import _in_thread


def test_an_interrupt_of_the_caller_is_raised_before_a_lower_tasks_error():
    """The caller's task (after one it finished) is interrupted while a worker's task, of a
    lower number, has failed: the interrupt is raised, not the task's error."""
    done_one, worker_failed = threading.Event(), threading.Event()
    caller = []

    def fn(i: int) -> None:
        if threading.current_thread() is caller[0]:
            if not done_one.is_set():
                done_one.set()
                return
            assert worker_failed.wait(10)
            raise KeyboardInterrupt
        assert done_one.wait(10)
        worker_failed.set()
        raise ValueError(f"task {i}")

    def call() -> None:
        caller.append(threading.current_thread())
        _pool.run_shared(fn, 3)

    with zarrx.config.set(threads=2), pytest.raises(KeyboardInterrupt):
        _in_thread(call)


def test_a_task_taken_before_a_higher_one_failed_still_runs(monkeypatch):
    """A thread takes task 1 and is held before running it while another takes task 2,
    which fails: task 1 still runs, and its error is the one raised."""
    seen: list = []

    class Counter:
        def __init__(self) -> None:
            self.n, self.lock = 0, threading.Lock()

        def __iter__(self):
            return self

        def __next__(self) -> int:
            with self.lock:
                v, self.n = self.n, self.n + 1
            if v == 1:                        # held until task 2's failure is recorded
                end = time.monotonic() + 10
                while not (seen and seen[0]) and time.monotonic() < end:
                    time.sleep(0.001)
            return v

    monkeypatch.setattr(_pool, "itertools", types.SimpleNamespace(count=Counter))

    def fn(i: int) -> None:
        if i == 2:
            seen.append(sys._getframe(1).f_locals["failed"])
        if i:
            raise ValueError(f"task {i}")

    with zarrx.config.set(threads=2), pytest.raises(ValueError, match="task 1"):
        _in_thread(lambda: _pool.run_shared(fn, 3))


def test_an_interrupt_while_waiting_for_the_tasks_under_way_is_raised(monkeypatch):
    """The caller's task fails; while the caller waits for a worker's task, the main thread
    is interrupted (Ctrl-C): the interrupt is raised, not the task's error."""
    import _thread
    import signal
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("an interrupt reaches the main thread only")
    # interrupt_main does nothing where SIGINT is ignored or handled elsewhere (a library may
    # have changed its handler earlier in the run): Python's own handler for this test
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    ending = threading.Event()
    real_end = _pool._Call.end

    def end(self):
        ending.set()
        return real_end(self)

    monkeypatch.setattr(_pool._Call, "end", end)
    worker_started = threading.Event()

    def fn(i: int) -> None:
        if threading.current_thread() is threading.main_thread():
            assert worker_started.wait(10)
            raise ValueError(f"task {i}")
        worker_started.set()
        assert ending.wait(10)
        _thread.interrupt_main()

    try:
        with zarrx.config.set(threads=2), pytest.raises(KeyboardInterrupt):
            _pool.run_shared(fn, 2)
    finally:
        signal.signal(signal.SIGINT, previous)
