"""What parsed metadata means: fill values bit for bit, v2 lowering, sharding, grids, keys,
and the defaults of make_array_meta."""
from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

from zarrx.errors import MetadataError
from zarrx.metadata import (CodecSpec, KeyEncoding, RectilinearGrid, RegularGrid, ShardLevel,
                            chunk_edges, grid_shape, make_array_meta, parse_array_v2, parse_v3,
                            serialize_v2, serialize_v3)
from zarrx.metadata import dtypes as mdtypes

from ._malformed import GOOD_V2, LE, grid, shard, v2, v3


def bits(x) -> int:
    a = np.asarray(x)
    return int(np.frombuffer(a.tobytes(), f"<u{a.itemsize}")[0])


def canonical(meta):
    return serialize_v3(dataclasses.replace(meta, json=None))


@pytest.mark.parametrize("dtype,fill,want_bits", [
    ("float32", "0x7fc00001", 0x7FC00001), ("float32", "0x7f800001", 0x7F800001),
    ("float64", "0xfff8000000000001", 0xFFF8000000000001), ("float16", "0x7e01", 0x7E01),
    ("bfloat16", "0x7fc1", 0x7FC1), ("float32", -0.0, 0x80000000),
    ("float32", "NaN", 0x7FC00000), ("float64", "-Infinity", 0xFFF0000000000000)],
    ids=["f32-payload", "f32-snan", "f64-negative-payload", "f16-payload", "bf16-payload",
         "negative-zero", "canonical-nan", "neg-inf"])
def test_float_fill_bits_survive(dtype, fill, want_bits):
    meta = parse_v3(v3(data_type=dtype, fill_value=fill), "zarr.json")
    assert bits(meta.fill_value) == want_bits
    again = parse_v3(canonical(meta), "zarr.json")          # written without the source
    assert bits(again.fill_value) == want_bits
    if isinstance(fill, str) and fill.startswith("0x") and want_bits != 0x7FC00000:
        assert canonical(meta)["fill_value"] == fill


@pytest.mark.parametrize("dtype,value", [("int64", -2**63), ("int64", 2**63 - 1),
                                         ("uint64", 2**64 - 1), ("uint64", 2**53 + 1)])
def test_integer_extremes_are_exact(dtype, value):
    meta = parse_v3(v3(data_type=dtype, fill_value=value), "zarr.json")
    assert int(meta.fill_value) == value and meta.fill_value.dtype == np.dtype(dtype)
    assert canonical(meta)["fill_value"] == value


def test_complex_and_datetime_fill():
    m = parse_v3(v3(data_type="complex64", fill_value=["0x7fc00001", -0.0]), "zarr.json")
    assert np.isnan(m.fill_value.real) and np.signbit(m.fill_value.imag)
    assert canonical(m)["fill_value"] == ["0x7fc00001", -0.0]
    dt = {"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 1}}
    m = parse_v3(v3(data_type=dt, fill_value="NaT"), "zarr.json")
    assert np.isnat(m.fill_value) and canonical(m)["fill_value"] == -2**63


def test_v2_null_fill_is_undefined():
    m = parse_array_v2(v2(fill_value=None), None, ".zarray")
    assert m.fill_value is None
    assert serialize_v2(m)[".zarray"]["fill_value"] is None


@pytest.mark.parametrize("dtype", ["|V2", "|S2"])
def test_v2_empty_string_fill_of_fixed_bytes_is_zeros(dtype):
    """zarr-python reads ``""`` as zero bytes for ``V`` as for ``S``; zarrx refused it for
    ``V`` (expected exactly 2 bytes of base64 data), and writes it back as read."""
    m = parse_array_v2(v2(dtype=dtype, fill_value=""), None, ".zarray")
    assert np.array(m.fill_value, m.data_type.numpy).tobytes() == b"\0\0"
    assert serialize_v2(m)[".zarray"]["fill_value"] == ""


def test_v2_lowering_order_f_filters_compressor():
    doc = v2(dtype=">i4", order="F", fill_value=0, filters=[{"id": "delta", "dtype": ">i4"}],
             compressor={"id": "zlib", "level": 1})
    m = parse_array_v2(doc, None, ".zarray")
    assert [(c.name, c.configuration) for c in m.codecs] == [
        ("transpose", {"order": [1, 0]}), ("numcodecs.delta", {"dtype": ">i4"}),
        ("bytes", {"endian": "big"}), ("numcodecs.zlib", {"level": 1})]
    assert m.key_encoding == KeyEncoding("v2", ".") and m.chunk_codecs == m.codecs
    assert m.data_type.numpy == np.dtype("int32")            # native in memory
    with pytest.raises(MetadataError, match=re.escape(
            "zarr.json zarr_format: expected an array of Zarr format 3 (write a v2 array with "
            "serialize_v2), found 2")):
        serialize_v3(m)


LOWERED = {   # v2 compressor -> the v3 codec spec it is lowered to
    "zstd": ({"id": "zstd", "level": 3}, CodecSpec("zstd", {"level": 3})),
    "zstd-checksum": ({"id": "zstd", "level": 1, "checksum": True},
                      CodecSpec("zstd", {"level": 1, "checksum": True})),
    "gzip-default-level": ({"id": "gzip"}, CodecSpec("gzip", {"level": 1})),
    "crc32c": ({"id": "crc32c"}, CodecSpec("crc32c", {})),
    "crc32c-start": ({"id": "crc32c", "location": "start"},
                     CodecSpec("numcodecs.crc32c", {"location": "start"})),
    "blosc": ({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": -1, "blocksize": 0},
              CodecSpec("numcodecs.blosc", {"cname": "lz4", "clevel": 5, "shuffle": -1,
                                            "blocksize": 0})),
    "zlib": ({"id": "zlib", "level": 1}, CodecSpec("numcodecs.zlib", {"level": 1})),
    "shuffle-default": ({"id": "shuffle"}, CodecSpec("numcodecs.shuffle", {"elementsize": 4})),
    "unknown-kept": ({"id": "pcodec", "level": 8}, CodecSpec("numcodecs.pcodec", {"level": 8})),
}


@pytest.mark.parametrize("comp,spec", list(LOWERED.values()), ids=list(LOWERED))
def test_v2_codecs_lowered_to_v3_names_and_written_back(comp, spec):
    doc = v2(compressor=comp)
    m = parse_array_v2(doc, None, ".zarray")
    assert m.codecs[-1] == spec
    assert serialize_v2(m)[".zarray"] == doc


def test_v2_codec_configuration_checked_at_parse():
    with pytest.raises(MetadataError, match=re.escape(
            "a/.zarray compressor.cname: expected one of the blosc compressors (blosclz, lz4, "
            "lz4hc, snappy, zlib, zstd), found 'lzo'")):
        parse_array_v2(v2(compressor={"id": "blosc", "cname": "lzo"}), None, "a/.zarray")
    with pytest.raises(MetadataError, match=re.escape(
            "a/.zarray filters[0].elementsize: expected an integer >= 0, found 'x'")):
        parse_array_v2(v2(filters=[{"id": "shuffle", "elementsize": "x"}]), None, "a/.zarray")


def test_v2_codecs_derived_from_the_codec_list():
    """An array without its .zarray JSON writes each codec in its numcodecs form."""
    doc = v2(dtype="<i2", filters=[{"id": "delta", "dtype": "<i2"}],
             compressor={"id": "zstd", "level": 2})
    m = dataclasses.replace(parse_array_v2(doc, None, ".zarray"), v2_codecs=None, json=None)
    z = serialize_v2(m)[".zarray"]
    assert z["filters"] == [{"id": "delta", "dtype": "<i2", "astype": "<i2"}]   # as numcodecs
    assert z["compressor"] == {"id": "zstd", "level": 2}
    m = dataclasses.replace(m, codecs=(*m.codecs[:-1], CodecSpec("blosc", {
        "cname": "zstd", "clevel": 3, "shuffle": "bitshuffle", "typesize": 2,
        "blocksize": 0})))
    assert serialize_v2(m)[".zarray"]["compressor"] == {
        "id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 2, "blocksize": 0}


def test_v2_object_codec_is_the_serializer():
    m = parse_array_v2(v2(dtype="|O", fill_value=None, filters=[{"id": "vlen-utf8"}],
                          compressor={"id": "zstd", "level": 1}), None, ".zarray")
    assert [c.name for c in m.codecs] == ["vlen-utf8", "zstd"] and m.data_type.variable
    m = parse_array_v2(v2(dtype="|u1", fill_value=1), None, ".zarray")
    assert m.codecs == (CodecSpec("bytes", {}),)


def test_sharding_lowered_into_levels():
    inner = shard([2, 3], codecs=[LE, {"name": "zstd", "configuration": {"level": 1}}])
    doc = v3(chunk_grid=grid(8, 6), codecs=[{"name": "transpose", "configuration":
                                             {"order": [1, 0]}}, shard([6, 4], codecs=[inner])])
    doc["shape"] = [16, 12]
    with pytest.raises(MetadataError):   # inner [2, 3] does not divide the transposed [6, 4]
        parse_v3(doc, "zarr.json")
    doc["codecs"][1]["configuration"]["codecs"][0]["configuration"]["chunk_shape"] = [3, 2]
    m = parse_v3(doc, "zarr.json")
    assert m.chunk_grid == RegularGrid((8, 6))
    assert [lv.chunk_shape for lv in m.shard_levels] == [(6, 4), (3, 2)]
    assert m.shard_levels[0].outer_codecs[0].name == "transpose"
    assert m.shard_levels[0].index_crc32c and m.shard_levels[1].outer_codecs == ()
    assert [c.name for c in m.chunk_codecs] == ["bytes", "zstd"]
    assert m.chunk_shape == (2, 3)          # the read unit, in array space
    assert [c.name for c in m.layout.read_codecs] == ["transpose", "bytes", "zstd"]


def test_shard_level_defaults():
    m = parse_v3(v3(chunk_grid=grid(4, 6), codecs=[shard([2, 3], index=[LE])]), "zarr.json")
    assert m.shard_levels == (ShardLevel((2, 3), "end", False),)


def test_big_endian_shard_index():
    big = {"name": "bytes", "configuration": {"endian": "big"}}
    m = parse_v3(v3(chunk_grid=grid(4, 6), codecs=[shard([2, 3], index=[big, {"name": "crc32c"}])]),
                 "zarr.json")
    assert m.shard_levels[0].index_endian == "big" and m.shard_levels[0].index_crc32c


def test_grids_and_edges():
    m = parse_v3(v3(shape=[10, 6], chunk_grid={"name": "rectilinear", "configuration": {
        "kind": "inline", "chunk_shapes": [[[2, 3], 4, 9], 4]}}), "zarr.json")
    assert isinstance(m.chunk_grid, RectilinearGrid)
    assert m.chunk_grid.chunk_sizes == ((2, 2, 2, 4, 9), (4, 4))
    assert chunk_edges(m.chunk_grid, m.shape, 0) == (2, 2, 2, 4)   # the 9 lies past the end
    assert grid_shape(m.chunk_grid, m.shape) == (4, 2)
    assert chunk_edges(RegularGrid((4, 3)), (10, 6), 0) == (4, 4, 4)
    assert grid_shape(RegularGrid((4, 3)), (10, 0)) == (3, 0)
    bare = dataclasses.replace(m, chunk_grid=RectilinearGrid(m.chunk_grid.chunk_sizes), json=None)
    assert canonical(bare)["chunk_grid"]["configuration"]["chunk_shapes"] == [
        [[2, 3], 4, 9], [[4, 2]]]                               # run-length form when no JSON


@pytest.mark.parametrize("enc,coords,key", [
    (KeyEncoding("default", "/"), (), "c"), (KeyEncoding("default", "/"), (1, 2), "c/1/2"),
    (KeyEncoding("default", "."), (1, 2), "c.1.2"), (KeyEncoding("v2", "."), (), "0"),
    (KeyEncoding("v2", "."), (1, 2), "1.2"), (KeyEncoding("v2", "/"), (1, 2), "1/2")])
def test_chunk_keys(enc, coords, key):
    assert enc.encode(coords) == key


def test_tensorstore_style_key_encoding_defaults():
    assert parse_v3(v3(chunk_key_encoding={"name": "v2"}), "k").key_encoding == \
        KeyEncoding("v2", ".")
    assert parse_v3(v3(chunk_key_encoding={"name": "default"}), "k").key_encoding == \
        KeyEncoding("default", "/")


def test_must_understand_false_is_kept():
    m = parse_v3(v3(codecs=[LE, {"name": "x.sum", "must_understand": False}],
                    my_ext={"must_understand": False, "v": 1}), "k")
    assert m.codecs[1].must_understand is False and m.extra == {"my_ext": {
        "must_understand": False, "v": 1}}
    assert canonical(m)["my_ext"] == {"must_understand": False, "v": 1}


@pytest.mark.parametrize("dtype,fmt,want", [
    ("float32", 3, 0.0), ("int16", 3, 0), ("bool", 3, False), (str, 3, ""), (bytes, 3, b""),
    ("complex64", 3, 0j), ("float32", 2, 0.0), (str, 2, ""), (bytes, 2, b""),
    ("U3", 3, "")])
def test_make_array_meta_default_fill(dtype, fmt, want):
    m = make_array_meta((4,), dtype, (2,), zarr_format=fmt)
    assert m.fill_value == want if want is not None else m.fill_value is None
    assert m.key_encoding == (KeyEncoding() if fmt == 3 else KeyEncoding("v2", "."))
    assert m.zarr_format == fmt


def test_make_array_meta_datetime_default_is_nat():
    m = make_array_meta((4,), "datetime64[ns]", (2,))
    assert np.isnat(m.fill_value)


def test_make_array_meta_v2_codecs_and_order():
    m = make_array_meta((4, 4), ">f8", (2, 2), zarr_format=2, order="F", fill_value=1.5,
                        filters=[CodecSpec("numcodecs.delta", {"dtype": ">f8"})],
                        compressor=CodecSpec("zstd", {"level": 1}))
    z = serialize_v2(m)[".zarray"]
    assert z["order"] == "F" and z["dtype"] == ">f8" and z["fill_value"] == 1.5
    assert z["filters"] == [{"id": "delta", "dtype": ">f8", "astype": ">f8"}]
    assert z["compressor"] == {"id": "zstd", "level": 1}


def test_make_array_meta_validates():
    with pytest.raises(MetadataError, match=r"^array metadata chunk_grid.configuration."
                                            r"chunk_shape: expected 2 chunk sizes"):
        make_array_meta((4, 4), "f4", (2,))
    with pytest.raises(MetadataError, match=r"^array metadata fill_value: expected an integer "
                                            r"in \[-128, 127\], found 300$"):
        make_array_meta((4,), "int8", (2,), fill_value=300)
    with pytest.raises(MetadataError, match="chunk_shape.0.: expected a divisor"):
        make_array_meta((8,), "f4", (4,), codecs=[CodecSpec("sharding_indexed", {
            "chunk_shape": [3], "codecs": [{"name": "bytes"}],
            "index_codecs": [{"name": "bytes"}]})])


def test_missing_ml_dtypes_is_a_metadata_error(monkeypatch):
    monkeypatch.setattr(mdtypes, "ml_dtype", lambda name: None)
    with pytest.raises(MetadataError, match="needs the optional ml_dtypes package"):
        parse_v3(v3(data_type="bfloat16"), "zarr.json")


def test_v2_attributes_and_group():
    m = parse_array_v2(GOOD_V2, b'{"_ARRAY_DIMENSIONS": ["y", "x"]}', "a/.zarray")
    assert m.attributes == {"_ARRAY_DIMENSIONS": ["y", "x"]} and m.dimension_names is None


def test_make_array_meta_datetime_from_string():
    m = make_array_meta((4,), "datetime64[D]", (2,), fill_value="2020-01-02")
    assert m.fill_value == np.datetime64("2020-01-02")
    assert canonical(m)["fill_value"] == 18263


def test_node_type_is_checked():
    from zarrx.metadata import parse_array_v3, parse_group_v3
    with pytest.raises(MetadataError, match="^g/zarr.json node_type: expected 'array', found "
                                            "'group'$"):
        parse_array_v3({"zarr_format": 3, "node_type": "group"}, "g/zarr.json")
    with pytest.raises(MetadataError, match="node_type: expected 'group', found 'array'"):
        parse_group_v3(v3(), "a/zarr.json")


@pytest.mark.parametrize("dtype, fill, want", [
    ("float32", 1e39, np.inf), ("float32", -1e39, -np.inf), ("float16", 65520, np.inf),
    ("float16", 65519, 65504.0), ("float16", 70000, np.inf), ("float64", 10**400, np.inf),
    ("float32", 3.4028235e38, np.float32(3.4028235e38))])
def test_a_fill_number_past_the_type_rounds_as_ieee_754(dtype, fill, want):
    """A JSON number is rounded to the type's nearest value: past the largest finite one, an
    infinity (zarr-python and tensorstore read such documents so)."""
    got = parse_v3(v3(data_type=dtype, fill_value=fill), "zarr.json").fill_value
    assert got.dtype == np.dtype(dtype) and got == want
