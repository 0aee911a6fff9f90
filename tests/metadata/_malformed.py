"""Malformed metadata documents: (id, kind, document). Expected messages are in test_errors.py."""
from __future__ import annotations

import copy
import json
from typing import Any

GOOD_V3 = {"zarr_format": 3, "node_type": "array", "shape": [10, 6], "data_type": "float32",
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 3]}},
           "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
           "fill_value": 0.0, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
           "attributes": {}}
GOOD_V2 = {"zarr_format": 2, "shape": [10, 6], "chunks": [4, 3], "dtype": "<f4",
           "compressor": None, "fill_value": 0.0, "order": "C", "filters": None}
LE = {"name": "bytes", "configuration": {"endian": "little"}}
IDX = [LE, {"name": "crc32c"}]


def v3(**over: Any) -> dict:
    d = copy.deepcopy(GOOD_V3)
    for k, v in over.items():
        if v is ...:
            d.pop(k, None)
        else:
            d[k] = v
    return d


def v2(**over: Any) -> dict:
    d = copy.deepcopy(GOOD_V2)
    for k, v in over.items():
        if v is ...:
            d.pop(k, None)
        else:
            d[k] = v
    return d


def grid(*chunks: Any) -> dict:
    return {"name": "regular", "configuration": {"chunk_shape": list(chunks)}}


def shard(chunk_shape: list, codecs: list | None = None, index: list | None = None) -> dict:
    return {"name": "sharding_indexed", "configuration": {
        "chunk_shape": chunk_shape, "codecs": codecs or [LE], "index_codecs": index or IDX}}


def raw(text: str) -> bytes:
    return text.encode()


def nested(depth: int) -> bytes:
    return json.dumps(v3(attributes={"x": json.loads("[" * depth + "]" * depth)})).encode()


ZMETA = {"metadata": {".zgroup": {"zarr_format": 2}, "x/.zarray": GOOD_V2},
         "zarr_consolidated_format": 1}

CASES: list[tuple[str, str, Any]] = [
    # -- the JSON layer (v3 key; v2 documents go through the same loader) --
    ("bad-json", "v3", raw('{"zarr_format": 3,')),
    ("not-utf8", "v3", b'{"a": "\xff"}'),
    ("top-level-array", "v3", raw("[1, 2]")),
    ("top-level-string", "v2", raw('"zarr"')),
    ("empty-document", "v3", b""),
    ("control-character", "v3", raw('{"zarr_format": 3, "node_type": "gr\x01oup"}')),
    ("duplicate-key", "v3", raw('{"zarr_format": 3, "zarr_format": 3}')),
    ("duplicate-nested-key", "v2", raw('{"zarr_format": 2, "compressor": {"id": "a", "id": "b"}}')),
    ("nesting-bomb", "v3", b"[" * 100_000),
    ("nesting-bomb-objects", "v2", b'{"a":' * 50_000),
    ("deep-attributes", "v3", nested(128)),
    ("huge-document", "v3", None),   # built in the test (max_document_bytes() + 1)
    ("bare-nan-v3", "v3", raw(json.dumps(v3(fill_value=float("nan"))))),
    ("huge-integer-literal", "v3", raw('{"shape": [' + "9" * 5000 + "]}")),
    ("dict-with-int-keys", "v3", {"zarr_format": 3, 1: 2}),
    ("not-a-document", "v3", 3.5),
    # -- v3 header --
    ("v3-format-2", "v3", v3(zarr_format=2)),
    ("v3-format-missing", "v3", v3(zarr_format=...)),
    ("v3-format-true", "v3", v3(zarr_format=True)),
    ("v3-node-type", "v3", v3(node_type="table")),
    ("v3-node-type-missing", "v3", v3(node_type=...)),
    ("v3-missing-shape", "v3", v3(shape=...)),
    ("v3-missing-codecs", "v3", v3(codecs=...)),
    ("v3-unknown-field", "v3", v3(chunk_memory_layout="C")),
    ("v3-extension-must-understand", "v3", v3(my_ext={"must_understand": True})),
    ("v3-attributes-list", "v3", v3(attributes=[1])),
    # -- shape and grid --
    ("shape-not-list", "v3", v3(shape="10")),
    ("shape-negative", "v3", v3(shape=[-1, 6])),
    ("shape-bool", "v3", v3(shape=[True, 6])),
    ("shape-float", "v3", v3(shape=[1.5, 6])),
    ("shape-product-overflow", "v3", v3(shape=[2**40, 2**40])),
    ("shape-dimension-overflow", "v3", v3(shape=[2**64, 1])),
    ("shape-too-many-dims", "v3", v3(shape=[1] * 65)),
    ("grid-unknown", "v3", v3(chunk_grid={"name": "irregular", "configuration": {}})),
    ("grid-string", "v3", v3(chunk_grid="regular")),
    ("grid-rank-mismatch", "v3", v3(chunk_grid=grid(4))),
    ("grid-zero-chunk", "v3", v3(chunk_grid=grid(0, 3))),
    ("grid-negative-chunk", "v3", v3(chunk_grid=grid(4, -3))),
    ("grid-no-configuration", "v3", v3(chunk_grid={"name": "regular"})),
    ("grid-chunk-bytes-overflow", "v3", v3(shape=[2**62, 1], chunk_grid=grid(2**62, 1))),
    ("rectilinear-short", "v3", v3(chunk_grid={"name": "rectilinear", "configuration": {
        "kind": "inline", "chunk_shapes": [[4, 4], 3]}})),
    ("rectilinear-bad-rle", "v3", v3(chunk_grid={"name": "rectilinear", "configuration": {
        "kind": "inline", "chunk_shapes": [[[5, 0], 10], 3]}})),
    ("rectilinear-kind", "v3", v3(chunk_grid={"name": "rectilinear", "configuration": {
        "kind": "external", "chunk_shapes": [10, 6]}})),
    ("rectilinear-too-many", "v3", v3(chunk_grid={"name": "rectilinear", "configuration": {
        "kind": "inline", "chunk_shapes": [[[1, 2**30]], 6]}})),
    ("rectilinear-rank", "v3", v3(chunk_grid={"name": "rectilinear", "configuration": {
        "kind": "inline", "chunk_shapes": [10]}})),
    ("key-encoding-separator", "v3", v3(chunk_key_encoding={"name": "default",
                                                            "configuration": {"separator": "-"}})),
    ("key-encoding-name", "v3", v3(chunk_key_encoding={"name": "v4"})),
    # -- data types --
    ("dtype-unknown", "v3", v3(data_type="float128")),
    ("dtype-raw-bits", "v3", v3(data_type="r7")),
    ("dtype-object-no-name", "v3", v3(data_type={"configuration": {}})),
    ("dtype-number", "v3", v3(data_type=4)),
    ("dtype-datetime-unit", "v3", v3(data_type={"name": "numpy.datetime64", "configuration": {
        "unit": "fortnight", "scale_factor": 1}})),
    ("dtype-datetime-scale", "v3", v3(data_type={"name": "numpy.datetime64", "configuration": {
        "unit": "s", "scale_factor": 0}})),
    ("dtype-datetime-generic-scale", "v3", v3(data_type={"name": "numpy.timedelta64",
                                                         "configuration": {"unit": "generic",
                                                                           "scale_factor": 10}})),
    ("dtype-utf32-length", "v3", v3(data_type={"name": "fixed_length_utf32", "configuration": {
        "length_bytes": 5}})),
    ("dtype-structured-duplicate", "v3", v3(data_type={"name": "structured", "configuration": {
        "fields": [["a", "int8"], ["a", "int16"]]}})),
    ("dtype-core-configuration", "v3", v3(data_type={"name": "int8", "configuration": {"x": 1}})),
    ("dtype-struct-pair-field", "v3", v3(data_type={"name": "struct", "configuration": {
        "fields": [["a", "int8"]]}}, fill_value={"a": 0})),
    ("dtype-struct-field-no-type", "v3", v3(data_type={"name": "struct", "configuration": {
        "fields": [{"name": "a"}]}}, fill_value={"a": 0})),
    ("dtype-struct-variable-field", "v3", v3(data_type={"name": "struct", "configuration": {
        "fields": [{"name": "a", "data_type": "string"}]}}, fill_value={"a": ""})),
    ("fill-struct-base64", "v3", v3(data_type={"name": "struct", "configuration": {
        "fields": [{"name": "a", "data_type": "int8"}]}}, fill_value="AA==")),
    ("fill-struct-missing-field", "v3", v3(data_type={"name": "struct", "configuration": {
        "fields": [{"name": "a", "data_type": "int8"}, {"name": "b", "data_type": "float32"}]}},
        fill_value={"a": 0})),
    ("fill-struct-unknown-field", "v3", v3(data_type={"name": "struct", "configuration": {
        "fields": [{"name": "a", "data_type": "int8"}]}}, fill_value={"a": 0, "c": 1})),
    ("fill-struct-nested-field", "v3", v3(data_type={"name": "struct", "configuration": {
        "fields": [{"name": "p", "data_type": {"name": "struct", "configuration": {
            "fields": [{"name": "x", "data_type": "float32"}]}}}]}},
        fill_value={"p": {"x": "nan"}})),
    # -- fill values --
    ("fill-int8-range", "v3", v3(data_type="int8", fill_value=300, codecs=[{"name": "bytes"}])),
    ("fill-uint64-negative", "v3", v3(data_type="uint64", fill_value=-1)),
    ("fill-int64-float", "v3", v3(data_type="int64", fill_value=1.5)),
    ("fill-int64-float-past-2-53", "v3", v3(data_type="int64", fill_value=2.0**53)),
    ("fill-uint8-float-range", "v3", v3(data_type="uint8", fill_value=300.0)),
    ("fill-nan-lowercase", "v3", v3(fill_value="nan")),
    ("fill-hex-length", "v3", v3(fill_value="0x7fc0")),
    ("fill-complex-scalar", "v3", v3(data_type="complex64", fill_value=1.0)),
    ("fill-complex-bad-part", "v3", v3(data_type="complex64", fill_value=[1.0, "one"])),
    ("fill-bool-int", "v3", v3(data_type="bool", fill_value=0, codecs=[{"name": "bytes"}])),
    ("fill-raw-length", "v3", v3(data_type="r16", fill_value=[1], codecs=[{"name": "bytes"}])),
    ("fill-raw-number", "v3", v3(data_type="r8", fill_value=255, codecs=[{"name": "bytes"}])),
    ("fill-raw-byte", "v3", v3(data_type="r16", fill_value=[1, 256],
                               codecs=[{"name": "bytes"}])),
    ("fill-null-v3", "v3", v3(fill_value=None)),
    ("fill-string-number", "v3", v3(data_type="string", fill_value=0,
                                    codecs=[{"name": "vlen-utf8"}])),
    ("fill-missing", "v3", v3(fill_value=...)),
    # -- codecs --
    ("codecs-empty", "v3", v3(codecs=[])),
    ("codecs-not-list", "v3", v3(codecs={"name": "bytes"})),
    ("codec-unknown-field", "v3", v3(codecs=[{"name": "bytes", "config": {}}])),
    ("codec-zstd-level", "v3", v3(codecs=[LE, {"name": "crc32c"},
                                          {"name": "zstd", "configuration": {"level": 99}}])),
    ("codec-gzip-level-string", "v3", v3(codecs=[LE, {"name": "gzip",
                                                      "configuration": {"level": "9"}}])),
    ("codec-blosc-cname", "v3", v3(codecs=[LE, {"name": "blosc", "configuration": {
        "cname": "brotli", "clevel": 5, "shuffle": "shuffle"}}])),
    ("codec-bytes-endian", "v3", v3(codecs=[{"name": "bytes",
                                             "configuration": {"endian": "middle"}}])),
    ("codec-transpose-permutation", "v3", v3(codecs=[
        {"name": "transpose", "configuration": {"order": [0, 0]}}, LE])),
    ("codec-transpose-rank", "v3", v3(codecs=[
        {"name": "transpose", "configuration": {"order": [2, 1, 0]}}, LE])),
    ("codec-two-serializers", "v3", v3(codecs=[LE, LE])),
    ("codec-compressor-first", "v3", v3(codecs=[{"name": "crc32c"}, LE])),
    ("codec-transpose-after-bytes", "v3", v3(codecs=[
        LE, {"name": "transpose", "configuration": {"order": [1, 0]}}])),
    ("codec-no-serializer", "v3", v3(codecs=[{"name": "crc32c"}])),
    ("codec-vlen-for-float", "v3", v3(codecs=[{"name": "vlen-utf8"}])),
    ("codec-bytes-for-string", "v3", v3(data_type="string", fill_value="", codecs=[LE])),
    ("codec-name-empty", "v3", v3(codecs=[{"name": ""}])),
    ("codec-must-understand-string", "v3", v3(codecs=[{"name": "bytes",
                                                       "must_understand": "no"}])),
    # -- sharding --
    ("shard-codec-after", "v3", v3(chunk_grid=grid(4, 6), codecs=[
        shard([2, 6], codecs=[shard([2, 3]), {"name": "zstd", "configuration": {"level": 1}}])])),
    ("shard-not-divisor", "v3", v3(chunk_grid=grid(4, 6), codecs=[shard([3, 3])])),
    ("shard-rank", "v3", v3(chunk_grid=grid(4, 6), codecs=[shard([2])])),
    ("shard-index-compressed", "v3", v3(chunk_grid=grid(4, 6), codecs=[
        shard([2, 3], index=[LE, {"name": "zstd", "configuration": {"level": 1}}])])),
    ("shard-nested-bad", "v3", v3(chunk_grid=grid(4, 6), codecs=[
        shard([2, 6], codecs=[shard([0, 3])])])),
    ("shard-transposed-not-divisor", "v3", v3(chunk_grid=grid(4, 6), codecs=[
        {"name": "transpose", "configuration": {"order": [1, 0]}}, shard([2, 3])])),
    ("shard-index-location", "v3", v3(chunk_grid=grid(4, 6), codecs=[
        {"name": "sharding_indexed", "configuration": {
            "chunk_shape": [2, 3], "codecs": [LE], "index_codecs": IDX,
            "index_location": "middle"}}])),
    ("shard-missing-index-codecs", "v3", v3(chunk_grid=grid(4, 6), codecs=[
        {"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 3],
                                                       "codecs": [LE]}}])),
    ("shard-after-delta", "v3", v3(chunk_grid=grid(4, 6), codecs=[
        {"name": "numcodecs.delta", "configuration": {"dtype": "<i4"}}, shard([2, 3])])),
    ("shard-nested-transposed-not-divisor", "v3", v3(chunk_grid=grid(4, 6), codecs=[
        shard([2, 6], codecs=[{"name": "transpose", "configuration": {"order": [1, 0]}},
                              shard([2, 3])])])),
    ("shard-rectilinear", "v3", v3(chunk_grid={"name": "rectilinear", "configuration": {
        "kind": "inline", "chunk_shapes": [[4, 6], 6]}}, codecs=[shard([2, 3])])),
    # -- other v3 fields --
    ("dimension-names-length", "v3", v3(dimension_names=["x"])),
    ("dimension-names-type", "v3", v3(dimension_names=["x", 3])),
    ("storage-transformer", "v3", v3(storage_transformers=[{"name": "chunk-manifest"}])),
    ("group-consolidated-kind", "v3", {"zarr_format": 3, "node_type": "group",
                                       "consolidated_metadata": {"kind": "external",
                                                                 "metadata": {}}}),
    ("group-consolidated-path", "v3", {"zarr_format": 3, "node_type": "group",
                                       "consolidated_metadata": {"kind": "inline", "metadata": {
                                           "a/../b": v3()}}}),
    ("group-consolidated-entry", "v3", {"zarr_format": 3, "node_type": "group",
                                        "consolidated_metadata": {"kind": "inline", "metadata": {
                                            "x": v3(shape=[10, -6])}}}),
    ("group-unknown-field", "v3", {"zarr_format": 3, "node_type": "group", "members": []}),
    # -- v2 .zarray / .zattrs / .zgroup --
    ("v2-format-3", "v2", v2(zarr_format=3)),
    ("v2-missing-compressor", "v2", v2(compressor=...)),
    ("v2-missing-order", "v2", v2(order=...)),
    ("v2-dtype-v3-name", "v2", v2(dtype="float32")),
    ("v2-dtype-no-byte-order", "v2", v2(dtype="f4")),
    ("v2-dtype-zero-length", "v2", v2(dtype="|S0")),
    ("v2-dtype-time-unit", "v2", v2(dtype="<M8[fortnight]")),
    ("v2-dtype-time-multiplier-zero", "v2", v2(dtype="<M8[0s]")),
    ("v2-dtype-time-multiplier-huge", "v2", v2(dtype="<m8[2147483648s]")),
    ("v2-structured-object-field", "v2", v2(dtype=[["a", "<i4"], ["b", "|O"]], fill_value=None)),
    ("v2-structured-bad-field", "v2", v2(dtype=[["a"]], fill_value=None)),
    ("v2-order", "v2", v2(order="K")),
    ("v2-separator", "v2", v2(dimension_separator="-")),
    ("v2-filters-object", "v2", v2(filters={"id": "delta"})),
    ("v2-filter-no-id", "v2", v2(filters=[{"dtype": "<f4"}])),
    ("v2-compressor-string", "v2", v2(compressor="zlib")),
    ("v2-chunks-rank", "v2", v2(chunks=[4])),
    ("v2-chunks-zero", "v2", v2(chunks=[4, 0])),
    ("v2-fill-uint8-range", "v2", v2(dtype="|u1", fill_value=256)),
    ("v2-fill-nan-lowercase", "v2", v2(dtype="<f4", fill_value="nan")),
    ("v2-fill-int-text", "v2", v2(dtype="<i4", fill_value="3")),
    ("v2-fill-base64", "v2", v2(dtype="|S5", fill_value="!!")),
    ("v2-fill-base64-long", "v2", v2(dtype="|S2", fill_value="YWJj")),
    ("v2-fill-hex-not-v2", "v2", v2(fill_value="0x7fc00000")),
    ("v2-object-without-codec", "v2", v2(dtype="|O", fill_value=None)),
    ("v2-object-codec-for-float", "v2", v2(filters=[{"id": "vlen-utf8"}])),
    ("v2-filter-input-byte-order", "v2", v2(dtype=">i4", fill_value=0, filters=[
        {"id": "delta", "dtype": "<i4", "astype": "<i8"}])),
    ("v2-attrs-not-object", "v2attrs", raw("[1, 2]")),
    ("v2-attrs-bad-json", "v2attrs", raw('{"a": }')),
    ("v2-group-format", "v2group", raw('{"zarr_format": "2"}')),
    ("zmetadata-key", "zmeta", {"metadata": {"x/zarr.json": {}}}),
    ("zmetadata-format", "zmeta", {**ZMETA, "zarr_consolidated_format": 2}),
    ("zmetadata-attrs-only", "zmeta", {"metadata": {"x/.zattrs": {}}}),
    ("zmetadata-array-and-group", "zmeta", {"metadata": {"x/.zarray": GOOD_V2,
                                                         "x/.zgroup": {"zarr_format": 2}}}),
    ("zmetadata-bad-entry", "zmeta", {"metadata": {"x/.zarray": v2(shape=[10, "6"])}}),
    ("zmetadata-no-metadata", "zmeta", {"zarr_consolidated_format": 1}),
]
