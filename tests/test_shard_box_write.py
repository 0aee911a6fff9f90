"""Box writes of sharded arrays: every shard a box covers whole is assembled in place, its raw
inner chunks gathered straight from the value, and committed whole; the chunks of the other
shards, and shards holding an inner chunk of fill, go through the general path. What is stored
must be exactly what the general path stores, on every grid, index location, checksum, fill
setting, store and thread count."""
from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import zarrx
from zarrx import box_write, shard_box
from zarrx.store import LocalStore, MemoryStore

from box_arrays import box_write_case, draw_box, stored_both_ways


@pytest.fixture
def general_calls(monkeypatch):
    """How many chunk projections each write handed to the general path."""
    calls: list[int] = []
    orig = box_write.write_from

    def recording(io, projections, value, **kw):
        calls.append(len(projections))
        return orig(io, projections, value, **kw)

    monkeypatch.setattr(box_write, "write_from", recording)
    return calls


def _array(store, shape, chunks, ratio, dtype="f4", loc="end", crc=False, fill=7, **kw):
    shards = {"shape": tuple(c * r for c, r in zip(chunks, ratio)), "index_location": loc}
    return zarrx.create_array(store, name="g/a", shape=shape, chunks=chunks, shards=shards,
                              dtype=dtype, fill_value=fill,
                              compressors=[{"name": "crc32c"}] if crc else None, **kw)


def _objects(store) -> dict[str, bytes]:
    return {k: store.get(k) for k in store.list_prefix("g/a/c")}


@st.composite
def cases(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 13)) for _ in range(ndim))
    chunks = tuple(draw(st.integers(1, 3)) for _ in range(ndim))
    ratio = tuple(draw(st.integers(1, 3)) for _ in range(ndim))
    sel = draw_box(draw, st, shape)
    return dict(shape=shape, chunks=chunks, ratio=ratio, sel=sel,
                dtype=draw(st.sampled_from(["f4", "u1", "i8", "c8"])),
                loc=draw(st.sampled_from(["end", "start"])), crc=draw(st.booleans()),
                threads=draw(st.sampled_from([1, 2])),
                kind=draw(st.sampled_from(["data", "fill", "scalar", "some fill"])),
                before=draw(st.booleans()), empty=draw(st.booleans()),
                local=draw(st.booleans()))


@settings(max_examples=120, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cases())
def test_shard_box_writes_store_what_the_general_path_stores(tmp_path_factory, monkeypatch, c):
    shape, dtype = c["shape"], c["dtype"]
    base, value, ref = box_write_case(shape, c["sel"], dtype, c["kind"], c["before"])

    def make(way):
        store = LocalStore(str(tmp_path_factory.mktemp(way))) if c["local"] else MemoryStore()
        z = _array(store, shape, c["chunks"], c["ratio"], dtype, c["loc"], c["crc"],
                   write_empty_chunks=c["empty"])
        return z, lambda: zarrx.open_array(store, path="g/a"), lambda: _objects(store)

    stored_both_ways(monkeypatch, make, c["sel"], value, ref, base, c["before"], c["threads"],
                     "_write_shards")


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("local", [False, True])
@pytest.mark.parametrize("in_part", [True, False], ids=["in-part", "in-part-off"])
def test_whole_shards_skip_the_general_path(tmp_path, monkeypatch, general_calls, threads,
                                            local, in_part):
    monkeypatch.setattr(shard_box, "ENABLED", in_part)
    a = np.random.default_rng(1).random((40, 36)).astype("f8")
    store = LocalStore(str(tmp_path)) if local else MemoryStore()
    z = _array(store, a.shape, (4, 6), (2, 3), "f8", fill=0.0)     # shards of 8 x 18
    with zarrx.config.set(threads=threads):
        z[...] = a                  # 5 x 2 shards, all inside the array: no general path
        assert general_calls == []
        z[1:40, 0:36] = a[1:, :] + 1     # the first shard row is covered in part
    # the two shards of the first row: their chunks merged or encoded together
    # (zarrx.shard_box), or else the general path gets their 2 x 3 chunks each
    assert general_calls == ([] if in_part else [2 * 2 * 3])
    want = a.copy()
    want[1:] += 1
    np.testing.assert_array_equal(zarrx.open_array(store, path="g/a")[...], want)


def test_a_shard_with_an_inner_chunk_of_fill_goes_through_the_general_path(general_calls):
    store = MemoryStore()
    z = _array(store, (32,), (4,), (4,), "i4", fill=0)             # two shards of 16
    v = np.arange(1, 33, dtype="i4")
    v[4:8] = 0                                                     # inner chunk 1 is fill
    z[...] = v
    assert general_calls == [4]                                    # only that shard's chunks
    np.testing.assert_array_equal(z[...], v)
    # the general path left the chunk of fill out of the first shard: 3 chunks and the index
    assert len(store.get("g/a/c/0")) == 3 * 16 + 4 * 16 + 4


def test_a_box_over_no_whole_shard_is_left_to_the_general_path(monkeypatch, general_calls):
    monkeypatch.setattr(shard_box, "ENABLED", False)
    store = MemoryStore()
    z = _array(store, (16, 16), (4, 4), (2, 2), "i4")
    # shards of 8 x 8: rows 1 to 14 cover no shard whole
    assert not box_write._write_shards(z._io, _plan(z, (slice(1, 15), slice(0, 16))),
                                       np.ones((14, 16), "i4"))
    z[1:15, :] = 3
    np.testing.assert_array_equal(z[1:15, :], 3)
    assert general_calls == []          # the array called the general path, not the box write


def test_a_box_over_no_whole_shard_is_written_shard_by_shard(general_calls):
    store = MemoryStore()
    z = _array(store, (16, 16), (4, 4), (2, 2), "i4")
    z[...] = np.arange(256, dtype="i4").reshape(16, 16)
    # shards of 8 x 8: rows 1 to 14 cover no shard whole; their chunks are merged or encoded
    # together, with no chunk projection handed to the general path
    assert box_write._write_shards(z._io, _plan(z, (slice(1, 15), slice(0, 16))),
                                   np.full((14, 16), 3, "i4"))
    assert general_calls == []
    want = np.arange(256, dtype="i4").reshape(16, 16)
    want[1:15] = 3
    np.testing.assert_array_equal(zarrx.open_array(store, path="g/a")[...], want)


def _plan(z, sel):
    from zarrx import indexing
    return indexing.plan_selection(sel, z.shape, z._grid, kind="basic", shard_shape=z._order)


def test_files_of_a_local_store_hold_whole_shards(tmp_path):
    a = np.arange(64 * 64, dtype="u2").reshape(64, 64)
    z = _array(LocalStore(str(tmp_path)), a.shape, (8, 8), (4, 4), "u2", fill=0)
    with zarrx.config.set(threads=2):
        z[...] = a
    files = sorted(os.listdir(tmp_path / "g" / "a" / "c" / "0"))
    assert files == ["0", "1"]
    assert os.path.getsize(tmp_path / "g" / "a" / "c" / "0" / "0") == 32 * 32 * 2 + 16 * 16 + 4
    np.testing.assert_array_equal(zarrx.open_array(str(tmp_path), path="g/a")[...], a)
