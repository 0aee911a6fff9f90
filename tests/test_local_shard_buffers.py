"""The buffer each thread keeps for the shard kernel's reads (``zarrx.store._localshard``):
what a read returns is never overwritten while something still refers to it (a read made
inside another on the same thread, a result held), the buffer is reused otherwise, and it goes
when its thread ends (pool threads included, when the pool is made again for another size)."""
from __future__ import annotations

import gc
import threading
import tracemalloc

import numpy as np
import pytest

import zarrx
from zarrx import _pool
from zarrx.codecs.base import BytesToBytesCodec
from zarrx.codecs.registry import register_codec
from zarrx.store import _localshard
from zarrx.store.localboxes import READ_FLAGS, RESOLVE

_KEY_ARRAY: list = []        # where KeyedXor finds the array holding its key


class KeyedXor(BytesToBytesCodec):
    """XOR with a key read from another array of the store at every call: a codec whose
    decode reads a sharded array, on the thread decoding."""

    name = "test.keyed-xor-from-array"

    def encoded_size(self, n):
        return n

    def _xor(self, data):
        key = zarrx.open_array(_KEY_ARRAY[0], mode="r")[0, 0:8]
        raw = np.frombuffer(bytes(data), dtype=np.uint8)
        return (raw ^ np.resize(key, raw.size)).tobytes()

    encode = _xor

    def decode(self, data, expected, limit):
        return self._xor(data)


register_codec(KeyedXor.name, KeyedXor)


@pytest.mark.parametrize("threads", [1, 2])
def test_a_read_inside_a_read_on_the_same_thread_keeps_the_outer_bytes(tmp_path, threads):
    """Each inner chunk's decode reads another sharded array of the store (its key): that
    read's shard must not land on the bytes of the shard being decoded."""
    _KEY_ARRAY[:] = [str(tmp_path / "key.zarr")]
    key = zarrx.create_array(str(tmp_path / "key.zarr"), shape=(64, 64), chunks=(8, 8),
                             shards=(32, 32), dtype="u1", compressors=None)
    key[...] = np.random.default_rng(0).integers(0, 256, (64, 64), dtype="u1")
    z = zarrx.create_array(str(tmp_path / "a.zarr"), shape=(64, 64), chunks=(8, 8),
                           shards=(32, 32), dtype="u1",
                           compressors={"name": KeyedXor.name})
    a = (np.arange(64 * 64) % 251).astype("u1").reshape(64, 64)
    z[...] = a
    r = zarrx.open_array(str(tmp_path / "a.zarr"), mode="r")
    before = _localshard.counts()
    with zarrx.config.set(threads=threads):
        np.testing.assert_array_equal(r[...], a)                       # each shard whole
        np.testing.assert_array_equal(r[3:30, 5:60], a[3:30, 5:60])     # index, then chunks
        np.testing.assert_array_equal(r.oindex[::5, ::7], a[::5, ::7])
    after = _localshard.counts()
    assert after["handed_on"] == before["handed_on"]
    assert after["opened"] - before["opened"] >= 3 * 4 * 2     # both arrays by the kernel


def _files(tmp_path):
    """A ShardFiles over the two shards of a 1-d array of 4 inner chunks each (raw bytes)."""
    z = zarrx.create_array(str(tmp_path / "a.zarr"), shape=(16,), chunks=(2,), shards=(8,),
                           dtype="u1", compressors=None)
    z[...] = np.arange(16, dtype="u1")
    return _localshard.ShardFiles(str(tmp_path / "a.zarr").encode(), ["c/0", "c/1"],
                                  READ_FLAGS, RESOLVE, 4, 1, True, False, None, -1, 16 << 20,
                                  1 << 20, 1 << 16, lambda i, s: None)


def _chunk(got, k):
    buf, starts, lengths = got
    return bytes(buf[starts[k]:starts[k] + lengths[k]])


def test_a_result_held_is_not_overwritten_by_the_next_read(tmp_path):
    files = _files(tmp_path)
    slots = np.arange(4, dtype=np.int64)
    first = files.read(0, slots)
    view = np.frombuffer(first[0], dtype=np.uint8)        # (a view of it, held too)
    second = files.read(1, slots)
    assert second[0] is not first[0]
    assert [_chunk(first, k) for k in range(4)] == [bytes([2 * k, 2 * k + 1]) for k in range(4)]
    assert [_chunk(second, k) for k in range(4)] == \
        [bytes([8 + 2 * k, 9 + 2 * k]) for k in range(4)]
    del first
    third = files.read(0, slots)                          # the view still holds the first
    assert third[0] is not second[0]
    assert bytes(view[:8]) == bytes(range(8))
    del view


def test_a_result_let_go_is_reused_by_the_next_read(tmp_path):
    """Reading shard after shard, done with each before the next, fills one buffer."""
    files = _files(tmp_path)
    slots = np.arange(4, dtype=np.int64)
    got = files.read(0, slots)
    buf = got[0]
    del got
    kept = id(buf)
    del buf
    for i in (1, 0, 1):
        got = files.read(i, slots)
        assert id(got[0]) == kept
        assert _chunk(got, 3) == bytes([8 * i + 6, 8 * i + 7])
        del got


def _held() -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


def _sharded(path, shape=(1024, 1024)):
    """A float32 array in shards of 512x512 (1 MiB, raw), inner chunks of 32x32."""
    z = zarrx.create_array(str(path), shape=shape, chunks=(32, 32), shards=(512, 512),
                           dtype="f4", compressors=None)
    z[...] = (np.arange(np.prod(shape)) % 1000).astype("f4").reshape(shape)
    return zarrx.open_array(str(path), mode="r")


def test_a_threads_buffer_goes_when_the_thread_ends(tmp_path):
    r = _sharded(tmp_path / "a.zarr")
    tracemalloc.start()
    try:
        before = _held()
        seen: list = []

        def read() -> None:
            r[0:512, 0:512]
            seen.append(_held() - before)       # the shard's bytes kept for the next read

        t = threading.Thread(target=read)
        t.start()
        t.join()
        gone = _held() - before
    finally:
        tracemalloc.stop()
    assert seen[0] > 2**20 > gone


def test_pool_threads_buffers_go_when_the_pool_is_made_again(tmp_path):
    """``threads`` above the I/O threads makes a larger pool; going back to fewer makes the
    pool again, and the old pool's threads end, their buffers with them."""
    k = 6
    r = _sharded(tmp_path / "a.zarr", shape=(512 * k, 512))       # k shards of 1 MiB
    tracemalloc.start()
    try:
        before = _held()
        meet = threading.Barrier(k)

        def read(i: int) -> None:              # on k workers at once, a shard each
            meet.wait()
            r[512 * i:512 * (i + 1), :]

        with zarrx.config.set(threads=_pool.IO_THREADS + 4):
            pool = _pool._get_pool()
            for f in [pool.submit(read, i) for i in range(k)]:
                f.result()
            old = list(pool._threads)
        del pool
        used = _held() - before
        with zarrx.config.set(threads=2):
            assert _pool._get_pool()._threads.isdisjoint(old)     # made again
        gc.collect()
        for t in old:
            t.join(120)
        assert not any(t.is_alive() for t in old)
        left = _held() - before
    finally:
        tracemalloc.stop()
    assert used > k * 2**20 > 2**20 > left
