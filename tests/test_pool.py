"""zarrx._pool: one pool for chunk work and store I/O; re-entrancy without thread names."""
from __future__ import annotations

import multiprocessing
import threading
import time

import pytest

import zarrx
from zarrx import _pool


def _in_thread(fn, name: str = "caller", timeout: float = 30):
    """Run ``fn`` on a new thread; fail (instead of hanging the suite) if it does not finish."""
    box: dict = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            box["error"] = exc

    t = threading.Thread(target=target, name=name, daemon=True)
    t.start()
    t.join(timeout)
    assert not t.is_alive(), "deadlock: the call did not finish"
    if "error" in box:
        raise box["error"]
    return box["value"]


def test_workers_are_marked_by_a_flag_not_a_name():
    with zarrx.config.set(threads=2):
        assert not _pool.in_worker()
        assert _pool._get_pool().submit(_pool.in_worker).result() is True
        # a user thread whose name looks like a worker's still fans out
        seen: set[int] = set()
        lock = threading.Lock()
        both = threading.Event()

        def batch(items):
            with lock:
                seen.add(threading.get_ident())
                if len(seen) == 2:
                    both.set()
            both.wait(10)       # a second thread takes a batch however loaded the machine is
            return list(items)

        out = _in_thread(lambda: _pool.run_batches(batch, list(range(8))), name="zarrx_7")
        assert [x for b in out for x in b] == list(range(8))
        assert len(seen) == 2


def test_cpu_work_nested_on_a_worker_runs_inline():
    with zarrx.config.set(threads=4):
        def nested():
            me = threading.get_ident()
            ids = _pool.run_batches(lambda b: threading.get_ident(), list(range(100)))
            shared: list[int] = []
            _pool.run_shared(lambda i: shared.append(threading.get_ident()), 10)
            return set(ids) | set(shared) == {me}

        assert _pool._get_pool().submit(nested).result()


def test_map_io_in_order_and_concurrent():
    running = 0
    peak = 0
    lock = threading.Lock()

    def fetch(i: int) -> int:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        time.sleep(0.02)
        with lock:
            running -= 1
        return i * i

    with zarrx.config.set(threads=2):
        assert _pool.map_io(fetch, list(range(40))) == [i * i for i in range(40)]
    # blocking calls overlap beyond the CPU thread count, up to IO_THREADS
    assert 2 < peak <= _pool.IO_THREADS


def test_map_io_single_threaded_config_stays_on_the_caller():
    me = threading.get_ident()
    with zarrx.config.set(threads=1):
        assert _pool.map_io(lambda i: threading.get_ident(), list(range(10))) == [me] * 10
    with zarrx.config.set(threads=4):
        assert _pool.map_io(lambda i: threading.get_ident(), [0]) == [me]


def test_map_io_from_workers_nested_does_not_deadlock():
    def inner(i: int) -> int:
        time.sleep(0.001)
        return i

    def outer(j: int) -> int:
        assert _pool.in_worker() or threading.current_thread().name == "caller"
        return sum(_pool.map_io(inner, list(range(32))))

    with zarrx.config.set(threads=2):
        total = _in_thread(lambda: _pool.map_io(outer, list(range(3 * _pool.IO_THREADS))))
    assert total == [sum(range(32))] * (3 * _pool.IO_THREADS)


def test_map_io_progresses_while_every_worker_is_busy():
    with zarrx.config.set(threads=2):
        pool = _pool._get_pool()
        release = threading.Event()
        started = threading.Semaphore(0)

        def block() -> None:
            started.release()
            release.wait(30)

        blockers = [pool.submit(block) for _ in range(_pool._pool_size)]
        for _ in blockers:
            assert started.acquire(timeout=30)
        try:
            # no worker is free: queued batches are taken back and run by the caller
            out = _in_thread(lambda: _pool.map_io(lambda i: i + 1, list(range(20))))
            assert out == list(range(1, 21))
            done: list[int] = []
            _in_thread(lambda: _pool.run_shared(done.append, 6))
            assert sorted(done) == list(range(6))
            assert _in_thread(lambda: _pool.run_batches(len, list(range(10)))) == [5, 5]
        finally:
            release.set()
            for f in blockers:
                f.result()


def test_map_io_raises_the_first_error_after_the_others_finish():
    finished: list[int] = []

    def fetch(i: int) -> int:
        if i == 13:
            raise zarrx.StoreError("cannot read 13")
        time.sleep(0.005)
        finished.append(i)
        return i

    with zarrx.config.set(threads=2):
        with pytest.raises(zarrx.StoreError, match="cannot read 13"):
            _pool.map_io(fetch, list(range(40)))
        n = len(finished)
        time.sleep(0.05)
        assert len(finished) == n          # nothing still running after the call returned


def test_run_batches_error_on_the_caller_cancels_the_rest():
    with zarrx.config.set(threads=2):
        def batch(items):
            if 0 in items:
                raise ValueError("first batch")
            return len(items)

        with pytest.raises(ValueError, match="first batch"):
            _pool.run_batches(batch, list(range(10)))


def _child(q):
    from zarrx import _pool as p
    q.put((p._pool is None, p.in_worker(), p.map_io(lambda i: -i, [1, 2, 3])))


def test_pool_is_dropped_after_fork():
    with zarrx.config.set(threads=2):
        _pool.map_io(lambda i: i, [1, 2, 3])
        assert _pool._pool is not None
        ctx = multiprocessing.get_context("fork")
        q = ctx.Queue()
        proc = ctx.Process(target=_child, args=(q,))
        proc.start()
        proc.join(60)
        assert proc.exitcode == 0
        assert q.get(timeout=5) == (True, False, [-1, -2, -3])


def test_assigning_a_setting_changes_it():
    """``zarrx.config.threads = 1`` must not create a module attribute that hides the setting
    while every read and write still uses the old one."""
    import zarrx
    from zarrx.errors import ArgumentError
    before = zarrx.config.get("threads")
    try:
        zarrx.config.threads = 1
        assert zarrx.config.get("threads") == 1 and zarrx.config.threads == 1
        assert "threads" not in vars(zarrx.config)
        with pytest.raises(ArgumentError, match="expected an int >= 1, found 0"):
            zarrx.config.threads = 0
        assert zarrx.config.get("threads") == 1
    finally:
        zarrx.config.set(threads=before)


def test_a_pool_taken_before_the_thread_count_changes_still_takes_work():
    """A read on one thread takes the pool, then submits to it; another thread changing
    ``zarrx.config.threads`` in between must not make that read fail (before: the replaced
    pool was shut down and the read raised ``RuntimeError: cannot schedule new futures after
    shutdown``). The replaced pool's threads end once nothing uses it."""
    import gc
    with zarrx.config.set(threads=2):
        taken = _pool._get_pool()
        assert taken.submit(lambda: 1).result() == 1
        with zarrx.config.set(threads=3 * _pool.IO_THREADS):
            assert _pool._get_pool() is not taken
        assert taken.submit(lambda: 2).result() == 2
        workers = list(taken._threads)
    del taken
    gc.collect()
    for t in workers:
        t.join()                      # would hang if the replaced pool's threads stayed


def test_a_call_interrupted_while_waiting_returns_only_after_its_running_items():
    """Ctrl-C while a call waits for an item another thread runs: the call raises
    ``KeyboardInterrupt`` only once that item has finished, so none of its work goes on after
    it (before: the call returned at once and the item kept going; a write interrupted so
    went on writing chunks over the values written after it)."""
    import signal
    started, caller_done, release = threading.Event(), threading.Event(), threading.Event()
    finished: list[int] = []

    def fetch(i: int) -> int:
        if i == 0:                      # the caller's own item
            assert started.wait(30)
            caller_done.set()
        else:                           # a worker's
            started.set()
            assert release.wait(30)
            time.sleep(0.05)            # a call that does not wait for it returns first
            finished.append(i)
        return i

    interrupted = threading.Event()

    def interrupt(signum, frame):
        if interrupted.is_set():
            return                      # a repeated press: the first one is on its way
        interrupted.set()
        release.set()
        raise KeyboardInterrupt

    def press_ctrl_c() -> None:
        if not caller_done.wait(30):
            release.set()
            return
        # pressed again until handled: a signal that arrives after the main thread gave up the
        # GIL but before it blocks on a lock is only handled once that lock is released
        for _ in range(600):
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
            if interrupted.wait(0.05):
                return
        release.set()

    old = signal.signal(signal.SIGINT, interrupt)
    try:
        with zarrx.config.set(threads=2):
            presser = threading.Thread(target=press_ctrl_c)
            presser.start()
            with pytest.raises(KeyboardInterrupt):
                _pool.map_io(fetch, [0, 1])
            presser.join()
            assert finished == [1]
            assert _pool.map_io(lambda i: -i, [1, 2, 3]) == [-1, -2, -3]     # still usable
    finally:
        signal.signal(signal.SIGINT, old)


@pytest.mark.parametrize("how", ["shared", "batches", "map_io"])
def test_what_a_task_refers_to_is_let_go_when_the_call_returns(monkeypatch, how):
    """A pool worker drops its last work item only when it next runs; on a busy machine that
    can be after the caller has read on (iterating an array held two rows of chunks at a time
    so). The work items name a task by number, and the call lets go of the function and its
    arguments before it returns."""
    import weakref
    from concurrent.futures import thread as cf_thread

    done = threading.Event()
    run = cf_thread._WorkItem.run

    def slow_run(item):                 # the worker keeps its work item a while after running it
        run(item)
        done.wait(5)

    monkeypatch.setattr(cf_thread._WorkItem, "run", slow_run)

    class Out:
        pass

    out = Out()
    ref = weakref.ref(out)
    with zarrx.config.set(threads=2):
        if how == "shared":
            _pool.run_shared(lambda i, o=out: time.sleep(0.02), 4)
        elif how == "batches":
            _pool.run_batches(lambda batch, o=out: time.sleep(0.02), list(range(8)))
        else:
            _pool.map_io(lambda x, o=out: time.sleep(0.02), list(range(8)))
    del out
    try:
        assert ref() is None
    finally:
        done.set()


def test_shared_tasks_raise_the_error_one_thread_would_meet_first():
    """Task 2 fails on the calling thread while a worker's task 1 is still under way and fails
    after it: the call raises task 1's error, as with one thread, not the first in time."""
    started1, failed2 = threading.Event(), threading.Event()

    def fn(i: int) -> None:
        if i == 0:
            assert started1.wait(10)          # a worker holds task 1: the caller takes task 2
        elif i == 1:
            started1.set()
            assert failed2.wait(10)
            raise ValueError("task 1")
        else:
            failed2.set()
            raise ValueError("task 2")

    for threads in (1, 2):
        started1.clear(), failed2.clear()
        if threads == 1:
            started1.set(), failed2.set()
        with zarrx.config.set(threads=threads), pytest.raises(ValueError, match="task 1"):
            _in_thread(lambda: _pool.run_shared(fn, 3))
