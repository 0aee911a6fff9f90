"""The zarr-extensions ``scale_offset`` codec: the spec's examples, exact integer arithmetic
(overflow and inexact division are errors, never wraps), the fill value through the codec,
configuration errors with their exact messages, and the codec object."""
from __future__ import annotations

import json
import pickle
import re

import numpy as np
import pytest

import zarrx
from zarrx.codecs import CastValue, ScaleOffset
from zarrx.errors import CodecError, MetadataError
from zarrx.store import MemoryStore

LE = {"name": "bytes", "configuration": {"endian": "little"}}


def _doc(dtype, codecs, fill=0, shape=(4,), chunks=(4,)):
    return {"zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": dtype,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": fill, "codecs": codecs}


def _open(doc):
    st = MemoryStore()
    st.set("zarr.json", json.dumps(doc).encode())
    return st, zarrx.open_array(st, mode="r+")


def test_float32_example_round_trips_and_stores_the_scaled_values():
    st, a = _open(_doc("float32", [{"name": "scale_offset",
                                    "configuration": {"offset": 5, "scale": 0.1}}, LE]))
    a[:] = np.array([5, 15, 25, 6], dtype="f4")
    np.testing.assert_array_equal(a[:], np.array([5, 15, 25, 6], dtype="f4"))
    x = np.array([5, 15, 25, 6], dtype="f4")
    expected = (x - np.float32(5)) * np.float32(0.1)         # in float32 arithmetic
    np.testing.assert_array_equal(np.frombuffer(st.get("c/0"), "<f4"), expected)


def test_uint16_range_reduction_example():
    st, a = _open(_doc("uint16", [{"name": "scale_offset", "configuration": {"offset": 1000}},
                                  {"name": "cast_value", "configuration": {"data_type": "uint8"}},
                                  {"name": "bytes"}], fill=1000))
    a[:] = [1000, 1001, 1255, 1100]
    assert st.get("c/0") == bytes([0, 1, 255, 100])
    np.testing.assert_array_equal(a[:], [1000, 1001, 1255, 1100])
    with pytest.raises(CodecError, match=re.escape(
            "cast_value: cannot encode the value 256 of uint16 as uint8: 256 is out of the range "
            "of uint8 [0, 255]")):
        a[:1] = 1256


def test_configuration_may_be_omitted():
    st, a = _open(_doc("int32", [{"name": "scale_offset"}, LE]))
    a[:] = [1, -2, 3, 2**31 - 1]
    np.testing.assert_array_equal(np.frombuffer(st.get("c/0"), "<i4"), [1, -2, 3, 2**31 - 1])


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint32", "int64", "uint64"])
def test_integer_encode_overflow_is_an_error_never_a_wrap(dtype):
    info = np.iinfo(dtype)
    st, a = _open(_doc(dtype, [{"name": "scale_offset", "configuration": {"scale": 2}}, LE]))
    a[:] = [0, 1, info.max // 2, info.min // 2]
    np.testing.assert_array_equal(a[:], np.array([0, 1, info.max // 2, info.min // 2], dtype))
    with pytest.raises(CodecError, match=re.escape(
            f"scale_offset: (x - 0) * 2 = {2 * int(info.max)} is out of the range of {dtype} "
            f"for the value {int(info.max)} of {dtype} [{info.min}, {info.max}] "
            f"(offset 0, scale 2)")):
        a[:1] = info.max


def test_unsigned_subtraction_below_zero_is_an_error():
    st, a = _open(_doc("uint8", [{"name": "scale_offset", "configuration": {"offset": 10}},
                                 {"name": "bytes"}], fill=10))
    with pytest.raises(CodecError, match=re.escape(
            "scale_offset: x - 10 = -1 is out of the range of uint8 for the value 9")):
        a[:1] = 9


def test_uint64_above_2_63_exact():
    big = 2**64 - 1
    st, a = _open(_doc("uint64", [{"name": "scale_offset",
                                   "configuration": {"offset": 2**63, "scale": 1}}, LE],
                       fill=2**63))
    a[:] = np.array([2**63, big, 2**63 + 12345, 2**63 + 1], dtype="u8")
    np.testing.assert_array_equal(np.frombuffer(st.get("c/0"), "<u8"),
                                  np.array([0, 2**63 - 1, 12345, 1], dtype="u8"))
    assert int(a[1]) == big


def test_int64_extremes_with_negative_scale():
    st, a = _open(_doc("int64", [{"name": "scale_offset", "configuration": {"scale": -1}}, LE]))
    a[:] = [2**63 - 1, -(2**63) + 1, 0, 5]
    np.testing.assert_array_equal(np.frombuffer(st.get("c/0"), "<i8"),
                                  [-(2**63) + 1, 2**63 - 1, 0, -5])
    with pytest.raises(CodecError, match=re.escape("scale_offset: (x - 0) * -1 = "
                                                   f"{2**63} is out of the range of int64")):
        a[:1] = -(2**63)


def test_integer_decode_division_must_be_exact():
    st, a = _open(_doc("int16", [{"name": "scale_offset", "configuration": {"scale": 4}}, LE]))
    st.set("c/0", np.array([4, 8, 9, 0], "<i2").tobytes())
    with pytest.raises(CodecError, match=re.escape(
            "scale_offset: x / 4 is not an integer for the value 9 of int16 [-32768, 32767] "
            "(offset 0, scale 4)")) as exc:
        a[:]
    assert exc.value.key == "c/0"


def test_integer_decode_overflow_after_offset():
    st, a = _open(_doc("int8", [{"name": "scale_offset", "configuration": {"offset": 100}},
                                {"name": "bytes"}], fill=100))
    st.set("c/0", np.array([0, 27, 28, -128], "i1").tobytes())
    with pytest.raises(CodecError, match=re.escape("scale_offset: x / 1 + 100 = 128 is out of "
                                                   "the range of int8")):
        a[:]


def test_special_float_values_and_hex_spellings():
    st, a = _open(_doc("float64", [{"name": "scale_offset", "configuration": {
        "offset": "0x4000000000000000", "scale": "Infinity"}}, LE], fill="NaN"))
    a[:] = [2.0, 3.0, np.nan, 1.0]
    np.testing.assert_array_equal(np.frombuffer(st.get("c/0"), "<f8"),
                                  [np.nan, np.inf, np.nan, -np.inf])


def test_fill_value_propagates_and_unwritten_chunks_read_as_fill():
    st = MemoryStore()
    z = zarrx.create_array(st, shape=(8,), chunks=(4,), dtype="int16", fill_value=7,
                           filters=[ScaleOffset(offset=7, scale=3)], compressors=None)
    z[:4] = 7                                  # all fill: not stored
    assert st.get("c/0") is None
    z[4:] = [7, 8, 9, 10]
    assert np.frombuffer(st.get("c/1"), "<i2").tolist() == [0, 3, 6, 9]
    np.testing.assert_array_equal(z[:], [7, 7, 7, 7, 7, 8, 9, 10])
    z2 = zarrx.create_array(MemoryStore(), shape=(4,), chunks=(4,), dtype="int16",
                            fill_value=7, filters=[ScaleOffset(offset=7, scale=3)],
                            write_empty_chunks=True)
    z2[:] = 7
    assert z2.store.get("c/0") is not None and (z2[:] == 7).all()


def test_fill_value_the_codec_cannot_encode_is_refused_at_creation():
    with pytest.raises(MetadataError, match=re.escape(
            "/ scale_offset: the fill value cannot be encoded: (x - 0) * 2 = 400 is out of the "
            "range of uint8 for the value 200 of uint8 [0, 255] (offset 0, scale 2)")):
        zarrx.create_array(MemoryStore(), shape=(4,), chunks=(2,), dtype="uint8",
                           fill_value=200, filters=[{"name": "scale_offset",
                                                     "configuration": {"scale": 2}}])


@pytest.mark.parametrize("conf, msg", [
    ({"offset": 1, "factor": 2}, "zarr.json codecs[0].configuration.factor: unknown field; "
                                 "expected only 'offset', 'scale'"),
    ({"offset": [1]}, "zarr.json codecs[0].configuration.offset: expected a number or a string "
                      "(a fill value of the data type), found [1]"),
    ({"offset": "abc"}, "/ codecs[0].configuration.offset: expected a number, \"NaN\", "
                        "\"Infinity\", \"-Infinity\" or a hex bit pattern of 8 digits, found "
                        "'abc'"),
    ({"scale": 0}, "/ codecs[0].configuration.scale: expected a non-zero scale (decoding "
                   "divides by it), found 0"),
    ({"offset": 1.5}, "/ codecs[0].configuration.offset: expected an integer"),
])
def test_configuration_errors(conf, msg):
    dtype = "int32" if conf.get("offset") == 1.5 else "float32"
    st = MemoryStore()
    st.set("zarr.json", json.dumps(_doc(dtype, [{"name": "scale_offset",
                                                  "configuration": conf}, LE])).encode())
    with pytest.raises(MetadataError, match=re.escape(msg)):
        zarrx.open_array(st)[:]


def test_unsupported_data_type_is_refused():
    with pytest.raises(MetadataError, match=re.escape(
            "scale_offset is defined for integer and floating-point data types")):
        zarrx.create_array(MemoryStore(), shape=(4,), chunks=(2,), dtype="complex64",
                           filters=[ScaleOffset(scale=2)])


def test_codec_object_metadata_and_pickle():
    c = ScaleOffset(offset=5, scale=0.1)
    assert c.to_dict() == {"name": "scale_offset",
                           "configuration": {"offset": 5, "scale": 0.1}}
    assert ScaleOffset().to_dict() == {"name": "scale_offset"}
    assert pickle.loads(pickle.dumps(c)) == c
    with pytest.raises(TypeError, match=re.escape(
            "zarrx.codecs.ScaleOffset offset: expected a number or a string (a fill value of "
            "the data type), found [1]")):
        ScaleOffset(offset=[1])
    assert zarrx.codecs.CastValue is CastValue


def test_sharded_inner_chain_and_empty_inner_chunks():
    st = MemoryStore()
    z = zarrx.create_array(st, shape=(16,), chunks=(4,), shards=(8,), dtype="float32",
                           fill_value=-1.0, filters=[ScaleOffset(offset=-1, scale=2)],
                           compressors=None)
    codecs = json.loads(st.get("zarr.json"))["codecs"][0]["configuration"]["codecs"]
    assert codecs[0] == {"name": "scale_offset", "configuration": {"offset": -1, "scale": 2}}
    z[:6] = np.arange(6, dtype="f4")
    z[8:12] = -1.0                              # one inner chunk of fill: no shard stored
    assert sorted(st.list_prefix("c/")) == ["c/0"]
    shard = st.get("c/0")
    assert len(shard) == 2 * 16 + 4 + 2 * 16    # two inner chunks + index
    np.testing.assert_array_equal(z[:], [0, 1, 2, 3, 4, 5] + [-1.0] * 10)


@pytest.mark.parametrize("dtype, x, conf, why", [
    # ml_dtypes' conversions saturate these types at their largest value
    ("float4_e2m1fn", 6.0, {"scale": 2}, "(x - 0.0) * 2.0 is not representable in "
                                         "float4_e2m1fn for the value 6.0"),
    ("float6_e2m3fn", 6.0, {"scale": 2}, "(x - 0.0) * 2.0 is not representable in "
                                         "float6_e2m3fn for the value 6.0"),
    ("float4_e2m1fn", 6.0, {"offset": -1}, "(x - -1.0) * 1.0 is not representable in "
                                           "float4_e2m1fn for the value 6.0"),  # 7: a tie
    ("float8_e4m3fnuz", 240.0, {"scale": 2}, "(x - 0.0) * 2.0 is not representable in "
                                             "float8_e4m3fnuz for the value 240.0"),
])
def test_narrow_float_overflow_is_an_error_not_the_largest_value(dtype, x, conf, why):
    pytest.importorskip("ml_dtypes")
    z = zarrx.create_array(MemoryStore(), shape=(2,), chunks=(2,), dtype=dtype,
                           fill_value=1, filters=[ScaleOffset(**conf)], compressors=None)
    with pytest.raises(CodecError, match=re.escape(f"chunk 'c/0': scale_offset: {why}")):
        z[:] = [1.0, x]


@pytest.mark.parametrize("dtype, conf, field, why", [
    ("float4_e2m1fn", {"scale": "NaN"}, "scale", "it has no NaN), found 'NaN'"),
    ("float6_e3m2fn", {"offset": "-Infinity"}, "offset", "it has no infinities), found "
                                                          "'-Infinity'"),
    ("float4_e2m1fn", {"scale": 100}, "scale", "100 is out of the range of float4_e2m1fn "
                                               "[-6, 6]), found 100"),
    ("float8_e8m0fnu", {"offset": 1, "scale": 0.0001}, "scale", None),
])
def test_scalars_a_narrow_type_cannot_hold_are_refused(dtype, conf, field, why):
    pytest.importorskip("ml_dtypes")
    st = MemoryStore()
    st.set("zarr.json", json.dumps(_doc(dtype, [{"name": "scale_offset",
                                                  "configuration": conf}, LE], fill=1)).encode())
    if why is None:                 # rounded to the nearest value, as fill values are
        a = zarrx.open_array(st, mode="r+")
        a[:] = [2.0, 3.0, 2.0, 3.0]             # 0.0001 is held as 2**-13
        assert st.get("c/0") == bytes([127 - 13, 127 - 12] * 2)
        return
    with pytest.raises(MetadataError, match=re.escape(
            f"codecs[0].configuration.{field}: expected a value {dtype} holds ({why}")):
        zarrx.open_array(st)[:]


def test_float8_e8m0fnu_has_no_zero_but_a_missing_offset_is_the_identity():
    pytest.importorskip("ml_dtypes")
    st = MemoryStore()
    z = zarrx.create_array(st, shape=(3,), chunks=(3,), dtype="float8_e8m0fnu", fill_value=1,
                           filters=[ScaleOffset(scale=4)], compressors=None)
    z[:] = [1.0, 2.0, 0.5]
    assert st.get("c/0") == bytes([129, 130, 128])                  # 4, 8, 2
    assert z[:].astype(float).tolist() == [1.0, 2.0, 0.5]


@pytest.mark.parametrize("dtype", ["float32", "float4_e2m1fn", "float6_e3m2fn"])
def test_decoding_adds_the_offset_zero_in_the_types_arithmetic(dtype):
    # -0.0 / 2 + 0 is 0.0 in IEEE arithmetic, as zarr-python computes it
    pytest.importorskip("ml_dtypes")
    st, a = _open(_doc(dtype, [{"name": "scale_offset", "configuration": {"scale": 2}}, LE],
                       shape=(2,), chunks=(2,)))
    st.set("c/0", bytes(np.array([-0.0, 3.0]).astype(a.dtype).view("u1")))
    got = a[:].astype(np.float64)
    assert got.tolist() == [0.0, 1.5] and not np.signbit(got[0])
