"""Metadata written by zarr-python 3 and tensorstore parses, means the same, and round-trips."""
from __future__ import annotations

import json

import numcodecs
import numpy as np
import pytest

from ._oracles import ts_docs, zarr, zarr_docs, zarr_tree
from zarrx.metadata import (ArrayMeta, GroupMeta, category, parse_array_v2, parse_group_v2,
                            parse_v3, parse_zmetadata, same_fill, serialize_v2, serialize_v3,
                            serialize_zmetadata)
from zarrx.metadata.model import RegularGrid

codecs = zarr.codecs
STRUCT = [("a", "<i4"), ("b", "<f8")]
DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128", "datetime64[ns]",
          "timedelta64[10s]", "S5", "U3", "V4", STRUCT]
FILLS = [("float32", float("nan")), ("float32", -float("inf")), ("float64", -0.0),
         ("int64", -2**63), ("int64", 2**63 - 1), ("uint64", 2**64 - 1), ("complex64", 1 + 2j),
         ("complex128", complex(float("nan"), -1)), ("datetime64[s]", np.datetime64("NaT")),
         ("bool", True), ("S5", b"ab"), ("U3", "xy"), ("float16", 1.5), ("int8", -128)]


def _ids(items):
    return [str(i[0] if isinstance(i, tuple) and not isinstance(i[0], tuple) else i)
            .replace(" ", "") for i in items]


def _check_zarr(meta: ArrayMeta, arr, doc: bytes, fmt: int) -> None:
    assert meta.shape == arr.shape
    assert meta.zarr_format == fmt
    if not meta.data_type.variable:
        assert meta.data_type.numpy == arr.dtype
        assert same_fill(meta.fill_value, np.array(arr.fill_value, dtype=arr.dtype)[()],
                         meta.data_type) or (fmt == 2 and meta.fill_value is None)
    else:
        assert meta.fill_value == arr.fill_value or (fmt == 2 and meta.fill_value is None)
    assert meta.chunk_shape == arr.chunks


@pytest.mark.parametrize("dtype", DTYPES, ids=_ids(DTYPES))
@pytest.mark.parametrize("fmt", [2, 3])
def test_zarr_python_dtypes(dtype, fmt):
    docs, arr = zarr_docs(shape=(5, 6), chunks=(2, 3), dtype=dtype, zarr_format=fmt)
    if fmt == 3:
        meta = parse_v3(docs["zarr.json"], "zarr.json")
        assert serialize_v3(meta) == json.loads(docs["zarr.json"])
    else:
        meta = parse_array_v2(docs[".zarray"], docs[".zattrs"], ".zarray")
        assert serialize_v2(meta)[".zarray"] == json.loads(docs[".zarray"])
    _check_zarr(meta, arr, docs, fmt)


@pytest.mark.parametrize("dtype", ["str", "bytes"])
@pytest.mark.parametrize("fmt", [2, 3])
def test_zarr_python_variable_length(dtype, fmt):
    zdt = zarr.dtype.VariableLengthBytes() if dtype == "bytes" else dtype
    docs, arr = zarr_docs(shape=(4,), chunks=(2,), dtype=zdt, zarr_format=fmt)
    key = "zarr.json" if fmt == 3 else ".zarray"
    meta = parse_v3(docs[key], key) if fmt == 3 else parse_array_v2(docs[key], None, key)
    assert meta.data_type.variable
    assert category(meta.data_type) == ("string" if dtype == "str" else "bytes")
    a2b = [c.name for c in meta.codecs if c.name.startswith("vlen")]
    assert a2b == ["vlen-utf8" if dtype == "str" else "vlen-bytes"]
    assert (serialize_v3(meta) if fmt == 3 else serialize_v2(meta)[".zarray"]) == \
        json.loads(docs[key])


@pytest.mark.parametrize("dtype,fill", FILLS, ids=_ids(FILLS))
@pytest.mark.parametrize("fmt", [2, 3])
def test_zarr_python_fill_values(dtype, fill, fmt):
    docs, arr = zarr_docs(shape=(3,), chunks=(2,), dtype=dtype, fill_value=fill, zarr_format=fmt)
    key = "zarr.json" if fmt == 3 else ".zarray"
    meta = parse_v3(docs[key], key) if fmt == 3 else parse_array_v2(docs[key], None, key)
    _check_zarr(meta, arr, docs, fmt)
    out = serialize_v3(meta) if fmt == 3 else serialize_v2(meta)[key]
    assert out == json.loads(docs[key])


ZARR_V3_CODECS = {
    "no-compressor": dict(compressors=None),
    "gzip": dict(compressors=codecs.GzipCodec(level=3)),
    "blosc": dict(compressors=codecs.BloscCodec(cname="zstd", clevel=3, shuffle="bitshuffle")),
    "zstd-checksum": dict(compressors=codecs.ZstdCodec(level=5, checksum=True)),
    "crc32c": dict(compressors=[codecs.ZstdCodec(), codecs.Crc32cCodec()]),
    "numcodecs-checksums": dict(compressors=[codecs.CRC32(), codecs.Adler32(location="end"),
                                             codecs.Fletcher32(),
                                             codecs.JenkinsLookup3(initval=3)]),
    "big-endian": dict(serializer=codecs.BytesCodec(endian="big")),
    "transpose": dict(filters=[codecs.TransposeCodec(order=(1, 0))]),
    "sharded": dict(shards=(4, 6)),
    "sharded-start": dict(shards={"shape": (4, 6), "index_location": "start"}),
    "v2-keys": dict(chunk_key_encoding={"name": "v2", "separator": "."}),
    "default-dot-keys": dict(chunk_key_encoding={"name": "default", "separator": "."}),
    "dimension-names": dict(dimension_names=("y", None)),
    "attributes": dict(attributes={"units": "K", "list": [1, 2]}),
}


@pytest.mark.parametrize("kw", ZARR_V3_CODECS.values(), ids=list(ZARR_V3_CODECS))
def test_zarr_python_v3_codecs(kw):
    docs, arr = zarr_docs(shape=(8, 6), chunks=(2, 3), dtype="<f4", zarr_format=3, **kw)
    meta = parse_v3(docs["zarr.json"], "zarr.json")
    assert serialize_v3(meta) == json.loads(docs["zarr.json"])
    assert meta.shape == arr.shape and meta.chunk_shape == arr.chunks
    if "shards" in kw:
        assert meta.shard_levels and meta.chunk_grid == RegularGrid(arr.shards)
        assert meta.shard_levels[0].index_location == kw["shards"].get("index_location", "end") \
            if isinstance(kw["shards"], dict) else True


ZARR_V2_CODECS = {
    "zlib": dict(compressors=numcodecs.Zlib(level=1)),
    "none": dict(compressors=None),
    "checksums": dict(filters=[numcodecs.Adler32(), numcodecs.Fletcher32()],
                      compressors=numcodecs.JenkinsLookup3()),
    "crc32-end": dict(compressors=numcodecs.CRC32(location="end")),
    "delta-filter": dict(filters=[numcodecs.Delta(dtype="<f4")],
                         compressors=numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1)),
    "order-F": dict(order="F"),
    "slash-separator": dict(chunk_key_encoding={"name": "v2", "separator": "/"}),
    "attributes": dict(attributes={"title": "t"}),
}


@pytest.mark.parametrize("kw", ZARR_V2_CODECS.values(), ids=list(ZARR_V2_CODECS))
def test_zarr_python_v2_codecs(kw):
    docs, arr = zarr_docs(shape=(8, 6), chunks=(2, 3), dtype="<f4", zarr_format=2, **kw)
    meta = parse_array_v2(docs[".zarray"], docs.get(".zattrs"), ".zarray")
    out = serialize_v2(meta)
    assert out[".zarray"] == json.loads(docs[".zarray"])
    assert out.get(".zattrs", {}) == json.loads(docs.get(".zattrs", b"{}"))
    assert meta.shape == arr.shape and meta.chunk_shape == arr.chunks
    if kw.get("order") == "F":
        assert meta.codecs[0].name == "transpose"
        assert meta.codecs[0].configuration == {"order": [1, 0]}


@pytest.mark.parametrize("fmt", [2, 3])
def test_zarr_python_consolidated(fmt):
    docs = zarr_tree(fmt)
    if fmt == 3:
        root = parse_v3(docs["zarr.json"], "zarr.json")
        assert isinstance(root, GroupMeta) and root.attributes == {"title": "t"}
        assert sorted(root.consolidated) == ["measurements", "measurements/humidity",
                                             "measurements/scalar", "temperature"]
        for path, meta in root.consolidated.items():
            own = parse_v3(docs[f"{path}/zarr.json"], f"{path}/zarr.json")
            assert own == meta or (isinstance(own, GroupMeta) and own.attributes
                                   == meta.attributes)
        assert serialize_v3(root) == json.loads(docs["zarr.json"])
    else:
        entries = parse_zmetadata(docs[".zmetadata"], ".zmetadata")
        assert sorted(entries) == ["", "measurements", "measurements/humidity",
                                   "measurements/scalar", "temperature"]
        for path, meta in entries.items():
            p = f"{path}/" if path else ""
            if isinstance(meta, ArrayMeta):
                own = parse_array_v2(docs[p + ".zarray"], docs[p + ".zattrs"], p + ".zarray")
            else:
                own = parse_group_v2(docs[p + ".zgroup"], docs[p + ".zattrs"], p + ".zgroup")
            assert own.attributes == meta.attributes
        assert serialize_zmetadata(entries) == json.loads(docs[".zmetadata"])
        assert entries["measurements/scalar"].fill_value == np.complex128(1 + 2j)


TS_V3 = {
    "bool": {"data_type": "bool"},
    "int4": {"data_type": "int4"},
    "uint16-fill": {"data_type": "uint16", "fill_value": 65535},
    "int64-min": {"data_type": "int64", "fill_value": -2**63},
    "bfloat16": {"data_type": "bfloat16", "fill_value": "NaN"},
    "float8_e4m3fn": {"data_type": "float8_e4m3fn", "fill_value": 1.5},
    "float8_e5m2": {"data_type": "float8_e5m2"},
    "float32-hex-nan": {"data_type": "float32", "fill_value": "0x7fc00001"},
    "float64-neg-zero": {"data_type": "float64", "fill_value": -0.0},
    "complex64": {"data_type": "complex64", "fill_value": [1.0, "NaN"]},
    "complex128": {"data_type": "complex128"},
    "gzip": {"data_type": "float32", "codecs": [{"name": "bytes"}, {"name": "gzip"}]},
    "blosc": {"data_type": "int16", "codecs": [
        {"name": "bytes", "configuration": {"endian": "big"}},
        {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 3, "shuffle": "shuffle",
                                            "typesize": 2}}]},
    "zstd-crc32c": {"data_type": "uint32", "codecs": [
        "bytes", {"name": "zstd", "configuration": {"level": 1}}, "crc32c"]},
    "transpose": {"data_type": "int32", "codecs": [
        {"name": "transpose", "configuration": {"order": [1, 0]}}, "bytes"]},
    "sharded": {"data_type": "float32", "chunk_grid": {"name": "regular", "configuration": {
        "chunk_shape": [4, 6]}}, "codecs": [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [2, 3], "codecs": ["bytes", "zstd"],
            "index_codecs": ["bytes", "crc32c"], "index_location": "start"}}]},
    "sharded-nested": {"data_type": "uint8", "chunk_grid": {"name": "regular", "configuration": {
        "chunk_shape": [8, 6]}}, "codecs": [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [4, 6], "codecs": [{"name": "sharding_indexed", "configuration": {
                "chunk_shape": [2, 3], "codecs": ["bytes"], "index_codecs": ["bytes"]}}],
            "index_codecs": ["bytes", "crc32c"]}}]},
    "transpose-then-shard": {"data_type": "float32", "chunk_grid": {"name": "regular",
        "configuration": {"chunk_shape": [4, 6]}}, "codecs": [
            {"name": "transpose", "configuration": {"order": [1, 0]}},
            {"name": "sharding_indexed", "configuration": {
                "chunk_shape": [3, 2], "codecs": ["bytes"], "index_codecs": ["bytes"]}}]},
    "v2-keys": {"data_type": "int8", "chunk_key_encoding": {"name": "v2"}},
    "dot-keys": {"data_type": "int8", "chunk_key_encoding": {"name": "default",
                                                             "configuration": {"separator": "."}}},
    "dimension-names": {"data_type": "int8", "dimension_names": ["y", ""]},
    "attributes": {"data_type": "int8", "attributes": {"a": {"b": [1, None]}}},
}


@pytest.mark.parametrize("md", TS_V3.values(), ids=list(TS_V3))
def test_tensorstore_v3(md):
    md = {"shape": [8, 6], "chunk_grid": {"name": "regular", "configuration": {
        "chunk_shape": [2, 3]}}, **md}
    docs = ts_docs({"driver": "zarr3", "metadata": md})
    meta = parse_v3(docs["zarr.json"], "zarr.json")
    assert serialize_v3(meta) == json.loads(docs["zarr.json"])
    from ._oracles import ts
    t = ts.open({"driver": "zarr3", "kvstore": {"driver": "memory"}, "metadata": md},
                create=True).result()
    assert meta.shape == tuple(t.shape)
    assert meta.data_type.numpy == t.dtype.numpy_dtype
    assert same_fill(meta.fill_value, np.asarray(t.fill_value, t.dtype.numpy_dtype)[()],
                     meta.data_type)


TS_V2 = {
    "float32": {"dtype": "<f4", "fill_value": "NaN"},
    "float64-big": {"dtype": ">f8", "fill_value": -0.0},
    "int64-min": {"dtype": "<i8", "fill_value": -2**63},
    "uint64-max": {"dtype": "<u8", "fill_value": 2**64 - 1},
    "bool": {"dtype": "|b1", "fill_value": True},
    "complex": {"dtype": "<c16", "fill_value": [1.0, 2.0]},
    "bfloat16": {"dtype": "bfloat16"},
    "zlib-order-F": {"dtype": "<i2", "compressor": {"id": "zlib", "level": 1}, "order": "F"},
    "slash": {"dtype": "|u1", "dimension_separator": "/", "compressor": None},
    "structured": {"dtype": [["a", "<i4"], ["b", "<f8", [2]]], "fill_value": None},
}


@pytest.mark.parametrize("md", TS_V2.values(), ids=list(TS_V2))
def test_tensorstore_v2(md):
    spec = {"driver": "zarr", "metadata": {"shape": [8, 6], "chunks": [2, 3], **md}}
    if isinstance(md["dtype"], list):
        spec["field"] = "a"
    docs = ts_docs(spec)
    meta = parse_array_v2(docs[".zarray"], docs.get(".zattrs"), ".zarray")
    assert serialize_v2(meta)[".zarray"] == json.loads(docs[".zarray"])
    assert meta.shape == (8, 6) and meta.chunk_shape == (2, 3)
