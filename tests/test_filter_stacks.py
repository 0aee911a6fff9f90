"""Element-wise filters encode a stack of chunks at once (``encode_stack``) for batch writes of
small chunks: each chunk's items must be what encoding it alone gives, byte for byte, and a
write of many small chunks through such filters makes no Python call per chunk (counted,
never timed)."""
from __future__ import annotations

import numpy as np
import pytest

import zarrx
from zarrx import batch_merge, batch_write
from zarrx.store import MemoryStore

from call_counts import calls_made

C = zarrx.codecs
INTS = ["<i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8", ">i2", ">u4", ">i8"]
FLOATS = ["<f2", "<f4", "<f8", ">f2", ">f4", ">f8"]


def _chunks(dtype, seed, k=12, shape=(5, 7)):
    """``k`` chunks of ``shape`` of ``dtype``: small values, values at the type's limits, and
    for floats NaN, infinities and huge values, some chunks all one value."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "f":
        a = rng.standard_normal((k, *shape)) * 10.0 ** rng.integers(-3, 30, (k, 1, 1))
        m = rng.random(a.shape)
        a[m < 0.05] = np.nan
        a[(m > 0.05) & (m < 0.1)] = np.inf
        a[(m > 0.1) & (m < 0.15)] = -np.inf
        with np.errstate(over="ignore"):
            a = a.astype(dt)
    else:
        info = np.iinfo(dt)
        a = rng.integers(0, 100, (k, *shape)).astype(dt)
        a[1] = rng.integers(int(info.min), int(info.max), shape, dtype=dt.newbyteorder("="),
                            endpoint=True)
        a[2].flat[::3] = info.max
        a[3].flat[::4] = info.min
    a[0] = a[0].flat[0]
    return a


def _each(codec, chunks):
    return [np.ascontiguousarray(codec.encode(c)) for c in chunks]


def _assert_same(codec, chunks):
    with np.errstate(all="ignore"):
        got = codec.encode_stack(chunks)
        want = _each(codec, chunks)
    if got is NotImplemented:
        return False
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype and g.shape == w.shape, i
        assert np.ascontiguousarray(g).tobytes() == w.tobytes(), f"chunk {i}"
    return True


def _bound(codec, dtype):
    return codec.bind(np.dtype(dtype).newbyteorder("="), (5, 7))


@pytest.mark.parametrize("dtype", INTS + FLOATS)
@pytest.mark.parametrize("offset,scale", [(0, 1), (3, 10), (-7, -2), (1.5, 0.5), (1000, 100),
                                          (2 ** 62, 3), (-(2 ** 63), 1), (5, 2 ** 40)])
@pytest.mark.parametrize("astype", [None, "i1", "u2", "i4", "i8", "u8", "f2", "f4", "f8"])
def test_fixedscaleoffset_stacks_encode_each_chunk_as_alone(dtype, offset, scale, astype):
    codec = _bound(C.FixedScaleOffset(offset=offset, scale=scale, astype=astype), dtype)
    chunks = _chunks(dtype, hash((dtype, offset, scale, astype)) % 1000)
    stacked = _assert_same(codec, chunks)
    # in int64 alone for every chunk (not near the limits), into a float type: stacked
    exact = np.dtype(dtype).kind == "f" or type(offset) is not int or \
        np.dtype(dtype).itemsize < 4 and abs(offset) < 2 ** 40 and abs(scale) < 2 ** 20
    if exact and astype in (None, "f4", "f8") and (astype or np.dtype(dtype).kind == "f"):
        assert stacked


@pytest.mark.parametrize("codec", [
    C.FixedScaleOffset(offset=1.5, scale=10, astype="i2"),
    C.FixedScaleOffset(offset=-3, scale=100, astype="u4"),
    C.AsType(encode_dtype="i1"),
    C.AsType(encode_dtype="u8")], ids=repr)
@pytest.mark.parametrize("dtype", FLOATS)
def test_floats_to_integers_are_stacked_in_range_only(codec, dtype):
    """Floats cast to an integer type: stacked while every value lands in the type's range;
    NaN, infinities or values out of range keep the chunk-by-chunk cast (numpy's cast of
    those depends on where an item lies in the array)."""
    codec = _bound(codec, dtype)
    chunks = (np.random.default_rng(1).random((12, 5, 7)) * 10).astype(dtype)
    assert _assert_same(codec, chunks)
    for bad in (np.nan, np.inf, -np.inf, -1e4 if codec.name.endswith("astype") else -1e30):
        spoilt = chunks.copy()
        with np.errstate(over="ignore"):
            spoilt[7, 1, 2] = bad
        assert not _assert_same(codec, spoilt), bad


def test_fixedscaleoffset_stacks_of_chunks_taking_different_arithmetic_are_refused():
    """A chunk small enough for int64 products next to one that needs float64: the stack
    would take float64 for both, so it is not encoded at once."""
    codec = _bound(C.FixedScaleOffset(offset=0, scale=2 ** 40, astype="f8"), "<i8")
    chunks = np.ones((2, 5, 7), dtype="<i8")
    chunks[1, 0, 0] = 2 ** 40
    assert codec.encode_stack(chunks) is NotImplemented
    assert codec.encode_stack(chunks[:1]) is not NotImplemented


@pytest.mark.parametrize("dtype", INTS + FLOATS)
@pytest.mark.parametrize("encode", ["i1", "u1", "i2", "u4", "i8", "u8", "f2", "f4", "f8"])
def test_astype_stacks_encode_each_chunk_as_alone(dtype, encode):
    codec = _bound(C.AsType(encode_dtype=encode), dtype)
    stacked = _assert_same(codec, _chunks(dtype, 3))
    assert stacked or np.dtype(dtype).kind == "f" and np.dtype(encode).kind in "iu"


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("digits", [0, 1, 3, 6])
@pytest.mark.parametrize("astype", [None, "f2", "f4", "f8"])
def test_quantize_stacks_encode_each_chunk_as_alone(dtype, digits, astype):
    codec = _bound(C.Quantize(digits=digits, astype=astype), dtype)
    assert _assert_same(codec, _chunks(dtype, digits))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("keepbits", [0, 1, 5, 10])
def test_bitround_stacks_encode_each_chunk_as_alone(dtype, keepbits):
    assert _assert_same(C.BitRound(keepbits=keepbits), _chunks(dtype, keepbits))


@pytest.mark.parametrize("shape", [(5, 7), (8,), (3, 3, 3), (1,)])
def test_packbits_stacks_encode_each_chunk_as_alone(shape):
    chunks = np.random.default_rng(2).random((6, *shape)) < 0.5
    assert _assert_same(C.PackBits(), chunks)


def test_categorize_stacks_encode_each_chunk_as_alone():
    labels = ["a", "bb", "ccc"]
    chunks = np.array(["a", "bb", "ccc", "zz", ""])[
        np.random.default_rng(4).integers(0, 5, (6, 5, 7))]
    assert _assert_same(C.Categorize(labels=labels, dtype="<U3", astype="u1"), chunks)


# name -> (dtype, fill, filters); 1,024 chunks of 16 x 16
CHAINS = {
    "fixedscaleoffset": ("f4", 0, lambda: [C.FixedScaleOffset(offset=1, scale=100, dtype="f4",
                                                              astype="i4")]),
    "fixedscaleoffset_ints": ("i2", 0, lambda: [C.FixedScaleOffset(offset=3, scale=10,
                                                                   dtype="i2", astype="i4")]),
    "astype": ("f4", 0, lambda: [C.AsType(encode_dtype="f2", decode_dtype="f4")]),
    "quantize": ("f4", 0, lambda: [C.Quantize(digits=3, dtype="f4")]),
    "bitround": ("f4", 0, lambda: [C.BitRound(keepbits=8)]),
    "quantize_delta": ("f4", 0, lambda: [C.Quantize(digits=2, dtype="f4"),
                                         C.Delta(dtype="f4")]),
    "packbits": ("bool", False, lambda: [C.PackBits()]),
    "categorize": ("<U3", "a", lambda: [C.Categorize(labels=["a", "bb", "ccc"], dtype="<U3",
                                                     astype="u1")]),
}


def _value(dtype, seed):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random((512, 512)) < 0.5
    if dtype == "<U3":
        return np.array(["a", "bb", "ccc", "zz"])[rng.integers(0, 4, (512, 512))]
    return (rng.standard_normal((512, 512)) * 100).astype(dtype)


@pytest.mark.parametrize("chain", sorted(CHAINS))
def test_a_filtered_write_of_small_chunks_makes_no_python_call_per_chunk(chain):
    """1,024 chunks through element-wise filters: fewer than 2 calls per chunk (before: each
    chunk through the filters alone, 8 to 18 calls a chunk)."""
    dtype, fill, filters = CHAINS[chain]
    a, b = _value(dtype, 1), _value(dtype, 2)
    with zarrx.config.set(threads=1):
        z = zarrx.create_array(MemoryStore(), shape=a.shape, chunks=(16, 16), dtype=dtype,
                               fill_value=fill, filters=filters(),
                               compressors=C.Zstd(level=1))
        z[...] = a                                    # plans made, chunks stored
        per_chunk = calls_made(lambda: z.__setitem__(Ellipsis, b)) / 1024
    assert per_chunk < 2, f"{per_chunk:.2f} calls per chunk"
    np.testing.assert_array_equal(z[...], zarrx.open_array(z.store, mode="r")[...])


@pytest.mark.parametrize("chain", sorted(CHAINS))
@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("empty", [False, True], ids=["skip-empty", "write-empty"])
def test_filtered_stacks_store_what_the_general_path_stores(monkeypatch, chain, fmt, empty):
    dtype, fill, filters = CHAINS[chain]
    a = _value(dtype, 3)[:96, :80]
    a[:16, :48] = fill                                # chunks all fill
    stored = {}
    for way in ("batch", "general"):
        store = MemoryStore()
        z = zarrx.create_array(store, shape=a.shape, chunks=(16, 16), dtype=dtype,
                               fill_value=fill, filters=filters(), zarr_format=fmt,
                               write_empty_chunks=empty, compressors=C.Zstd(level=1))
        with monkeypatch.context() as m:
            if way == "general":
                m.setattr(batch_write, "write_batches", lambda io, plan, value: False)
                m.setattr(batch_merge, "ENABLED", False)
            z[...] = a
            z[3:90, 5:77] = a[::-1, ::-1][3:90, 5:77]
        stored[way] = {k: bytes(store.get(k)) for k in store.list_prefix("")}
    assert stored["batch"] == stored["general"]
