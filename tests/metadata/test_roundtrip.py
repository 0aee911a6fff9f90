"""parse -> serialise gives back the same JSON values, for documents of both formats."""
from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from zarrx.metadata import (ArrayMeta, GroupMeta, dumps, parse_array_v2, parse_group_v2,
                            parse_v3, parse_zmetadata, serialize_v2, serialize_v3,
                            serialize_zmetadata)


def v3(**over):
    doc = {"zarr_format": 3, "node_type": "array", "shape": [10, 6], "data_type": "float32",
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 3]}},
           "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
           "fill_value": 0.0, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
           "attributes": {}}
    doc.update(over)
    return {k: v for k, v in doc.items() if v is not ...}


def v2(**over):
    doc = {"zarr_format": 2, "shape": [10, 6], "chunks": [4, 3], "dtype": "<f4",
           "compressor": None, "fill_value": 0.0, "order": "C", "filters": None}
    doc.update(over)
    return {k: v for k, v in doc.items() if v is not ...}


BYTES1 = [{"name": "bytes"}]
SHARD = {"name": "sharding_indexed", "configuration": {
    "chunk_shape": [2, 3], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
    "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
    "index_location": "end"}}
DT = {"name": "numpy.datetime64", "configuration": {"unit": "ns", "scale_factor": 1}}
TD = {"name": "numpy.timedelta64", "configuration": {"unit": "s", "scale_factor": 10}}
STRUCT = {"name": "structured", "configuration": {"fields": [["a", "int32"], ["b", "float64"]]}}

V3_DOCS = {
    "float32-zero": v3(),
    "float32-nan": v3(fill_value="NaN"),
    "float32-nan-payload": v3(fill_value="0x7fc00001"),
    "float32-snan": v3(fill_value="0x7f800001"),
    "float32-inf": v3(fill_value="Infinity"),
    "float32-neg-inf": v3(fill_value="-Infinity"),
    "float32-neg-zero": v3(fill_value=-0.0),
    "float32-hex-one": v3(fill_value="0x3f800000"),
    "float64-tiny": v3(data_type="float64", fill_value=5e-324),
    "float64-hex-nan": v3(data_type="float64", fill_value="0x7ff8000000000001"),
    "float16": v3(data_type="float16", fill_value=65504.0),
    "float16-hex": v3(data_type="float16", fill_value="0x7e01"),
    "complex64": v3(data_type="complex64", fill_value=[1.5, "NaN"]),
    "complex128": v3(data_type="complex128", fill_value=["-Infinity", "0x7ff8000000000001"]),
    "int64-min": v3(data_type="int64", fill_value=-9223372036854775808),
    "int64-max": v3(data_type="int64", fill_value=9223372036854775807),
    "uint64-max": v3(data_type="uint64", fill_value=18446744073709551615),
    "int8": v3(data_type="int8", fill_value=-128, codecs=BYTES1),
    "uint8": v3(data_type="uint8", fill_value=255, codecs=BYTES1),
    "int16-big": v3(data_type="int16", fill_value=7,
                    codecs=[{"name": "bytes", "configuration": {"endian": "big"}}]),
    "uint32": v3(data_type="uint32", fill_value=4294967295),
    "bool": v3(data_type="bool", fill_value=True, codecs=BYTES1),
    "raw-r16": v3(data_type="r16", fill_value=[0, 255], codecs=BYTES1),
    "string": v3(data_type="string", fill_value="", codecs=[{"name": "vlen-utf8",
                                                             "configuration": {}}]),
    "string-unicode": v3(data_type="string", fill_value="h\u00e9llo \U0001f600",
                         codecs=[{"name": "vlen-utf8"}]),
    "bytes": v3(data_type="bytes", fill_value="YWI=", codecs=[{"name": "vlen-bytes"}]),
    "variable-length-bytes": v3(data_type="variable_length_bytes", fill_value="",
                                codecs=[{"name": "vlen-bytes", "configuration": {}}]),
    "datetime64": v3(data_type=DT, fill_value=-9223372036854775808),
    "datetime64-nat-string": v3(data_type=DT, fill_value="NaT"),
    "timedelta64": v3(data_type=TD, fill_value=42),
    "fixed-utf32": v3(data_type={"name": "fixed_length_utf32", "configuration":
                                 {"length_bytes": 12}}, fill_value="ab"),
    "null-terminated": v3(data_type={"name": "null_terminated_bytes", "configuration":
                                     {"length_bytes": 5}}, fill_value="YWI=", codecs=BYTES1),
    "raw-bytes": v3(data_type={"name": "raw_bytes", "configuration": {"length_bytes": 2}},
                    fill_value="AQI=", codecs=BYTES1),
    "structured": v3(data_type=STRUCT, fill_value="AAAAAAAAAAAAAAAA", codecs=BYTES1),
    "bfloat16": v3(data_type="bfloat16", fill_value="0x7fc1"),
    "float8": v3(data_type="float8_e4m3fn", fill_value=1.5, codecs=BYTES1),
    "int4": v3(data_type="int4", fill_value=-8, codecs=BYTES1),
    "dotted-keys": v3(chunk_key_encoding={"name": "default", "configuration": {"separator": "."}}),
    "v2-keys": v3(chunk_key_encoding={"name": "v2", "configuration": {"separator": "."}}),
    "v2-keys-slash": v3(chunk_key_encoding={"name": "v2", "configuration": {"separator": "/"}}),
    "tensorstore-keys": v3(chunk_key_encoding={"name": "default"}),
    "string-keys": v3(chunk_key_encoding="default"),
    "no-attributes": v3(attributes=...),
    "attributes": v3(attributes={"units": "K", "nested": {"a": [1, 2.5, None, True]}}),
    "dimension-names": v3(dimension_names=["y", None]),
    "dimension-names-null": v3(dimension_names=None),
    "storage-transformers": v3(storage_transformers=[]),
    "zero-d": v3(shape=[], chunk_grid={"name": "regular", "configuration": {"chunk_shape": []}}),
    "empty-axis": v3(shape=[0, 6]),
    "zstd-gzip-crc": v3(codecs=[{"name": "bytes", "configuration": {"endian": "little"}},
                                {"name": "zstd", "configuration": {"level": 3, "checksum": True}},
                                {"name": "gzip", "configuration": {"level": 9}},
                                {"name": "crc32c"}]),
    "blosc": v3(codecs=[{"name": "bytes", "configuration": {"endian": "little"}},
                        {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5,
                         "shuffle": "shuffle", "typesize": 4, "blocksize": 0}}]),
    "transpose": v3(codecs=[{"name": "transpose", "configuration": {"order": [1, 0]}},
                            {"name": "bytes", "configuration": {"endian": "little"}}]),
    "numcodecs-ext": v3(codecs=[{"name": "numcodecs.delta", "configuration": {"dtype": "<f4"}},
                                {"name": "bytes", "configuration": {"endian": "little"}}]),
    "sharded": v3(chunk_grid={"name": "regular", "configuration": {"chunk_shape": [4, 6]}},
                  codecs=[SHARD]),
    "sharded-start-nocrc": v3(chunk_grid={"name": "regular", "configuration":
                                          {"chunk_shape": [4, 6]}}, codecs=[{
                                              "name": "sharding_indexed", "configuration": {
                                                  "chunk_shape": [2, 2], "codecs": BYTES1 and [
                                                      {"name": "bytes"}],
                                                  "index_codecs": [{"name": "bytes", "configuration":
                                                                    {"endian": "little"}}],
                                                  "index_location": "start"}}]),
    "sharded-nested": v3(chunk_grid={"name": "regular", "configuration": {"chunk_shape": [8, 6]}},
                         codecs=[{"name": "sharding_indexed", "configuration": {
                             "chunk_shape": [4, 6], "codecs": [SHARD],
                             "index_codecs": [{"name": "bytes", "configuration":
                                               {"endian": "little"}}]}}]),
    "transpose-then-shard": v3(chunk_grid={"name": "regular", "configuration":
                                           {"chunk_shape": [4, 6]}},
                               codecs=[{"name": "transpose", "configuration": {"order": [1, 0]}},
                                       {"name": "sharding_indexed", "configuration": {
                                           "chunk_shape": [3, 2], "codecs": SHARD["configuration"]
                                           ["codecs"], "index_codecs": SHARD["configuration"]
                                           ["index_codecs"]}}]),
    "rectilinear": v3(chunk_grid={"name": "rectilinear", "configuration": {
        "kind": "inline", "chunk_shapes": [[[2, 3], 4], 4]}}),
    "rectilinear-overflow": v3(chunk_grid={"name": "rectilinear", "configuration": {
        "kind": "inline", "chunk_shapes": [[5, 5, 5], [1, 2, 3]]}}),
    "extension-field": v3(**{"my_ext": {"must_understand": False, "x": 1}}),
    "codec-must-understand-false": v3(codecs=[
        {"name": "bytes", "configuration": {"endian": "little"}},
        {"name": "my.checksum", "configuration": {}, "must_understand": False}]),
}

GROUP_V3 = {"zarr_format": 3, "node_type": "group", "attributes": {"a": 1}}
CONSOLIDATED_V3 = {
    "zarr_format": 3, "node_type": "group", "attributes": {},
    "consolidated_metadata": {"kind": "inline", "must_understand": False, "metadata": {
        "x": V3_DOCS["float32-nan"], "sub": {"zarr_format": 3, "node_type": "group",
                                             "attributes": {}, "consolidated_metadata": {
                                                 "kind": "inline", "must_understand": False,
                                                 "metadata": {}}},
        "sub/y": V3_DOCS["sharded"]}}}
V3_DOCS["group"] = GROUP_V3
V3_DOCS["group-bare"] = {"zarr_format": 3, "node_type": "group"}
V3_DOCS["group-null-consolidated"] = {**GROUP_V3, "consolidated_metadata": None}
V3_DOCS["group-consolidated"] = CONSOLIDATED_V3


@pytest.mark.parametrize("doc", V3_DOCS.values(), ids=list(V3_DOCS))
def test_v3_round_trip(doc):
    original = copy.deepcopy(doc)
    meta = parse_v3(json.dumps(doc).encode(), "a/zarr.json")
    assert doc == original                       # parsing does not mutate its input
    out = serialize_v3(meta)
    assert out == original
    assert list(out) == list(original)           # and keeps the key order
    again = parse_v3(dumps(out), "a/zarr.json")
    assert again == meta


def test_a_rectilinear_grid_written_with_fractions_is_written_back_with_integers():
    """Edge lengths written ``4.0`` (an axis' single length too) read as integers, and the
    grid is written back as read, with integers (JSON text: ``4.0 == 4`` in Python)."""
    doc = v3(chunk_grid={"name": "rectilinear", "configuration": {
        "kind": "inline", "chunk_shapes": [[[2.0, 3.0], 4.0], 4e0]}})
    meta = parse_v3(json.dumps(doc).encode(), "a/zarr.json")
    assert meta == parse_v3(json.dumps(V3_DOCS["rectilinear"]).encode(), "a/zarr.json")
    assert json.dumps(serialize_v3(meta)["chunk_grid"]) == json.dumps(
        V3_DOCS["rectilinear"]["chunk_grid"])


@pytest.mark.parametrize("doc", V3_DOCS.values(), ids=list(V3_DOCS))
def test_v3_canonical_form_is_stable(doc):
    """Without the source document, the canonical spelling parses back to the same meta."""
    import dataclasses
    meta = parse_v3(doc, "zarr.json")
    bare = dataclasses.replace(meta, json=None)
    again = parse_v3(serialize_v3(bare), "zarr.json")
    if isinstance(meta, ArrayMeta):
        from zarrx.metadata import same_fill
        assert same_fill(again.fill_value, meta.fill_value, meta.data_type)
        assert dataclasses.replace(again, fill_value=None) == dataclasses.replace(
            meta, fill_value=None)
    else:
        assert again == meta


STRUCT_V2 = [["a", "<i4"], ["b", "<f8", [2]]]
V2_DOCS = {
    "float-c": v2(),
    "float-big": v2(dtype=">f8", fill_value="NaN"),
    "float-neg-inf": v2(fill_value="-Infinity"),
    "float-null": v2(fill_value=None),
    "int64-min": v2(dtype="<i8", fill_value=-9223372036854775808),
    "uint64-max": v2(dtype="<u8", fill_value=18446744073709551615),
    "int8": v2(dtype="|i1", fill_value=-1),
    "uint8-le": v2(dtype="<u1", fill_value=1),
    "bool": v2(dtype="|b1", fill_value=True),
    "complex": v2(dtype="<c8", fill_value=[1.0, 2.0]),
    "complex-big": v2(dtype=">c16", fill_value=["NaN", "Infinity"]),
    "half": v2(dtype="<f2", fill_value=0.5),
    "datetime": v2(dtype="<M8[ns]", fill_value=-9223372036854775808),
    "timedelta": v2(dtype=">m8[s]", fill_value=0),
    "bytes-S": v2(dtype="|S5", fill_value="YWI="),
    "bytes-S-empty": v2(dtype="|S5", fill_value=""),
    "unicode": v2(dtype="<U3", fill_value="xy"),
    "unicode-big": v2(dtype=">U3", fill_value=""),
    "void": v2(dtype="|V4", fill_value="AAECAw=="),
    "structured": v2(dtype=STRUCT_V2, fill_value="AAECAwQFBgcICQoLDA0ODxAREhM="),
    "structured-null": v2(dtype=[["x", "<u2"], ["y", "|u1"]], fill_value=None),
    "object-utf8": v2(dtype="|O", fill_value=None, filters=[{"id": "vlen-utf8"}]),
    "object-bytes": v2(dtype="|O", fill_value="", filters=[{"id": "vlen-bytes"}],
                       compressor={"id": "zlib", "level": 1}),
    "order-F": v2(order="F"),
    "filters-compressor": v2(filters=[{"id": "delta", "dtype": "<f4"}],
                             compressor={"id": "blosc", "cname": "lz4", "clevel": 5,
                                         "shuffle": -1, "blocksize": 0}),
    "filters-empty-list": v2(filters=[]),
    "zstd": v2(compressor={"id": "zstd", "level": 0}),
    "separator-slash": v2(dimension_separator="/"),
    "separator-dot": v2(dimension_separator="."),
    "zero-d": v2(shape=[], chunks=[]),
    "bfloat16": v2(dtype="bfloat16", fill_value=None),
    "extra-field": v2(custom=1),
    "nan-literal": v2(fill_value=float("nan")),
}


@pytest.mark.parametrize("doc", V2_DOCS.values(), ids=list(V2_DOCS))
@pytest.mark.parametrize("attrs", [None, {"a": [1, "b"]}], ids=["no-attrs", "attrs"])
def test_v2_round_trip(doc, attrs):
    raw = json.dumps(doc).encode()
    meta = parse_array_v2(raw, None if attrs is None else json.dumps(attrs).encode(),
                          "a/.zarray")
    out = serialize_v2(meta)
    expect = json.loads(raw)
    got = out[".zarray"]
    if doc.get("fill_value") != doc.get("fill_value"):      # bare NaN is written as "NaN"
        expect["fill_value"] = "NaN"
    assert got == expect
    assert out.get(".zattrs") == attrs
    again = parse_array_v2(dumps(got), dumps(attrs) if attrs else None, "a/.zarray")
    assert again == meta


@pytest.mark.parametrize("doc", [{"zarr_format": 2}, {"zarr_format": 2, "consolidated_metadata":
                                 {"kind": "inline", "must_understand": False, "metadata": {}}}],
                         ids=["plain", "stray-consolidated"])
def test_v2_group_round_trip(doc):
    meta = parse_group_v2(json.dumps(doc), b'{"title": "t"}', ".zgroup")
    assert isinstance(meta, GroupMeta) and meta.attributes == {"title": "t"}
    assert serialize_v2(meta) == {".zgroup": doc, ".zattrs": {"title": "t"}}


def test_zmetadata_round_trip():
    doc = {"metadata": {
        ".zgroup": {"zarr_format": 2}, ".zattrs": {"a": 1},
        "x/.zarray": V2_DOCS["filters-compressor"], "x/.zattrs": {"u": "m"},
        "sub/.zgroup": {"zarr_format": 2}, "sub/.zattrs": {},
        "sub/y/.zarray": V2_DOCS["zero-d"], "sub/y/.zattrs": {}}, "zarr_consolidated_format": 1}
    entries = parse_zmetadata(json.dumps(doc).encode(), ".zmetadata")
    assert sorted(entries) == ["", "sub", "sub/y", "x"]
    assert isinstance(entries["sub/y"], ArrayMeta) and entries["x"].attributes == {"u": "m"}
    assert serialize_zmetadata(entries) == doc


def test_dumps_writes_bare_non_finite_floats_as_zarr_python_does():
    text = dumps({"a": float("nan"), "b": [float("inf"), -float("inf")], "c": np.float32(1.5),
                  "d": "\u00e9"})
    assert b'"a": NaN' in text and b"Infinity,\n    -Infinity" in text
    back = json.loads(text)
    assert back["b"] == [float("inf"), -float("inf")] and back["a"] != back["a"]
    assert (back["c"], back["d"]) == (1.5, "\u00e9")
    assert text.startswith(b'{\n  "a"') and b"\\u00e9" in text
