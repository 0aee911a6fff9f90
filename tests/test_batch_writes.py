"""Batch writes (``zarrx/batch_write.py``): a box of many small chunks gathered, encoded and
stored a slab at a time. What they store must be what the general path stores (same keys,
same bytes, chunks of fill deleted unless ``write_empty_chunks``), on every codec, data type,
fill value, format and store; and they make no Python call per chunk (counted, never timed)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrx
from zarrx import batch_merge, batch_write
from zarrx.store import LocalStore, MemoryStore

from box_arrays import draw_box
from call_counts import calls_made

CODECS = {
    "raw": {"compressors": None},
    "zstd": {"compressors": zarrx.codecs.Zstd(level=1)},
    "blosc": {"compressors": zarrx.codecs.Blosc()},
    "gzip": {"compressors": zarrx.codecs.Gzip()},
    "crc32c": {"compressors": zarrx.codecs.Crc32c()},
    "zstd-crc32c": {"compressors": [zarrx.codecs.Zstd(level=3), zarrx.codecs.Crc32c()]},
}
V2_CODECS = {"raw": {"compressors": None}, "zstd": {"compressors": zarrx.codecs.Zstd(level=1)},
             "blosc": {"compressors": zarrx.codecs.Blosc()}}


def _objects(store) -> dict[str, bytes]:
    return {k: bytes(store.get(k)) for k in store.list_prefix("")
            if k.rpartition("/")[2] not in ("zarr.json", ".zarray", ".zattrs", ".zgroup")}


def _stored_both_ways(monkeypatch, tmp_path, where, shape, chunks, sel, value, *, fmt=3,
                      codecs="zstd", dtype="f4", fill=0, empty=False, threads=1,
                      before=None) -> dict:
    """Write ``value`` into ``sel`` of a new array in batches and through the general path
    (batch writes turned off); assert both store the same objects and read back as numpy;
    the batched store's objects."""
    stored = {}
    want = np.empty(shape, dtype)
    want[...] = np.array(fill, dtype=dtype)
    if before is not None:
        want[...] = before
    want[sel] = value
    for way in ("batch", "general"):
        store = MemoryStore() if where == "memory" else LocalStore(tmp_path / way)
        kw = (V2_CODECS if fmt == 2 else CODECS)[codecs]
        z = zarrx.create_array(store, shape=shape, chunks=chunks, dtype=dtype, fill_value=fill,
                               zarr_format=fmt, write_empty_chunks=empty, **kw)
        with monkeypatch.context() as m, zarrx.config.set(threads=threads):
            if way == "general":
                m.setattr(batch_write, "write_batches", lambda io, plan, value: False)
                m.setattr(batch_merge, "ENABLED", False)      # partial chunks one by one
            if before is not None:
                z[...] = before
            z[sel] = value
        np.testing.assert_array_equal(zarrx.open_array(store, mode="r")[...], want)
        stored[way] = _objects(store)
    assert stored["batch"].keys() == stored["general"].keys()
    assert stored["batch"] == stored["general"]
    return stored["batch"]


def _value(shape, dtype, seed=1, fill=0, fill_rows=0):
    """Random values of ``dtype``, the first ``fill_rows`` rows (axis 0) equal to ``fill``."""
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal(shape) * 100).astype(dtype)
    if fill_rows:
        a[:fill_rows] = fill
    return a


@pytest.mark.parametrize("where", ["memory", "local"])
@pytest.mark.parametrize("codecs", list(CODECS))
@pytest.mark.parametrize("dtype", ["<f4", "<i2", "|u1", "<c8", "<f8"])
@pytest.mark.parametrize("empty", [False, True], ids=["skip-empty", "write-empty"])
def test_whole_writes_store_what_the_general_path_stores(monkeypatch, tmp_path, where, codecs,
                                                         dtype, empty):
    shape, chunks = (64, 48), (8, 8)
    a = _value(shape, dtype, fill=3, fill_rows=16)        # two rows of chunks all fill
    stored = _stored_both_ways(monkeypatch, tmp_path, where, shape, chunks, ..., a,
                               codecs=codecs, dtype=dtype, fill=3, empty=empty,
                               before=_value(shape, dtype, seed=2))
    assert len(stored) == (48 if empty else 36)           # chunks of fill deleted, or kept


@pytest.mark.parametrize("where", ["memory", "local"])
@pytest.mark.parametrize("codecs", list(V2_CODECS))
@pytest.mark.parametrize("sep", [".", "/"])
def test_v2_arrays_store_what_the_general_path_stores(monkeypatch, tmp_path, where, codecs,
                                                      sep):
    shape, chunks = (40, 30), (4, 5)
    a = _value(shape, "<f4", fill_rows=8)
    stored = _stored_both_ways(monkeypatch, tmp_path, where, shape, chunks, ..., a, fmt=2,
                               codecs=codecs)
    assert len(stored) == 8 * 6


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("fill", [0.0, -1.5, 7.0])
def test_boxes_with_border_and_partial_chunks(monkeypatch, tmp_path, threads, fill):
    """Chunks the box covers in part and chunks past the array's end go through the general
    path (merged with what is stored); those inside are batched. Broadcast and strided
    values, a box not starting on a chunk boundary."""
    shape, chunks = (101, 67), (8, 8)
    before = _value(shape, "<f8", seed=3)
    for sel, value in [((slice(3, 99), slice(5, 67)), _value((96, 62), "<f8")),
                       ((slice(None), slice(None)), np.float64(fill)),
                       ((slice(8, 96), slice(0, 64)), _value((64, 88), "<f8").T),
                       ((slice(0, 40), slice(16, 64)), _value((80, 48), "<f8")[::2])]:
        _stored_both_ways(monkeypatch, tmp_path / str(len(sel)), "memory", shape, chunks, sel,
                          value, codecs="zstd", dtype="<f8", fill=fill, threads=threads,
                          before=before)


@st.composite
def _cases(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 24)) for _ in range(ndim))
    chunks = tuple(draw(st.integers(1, 5)) for _ in range(ndim))
    return (shape, chunks, draw_box(draw, st, shape), draw(st.sampled_from(list(CODECS))),
            draw(st.sampled_from(["<f4", "|u1", "<i8"])), draw(st.sampled_from([2, 3])),
            draw(st.booleans()), draw(st.booleans()), draw(st.sampled_from([1, 2])),
            draw(st.sampled_from(["data", "fill", "scalar"])))


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_cases())
def test_any_box_stores_what_the_general_path_stores(monkeypatch, tmp_path_factory, case):
    shape, chunks, sel, codecs, dtype, fmt, empty, before, threads, kind = case
    if fmt == 2 and codecs not in V2_CODECS:
        codecs = "zstd"
    target = np.empty(shape)[sel].shape
    value = {"data": _value(target, dtype, fill=7, fill_rows=target[0] // 2 if target else 0),
             "fill": np.full(target, 7, dtype), "scalar": np.dtype(dtype).type(42)}[kind]
    _stored_both_ways(monkeypatch, tmp_path_factory.mktemp("c"), "memory", shape, chunks, sel,
                      value, fmt=fmt, codecs=codecs, dtype=dtype, fill=7, empty=empty,
                      threads=threads, before=_value(shape, dtype, seed=4) if before else None)


@pytest.mark.parametrize("codecs", ["zstd", "raw", "crc32c"])
def test_a_whole_write_of_small_chunks_makes_no_python_call_per_chunk(codecs):
    """1,024 chunks of 4 KiB: fewer than 2 calls per chunk (before: a projection and its
    bookkeeping per chunk, about 6 calls a chunk; 4.6 for raw chunks of a memory store)."""
    a = _value((1024, 1024), "<f4")
    with zarrx.config.set(threads=1):
        z = zarrx.create_array(MemoryStore(), shape=a.shape, chunks=(32, 32), dtype="f4",
                               **CODECS[codecs])
        z[...] = a                                    # plans made, chunks stored
        per_chunk = calls_made(lambda: z.__setitem__(Ellipsis, a + 1)) / 1024
    assert per_chunk < 2, f"{per_chunk:.2f} calls per chunk"
    np.testing.assert_array_equal(z[...], a + 1)


def test_one_store_call_per_slab(monkeypatch):
    """The chunks of a slab (here all 1,024 of 4 KiB) go to the store in one ``set_many``;
    chunks of fill in one ``delete_many``."""
    calls: list[tuple[str, int]] = []
    real_set, real_delete = MemoryStore.set_many, MemoryStore.delete_many

    def set_many(self, items):
        items = list(items)
        calls.append(("set", len(items)))
        return real_set(self, items)

    def delete_many(self, keys):
        keys = list(keys)
        calls.append(("delete", len(keys)))
        return real_delete(self, keys)

    monkeypatch.setattr(MemoryStore, "set_many", set_many)
    monkeypatch.setattr(MemoryStore, "delete_many", delete_many)
    a = _value((1024, 1024), "<f4", fill_rows=32)
    with zarrx.config.set(threads=1):
        z = zarrx.create_array(MemoryStore(), shape=a.shape, chunks=(32, 32), dtype="f4")
        calls.clear()
        z[...] = a
    assert calls == [("set", 1024 - 32), ("delete", 32)]


@pytest.mark.parametrize("where", ["memory", "local"])
@pytest.mark.parametrize("dtype", ["|S5", "<U3", [("a", "<i4"), ("b", "<f8")], "|b1"],
                         ids=["bytes5", "text3", "records", "bool"])
def test_text_and_records_store_what_the_general_path_stores(monkeypatch, tmp_path, where,
                                                             dtype):
    shape, chunks = (24, 20), (4, 4)
    dt = np.dtype(dtype)
    raw = np.random.default_rng(9).integers(0, 256, (*shape, dt.itemsize), dtype=np.uint8)
    if dt.kind == "U":
        raw = np.random.default_rng(9).integers(65, 90, (*shape, 3), dtype="<u4").view(np.uint8)
    a = (raw[..., 0] & 1).astype(bool) if dt.kind == "b" else raw.view(dt).reshape(shape)
    a[:8] = np.zeros((), dt)                          # two rows of chunks of fill
    _stored_both_ways(monkeypatch, tmp_path, where, shape, chunks, ..., a, codecs="zstd",
                      dtype=dt, fill=np.zeros((), dt).tolist())


def _slab_calls(monkeypatch) -> list[int]:
    """The number of chunks each batched slab held (an entry per slab)."""
    seen: list[int] = []
    real = batch_write._write_slab

    def counting(io, enc, src, start, first, n, raw_fill):
        seen.append(int(np.prod(n)))
        return real(io, enc, src, start, first, n, raw_fill)

    monkeypatch.setattr(batch_write, "_write_slab", counting)
    return seen


FILLS = {
    # fill, the dtype, a chunk's worth of cells equal to the fill by value but not by bytes
    "nan": (float("nan"), "<f8", np.float64(np.nan)),
    "minus-zero": (-0.0, "<f4", np.float32(0.0)),
    "plus-zero": (0.0, "<f8", np.float64(-0.0)),
    "records": ((3, -0.0), [("a", "<i4"), ("b", "<f8")], (3, 0.0)),
    "bytes": (b"xy", "|S5", b"xy\0"),
    "text": ("ab", "<U3", "ab"),
}


@pytest.mark.parametrize("where", ["memory", "local"])
@pytest.mark.parametrize("name", list(FILLS))
def test_chunks_of_fill_are_found_by_their_bytes_as_the_general_path_finds_them(
        monkeypatch, tmp_path, where, name):
    """A whole write of small chunks: rows 0-3 of chunks hold the fill, rows 4-7 a value equal
    to it but of other bytes (+0.0 for -0.0, a NaN of another payload), the rest data. The
    batched and the general path store the same keys and bytes: a chunk is fill by its bytes
    (by value for a NaN fill, which is never batched)."""
    fill, dtype, other = FILLS[name]
    dt = np.dtype(dtype)
    shape, chunks = (40, 16), (4, 4)
    a = np.zeros(shape, dt)
    if dt.kind in "fV":
        flat = a.view(np.uint8).reshape(-1)
        flat[...] = np.random.default_rng(5).integers(1, 200, flat.size, dtype=np.uint8)
    else:
        a[...] = np.array([b"q", b"rst", b"uvwxy"] if dt.kind == "S" else ["q", "rs", "tuv"],
                          dt)[np.arange(a.size).reshape(shape) % 3]
    a[:16] = np.array(fill, dt) if dt.kind != "V" else np.array([fill], dt)[0]
    if name == "nan":        # a NaN of another payload: fill by value, not by bytes
        a[16:32] = np.frombuffer(np.float64(np.nan).tobytes()[:-1] + b"\xff", "<f8")[0]
    else:
        a[16:32] = np.array([other], dt)[0]
    slabs = _slab_calls(monkeypatch)
    stored = _stored_both_ways(monkeypatch, tmp_path, where, shape, chunks, ..., a,
                               codecs="zstd", dtype=dt, fill=fill)
    assert (sum(slabs) > 0) == (name != "nan")              # NaN fills take the general path
    kept = sorted(tuple(int(i) for i in k.split("/")[1:]) for k in stored)   # "c/i/j"
    first = 8 if name in ("nan", "bytes", "text") else 4     # b"xy\0" is b"xy" padded
    assert kept == [(i, j) for i in range(first, 10) for j in range(4)]
