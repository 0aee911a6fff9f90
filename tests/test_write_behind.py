"""Write-behind (``zarrx._behind``): with ``threads=1`` a write encodes each stored object on
the calling thread and stores it on an I/O thread meanwhile; the result is the same, errors
stop the write, and nothing is stored after the write returns."""
from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import zarrx
from zarrx import _behind, _pool
from zarrx.store import LocalStore

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = {
    "zstd": dict(compressors=[{"name": "zstd", "configuration": {"level": 1}}]),
    "raw": dict(compressors=None),
    "sharded raw": dict(shards=(256, 256), compressors=None),
    "sharded crc32c": dict(shards=(256, 256), compressors=[{"name": "crc32c"}]),
    "sharded zstd": dict(shards=(256, 256)),
}


class RecordingStore(LocalStore):
    """A LocalStore noting the thread of every ``set`` (and failing the ``fail_at``-th)."""

    def __init__(self, *args, fail_at: int | None = None, slow: float = 0.0, **kwargs):
        super().__init__(*args, **kwargs)
        self.calls: list[tuple[str, int]] = []
        self.fail_at, self.slow = fail_at, slow

    def set(self, key, value):
        if self.slow:
            time.sleep(self.slow)
        self.calls.append((key, threading.get_ident()))
        if self.fail_at is not None and len(self.calls) == self.fail_at:
            raise zarrx.StoreError(f"refused {key}")
        super().set(key, value)


def _source(shape=(512, 512)) -> np.ndarray:
    rng = np.random.default_rng(7)
    return (rng.standard_normal(shape) * 100).round().astype("float32")


def _stamps(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p): (p.stat().st_mtime_ns, p.stat().st_ino) for p in root.rglob("*")
            if p.is_file()}


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("region", [(slice(None), slice(None)), (slice(3, 500), slice(0, 400))])
def test_the_stored_bytes_are_those_of_a_write_on_one_thread(tmp_path, case, region):
    src = _source()
    stored = {}
    for behind in (True, False):
        root = tmp_path / str(behind)
        with zarrx.config.set(threads=1, write_behind=behind):
            z = zarrx.create_array(LocalStore(root), shape=src.shape, dtype="float32",
                                   chunks=(128, 128), **CASES[case])
            z[...] = 1.5                                 # what a partial write merges with
            z[region] = src[region]
        expected = np.full(src.shape, 1.5, dtype="float32")
        expected[region] = src[region]
        np.testing.assert_array_equal(zarrx.open_array(LocalStore(root))[...], expected)
        stored[behind] = _files(root)
    assert stored[True] == stored[False]


@pytest.mark.parametrize("case", ["zstd", "sharded raw", "sharded zstd"])
def test_objects_are_stored_on_another_thread_only_where_asked(tmp_path, case):
    src = _source()
    me = threading.get_ident()
    for n, (settings, elsewhere) in enumerate([
            (dict(threads=1, write_behind=True), True),
            (dict(threads=1, write_behind=False), False)]):
        store = RecordingStore(tmp_path / str(n))
        with zarrx.config.set(**settings):
            z = zarrx.create_array(store, shape=src.shape, dtype="float32", chunks=(128, 128),
                                   **CASES[case])
            store.calls.clear()
            z[...] = src
        threads = {t for k, t in store.calls if not k.endswith("zarr.json")}
        assert threads and (me not in threads) == elsewhere, (settings, threads)
    # inside a dask task (zarrx._pool.inline) every store call stays on the caller
    store = RecordingStore(tmp_path / "inline")
    with zarrx.config.set(threads=1), _pool.inline():
        z = zarrx.create_array(store, shape=src.shape, dtype="float32", chunks=(128, 128),
                               **CASES[case])
        z[...] = src
    assert {t for _, t in store.calls} == {me}


def test_a_store_error_stops_the_write_and_nothing_is_stored_after_it(tmp_path):
    src = _source()
    store = RecordingStore(tmp_path / "a", fail_at=3, slow=0.01)
    with zarrx.config.set(threads=1, write_behind=True):
        z = zarrx.create_array(store, shape=src.shape, dtype="float32", chunks=(128, 128),
                               compressors=[{"name": "zstd"}])
        store.calls.clear()
        with pytest.raises(zarrx.StoreError, match="refused c/0/2"):
            z[...] = src
    n = len(store.calls)
    time.sleep(0.2)
    assert len(store.calls) == n == 3                    # none after the failing one
    assert sorted(p.name for p in (tmp_path / "a" / "c" / "0").iterdir()) == ["0", "1"]


@pytest.mark.parametrize("error", [zarrx.CodecError("bad chunk"), KeyboardInterrupt()])
def test_an_error_while_making_waits_for_the_object_being_stored(error):
    stored: list[int] = []
    busy = threading.Event()

    def make(i):
        if i == 3:
            busy.wait(5)
            raise error
        return i

    def store(i):
        busy.set()
        time.sleep(0.05)
        stored.append(i)

    with pytest.raises(type(error)):
        _behind.run(make, store, 10)
    done = list(stored)
    time.sleep(0.2)
    assert stored == done and done == sorted(done) and set(done) <= {0, 1, 2}
    assert _behind.lane() == 0


def test_a_buffer_is_never_made_into_while_its_object_waits_or_is_stored():
    buffers = [None] * _behind.LANES
    lanes: list[int] = []

    def make(i):
        lanes.append(_behind.lane())
        buffers[_behind.lane()] = i
        return _behind.lane(), i

    def store(item):
        lane, i = item
        time.sleep(0.005)                    # slower than making: the queue stays full
        assert buffers[lane] == i, f"object {i}'s buffer was reused while it was stored"

    _behind.run(make, store, 40)
    assert lanes == [i % _behind.LANES for i in range(40)]


def test_objects_are_stored_in_order_on_one_thread():
    seen: list[tuple[int, int]] = []
    _behind.run(lambda i: i, lambda i: seen.append((i, threading.get_ident())), 50)
    assert [i for i, _ in seen] == list(range(50))
    assert len({t for _, t in seen}) == 1 and seen[0][1] != threading.get_ident()


def test_where_it_applies():
    store = LocalStore.__new__(LocalStore)
    with zarrx.config.set(threads=1, write_behind=True):
        assert _behind.enabled(store, 2, 1 << 20)
        assert not _behind.enabled(store, 1, 1 << 20)                 # one object
        assert not _behind.enabled(store, 9, _behind.MIN_OBJECT - 1)  # small: GIL work
        assert not _behind.enabled(store, 9, _behind.MAX_OBJECT + 1)  # large: memory
        assert not _behind.enabled(store, 9, None)
        assert not _behind.enabled(zarrx.store.MemoryStore(), 9, 1 << 20)
        with _pool.inline():
            assert not _behind.enabled(store, 2, 1 << 20)
    with zarrx.config.set(threads=2):
        assert not _behind.enabled(store, 2, 1 << 20)
    with zarrx.config.set(threads=1, write_behind=False):
        assert not _behind.enabled(store, 2, 1 << 20)


def _write_in_child(path: str, q) -> None:
    try:
        with zarrx.config.set(threads=1):
            z = zarrx.open_array(LocalStore(path), mode="r+")
            z[...] = 2.0
        q.put("ok")
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        q.put(repr(exc))


def test_a_forked_child_writes_behind_with_threads_of_its_own(tmp_path):
    path = str(tmp_path / "a")
    with zarrx.config.set(threads=1):
        z = zarrx.create_array(LocalStore(path), shape=(512, 512), dtype="float32",
                               chunks=(128, 128), compressors=[{"name": "zstd"}])
        z[...] = 1.0                             # the parent's I/O thread exists now
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_write_in_child, args=(path, q))
    p.start()
    p.join(60)
    assert p.exitcode == 0 and q.get(timeout=5) == "ok"
    assert (zarrx.open_array(LocalStore(path))[...] == 2.0).all()


@pytest.mark.parametrize("text,shown", [("off", "False"), ("YES", "True"), ("", "True")])
def test_the_environment_sets_it(text, shown):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZARRX_")}
    env.update(ZARRX_WRITE_BEHIND=text, PYTHONPATH=ROOT)
    done = subprocess.run([sys.executable, "-c", "import zarrx; print(zarrx.config.write_behind)"],
                          env=env, capture_output=True, text=True, timeout=120)
    if text == "":
        assert done.returncode == 1 and done.stderr.strip().splitlines()[-1] == (
            "zarrx.errors.ArgumentError: environment variable ZARRX_WRITE_BEHIND: expected one "
            "of true, 1, yes, on, false, 0, no, off, found ''")
    else:
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == shown


def test_a_write_at_interpreter_exit_stores_on_the_calling_thread(tmp_path):
    # at exit no new thread may start: an atexit handler's write stores everything itself
    code = (f"import atexit, numpy as np, zarrx\n"
            f"from zarrx.store import LocalStore\n"
            f"def last():\n"
            f"    with zarrx.config.set(threads=1):\n"
            f"        z = zarrx.create_array(LocalStore({str(tmp_path / 'a')!r}), shape=(512, 512),"
            f" dtype='f4', chunks=(128, 128), compressors=[{{'name': 'zstd'}}])\n"
            f"        z[...] = 3.0\n"
            f"atexit.register(last)\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZARRX_")}
    env["PYTHONPATH"] = ROOT
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and not done.stderr, done.stderr
    assert (zarrx.open_array(LocalStore(tmp_path / "a"))[...] == 3.0).all()


def test_an_interrupted_write_stores_nothing_after_it_raised(tmp_path):
    """Ctrl-C at random points of writes whose chunks an I/O thread stores, each followed at
    once by a write of other values: every value reads back as the second write put it."""
    import random
    import signal
    armed = threading.Event()

    def interrupt(signum, frame):
        if armed.is_set():
            armed.clear()
            raise KeyboardInterrupt

    src = np.arange(1024 * 1024, dtype="float32").reshape(1024, 1024)
    store = LocalStore(tmp_path / "a")
    old = signal.signal(signal.SIGINT, interrupt)
    interrupted = 0
    try:
        with zarrx.config.set(threads=1, write_behind=True):
            z = zarrx.create_array(store, shape=src.shape, dtype="float32", chunks=(128, 128),
                                   compressors=[{"name": "zstd"}])
            t0 = time.perf_counter()
            z[...] = src
            took = time.perf_counter() - t0
            rng = random.Random(3)
            for n in range(20):
                timer = threading.Timer(
                    rng.uniform(0, took),
                    lambda: signal.pthread_kill(threading.main_thread().ident, signal.SIGINT))
                armed.set()
                try:
                    timer.start()
                    z[...] = src + n
                    timer.join()
                except KeyboardInterrupt:
                    interrupted += 1
                    seen = _stamps(tmp_path / "a")
                    time.sleep(0.05)
                    assert _stamps(tmp_path / "a") == seen, f"round {n}: a chunk was stored " \
                                                            f"after the write raised"
                finally:
                    timer.cancel()
                    armed.clear()
                z[...] = -1.0 - n
                assert (z[...] == -1.0 - n).all(), f"round {n}: the interrupted write went on"
    finally:
        signal.signal(signal.SIGINT, old)
    assert interrupted >= 5
