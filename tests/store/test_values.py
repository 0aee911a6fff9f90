"""Values a memory store keeps in pooled memory: immutable copies whose memory is reused once
they are freed, never while anyone can still read them, and never beyond the pool's limit."""
from __future__ import annotations

import gc
import os
import pickle
import struct
import subprocess
import sys
import threading
import time
import weakref
from pathlib import Path

import numpy as np
import pytest

import zarrx
from zarrx.store import MemoryStore
from zarrx.store import _values
from zarrx.store._values import MIN_SIZE, Value

PAGE = 4096


@pytest.fixture(autouse=True)
def _empty_pool():
    gc.collect()
    _values.trim()
    with zarrx.config.set(memory_pool=64 << 20):
        yield
    gc.collect()
    _values.trim()


def _addr(value) -> int:
    return np.frombuffer(value, dtype=np.uint8).__array_interface__["data"][0]


def _payload(n: int, seed: int = 0) -> bytes:
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8).tobytes()


def test_a_value_is_an_immutable_copy():
    src = bytearray(_payload(100_000))
    v = Value(src)
    src[0] ^= 0xFF                                  # the value is a copy
    assert v == bytes(_payload(100_000)) and not (v != _payload(100_000))
    assert v != src and len(v) == 100_000
    assert bytes(v) == _payload(100_000)
    view = memoryview(v)
    assert view.readonly
    with pytest.raises(TypeError):
        view[0] = 1
    with pytest.raises(TypeError):
        _writable(v)
    assert pickle.loads(pickle.dumps(v)) == _payload(100_000)
    assert type(pickle.loads(pickle.dumps(v))) is bytes
    with pytest.raises(TypeError):
        hash(v)


def _writable(v) -> None:
    """Write into the value through a writable buffer of it."""
    struct.pack_into("B", v, 0, 1)


def test_an_empty_value_is_writable_until_sealed():
    v = Value.empty(MIN_SIZE)
    assert not memoryview(v).readonly
    memoryview(v)[:4] = b"abcd"
    _writable(v)
    assert v.seal() is v
    assert bytes(v)[:4] == b"\x01bcd"
    with pytest.raises(TypeError):
        _writable(v)
    assert memoryview(v).readonly
    with pytest.raises(ValueError, match="expected a size >= 0, found -1"):
        Value.empty(-1)


def test_a_freed_block_is_reused_by_the_next_value_of_its_size():
    v = Value(_payload(MIN_SIZE))
    where = _addr(v)
    del v
    assert _values.pooled() == MIN_SIZE
    w = Value(_payload(MIN_SIZE, 1))
    assert _addr(w) == where and _values.pooled() == 0
    assert w == _payload(MIN_SIZE, 1)


def test_a_block_serves_values_up_to_an_eighth_smaller():
    pages = 64
    del_me = Value(b"\0" * (pages * PAGE))
    where = _addr(del_me)
    del del_me
    assert _addr(Value(b"\0" * ((pages - 8) * PAGE))) == where    # 64 pages for 56 (1/8 more)
    gc.collect()
    del_me = Value(b"\0" * (pages * PAGE))
    del del_me
    smaller = Value(b"\0" * ((pages - 9) * PAGE))                  # 55 pages: too small for it
    assert _values.pooled() == pages * PAGE and len(smaller) == (pages - 9) * PAGE


def test_the_pool_keeps_the_newest_blocks_up_to_its_limit():
    size = 256 << 10
    with zarrx.config.set(memory_pool=3 * size):
        values = [Value(_payload(size, i)) for i in range(5)]
        newest = _addr(values[-1])
        for i in range(5):
            values.pop(0)
        assert _values.pooled() == 3 * size
        again = [Value(_payload(size)) for _ in range(3)]
        assert newest in {_addr(v) for v in again}
    with zarrx.config.set(memory_pool=0):
        del again
        assert _values.pooled() == 0


def test_changing_memory_pool_releases_pooled_blocks_at_once():
    size = 256 << 10
    values = [Value(_payload(size, i)) for i in range(3)]
    newest = _addr(values[-1])
    for _ in range(3):                                      # freed first to last
        values.pop(0)
    assert _values.pooled() == 3 * size
    with zarrx.config.set(memory_pool=size):                # the oldest released first
        assert _values.pooled() == size
        assert _addr(Value(_payload(size))) == newest
    with zarrx.config.set(memory_pool=0):
        assert _values.pooled() == 0


def test_a_memory_pool_beyond_the_address_space_keeps_every_freed_block():
    size = 256 << 10
    with zarrx.config.set(memory_pool=1 << 70):
        v = Value(_payload(size))
        del v
        assert _values.pooled() == size


def test_trim_releases_every_pooled_block():
    values = [Value(_payload(MIN_SIZE, i)) for i in range(4)]
    del values
    assert _values.trim() == 4 * MIN_SIZE
    assert _values.pooled() == 0


def test_the_pool_setting_is_checked():
    with pytest.raises(zarrx.ArgumentError,
                       match=r"zarrx.config.memory_pool: expected None or an int >= 0 "
                             r"\(bytes\), found -1"):
        zarrx.config.set(memory_pool=-1)
    with pytest.raises(zarrx.ArgumentError, match="found True"):
        zarrx.config.set(memory_pool=True)


def test_a_memory_store_returns_bytes_from_get_and_views_from_zero_copy_reads():
    store = MemoryStore()
    data = _payload(1 << 20)
    store.set("c/0", bytearray(data))
    got = store.get("c/0")
    assert type(got) is bytes and got == data
    part = store.get("c/0", zarrx.store.ByteRange(10, 100))
    assert type(part) is bytes and part == data[10:110]
    assert store.get_many([("c/0", None)]) == [data]
    (view,) = store.get_many_buffers([("c/0", None)])
    assert type(view) is memoryview and view.readonly and view == data
    value, gen = store.get_versioned("c/0")
    assert value == data and gen == store.generation("c/0")
    with store.snapshot("c/0") as snap:
        whole, rng = snap.read([None, zarrx.store.ByteRange(5, 7)])
        assert whole == data and bytes(rng) == data[5:12]
    assert store.getsize("c/0") == 1 << 20
    small = _payload(100)
    store.set("c/1", small)
    assert store.get("c/1") is small                   # small values stay plain bytes
    restored = pickle.loads(pickle.dumps(store))
    assert restored.get("c/0") == data and restored.get("c/1") == small


def test_a_reader_keeps_its_value_when_the_key_is_overwritten_and_blocks_are_reused():
    store = MemoryStore()
    size = 1 << 20
    store.set("k", b"\1" * size)
    (held,) = store.get_many_buffers([("k", None)])
    with store.snapshot("k") as snap:
        store.set("k", b"\2" * size)                     # the old value is still read
        for i in range(8):                               # freed blocks go round
            store.set(f"other/{i}", bytes([3 + i]) * size)
            store.delete(f"other/{i}")
        assert held == b"\1" * size
        assert snap.read([None])[0] == b"\1" * size
    assert store.get("k") == b"\2" * size


def test_many_threads_never_see_a_mixed_value():
    store = MemoryStore()
    size, keys, rounds = 128 << 10, 4, 200
    for k in range(keys):
        store.set(f"k{k}", bytes([0]) * size)
    errors: list[str] = []

    def writer(t: int) -> None:
        for r in range(rounds):
            store.set(f"k{(t + r) % keys}", bytes([(t * rounds + r) % 251 + 1]) * size)

    def reader() -> None:
        for r in range(rounds * 2):
            for buf in store.get_many_buffers([(f"k{k}", None) for k in range(keys)]):
                a = np.frombuffer(buf, dtype=np.uint8)
                if not (a == a[0]).all():
                    errors.append(f"mixed value in round {r}")
                    return

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(4)]
    threads += [threading.Thread(target=reader) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


@pytest.mark.parametrize("chunks,shards", [((128, 128), None), ((64, 64), (128, 128))])
def test_arrays_written_into_memory_stores_again_and_again_read_back(chunks, shards):
    src = np.random.default_rng(3).standard_normal((256, 256)).astype("f4")
    for i in range(4):
        store = MemoryStore()
        z = zarrx.create_array(store, shape=src.shape, chunks=chunks, shards=shards,
                               dtype="f4", compressors=None)
        z[...] = src + i
        np.testing.assert_array_equal(z[...], src + i)
        # a 64 KiB chunk is gathered, and a shard assembled, in the Value the store keeps
        assert type(store._data["c/0/0"]) is Value
        freed = weakref.ref(store)
        del z, store
        # a pool worker that has handed back its result may still hold its task's arguments
        # (and through them the store) for a moment, until it takes its next task
        for _ in range(1000):
            if freed() is None:
                break
            time.sleep(0.01)
        assert freed() is None
    assert _values.pooled() > 0


def test_values_freed_by_collections_inside_pool_changes_are_never_lost_or_freed_twice():
    """With the cyclic collector running at nearly every allocation, values held in reference
    cycles (freed by the collector, possibly while the pool itself is being changed) go back to
    the pool or to the system, never both: the process does not abort on a double free, and
    the pool's count of bytes matches what trimming it releases."""
    class Holder:
        def __init__(self, value) -> None:
            self.value, self.me = value, self        # a cycle: only the collector frees it

    before = gc.get_threshold()
    with zarrx.config.set(memory_pool=40 * MIN_SIZE):
        gc.set_threshold(1, 1, 1)
        try:
            kept = []
            for i in range(400):
                Holder(Value(b"\1" * (MIN_SIZE + PAGE * (i % 5))))
                kept.append(Value.empty(MIN_SIZE + PAGE * (i % 3)))
                if len(kept) > 8:
                    kept.pop(0)
            del kept
        finally:
            gc.set_threshold(*before)
        gc.collect()
        held = _values.pooled()
    assert 0 < held <= 40 * MIN_SIZE
    assert _values.trim() == held and _values.pooled() == 0
    assert Value(b"\2" * MIN_SIZE) == b"\2" * MIN_SIZE


# Thread B frees a value: its pool change reads the setting (Python code, paused here by
# the patched pool_limit until the main thread's own change is under way). The main thread's
# change (_apply_limit to 0) has taken the oldest block X out of the pool's order when the
# collector runs inside it (gc.set_threshold(1): at the tuple popitem makes); from the
# collector's callback, B goes on, and then takes a value of X's size.
_RACE = """
import gc, sys, threading
from zarrx import config
from zarrx.store import _values
from zarrx.store._values import Value
S = 40 << 20                               # above glibc's mmap threshold: freed = unmapped
config.memory_pool = 1 << 30
src = b"\\x01" * S
x = Value(src)
del x                                      # X: the oldest pooled block
y = Value(b"\\x02" * (S + (1 << 20)))       # B's value
orig = config.pool_limit
b_waits, go_b, b_done = threading.Event(), threading.Event(), threading.Event()
st = {"b": False, "a": False, "armed": False}
got = {}

def patched():
    if threading.current_thread().name == "B" and st["b"]:
        st["b"] = False
        b_waits.set()
        go_b.wait(20)
    elif threading.current_thread() is threading.main_thread() and st["a"]:
        st["a"] = False
        gc.collect()
        gc.set_threshold(1)
        st["armed"] = True
        return 0
    return orig()

def on_collect(phase, info):
    if phase == "start" and st["armed"] and threading.current_thread() is threading.main_thread():
        st["armed"] = False
        go_b.set()
        b_done.wait(20)

def b():
    global y
    st["b"] = True
    y = None
    got["z"] = Value(src)
    b_done.set()

config.pool_limit = patched
t = threading.Thread(target=b, name="B")
t.start()
b_waits.wait(20)
gc.callbacks.append(on_collect)
st["a"] = True
_values._apply_limit()
gc.set_threshold(700)
gc.callbacks.remove(on_collect)
t.join()
config.pool_limit = orig
print(bytes(got["z"]) == src, _values.pooled() >= 0)
"""


def test_a_pool_change_paused_by_a_collection_is_not_overlapped_by_another_thread():
    """A value freed on another thread while this thread's change of the pool is paused (by the
    collector, which runs finalizers and lets other threads take the GIL) is released to the
    system, not pooled; before, that thread's change ran too and marked the pool idle when it
    ended, so a third step took the block the paused change was about to free: the new value's
    memory was unmapped under it (a crash) and the pool's byte count went negative. On Python
    3.12 and later the collector no longer runs inside allocations and the race cannot arise."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(Path(zarrx.__file__).parent.parent), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", _RACE], env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["True", "True"]
