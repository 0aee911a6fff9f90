"""Reads of many small chunks by coordinates and masks (``vindex``,
``get_coordinate_selection``, ``get_mask_selection``, ``z[mask]``), and reads of arrays whose
chunks are stored transposed (Zarr v2 order "F", a ``transpose`` codec). What they return
(against numpy: repeated, unsorted and negative coordinates, index arrays of several axes,
empty selections, missing chunks, several data types, ``out=``), the errors they raise, and
the Python work per chunk (counted in calls, never timed)."""
from __future__ import annotations

import re

import numpy as np
import pytest

import zarrx
from zarrx.errors import CodecError, ZarrError
from zarrx.store.local import LocalStore
from zarrx.store.memory import MemoryStore

from call_counts import calls_made

C = zarrx.codecs
STORED = {"raw": {"compressors": None}, "zstd": {"compressors": C.Zstd(level=1)},
          "zstd-crc32c": {"compressors": [C.Zstd(level=1), C.Crc32c()]}}
LAYOUTS = {"v3": {}, "v2-C": {"zarr_format": 2, "order": "C"},
           "v2-F": {"zarr_format": 2, "order": "F"},
           "transpose": {"filters": [{"name": "transpose", "configuration": {"order": [1, 0]}}]}}


def _store(where: str, tmp_path) -> object:
    return MemoryStore() if where == "memory" else LocalStore(str(tmp_path / "a.zarr"))


def _data(shape: tuple[int, ...], dtype: str = "f4", seed: int = 3) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(shape) * 100).astype(dtype)


def _points(rng: np.random.Generator, shape: tuple[int, ...], n: int) -> tuple:
    """``n`` coordinates per axis, unsorted, repeated, some negative."""
    return tuple(rng.integers(-s, s, n) for s in shape)


def sharded_with_holes(dtype: str, index_location: str) -> tuple[np.ndarray, object]:
    """A (53, 47) array in a memory store of inner chunks (3, 5) in shards (12, 10), with
    partial border shards, shards never written and inner chunks emptied (the fill value),
    and the numpy array it holds."""
    shape = (53, 47)
    a = _data(shape, "f8", seed=4).astype(dtype)
    fill = a.flat[0]
    a[:] = fill
    z = zarrx.create_array(MemoryStore(), shape=shape, chunks=(3, 5), dtype=dtype,
                           shards={"shape": (12, 10), "index_location": index_location},
                           fill_value=fill, compressors=[C.Zstd(level=1), C.Crc32c()])
    a[4:50, 7:40] = _data((46, 33), "f8", seed=8).astype(dtype)
    z[4:50, 7:40] = a[4:50, 7:40]
    a[10:20, 10:30] = fill
    z[10:20, 10:30] = fill
    return a, z


def _calls_per_chunk(store, a, read, want, **create) -> float:
    """The Python calls per chunk of 32 x 32 that ``read(z)`` makes on one thread, ``z``
    holding ``a`` in ``store`` (created with ``create``), checking that it reads ``want``."""
    with zarrx.config.set(threads=1):
        z = zarrx.create_array(store, shape=a.shape, chunks=(32, 32), dtype="f4", **create)
        z[...] = a
        np.testing.assert_array_equal(read(z), want)
        got: list = []
        n = calls_made(lambda: got.append(read(z)))
    np.testing.assert_array_equal(got[0], want)
    return n / (a.size // 1024)

@pytest.mark.parametrize("codecs", list(STORED))
@pytest.mark.parametrize("kind", ["vindex", "coordinate", "mask", "vindex-mask", "getitem-mask"])
def test_a_point_read_of_1024_small_chunks_makes_under_one_call_per_chunk(codecs, kind):
    """20,000 points over 1,024 chunks of 4 KiB: read chunk by chunk, they made 13 to 16
    calls per chunk (a projection, a store request, a decode and a copy each)."""
    a = _data((1024, 1024))
    rng = np.random.default_rng(1)
    ix, iy = rng.integers(0, 1024, 20000), rng.integers(0, 1024, 20000)
    mask = np.zeros(a.shape, dtype=bool)
    mask[ix, iy] = True
    read = {"vindex": lambda z: z.vindex[ix, iy],
            "coordinate": lambda z: z.get_coordinate_selection((ix, iy)),
            "mask": lambda z: z.get_mask_selection(mask),
            "vindex-mask": lambda z: z.vindex[mask], "getitem-mask": lambda z: z[mask]}[kind]
    want = a[ix, iy] if kind in ("vindex", "coordinate") else a[mask]
    assert _calls_per_chunk(MemoryStore(), a, read, want, **STORED[codecs]) < 1


@pytest.mark.parametrize("layout, codecs", [("v2-F", "raw"), ("v2-F", "zstd"),
                                            ("transpose", "raw"), ("transpose", "zstd-crc32c")])
@pytest.mark.parametrize("kind", ["box", "step", "oindex", "vindex", "mask"])
def test_reading_1024_small_transposed_chunks_makes_under_one_call_per_chunk(codecs, layout,
                                                                             kind):
    """Chunks stored transposed were decoded, then transposed, one by one: 16 to 34 calls per
    chunk."""
    a = _data((1024, 1024))
    rng = np.random.default_rng(2)
    ix, iy = rng.integers(0, 1024, 20000), rng.integers(0, 1024, 20000)
    mask = a > 0
    sels = {"box": (lambda z: z[...], a), "step": (lambda z: z[::-2, 1::3], a[::-2, 1::3]),
            "oindex": (lambda z: z.oindex[np.sort(ix[:2000]), ::2],
                       a[np.sort(ix[:2000])][:, ::2]),
            "vindex": (lambda z: z.vindex[ix, iy], a[ix, iy]),
            "mask": (lambda z: z.get_mask_selection(mask), a[mask])}
    read, want = sels[kind]
    assert _calls_per_chunk(MemoryStore(), a, read, want, **STORED[codecs],
                            **LAYOUTS[layout]) < 1


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("where, dtype, threads", [
    *[("memory", dt, 1) for dt in ["f8", ">i4", "bool", "U3", "S2", "c8", "M8[s]"]],
    ("memory", "f8", 2), ("local", "f8", 1), ("local", "U3", 2)])
def test_point_reads_of_small_chunks_match_numpy(tmp_path, where, dtype, layout, threads):
    """Random coordinates (unsorted, repeated, negative; index arrays of several axes), masks
    (none, some, all cells), over partial border chunks, chunks never written and chunks
    emptied (the fill value), read as numpy reads them; into ``out=`` too."""
    if layout == "transpose" or layout == "v3":
        if dtype.startswith(">"):
            pytest.skip("a v3 array's type has no byte order")
    rng = np.random.default_rng(len(dtype) * 7 + len(layout))
    shape, chunks = (37, 29), (3, 4)
    a = _data(shape, "f8", seed=len(layout)).astype(dtype)
    fill = a.flat[0]
    a[:] = fill
    kw = dict(LAYOUTS[layout])
    if layout in ("v3", "transpose"):
        kw["compressors"] = C.Zstd(level=1)
    else:
        kw["compressors"] = {"id": "zstd", "level": 1}
    with zarrx.config.set(threads=threads):
        z = zarrx.create_array(_store(where, tmp_path), shape=shape, chunks=chunks,
                               dtype=dtype, fill_value=fill, **kw)
        part = (slice(9, 36), slice(5, 28))
        a[part] = _data(a[part].shape, "f8", seed=9).astype(dtype)
        z[part] = a[part]
        a[9:12] = fill                                  # emptied chunks
        z[9:12] = fill
        for n in [0, 1, 5, 60, 600]:
            pts = _points(rng, shape, n)
            np.testing.assert_array_equal(z.vindex[pts], a[pts], err_msg=repr(pts))
            grid = tuple(p.reshape(-1, 5) if n % 5 == 0 and n else p for p in pts)
            got = z.get_coordinate_selection(grid)
            assert got.shape == a[grid].shape
            np.testing.assert_array_equal(got, a[grid])
            out = np.empty(a[pts].shape, dtype=z.dtype)
            z.get_coordinate_selection(pts, out=out)
            np.testing.assert_array_equal(out, a[pts])
        for p in [0.0, 0.3, 1.0]:
            mask = rng.random(shape) < p
            np.testing.assert_array_equal(z.get_mask_selection(mask), a[mask])
            np.testing.assert_array_equal(z.vindex[mask], a[mask])
            np.testing.assert_array_equal(z[mask], a[mask])
            np.testing.assert_array_equal(z[...], a)


@pytest.mark.parametrize("sel, message", [
    ((np.array([0, 5, 37]), np.array([0, 1, 2])),
     "index 37 is out of bounds for axis 0 with size 37"),
    ((np.array([0, 5, -38]), np.array([0, 1, 2])),
     "index -38 is out of bounds for axis 0 with size 37"),
    ((np.array([0, 5, 7]), np.array([0, 1])),
     re.escape("index arrays could not be broadcast together, found shapes [(3,), (2,)]")),
    ((np.array([0.0, 5.0]), np.array([0, 1])), "expected an integer array, found dtype float64"),
])
def test_refused_coordinates_are_refused_as_for_one_chunk(sel, message):
    """Coordinates out of bounds, arrays that do not broadcast, float coordinates: refused
    with a ZarrError naming what is wrong, whether the other points span many chunks or one."""
    z = zarrx.create_array(MemoryStore(), shape=(37, 29), chunks=(3, 4), dtype="f4")
    z[...] = _data((37, 29))
    many = tuple(np.concatenate([np.arange(0, 36, 2)[:18], s]) for s in sel) \
        if len(sel[0]) == len(sel[1]) else sel
    for s in (sel, many):
        with pytest.raises(ZarrError, match=message):
            z.vindex[s]
    with pytest.raises(ZarrError, match=r"boolean mask: expected shape \(37, 29\), found \(3, 3\)"):
        z.get_mask_selection(np.ones((3, 3), dtype=bool))


@pytest.mark.parametrize("threads", [1, 2], ids=["1thread", "2threads"])
@pytest.mark.parametrize("layout", ["v3", "v2-F", "transpose"])
@pytest.mark.parametrize("where", ["memory", "local"])
def test_a_corrupt_chunk_in_a_point_read_raises_what_reading_it_alone_raises(
        tmp_path, where, layout, threads):
    """The error names the chunk's key and says what reading that chunk alone says; with two
    corrupt chunks, the first in C order of their coordinates, whatever order the points
    come in."""
    store = _store(where, tmp_path)
    kw = dict(LAYOUTS[layout])
    kw["compressors"] = C.Zstd(level=1) if layout != "v2-F" else {"id": "zstd", "level": 1}
    with zarrx.config.set(threads=threads):
        z = zarrx.create_array(store, shape=(64, 64), chunks=(4, 4), dtype="f4", **kw)
        z[...] = _data((64, 64))
        sep, head = (".", "") if layout == "v2-F" else ("/", "c/")
        store.set(f"{head}9{sep}3", b"not a zstd frame at all")
        store.set(f"{head}12{sep}1", b"not a zstd frame either")
        with pytest.raises(CodecError) as alone:
            z[36:40, 12:16]
        assert f"'{head}9{sep}3'" in str(alone.value)
        rng = np.random.default_rng(4)
        pts = (rng.integers(0, 64, 3000)[::-1], rng.integers(0, 64, 3000))
        for read in [lambda: z.vindex[pts], lambda: z.get_mask_selection(np.ones((64, 64), bool)),
                     lambda: z[::-1, ::-1], lambda: z[...]]:
            with pytest.raises(CodecError) as got:
                read()
            assert str(got.value) == str(alone.value)
            assert type(got.value) is type(alone.value)


@pytest.mark.parametrize("threads", [1, 2], ids=["1thread", "2threads"])
def test_transposed_inner_chunks_of_shards_read_as_numpy(threads):
    """Shards of small inner chunks stored transposed: boxes, steps and points."""
    a = _data((67, 45), "u2")
    with zarrx.config.set(threads=threads):
        z = zarrx.create_array(MemoryStore(), shape=a.shape, chunks=(4, 5), shards=(16, 15),
                               dtype="u2", **LAYOUTS["transpose"])
        z[3:60, 2:40] = a[3:60, 2:40]
    a[:3] = a[60:] = 0
    a[:, :2] = a[:, 40:] = 0
    rng = np.random.default_rng(5)
    pts = _points(rng, a.shape, 500)
    np.testing.assert_array_equal(z[...], a)
    np.testing.assert_array_equal(z[5:66, 1:44], a[5:66, 1:44])
    np.testing.assert_array_equal(z[::-3, 1::2], a[::-3, 1::2])
    np.testing.assert_array_equal(z.vindex[pts], a[pts])


@pytest.mark.parametrize("threads", [1, 2], ids=["1thread", "2threads"])
def test_point_reads_split_into_slabs_by_points_match_numpy(monkeypatch, threads):
    """A slab holds a bounded number of points (a few int64 indices each while it is copied),
    unless one chunk holds more: many points in few chunks, slabs of 7 points, read as numpy
    reads them."""
    from zarrx import shard_read
    monkeypatch.setattr(shard_read, "SLAB_POINTS", 7)
    a = _data((40, 40))
    rng = np.random.default_rng(6)
    with zarrx.config.set(threads=threads):
        z = zarrx.create_array(MemoryStore(), shape=a.shape, chunks=(8, 8), dtype="f4",
                               compressors=C.Zstd(level=1))
        z[...] = a
        pts = (np.concatenate([rng.integers(0, 40, 300), np.full(50, 3)]),
               np.concatenate([rng.integers(0, 40, 300), np.arange(50) % 8]))
        np.testing.assert_array_equal(z.vindex[pts], a[pts])
        mask = rng.random(a.shape) < 0.5
        np.testing.assert_array_equal(z[mask], a[mask])


@pytest.mark.parametrize("codecs", list(STORED))
@pytest.mark.parametrize("kind", ["vindex", "mask"])
@pytest.mark.parametrize("where", ["memory", "local"])
def test_a_point_read_of_small_inner_chunks_of_shards_makes_few_calls_per_chunk(
        tmp_path, where, kind, codecs):
    """20,000 points over 1,024 inner chunks of 4 KiB in 16 shards: calls are made per shard
    and per slab, not per inner chunk (38 calls per inner chunk, chunk by chunk)."""
    a = _data((1024, 1024))
    rng = np.random.default_rng(1)
    ix, iy = rng.integers(0, 1024, 20000), rng.integers(0, 1024, 20000)
    mask = np.zeros(a.shape, dtype=bool)
    mask[ix, iy] = True
    read = (lambda z: z.vindex[ix, iy]) if kind == "vindex" else (lambda z: z[mask])
    want = a[ix, iy] if kind == "vindex" else a[mask]
    assert _calls_per_chunk(_store(where, tmp_path), a, read, want, shards=(256, 256),
                            **STORED[codecs]) < 5


@pytest.mark.parametrize("threads", [1, 2], ids=["1thread", "2threads"])
@pytest.mark.parametrize("index_location", ["end", "start"])
@pytest.mark.parametrize("dtype", ["f8", "bool", "U2"])
def test_point_reads_of_small_inner_chunks_of_shards_match_numpy(dtype, index_location,
                                                                 threads):
    """Coordinates and masks over partial border shards, shards never written and inner
    chunks emptied (the fill value), read as numpy reads them."""
    rng = np.random.default_rng(len(dtype) + len(index_location))
    with zarrx.config.set(threads=threads):
        a, z = sharded_with_holes(dtype, index_location)
        shape = a.shape
        for n in [0, 4, 50, 2000]:
            pts = _points(rng, shape, n)
            np.testing.assert_array_equal(z.vindex[pts], a[pts])
        for p in [0.0, 0.2, 1.0]:
            mask = rng.random(shape) < p
            np.testing.assert_array_equal(z[mask], a[mask])


@pytest.mark.parametrize("threads", [1, 2], ids=["1thread", "2threads"])
def test_a_corrupt_inner_chunk_in_a_point_read_raises_what_reading_it_alone_raises(threads):
    """Two shards with a corrupt inner chunk each: the error is that of the first in C order
    of the shards, the one reading that inner chunk alone raises."""
    with zarrx.config.set(threads=threads):
        z = zarrx.create_array(MemoryStore(), shape=(64, 64), chunks=(4, 4), shards=(16, 16),
                               dtype="f4", compressors=[C.Zstd(level=1), C.Crc32c()])
        z[...] = _data((64, 64))
        for key in ("c/1/2", "c/3/0"):
            v = bytearray(z.store.get(key))
            v[20] ^= 0xFF                  # inside the shard's first inner chunk
            z.store.set(key, bytes(v))
        with pytest.raises(CodecError) as alone:
            z[16:20, 32:36]
        assert "'c/1/2'" in str(alone.value)
        rng = np.random.default_rng(3)
        pts = (rng.integers(0, 64, 3000)[::-1], rng.integers(0, 64, 3000))
        for read in [lambda: z.vindex[pts], lambda: z[np.ones((64, 64), bool)]]:
            with pytest.raises(CodecError) as got:
                read()
            assert str(got.value) == str(alone.value)
