"""The malformed-document table: each document raises MetadataError with exactly this message
(document key, JSON path, what was found, what was expected), and nothing else escapes."""
from __future__ import annotations

import re

import pytest

from zarrx.errors import MetadataError
from zarrx.metadata import json as mjson
from zarrx.metadata import parse_array_v2, parse_group_v2, parse_v3, parse_zmetadata

from ._malformed import CASES, GOOD_V2


def run(kind, doc):
    if doc is None:                      # the huge document is built here, not at import
        doc = b" " * (mjson.max_document_bytes() + 1)
    if kind == "v3":
        return parse_v3(doc, "a/zarr.json")
    if kind == "v2":
        return parse_array_v2(doc, None, "a/.zarray")
    if kind == "v2attrs":
        return parse_array_v2(GOOD_V2, doc, "a/.zarray")
    if kind == "v2group":
        return parse_group_v2(doc, None, "a/.zgroup")
    assert kind == "zmeta"
    return parse_zmetadata(doc, ".zmetadata")


EXPECTED = {
    'bad-json':
        'a/zarr.json: expected valid JSON, found Expecting property name enclosed in double quotes: line 1 column 19',
    'not-utf8':
        'a/zarr.json: expected UTF-8 encoded JSON, found invalid byte at offset 7',
    'top-level-array':
        'a/zarr.json: expected a JSON object at the top level, found [1, 2]',
    'top-level-string':
        "a/.zarray: expected a JSON object at the top level, found 'zarr'",
    'empty-document':
        'a/zarr.json: expected valid JSON, found Expecting value: line 1 column 1',
    'control-character':
        'a/zarr.json: expected valid JSON, found Invalid control character at: line 1 column 36',
    'duplicate-key':
        "a/zarr.json: expected unique keys in every JSON object, found key 'zarr_format' twice",
    'duplicate-nested-key':
        "a/.zarray: expected unique keys in every JSON object, found key 'id' twice",
    'nesting-bomb':
        'a/zarr.json: expected JSON nested at most 128 levels deep, found 100000 levels',
    'nesting-bomb-objects':
        'a/.zarray: expected JSON nested at most 128 levels deep, found 50000 levels',
    'deep-attributes':
        'a/zarr.json: expected JSON nested at most 128 levels deep, found 130 levels',
    'huge-document':
        'a/zarr.json: expected a document of at most 67108864 bytes, found 67108865 bytes '
        '(the setting zarrx.config max_metadata_bytes, or the environment variable '
        'ZARRX_MAX_METADATA_BYTES, raises the limit)',
    'bare-nan-v3':
        'a/zarr.json fill_value: expected a number, "NaN", "Infinity", "-Infinity" or a hex bit pattern of 8 digits, found nan',
    'huge-integer-literal':
        "a/zarr.json: expected valid JSON, found 'Exceeds the limit (4300 digits) for integer string conversion: value has 500...",
    'dict-with-int-keys':
        'a/zarr.json: expected JSON object keys that are strings, found 1',
    'not-a-document':
        'a/zarr.json: expected a JSON document (bytes, str or dict), found float',
    'v3-format-2':
        'a/zarr.json zarr_format: expected 3, found 2',
    'v3-format-missing':
        "a/zarr.json: missing required field 'zarr_format'",
    'v3-format-true':
        'a/zarr.json zarr_format: expected 3, found True',
    'v3-node-type':
        "a/zarr.json node_type: expected 'array' or 'group', found 'table'",
    'v3-node-type-missing':
        "a/zarr.json: missing required field 'node_type'",
    'v3-missing-shape':
        "a/zarr.json: missing required field 'shape'",
    'v3-missing-codecs':
        "a/zarr.json: missing required field 'codecs'",
    'v3-unknown-field':
        'a/zarr.json chunk_memory_layout: expected a known field, or an extension object with "must_understand": false, found \'C\'',
    'v3-extension-must-understand':
        'a/zarr.json my_ext: expected a known field, or an extension object with "must_understand": false, found {\'must_understand\': True}',
    'v3-attributes-list':
        'a/zarr.json attributes: expected a JSON object, found [1]',
    'shape-not-list':
        "a/zarr.json shape: expected an array of non-negative integers, found '10'",
    'shape-negative':
        'a/zarr.json shape[0]: expected a non-negative integer below 2**63, found -1',
    'shape-bool':
        'a/zarr.json shape[0]: expected a non-negative integer below 2**63, found True',
    'shape-float':
        'a/zarr.json shape[0]: expected a non-negative integer below 2**63, found 1.5',
    'shape-product-overflow':
        'a/zarr.json shape: expected a shape whose product fits in 64 bits (at most 2**63-1 elements), found [1099511627776, 1099511627776]',
    'shape-dimension-overflow':
        'a/zarr.json shape[0]: expected a non-negative integer below 2**63, found 18446744073709551616',
    'shape-too-many-dims':
        'a/zarr.json shape: expected at most 64 dimensions, found 65 dimensions',
    'grid-unknown':
        "a/zarr.json chunk_grid.name: expected a known chunk grid ('regular' or 'rectilinear'), found 'irregular'",
    'grid-string':
        "a/zarr.json chunk_grid: expected a chunk grid object with a configuration, found 'regular'",
    'grid-rank-mismatch':
        'a/zarr.json chunk_grid.configuration.chunk_shape: expected 2 chunk sizes (one per dimension of shape [10, 6]), found [4]',
    'grid-zero-chunk':
        'a/zarr.json chunk_grid.configuration.chunk_shape[0]: expected a positive integer below 2**63, or 0 on an axis of length 0 (this one has length 10), found 0',
    'grid-negative-chunk':
        'a/zarr.json chunk_grid.configuration.chunk_shape[1]: expected a positive integer below 2**63, or 0 on an axis of length 0 (this one has length 6), found -3',
    'grid-no-configuration':
        "a/zarr.json chunk_grid: missing required field 'configuration'",
    'grid-chunk-bytes-overflow':
        'a/zarr.json chunk_grid: expected a chunk of at most 2**63-1 bytes, found 18446744073709551616 bytes',
    'rectilinear-short':
        'a/zarr.json chunk_grid.configuration.chunk_shapes[0]: expected edge lengths summing to at least the axis length 10, found a sum of 8',
    'rectilinear-bad-rle':
        'a/zarr.json chunk_grid.configuration.chunk_shapes[0][0][1]: expected a positive integer below 2**63, found 0',
    'rectilinear-kind':
        "a/zarr.json chunk_grid.configuration.kind: expected 'inline', found 'external'",
    'rectilinear-too-many':
        'a/zarr.json chunk_grid.configuration.chunk_shapes[0][0]: expected at most 1048576 chunks along an axis, found 1073741824 chunks',
    'rectilinear-rank':
        'a/zarr.json chunk_grid.configuration.chunk_shapes: expected 2 axes (one per dimension of shape [10, 6]), found 1 axes',
    'key-encoding-separator':
        "a/zarr.json chunk_key_encoding.configuration.separator: expected '/' or '.', found '-'",
    'key-encoding-name':
        "a/zarr.json chunk_key_encoding.name: expected 'default' or 'v2', found 'v4'",
    'dtype-unknown':
        "a/zarr.json data_type: expected a known data type, found 'float128'",
    'dtype-raw-bits':
        "a/zarr.json data_type: expected raw bits r<N> with N a positive multiple of 8, found 'r7'",
    'dtype-object-no-name':
        "a/zarr.json data_type: missing required field 'name'",
    'dtype-number':
        'a/zarr.json data_type: expected a data type name or object, found 4',
    'dtype-datetime-unit':
        "a/zarr.json data_type.configuration.unit: expected one of Y, M, W, D, h, m, s, ms, us, μs, ns, ps, fs, as, generic, found 'fortnight'",
    'dtype-datetime-generic-scale':
        "a/zarr.json data_type.configuration.scale_factor: expected 1 for the unit 'generic', found 10",
    'dtype-datetime-scale':
        'a/zarr.json data_type.configuration.scale_factor: expected an integer in [1, 2147483647], found 0',
    'dtype-utf32-length':
        'a/zarr.json data_type.configuration.length_bytes: expected a multiple of 4, found 5',
    'dtype-structured-duplicate':
        "a/zarr.json data_type.configuration.fields[1][0]: expected a unique non-empty field name, found 'a'",
    'dtype-core-configuration':
        "a/zarr.json data_type.configuration.x: unknown field; data type 'int8' takes no configuration",
    'dtype-struct-pair-field':
        "a/zarr.json data_type.configuration.fields[0]: expected a JSON object, found ['a', 'int8']",
    'dtype-struct-field-no-type':
        "a/zarr.json data_type.configuration.fields[0]: missing required field 'data_type'",
    'dtype-struct-variable-field':
        "a/zarr.json data_type.configuration.fields[0].data_type: expected a fixed-size data type, found 'string'",
    'fill-struct-base64':
        "a/zarr.json fill_value: expected a JSON object, found 'AA=='",
    'fill-struct-missing-field':
        "a/zarr.json fill_value: missing required field 'b' (the fill value gives every field's)",
    'fill-struct-unknown-field':
        "a/zarr.json fill_value.c: unknown field; the data type's fields are 'a'",
    'fill-struct-nested-field':
        'a/zarr.json fill_value.p.x: expected a number, "NaN", "Infinity", "-Infinity" or a hex bit pattern of 8 digits, found \'nan\'',
    'fill-int8-range':
        'a/zarr.json fill_value: expected an integer in [-128, 127], found 300',
    'fill-uint64-negative':
        'a/zarr.json fill_value: expected an integer in [0, 18446744073709551615], found -1',
    'fill-int64-float':
        'a/zarr.json fill_value: expected an integer in [-9223372036854775808, 9223372036854775807], found 1.5',
    'fill-int64-float-past-2-53':
        'a/zarr.json fill_value: expected an integer in [-9223372036854775808, 9223372036854775807], found 9007199254740992.0',
    'fill-uint8-float-range':
        'a/zarr.json fill_value: expected an integer in [0, 255], found 300.0',
    'fill-nan-lowercase':
        'a/zarr.json fill_value: expected a number, "NaN", "Infinity", "-Infinity" or a hex bit pattern of 8 digits, found \'nan\'',
    'fill-hex-length':
        'a/zarr.json fill_value: expected a number, "NaN", "Infinity", "-Infinity" or a hex bit pattern of 8 digits, found \'0x7fc0\'',
    'fill-complex-scalar':
        'a/zarr.json fill_value: expected a [real, imaginary] pair, found 1.0',
    'fill-complex-bad-part':
        'a/zarr.json fill_value[1]: expected a number, "NaN", "Infinity", "-Infinity" or a hex bit pattern of 8 digits, found \'one\'',
    'fill-bool-int':
        'a/zarr.json fill_value: expected true or false, found 0',
    'fill-raw-length':
        'a/zarr.json fill_value: expected an array of 2 byte values, found [1]',
    'fill-raw-number':
        'a/zarr.json fill_value: expected an array of 1 byte values or a base64 string, found 255',
    'fill-raw-byte':
        'a/zarr.json fill_value[1]: expected an integer in [0, 255], found 256',
    'fill-null-v3':
        'a/zarr.json fill_value: expected a fill value for float32, found None',
    'fill-string-number':
        'a/zarr.json fill_value: expected a string, found 0',
    'fill-missing':
        "a/zarr.json: missing required field 'fill_value'",
    'codecs-empty':
        "a/zarr.json codecs: expected at least one codec (an array->bytes codec such as 'bytes'), found []",
    'codecs-not-list':
        "a/zarr.json codecs: expected a JSON array, found {'name': 'bytes'}",
    'codec-unknown-field':
        "a/zarr.json codecs[0].config: unknown field; expected only 'name', 'configuration', 'must_understand'",
    'codec-zstd-level':
        'a/zarr.json codecs[2].configuration.level: expected an integer in [-131072, 22], found 99',
    'codec-gzip-level-string':
        "a/zarr.json codecs[1].configuration.level: expected an integer in [0, 9], found '9'",
    'codec-blosc-cname':
        "a/zarr.json codecs[1].configuration.cname: expected one of the blosc compressors (blosclz, lz4, lz4hc, snappy, zlib, zstd), found 'brotli'",
    'codec-bytes-endian':
        "a/zarr.json codecs[0].configuration.endian: expected 'little' or 'big', found 'middle'",
    'codec-transpose-permutation':
        'a/zarr.json codecs[0].configuration.order: expected a permutation of the dimensions, found [0, 0]',
    'codec-transpose-rank':
        'a/zarr.json codecs[0].configuration.order: expected a permutation of 2 dimensions, found [2, 1, 0]',
    'codec-two-serializers':
        "a/zarr.json codecs[1]: expected one array->bytes codec only (after 'bytes'), found 'bytes'",
    'codec-compressor-first':
        "a/zarr.json codecs[0]: expected an array->bytes codec (such as 'bytes') before bytes->bytes codecs, found 'crc32c'",
    'codec-transpose-after-bytes':
        "a/zarr.json codecs[1]: expected a bytes->bytes codec after 'bytes', found 'transpose'",
    'codec-no-serializer':
        "a/zarr.json codecs[0]: expected an array->bytes codec (such as 'bytes') before bytes->bytes codecs, found 'crc32c'",
    'codec-vlen-for-float':
        "a/zarr.json codecs[0]: expected 'bytes' for the fixed-size type 'float32', found 'vlen-utf8'",
    'codec-bytes-for-string':
        "a/zarr.json codecs[0]: expected 'vlen-utf8' for the variable-length type 'string', found 'bytes'",
    'codec-name-empty':
        "a/zarr.json codecs[0].name: expected a codec name, found ''",
    'codec-must-understand-string':
        "a/zarr.json codecs[0].must_understand: expected true or false, found 'no'",
    'shard-codec-after':
        "a/zarr.json codecs[0].configuration.codecs[1]: expected only bytes->bytes codecs after the outermost 'sharding_indexed', found 'zstd' after a nested one",
    'shard-not-divisor':
        'a/zarr.json codecs[0].configuration.chunk_shape[0]: expected a divisor of the shard size 4 along axis 0 (shard shape [4, 6] as seen by the sharding codec), found 3',
    'shard-rank':
        'a/zarr.json codecs[0].configuration.chunk_shape: expected 2 inner chunk sizes (the rank of the array), found [2]',
    'shard-index-compressed':
        "a/zarr.json codecs[0].configuration.index_codecs: expected an optional transpose, bytes (either byte order), then crc32c checksums: the shard index must be fixed-size, found [{'name': 'bytes', 'configuration': {'endian': 'little'}}, {'name': 'zstd', '...",
    'shard-nested-bad':
        'a/zarr.json codecs[0].configuration.codecs[0].configuration.chunk_shape[0]: expected a positive integer below 2**63, found 0',
    'shard-transposed-not-divisor':
        'a/zarr.json codecs[1].configuration.chunk_shape[1]: expected a divisor of the shard size 4 along axis 1 (shard shape [6, 4] as seen by the sharding codec), found 3',
    'shard-index-location':
        "a/zarr.json codecs[0].configuration.index_location: expected 'start' or 'end', found 'middle'",
    'shard-missing-index-codecs':
        "a/zarr.json codecs[0].configuration: missing required field 'index_codecs'",
    'shard-after-delta':
        "a/zarr.json codecs[0]: 'numcodecs.delta' before 'sharding_indexed' is not supported: only a transpose or a codec mapping each value alone (scale_offset, cast_value) can be applied to a whole shard, since inner chunks must stay independently decodable",
    'shard-nested-transposed-not-divisor':
        'a/zarr.json codecs[0].configuration.codecs[1].configuration.chunk_shape[1]: expected a divisor of the shard size 2 along axis 1 (shard shape [6, 2] as seen by the sharding codec), found 3',
    'shard-rectilinear':
        "a/zarr.json chunk_grid.name: expected 'regular' (zarrx shards regular chunk grids only), found 'rectilinear'",
    'dimension-names-length':
        'a/zarr.json dimension_names: expected 2 names (one per dimension), found 1 names',
    'dimension-names-type':
        'a/zarr.json dimension_names[1]: expected a string or null, found 3',
    'storage-transformer':
        'a/zarr.json storage_transformers[0]: expected no storage transformer (none is supported) or one with "must_understand": false, found {\'name\': \'chunk-manifest\'}',
    'group-consolidated-kind':
        "a/zarr.json consolidated_metadata.kind: expected 'inline', found 'external'",
    'group-consolidated-path':
        'a/zarr.json consolidated_metadata.metadata["a/../b"]: expected a node path such as \'a/b\' (no empty, \'.\' or \'..\' segments), found \'a/../b\'',
    'group-consolidated-entry':
        'a/zarr.json consolidated_metadata.metadata["x"].shape[1]: expected a non-negative integer below 2**63, found -6',
    'group-unknown-field':
        'a/zarr.json members: expected a known field, or an extension object with "must_understand": false, found []',
    'v2-format-3':
        'a/.zarray zarr_format: expected 2, found 3',
    'v2-missing-compressor':
        "a/.zarray: missing required field 'compressor'",
    'v2-missing-order':
        "a/.zarray: missing required field 'order'",
    'v2-dtype-v3-name':
        "a/.zarray dtype: expected a typestr such as '<f4', '|u1', '<M8[ns]', '|S5' or '|O', found 'float32'",
    'v2-dtype-no-byte-order':
        "a/.zarray dtype: expected a byte order '<' or '>' for a multi-byte type, found 'f4'",
    'v2-dtype-zero-length':
        "a/.zarray dtype: expected a positive length, found '|S0'",
    'v2-dtype-time-unit':
        "a/.zarray dtype: expected a time unit among Y, M, W, D, h, m, s, ms, us, μs, ns, ps, fs, as, found '<M8[fortnight]'",
    'v2-dtype-time-multiplier-zero':      # numpy's datetime64[0s] fails to print or convert
        "a/.zarray dtype: expected a time unit multiplier in [1, 2147483647], found '<M8[0s]'",
    'v2-dtype-time-multiplier-huge':
        "a/.zarray dtype: expected a time unit multiplier in [1, 2147483647], found '<m8[2147483648s]'",
    'v2-structured-object-field':
        "a/.zarray dtype[1][1]: expected a fixed-size field type, found '|O'",
    'v2-structured-bad-field':
        "a/.zarray dtype[0]: expected a [name, dtype] or [name, dtype, shape] field, found ['a']",
    'v2-order':
        "a/.zarray order: expected 'C' or 'F', found 'K'",
    'v2-separator':
        "a/.zarray dimension_separator: expected '.' or '/', found '-'",
    'v2-filters-object':
        "a/.zarray filters: expected an array or null, found {'id': 'delta'}",
    'v2-filter-no-id':
        "a/.zarray filters[0]: missing required field 'id'",
    'v2-compressor-string':
        "a/.zarray compressor: expected a JSON object, found 'zlib'",
    'v2-chunks-rank':
        'a/.zarray chunks: expected 2 chunk sizes (one per dimension of shape [10, 6]), found [4]',
    'v2-chunks-zero':
        'a/.zarray chunks[1]: expected a positive integer below 2**63, or 0 on an axis of length 0 (this one has length 6), found 0',
    'v2-fill-uint8-range':
        'a/.zarray fill_value: expected an integer in [0, 255], found 256',
    'v2-fill-nan-lowercase':
        'a/.zarray fill_value: expected a number, "NaN", "Infinity", "-Infinity", found \'nan\'',
    'v2-fill-int-text':
        "a/.zarray fill_value: expected an integer in [-2147483648, 2147483647], found '3'",
    'v2-fill-base64':
        "a/.zarray fill_value: expected a base64 string, found '!!'",
    'v2-fill-base64-long':
        'a/.zarray fill_value: expected at most 2 bytes of base64 data, found 3 bytes',
    'v2-fill-hex-not-v2':
        'a/.zarray fill_value: expected a number, "NaN", "Infinity", "-Infinity", found \'0x7fc00000\'',
    'v2-object-without-codec':
        "a/.zarray filters: expected an object codec (vlen-utf8, vlen-bytes, ...) among the filters for dtype '|O', found None",
    'v2-object-codec-for-float':
        "a/.zarray filters[0]: expected no object codec for a fixed-size dtype, found 'vlen-utf8'",
    'v2-filter-input-byte-order':
        "a/.zarray filters[0].dtype: expected '>i4', the byte order of the data the filter receives, found '<i4'",
    'v2-attrs-not-object':
        'a/.zattrs: expected a JSON object at the top level, found [1, 2]',
    'v2-attrs-bad-json':
        'a/.zattrs: expected valid JSON, found Expecting value: line 1 column 7',
    'v2-group-format':
        "a/.zgroup zarr_format: expected 2, found '2'",
    'zmetadata-key':
        '.zmetadata metadata["x/zarr.json"]: expected a key ending in .zarray, .zgroup or .zattrs, found \'x/zarr.json\'',
    'zmetadata-format':
        '.zmetadata zarr_consolidated_format: expected 1, found 2',
    'zmetadata-attrs-only':
        '.zmetadata metadata["x/.zattrs"]: attributes without a .zarray or .zgroup for the same node',
    'zmetadata-array-and-group':
        '.zmetadata metadata["x/.zgroup"]: a node cannot be both an array and a group (.zarray is present too)',
    'zmetadata-bad-entry':
        '.zmetadata metadata["x/.zarray"] shape[1]: expected a non-negative integer below 2**63, found \'6\'',
    'zmetadata-no-metadata':
        ".zmetadata: missing required field 'metadata'",
}


def test_table_is_large_and_complete():
    assert len(CASES) >= 60
    assert sorted(EXPECTED) == sorted(c[0] for c in CASES)
    assert {c[1] for c in CASES} >= {"v3", "v2", "v2attrs", "v2group", "zmeta"}


@pytest.mark.parametrize("kind,doc,message", [(k, d, EXPECTED[i]) for i, k, d in CASES],
                         ids=[c[0] for c in CASES])
def test_malformed_document(kind, doc, message):
    with pytest.raises(MetadataError, match=f"^{re.escape(message)}$"):
        run(kind, doc)


def test_messages_stay_short_for_huge_values():
    doc = {"zarr_format": 3, "node_type": "array", "shape": "x" * 100_000}
    with pytest.raises(MetadataError) as info:
        parse_v3(doc, "big/zarr.json")
    assert len(str(info.value)) < 200


@pytest.mark.parametrize("codec, message", [
    ({"name": "numcodecs.delta", "configuration": {"dtype": "<08"}},
     "a/zarr.json codecs[0].configuration.dtype: expected a numpy dtype string such as '<f8', "
     "found '<08'"),
    ({"name": "numcodecs.categorize", "configuration": {"labels": ["a"], "dtype": "|08",
                                                        "astype": "|u1"}},
     "a/zarr.json codecs[0].configuration.dtype: expected a unicode or object dtype ('<U8', "
     "'|O'), found '|08'"),
], ids=["delta", "categorize"])
def test_dtype_strings_numpy_reads_as_python(codec, message):
    """Regression (fuzz/corpus/fuzz_metadata_v3/regression-delta-dtype-not-parsed): numpy
    parses some dtype strings as Python literals, and its SyntaxError escaped the parser."""
    from ._malformed import LE, v3

    with pytest.raises(MetadataError) as info:
        parse_v3(v3(data_type="int32", fill_value=0, codecs=[codec, LE]), "a/zarr.json")
    assert str(info.value) == message


@pytest.mark.parametrize("fmt", [2, 3])
def test_a_categorize_filter_of_null_astype_is_refused(fmt):
    """numcodecs reads ``astype: null`` as float64; the parser failed an internal assertion."""
    from ._malformed import LE, v2, v3

    conf = {"labels": ["a", "b"], "dtype": "|O", "astype": None}
    with pytest.raises(MetadataError) as info:
        if fmt == 2:
            parse_array_v2(v2(dtype="|O", fill_value=None,
                              filters=[{"id": "categorize", **conf}]), None, "a/.zarray")
        else:
            parse_v3(v3(data_type="string", fill_value="", codecs=[
                {"name": "numcodecs.categorize", "configuration": conf}, LE]), "a/zarr.json")
    where = "a/.zarray filters[0]" if fmt == 2 else "a/zarr.json codecs[0].configuration"
    assert str(info.value) == (f"{where}.astype: expected an integer dtype that can count 2 "
                               f"labels, found None")
