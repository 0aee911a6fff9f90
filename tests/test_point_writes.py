"""Batch merges of point and mask writes (``zarrx/batch_points.py``): ``z.vindex[...] = v``,
``set_coordinate_selection``, ``z.vindex[mask] = v`` and ``set_mask_selection`` of arrays of
small chunks, merged a run of chunks at a time. What they store must be what the general
path stores (same keys, same bytes, chunks that become all fill deleted unless empty chunks
are written, cells past the array's end kept or filled as it does), on every codec, fill
value, format, order and store, with one thread or two; a point named twice keeps its last
value, as numpy's assignment keeps it; concurrent writers lose nothing; a chunk changed
meanwhile is merged again; and they make few Python calls per chunk (counted, never timed)."""
from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrx
from zarrx import batch_merge, batch_points
from zarrx.store import LocalStore, MemoryStore

from call_counts import calls_made
from test_partial_write_batches import CODECS, V2_CODECS, _objects, _Raced
from test_partial_write_kinds import LAID_OUT, SHAPE, _make

_RNG = np.random.default_rng(3)
_ROWS, _COLS = _RNG.integers(0, SHAPE[0], 400), _RNG.integers(0, SHAPE[1], 400)
_GRID = np.add.outer(np.arange(SHAPE[0]), np.arange(SHAPE[1]))
# (kind, selection, whether the value is the fill value): random points repeating many,
# negative coordinates, a checkerboard mask, a mask of whole chunks (read nothing) and of the
# chunks at the array's end, the fill value written over points and over whole chunks
WRITES = [
    ("vindex", (_ROWS, _COLS), False),
    ("vindex", (-1 - _ROWS[:50], -1 - _COLS[:50]), False),
    ("mask", _GRID % 2 == 0, False),
    ("coordinate", (np.repeat(_ROWS[:30], 3), np.repeat(_COLS[:30], 3)), False),
    ("mask", (_GRID // 1 < 1000) & (np.arange(SHAPE[0])[:, None] < 8), False),
    ("mask", (np.arange(SHAPE[0])[:, None] >= 40) | (np.arange(SHAPE[1]) >= 35), False),
    ("vindex", (_ROWS[::2], _COLS[::2]), True),
    ("mask", (np.arange(SHAPE[0])[:, None] < 12) & (np.arange(SHAPE[1]) < 20), True),
]


def _count_runs(monkeypatch) -> list:
    """What each run the batched path merges leaves to the general path (to know it ran)."""
    seen: list = []
    merge = batch_points._merge_run

    def counted(*args):
        left = merge(*args)
        seen.append(left)
        return left
    monkeypatch.setattr(batch_points, "_merge_run", counted)
    return seen


def _run(z, fill, want):
    """The writes of ``WRITES``, each checked against numpy."""
    rng = np.random.default_rng(7)
    for i, (kind, sel, as_fill) in enumerate(WRITES):
        n = want[sel].size
        value = np.full(n, fill, "f4") if as_fill else rng.integers(-50, 50, n).astype("f4")
        if kind == "vindex":
            z.vindex[sel] = value
        elif kind == "coordinate":
            z.set_coordinate_selection(sel, value)
        else:
            z.set_mask_selection(sel, value)
        want[sel] = value
        np.testing.assert_array_equal(z[...], want, err_msg=f"write {i}: {kind}")


def _both_ways(monkeypatch, tmp_path, where, fmt, codecs, fill, order, empty, threads):
    stored = {}
    for way in ("batch", "general"):
        store = MemoryStore() if where == "memory" else LocalStore(tmp_path / way)
        # chunks reaching past the end that hold values there: written, then the array shrunk
        z = _make(store, fmt, codecs, fill, order, empty, (48, 40))
        z[...] = 2.5
        z.resize(SHAPE)
        want = np.full(SHAPE, 2.5, "f4")
        for r in range(0, SHAPE[0], 8):     # some chunks of the fill value, others missing
            z[r:r + 4] = fill
            want[r:r + 4] = fill
        with monkeypatch.context() as m, zarrx.config.set(threads=threads):
            m.setattr(batch_merge, "ENABLED", way == "batch")
            seen = _count_runs(m)
            _run(z, fill, want)
        if way == "batch":
            assert len(seen) >= len(WRITES) and all(left is None for left in seen)
        else:
            assert not seen
        stored[way] = _objects(store)
    assert stored["batch"].keys() == stored["general"].keys()
    assert stored["batch"] == stored["general"]


FORMATS = [(3, c, "C") for c in ("raw", "zstd", "crc32c", *LAID_OUT)] + \
    [(2, c, o) for c in ("raw", "zstd") for o in "CF"]


@pytest.mark.parametrize("empty", [False, True], ids=["skip_empty", "write_empty"])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("fill", [0, 7, float("nan")], ids=["fill0", "fill7", "fillnan"])
@pytest.mark.parametrize("fmt,codecs,order", FORMATS)
def test_points_and_masks_store_what_the_general_path_stores(
        monkeypatch, tmp_path, empty, threads, fill, fmt, codecs, order):
    _both_ways(monkeypatch, tmp_path, "memory", fmt, codecs, fill, order, empty, threads)


@pytest.mark.parametrize("empty", [False, True], ids=["skip_empty", "write_empty"])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("fill", [0, float("nan")], ids=["fill0", "fillnan"])
@pytest.mark.parametrize("fmt,codecs,order", [(3, "zstd", "C"), (3, "raw", "C"),
                                              (3, "crc32c", "C"), (2, "raw", "F")])
def test_on_a_local_store_they_store_what_the_general_path_stores(
        monkeypatch, tmp_path, empty, threads, fill, fmt, codecs, order):
    _both_ways(monkeypatch, tmp_path, "local", fmt, codecs, fill, order, empty, threads)


def test_a_point_named_twice_keeps_its_last_value_as_numpy():
    z = zarrx.create_array(MemoryStore(), shape=(16, 16), chunks=(2, 2), dtype="i4",
                           fill_value=0)
    rows = np.array([5, 0, 5, 9, 0, 5, 15, 3, 8])
    cols = np.array([3, 3, 3, 1, 3, 3, 15, 7, 1])
    value = np.arange(len(rows), dtype="i4") + 1
    z.vindex[rows, cols] = value
    want = np.zeros((16, 16), "i4")
    want[rows, cols] = value
    assert z[5, 3] == 6 and z[0, 3] == 5
    np.testing.assert_array_equal(z[...], want)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_random_point_and_mask_writes_match_numpy_and_the_general_path(data):
    shape = tuple(data.draw(st.lists(st.integers(1, 24), min_size=1, max_size=3)))
    chunks = tuple(data.draw(st.integers(1, 5)) for _ in shape)
    fill = data.draw(st.sampled_from([0, 5, float("nan")]))
    fmt, codecs, order = data.draw(st.sampled_from(
        [(3, "raw", "C"), (3, "zstd", "C"), (3, "crc32c", "C"), (3, "transpose_big", "C"),
         (2, "zstd", "C"), (2, "raw", "F")]))
    empty = data.draw(st.booleans())
    kw = (V2_CODECS if fmt == 2 else {**CODECS, **LAID_OUT})[codecs]
    if codecs == "transpose_big":           # the axes reversed, for any number of them
        kw = {**kw, "filters": [zarrx.codecs.Transpose(order=tuple(range(len(shape)))[::-1])]}
    extra = {"order": order} if fmt == 2 else {}
    arrays = [zarrx.create_array(MemoryStore(), shape=shape, chunks=chunks, dtype="f4",
                                 fill_value=fill, zarr_format=fmt, write_empty_chunks=empty,
                                 **kw, **extra) for _ in range(2)]
    want = np.full(shape, fill, "f4")
    size = int(np.prod(shape))
    for i in range(data.draw(st.integers(1, 3))):
        # (points and masks from a drawn seed: up to 3 * 24**3 points, more than hypothesis
        # draws as a list)
        rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
        if data.draw(st.booleans()):        # points, repeating some, negative ones
            n = data.draw(st.integers(1, 3 * size))
            flat = rng.integers(-size, size, n)
            sel = np.unravel_index(flat % size, shape)
            sel = tuple(np.where(flat < 0, s - np.array(shape[d]), s)
                        for d, s in enumerate(sel))
            kind = "coordinate"
        else:
            sel = rng.random(shape) < data.draw(st.sampled_from([0.0, 0.1, 0.5, 0.9, 1.0]))
            kind = "mask"
        n = want[sel].size
        value = np.full(n, fill, "f4") if data.draw(st.booleans()) else \
            (np.arange(n, dtype="f4") + i)
        want[sel] = value
        for z, enabled in zip(arrays, (True, False)):
            batch_merge.ENABLED = enabled
            try:
                if kind == "coordinate":
                    z.vindex[sel] = value
                else:
                    z.set_mask_selection(sel, value)
            finally:
                batch_merge.ENABLED = True
        np.testing.assert_array_equal(arrays[0][...], want)
        assert _objects(arrays[0].store) == _objects(arrays[1].store)


@pytest.mark.parametrize("codecs", ["raw", "zstd"])
def test_points_and_masks_make_few_python_calls_per_chunk(codecs):
    """Writes touching every chunk of a 64 x 64 grid of small chunks, in part: far fewer calls
    than the general path's dozens per chunk."""
    z = zarrx.create_array(MemoryStore(), shape=(256, 256), chunks=(4, 4), dtype="f4",
                           fill_value=0, **CODECS[codecs])
    z[...] = 1
    want = np.ones((256, 256), "f4")
    rng = np.random.default_rng(1)
    rows, cols = rng.integers(0, 256, 20000), rng.integers(0, 256, 20000)
    value = np.arange(20000, dtype="f4")
    n = calls_made(lambda: z.vindex.__setitem__((rows, cols), value))
    want[rows, cols] = value
    assert n < 0.5 * 64 * 64
    mask = _checkers(256)
    n = calls_made(lambda: z.vindex.__setitem__(mask, 4))
    want[mask] = 4
    assert n < 0.5 * 64 * 64
    np.testing.assert_array_equal(z[...], want)


def _checkers(n: int) -> np.ndarray:
    """A checkerboard-ish mask: every other cell, of every third row."""
    return (np.add.outer(np.arange(n), np.arange(n)) % 2 == 0) & (np.arange(n)[:, None] % 3 > 0)


@pytest.mark.parametrize("where", ["memory", "local"])
def test_threads_writing_interleaved_points_lose_nothing(tmp_path, where, monkeypatch):
    """4 threads, each writing its own column of every 4-column chunk through points
    (``z.vindex[rows, cols]``) and a mask: every cell ends at its writer's last value."""
    store = MemoryStore() if where == "memory" else LocalStore(tmp_path / "a")
    z = zarrx.create_array(store, shape=(32, 64), chunks=(4, 4), dtype="i4", fill_value=0,
                           compressors=zarrx.codecs.Zstd(level=1))
    seen = _count_runs(monkeypatch)
    rounds = 20 if where == "memory" else 6
    barrier = threading.Barrier(4)

    def writer(t: int) -> None:
        rows, cols = np.meshgrid(np.arange(32), np.arange(t, 64, 4), indexing="ij")
        rows, cols = rows.reshape(-1)[::-1], cols.reshape(-1)
        mask = np.zeros((32, 64), bool)
        mask[:, t::4] = True
        barrier.wait()
        for r in range(1, rounds + 1):
            z.vindex[rows, cols] = 1000 * t + r
            z.set_mask_selection(mask, 1000 * t + r)
            z.vindex[np.r_[rows, rows[:5]], np.r_[cols, cols[:5]]] = 1000 * t + r

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


def test_a_chunk_changed_meanwhile_is_merged_again_by_a_point_write():
    twin = _make(MemoryStore(), 3, "zstd", 0, "C", False)
    twin[...] = 1
    twin[0, 0] = 9                          # the other writer's change of a cell
    store = _Raced()
    store.bytes_then = bytes(twin.store.get("c/0/0"))
    z = _make(store, 3, "zstd", 0, "C", False)
    z[...] = 1
    rows, cols = np.array([1, 40, 1, 30, 2, 12]), np.array([1, 3, 1, 36, 4, 20])
    z.vindex[rows, cols] = 2
    assert store.raced == 1
    want = np.ones(SHAPE, "f4")
    want[0, 0] = 9
    want[rows, cols] = 2
    np.testing.assert_array_equal(z[...], want)


@pytest.mark.parametrize("kind", ["vindex", "mask"])
def test_a_chunk_that_does_not_decode_is_named_by_a_point_write(kind):
    store = MemoryStore()
    z = _make(store, 3, "zstd", 0, "C", False)
    z[...] = 1
    store.set("c/3/2", b"not zstd")
    with pytest.raises(zarrx.ZarrError, match="c/3/2"):
        if kind == "vindex":
            z.vindex[[14, 1, 40, 20], [11, 1, 30, 5]] = 2
        else:
            z.vindex[_GRID % 2 == 0] = 2
    assert bytes(store.get("c/3/2")) == b"not zstd"


def test_chunks_left_to_the_general_path_are_the_writes_own(monkeypatch):
    """A run left whole to the general path (another thread holds a lock of it, or a chunk
    another writer changed meanwhile) is written there as the same chunks of the write."""
    z = _make(MemoryStore(), 3, "zstd", 0, "C", False)
    z[...] = 1
    monkeypatch.setattr(batch_merge, "_update", lambda *args: np.arange(len(args[2])))
    want = np.ones(SHAPE, "f4")
    value = np.arange(len(_ROWS), dtype="f4")
    z.vindex[_ROWS, _COLS] = value
    want[_ROWS, _COLS] = value
    np.testing.assert_array_equal(z[...], want)
