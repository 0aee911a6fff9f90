"""Arrays: round trips over dtypes x codecs x layouts, fill handling, request counts, resize,
append, out=, pickling, threads and fork."""
from __future__ import annotations

import multiprocessing
import pickle
import re
import shutil
import threading

import numpy as np
import pytest

import zarrx
from zarrx.codecs import Blosc, Crc32c, Gzip, Zstd
from zarrx.store import CountingStore, MemoryStore
from sample_data import sample

DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
          "float16", "float32", "float64", "complex64", "complex128", ">i4", "<f8", "S5", "<U3",
          "M8[s]", "m8[ms]"]
CHAINS = {
    "raw": None,
    "zstd": [Zstd(level=1)],
    "zstd-crc": [Zstd(level=0, checksum=True), Crc32c()],
    "gzip": [Gzip(level=1)],
    "blosc-lz4": [Blosc(cname="lz4", clevel=5, shuffle="shuffle")],
    "blosc-zstd-bit": [Blosc(cname="zstd", clevel=3, shuffle="bitshuffle")],
}
LAYOUTS = {
    # name: (shape, chunks, shards)
    "regular": ((20, 30), (5, 10), None),
    "ragged": ((23, 31), (5, 7), None),
    "1d": ((101,), (16,), None),
    "4d": ((3, 4, 5, 6), (2, 3, 2, 4), None),
    "0d": ((), (), None),
    "zero-size": ((0, 5), (3, 3), None),
    "sharded": ((23, 31), (4, 5), (8, 10)),
}


@pytest.mark.parametrize("fmt", [2, 3], ids=["v2", "v3"])
@pytest.mark.parametrize("layout", list(LAYOUTS), ids=list(LAYOUTS))
@pytest.mark.parametrize("chain", list(CHAINS), ids=list(CHAINS))
def test_round_trip_layouts(fmt, layout, chain):
    shape, chunks, shards = LAYOUTS[layout]
    if fmt == 2 and (shards or chain == "zstd-crc"):
        pytest.skip("v2 has no sharding and one compressor")
    store = MemoryStore()
    z = zarrx.create_array(store, shape=shape, dtype="f4", chunks=chunks, shards=shards,
                           compressors=CHAINS[chain], zarr_format=fmt, fill_value=0)
    a = sample(shape, "f4")
    z[...] = a
    b = zarrx.open_array(store, mode="r")[...]
    np.testing.assert_array_equal(b, a)


@pytest.mark.parametrize("ndim", [33, 64])
@pytest.mark.parametrize("chain, sharded, local", [("raw", False, False), ("raw", False, True),
                                                   ("zstd", False, False), ("raw", True, False),
                                                   ("zstd", True, True)])
def test_arrays_of_33_to_64_dimensions(tmp_path, ndim, chain, sharded, local):
    """Metadata allows 64 dimensions, as numpy does: every read and write path takes them
    (the copy kernels and numpy's meshgrid stopped at 32, its ravel_multi_index at 63)."""
    shape, chunks, lead = (1,) * (ndim - 2) + (4, 6), (1,) * (ndim - 2) + (2, 3), (0,) * (ndim - 2)
    store = zarrx.store.LocalStore(str(tmp_path)) if local else MemoryStore()
    z = zarrx.create_array(store, shape=shape, chunks=chunks, shards=shape if sharded else None,
                           compressors=CHAINS[chain], dtype="i4")
    a = np.arange(24, dtype="i4").reshape(shape)
    z[...] = a
    z[lead + (slice(1, 3), slice(1, 5))] = a[lead + (slice(1, 3), slice(1, 5))] = -7
    np.testing.assert_array_equal(zarrx.open_array(store, mode="r")[...], a)
    np.testing.assert_array_equal(z.oindex[lead + ([0, 3], [5, 1])],
                                  a[lead][np.ix_([0, 3], [5, 1])])
    points = tuple(np.zeros(2, int) for _ in lead) + (np.array([3, 0]), np.array([1, 5]))
    if ndim < 64:
        np.testing.assert_array_equal(z.vindex[points], a[lead][[3, 0], [1, 5]])
        return
    with pytest.raises(zarrx.IndexingError) as info:      # numpy's own limit
        z.vindex[points]
    assert str(info.value) == ("coordinate selection: expected an array of at most 63 dimensions "
                               "(numpy indexes with at most 63 index arrays), found 64")


@pytest.mark.parametrize("fmt", [2, 3], ids=["v2", "v3"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_round_trip_dtypes(fmt, dtype):
    store = MemoryStore()
    z = zarrx.create_array(store, shape=(9, 7), dtype=dtype, chunks=(4, 3), zarr_format=fmt)
    a = sample((9, 7), dtype)
    z[...] = a
    z2 = zarrx.open_array(store, mode="r")
    b = z2[...]
    assert b.dtype == np.dtype(dtype).newbyteorder("=") or b.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(b, a)
    np.testing.assert_array_equal(z2[2:7, 1:6], a[2:7, 1:6])


@pytest.mark.parametrize("fmt", [2, 3], ids=["v2", "v3"])
def test_strings(fmt):
    store = MemoryStore()
    z = zarrx.create_array(store, shape=(5,), dtype=str, chunks=(2,), zarr_format=fmt)
    vals = np.array(["a", "", "héllo wörld", "x" * 300, "日本"], dtype=object)
    z[...] = vals
    got = zarrx.open_array(store, mode="r")[...]
    assert list(got) == list(vals)


def test_missing_chunks_read_fill_without_decode():
    inner = MemoryStore()
    z = zarrx.create_array(inner, shape=(10, 10), dtype="i2", chunks=(5, 5), fill_value=-7)
    np.testing.assert_array_equal(z[...], np.full((10, 10), -7, "i2"))
    assert z.nchunks_initialized == 0


@pytest.mark.parametrize("digits", [30, 5000])
def test_a_stored_key_with_a_coordinate_too_long_for_a_grid_is_no_chunk(digits):
    store = MemoryStore()
    z = zarrx.create_array(store, name="a", shape=(4,), dtype="i4", chunks=(2,))
    z[:] = 1
    stored = z.nbytes_stored()
    store.set("a/c/" + "9" * digits, b"xx")
    assert z.nchunks_initialized == 2 and z.nbytes_stored() == stored
    assert [(f.kind, f.key) for f in zarrx.check(store).findings] == \
        [("orphaned", "a/c/" + "9" * digits)]


@pytest.mark.parametrize("fill", [np.nan, 0.0, -2.5], ids=["nan", "zero", "neg"])
@pytest.mark.parametrize("compressors", [None, "auto", [Crc32c()]], ids=["raw", "zstd", "crc32c"])
def test_empty_chunks_not_stored_and_deleted(compressors, fill):
    store = MemoryStore()
    z = zarrx.create_array(store, shape=(10, 10), dtype="f8", chunks=(5, 5), fill_value=fill,
                           compressors=compressors)
    src = np.full((10, 10), fill)
    z[...] = src.T            # a strided source: raw chunks gather and test in one pass
    assert z.nchunks_initialized == 0
    z[...] = fill
    assert z.nchunks_initialized == 0
    z[0, 0] = 1.0
    assert z.nchunks_initialized == 1
    z[0, 0] = fill
    assert z.nchunks_initialized == 0
    z2 = zarrx.open_array(store, mode="r+", write_empty_chunks=True)
    z2[...] = src.T
    assert z2.nchunks_initialized == 4
    np.testing.assert_array_equal(z2[...], src)


def test_aligned_writes_never_read_partial_writes_do():
    inner = MemoryStore()
    z = zarrx.create_array(inner, shape=(20, 20), dtype="u4", chunks=(10, 10), fill_value=0)
    store = CountingStore(inner)
    z = zarrx.open_array(store, mode="r+")
    store.reset()
    z[0:10, 0:20] = 5          # two whole chunks
    assert store.counts.get("get", 0) == 0
    assert store.counts["set"] == 2
    store.reset()
    z[0:5, 0:5] = 1            # a part of one chunk: read, modify, write
    assert store.counts["get"] == 1 and store.counts["set"] == 1
    np.testing.assert_array_equal(z[0:5, 0:5], 1)
    np.testing.assert_array_equal(z[5:10, 0:20], 5)


def test_border_chunks_hold_fill_value():
    store = MemoryStore()
    z = zarrx.create_array(store, shape=(5, 5), dtype="i4", chunks=(4, 4), fill_value=9,
                           compressors=None)
    z[...] = np.arange(25, dtype="i4").reshape(5, 5)
    raw = np.frombuffer(store.get("c/1/1"), "<i4").reshape(4, 4)
    assert raw[0, 0] == 24 and (raw.ravel()[1:] == 9).all()


def test_scalar_broadcast_and_selections():
    z = zarrx.create_array(MemoryStore(), shape=(6, 8), dtype="i8", chunks=(4, 3), fill_value=0)
    a = np.zeros((6, 8), "i8")
    z[1:5, ::3] = 7; a[1:5, ::3] = 7
    z.oindex[[0, 5], [1, 2, 7]] = 3; a[np.ix_([0, 5], [1, 2, 7])] = 3
    z.vindex[[1, 2], [6, 0]] = [8, 9]; a[[1, 2], [6, 0]] = [8, 9]
    m = a > 5
    z[m] = -1; a[m] = -1
    np.testing.assert_array_equal(z[...], a)
    np.testing.assert_array_equal(z[::-1, ::-2], a[::-1, ::-2])
    np.testing.assert_array_equal(z.blocks[1, 2], a[4:8, 6:9])
    assert z[-1, -1] == a[-1, -1]
    with pytest.raises(IndexError):
        z[6, 0]
    with pytest.raises(zarrx.IndexingError):
        z[0, 0, 0]


def test_orthogonal_reorder_of_whole_chunks():
    z = zarrx.create_array(MemoryStore(), shape=(4, 6), dtype="i4", chunks=(1, 6))
    a = np.arange(24, dtype="i4").reshape(4, 6)
    z[...] = a
    np.testing.assert_array_equal(z.oindex[[1, 0], :], a[[1, 0], :])
    np.testing.assert_array_equal(z.oindex[[3, 3, 0], ::-1], a[[3, 3, 0], ::-1])


def test_read_into_out():
    z = zarrx.create_array(MemoryStore(), shape=(16, 16), dtype="f4", chunks=(4, 16))
    a = sample((16, 16), "f4")
    z[...] = a
    out = np.empty((8, 16), "f4")
    res = z.get_basic_selection(np.s_[4:12], out=out)
    assert res is out
    np.testing.assert_array_equal(out, a[4:12])
    out2 = np.empty((2, 3), "f4")
    z.get_orthogonal_selection(([1, 9], [0, 5, 15]), out=out2)
    np.testing.assert_array_equal(out2, a[np.ix_([1, 9], [0, 5, 15])])
    with pytest.raises(zarrx.ZarrError, match="out= expected shape"):
        z.read(np.s_[0:2], out=np.empty((3, 16), "f4"))


@pytest.mark.parametrize("layout", ["F", "reversed"])
def test_coordinate_read_into_an_out_not_in_c_order(layout):
    """A coordinate selection of two or more result dimensions fills an ``out`` in Fortran
    order or with negative strides; its cells were read into a flattened copy of it and lost."""
    z = zarrx.create_array(MemoryStore(), shape=(3, 4), dtype="i4", chunks=(2, 2))
    a = np.arange(12, dtype="i4").reshape(3, 4)
    z[...] = a
    rows, cols = np.array([[0, 2], [1, 2]]), np.array([[3, 0], [1, 1]])
    out = np.zeros((2, 2), "i4", order="F") if layout == "F" else np.zeros((2, 2), "i4")[:, ::-1]
    assert z.get_coordinate_selection((rows, cols), out=out) is out
    assert out.tolist() == a[rows, cols].tolist()


@pytest.mark.parametrize("fmt", [2, 3], ids=["v2", "v3"])
def test_resize_and_append(fmt):
    store = MemoryStore()
    z = zarrx.create_array(store, shape=(10, 10), dtype="i4", chunks=(3, 3), zarr_format=fmt,
                           fill_value=0)
    a = np.arange(100, dtype="i4").reshape(10, 10)
    z[...] = a
    z.resize((5, 12))
    assert z.shape == (5, 12)
    np.testing.assert_array_equal(z[:, :10], a[:5])
    np.testing.assert_array_equal(z[:, 10:], 0)
    assert z.nchunks_initialized == 8   # rows 0..5 -> 2 chunk rows x 4 chunk cols
    z2 = zarrx.open_array(store, mode="r+")
    assert z2.shape == (5, 12)
    z2.append(np.ones((2, 12), "i4"), axis=0)
    assert z2.shape == (7, 12)
    np.testing.assert_array_equal(z2[5:], 1)


@pytest.mark.parametrize("axis", ["x", 0.5, None, True])
def test_append_axis_must_be_an_integer(axis):
    z = zarrx.create_array(MemoryStore(), shape=(2,), dtype="i4", chunks=(2,))
    with pytest.raises(zarrx.ArgumentTypeError, match=re.escape(
            f"/: append axis: expected an integer, found {axis!r}")):
        z.append(np.zeros(2, "i4"), axis=axis)
    assert z.shape == (2,)
    assert z.append(np.ones(1, "i4"), axis=np.int64(0)) == (3,)


@pytest.mark.parametrize("fmt,shards", [(2, None), (3, None), (3, (4, 6))],
                         ids=["v2", "v3", "v3-sharded"])
@pytest.mark.parametrize("compressors", [None, "auto"], ids=["raw", "compressed"])
@pytest.mark.parametrize("small", [(6,), (5, 4), (0, 9), (7, 0), (0, 0)])
def test_growing_after_a_shrink_reads_the_fill_value(fmt, shards, compressors, small):
    """Nothing outside the smaller shape survives a shrink, not even in the chunks (and
    shards) straddling its edge: growing back reads the fill value everywhere outside it."""
    small = small * 2 if len(small) == 1 else small
    store = MemoryStore()
    z = zarrx.create_array(store, shape=(10, 12), dtype="i4", chunks=(2, 3), shards=shards,
                           zarr_format=fmt, fill_value=-1, compressors=compressors)
    a = np.arange(120, dtype="i4").reshape(10, 12)
    z[...] = a
    z.resize(small)
    np.testing.assert_array_equal(z[...], a[:small[0], :small[1]])
    zarrx.open_array(store, mode="r+").resize((10, 12))
    expected = np.full((10, 12), -1, "i4")
    expected[:small[0], :small[1]] = a[:small[0], :small[1]]
    np.testing.assert_array_equal(zarrx.open_array(store, mode="r")[...], expected)


def test_a_shrink_keeps_no_chunk_outside_the_shape_in_a_shard():
    """Inner chunks of a boundary shard wholly outside the smaller shape leave the shard; the
    one straddling its edge stays, cleared beyond it."""
    z = zarrx.create_array(MemoryStore(), shape=(8,), dtype="u1", chunks=(2,), shards=(8,),
                           fill_value=0)
    z[...] = 9
    z.resize(3)
    assert sorted(z._io.source.list_chunks()) == [(0,), (1,)]
    z.resize(8)
    np.testing.assert_array_equal(z[...], [9, 9, 9, 0, 0, 0, 0, 0])


@pytest.mark.parametrize("write_empty", [False, True])
def test_a_shrink_stores_no_chunk_of_only_fill(write_empty):
    """A boundary chunk holding only the fill value inside the smaller shape is deleted, and
    a missing one is not made, whatever write_empty_chunks says."""
    store = MemoryStore()
    z = zarrx.create_array(store, shape=(4, 8), dtype="i4", chunks=(2, 4), fill_value=0,
                           config={"write_empty_chunks": write_empty})
    z[:, 4:] = 5
    z[2, 4] = 0             # chunk (1, 1) holds only fill inside the shape (3, 5)
    z[0, 0] = 1
    z.resize((3, 5))        # chunk (1, 0) straddles it too, but is missing
    assert sorted(store.list_prefix("c/")) == ["c/0/0", "c/0/1"]
    z.resize((1, 4))
    assert sorted(store.list_prefix("c/")) == ["c/0/0"]
    z.resize((4, 8))
    expected = np.zeros((4, 8), "i4")
    expected[0, 0] = 1
    np.testing.assert_array_equal(z[...], expected)


def test_info_reads_no_chunk():
    inner = MemoryStore()
    z = zarrx.create_array(inner, shape=(64, 64), dtype="<i4", chunks=(16, 16), compressors=None)
    z[...] = 7
    store = CountingStore(inner)
    z = zarrx.open_array(store, mode="r")
    store.reset()
    text = z.info
    assert "Stored size   : 16.0 KiB (16384 B)" in text
    assert store.counts["get"] == 0 and z.nbytes_stored() == 16384


def test_info_and_properties():
    z = zarrx.create_array(MemoryStore(), shape=(64, 64), dtype="f4", chunks=(16, 16),
                           shards=(32, 32), dimension_names=("y", "x"))
    z[...] = 1
    assert z.chunks == (16, 16) and z.shards == (32, 32)
    text = z.info
    assert "Shape" in text and "(64, 64)" in text and "Shard shape" in text and "Ratio" in text



def test_info_of_a_zero_dimensional_sharded_array():
    z = zarrx.create_array(MemoryStore(), shape=(), dtype="i4", shards=())
    z[...] = 5
    assert z.chunks == () and z.shards == ()
    text = z.info_complete()
    assert "Shard shape   : ()" in text and "Shards stored : 1 of 1" in text

@pytest.mark.parametrize("fmt", [2, 3])
def test_unpickling_sends_no_request_and_keeps_what_the_handle_saw(tmp_path, fmt):
    """Arrays and groups pickle with their metadata, as zarr-python's do: a copy is made with
    no read (a worker whose store cannot be read fails in its first read, where a process
    pool can report it) and sees the node as the handle did."""
    root = tmp_path / "g.zarr"
    g = zarrx.open_group(str(root), mode="w", zarr_format=fmt)
    z = g.create_array("a", shape=(4,), chunks=(2,), dtype="i2", attributes={"u": "K"})
    z[...] = 7
    blobs = pickle.dumps(z), pickle.dumps(g)
    shutil.rmtree(root)                               # nothing left to read
    z2, g2 = map(pickle.loads, blobs)
    assert (z2.shape, z2.chunks, z2.dtype, z2.attrs.asdict()) == ((4,), (2,), "i2", {"u": "K"})
    assert z2.metadata == z.metadata and g2.metadata == g.metadata and z2.read_only is False
    np.testing.assert_array_equal(z2[...], [0, 0, 0, 0])     # the chunks are gone: fill


def test_pickle_and_threads_share_for_reads():
    store = MemoryStore()
    z = zarrx.create_array(store, shape=(64, 64), dtype="f8", chunks=(8, 8))
    a = sample((64, 64), "f8")
    z[...] = a
    z2 = pickle.loads(pickle.dumps(z))
    np.testing.assert_array_equal(z2[...], a)
    errors = []

    def reader(i):
        try:
            for _ in range(5):
                np.testing.assert_array_equal(z[i:i + 20, :], a[i:i + 20, :])
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    ts = [threading.Thread(target=reader, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors


def test_threads_one_and_many_agree():
    z = zarrx.create_array(MemoryStore(), shape=(128, 128), dtype="f4", chunks=(16, 16))
    a = sample((128, 128), "f4")
    with zarrx.config.set(threads=1):
        z[...] = a
        one = z[...]
    with zarrx.config.set(threads=4):
        many = z[...]
        z[...] = a[::-1]
    np.testing.assert_array_equal(one, a)
    np.testing.assert_array_equal(many, a)
    np.testing.assert_array_equal(z[...], a[::-1])


def _child_read(path, q):
    import zarrx as zx
    q.put(float(zx.open_array(path, mode="r")[...].sum()))


def test_fork_after_pool_use(tmp_path):
    p = str(tmp_path / "f.zarr")
    z = zarrx.create_array(p, shape=(64, 64), dtype="f8", chunks=(8, 8))
    z[...] = 1.0
    with zarrx.config.set(threads=2):
        assert z[...].sum() == 4096      # the pool exists now
        ctx = multiprocessing.get_context("fork")
        q = ctx.Queue()
        proc = ctx.Process(target=_child_read, args=(p, q))
        proc.start()
        proc.join(60)
        assert proc.exitcode == 0
        assert q.get(timeout=5) == 4096.0


def test_corrupt_chunks_name_the_stored_object():
    import re
    store = MemoryStore()
    z = zarrx.create_array(store, name="a/b", shape=(8, 8), dtype="f4", chunks=(4, 4))
    z[...] = 1.5
    store.set("a/b/c/1/0", b"garbage")
    msg = ("'a/b/c/1/0': zstd: input of 7 bytes is not a complete zstd frame: "
           "Unknown frame descriptor")
    for sel in (np.s_[...], np.s_[5, 1], np.s_[4:6, 0:2]):
        with pytest.raises(zarrx.CodecError, match=re.escape(msg)):
            z[sel]
    raw = zarrx.create_array(store, name="raw", shape=(8, 8), dtype="<f4", chunks=(4, 4),
                             compressors=None)
    raw[...] = 2
    store.set("raw/c/0/1", b"xx")
    with pytest.raises(zarrx.CodecError, match=re.escape(
            "'raw/c/0/1': expected 64 bytes for a chunk of shape (4, 4) and data type "
            "float32, found 2")):
        raw[1, 5]


def test_corrupt_inner_chunk_names_shard_and_inner_chunk():
    import re
    store = MemoryStore()
    z = zarrx.create_array(store, name="sh", shape=(8, 8), dtype="f4", chunks=(2, 2),
                           shards=(4, 4))
    z[...] = 3
    blob = bytearray(store.get("sh/c/0/0"))
    blob[5] ^= 0xFF
    store.set("sh/c/0/0", bytes(blob))
    with pytest.raises(zarrx.CodecError, match=re.escape("'sh/c/0/0' inner chunk 'c/0/0': zstd:")):
        zarrx.open_array(store, path="sh", mode="r")[...]


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_corrupt_chunk_error_surfaces_from_worker_threads(threads):
    store = MemoryStore()
    z = zarrx.create_array(store, shape=(64, 64), dtype="f4", chunks=(4, 4))
    z[...] = 1.0
    store.set("c/13/7", b"garbage")
    with zarrx.config.set(threads=threads):
        with pytest.raises(zarrx.CodecError, match="'c/13/7': zstd"):
            z[...]
        np.testing.assert_array_equal(z[:52, :], 1.0)     # the pool is still usable


def test_config_write_empty_chunks_is_the_default():
    store = MemoryStore()
    z = zarrx.create_array(store, shape=(8,), dtype="i4", chunks=(4,), fill_value=0)
    z[...] = 0
    assert [k for k in store.list_prefix("") if "/" in k or k.startswith("c")] == []
    with zarrx.config.set(write_empty_chunks=True):
        z[...] = 0
        assert sorted(store.list_prefix("c")) == ["c/0", "c/1"]
    explicit = zarrx.create_array(MemoryStore(), shape=(8,), dtype="i4", chunks=(4,),
                                  fill_value=0, write_empty_chunks=False)
    with zarrx.config.set(write_empty_chunks=True):
        explicit[...] = 0                      # the array's own setting wins
    assert list(explicit.store.list_prefix("c")) == []


def test_chunks_of_a_rectilinear_grid_names_the_alternative():
    import re
    z = zarrx.create_array(MemoryStore(), shape=(5,), dtype="i4", chunks=((2, 3),))
    with pytest.raises(zarrx.ZarrError, match=re.escape(
            "a rectilinear chunk grid has no single chunk shape: use "
            "metadata.chunk_grid.chunk_sizes")):
        z.chunks
    assert z.metadata.chunk_grid.chunk_sizes == ((2, 3),)


def test_huge_declared_chunk_is_a_zarr_error_not_a_memory_error():
    """A 13-byte zstd frame stored under a declared 2^40-byte chunk: reading part of it is a
    CodecError naming the size, never a MemoryError."""
    import numcodecs

    store = MemoryStore()
    z = zarrx.create_array(store, shape=(2**38,), dtype="f4", chunks=(2**38,),
                           compressors=zarrx.codecs.Zstd(level=1))
    store.set("c/0", numcodecs.Zstd().encode(b"\x00" * 16))
    with pytest.raises(zarrx.ZarrError) as info:
        z[0:10]
    assert not isinstance(info.value, MemoryError)
    assert "1099511627776" in str(info.value)
