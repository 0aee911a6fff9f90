"""Creation arguments zarr-python users pass: what zarrx builds from them, and the clear
errors (ZarrError subclasses) for ones it cannot take."""
from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pytest

import zarrx
from zarrx.codecs import ShardingCodec
from zarrx.errors import (ArgumentError, ArgumentTypeError, DataTypeError, ReadOnlyError,
                          ZarrError)
from zarrx.store import MemoryStore

zarr = pytest.importorskip("zarr")


@pytest.mark.parametrize("shape, chunks", [((1000, 1000), (100, 100)), ((1000, 50), (100, 10)),
                                           ((10000, 10000), "auto")])
def test_shards_auto_matches_zarr_python(shape, chunks):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = zarr.create_array({}, shape=shape, chunks=chunks, shards="auto", dtype="i4")
    ours = zarrx.create_array({}, shape=shape, chunks=chunks, shards="auto", dtype="i4")
    assert (ours.chunks, ours.shards) == (theirs.chunks, theirs.shards)


@pytest.mark.parametrize("shape", [(), (0,), (10,), (10**6,), (10**8,), (10000, 10000),
                                   (3, 4, 5), (100, 200, 300), (0, 5), (123457, 17), (2**40,),
                                   (365, 720, 1440)])
@pytest.mark.parametrize("dtype", ["f8", "i1", "c16", "S10", "U7", str,
                                   [("a", "<i4"), ("b", "f8")]])
@pytest.mark.parametrize("zarr_format, shards", [(2, None), (3, None), (3, "auto")])
def test_automatic_chunks_match_zarr_python(shape, dtype, zarr_format, shards):
    kw = dict(shape=shape, dtype=dtype, zarr_format=zarr_format, shards=shards)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = zarr.create_array({}, **kw)
        ours = zarrx.create_array({}, **kw)
    assert (ours.chunks, ours.shards) == (theirs.chunks, theirs.shards)


@pytest.mark.parametrize("fn", ["create", "zeros", "open_array"])
def test_automatic_chunks_of_the_older_functions_match_zarr_python(fn):
    kw = dict(shape=(5000, 3000), dtype="i2")
    if fn == "open_array":
        kw["mode"] = "w"
    assert getattr(zarrx, fn)(store={}, **kw).chunks == getattr(zarr, fn)(store={}, **kw).chunks


def test_nested_sharding_serializer_creates_a_nested_array(tmp_path):
    a = np.arange(144, dtype="i4").reshape(12, 12)
    z = zarrx.create_array(tmp_path, shape=a.shape, dtype="i4", chunks=(6, 6),
                           serializer=ShardingCodec(chunk_shape=(3, 3),
                                                    codecs=[ShardingCodec(chunk_shape=(1, 3))]))
    z[...] = a
    outer = json.loads((tmp_path / "zarr.json").read_text())["codecs"]
    assert [c["name"] for c in outer] == ["sharding_indexed"]
    assert outer[0]["configuration"]["chunk_shape"] == [3, 3]
    inner = outer[0]["configuration"]["codecs"]
    assert [c["name"] for c in inner] == ["sharding_indexed"]
    assert inner[0]["configuration"]["chunk_shape"] == [1, 3]
    np.testing.assert_array_equal(zarr.open_array(tmp_path, mode="r")[...], a)
    np.testing.assert_array_equal(zarrx.open_array(tmp_path, mode="r")[3:9, 2:11], a[3:9, 2:11])


@pytest.mark.parametrize("kind", ["object", "dict"])
def test_a_sharding_serializer_of_a_0d_array_has_an_empty_chunk_shape(tmp_path, kind):
    """The inner chunks of a 0-d array's shards have the shape (), as tensorstore creates them;
    ShardingCodec(chunk_shape=()) was refused ("expected a tuple of positive integers")."""
    ts = pytest.importorskip("tensorstore", reason="tensorstore reads the array back")
    serializer = ShardingCodec(chunk_shape=(), index_location="start") if kind == "object" \
        else {"name": "sharding_indexed", "configuration": {"chunk_shape": [],
                                                           "index_location": "start"}}
    z = zarrx.create_array(tmp_path, shape=(), dtype="f8", fill_value=np.nan,
                           serializer=serializer)
    z[...] = 2.5
    doc = json.loads((tmp_path / "zarr.json").read_text())
    assert doc["codecs"][0]["configuration"]["chunk_shape"] == []
    assert (z.chunks, z.shards) == ((), ())
    t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(tmp_path)}}).result()
    assert t.read().result() == 2.5 and zarr.open_array(tmp_path, mode="r")[...] == 2.5


@pytest.mark.parametrize("chunk_shape", ["12", 5, (True,), (0,)])
def test_a_sharding_codec_chunk_shape_that_is_not_a_tuple_of_positive_ints_is_refused(
        chunk_shape):
    with pytest.raises(ZarrError, match=re.escape(
            "zarrx.codecs.ShardingCodec chunk_shape: expected a tuple of positive integers, "
            f"found {chunk_shape!r}")):
        ShardingCodec(chunk_shape=chunk_shape)


def test_nested_sharding_with_codecs_beside_the_inner_one_is_refused():
    with pytest.raises(ArgumentError, match="an inner sharding codec may follow transposes only"):
        zarrx.create_array({}, shape=(12,), dtype="i4", chunks=(6,),
                           serializer=ShardingCodec(chunk_shape=(3,), codecs=[
                               ShardingCodec(chunk_shape=(1,)), {"name": "crc32c"}]))


def test_subarray_fields():
    dt = np.dtype([("a", "i4"), ("b", "f8", (2,))])
    x = np.zeros(3, dt)
    x["a"] = [1, 2, 3]
    x["b"] = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    store: dict = {}
    z = zarrx.create_array(store, shape=(3,), chunks=(2,), dtype=dt, zarr_format=2)
    z[...] = x
    back = zarrx.open_array(store, mode="r")
    assert back.dtype == dt
    assert back[...].tobytes() == x.tobytes()
    with pytest.raises(DataTypeError) as info:
        zarrx.create_array({}, shape=(3,), dtype=dt, zarr_format=3)
    assert "field 'b'" in str(info.value) and "zarr_format=2" in str(info.value)


@pytest.mark.parametrize("call, error, message", [
    (lambda: zarrx.create_array({}, shape=(10,), chunks=(5,), shards="x", dtype="i4"),
     ArgumentError, "create_array: shards: expected a tuple of ints"),
    (lambda: zarrx.create_array({}, shape="abc", dtype="i4"), ArgumentError,
     "shape: expected a tuple of non-negative ints, found 'abc'"),
    (lambda: zarrx.create_array({}, shape=(10,), chunks="foo", dtype="i4"), ArgumentError,
     "chunks: expected a tuple of positive ints or 'auto', found 'foo'"),
    (lambda: zarrx.create_array({}, shape=(10,), name=5, dtype="i4"), ArgumentTypeError,
     "create_array: name: expected a str, found int 5"),
    (lambda: zarrx.zeros_like(5), ArgumentTypeError, "*_like: expected an array"),
    (lambda: zarrx.empty_like(None), ArgumentTypeError, "*_like: expected an array"),
    (lambda: zarrx.array([[1], [1, 2]]), ArgumentError, "array: data is not an array"),
    (lambda: zarrx.array(None), ArgumentTypeError, "array: data: expected an array"),
    (lambda: zarrx.group({}).tree(level="x"), ArgumentTypeError,
     "tree: level: expected an int or None, found str 'x'"),
    (lambda: zarrx.create((3,), synchronizer=None), ArgumentTypeError,
     "create: unexpected keyword argument 'synchronizer'"),
    (lambda: zarrx.zeros((3,), mode="r"), ReadOnlyError, "zeros: mode 'r' opens read-only"),
    (lambda: zarrx.open({}, path=5), ArgumentTypeError, "open: path: expected a str, found int 5"),
    (lambda: zarrx.open_array({}, path=b"a"), ArgumentTypeError,
     "open_array: path: expected a str, found bytes b'a'"),
    (lambda: zarrx.open_group({}, path=("a",)), ArgumentTypeError,
     "open_group: path: expected a str, found tuple ('a',)"),
    (lambda: zarrx.create_group({}, path=1.5), ArgumentTypeError,
     "create_group: path: expected a str, found float 1.5"),
    (lambda: zarrx.consolidate_metadata({}, path=5), ArgumentTypeError,
     "consolidate_metadata: path: expected a str, found int 5"),
    (lambda: zarrx.create_hierarchy(store={}, nodes=[1]), ArgumentTypeError,
     "create_hierarchy: nodes: expected a mapping of paths to metadata, found list"),
    (lambda: zarrx.create_array({}, shape=(10,), chunks=(5,), shards={"shape": None},
                                dtype="i4"),
     ArgumentTypeError, "create_array: shards['shape']: expected a tuple of ints, found None"),
    (lambda: zarrx.create_array({}, shape=(10,), chunks=(5,), shards={"shape": "10"},
                                dtype="i4"),
     ArgumentTypeError, "create_array: shards['shape']: expected a tuple of ints, found '10'"),
    (lambda: zarrx.create_array({}, shape=(10,), chunks=(5,), shards={"shape": (7.5,)},
                                dtype="i4"),
     ArgumentTypeError, "create_array: shards['shape']: expected a tuple of ints, found (7.5,)"),
    (lambda: zarrx.create_array({}, shape=(10,), chunks=(5,),
                                shards={"shape": (10,), "index_location": None}, dtype="i4"),
     ArgumentError, "create_array: shards['index_location']: expected 'start' or 'end', found "
     "None"),
    (lambda: zarrx.create_array({}, shape=(10, 8), chunks=((4, 6), 4), shards=(10, 8),
                                dtype="i4"),
     ArgumentTypeError, "create_array: chunks: the inner chunks of a sharded array have one "
     "length per axis (a tuple of ints), found ((4, 6), 4)"),
    # named as the argument given, not as the metadata field it becomes
    (lambda: zarrx.create_array({}, shape=(10,), chunks=(5, 5), dtype="i4"), ArgumentError,
     "chunks: expected 1 chunk sizes (one per dimension of shape (10,)), found (5, 5)"),
    (lambda: zarrx.create_array({}, shape=(10, 4), chunks=(5,), dtype="i4", zarr_format=2),
     ArgumentError,
     "chunks: expected 2 chunk sizes (one per dimension of shape (10, 4)), found (5,)"),
], ids=["shards-str", "shape-str", "chunks-str", "name-int", "like-int", "like-none",
        "array-ragged", "array-none", "tree-level", "create-unknown-keyword", "zeros-mode-r",
        "open-path-int", "open-array-path-bytes", "open-group-path-tuple", "create-group-path-float",
        "consolidate-path-int", "hierarchy-nodes-list", "shard-shape-none", "shard-shape-str",
        "shard-shape-float", "shard-index-location-none", "rectilinear-inner-chunks",
        "chunks-longer", "chunks-shorter-v2"])
def test_bad_arguments_raise_zarr_errors(call, error, message):
    with pytest.raises(error) as info:
        call()
    assert isinstance(info.value, ZarrError)
    assert str(info.value).startswith(message)


@pytest.mark.parametrize("kw, message", [
    (dict(filters=[{"name": "numcodecs.packbits"}]),
     "create_array filters[0]: packbits needs a bool data type, found float32"),
    (dict(filters=[{"name": "numcodecs.delta", "configuration": {"dtype": "<f4"}},
                   {"name": "numcodecs.packbits"}]),
     "create_array filters[1]: packbits needs a bool data type, found float32"),
    (dict(filters=[{"name": "numcodecs.packbits"}], shards=(4, 4)),
     "create_array filters[0]: packbits needs a bool data type, found float32"),
    (dict(serializer={"name": "vlen-utf8"}),
     "create_array serializer: vlen-utf8 encodes variable-length (object) chunks, found data "
     "type float32"),
    (dict(zarr_format=2, filters=[{"id": "packbits"}]),
     "create_array filters[0]: packbits needs a bool data type, found float32"),
], ids=["v3-filter", "v3-second-filter", "v3-sharded-filter", "v3-serializer", "v2-filter"])
def test_a_codec_that_cannot_take_the_data_is_named_by_its_argument(kw, message):
    with pytest.raises(ZarrError) as info:
        zarrx.create_array({}, shape=(8, 8), chunks=(2, 2), dtype="f4", **kw)
    assert str(info.value) == message


@pytest.mark.parametrize("chunks, expected", [(-1, (60, 40)), ((30, -1), (30, 40)),
                                             ((None, 7), (60, 7)), (100, (100, 100))])
def test_minus_one_chunks_are_whole_axes(chunks, expected):
    assert zarrx.create_array({}, shape=(60, 40), dtype="i4", chunks=chunks).chunks == expected


@pytest.mark.parametrize("chunks", [0, -2, (0, 5), (4, -3)])
def test_chunks_that_are_not_positive_are_argument_errors(chunks):
    with pytest.raises(ArgumentError) as info:
        zarrx.create_array({}, shape=(60, 40), dtype="i4", chunks=chunks)
    assert str(info.value) == (f"chunks: expected positive ints (-1 or None for a whole axis, "
                               f"0 on an axis of length 0), found {chunks!r} for shape (60, 40)")


def test_like_takes_a_nested_list():
    z = zarrx.zeros_like([[1, 2, 3]])
    assert z.shape == (1, 3) and z.dtype == np.dtype(int)


@pytest.mark.parametrize("dtype, shape", [(("f4", (2,)), "(2,)"), ("(1,2)f4", "(1, 2)")])
def test_subarray_dtypes_are_refused_naming_the_type(dtype, shape):
    with pytest.raises(DataTypeError, match=rf"is a subarray type \(float32 of shape "
                                            rf"{re.escape(shape)}\)"):
        zarrx.create_array({}, shape=(3,), dtype=dtype)


@pytest.mark.parametrize("shape, chunks", [((2**61,), (2**40,)),
                                           ((2**31, 2**31), (2**21, 2**21))])
def test_reading_more_than_memory_holds_is_an_argument_error(shape, chunks):
    """(In chunks few enough for one call: a read of more chunks is refused by their count
    first, see tests/test_refused_selections.py.)"""
    z = zarrx.create_array({}, shape=shape, chunks=chunks, dtype="f4")
    with pytest.raises(ArgumentError, match=r"does not fit in memory; read it in parts"):
        z[...]


def test_writing_a_value_over_more_bytes_than_numpy_can_view_says_so():
    """A scalar broadcasts to any shape, but not to a view of 2**63 bytes or more: the error
    says the selection is too large, not that the value's shape does not fit."""
    z = zarrx.create_array({}, shape=(2**40, 2**20), chunks=(2**20, 2**10), dtype="f8")
    with pytest.raises(ArgumentError) as info:
        z[...] = 1.5
    assert str(info.value) == ("/: the selection of shape (1099511627776, 1048576) "
                               "(9223372036854775808 bytes of float64) is too large to write "
                               "in one call; write it in parts")
    with pytest.raises(ArgumentError) as info:
        z[:3, :3] = np.ones(4)
    assert str(info.value) == "/: value of shape (4,) cannot be broadcast to the selection " \
                              "shape (3, 3)"


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("names", [["x"], [], ["x", "y", "z"]])
def test_dimension_names_need_one_per_axis_in_both_formats(zarr_format, names):
    store: dict = {}
    with pytest.raises(zarrx.MetadataError) as info:
        zarrx.create_array(store, shape=(2, 2), dtype="i4", zarr_format=zarr_format,
                           dimension_names=names)
    assert str(info.value) == ("array metadata dimension_names: expected 2 names (one per "
                               f"dimension), found {len(names)} names")
    assert store == {}                                   # nothing written


def test_a_v2_dimension_name_of_none_is_refused_as_xarray_could_not_read_it():
    store: dict = {}
    with pytest.raises(zarrx.MetadataError) as info:
        zarrx.create_array(store, shape=(2, 2), dtype="i4", zarr_format=2,
                           dimension_names=["x", None])
    assert str(info.value) == (
        "array metadata dimension_names: expected a name for every axis of a Zarr v2 array "
        "(stored as the _ARRAY_DIMENSIONS attribute, which holds strings only), found "
        "['x', None]")
    assert store == {}
    z = zarrx.create_array(store, shape=(2, 2), dtype="i4", zarr_format=2,
                           dimension_names=["x", "y"])
    assert z.attrs["_ARRAY_DIMENSIONS"] == ["x", "y"]
    assert zarrx.create_array({}, shape=(2, 2), dtype="i4", zarr_format=3,
                              dimension_names=["x", None]).metadata.dimension_names == ("x", None)


@pytest.mark.parametrize("kw", [dict(write_empty_chunks="yes"),
                                dict(write_empty_chunks=np.array([True, False])),
                                dict(config={"write_empty_chunks": "yes"})],
                         ids=["str", "array", "config-str"])
def test_a_write_empty_chunks_that_is_not_a_bool_is_refused_before_anything_is_written(kw):
    store = MemoryStore()
    with pytest.raises(ArgumentTypeError) as info:
        zarrx.create_array(store, shape=(4,), dtype="u2", **kw)
    assert str(info.value).startswith("create_array: write_empty_chunks: expected True or "
                                      "False, found ")
    assert list(store.list_prefix("")) == []


def test_a_mode_that_is_not_a_str_is_an_argument_error():
    with pytest.raises(ArgumentError, match=r"^open_array: mode: expected one of r, r\+, a, w, "
                                            r"w-, found array\(\[1, 2\]\)$"):
        zarrx.open_array(MemoryStore(), mode=np.array([1, 2]))


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("how", ["create_array", "group.create_array", "group.create_group",
                                 "open_group", "group.move"])
def test_node_names_utf8_cannot_encode_are_refused(how, zarr_format):
    # a lone surrogate (what os.fsdecode makes of bytes that are not UTF-8) in a node name:
    # before, a memory store took it, and consolidated metadata wrote it into its UTF-8 JSON
    store = MemoryStore()
    g = zarrx.open_group(store, mode="w", zarr_format=zarr_format)
    g.create_array("ok", shape=(1,), dtype="i1")
    calls = {
        "create_array": lambda: zarrx.create_array(store, name="a/x\udcff", shape=(1,),
                                                   dtype="i1", zarr_format=zarr_format),
        "group.create_array": lambda: g.create_array("x\udcff", shape=(1,), dtype="i1"),
        "group.create_group": lambda: g.create_group("a/\ud800"),
        "open_group": lambda: zarrx.open_group(store, path="\ud800/b", mode="a",
                                               zarr_format=zarr_format),
        "group.move": lambda: g.move("ok", "x\udcff"),
    }
    with pytest.raises(ArgumentError, match=re.escape("expected node names that UTF-8 can "
                                                      "encode (no lone surrogates), found ")):
        calls[how]()
    assert [name for name, _ in g.members()] == ["ok"]
    assert sorted(store.list_prefix("")) == sorted(
        ["zarr.json", "ok/zarr.json"] if zarr_format == 3 else [".zgroup", "ok/.zarray"])


@pytest.mark.parametrize("chunks, shown", [((2.0,), "(2.0,)"), ((2, "a"), "(2, 'a')"),
                                           (("x",), "('x',)")])
def test_create_names_the_chunks_given_when_fewer_than_axes_are_refused(chunks, shown):
    # fewer sizes than axes are padded with whole axes only when they are sizes
    with pytest.raises(zarrx.errors.ArgumentTypeError,
                       match=re.escape(f"chunks: expected a tuple of positive ints, found "
                                       f"{shown}")):
        zarrx.create((3, 4), chunks=chunks, store={})
    assert zarrx.create((3, 4), chunks=(2,), store={}).chunks == (2, 4)
