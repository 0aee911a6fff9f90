"""Reads and writes with threads give the values of one thread whatever order the pool runs
their tasks in, and what a read returns never shares memory that a later call reuses.

Every place where memory outlives one task was audited (the read buffers of windows and slabs,
the per-thread decode and byte buffers of an array handle, the kept shard slabs of writes and
write-behind, the codecs' per-thread contexts and shuffle buffers, the pooled output and stored
value blocks, the shard index and decoded shard caches): these tests run those paths with the
pool's tasks taken last first, or in a shuffled order, all on the calling thread (schedules the
real pool allows: a worker that took a task may run it only after the caller has run all the
others), and with thresholds lowered so that small arrays share their work at all."""
from __future__ import annotations

import random

import numpy as np
import pytest

import zarrx
from zarrx import _pool, batch_read, chunk_io, chunk_read
from zarrx.store import LocalStore, MemoryStore, ZipStore


@pytest.fixture(params=["reversed", "shuffled"])
def schedule(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """``run_shared`` and ``run_batches`` taking their tasks in another order than given, on
    the calling thread; and small reads and writes spread over tasks. Returns the number of
    tasks each shared call ran (to check the pool was asked at all)."""
    seen: list[int] = []
    rng = random.Random(7)
    original_batches = _pool.run_batches

    def order(n: int) -> list[int]:
        at = list(range(n))
        if request.param == "reversed":
            return at[::-1]
        rng.shuffle(at)
        return at

    def shared(fn, n_tasks: int) -> None:  # type: ignore[no-untyped-def]
        if _pool.threads() <= 1 or n_tasks < 2 or _pool.in_worker():
            for i in range(n_tasks):
                fn(i)
            return
        seen.append(n_tasks)
        for i in order(n_tasks):
            fn(i)

    def batches(fn, items, *, min_batch: int = 1):  # type: ignore[no-untyped-def]
        if _pool.threads() <= 1 or len(items) < 2 * min_batch or _pool.in_worker():
            return original_batches(fn, items, min_batch=min_batch)
        parts = _pool._split(items, min(_pool.threads(), max(1, len(items) // min_batch)))
        seen.append(len(parts))
        out: list = [None] * len(parts)
        for i in order(len(parts)):
            out[i] = fn(parts[i])
        return out

    monkeypatch.setattr(_pool, "run_shared", shared)
    monkeypatch.setattr(_pool, "run_batches", batches)
    monkeypatch.setattr(chunk_io, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(chunk_io, "GIL_FREE_BYTES", 0)
    monkeypatch.setattr(chunk_io, "READ_WINDOW", 2)
    monkeypatch.setattr(chunk_io, "WINDOW_BYTES", 64)
    monkeypatch.setattr(batch_read, "WINDOW_BYTES", 64)
    monkeypatch.setattr(chunk_read, "LAZY_READ_CHUNKS", 8)
    monkeypatch.setattr(chunk_read, "LAZY_WINDOW", 8)
    return seen


def _text(shape: tuple[int, ...], seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).integers(0, 1000, size=shape)
    return (v.astype(str).astype(object) * (v % 4 + 1)).astype(object)


CASES = {
    "v3-zstd-text": dict(dtype=str, compressors="auto", zarr_format=3),
    "v2-gzip-F": dict(dtype="f8", compressors=zarrx.codecs.Gzip(level=1), zarr_format=2,
                      order="F"),
    "v2-blosc": dict(dtype="i2", compressors=zarrx.codecs.Blosc(), zarr_format=2),
    "v3-raw": dict(dtype="f4", compressors=None, zarr_format=3),
    "v3-crc32c": dict(dtype="u1", compressors=zarrx.codecs.Crc32c(), zarr_format=3),
    "v3-sharded-zstd": dict(dtype="f8", compressors="auto", zarr_format=3, shards=(12, 14)),
    "v3-sharded-raw": dict(dtype="i4", compressors=None, zarr_format=3, shards=(6, 21)),
}


def _data(case: str, shape: tuple[int, ...]) -> np.ndarray:
    if CASES[case]["dtype"] is str:
        return _text(shape, 1)
    return (np.random.default_rng(1).random(shape) * 1000).astype(CASES[case]["dtype"])


def _store(kind: str, tmp_path):  # type: ignore[no-untyped-def]
    if kind == "memory":
        return MemoryStore()
    if kind == "local":
        return LocalStore(str(tmp_path / "a.zarr"))
    return ZipStore(str(tmp_path / "a.zip"), mode="w")


def _selections(shape: tuple[int, ...]) -> list:
    rng = np.random.default_rng(3)
    mask = rng.random(shape) < 0.3
    return [("basic", Ellipsis), ("basic", (slice(3, None), slice(2, -1))),
            ("basic", (slice(None, None, 3), slice(None, None, -2))), ("basic", (5, 7)),
            ("oindex", (np.array([0, 4, 5, 17, 23]), np.array([1, 2, 20, 40]))),
            ("vindex", (np.array([0, 23, 5, 5, 11]), np.array([41, 0, 3, 3, 20]))),
            ("mask", mask)]


def _read(z, how: str, sel):  # type: ignore[no-untyped-def]
    if how == "oindex":
        return z.oindex[sel]
    if how == "vindex":
        return z.vindex[sel]
    return z[sel]


def _expected(data: np.ndarray, how: str, sel):  # type: ignore[no-untyped-def]
    if how == "oindex":
        return data[np.ix_(*sel)]
    return data[sel]


@pytest.mark.parametrize("store_kind", ["memory", "local", "zip"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_reads_and_writes_in_any_task_order_keep_every_value(tmp_path, schedule, case,
                                                             store_kind) -> None:
    shape, chunks = (24, 42), (3, 7)
    data = _data(case, shape)
    kw = dict(CASES[case])
    store = _store(store_kind, tmp_path)
    expected = data.copy()
    with zarrx.config.set(threads=2):
        z = zarrx.create_array(store, shape=shape, chunks=chunks, **kw)
        if store_kind == "zip":           # a zip entry is written once
            z[...] = data
        else:
            z[...] = data
            part = _data(case, (20, 30))[::-1]
            z[2:22, 5:35] = part              # partial chunks merged with those stored
            expected[2:22, 5:35] = part
        if store_kind == "zip":
            store.close()
            store = ZipStore(str(tmp_path / "a.zip"), mode="r")
        r = zarrx.open_array(store, mode="r")
        for how, sel in _selections(shape):
            got = _read(r, how, sel)
            np.testing.assert_array_equal(got, _expected(expected, how, sel),
                                          err_msg=f"{how} {sel}")
    assert schedule, "no read or write shared its tasks"
    if store_kind == "zip":
        store.close()


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_read_returns_memory_no_later_read_reuses(tmp_path, schedule, case) -> None:
    """A result is the caller's: reading again, elsewhere, or the same cells, changes nothing
    in it, and changing it changes no later result."""
    shape, chunks = (24, 42), (3, 7)
    data = _data(case, shape)
    store = LocalStore(str(tmp_path / "a.zarr"))
    z = zarrx.create_array(store, shape=shape, chunks=chunks, **CASES[case])
    z[...] = data
    with zarrx.config.set(threads=2):
        r = zarrx.open_array(store, mode="r")
        first = r[:12]
        kept = first.copy()
        other = r[12:]                     # other chunks, decoded into the same buffers
        again = r[:12]
        np.testing.assert_array_equal(first, kept)
        first[...] = first[::-1]           # the caller's to change
        np.testing.assert_array_equal(r[:12], kept)
        np.testing.assert_array_equal(again, kept)
        np.testing.assert_array_equal(other, data[12:])
        point = r[5, 7]
        r[20, 40]
        assert point == data[5, 7]


@pytest.mark.parametrize("dtype", ["f8", "u1", str])
def test_chunks_of_many_shapes_read_in_any_task_order(tmp_path, schedule, dtype) -> None:
    """A rectilinear grid: each thread decodes chunks of several shapes into the one buffer
    it keeps."""
    rows, cols = [1, 4, 2, 7, 3, 5], [3, 9, 1, 6]
    shape = (sum(rows), sum(cols))
    data = _text(shape, 5) if dtype is str else \
        (np.random.default_rng(5).random(shape) * 200).astype(dtype)
    z = zarrx.create_array(LocalStore(str(tmp_path / "r.zarr")), shape=shape, dtype=dtype,
                           chunks=[rows, cols], compressors="auto")
    z[...] = data
    with zarrx.config.set(threads=2):
        r = zarrx.open_array(str(tmp_path / "r.zarr"), mode="r")
        for how, sel in [("basic", (slice(1, None), slice(2, -1))), ("basic", (5, 7)),
                         ("oindex", (np.array([0, 4, 5, 17, 21]), np.array([1, 2, 10, 18]))),
                         ("vindex", (np.array([0, 21, 5, 5, 11]), np.array([18, 0, 3, 3, 12])))]:
            np.testing.assert_array_equal(_read(r, how, sel), _expected(data, how, sel))
    assert schedule
