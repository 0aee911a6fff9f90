"""The arrays large reads return live in reused memory: ordinary numpy arrays that own their
data, whose memory goes back to a pool when they are freed and serves the next read of that
size, never while anything can still reach it and never beyond ``memory_pool``."""
from __future__ import annotations

import gc
import multiprocessing
import os
import pickle
import signal
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

import zarrx
from zarrx import _outputs
from zarrx.store import MemoryStore

MiB = 1 << 20


@pytest.fixture(autouse=True)
def _empty_pool():
    gc.collect()
    _outputs.trim()
    # threads=1: decoding threads of the pool drop their reference to the array they filled
    # a moment after the read returns, which would make counting live blocks racy
    with zarrx.config.set(memory_pool=64 * MiB, threads=1):
        yield
    gc.collect()
    _outputs.trim()


def _addr(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


try:
    from numpy._core.multiarray import get_handler_name
except ImportError:                                 # numpy 1
    from numpy.core.multiarray import get_handler_name


def _handler(a: np.ndarray) -> str:
    return get_handler_name(a)


@pytest.fixture(scope="module")
def big():
    """A 2 MiB float64 array in 4 chunks, and its values."""
    data = np.arange(512 * 512, dtype="f8").reshape(512, 512)
    a = zarrx.create_array(MemoryStore(), shape=data.shape, chunks=(256, 256), dtype="f8")
    a[...] = data
    return a, data


def test_a_large_read_reuses_the_memory_of_a_freed_one(big):
    a, data = big
    x = a[...]
    assert _handler(x) == "zarrx_outpool" and x.flags.owndata and x.base is None
    where = _addr(x)
    assert _outputs.live() == 1 and _outputs.pooled() == (0, 0)
    del x
    assert _outputs.live() == 0 and _outputs.pooled() == (2 * MiB, 1)
    y = a[...]
    assert _addr(y) == where and _outputs.pooled() == (0, 0)
    np.testing.assert_array_equal(y, data)
    z = a[...]                                # y still holds the block: z gets another
    assert _addr(z) != where
    np.testing.assert_array_equal(z, data)
    y[...] = -1                               # each owns its memory
    np.testing.assert_array_equal(z, data)


def test_a_block_serves_a_slightly_smaller_read_but_not_a_much_smaller_one(big):
    a, data = big
    x = a[...]
    where = _addr(x)
    del x
    y = a[:500]                               # 500/512 of the pages: fits
    assert _addr(y) == where
    np.testing.assert_array_equal(y, data[:500])
    del y
    z = a[:300]                               # 300/512: a block of its own
    assert _addr(z) != where and _outputs.pooled()[1] == 1
    np.testing.assert_array_equal(z, data[:300])


def test_small_and_object_reads_use_numpys_memory(big):
    a, _ = big
    assert _handler(a[:10]) != "zarrx_outpool"
    s = zarrx.create_array(MemoryStore(), shape=(300_000,), chunks=(100_000,), dtype=str)
    s[...] = np.array(["x" * (i % 7) for i in range(300_000)], dtype=object)
    got = s[...]
    assert _handler(got) != "zarrx_outpool"
    assert got[8] == "x" and got[14] == ""
    assert _outputs.live() == 0


def test_the_pool_keeps_at_most_memory_pool_bytes_oldest_released_first(big):
    a, _ = big
    with zarrx.config.set(memory_pool=5 * MiB):
        held = [a[...] for _ in range(4)]
        first = _addr(held[0])
        for i in range(4):                                   # freed first to last
            held[i] = None
        assert _outputs.pooled() == (4 * MiB, 2)          # two of 2 MiB fit in 5 MiB
        assert _outputs.live() == 0
        assert _addr(a[...]) != first                        # the oldest went first
    with zarrx.config.set(memory_pool=0):
        x = a[...]
        assert _handler(x) != "zarrx_outpool"
        assert _outputs.pooled() == (0, 0)                   # set to 0: released at once


def test_changing_memory_pool_applies_at_once_to_pooled_blocks_and_later_frees(big):
    a, _ = big
    x, y = a[...], a[...]
    del y
    assert _outputs.pooled() == (2 * MiB, 1)
    with zarrx.config.set(memory_pool=0):
        assert _outputs.pooled() == (0, 0)                   # released as the setting changes
        del x                                                # read before, freed after: not kept
        assert _outputs.pooled() == (0, 0) and _outputs.live() == 0
    z = a[...]                                               # the limit before is back
    del z
    assert _outputs.pooled() == (2 * MiB, 1)
    with zarrx.config.set(memory_pool=MiB):                  # below the block: released
        assert _outputs.pooled() == (0, 0)
    zarrx.config.memory_pool = 0                             # as set() does, without a context
    try:
        x = a[...]
        del x
        assert _outputs.pooled() == (0, 0)
    finally:
        zarrx.config.memory_pool = 64 * MiB


def test_a_memory_pool_beyond_the_address_space_keeps_every_freed_block(big):
    a, data = big
    with zarrx.config.set(memory_pool=1 << 70):
        x = a[...]
        np.testing.assert_array_equal(x, data)
        del x
        assert _outputs.pooled() == (2 * MiB, 1)
        assert zarrx.config.pool_limit() == sys.maxsize


def test_the_returned_array_behaves_as_numpy_arrays_do(big):
    a, data = big
    x = a[...]
    assert pickle.loads(pickle.dumps(x)).tobytes() == data.tobytes()
    x.resize((600, 512), refcheck=False)                   # numpy's realloc, through the pool
    np.testing.assert_array_equal(x[:512], data)
    assert not x[512:].any()
    x.resize((4, 4), refcheck=False)
    np.testing.assert_array_equal(x, data.reshape(-1)[:16].reshape(4, 4))
    del x
    assert _outputs.live() == 0
    y = a.get_basic_selection(Ellipsis)
    view = y[100:200]
    del y                                                  # the view keeps the block alive
    assert _outputs.live() == 1
    np.testing.assert_array_equal(view, data[100:200])
    del view
    assert _outputs.live() == 0


def test_threads_reading_and_freeing_at_once_keep_every_value(big):
    a, data = big
    errors: list[BaseException] = []

    def work(seed: int) -> None:
        rng = np.random.default_rng(seed)
        try:
            for _ in range(25):
                x = a[...]
                if not np.array_equal(x, data):
                    raise AssertionError("a read saw another array's values")
                x[rng.integers(0, 512)] = seed          # a write into one's own array only
                if rng.random() < 0.5:
                    del x
        except BaseException as e:                     # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    gc.collect()
    assert _outputs.live() == 0
    nbytes, blocks = _outputs.pooled()
    assert nbytes <= 64 * MiB and blocks <= 32


def _child_reads(a, data, q) -> None:
    before = _outputs.live()                  # the parent's live array, copied into the child
    x = a[...]
    del x
    q.put((bool(np.array_equal(a[...], data)), before, _outputs.live()))


def test_a_forked_child_reads_with_the_pool_it_inherited(big):
    a, data = big
    keep = a[...]                                          # parent: one block live, one pooled
    del keep
    keep = a[...]
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_child_reads, args=(a, data, q))
    p.start()
    got = q.get(timeout=60)
    p.join(60)
    assert got == (True, 1, 1) and p.exitcode == 0
    np.testing.assert_array_equal(keep, data)



@pytest.mark.parametrize("where", ["memory", "local"])
@pytest.mark.parametrize("kw", [{}, {"compressors": None}, {"shards": (256, 256)},
                                {"compressors": None, "shards": (256, 256)},
                                {"zarr_format": 2, "compressors": None}],
                         ids=["zstd", "raw", "sharded", "sharded-raw", "v2-raw"])
@pytest.mark.parametrize("threads", [1, 2])
def test_missing_chunks_read_as_the_fill_value_into_reused_memory(tmp_path, where, kw, threads):
    # a reused block holds what the array freed before it held: every cell must be written
    # (a fresh page reads 0, which hid any path that left the fill value 0 to the memory)
    st = MemoryStore() if where == "memory" else str(tmp_path / "a")
    other = zarrx.create_array(MemoryStore(), shape=(512, 512), chunks=(128, 128), dtype="f8")
    other[...] = 7.0
    arr = zarrx.create_array(st, shape=(512, 512), chunks=(128, 128), dtype="f8", fill_value=0,
                             **kw)
    arr[:100, :300] = 1
    want = np.zeros((512, 512))
    want[:100, :300] = 1
    with zarrx.config.set(threads=threads):
        for sel in (Ellipsis, np.s_[0:500, 1:511], np.s_[60:400]):
            x = other[...]
            del x                                  # its block, full of 7.0, is pooled
            got = arr[sel]
            assert _handler(got) == "zarrx_outpool"
            np.testing.assert_array_equal(got, want[sel])


def test_two_threads_changing_memory_pool_leave_the_pool_with_the_last_value(monkeypatch):
    # thread A reads memory_pool (0) for the pool and is paused before handing it over; thread
    # C sets 64 MiB meanwhile. The pool must end with 64 MiB, the setting's value: before, C
    # handed 64 MiB over first and A's 0 after it, and the pool kept nothing while the setting
    # said 64 MiB (or, the other way round, kept blocks while it said 0)
    zarrx.config.memory_pool = 0
    orig = zarrx.config.pool_limit
    a_read, go = threading.Event(), threading.Event()

    def paused() -> int:
        value = orig()
        if threading.current_thread().name == "A":
            a_read.set()
            go.wait(20)
        return value

    monkeypatch.setattr(zarrx.config, "pool_limit", paused)
    a = threading.Thread(target=_outputs._apply_limit, name="A")
    a.start()
    assert a_read.wait(20)
    c = threading.Thread(target=lambda: setattr(zarrx.config, "memory_pool", 64 * MiB))
    c.start()
    c.join(1.0)                       # C has set and handed over 64 MiB
    go.set()
    a.join(20)
    c.join(20)
    monkeypatch.undo()
    assert zarrx.config.pool_limit() == 64 * MiB
    x = _outputs.empty((2 * MiB,), "u1")
    assert _handler(x) == "zarrx_outpool"
    del x
    assert _outputs.pooled() == (2 * MiB, 1)


_OVERWRITTEN = """
import ctypes, struct
from zarrx import _outputs
import zarrx
zarrx.config.memory_pool = 64 << 20
x = _outputs.empty((2 << 20,), "u1")
addr = x.__array_interface__["data"][0]
ctypes.memmove(addr - 4096, struct.pack("Q", 1024), 8)   # the header: 4 MiB instead of 2
del x
y = _outputs.empty((4 << 20,), "u1")                      # a 4 MiB read into the 2 MiB block
y[...] = 1
print("not caught")
"""


def test_a_block_whose_header_was_overwritten_is_caught_before_its_size_is_trusted():
    # code writing before an array's data (a bug elsewhere) must not make the pool hand the
    # block out as larger than it is, as it did (a 4 MiB read went into a 2 MiB block)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(Path(zarrx.__file__).parent.parent), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", _OVERWRITTEN], env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == -signal.SIGABRT, (proc.returncode, proc.stdout, proc.stderr[-500:])
    assert "header of read-output block" in proc.stderr and "not caught" not in proc.stdout


def test_eight_threads_reading_and_freeing_while_a_process_forks_keep_every_value():
    # 8 threads x 200 reads of 1-4 MiB, each array kept a while, then freed on its thread or
    # on another (a shared list); a ninth thread forks meanwhile: each child (its pool's mutex
    # possibly taken by another thread at the fork) reads and frees, and exits 0 only when
    # the values are right and the pool's mutex was free to take
    arrays = []
    for k in (1, 2, 3, 4):
        n = k * MiB // 8
        a = zarrx.create_array(MemoryStore(), shape=(n,), chunks=(n // 4,), dtype="f8",
                               compressors=None)
        a[...] = data = np.arange(n, dtype="f8") * (k + 1)
        arrays.append((a, data))
    shared: list[np.ndarray] = []
    lock = threading.Lock()
    errors: list[str] = []

    def work(seed: int) -> None:
        rng = np.random.default_rng(seed)
        mine: list[np.ndarray] = []
        try:
            for _ in range(200):
                a, data = arrays[rng.integers(4)]
                x = a[...]
                if not np.array_equal(x, data):
                    errors.append("a read saw another array's values")
                    return
                x[:] = -seed                              # only its own array changes
                if rng.random() < 0.3:
                    with lock:                            # freed by whichever thread pops it
                        shared.append(x)
                        if len(shared) > 3:
                            shared.pop(int(rng.integers(len(shared))))
                else:
                    mine.append(x)
                    if len(mine) > 3:
                        mine.pop(int(rng.integers(len(mine))))
                del x
        except BaseException as e:                         # noqa: BLE001 (reported below)
            errors.append(repr(e))

    def forks() -> None:
        for _ in range(10):
            pid = os.fork()
            if pid == 0:                                   # the child: read, free, leave
                try:
                    a, data = arrays[1]
                    ok = all(np.array_equal(a[...], data) for _ in range(3))
                    os._exit(0 if ok and _outputs.pooled()[0] >= 0 else 3)
                except BaseException:                      # noqa: BLE001
                    os._exit(4)
            done, status = os.waitpid(pid, 0)
            if status != 0:
                errors.append(f"child exit status {status}")

    with zarrx.config.set(threads=2), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)   # fork with threads running
        threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
        threads.append(threading.Thread(target=forks))
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert not any(t.is_alive() for t in threads), "a thread or a child hung"
    assert not errors, errors[:3]
    shared.clear()
    gc.collect()
    for _ in range(100):                  # the decoding threads drop theirs a moment later
        if _outputs.live() == 0:
            break
        time.sleep(0.05)
    assert _outputs.live() == 0
    assert _outputs.pooled()[0] <= 64 * MiB


@pytest.mark.parametrize("kw", [{"zarr_format": 2, "fill_value": None, "dtype": "f8"},
                                {"zarr_format": 2, "fill_value": None,
                                 "dtype": [("a", "i4"), ("b", "f8")]},
                                {"fill_value": 0, "dtype": "c16"},
                                {"fill_value": 5, "dtype": "f8", "shards": (400, 400)}],
                         ids=["v2-null-f8", "v2-null-structured", "c16", "sharded"])
def test_every_kind_of_selection_writes_every_cell_of_reused_memory(kw):
    # read twice, into a reused block full of 0xAB and then full of 0x00: equal results
    # mean the read wrote every byte (a cell left alone would show the block's old bytes)
    arr = zarrx.create_array(MemoryStore(), shape=(1000, 700), chunks=(200, 200), **kw)
    arr[10:150, 20:300] = np.ones((140, 280), dtype=arr.dtype)
    idx = np.arange(700 * 1000)
    reads = {"basic": lambda: arr[1:999, 3:], "oindex": lambda: arr.oindex[:, np.arange(700)],
             "vindex": lambda: arr.vindex[idx % 1000, idx % 700],
             "mask": lambda: arr.vindex[np.ones((1000, 700), bool)],
             "blocks": lambda: arr.blocks[1:, 1:]}
    for name, read in reads.items():
        nbytes, got = read().nbytes, []
        for byte in (0xAB, 0):
            gc.collect()
            _outputs.trim()
            x = _outputs.empty((nbytes,), "u1")          # a block of the read's size
            x[...] = byte
            where = _addr(x)
            del x
            value = read()
            assert _addr(value) == where and _handler(value) == "zarrx_outpool", name
            got.append(value.tobytes())
        assert got[0] == got[1], name


_SHUTDOWN = """
import threading, time
import numpy as np, zarrx
from zarrx.store import MemoryStore
zarrx.config.memory_pool = 64 << 20
a = zarrx.create_array(MemoryStore(), shape=(1 << 18,), chunks=(1 << 16,), dtype="f8")
a[...] = 1.0
kept = [a[...] for _ in range(3)]                   # freed as the interpreter finalizes
class Cycle:
    def __init__(self):
        self.me, self.x = self, a[...]
Cycle()                                             # freed by the last collections
def reads():
    while True:
        x = a[...]
threading.Thread(target=reads, daemon=True).start()  # still reading as the process ends
time.sleep(0.3)
print("end", float(kept[0].sum()))
"""


def test_arrays_freed_while_the_interpreter_shuts_down():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(Path(zarrx.__file__).parent.parent), os.environ.get("PYTHONPATH", "")])}
    for _ in range(3):
        proc = subprocess.run([sys.executable, "-c", _SHUTDOWN], env=env, capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert proc.stdout.split() == ["end", str(float(1 << 18))]
