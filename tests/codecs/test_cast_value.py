"""The zarr-extensions ``cast_value`` codec: each rounding mode and out-of-range rule against
hand-computed values (ties, negatives, int64 and uint64 extremes), NaN, infinities and signed
zero, the scalar map (first occurrence wins), the fill value checked through the cast, the
spec's examples, configuration errors with their exact messages."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

import zarrx
from zarrx.codecs import CastValue, ScaleOffset
from zarrx.errors import CodecError, MetadataError
from zarrx.store import MemoryStore


def _arr(dtype, target, fill=0, **conf):
    codec = CastValue(data_type=target, **conf)
    return zarrx.create_array(MemoryStore(), shape=(8,), chunks=(8,), dtype=dtype,
                              fill_value=fill, filters=[codec], compressors=None)


def _stored(z, target):
    return np.frombuffer(z.store.get("c/0"), dtype=np.dtype(target).newbyteorder("<"))


ROUND = [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -1.7, 1.2]
EXPECTED = {
    "nearest-even": [-2, -2, 0, 0, 2, 2, -2, 1],
    "towards-zero": [-2, -1, 0, 0, 1, 2, -1, 1],
    "towards-positive": [-2, -1, 0, 1, 2, 3, -1, 2],
    "towards-negative": [-3, -2, -1, 0, 1, 2, -2, 1],
    "nearest-away": [-3, -2, -1, 1, 2, 3, -2, 1],
}


@pytest.mark.parametrize("mode", list(EXPECTED))
def test_rounding_float_to_int(mode):
    z = _arr("float64", "int8", rounding=mode, scalar_map={"decode": [[0, 0.0]]})
    z[:] = ROUND
    assert _stored(z, "i1").tolist() == EXPECTED[mode]


FLOAT32_CASES = {   # float64 inputs between float32 neighbours (1, 1 + 2**-23)
    "nearest-even": [1.0, 1.0, 1 + 2**-22],
    "towards-zero": [1.0, 1.0, 1 + 2**-23],
    "towards-positive": [1 + 2**-23, 1 + 2**-23, 1 + 2**-22],
    "towards-negative": [1.0, 1.0, 1 + 2**-23],
    "nearest-away": [1.0, 1 + 2**-23, 1 + 2**-22],
}


@pytest.mark.parametrize("mode", list(FLOAT32_CASES))
def test_rounding_float64_to_float32(mode):
    c = CastValue(data_type="float32", rounding=mode)
    x = np.array([1 + 2**-25, 1 + 2**-24, 1 + 3 * 2**-24])      # below half, a tie, a tie
    got = c.encode(x)
    assert got.dtype == np.float32
    assert got.astype(np.float64).tolist() == FLOAT32_CASES[mode]
    assert c.encode(-x).astype(np.float64).tolist() == [
        -v for v in FLOAT32_CASES[{"towards-positive": "towards-negative",
                                   "towards-negative": "towards-positive"}.get(mode, mode)]]


@pytest.mark.parametrize("mode, expected", [
    ("nearest-even", [2**63, 2**53, 2**53 + 4]),
    ("towards-zero", [2**63 - 1024, 2**53, 2**53 + 2]),
    ("nearest-away", [2**63, 2**53 + 2, 2**53 + 4]),
])
def test_int64_to_float64_exact_beyond_2_53(mode, expected):
    c = CastValue(data_type="float64", rounding=mode)
    got = c.encode(np.array([2**63 - 1, 2**53 + 1, 2**53 + 3], dtype=np.int64))
    assert [int(v) for v in got] == expected


def test_uint64_above_2_63():
    c = CastValue(data_type="float64", rounding="towards-zero")
    assert int(c.encode(np.array([2**64 - 1], np.uint64))[0]) == 2**64 - 2048
    wrap = CastValue(data_type="int64", out_of_range="wrap")
    assert wrap.encode(np.array([2**63 + 5, 2**64 - 1], np.uint64)).tolist() == \
        [-(2**63) + 5, -1]
    clamp = CastValue(data_type="int64", out_of_range="clamp")
    assert clamp.encode(np.array([2**63 + 5, 7], np.uint64)).tolist() == [2**63 - 1, 7]
    with pytest.raises(CodecError, match=re.escape(
            "cast_value: cannot decode the value 18446744073709551615 of uint64 as int64: "
            "18446744073709551615 is out of the range of int64")):
        CastValue(data_type="uint64").decode(np.array([2**64 - 1], np.uint64),
                                             np.dtype(np.int64), (1,))


def test_out_of_range_spec_examples():
    x = np.array([128.0, 32768, 32769, -32769])
    assert CastValue(data_type="int8", out_of_range="clamp").encode(x[:1]).tolist() == [127]
    assert CastValue(data_type="int8", out_of_range="wrap").encode(x[:1]).tolist() == [-128]
    assert CastValue(data_type="int16", out_of_range="wrap").encode(x[1:]).tolist() == \
        [-32768, -32767, 32767]
    with pytest.raises(CodecError, match=re.escape(
            "cast_value: cannot encode the value 128 of float64 as int8: 128 is out of the "
            "range of int8 [-128, 127] (rounding 'nearest-even', out_of_range None, no "
            "scalar_map.encode entry for it)")):
        CastValue(data_type="int8").encode(x[:1])


def test_wrap_of_huge_floats_is_exact():
    c = CastValue(data_type="uint64", out_of_range="wrap")
    assert c.encode(np.array([1e30, -1e30])).tolist() == \
        [int(1e30) % 2**64, -int(1e30) % 2**64]


def test_clamp_to_infinity_for_float_targets():
    c = CastValue(data_type="float32", out_of_range="clamp")
    assert c.encode(np.array([1e40, -1e40])).tolist() == [np.inf, -np.inf]
    # rounding first: towards zero, 1e6 rounds to the largest float16 (in range)
    c = CastValue(data_type="float16", out_of_range="clamp", rounding="towards-zero")
    assert c.encode(np.array([1e6])).tolist() == [65504.0]
    # nearest: past 65504 + 16 (half the spacing at the top) is out of range, a tie too
    c = CastValue(data_type="float16", out_of_range="clamp")
    assert c.encode(np.array([1e6, 65519.0, 65520.0, -65520.0])).tolist() == \
        [np.inf, 65504.0, np.inf, -np.inf]
    with pytest.raises(CodecError, match=re.escape("1e+40 is out of the range of float32")):
        CastValue(data_type="float32").encode(np.array([1e40]))


def test_nan_inf_and_signed_zero():
    c = CastValue(data_type="float16")
    got = c.encode(np.array([np.nan, np.inf, -np.inf, -0.0, 0.0]))
    assert np.isnan(got[0]) and got[1:3].tolist() == [np.inf, -np.inf]
    assert np.signbit(got[3]) and not np.signbit(got[4])
    small = CastValue(data_type="float32", rounding="towards-zero").encode(np.array([-1e-300]))
    assert small[0] == 0 and np.signbit(small[0])
    with pytest.raises(CodecError, match=re.escape(
            "cast_value: cannot encode the value nan of float64 as uint8: NaN has no value in "
            "uint8")):
        CastValue(data_type="uint8", out_of_range="clamp").encode(np.array([np.nan]))
    with pytest.raises(CodecError, match=re.escape("inf has no value in int32")):
        CastValue(data_type="int32", out_of_range="clamp").encode(np.array([np.inf]))


def test_scalar_map_first_occurrence_wins():
    c = CastValue(data_type="uint8", scalar_map={"encode": [["NaN", 7], ["NaN", 9], [1.5, 3]],
                                                 "decode": [[7, "NaN"]]})
    assert c.encode(np.array([np.nan, 1.5, 2.0])).tolist() == [7, 3, 2]
    back = c.decode(np.array([7, 3], np.uint8), np.dtype(np.float64), (2,))
    assert np.isnan(back[0]) and back[1] == 3.0


def test_numpy_compatibility_example():
    c = CastValue(data_type="uint8", rounding="towards-zero", out_of_range="wrap",
                  scalar_map={"encode": [["NaN", 0], ["+Infinity", 0], ["-Infinity", 0]]})
    x = np.array([np.nan, np.inf, -np.inf, 3.7, -3.7, 300.9, -1.0])
    assert c.encode(x).tolist() == [0, 0, 0, 3, 253, 44, 255]


def test_nan_preserving_example_round_trips_with_its_fill():
    st = MemoryStore()
    z = zarrx.create_array(st, shape=(6,), chunks=(3,), dtype="float64", fill_value="NaN",
                           filters=[ScaleOffset(offset=-10, scale=0.1),
                                    CastValue(data_type="uint8", rounding="nearest-even",
                                              scalar_map={"encode": [["NaN", 0]],
                                                          "decode": [[0, "NaN"]]})],
                           compressors=None)
    z[:3] = [0.0, 2540.0, np.nan]
    assert st.get("c/0") == bytes([1, 255, 0])
    got = z[:]
    assert got[:2].tolist() == [0.0, 2540.0] and np.isnan(got[2:]).all()
    assert st.get("c/1") is None


def test_fill_value_must_survive_the_cast():
    with pytest.raises(MetadataError, match=re.escape(
            "/ cast_value: the fill value 0.25 does not survive the cast: encoded as 0 of "
            "uint8, it decodes as 0.0; expected a fill value the codec maps back to itself "
            "(add a scalar_map pair)")):
        _arr("float64", "uint8", fill=0.25)
    with pytest.raises(MetadataError, match=re.escape(
            "/ cast_value: the fill value nan cannot be cast: cannot encode the value nan of "
            "float64 as uint8: NaN has no value in uint8")):
        _arr("float64", "uint8", fill="NaN")


@pytest.mark.parametrize("target", ["bfloat16", "float8_e4m3", "float8_e5m2", "float4_e2m1fn",
                                    "float6_e3m2fn", "float8_e4m3fnuz", "int4", "uint2"])
def test_ml_types_round_trip_representable_values(target):
    pytest.importorskip("ml_dtypes")
    values = [0.0, 1.0, -1.0, 1.5, 0.5, -0.5] if not target.startswith(("int", "uint")) \
        else [0, 1, -1, 1, 0, -1]
    if target == "uint2":
        values = [0, 1, 2, 3, 0, 1]
    z = _arr("float32", target, fill=0)
    z[:6] = values
    assert z[:6].tolist() == values


def test_ml_type_rounding_ties_to_even():
    pytest.importorskip("ml_dtypes")
    c = CastValue(data_type="float4_e2m1fn", out_of_range="clamp")
    # float4_e2m1fn values: 0 0.5 1 1.5 2 3 4 6; 2.5 ties to 2 (even), 3.5 to 4, 5 to 4
    got = c.encode(np.array([2.5, 3.5, 5.0, -2.5, 7.0, 100.0, 0.25]))
    assert got.astype(np.float64).tolist() == [2.0, 4.0, 4.0, -2.0, 6.0, 6.0, 0.0]


@pytest.mark.parametrize("conf, msg", [
    ({}, "zarr.json codecs[0].configuration: missing required field 'data_type'"),
    ({"data_type": "uint8", "mode": 1}, "zarr.json codecs[0].configuration.mode: unknown field"),
    ({"data_type": "uint8", "rounding": "up"},
     "zarr.json codecs[0].configuration.rounding: expected one of 'nearest-even', "
     "'towards-zero', 'towards-positive', 'towards-negative', 'nearest-away', found 'up'"),
    ({"data_type": "float32", "out_of_range": "wrap"},
     "zarr.json codecs[0].configuration.out_of_range: 'wrap' is only defined for integer data "
     "types (two's complement), found data_type 'float32'"),
    ({"data_type": "uint8", "out_of_range": "saturate"},
     "zarr.json codecs[0].configuration.out_of_range: expected 'clamp' or 'wrap', found "
     "'saturate'"),
    ({"data_type": "string"}, "zarr.json codecs[0].configuration.data_type: expected an "
                              "integer or floating-point data type name"),
    ({"data_type": "uint8", "scalar_map": {"encode": [[1]]}},
     "zarr.json codecs[0].configuration.scalar_map.encode[0]: expected an [input, output] "
     "pair, found [1]"),
    ({"data_type": "uint8", "scalar_map": {"both": []}},
     "zarr.json codecs[0].configuration.scalar_map.both: unknown field"),
    ({"data_type": "uint8", "scalar_map": {"encode": [[1.0, 300]]}},
     "/ codecs[0].configuration.scalar_map.encode[0][1]: expected an integer in [0, 255]"),
])
def test_configuration_errors(conf, msg):
    doc = {"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "float32",
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
           "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
           "codecs": [{"name": "cast_value", "configuration": conf}, {"name": "bytes"}]}
    st = MemoryStore()
    st.set("zarr.json", json.dumps(doc).encode())
    with pytest.raises(MetadataError, match=re.escape(msg)):
        zarrx.open_array(st)[:]


def test_codec_object_round_trips_its_metadata():
    c = CastValue(data_type="uint8", out_of_range="wrap",
                  scalar_map={"encode": [["NaN", 0]]})
    assert c.to_dict() == {"name": "cast_value", "configuration": {
        "data_type": "uint8", "out_of_range": "wrap", "scalar_map": {"encode": [["NaN", 0]]}}}
    assert CastValue(data_type=np.dtype("int16")).data_type == "int16"
    assert CastValue(data_type="uint8") == CastValue(data_type="uint8", rounding="nearest-even")


def test_an_array_stored_with_a_lossy_fill_value_is_read():
    """zarr-python main writes one (it checks no round trip); zarrx reads it as zarr-python
    does: unwritten chunks as the fill value, written ones through the cast."""
    doc = {"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "float64",
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
           "chunk_key_encoding": {"name": "default"}, "fill_value": 0.25,
           "codecs": [{"name": "cast_value", "configuration": {"data_type": "uint8"}},
                      {"name": "bytes"}]}
    st = MemoryStore()
    st.set("zarr.json", json.dumps(doc).encode())
    st.set("c/1", bytes([3, 4]))
    assert zarrx.open_array(st)[:].tolist() == [0.25, 0.25, 3.0, 4.0]


def test_a_value_that_cannot_be_cast_is_named_with_its_chunk_in_batched_io():
    st = MemoryStore()
    z = zarrx.create_array(st, shape=(40,), chunks=(4,), dtype="int16", compressors=None,
                           filters=[CastValue(data_type="int8")])
    data = np.arange(40, dtype="i2")
    data[33] = 200
    with pytest.raises(CodecError, match=re.escape(
            "array '/' chunk 'c/8': cast_value: cannot encode the value 200 of int16 as "
            "int8")):
        z[:] = data
    z2 = zarrx.create_array(MemoryStore(), shape=(40,), chunks=(4,), dtype="int16",
                            compressors=None, filters=[ScaleOffset(scale=2)])
    z2[:] = np.arange(40, dtype="i2")
    z2.store.set("c/5", np.array([2, 4, 6, 7], "<i2").tobytes())
    with pytest.raises(CodecError, match=re.escape(
            "array '/' chunk 'c/5': scale_offset: x / 2 is not an integer for the value 7")):
        z2[:]


def test_data_type_as_zarr_python_data_type_objects_give_it():
    class UInt8:                     # what zarr-python's data type objects answer
        def to_json(self, zarr_format):
            return "uint8"
    assert CastValue(data_type=UInt8()).data_type == "uint8"
    assert CastValue(data_type={"name": "int16"}).data_type == "int16"


def test_scalar_map_values_a_narrow_type_cannot_hold_are_refused():
    # numpy's conversion makes NaN -0.0 and 100 6.0 in float4_e2m1fn
    pytest.importorskip("ml_dtypes")
    for pair, why in ((["NaN", "NaN"], "it has no NaN), found 'NaN'"),
                      ([100.0, 100], "100 is out of the range of float4_e2m1fn [-6, 6]), "
                                     "found 100")):
        c = CastValue(data_type="float4_e2m1fn", scalar_map={"encode": [pair]})
        with pytest.raises(MetadataError, match=re.escape(
                f"scalar_map.encode[0][1]: expected a value float4_e2m1fn holds ({why}")):
            c.encode(np.array([100.0, 1.0]))


def test_scalar_map_in_zarr_pythons_mapping_form():
    c = CastValue(data_type="uint8", scalar_map={"encode": {"NaN": 0}, "decode": {0: "NaN"}})
    assert c.to_dict()["configuration"]["scalar_map"] == {"encode": [["NaN", 0]],
                                                          "decode": [[0, "NaN"]]}
    assert c == CastValue(data_type="uint8", scalar_map={"encode": [["NaN", 0]],
                                                         "decode": [[0, "NaN"]]})
    assert c.encode(np.array([np.nan, 3.0])).tolist() == [0, 3]
    assert CastValue(data_type="uint8", scalar_map={"encode": None, "decode": [[0, 1]]}) \
        == CastValue(data_type="uint8", scalar_map={"decode": [[0, 1]]})    # None: absent


def test_directed_rounding_past_a_float_range_gives_its_largest_value():
    # rounding comes before out_of_range: towards zero, 70000 is 65504 in float16
    x = np.array([70000.0, -70000.0], dtype="f4")
    c = CastValue(data_type="float16", rounding="towards-zero")
    assert c.encode(x).tolist() == [65504.0, -65504.0]
    assert CastValue(data_type="float16", rounding="towards-negative",
                     out_of_range="clamp").encode(x).tolist() == [65504.0, -np.inf]
    with pytest.raises(CodecError, match=re.escape("70000 is out of the range of float16")):
        CastValue(data_type="float16").encode(x)
