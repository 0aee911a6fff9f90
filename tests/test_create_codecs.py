"""create_array's codec arguments: checked before anything is written, by the same validator
that checks stored documents and codec objects, and written complete."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

import zarrx
from zarrx import codecs as zc
from zarrx.codecs import _blosc
from zarrx.errors import ArgumentTypeError, CodecError, MetadataError
from zarrx.metadata import parse_v3
from zarrx.store import MemoryStore


def keys(store: MemoryStore) -> list[str]:
    return sorted(store.list_prefix(""))


def doc(store: MemoryStore, key: str) -> dict:
    return json.loads(store.get(key))


BAD = {   # id: (create_array arguments, message)
    "unknown-v3-name": (
        dict(compressors={"name": "zstdd"}),
        "create_array compressors[0]: unknown codec 'zstdd'; did you mean 'zstd'? known "
        "codecs: blosc, bytes, cast_value, crc32c, gzip, numcodecs.adler32, numcodecs.astype, "),
    "unknown-filter": (
        dict(filters=[{"name": "numcodecs.detla"}]),
        "create_array filters[0]: unknown codec 'numcodecs.detla'; did you mean "
        "'numcodecs.delta'? known codecs: "),
    "unknown-v2-id": (
        dict(compressors={"id": "zstdd", "level": 1}, zarr_format=2),
        "create_array compressors[0].id: unknown numcodecs codec id 'zstdd'; did you mean "
        "'zstd'? known numcodecs codec ids: adler32, astype, bitround, blosc, bz2, categorize, "
        "crc32, crc32c, "),
    "unknown-without-suggestion": (
        dict(compressors={"name": "brotli"}),
        "create_array compressors[0]: unknown codec 'brotli'; known codecs: blosc, "),
    "zstd-level": (
        dict(compressors={"name": "zstd", "configuration": {"level": 99}}),
        "create_array compressors[0].configuration.level: expected an integer in "
        "[-131072, 22], found 99"),
    "blosc-lzo": (
        dict(compressors={"name": "blosc", "configuration": {"cname": "lzo", "clevel": 5,
                                                             "shuffle": "shuffle"}}),
        "create_array compressors[0].configuration.cname: expected one of the blosc "
        "compressors (blosclz, lz4, lz4hc, snappy, zlib, zstd), found 'lzo'"),
    "v2-blosc-lzo": (
        dict(compressors={"id": "blosc", "cname": "lzo"}, zarr_format=2),
        "create_array compressors[0].cname: expected one of the blosc compressors (blosclz, "
        "lz4, lz4hc, snappy, zlib, zstd), found 'lzo'"),
    "gzip-level": (
        dict(compressors={"name": "gzip", "configuration": {"level": 10}}),
        "create_array compressors[0].configuration.level: expected an integer in [0, 9], "
        "found 10"),
    "misplaced": (
        dict(filters=[zc.Zstd()]),
        "create_array filters[0]: Zstd is a bytes->bytes codec; pass it in compressors=, not "
        "filters="),
    "filter-dtype": (
        dict(filters=[zc.PackBits()]),
        "create_array filters[0]: packbits needs a bool data type, found float32"),
}


REFUSED = (CodecError, MetadataError, ArgumentTypeError)   # a misplaced codec: a TypeError


@pytest.mark.parametrize("kw,msg", list(BAD.values()), ids=list(BAD))
@pytest.mark.parametrize("nested", [False, True], ids=["root", "in-group"])
def test_bad_codecs_refused_before_anything_is_written(kw, msg, nested) -> None:
    store = MemoryStore()
    if nested:
        g = zarrx.open_group(store, mode="w", zarr_format=kw.get("zarr_format", 3))
        before = keys(store)
        with pytest.raises(REFUSED, match="^" + re.escape(msg)):
            g.create_array("a/b/x", shape=(10,), chunks=(5,), dtype="float32", **kw)
        assert keys(store) == before
    else:
        with pytest.raises(REFUSED, match="^" + re.escape(msg)):
            zarrx.create_array(store, name="x", shape=(10,), chunks=(5,), dtype="float32", **kw)
        assert keys(store) == []


def test_unknown_codec_is_a_codec_error() -> None:
    with pytest.raises(CodecError):
        zarrx.create_array(MemoryStore(), shape=(4,), compressors={"name": "zstdd"})


def test_one_validator_for_documents_objects_and_create() -> None:
    """The gzip level and the zstd level read the same wherever they are checked."""
    tail = "level: expected an integer in [0, 9], found -1"
    with pytest.raises(CodecError, match=re.escape(tail)):
        zc.Gzip(level=-1)
    with pytest.raises(CodecError, match=re.escape(f"configuration.{tail}")):
        zarrx.create_array(MemoryStore(), shape=(4,), compressors={"name": "gzip",
                                                                   "configuration": {"level": -1}})
    document = {"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "int8",
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
                "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
                "codecs": [{"name": "bytes"}, {"name": "gzip", "configuration": {"level": -1}}]}
    with pytest.raises(MetadataError, match=re.escape(f"x/zarr.json codecs[1].configuration."
                                                      f"{tail}")):
        parse_v3(document, "x/zarr.json")


def test_v2_compressor_stays_the_compressor_and_filters_stay_filters() -> None:
    store = MemoryStore()
    zarrx.create_array(store, name="a", shape=(8,), chunks=(4,), dtype="<i4", zarr_format=2,
                       filters=[{"id": "shuffle", "elementsize": 4}],
                       compressors={"id": "crc32c"})
    z = doc(store, "a/.zarray")
    assert z["filters"] == [{"id": "shuffle", "elementsize": 4}]
    assert z["compressor"] == {"id": "crc32c"}
    a = zarrx.open_array(store, path="a", mode="r+")
    a[:] = np.arange(8)
    assert a[:].tolist() == list(range(8))


def test_numcodecs_objects_and_dicts_as_arguments() -> None:
    numcodecs = pytest.importorskip("numcodecs")
    store = MemoryStore()
    zarrx.create_array(store, name="v3", shape=(8,), dtype="<i4",
                       compressors=numcodecs.Zstd(level=2), filters=[numcodecs.Delta("<i4")])
    assert doc(store, "v3/zarr.json")["codecs"] == [
        {"name": "numcodecs.delta", "configuration": {"dtype": "<i4", "astype": "<i4"}},
        {"name": "bytes", "configuration": {"endian": "little"}},
        {"name": "zstd", "configuration": {"level": 2, "checksum": False}}]
    store = MemoryStore()
    zarrx.create_array(store, name="v2", shape=(8,), dtype="<i4", zarr_format=2,
                       compressors=numcodecs.Blosc("lz4", 5, numcodecs.Blosc.AUTOSHUFFLE))
    assert doc(store, "v2/.zarray")["compressor"] == {"id": "blosc", "cname": "lz4", "clevel": 5,
                                                      "shuffle": -1, "blocksize": 0}


def test_written_configurations_are_complete() -> None:
    """Fields a reader needs are written even when the codec object leaves them to the chunk:
    blosc's typesize (tensorstore requires it), a filter's dtype (numcodecs requires it); a
    filter's astype left unset is left out in v3, as zarr-python leaves it out, and written in
    v2, as numcodecs writes it."""
    store = MemoryStore()
    zarrx.create_array(store, name="a", shape=(8,), dtype="<i2", filters=[zc.Delta()],
                       compressors=[zc.Blosc(cname="lz4"), zc.Crc32c()])
    assert doc(store, "a/zarr.json")["codecs"] == [
        {"name": "numcodecs.delta", "configuration": {"dtype": "<i2"}},
        {"name": "bytes", "configuration": {"endian": "little"}},
        {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle",
                                            "typesize": 2, "blocksize": 0}},
        {"name": "crc32c"}]
    zarrx.create_array(store, name="auto", shape=(8,), dtype="<f8",
                       compressors=zc.Blosc(cname="zstd", shuffle=-1))      # automatic shuffle
    assert doc(store, "auto/zarr.json")["codecs"][1] == {
        "name": "blosc", "configuration": {"cname": "zstd", "clevel": 5, "shuffle": "shuffle",
                                           "typesize": 8, "blocksize": 0}}
    store = MemoryStore()
    zarrx.create_array(store, name="b", shape=(8,), dtype="<f8", zarr_format=2,
                       filters=[zc.Quantize(digits=3)], compressors=zc.Zstd())
    z = doc(store, "b/.zarray")
    assert z["filters"] == [{"id": "quantize", "digits": 3, "dtype": "<f8", "astype": "<f8"}]
    assert z["compressor"] == {"id": "zstd", "level": 0}
    store = MemoryStore()
    zarrx.create_array(store, name="c", shape=(4, 4), dtype="u1",
                       filters=[zc.Transpose("F")], compressors=None)
    assert doc(store, "c/zarr.json")["codecs"] == [
        {"name": "transpose", "configuration": {"order": [1, 0]}}, {"name": "bytes"}]


@pytest.mark.parametrize("fmt", [2, 3])
def test_filters_making_multi_byte_items_of_one_byte_items(fmt) -> None:
    """The serializer zarrx picks stores what the filters hand it (int16 deltas of uint8)."""
    store = MemoryStore()
    a = zarrx.create_array(store, name="a", shape=(6,), chunks=(3,), dtype="u1",
                           filters=[zc.Delta(astype="<i2")], compressors=None, zarr_format=fmt)
    a[:] = [0, 200, 3, 255, 1, 0]
    assert zarrx.open_array(store, path="a", mode="r")[:].tolist() == [0, 200, 3, 255, 1, 0]
    if fmt == 2:
        assert doc(store, "a/.zarray")["filters"] == [{"id": "delta", "dtype": "|u1",
                                                        "astype": "<i2"}]
        assert store.get("a/0") == np.array([0, 200, 59], "<i2").tobytes()   # as numcodecs
    else:
        assert doc(store, "a/zarr.json")["codecs"][1] == {"name": "bytes",
                                                           "configuration": {"endian": "little"}}


def test_v2_order_f_and_a_v3_only_codec() -> None:
    store = MemoryStore()
    with pytest.raises(MetadataError, match=re.escape(
            "array metadata filters[0]: expected a codec with a Zarr v2 (numcodecs) form, "
            "found 'transpose'")):
        zarrx.create_array(store, name="a", shape=(4, 4), dtype="i4", zarr_format=2,
                           filters=[zc.Transpose((1, 0))])
    assert keys(store) == []
    a = zarrx.create_array(store, name="a", shape=(4, 4), dtype="i4", zarr_format=2, order="F")
    assert doc(store, "a/.zarray")["order"] == "F"
    a[:] = np.arange(16).reshape(4, 4)
    assert a[1].tolist() == [4, 5, 6, 7]


@pytest.mark.parametrize("fmt", [2, 3])
def test_unknown_codec_in_a_stored_document_opens_and_fails_on_read(fmt) -> None:
    """Metadata with a codec neither zarrx nor numcodecs knows still opens (attributes, shape...); chunk I/O
    names the codec."""
    store = MemoryStore()
    a = zarrx.create_array(store, name="a", shape=(4,), chunks=(4,), dtype="<i4",
                           zarr_format=fmt, attributes={"k": 1})
    a[:] = [1, 2, 3, 4]
    if fmt == 2:
        z = doc(store, "a/.zarray")
        z["compressor"] = {"id": "zx_no_such_codec", "level": 8}
        store.set("a/.zarray", json.dumps(z).encode())
    else:
        z = doc(store, "a/zarr.json")
        z["codecs"][-1] = {"name": "numcodecs.zx_no_such_codec", "configuration": {"level": 8}}
        store.set("a/zarr.json", json.dumps(z).encode())
    b = zarrx.open_array(store, path="a", mode="r")
    assert b.attrs["k"] == 1 and b.shape == (4,)
    want = ("a/.zarray compressor.id: unknown numcodecs codec id 'zx_no_such_codec'; known numcodecs "
            "codec ids: " if fmt == 2 else
            "unknown codec 'numcodecs.zx_no_such_codec' in array 'a'; known codecs: ")
    with pytest.raises(CodecError, match="^" + re.escape(want)):
        b[:]


@pytest.mark.parametrize("field,value,want", [
    ("compressor", {"id": "nosuch"},
     "a/.zarray compressor.id: unknown numcodecs codec id 'nosuch'; known numcodecs codec ids: "),
    ("filters", [{"id": "zlib", "level": 1}, {"id": "nosuch"}],
     "a/.zarray filters[1].id: unknown numcodecs codec id 'nosuch'; known numcodecs codec ids: "),
    ("filters", [{"id": "packbits"}],
     "a/.zarray filters[0]: packbits needs a bool data type, found int32"),
])
def test_v2_codec_errors_name_the_zarray_field(field, value, want) -> None:
    """Errors found when a v2 array's chunks are first read name the .zarray field the codec
    comes from, not its place in the lowered codec list."""
    store = MemoryStore()
    zarrx.create_array(store, name="a", shape=(4,), chunks=(4,), dtype="<i4", zarr_format=2)
    z = doc(store, "a/.zarray")
    z[field] = value
    store.set("a/.zarray", json.dumps(z).encode())
    b = zarrx.open_array(store, path="a", mode="r")
    with pytest.raises(CodecError) as info:
        b[:]
    assert str(info.value).startswith(want)


def _reopened(fmt: int, codecs: list, dtype: str) -> zarrx.Array:
    """An array of 4 ``dtype`` items whose stored document lists ``codecs`` (v2: the filters
    before a zlib compressor; v3: the codec list)."""
    store = MemoryStore()
    zarrx.create_array(store, name="a", shape=(4,), chunks=(4,), dtype=dtype, zarr_format=fmt)
    key = "a/.zarray" if fmt == 2 else "a/zarr.json"
    z = doc(store, key)
    z["filters" if fmt == 2 else "codecs"] = codecs
    store.set(key, json.dumps(z).encode())
    return zarrx.open_array(store, path="a", mode="r")


_V3_BYTES = {"name": "bytes", "configuration": {"endian": "little"}}


@pytest.mark.parametrize("fmt,codecs,dtype,want", [
    (2, [{"id": "delta", "dtype": "<c16"}], "<i2",
     "a/.zarray filters[0].dtype: delta reads the bytes of a chunk as this type; expected a "
     "type whose item size divides a chunk's bytes (8 bytes of shape (4,) and type int16), "
     "found <c16"),
    (3, [{"name": "numcodecs.delta", "configuration": {"dtype": "<c16"}}, _V3_BYTES], "<i2",
     "a codecs[0].configuration.dtype: delta reads the bytes of a chunk as this type; expected "
     "a type whose item size divides a chunk's bytes (8 bytes of shape (4,) and type int16), "
     "found <c16"),
    (2, [{"id": "fixedscaleoffset", "offset": 0, "scale": 1, "dtype": "<f8"}], "<f4",
     "a/.zarray filters[0].dtype: the codec receives <f4 data, found <f8"),
    (3, [{"name": "numcodecs.fixedscaleoffset",
          "configuration": {"offset": 0, "scale": 1, "dtype": "<f8"}}, _V3_BYTES], "<f4",
     "a codecs[0].configuration.dtype: the codec receives <f4 data, found <f8"),
    (2, [{"id": "bitround", "keepbits": 11}], "<f2",
     "a/.zarray filters[0].keepbits: expected at most 10 for float16, found 11"),
    (3, [{"name": "numcodecs.bitround", "configuration": {"keepbits": 11}}, _V3_BYTES], "<f2",
     "a codecs[0].configuration.keepbits: expected at most 10 for float16, found 11"),
    (2, [{"id": "astype", "encode_dtype": "<i2", "decode_dtype": "<i8"}], "<i4",
     "a/.zarray filters[0].decode_dtype: the codec receives <i4 data, found <i8"),
    (3, [{"name": "numcodecs.astype",
          "configuration": {"encode_dtype": "<i2", "decode_dtype": "<i8"}}, _V3_BYTES], "<i4",
     "a codecs[0].configuration.decode_dtype: the codec receives <i4 data, found <i8"),
], ids=["delta-v2", "delta-v3", "fixedscaleoffset-v2", "fixedscaleoffset-v3", "bitround-v2",
        "bitround-v3", "astype-v2", "astype-v3"])
def test_codec_field_errors_name_the_field_where_the_document_has_it(fmt, codecs, dtype,
                                                                     want) -> None:
    """A v2 filter's fields sit in the filter object itself (``filters[0].dtype``); a v3
    codec's sit in its ``configuration``."""
    b = _reopened(fmt, codecs, dtype)
    with pytest.raises(CodecError) as info:
        b[:]
    assert str(info.value) == want


@pytest.mark.parametrize("doc, want", [
    ({"dtype": "|O", "fill_value": None,
      "filters": [{"id": "shuffle", "elementsize": 8}, {"id": "vlen-bytes"}]},
     "a/.zarray filters[0]: expected an array->array or array->bytes codec, found "
     "bytes->bytes codec 'shuffle' before any array->bytes codec"),
    ({"dtype": "|O", "fill_value": None, "filters": [{"id": "vlen-utf8"}, {"id": "vlen-bytes"}]},
     "a/.zarray filters[1]: expected a bytes->bytes codec after 'vlen-utf8', found a second "
     "array->bytes codec 'vlen-bytes'"),
    ({"dtype": "|O", "fill_value": None,
      "filters": [{"id": "vlen-utf8"}, {"id": "delta", "dtype": "<i4"}]},
     "a/.zarray filters[1]: expected a bytes->bytes codec after 'vlen-utf8', found "
     "array->array codec 'delta'"),
    ({"compressor": {"id": "delta", "dtype": "<i4"}},
     "a/.zarray compressor: expected a bytes->bytes codec after 'bytes', found array->array "
     "codec 'delta'"),
], ids=["bytes-filter-first", "two-object-codecs", "array-filter-after-object-codec",
        "array-codec-as-compressor"])
def test_codecs_out_of_order_in_a_v2_document_are_named_by_their_field(doc, want) -> None:
    """They were named as the v3 codec list zarrx lowers the document to (``a codecs[1]``,
    ``{"name": "numcodecs.delta", ...}``), which the document does not hold."""
    store = MemoryStore()
    zarrx.create_array(store, name="a", shape=(4,), chunks=(4,), dtype="i4", zarr_format=2)
    z = json.loads(store.get("a/.zarray"))
    z.update(doc)
    store.set("a/.zarray", json.dumps(z).encode())
    store.set("a/0", bytes(16))                  # a chunk to decode
    b = zarrx.open_array(store, path="a", mode="r")
    with pytest.raises(zarrx.MetadataError) as info:
        b[:]
    assert str(info.value) == want


@pytest.mark.parametrize("dtype, endian, expected", [
    ("<i4", "big", "the bytes codec's endian 'big' differs from the byte order of the data type "
                   "(little); a Zarr v2 array stores its byte order in the data type: pass "
                   "dtype='>i4'"),
    ("i8", "big", "the bytes codec's endian 'big' differs from the byte order of the data type "
                  "(little); a Zarr v2 array stores its byte order in the data type: pass "
                  "dtype='>i8'"),
    (">f4", "little", "the bytes codec's endian 'little' differs from the byte order of the data "
                      "type (big); a Zarr v2 array stores its byte order in the data type: pass "
                      "dtype='<f4'"),
])
def test_a_v2_serializer_byte_order_other_than_the_data_types_is_refused(dtype, endian, expected):
    """Zarr v2 keeps the byte order in the data type: a bytes serializer asking for another
    one was ignored (the array was stored in the data type's order)."""
    with pytest.raises(zarrx.ArgumentError) as info:
        zarrx.create_array(MemoryStore(), shape=(2,), dtype=dtype, zarr_format=2,
                           serializer={"name": "bytes", "configuration": {"endian": endian}})
    assert str(info.value) == f"create_array: serializer: {expected}"


def test_a_v2_serializer_agreeing_with_the_data_type_is_taken():
    store = MemoryStore()
    z = zarrx.create_array(store, shape=(2,), dtype=">i4", zarr_format=2, compressors=None,
                           serializer={"name": "bytes", "configuration": {"endian": "big"}})
    z[...] = [1, 2]
    assert store.get("0") == b"\x00\x00\x00\x01\x00\x00\x00\x02"



@pytest.mark.skipif(not _blosc.built("snappy"), reason="this c-blosc is built without snappy")
@pytest.mark.parametrize("fmt", [2, 3])
def test_blosc_snappy_when_this_c_blosc_has_it(tmp_path, fmt) -> None:
    """snappy, a blosc compressor the specs name, is written and read when the linked c-blosc
    has it, and zarr-python reads it."""
    comp = {"id": "blosc", "cname": "snappy"} if fmt == 2 else \
        {"name": "blosc", "configuration": {"cname": "snappy", "clevel": 5,
                                            "shuffle": "shuffle"}}
    path = str(tmp_path / "a.zarr")
    a = zarrx.create_array(path, shape=(50,), chunks=(20,), dtype="i4", zarr_format=fmt,
                           compressors=comp)
    a[:] = np.arange(50)
    assert zarrx.open_array(path, mode="r")[:].tolist() == list(range(50))
    zarr = pytest.importorskip("zarr")
    assert zarr.open_array(path, mode="r")[:].tolist() == list(range(50))


def test_a_blosc_compressor_this_c_blosc_lacks_opens_and_fails_on_read(monkeypatch) -> None:
    """snappy is optional in c-blosc: without it an array naming it opens and its chunks are
    refused naming the field; create_array and Blosc refuse it before anything is written."""
    store = MemoryStore()
    a = zarrx.create_array(store, name="a", shape=(4,), chunks=(4,), dtype="<i4",
                           zarr_format=2, attributes={"k": 1})
    a[:] = [1, 2, 3, 4]
    z = doc(store, "a/.zarray")
    z["compressor"] = {"id": "blosc", "cname": "snappy", "clevel": 5, "shuffle": 1}
    store.set("a/.zarray", json.dumps(z).encode())
    built = _blosc.built
    monkeypatch.setattr(_blosc, "built", lambda cname: cname != "snappy" and built(cname))
    b = zarrx.open_array(store, path="a", mode="r")
    assert b.attrs["k"] == 1 and b.shape == (4,)
    lacks = (f"compressor 'snappy' is not built into this c-blosc {_blosc.version()} (it has "
             "blosclz, lz4, lz4hc, zlib, zstd)")
    with pytest.raises(CodecError) as info:
        b[:]
    assert str(info.value) == f"a/.zarray compressor.cname: {lacks}"
    with pytest.raises(CodecError) as info:
        zarrx.create_array(MemoryStore(), shape=(4,), dtype="i4",
                           compressors={"name": "blosc", "configuration": {
                               "cname": "snappy", "clevel": 5, "shuffle": "shuffle"}})
    assert str(info.value) == f"create_array compressors[0].configuration.cname: {lacks}"
    with pytest.raises(CodecError) as info:
        zc.Blosc(cname="snappy")
    assert str(info.value) == f"zarrx.codecs.Blosc cname: {lacks}"


_LE = {"name": "bytes", "configuration": {"endian": "little"}}


def _sharding(chunk_shape: list[int], codecs: list, **more: object) -> dict:
    return {"name": "sharding_indexed",
            "configuration": {"chunk_shape": chunk_shape, "codecs": codecs, **more}}


@pytest.mark.parametrize("serializer, want", [
    (_sharding([2, 2], [{"name": "bytes", "configuration": {"endian": "middle"}}]),
     "create_array serializer.configuration.codecs[0].configuration.endian: expected 'little' "
     "or 'big', found 'middle'"),
    (_sharding([2, 2], [_LE, {"name": "zstd", "configuration": {"level": "x"}}]),
     "create_array serializer.configuration.codecs[1].configuration.level: expected an "
     "integer in [-131072, 22], found 'x'"),
    (_sharding([3, 4], [_LE]),
     "create_array serializer.configuration.chunk_shape[0]: expected a divisor of the shard "
     "size 8 along axis 0 (shard shape (8, 8)), found 3"),
    (_sharding([4, 4], [_sharding([2, 2], [_LE, {"name": "zstd",
                                                 "configuration": {"level": "x"}}])]),
     "create_array serializer.configuration.codecs[0].configuration.codecs[1].configuration."
     "level: expected an integer in [-131072, 22], found 'x'"),
    (_sharding([4, 4], [_sharding([3, 2], [_LE])]),
     "create_array serializer.configuration.codecs[0].configuration.chunk_shape[0]: expected "
     "a divisor of the shard size 4 along axis 0 (shard shape (4, 4)), found 3"),
    (_sharding([4, 4], [_sharding([2, 2], [_LE]), {"name": "zstd"}]),
     "create_array serializer.configuration.codecs: an inner sharding codec may follow "
     "transposes only (found 0 array->array codecs () and 1 bytes->bytes codecs beside it)"),
    (_sharding([2, 2], [_LE], index_codecs=[_LE, {"name": "qqq"}]),
     "create_array serializer.configuration.index_codecs[1]: unknown codec 'qqq'; known "
     "codecs: "),
], ids=["endian", "level", "chunk-shape", "nested-level", "nested-chunk-shape", "nested-beside",
        "index-codec"])
def test_errors_inside_a_sharding_serializer_name_the_field_where_it_has_it(serializer,
                                                                            want) -> None:
    """The codecs of a sharding serializer sit in its ``configuration`` (and, nested, in the
    configuration of the sharding codec inside it), as they do in the stored document."""
    store = MemoryStore()
    with pytest.raises(zarrx.ZarrError) as info:
        zarrx.create_array(store, shape=(8, 8), chunks=(8, 8), dtype="uint16",
                           serializer=serializer, compressors=None)
    if want.endswith("known codecs: "):         # the list of codecs follows
        assert str(info.value).startswith(want)
    else:
        assert str(info.value) == want
    assert keys(store) == []
