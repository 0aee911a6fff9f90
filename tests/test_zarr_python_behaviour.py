"""Behaviour zarrx shares with zarr-python 3, where zarrx differed without a reason: each test
calls zarrx (and zarr-python, where it has the feature and is installed) with the same
arguments."""
from __future__ import annotations

import numpy as np
import pytest

import zarrx

try:
    import zarr
except ImportError:                 # the zarrx side of each test still runs
    zarr = None


@pytest.mark.parametrize("fn", ["create_array", "zeros", "create", "open"])
@pytest.mark.parametrize("shape, chunks, want", [
    ((0,), 1000, (1000,)), ((0, 3), 5, (5, 5)), ((4, 3), 5, (5, 5)), ((4,), 5, (5,)),
    ((4, 3), -1, (4, 3)), ((4, 3), 2, (2, 2))])
def test_an_int_chunks_is_every_axis_chunk_length_as_in_zarr_python(fn, shape, chunks, want):
    """An int ``chunks=`` longer than an axis is kept, as zarr-python keeps it: an array made
    empty (``shape=(0,)``) to be grown by ``append`` gets the chunk length it asked for, not 1."""
    kw = {"mode": "w"} if fn == "open" else {}
    z = getattr(zarrx, fn)(store={}, shape=shape, chunks=chunks, dtype="i4", **kw)
    assert z.chunks == want
    if zarr is not None and (fn == "zeros" or (fn == "create_array" and len(shape) == 1)):
        assert getattr(zarr, fn)(store={}, shape=shape, chunks=chunks, dtype="i4").chunks == want


def test_an_empty_array_grown_by_append_keeps_its_chunk_length():
    z = zarrx.zeros(store={}, shape=(0,), chunks=1000, dtype="i4")
    z.append(np.arange(2500, dtype="i4"))
    assert z.chunks == (1000,) and z.nchunks == 3 and z.nchunks_initialized == 3
    assert z[...].tolist() == list(range(2500))


def test_an_int_chunks_too_long_for_a_chunk_is_refused():
    with pytest.raises(zarrx.ArgumentError, match=r"chunks: expected a positive int below "
                                                  r"2\*\*63, found 18446744073709551616"):
        zarrx.create_array({}, shape=(4,), chunks=2**64, dtype="i4")


@pytest.mark.parametrize("fmt, shards", [(2, None), (3, None), (3, (4,))],
                         ids=["v2", "v3", "v3-sharded"])
@pytest.mark.parametrize("value, found", [
    ([b"x", b"y", 1, b"z"], "int 1 (item 2 of the value)"),
    ("text", "str 'text' (item 0 of the value)"),
    (np.array(["u", "v", "w", "q"]), "str 'u' (item 0 of the value)"),
    (5, "int 5 (item 0 of the value)"),
], ids=["int-in-list", "str", "str-array", "int"])
def test_writing_other_than_bytes_to_a_bytes_array_is_a_type_error_storing_nothing(
        fmt, shards, value, found):
    """zarr-python raises a ``TypeError`` there; zarrx raised a ``CodecError`` (a
    ``ValueError``) naming a chunk, after storing the chunks before that chunk."""
    a = zarrx.create_array({}, shape=(4,), chunks=(2,), shards=shards, dtype="bytes",
                           zarr_format=fmt)
    a[:] = [b"a", b"b", b"c", b"d"]
    if fmt == 3 and zarr is not None:   # zarr-python 3.1 creates no Zarr v2 "bytes" array
        z = zarr.create_array({}, shape=(4,), chunks=(2,), dtype="bytes")
        with pytest.raises(TypeError):
            z[:] = value
    with pytest.raises(zarrx.ArgumentTypeError) as info:
        a[:] = value
    assert str(info.value) == (f"/: cannot write {found} to an array of variable-length "
                               f"bytes: expected bytes")
    assert a[:].tolist() == [b"a", b"b", b"c", b"d"]
    with pytest.raises(zarrx.ArgumentTypeError, match="item 1 of the value"):
        a.append([b"e", 6])
    assert a.shape == (4,)


def test_bytes_arrays_take_bytes_like_items_and_none():
    a = zarrx.create_array({}, shape=(4,), chunks=(2,), dtype="bytes")
    a[:] = [bytearray(b"ba"), None, np.bytes_(b"nb"), memoryview(b"mv")]
    assert a[:].tolist() == [b"ba", b"", b"nb", b"mv"]
    with pytest.raises(zarrx.ArgumentTypeError, match="cannot write int 1 .item 1 of"):
        zarrx.create_array({}, data=np.array([b"a", 1], dtype=object), dtype="bytes")


@pytest.mark.parametrize("shape, shards, want", [
    ((8,), 4, (4,)), ((8,), np.int64(4), (4,)), ((8, 8), 4, (4, 4)),
    ((8,), {"shape": 4, "index_location": "start"}, (4,))])
def test_an_int_shards_is_every_axis_shard_length(shape, shards, want):
    """zarr-python takes ``shards=4`` for a 1-d array; zarrx refused any int with a
    TypeError. An int is now every axis's shard length, as an int ``chunks=`` is."""
    a = zarrx.create_array({}, shape=shape, chunks=(2,) * len(shape), shards=shards, dtype="i4")
    a[...] = 1
    assert a.shards == want and a.chunks == (2,) * len(shape) and int(a[...].sum()) == 8 ** len(shape)
    if zarr is not None and len(shape) == 1 and not isinstance(shards, dict):
        assert zarr.create_array({}, shape=shape, chunks=(2,), shards=shards,
                                 dtype="i4").shards == want


@pytest.mark.parametrize("shards, message", [
    (True, "create_array: shards: expected a tuple of ints, {'shape': ..., 'index_location': "
           "...}, 'auto' or None, found True"),
    (3, "create_array: shards[0]=3 must be a positive multiple of chunks[0]=2 (or 0 on an "
        "axis of length 0, with positive chunks)"),
    (-2, "create_array: shards[0]=-2 must be a positive multiple of chunks[0]=2 (or 0 on an "
         "axis of length 0, with positive chunks)")])
def test_an_int_shards_that_cannot_be_a_shard_length_is_refused(shards, message):
    with pytest.raises(zarrx.ArgumentError) as info:
        zarrx.create_array({}, shape=(8,), chunks=(2,), shards=shards, dtype="i4")
    assert str(info.value) == message


@pytest.mark.parametrize("serializer", [{"name": "bytes"}, {"name": "bytes", "configuration": {}}])
def test_a_bytes_serializer_dict_without_endian_is_little_endian(serializer):
    """zarr-python's ``BytesCodec`` fills in little-endian, as zarrx's ``BytesCodec()`` does;
    the same codec given as a dict was refused for a multi-byte data type."""
    import json
    for lib in (zarr, zarrx) if zarr is not None else (zarrx,):
        store = {}
        a = lib.create_array(store, shape=(2,), dtype="i4", serializer=serializer)
        a[:] = [1, 2]
        doc = store["zarr.json"]
        doc = json.loads(doc.to_bytes() if hasattr(doc, "to_bytes") else doc)
        assert doc["codecs"][0] == {"name": "bytes", "configuration": {"endian": "little"}}
        assert a[:].tolist() == [1, 2]
    with pytest.raises(zarrx.CodecError, match=r"serializer.configuration.endian: expected "
                                               r"'little' or 'big', found None"):
        zarrx.create_array({}, shape=(2,), dtype="i4",
                           serializer={"name": "bytes", "configuration": {"endian": None}})


def _group_source():
    g = zarrx.group({})
    return g, g.create_array("src", shape=(2,), dtype="i4")


@pytest.mark.parametrize("call, message", [
    (lambda: zarrx.zeros((2,), fill_value=3), "zeros() got an unexpected keyword argument "
                                              "'fill_value'"),
    (lambda: zarrx.ones((2,), fill_value=3), "ones() got an unexpected keyword argument "
                                             "'fill_value'"),
    (lambda: zarrx.zeros_like(np.arange(2), fill_value=3),
     "zeros_like() got an unexpected keyword argument 'fill_value'"),
    (lambda: zarrx.ones_like(np.arange(2), fill_value=3),
     "ones_like() got an unexpected keyword argument 'fill_value'"),
    (lambda: zarrx.save_array({}, np.arange(2), dtype="i8"),
     "save_array() got an unexpected keyword argument 'dtype'"),
    (lambda: zarrx.save_array({}, np.arange(2), shape=(2,)),
     "save_array() got an unexpected keyword argument 'shape'"),
    (lambda: zarrx.group({}).create_array("a", shape=(2,), dtype="i4", store={}),
     "create_array() got an unexpected keyword argument 'store'"),
    (lambda: zarrx.group({}).create_array("a", shape=(2,), dtype="i4", path="b"),
     "create_array() got an unexpected keyword argument 'path'"),
    (lambda: zarrx.group({}).zeros(name="a", shape=(2,), fill_value=3),
     "zeros() got an unexpected keyword argument 'fill_value'"),
    (lambda: zarrx.group({}).ones(name="a", shape=(2,), store={}),
     "ones() got an unexpected keyword argument 'store'"),
    (lambda: zarrx.group({}).full(name="a", shape=(2,), fill_value=1, path="b"),
     "full() got an unexpected keyword argument 'path'"),
    (lambda: zarrx.group({}).empty(name="a", shape=(2,), store={}),
     "empty() got an unexpected keyword argument 'store'"),
    (lambda: _group_source()[0].zeros_like(name="a", data=_group_source()[1], fill_value=3),
     "zeros_like() got an unexpected keyword argument 'fill_value'"),
    (lambda: _group_source()[0].full_like(name="a", data=_group_source()[1], store={}),
     "full_like() got an unexpected keyword argument 'store'"),
    (lambda: zarrx.group({}).require_array("a", shape=(2,), store={}),
     "create_array() got an unexpected keyword argument 'store'"),
], ids=["zeros", "ones", "zeros_like", "ones_like", "save_array-dtype", "save_array-shape",
        "g.create_array-store", "g.create_array-path", "g.zeros", "g.ones", "g.full", "g.empty",
        "g.zeros_like", "g.full_like", "g.require_array"])
def test_a_keyword_a_function_sets_itself_is_a_type_error_naming_that_function(call, message):
    """These keywords clashed with one the function passes on itself: Python's ``TypeError``
    named a function the caller never called (``zarrx.api.create() got multiple values for
    keyword argument 'fill_value'``), or ``path=`` of a group method was ignored."""
    with pytest.raises(zarrx.ArgumentTypeError) as info:
        call()
    assert str(info.value) == message


def test_create_array_refuses_a_name_and_another_path():
    with pytest.raises(zarrx.ArgumentError, match=r"create_array: pass name= or path=, not "
                                                  r"both \(found name='x', path='y'\)"):
        zarrx.create_array({}, name="x", path="y", shape=(2,), dtype="i4")
    assert zarrx.create_array({}, name="x", path="x", shape=(2,), dtype="i4").path == "x"


def test_from_array_takes_chunks_and_shards_as_numpy_arrays_as_create_array_does():
    src = np.arange(8).reshape(2, 4)
    a = zarrx.from_array({}, data=src, chunks=np.array([1, 2]), shards=np.array([2, 4]))
    assert (a.chunks, a.shards) == ((1, 2), (2, 4)) and a[...].tolist() == src.tolist()


_PAIR = np.array([1, 2])


@pytest.mark.parametrize("call, message", [
    (lambda: zarrx.create_array({}, shape=(2,), dtype="i4", overwrite=_PAIR),
     "create_array: overwrite: expected True or False, found ndarray array([1, 2])"),
    (lambda: zarrx.create_array({}, shape=(2,), dtype="i4", data=[1, 2], write_data=_PAIR),
     "create_array: write_data: expected True or False, found ndarray array([1, 2])"),
    (lambda: zarrx.create_group({}, overwrite=_PAIR),
     "create_group: overwrite: expected True or False, found ndarray array([1, 2])"),
    (lambda: zarrx.group({}, overwrite=_PAIR),
     "group: overwrite: expected True or False, found ndarray array([1, 2])"),
    (lambda: zarrx.create((2,), overwrite=_PAIR),
     "create: overwrite: expected True or False, found ndarray array([1, 2])"),
    (lambda: zarrx.group({}).require_group("a", overwrite=_PAIR),
     "require_group: overwrite: expected True or False, found ndarray array([1, 2])"),
    (lambda: zarrx.from_array({}, data=np.arange(2), write_data=_PAIR),
     "from_array: write_data: expected True or False, found ndarray array([1, 2])"),
    (lambda: zarrx.save_array({}, np.arange(2), overwrite=_PAIR),
     "save_array: overwrite: expected True or False, found ndarray array([1, 2])"),
    (lambda: zarrx.create_array({}, shape=(2,), dtype="i4", storage_options=-1),
     "storage_options: expected a dict, found int"),
    (lambda: zarrx.open_group("memory://x", storage_options=["a"]),
     "'memory://x': storage_options: expected a dict, found list"),
], ids=["overwrite", "write_data", "create_group", "group", "create", "require_group",
        "from_array", "save_array", "storage_options-dict-store", "storage_options-url"])
def test_a_flag_or_options_of_another_kind_is_a_type_error(call, message):
    """A numpy array of several items has no truth value: these raised numpy's ``ValueError``
    (as zarr-python does), and ``storage_options=-1`` a bare ``TypeError``."""
    with pytest.raises(zarrx.ArgumentTypeError) as info:
        call()
    assert str(info.value) == message


@pytest.mark.parametrize("call", [
    lambda: zarrx.create_array({}, shape=(2,), dtype="i4", compressor=_PAIR),
    lambda: zarrx.create((2,), compressor=_PAIR),
    lambda: zarrx.create((2,), dimension_separator=_PAIR),
    lambda: zarrx.full_like(zarrx.zeros((2,)), fill_value=1, zarr_format=_PAIR),
], ids=["create_array-compressor", "create-compressor", "dimension_separator", "like-format"])
def test_numpy_arrays_where_a_name_is_expected_are_zarr_errors(call):
    with pytest.raises(zarrx.ZarrError):
        call()


@pytest.mark.parametrize("out_dtype", ["f8", "i8", "c16"])
@pytest.mark.parametrize("method, selection, shape", [
    ("get_basic_selection", slice(1, 4), (3, 5)),
    ("get_orthogonal_selection", ([0, 2], [1, 3]), (2, 2)),
    ("get_coordinate_selection", ([0, 2], [1, 3]), (2,)),
    ("get_block_selection", (0, 1), (2, 2))])
def test_reads_cast_into_an_out_of_a_dtype_holding_every_value(method, selection, shape,
                                                               out_dtype):
    """zarr-python reads into an ``out=`` of another dtype; zarrx refused any."""
    pytest.importorskip("zarr")
    from zarr.core.buffer import default_buffer_prototype
    want = None
    for lib in (zarr, zarrx):
        a = lib.create_array({}, shape=(6, 5), chunks=(2, 2), dtype="i4")
        a[...] = np.arange(30).reshape(6, 5)
        out = np.zeros(shape, out_dtype)
        buf = default_buffer_prototype().nd_buffer.from_numpy_array(out)
        getattr(a, method)(selection, out=buf if lib is zarr else out)
        got = buf.as_numpy_array() if lib is zarr else out
        assert got.dtype == np.dtype(out_dtype)
        want = got.tolist() if want is None else want
        assert got.tolist() == want


@pytest.mark.parametrize("out_dtype", ["i2", "f4", "U3"])
def test_an_out_of_a_dtype_that_would_change_values_is_refused(out_dtype):
    a = zarrx.create_array({}, shape=(6, 5), chunks=(2, 2), dtype="i4")
    with pytest.raises(zarrx.ArgumentError) as info:
        a.get_basic_selection(slice(1, 4), out=np.zeros((3, 5), out_dtype))
    assert str(info.value) == (f"/: out= expected shape (3, 5) and dtype int32 (or one it "
                               f"casts to safely), found shape (3, 5) and dtype "
                               f"{np.dtype(out_dtype)}")


@pytest.mark.parametrize("make, message", [
    (lambda c: c.ZstdCodec(level="x"),
     "zarrx.codecs.Zstd level: expected an integer in [-131072, 22], found 'x'"),
    (lambda c: c.ZstdCodec(checksum="x"), "zarrx.codecs.Zstd checksum: expected true or false, "
                                          "found 'x'"),
    (lambda c: c.GzipCodec(level=1.5), "zarrx.codecs.Gzip level: expected an integer in [0, 9], "
                                       "found 1.5"),
    (lambda c: c.BloscCodec(cname=5), "zarrx.codecs.Blosc cname: expected one of the blosc "
                                      "compressors (blosclz, lz4, lz4hc, snappy, zlib, zstd), "
                                      "found 5"),
    (lambda c: c.BytesCodec(endian=1), "zarrx.codecs.Bytes endian: expected 'little' or 'big', "
                                       "found 1"),
    (lambda c: c.ShardingCodec(chunk_shape="x"), "zarrx.codecs.ShardingCodec chunk_shape: "
                                                 "expected a tuple of positive integers, found "
                                                 "'x'"),
    (lambda c: c.ShardingCodec(chunk_shape=(2.5,)), "zarrx.codecs.ShardingCodec chunk_shape: "
                                                    "expected a tuple of positive integers, "
                                                    "found (2.5,)"),
    (lambda c: c.ShardingCodec(chunk_shape=(2,), index_location=3),
     "zarrx.codecs.ShardingCodec index_location: expected 'start' or 'end', found 3"),
], ids=["zstd-level", "zstd-checksum", "gzip-level", "blosc-cname", "bytes-endian",
        "sharding-chunk-shape", "sharding-float-chunk", "sharding-index-location"])
def test_a_codec_argument_of_another_type_is_a_type_error(make, message):
    """zarr-python's codec classes raise ``TypeError`` there; zarrx raised a ``CodecError``
    (a ``ValueError`` only), and cut a float chunk length of a sharding codec to an int."""
    if zarr is not None:
        with pytest.raises(TypeError):
            make(zarr.codecs)
    with pytest.raises(zarrx.errors.CodecArgumentTypeError) as info:
        make(zarrx.codecs)
    assert isinstance(info.value, TypeError) and isinstance(info.value, zarrx.CodecError)
    assert str(info.value) == message


@pytest.mark.parametrize("make", [lambda c: c.ZstdCodec(level=100),
                                  lambda c: c.ShardingCodec(chunk_shape=(0,)),
                                  lambda c: c.ShardingCodec(chunk_shape=(2,),
                                                            index_location="middle")],
                         ids=["zstd-level", "sharding-zero", "sharding-location"])
def test_a_codec_argument_of_the_right_type_but_no_valid_value_stays_a_value_error(make):
    with pytest.raises(zarrx.CodecError) as info:
        make(zarrx.codecs)
    assert not isinstance(info.value, TypeError)


@pytest.mark.parametrize("fn", ["create", "zeros", "open", "open_array"])
def test_chunks_false_is_one_chunk_for_a_large_array_too(fn):
    """As zarr-python's ``normalize_chunks`` documents ``False``; zarr-python 3.1's ``create``
    tests ``if chunks:`` and picks automatic chunks instead (listed in migrating.md)."""
    kw = {"mode": "w"} if fn.startswith("open") else {}
    z = getattr(zarrx, fn)(store={}, shape=(1000, 1000), dtype="f8", chunks=False, **kw)
    assert z.chunks == (1000, 1000)


@pytest.mark.parametrize("value", [None, {"a": 1}, np.array([None, "a"], dtype=object)],
                         ids=["none", "dict", "object-array"])
def test_data_of_values_zarrx_cannot_type_is_a_type_error(value):
    """zarr-python raises ``TypeError`` for ``g[name] = None``; zarrx raised an
    ``ArgumentError`` (a ``ValueError`` only). It is now both."""
    g = zarrx.group({})
    with pytest.raises(zarrx.ArgumentTypeError, match="data of numpy's object dtype holds a "
                                                      "value of type"):
        g["x"] = value
    with pytest.raises(TypeError):
        zarrx.create_array({}, data=np.asarray(value, dtype=object))
    assert "x" not in g
