"""Reads of many chunks, some or all of them missing: the results match numpy for every
selection kind and fill value, and a missing chunk costs no Python call of its own."""
from __future__ import annotations

import numpy as np
import pytest
from call_counts import calls_made

import zarrx
from zarrx.store import LocalStore, MemoryStore

FILLS = {
    "f4-nan": ("f4", np.nan),
    "f8-neg": ("f8", -2.5),
    "i2": ("i2", -7),
    "u1": ("u1", 3),
    "bool": ("bool", True),
    "c8": ("c8", 1 + 2j),
    "U3": ("U3", "ab"),
    "S2": ("S2", b"xy"),
    "struct": ([("a", "i4"), ("b", "f4")], (5, 1.5)),
    "str": (str, "fill"),
}


def _values(dtype: np.dtype, n: int, rng: np.random.Generator) -> np.ndarray:
    if dtype.names:
        v = np.zeros(n, dtype=dtype)
        v["a"] = rng.integers(-9, 9, n)
        v["b"] = rng.random(n)
        return v
    if dtype.kind in "US":
        return np.array([str(x) for x in rng.integers(0, 99, n)]).astype(dtype)
    if dtype.kind == "T" or dtype.kind == "O":
        return np.array([str(x) for x in rng.integers(0, 99, n)], dtype=object)
    if dtype.kind == "b":
        return rng.random(n) < 0.5
    return (rng.random(n) * 100).astype(dtype)


def _pair(store, shape, chunks, dtype, fill, *, shards=None, seed=0, present=0.3,
          compressors="auto"):
    """An array with about ``present`` of its chunks written (with values other than the
    fill), the others missing, and the numpy array it should read as."""
    rng = np.random.default_rng(seed)
    z = zarrx.create_array(store, shape=shape, chunks=chunks, shards=shards, dtype=dtype,
                           fill_value=fill, compressors=compressors)
    dt = np.dtype(object) if z.dtype == str or z.dtype.kind == "T" else np.dtype(z.dtype)
    ref = np.empty(shape, dtype=dt)
    ref[...] = fill if dt.kind == "O" else np.array(fill, dtype=dt)[()]
    grid = [-(-s // c) for s, c in zip(shape, chunks)]
    for idx in np.ndindex(*grid):
        if rng.random() >= present:
            continue
        sel = tuple(slice(i * c, min(s, (i + 1) * c)) for i, c, s in zip(idx, chunks, shape))
        n = int(np.prod([s.stop - s.start for s in sel]))
        vals = _values(np.dtype(ref.dtype) if ref.dtype != object else np.dtype(object), n, rng)
        vals = vals.reshape([s.stop - s.start for s in sel])
        z[sel] = vals
        ref[sel] = vals
    return z, ref


def _check(got, want):
    got = np.asarray(got)
    if want.dtype == object:
        assert got.tolist() == want.tolist()
    else:
        np.testing.assert_array_equal(got, want)


SELECTIONS = [
    ("basic", np.s_[...]),
    ("basic", np.s_[3:61, 5:140]),
    ("basic", np.s_[7, 2:50]),
    ("basic", np.s_[::3, 60:4:-7]),
    ("orthogonal", np.s_[[1, 2, 40, 41, 63], 10:30]),
    ("coordinate", (np.array([0, 5, 40, 63, 17]), np.array([1, 70, 3, 0, 33]))),
    ("mask", None),
    ("block", np.s_[1:3, 2:]),
]


def _read(z, kind, sel, shape):
    if kind == "basic":
        return z[sel]
    if kind == "orthogonal":
        return z.oindex[sel]
    if kind == "coordinate":
        return z.vindex[sel]
    if kind == "mask":
        return z.vindex[np.arange(np.prod(shape)).reshape(shape) % 5 == 1]
    return z.blocks[sel]


def _want(ref, kind, sel, chunks):
    if kind == "orthogonal":
        return ref[np.ix_(np.array(sel[0]), np.arange(ref.shape[1])[sel[1]])]
    if kind == "mask":
        return ref[np.arange(ref.size).reshape(ref.shape) % 5 == 1]
    if kind == "block":
        return ref[sel[0].start * chunks[0]:sel[0].stop * chunks[0], sel[1].start * chunks[1]:]
    return ref[sel]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("fill", list(FILLS), ids=list(FILLS))
@pytest.mark.parametrize("layout", ["plain", "sharded"])
def test_mixed_reads_match_numpy(fill, layout, threads):
    dtype, value = FILLS[fill]
    shards = (8, 24) if layout == "sharded" else None
    shape, chunks = (64, 150), (2, 6)   # 800 chunks: reads of 256 or more take the lazy path
    z, ref = _pair(MemoryStore(), shape, chunks, dtype, value, shards=shards)
    with zarrx.config.set(threads=threads):
        for kind, sel in SELECTIONS:
            _check(_read(z, kind, sel, shape), _want(ref, kind, sel, chunks))


@pytest.mark.parametrize("present", [0.0, 0.05, 0.5, 1.0])
@pytest.mark.parametrize("store", ["memory", "local"])
def test_box_reads_of_sparse_arrays(tmp_path, store, present):
    st = MemoryStore() if store == "memory" else LocalStore(tmp_path / "a.zarr")
    shape, chunks = (50, 37, 9), (3, 4, 2)
    z, ref = _pair(st, shape, chunks, "f4", np.nan, present=present, seed=3)
    for sel in [np.s_[...], np.s_[1:49, 3:36, 1:8], np.s_[10, :, 4:], np.s_[:, 5, :],
                np.s_[2:3, 4:9, 0:1], np.s_[None, 7:40, ..., 2:]]:
        for threads in (1, 2):
            with zarrx.config.set(threads=threads):
                _check(z[sel], ref[sel])
    out = np.empty((48, 33, 7), dtype="f4")
    z.get_basic_selection(np.s_[1:49, 3:36, 1:8], out=out)
    _check(out, ref[1:49, 3:36, 1:8])
    fortran = np.empty((48, 33, 7), dtype="f4", order="F")
    z.get_basic_selection(np.s_[1:49, 3:36, 1:8], out=fortran)
    _check(fortran, ref[1:49, 3:36, 1:8])


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("ndim", [1, 2])
def test_missing_chunks_cost_no_call_each(threads, ndim):
    # zstd chunks in memory: the general read path (no box reader); a read of 4096 or 16384
    # missing chunks makes a bounded number of Python calls, not some per chunk
    counts = []
    for n in (1 << 12, 1 << 14):
        shape = (n * 8,) if ndim == 1 else (n // 64 * 4, 64 * 2)
        chunks = (8,) if ndim == 1 else (4, 2)
        z = zarrx.create_array(MemoryStore(), shape=shape, chunks=chunks, dtype="f4",
                               fill_value=np.nan)
        z[:4] = 1.0                     # a stored chunk or two, the rest missing
        with zarrx.config.set(threads=threads):
            got = z[:]
            counts.append(calls_made(lambda: z[:]))
        assert np.isnan(got[4:]).all() and (got[:4] == 1).all()
    assert counts[1] - counts[0] < (1 << 14) - (1 << 12)


@pytest.mark.parametrize("threads", [1, 2])
def test_strided_reads_of_missing_chunks_cost_no_call_each(threads):
    # one cell of each chunk (a step of the chunk length), an index array, and a reversed
    # strided selection with a new axis: 4096 or 16384 chunks, all missing but the first
    counts = []
    for n in (1 << 12, 1 << 14):
        z = zarrx.create_array(MemoryStore(), shape=(n * 16, 4), chunks=(8, 4), dtype="i2",
                               fill_value=-3)
        z[:8] = 7
        ref = np.full((n * 16, 4), -3, dtype="i2")
        ref[:8] = 7
        idx = np.arange(0, n * 16, 5)[::-1]
        with zarrx.config.set(threads=threads):
            _check(z[::8, 1], ref[::8, 1])
            _check(z.oindex[idx, [3, 0]], ref[idx][:, [3, 0]])
            _check(z[n * 16 - 1::-2, None, 1:], ref[n * 16 - 1::-2, None, 1:])
            # (an index array's plan still makes an entry per chunk along its axis)
            counts.append(calls_made(lambda: (z[::8, 1], z[n * 16 - 1::-2, None, 1:])))
    assert counts[1] - counts[0] < ((1 << 14) - (1 << 12)) // 4, counts


def test_sparse_rows_fill_by_row():
    # rows of chunks holding both kinds: one masked fill per such row of chunks, not a call per
    # missing chunk. The same 1024 chunks stored, 15360 or 64512 missing:
    counts = []
    for width in (1 << 12, 1 << 14):
        z = zarrx.create_array(MemoryStore(), shape=(64, width), chunks=(4, 4), dtype="i4",
                               fill_value=-1)
        z[::4, :512:8] = 5
        ref = np.full((64, width), -1, dtype="i4")
        ref[::4, :512:8] = 5
        with zarrx.config.set(threads=1):
            np.testing.assert_array_equal(z[:], ref)
            np.testing.assert_array_equal(z[1:63, 3:width - 2], ref[1:63, 3:width - 2])
            counts.append(calls_made(lambda: z[:]))
    assert counts[1] - counts[0] < (64512 - 15360) // 8, counts


@pytest.mark.parametrize("threads", [1, 2])
def test_sparse_shards_of_large_inner_chunks(threads):
    # inner chunks of 16 KiB: the general read path, through the shards' indexes; missing
    # shards and missing inner chunks of stored shards both read as the fill value
    z, ref = _pair(MemoryStore(), (1024, 1024), (8, 256), "f8", -1.0, shards=(64, 512),
                   present=0.3, seed=5)
    with zarrx.config.set(threads=threads):
        for sel in [np.s_[...], np.s_[5:1000, 100:900], np.s_[::3, 7], np.s_[17, :]]:
            _check(z[sel], ref[sel])
        _check(z.oindex[[0, 9, 500, 1023], ::5], ref[[0, 9, 500, 1023], ::5])


def _axis_sel(rng: np.random.Generator, n: int, arrays: bool):
    r = rng.integers(0, 5 if arrays else 4)
    if r == 0:
        return int(rng.integers(-n, n))
    if r == 1:
        a, b = sorted(rng.integers(0, n + 1, 2).tolist())
        return slice(a, b)
    if r == 2:
        step = int(rng.choice([-7, -3, -1, 2, 5]))
        a, b = rng.integers(-n, n, 2).tolist()
        return slice(a, b, step)
    if r == 3:
        return slice(None)
    return rng.integers(-n, n, int(rng.integers(1, 40)))


@pytest.mark.parametrize("seed", range(6))
def test_random_outer_reads_of_sparse_arrays(seed):
    # 4000 chunks, a fifth stored: random slices (any step), integers, index arrays (unsorted,
    # repeated, negative) and new axes, read as basic and orthogonal selections
    z, ref = _pair(MemoryStore(), (200, 120), (2, 3), "f4", np.nan, present=0.2, seed=seed)
    rng = np.random.default_rng(seed)
    with zarrx.config.set(threads=1 + seed % 2):
        for _ in range(25):
            sel = tuple(_axis_sel(rng, n, True) for n in ref.shape)
            want = ref[np.ix_(*[np.arange(n)[s] if not isinstance(s, int) else [s]
                                for s, n in zip(sel, ref.shape)])]
            want = want.reshape([len(np.arange(n)[s]) for s, n in zip(sel, ref.shape)
                                 if not isinstance(s, int)])
            _check(z.oindex[sel], want)
            basic = tuple(_axis_sel(rng, n, False) for n in ref.shape)
            if rng.random() < 0.3:
                basic = (None, *basic)
            _check(z[basic], ref[basic])


def test_sparse_rectilinear_reads():
    # 2400 chunks of irregular lengths, a fifth stored: missing ones filled by their cells
    rng = np.random.default_rng(1)
    e0, e1 = rng.integers(1, 5, 60).tolist(), rng.integers(1, 4, 40).tolist()
    shape = (sum(e0) - 1, sum(e1) - 2)
    z = zarrx.create_array(MemoryStore(), shape=shape, chunks=[e0, e1], dtype="f8",
                           fill_value=np.nan)
    ref = np.full(shape, np.nan)
    b0, b1 = np.cumsum([0, *e0]), np.cumsum([0, *e1])
    for i, j in np.ndindex(60, 40):
        if rng.random() < 0.2:
            s = np.s_[b0[i]:min(b0[i + 1], shape[0]), b1[j]:min(b1[j + 1], shape[1])]
            z[s] = ref[s] = rng.random(ref[s].shape)
    idx = rng.integers(0, shape[0], 50)
    for threads in (1, 2):
        with zarrx.config.set(threads=threads):
            for sel in [np.s_[...], np.s_[3:100, 5:70], np.s_[::3, ::-2], np.s_[None, 7, :],
                        np.s_[10:, None, 1:80:3]]:
                _check(z[sel], ref[sel])
            _check(z.oindex[idx, ::2], ref[idx][:, ::2])


EXACT_FILLS = {
    "f4-nan-payload": ("f4", np.frombuffer(b"\x01\x00\xc0\x7f", "<f4")[0]),
    "f8-neg-zero": ("f8", -0.0),
    "c8": ("c8", complex(1.5, -0.0)),
    "struct": ([("a", "i4"), ("b", "f4"), ("c", "u1")], (5, -0.0, 7)),
    "U3": ("U3", "ab"),
    "S7": ("S7", b"abcdefg"),
    "bool": ("bool", True),
    "datetime": ("M8[s]", np.datetime64(7, "s")),
}


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("fill", list(EXACT_FILLS), ids=list(EXACT_FILLS))
def test_reads_of_missing_chunks_hold_the_fill_values_bytes(fill, threads):
    # chunks all missing (and one stored): boxes, strides and index arrays read every cell as
    # the fill value's exact bytes (a NaN's payload, the sign of a zero)
    dtype, value = EXACT_FILLS[fill]
    z = zarrx.create_array(MemoryStore(), shape=(90, 70), chunks=(3, 2), dtype=dtype,
                           fill_value=value)
    item = np.asarray(z.fill_value, dtype=z.dtype)
    for stored in (False, True):
        ref = np.full((90, 70), item, dtype=z.dtype)
        if stored:
            z[3:6, 2:4] = ref[3:6, 2:4] = np.zeros((3, 2), dtype=z.dtype)
        with zarrx.config.set(threads=threads):
            for sel in [np.s_[...], np.s_[1:89, 3:67], np.s_[::2, 5], np.s_[None, 80:2:-3]]:
                got = z[sel]
                assert got.dtype == ref.dtype and got.tobytes() == ref[sel].tobytes(), sel
            idx = [0, 4, 4, 88, 30]
            assert z.oindex[idx, ::3].tobytes() == ref[idx][:, ::3].tobytes()


def test_large_reads_of_missing_chunks_take_few_store_calls():
    # 256 missing chunks of 256 KiB (windows of 4 chunks with threads, 16 without): the
    # windows read while none is stored grow, so the read makes a few store calls, not one per
    # window (before: 64 with threads, 16 without)
    from zarrx.store.counting import CountingStore
    store = CountingStore(MemoryStore())
    z = zarrx.create_array(store, shape=(512, 65536), chunks=(32, 2048), dtype="f4",
                           fill_value=np.nan)
    for threads in (1, 2):
        store.counts.clear()
        with zarrx.config.set(threads=threads):
            got = z[:256]
        assert np.isnan(got).all()
        assert store.counts["get"] == 256
        assert store.counts["get_many"] <= 8, store.counts
