"""Batch merges (``zarrx/batch_merge.py``) of the other kinds of partial writes: orthogonal
index arrays (sorted or not, with repeated positions: the cell keeps the last value naming
it, as numpy's assignment keeps it) and slices of negative steps. What they store must be
what the general path stores, chunk by chunk (same keys, same bytes, chunks that become all
fill deleted unless empty chunks are written), on every codec, fill value, format, order and
store, with one thread or two; the cells must be numpy's; concurrent writers lose nothing; and
they make few Python calls per chunk (counted, never timed)."""
from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrx
from zarrx import batch_merge
from zarrx.store import LocalStore, MemoryStore

from call_counts import calls_made
from test_partial_write_batches import CODECS, V2_CODECS, _count_slabs, _objects, _Raced

SHAPE = (45, 38)
CHUNKS = (4, 5)
ROWS, COLS = np.arange(SHAPE[0]), np.arange(SHAPE[1])
# (orthogonal selection, whether the value is the fill value): negative steps (one of -1,
# whose inner chunks are covered whole), index arrays unsorted with repeated positions,
# sorted, on both axes, with a negative step, a mask; writes of the fill value emptying
# chunks (rows of chunks covered whole through a reversed index array) and a part of some
WRITES = [
    (np.s_[::-2, :], False),
    (np.s_[40:3:-3, 37:0:-2], False),
    (np.s_[::-1, 2:30], False),
    (([9, 1, 5, 1, 40, 3, 9], slice(None)), False),
    ((np.arange(2, 44, 3), np.s_[3:30]), False),
    (([30, 2, 2, 17, 44], [7, 2, 2, 37, 20, 7]), False),
    ((np.s_[::-3], [7, 2, 2, 30]), False),
    ((ROWS % 3 == 1, np.s_[5:]), False),
    ((np.arange(4, 20)[::-1], slice(None)), True),
    (([0, 1, 2, 3, 1], np.s_[0:20]), True),
    ((np.s_[30:20:-1], [0, 1, 2, 3, 4, 4]), True),
]


def _cells(sel):
    """The selection as per-axis positions (for numpy's ``np.ix_``)."""
    return np.ix_(*[np.arange(n)[s] if isinstance(s, slice) else
                    (np.flatnonzero(s) if np.asarray(s).dtype == bool else np.asarray(s))
                    for s, n in zip(sel, SHAPE)])


def _run(z, fill, want, way="oindex"):
    """The writes of ``WRITES``, each checked against numpy."""
    rng = np.random.default_rng(7)
    for i, (sel, as_fill) in enumerate(WRITES):
        at = _cells(sel)
        shape = want[at].shape
        value = np.full(shape, fill, "f4") if as_fill else \
            rng.integers(-50, 50, shape).astype("f4")
        if way == "oindex":
            z.oindex[sel] = value
        else:
            z.set_orthogonal_selection(sel, value)
        want[at] = value
        np.testing.assert_array_equal(z[...], want, err_msg=f"write {i}: {sel}")


# chains with an array-to-array codec or the other byte order: laid out before encoding
LAID_OUT = {
    "transpose": {"filters": [zarrx.codecs.Transpose(order=(1, 0))],
                  "compressors": zarrx.codecs.Zstd(level=1)},
    "bigendian": {"serializer": zarrx.codecs.Bytes(endian="big"), "compressors": None},
    "transpose_big": {"filters": [zarrx.codecs.Transpose(order=(1, 0))],
                      "serializer": zarrx.codecs.Bytes(endian="big"),
                      "compressors": zarrx.codecs.Crc32c()},
}


def _make(store, fmt, codecs, fill, order, empty, shape=SHAPE):
    kw = (V2_CODECS if fmt == 2 else {**CODECS, **LAID_OUT})[codecs]
    extra = {"order": order} if fmt == 2 else {}
    return zarrx.create_array(store, shape=shape, chunks=CHUNKS, dtype="f4", fill_value=fill,
                              zarr_format=fmt, write_empty_chunks=empty, **kw, **extra)


def _both_ways(monkeypatch, tmp_path, where, fmt, codecs, fill, order, empty, threads,
               how="oindex"):
    stored = {}
    for way in ("batch", "general"):
        store = MemoryStore() if where == "memory" else LocalStore(tmp_path / way)
        z = _make(store, fmt, codecs, fill, order, empty)
        want = np.full(SHAPE, fill, "f4")
        for r in range(0, SHAPE[0], 8):     # some chunks stored, others missing
            z[r:r + 4] = 3.5
            want[r:r + 4] = 3.5
        with monkeypatch.context() as m, zarrx.config.set(threads=threads):
            m.setattr(batch_merge, "ENABLED", way == "batch")
            seen = _count_slabs(m)
            _run(z, fill, want, how)
        if way == "batch":
            assert len(seen) >= len(WRITES) and all(left is None for left in seen)
        if way == "general":
            assert not seen
        stored[way] = _objects(store)
    assert stored["batch"].keys() == stored["general"].keys()
    assert stored["batch"] == stored["general"]


FORMATS = [(3, c, "C") for c in ("raw", "zstd", "crc32c", *LAID_OUT)] + \
    [(2, c, o) for c in ("raw", "blosc") for o in "CF"]


@pytest.mark.parametrize("empty", [False, True], ids=["skip_empty", "write_empty"])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("fill", [0, 7, float("nan")], ids=["fill0", "fill7", "fillnan"])
@pytest.mark.parametrize("fmt,codecs,order", FORMATS)
def test_index_arrays_and_negative_steps_store_what_the_general_path_stores(
        monkeypatch, tmp_path, empty, threads, fill, fmt, codecs, order):
    _both_ways(monkeypatch, tmp_path, "memory", fmt, codecs, fill, order, empty, threads)


@pytest.mark.parametrize("empty", [False, True], ids=["skip_empty", "write_empty"])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("fill", [0, float("nan")], ids=["fill0", "fillnan"])
@pytest.mark.parametrize("fmt,codecs,order", [(3, "zstd", "C"), (3, "raw", "C"), (2, "raw", "F")])
def test_on_a_local_store_they_store_what_the_general_path_stores(
        monkeypatch, tmp_path, empty, threads, fill, fmt, codecs, order):
    _both_ways(monkeypatch, tmp_path, "local", fmt, codecs, fill, order, empty, threads)


@pytest.mark.parametrize("codecs", ["gzip", "blosc"])
def test_set_orthogonal_selection_stores_what_the_general_path_stores(monkeypatch, tmp_path,
                                                                     codecs):
    _both_ways(monkeypatch, tmp_path, "memory", 3, codecs, 0, "C", False, 1, "method")


def test_repeated_positions_keep_the_last_value_as_numpy():
    z = zarrx.create_array(MemoryStore(), shape=(16, 16), chunks=(2, 2), dtype="i4",
                           fill_value=0)
    rows, cols = [5, 0, 5, 9, 0, 5], [3, 3, 1, 3]
    value = np.arange(24, dtype="i4").reshape(6, 4)
    z.oindex[rows, cols] = value
    want = np.zeros((16, 16), "i4")
    want[np.ix_(rows, cols)] = value
    assert z[5, 3] == value[5, 3] and z[0, 1] == value[4, 2]
    np.testing.assert_array_equal(z[...], want)


@pytest.mark.parametrize("codecs", ["raw", "zstd"])
def test_index_arrays_and_negative_steps_make_few_python_calls_per_chunk(codecs):
    """Writes touching every chunk of a 64 x 64 grid of small chunks, in part: far fewer
    calls than the general path's dozens per chunk."""
    z = zarrx.create_array(MemoryStore(), shape=(256, 256), chunks=(4, 4), dtype="f4",
                           fill_value=0, **CODECS[codecs])
    z[...] = 1
    a = np.arange(128 * 256, dtype="f4").reshape(128, 256)
    want = np.ones((256, 256), "f4")
    n = calls_made(lambda: z.__setitem__(np.s_[::-2, :], a))
    want[::-2, :] = a
    assert n < 0.5 * 64 * 64
    rows = np.random.default_rng(1).permutation(256)[:100]
    n = calls_made(lambda: z.oindex.__setitem__((rows, np.s_[1:255]), a[:100, :254]))
    want[np.ix_(rows, np.arange(1, 255))] = a[:100, :254]
    assert n < 0.5 * 64 * 64
    np.testing.assert_array_equal(z[...], want)


@pytest.mark.parametrize("where", ["memory", "local"])
def test_threads_writing_interleaved_index_arrays_lose_nothing(tmp_path, where, monkeypatch):
    """4 threads, each writing its own column of every 4-column chunk through an index array
    (``z.oindex[:, cols]``) and a reversed slice (``z[::-1, t::4]``): every cell ends at its
    writer's last value."""
    store = MemoryStore() if where == "memory" else LocalStore(tmp_path / "a")
    z = zarrx.create_array(store, shape=(32, 64), chunks=(4, 4), dtype="i4", fill_value=0,
                           compressors=zarrx.codecs.Zstd(level=1))
    seen = _count_slabs(monkeypatch)
    rounds = 20 if where == "memory" else 6
    barrier = threading.Barrier(4)

    def writer(t: int) -> None:
        cols = np.arange(t, 64, 4)[::-1]
        barrier.wait()
        for r in range(1, rounds + 1):
            z.oindex[:, cols] = 1000 * t + r
            z[::-1, t::4] = 1000 * t + r
            z.oindex[[r % 32, 0], cols] = 1000 * t + r

    with zarrx.config.set(threads=1):
        ts = [threading.Thread(target=writer, args=(t,)) for t in range(4)]
        for th in ts:
            th.start()
        for th in ts:
            th.join()
    got = zarrx.open_array(store, mode="r")[...]
    for t in range(4):
        assert (got[:, t::4] == 1000 * t + rounds).all()
    assert seen


def test_a_chunk_changed_meanwhile_is_merged_again_by_an_index_array_write():
    twin = _make(MemoryStore(), 3, "zstd", 0, "C", False)
    twin[...] = 1
    twin[0, 0] = 9                          # the other writer's change of a cell
    store = _Raced()
    store.bytes_then = bytes(twin.store.get("c/0/0"))
    z = _make(store, 3, "zstd", 0, "C", False)
    z[...] = 1
    rows = [40, 1, 2, 30, 1]
    z.oindex[rows, 1:37] = 2
    assert store.raced == 1
    want = np.ones(SHAPE, "f4")
    want[0, 0] = 9
    want[np.ix_(rows, np.arange(1, 37))] = 2
    np.testing.assert_array_equal(z[...], want)


def test_a_chunk_that_does_not_decode_is_named_by_a_reversed_write():
    store = MemoryStore()
    z = _make(store, 3, "zstd", 0, "C", False)
    z[...] = 1
    store.set("c/3/2", b"not zstd")
    with pytest.raises(zarrx.ZarrError, match="c/3/2"):
        z[::-2, :] = 2
    with pytest.raises(zarrx.ZarrError, match="c/3/2"):
        z.oindex[[14, 1], :] = 2


def _index(draw, n):
    """One axis of an orthogonal selection over ``n`` cells: an integer, a slice of any step,
    an index array (unsorted, repeated positions, negative ones) or a mask."""
    kind = draw(st.sampled_from(["int", "slice", "array", "array", "mask"]))
    if kind == "int":
        return draw(st.integers(-n, n - 1))
    if kind == "slice":
        return slice(draw(st.none() | st.integers(-n, n)), draw(st.none() | st.integers(-n, n)),
                     draw(st.sampled_from([1, 2, 3, -1, -2, -5])))
    if kind == "mask":
        return np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    return np.array(draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=2 * n)))


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_random_orthogonal_writes_match_numpy_and_the_general_path(data):
    shape = tuple(data.draw(st.lists(st.integers(1, 24), min_size=1, max_size=3)))
    chunks = tuple(data.draw(st.integers(1, 5)) for _ in shape)
    fill = data.draw(st.sampled_from([0, 5, float("nan")]))
    fmt, codecs, order = data.draw(st.sampled_from(
        [(3, "raw", "C"), (3, "zstd", "C"), (3, "transpose_big", "C"), (2, "zstd", "C"),
         (2, "raw", "F")]))
    empty = data.draw(st.booleans())
    kw = (V2_CODECS if fmt == 2 else {**CODECS, **LAID_OUT})[codecs]
    if codecs == "transpose_big":           # the axes reversed, for any number of them
        kw = {**kw, "filters": [zarrx.codecs.Transpose(order=tuple(range(len(shape)))[::-1])]}
    extra = {"order": order} if fmt == 2 else {}
    arrays = [zarrx.create_array(MemoryStore(), shape=shape, chunks=chunks, dtype="f4",
                                 fill_value=fill, zarr_format=fmt, write_empty_chunks=empty,
                                 **kw, **extra) for _ in range(2)]
    want = np.full(shape, fill, "f4")
    for i in range(data.draw(st.integers(1, 3))):
        sel = tuple(_index(data.draw, n) for n in shape)
        at = tuple(np.arange(n)[s] if not isinstance(s, np.ndarray) or s.dtype != bool
                   else np.flatnonzero(s) for s, n in zip(sel, shape))
        cells = np.ix_(*[np.atleast_1d(a) for a in at])
        value = np.arange(want[cells].size, dtype="f4").reshape(want[cells].shape) + i
        if data.draw(st.booleans()):
            value[...] = fill
        want[cells] = value
        value = value.reshape([np.size(a) for a, s in zip(at, sel)
                               if not isinstance(s, int)])
        for z, enabled in zip(arrays, (True, False)):
            batch_merge.ENABLED = enabled
            try:
                z.oindex[sel] = value
            finally:
                batch_merge.ENABLED = True
        np.testing.assert_array_equal(arrays[0][...], want)
        assert _objects(arrays[0].store) == _objects(arrays[1].store)


@pytest.mark.parametrize("sel", [np.s_[40:1:-3, ::-2], ([30, 2, 2, 17, 44], [7, 2, 37, 20, 7])],
                         ids=["reversed", "index_arrays"])
def test_chunks_left_to_the_general_path_are_the_writes_own(monkeypatch, sel):
    """A slab left whole to the general path (another thread holds a lock of it, or a chunk
    another writer changed meanwhile) is written there as the same chunks of the write."""
    z = _make(MemoryStore(), 3, "zstd", 0, "C", False)
    z[...] = 1
    monkeypatch.setattr(batch_merge, "_update", lambda *args: np.arange(len(args[2])))
    at = _cells(sel)
    want = np.ones(SHAPE, "f4")
    value = np.arange(want[at].size, dtype="f4").reshape(want[at].shape)
    z.oindex[sel] = value
    want[at] = value
    np.testing.assert_array_equal(z[...], want)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_index_arrays_of_several_axes_store_what_the_general_path_stores(data):
    """A basic selection with an index array of two or three axes (``z[rows2d, 1:9] = v``),
    its positions unsorted and repeated: numpy's cells, the general path's bytes."""
    shape = tuple(data.draw(st.lists(st.integers(2, 24), min_size=2, max_size=3)))
    chunks = tuple(data.draw(st.integers(1, 5)) for _ in shape)
    fill = data.draw(st.sampled_from([0, float("nan")]))
    fmt, codecs, order = data.draw(st.sampled_from(
        [(3, "raw", "C"), (3, "zstd", "C"), (3, "crc32c", "C"), (3, "transpose", "C"),
         (2, "zstd", "C"), (2, "raw", "F")]))
    empty = data.draw(st.booleans())
    kw = (V2_CODECS if fmt == 2 else {**CODECS, **LAID_OUT})[codecs]
    if codecs == "transpose":
        kw = {**kw, "filters": [zarrx.codecs.Transpose(order=tuple(range(len(shape)))[::-1])]}
    extra = {"order": order} if fmt == 2 else {}
    stores = [MemoryStore(), MemoryStore()]
    arrays = [zarrx.create_array(s, shape=shape, chunks=chunks, dtype="f4", fill_value=fill,
                                 zarr_format=fmt, write_empty_chunks=empty, **kw, **extra)
              for s in stores]
    want = np.full(shape, fill, "f4")
    axis = data.draw(st.integers(0, len(shape) - 1))
    ishape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=2, max_size=3)))
    n = shape[axis]
    idx = np.array(data.draw(st.lists(st.integers(-n, n - 1), min_size=int(np.prod(ishape)),
                                      max_size=int(np.prod(ishape))))).reshape(ishape)
    sel = tuple(idx if d == axis else slice(data.draw(st.integers(0, m - 1)), None,
                                            data.draw(st.sampled_from([1, 2, -1])))
                for d, m in enumerate(shape))
    for i in range(2):
        value = np.arange(want[sel].size, dtype="f4").reshape(want[sel].shape) + i
        if i and data.draw(st.booleans()):
            value[...] = fill
        want[sel] = value
        for z, enabled in zip(arrays, (True, False)):
            batch_merge.ENABLED = enabled
            try:
                z[sel] = value
            finally:
                batch_merge.ENABLED = True
        np.testing.assert_array_equal(arrays[0][...], want)
        assert _objects(stores[0]) == _objects(stores[1])


def test_an_index_array_of_two_axes_makes_few_python_calls_per_chunk():
    z = zarrx.create_array(MemoryStore(), shape=(256, 256), chunks=(4, 4), dtype="f4",
                           fill_value=0)
    z[...] = 1
    rows = np.random.default_rng(2).permutation(256)[:120].reshape(10, 12)
    value = np.arange(120 * 254, dtype="f4").reshape(10, 12, 254)
    n = calls_made(lambda: z.__setitem__((rows, np.s_[1:255]), value))
    want = np.ones((256, 256), "f4")
    want[rows, 1:255] = value
    assert n < 0.5 * 64 * 64
    np.testing.assert_array_equal(z[...], want)
