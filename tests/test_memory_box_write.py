"""Box writes to a MemoryStore: each raw chunk a box covers whole is gathered from the value
straight into the value the store keeps (pooled memory from 64 KiB, ``bytes`` below), each
stored with ``set``. What it stores must be what the general path stores
(same keys, same bytes), on every grid, key encoding, fill setting and thread count; chunks it
leaves (covered in part, all fill) go through the general path."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import zarrx
from zarrx import batch_merge
from zarrx.store import MemoryStore
from zarrx.store._values import Value
from zarrx.store.memory import MemoryBoxWriter

from box_arrays import box_write_case, stored_both_ways, whole_and_cell_writers
from test_local_box_write import cases


@pytest.fixture(autouse=True)
def no_batch_writes(monkeypatch):
    """Boxes of small chunks are written by batches (``tests/test_batch_writes.py``) before
    the box writer is asked: here the box writer is on trial, so they are not."""
    from zarrx import batch_write
    monkeypatch.setattr(batch_write, "write_batches", lambda io, plan, value: False)


@pytest.fixture
def box_calls(monkeypatch):
    """The chunk ranges the memory box writer was asked to write, and what it left."""
    calls: list[tuple[int, int, list[int]]] = []
    orig = MemoryBoxWriter.__call__

    def recording(self, *args):
        left = orig(self, *args)
        calls.append((args[-2], args[-1], left))
        return left

    monkeypatch.setattr(MemoryBoxWriter, "__call__", recording)
    return calls


def _array(store, shape, chunks, dtype="f4", fmt=3, sep="/", fill=7, **kw):
    enc = {"name": "default" if fmt == 3 else "v2", "separator": sep}
    return zarrx.create_array(store, name="g/a", shape=shape, chunks=chunks, dtype=dtype,
                              zarr_format=fmt, fill_value=fill, compressors=None,
                              chunk_key_encoding=enc, **kw)


def _chunks(store: MemoryStore) -> dict[str, bytes]:
    return {k: store.get(k) for k in store.list_prefix("g/a/")
            if k.rpartition("/")[2] not in ("zarr.json", ".zarray", ".zattrs")}


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cases())
def test_box_writes_store_what_the_general_path_stores(monkeypatch, case):
    shape, chunks, sel, fmt, sep, dtype, threads, kind, before, empty = case
    base, value, ref = box_write_case(shape, sel, dtype, kind, before)

    def make(way):
        store = MemoryStore()
        z = _array(store, shape, chunks, dtype, fmt, sep, write_empty_chunks=empty)
        return z, lambda: zarrx.open_array(store, path="g/a"), lambda: _chunks(store)

    stored_both_ways(monkeypatch, make, sel, value, ref, base, before, threads)


@pytest.mark.parametrize("merged", [False, True], ids=["one-by-one", "merged"])
@pytest.mark.parametrize("threads", [1, 2, 4])
def test_whole_chunks_go_through_the_writer_and_the_rest_through_the_general_path(
        box_calls, threads, merged, monkeypatch):
    a = np.random.default_rng(5).random((300, 517)).astype("f8")
    store = MemoryStore()
    z = _array(store, a.shape, (7, 64), "f8", fill=0.0)
    monkeypatch.setattr(batch_merge, "ENABLED", merged)
    with zarrx.config.set(threads=threads):
        z[...] = a
    # 43 x 9 chunks: the last row and column are border chunks, left to the general path
    left = sorted(i for _, _, part in box_calls for i in part)
    if merged:    # the 51 border chunks merged a slab at a time, the writer takes the rest
        assert sum(hi - lo for lo, hi, _ in box_calls) == 42 * 8
        assert not left
    else:
        assert sum(hi - lo for lo, hi, _ in box_calls) == 43 * 9
        assert left == sorted({r * 9 + 8 for r in range(43)} | set(range(42 * 9, 43 * 9)))
    np.testing.assert_array_equal(zarrx.open_array(store, path="g/a")[...], a)


def test_large_chunks_are_kept_in_pooled_values_and_small_ones_as_bytes(box_calls):
    store = MemoryStore()
    big = _array(store, (256, 256), (128, 128), "f4")           # 64 KiB chunks
    big[...] = np.arange(256 * 256, dtype="f4").reshape(256, 256)
    assert {type(store._data[f"g/a/c/{i}/{j}"]) for i in (0, 1) for j in (0, 1)} == {Value}
    small = MemoryStore()
    z = _array(small, (256, 256), (64, 64), "f4")
    z[...] = 1.5
    assert {type(v) for k, v in small._data.items() if "/c/" in k} == {bytes}
    assert len(box_calls) == 2
    np.testing.assert_array_equal(zarrx.open_array(small, path="g/a")[...], 1.5)


def test_chunks_of_fill_are_deleted_not_written(box_calls):
    store = MemoryStore()
    z = _array(store, (8, 8), (4, 4), "i2", fill=0)
    z[...] = 5
    assert len(_chunks(store)) == 4
    z[:4, :] = 0
    assert sorted(_chunks(store)) == ["g/a/c/1/0", "g/a/c/1/1"]
    assert box_calls[-1][2] == [0, 1]                   # left to the general path, deleted


def test_a_read_only_store_has_no_box_writer():
    store = MemoryStore()
    _array(store, (8,), (4,), "i4")[...] = 1
    ro = MemoryStore(dict(store._data), read_only=True)
    assert ro.box_writer("g/a/c/", "/") is None
    with pytest.raises(zarrx.ReadOnlyError):
        zarrx.open_array(ro, path="g/a", mode="r+")[...] = 2


def test_whole_chunk_writes_and_partial_writes_of_one_chunk_lose_nothing(box_calls):
    """Whole replaces through the box writer against single-cell writes (see
    :func:`box_arrays.whole_and_cell_writers`) lose no update."""
    z = _array(MemoryStore(), (1 << 14,), (1 << 14,), "i4", fill=0)   # one 64 KiB chunk
    whole_and_cell_writers(z, 200)
    assert box_calls == [(0, 1, [])] * 200
