"""Adversarial inputs for the newest kernels, meant for the sanitized build too (``make
sanitize``): batch zstd encoding (``compress_many`` and the codecs' ``encode_many``), copies
between outer products of index arrays, the fill kernel and writes of small chunks through
the batch path. Each outcome equals numpy's (or the one-by-one path's) or is a zarrx error."""
from __future__ import annotations

import random

import numpy as np
import pytest

import zarrx
import zarrx.chunk_write as chunk_write
from zarrx._gather import copy_selection, fill_view
from zarrx.codecs import _zstd, _zstd_many
from zarrx.codecs.status import KernelStatus
from zarrx.errors import CodecError, ZarrError
from zarrx.store.memory import MemoryStore

MANY_CODECS = [zarrx.codecs.Zstd(level=3), zarrx.codecs.Zstd(level=-5, checksum=True),
               zarrx.codecs.Blosc(), zarrx.codecs.Gzip(level=1), zarrx.codecs.Crc32c()]


def _decoded(codec, frame: bytes, n: int) -> bytes:
    return bytes(codec.decode(frame, n, n))


def test_compress_many_matches_compress_for_any_rows_and_levels():
    rng = random.Random(1)
    for _ in range(600):
        k, n = rng.choice([0, 1, 2, 9]), rng.choice([0, 1, 7, 300])
        rows = np.frombuffer(rng.randbytes(k * n), np.uint8).reshape(k, n)
        level = rng.choice([0, 1, -1, 22, -131072, 23, -131073, 2**31, -2**63, 10**40])
        skip = None if rng.random() < .5 else \
            np.array([rng.random() < .4 for _ in range(k)], bool).view(np.uint8)
        checksum = rng.random() < .5
        try:
            got = _zstd_many.compress_many(rows, skip, level, checksum)
        except KernelStatus:
            assert not -131072 <= level <= 22
            continue
        assert len(got) == k
        for i in range(k):
            if skip is not None and skip[i]:
                assert got[i] is None
            else:
                assert got[i] == _zstd.compress(rows[i], level, checksum)
                assert _zstd.decompress(got[i], n) == rows[i].tobytes()


@pytest.mark.parametrize("codec", MANY_CODECS, ids=lambda c: repr(c))
def test_encode_many_takes_rows_of_any_layout_and_dtype(codec):
    """A 2-D array's rows are encoded as their C-order bytes, whatever its dtype and layout (the
    batch kernels took only C-contiguous uint8 rows and raised ValueError otherwise)."""
    base = np.arange(60, dtype="<u2").reshape(6, 10) * 257
    for rows in (base, np.asfortranarray(base), base[:, ::2], base[::-1], base[:, :3],
                 base.view(np.uint8)[:, 1:], np.zeros((0, 4), "f8"), np.zeros((3, 0), "u1")):
        skip = np.zeros(len(rows), bool)
        skip[::3] = True
        for flags in (None, skip, skip.tolist()):
            got = codec.encode_many(rows, flags)
            assert len(got) == len(rows)
            for i, row in enumerate(rows):
                want = np.ascontiguousarray(row).tobytes()
                if flags is not None and flags[i]:
                    assert got[i] is None
                else:
                    assert _decoded(codec, got[i], len(want)) == want


@pytest.mark.parametrize("codec", MANY_CODECS, ids=lambda c: repr(c))
def test_encode_many_refuses_skip_flags_not_one_per_buffer(codec):
    """Too few flags were zipped away silently (rows left unencoded), too many ignored, or a
    ValueError came from the batch kernel: now a CodecError naming both counts."""
    rows = np.zeros((4, 8), np.uint8)
    for bufs in (rows, list(rows)):
        for skip in (np.zeros(3, bool), np.zeros(5, bool), np.zeros((2, 2), bool)):
            with pytest.raises(CodecError, match=r"encode_many: skip holds \d+ flags .* for 4 "
                                                 r"buffers; expected one per buffer"):
                codec.encode_many(bufs, skip)
    with pytest.raises(CodecError, match="rows of object items"):
        codec.encode_many(np.empty((2, 2), object))


def _ix(arrays):
    return tuple(np.ix_(*arrays)) if arrays else ()


def test_outer_copies_read_index_arrays_at_any_address():
    """Index arrays whose items are not 8-byte aligned (a view at an odd offset) were loaded as
    aligned int64 (undefined behaviour: the sanitizers stop the process)."""
    src = np.arange(30.0).reshape(5, 6)
    raw = np.zeros(8 * 3 + 1, np.uint8)
    odd = raw[1:].view(np.int64)
    odd[:] = [4, 0, 2]
    assert odd.ctypes.data % 8
    cols = np.array([5, 1], np.int64)
    dst = np.zeros((3, 2))
    copy_selection(src, (odd.reshape(3, 1), cols.reshape(1, 2)), dst, _ix([np.arange(3),
                                                                             np.arange(2)]))
    np.testing.assert_array_equal(dst, src[np.ix_([4, 0, 2], [5, 1])])


def test_outer_copies_read_swapped_index_arrays_by_their_value():
    """A big-endian int64 index array was read in the machine's order: 2**56 (out of range,
    numpy refuses it) was taken for 1 and copied."""
    src = np.arange(4.0).reshape(2, 2)
    at = np.zeros((1, 1), np.int64)
    with pytest.raises(IndexError):
        copy_selection(src, (np.array([[1 << 56]], ">i8"), at), np.zeros((2, 2)), (at, at))
    dst = np.zeros((2, 2))
    copy_selection(src, (np.array([[1], [0]], ">i8"), np.array([[1, 0]], ">i8")), dst,
                   _ix([np.arange(2), np.arange(2)]))
    np.testing.assert_array_equal(dst, src[::-1, ::-1])


DTYPES = ["u1", ">i2", "f8", "c16", "S3", "U2", "V7", [("a", "<i4"), ("b", "u1")], "?"]


def test_outer_copies_at_the_edges_match_numpy():
    rng = random.Random(2)
    for _ in range(1500):
        nd = rng.choice([2, 2, 3, 4])
        dt = np.dtype(DTYPES[rng.randrange(len(DTYPES))])
        ss = [rng.choice([1, 2, 5]) for _ in range(nd)]
        ds = [rng.choice([1, 2, 5]) for _ in range(nd)]
        src = np.frombuffer(rng.randbytes(int(np.prod(ss)) * dt.itemsize), dt).reshape(ss)
        src = [src, np.asfortranarray(src), src[..., ::-1]][rng.randrange(3)]
        base = np.zeros([d * 2 for d in ds], dt)
        dst = [base[tuple(slice(None, d) for d in ds)], np.zeros(ds, dt, order="F"),
               base[tuple(slice(None, None, 2) for _ in ds)],
               base[tuple(slice(d - 1, None, -1) for d in ds)]][rng.randrange(4)]
        if rng.random() < .15:              # overlapping: src is a view of dst
            src = dst
            ss = ds
        counts = [rng.choice([0, 1, 1, 2, 3, 6]) if rng.random() < .97 else 0 for _ in ds]
        itype = rng.choice([np.int64, np.int64, np.int32, np.uint64, ">i8"])

        def index(size, c):
            kind = rng.choice(["any", "edge", "negative", "outside"])
            v = {"any": lambda: rng.randrange(size), "edge": lambda: rng.choice([0, size - 1]),
                 "negative": lambda: rng.randrange(-size, 0),
                 "outside": lambda: rng.choice([size, -size - 1, 2**62])}[kind]
            return np.array([v() for _ in range(c)], np.int64).astype(itype)

        ssel = _ix([index(s, c) for s, c in zip(ss, counts)])
        dsel = _ix([np.array(rng.sample(range(d), min(c, d)) + [0] * max(0, c - d), np.int64)
                    for d, c in zip(ds, counts)])
        want, got = dst.copy(), dst.copy()
        src_of_got = got if src is dst else src
        try:
            want[dsel] = (want if src is dst else src)[ssel].copy()
        except IndexError:
            with pytest.raises(IndexError):
                copy_selection(src_of_got, ssel, got, dsel)
            continue
        copy_selection(src_of_got, ssel, got, dsel)
        assert got.tobytes() == want.tobytes()


FILL_DTYPES = ["u1", "i2", "f4", "f8", "c8", "c16", "clongdouble", "S1", "S17", "U1", "U5",
               "V1", "V7", "V64", "V63", [("a", "<i4"), ("b", "u1")], "?", "f2", ">f8",
               [("x", "<i2", (2, 3))], [("p", "V3"), ("q", "<c8")]]


def test_fill_view_writes_one_item_of_any_size_into_any_view():
    rng = random.Random(3)
    for i in range(1500):
        dt = np.dtype(FILL_DTYPES[i % len(FILL_DTYPES)])
        shape = [rng.choice([0, 1, 2, 3, 7, 40]) for _ in range(rng.choice([0, 1, 2, 3, 5]))]
        if np.prod(shape) > 20000:
            shape[0] = 1
        layout = rng.randrange(5)
        a = np.zeros(shape, dt, order="F" if layout == 1 else "C")
        if layout == 2 and shape:
            a = np.zeros([s * 2 for s in shape], dt)[tuple(slice(None, None, 2) for _ in shape)]
        elif layout == 3 and shape:
            a = a[..., ::-1].T
        elif layout == 4 and shape:         # empty along one axis, huge along the others
            a = np.zeros([0] + [1 << 40 // len(shape)] * (len(shape) - 1), dt)
        value = rng.randbytes(dt.itemsize)
        want = a.copy()
        if want.size:
            want.reshape(-1).view(np.uint8).reshape(want.size, -1)[:] = np.frombuffer(value,
                                                                                      np.uint8)
        fill_view(a, [value, bytearray(value), np.frombuffer(value, np.uint8)][i % 3])
        assert a.tobytes() == want.tobytes()
        for bad in (value + b"\0", value[:-1], memoryview(value + value)[::2] if
                    dt.itemsize > 1 else "x", 1.5):
            with pytest.raises(ZarrError):
                fill_view(a, bad)


def _stored(batched: bool, monkeypatch, shape, chunks, dtype, fill, data, sel, codecs):
    if not batched:
        monkeypatch.setattr(chunk_write, "_batches", lambda *a, **k: False)
    store = MemoryStore()
    z = zarrx.create_array(store, name="a", shape=shape, chunks=chunks, dtype=dtype,
                           fill_value=fill, **codecs)
    z[sel] = data[sel]
    monkeypatch.undo()
    return {k: bytes(store.get(k)) for k in store.list_prefix("")}, z[:]


@pytest.mark.parametrize("chunk_bytes", [8, 4096, (64 << 10) - 8, 64 << 10])
def test_small_chunk_batches_around_their_limits_store_what_one_by_one_does(monkeypatch,
                                                                           chunk_bytes):
    rng = np.random.default_rng(chunk_bytes)
    citems = chunk_bytes // 8
    per_batch = (4 << 20) // chunk_bytes
    for n, fill, codecs in [(1, 0.0, {}), (min(per_batch + 1, 1025), -0.0, {}),
                            (min(per_batch, 600) - 1, 1.0, {"compressors": None}),
                            (min(per_batch, 600), float("nan"),
                             {"compressors": [zarrx.codecs.Zstd(level=1),
                                              zarrx.codecs.Crc32c()]})]:
        shape = (n * citems,)
        data = rng.standard_normal(shape)
        for c in rng.integers(0, n, 3):                 # chunks all fill, -0.0 or NaN
            data[c * citems:(c + 1) * citems] = rng.choice([fill, -0.0, np.nan])
        for sel in (slice(None), slice(1, shape[0] - 1)):
            a, back_a = _stored(True, monkeypatch, shape, (citems,), "f8", fill, data, sel,
                                codecs)
            b, back_b = _stored(False, monkeypatch, shape, (citems,), "f8", fill, data, sel,
                                codecs)
            assert a == b
            assert back_a.tobytes() == back_b.tobytes()
