"""Data types and fill values, continued: byte orders numpy does not cast, fill values given at
creation that the data type cannot hold, and the ``struct`` data type."""
from __future__ import annotations

import base64
import json
import re
import warnings

import numpy as np
import pytest

import zarrx
from zarrx.errors import DataTypeError, FillValueError
from zarrx.storage import MemoryStore

zarr = pytest.importorskip("zarr")


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("dtype", [">M8", ">m8"])
def test_v2_unit_less_times_are_stored_big_endian(tmp_path, dtype, order) -> None:
    """numpy casts a unit-less datetime64 / timedelta64 between byte orders without swapping
    its bytes: the chunks of a '>M8' array were stored little-endian and read back as other
    values."""
    path = tmp_path / "t.zarr"
    z = zarrx.create_array(str(path), shape=(3, 2), chunks=(3, 2), dtype=dtype, order=order,
                           zarr_format=2, compressors=None)
    x = np.arange(1, 7, dtype="i8").reshape(3, 2).view(dtype[1:])
    z[...] = x
    stored = (path / "0.0").read_bytes()
    want = (x if order == "C" else x.T).astype(">i8").tobytes()
    assert stored == want
    assert zarrx.open_array(str(path), mode="r")[...].tolist() == x.tolist()
    if dtype == ">m8":       # zarr-python 3.1.6 cannot read a unit-less datetime64 fill value
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert zarr.open_array(str(path), mode="r")[...].tolist() == x.tolist()


@pytest.mark.parametrize("dtype", ["M8", "m8"])
def test_v3_unit_less_times_with_a_big_endian_bytes_codec(tmp_path, dtype) -> None:
    path = tmp_path / "t.zarr"
    z = zarrx.create_array(str(path), shape=(3,), chunks=(3,), dtype=dtype, compressors=None,
                           serializer={"name": "bytes", "configuration": {"endian": "big"}})
    x = np.arange(1, 4, dtype="i8").view(dtype)
    z[...] = x
    assert (path / "c" / "0").read_bytes() == x.view("i8").astype(">i8").tobytes()
    assert zarrx.open_array(str(path), mode="r")[...].tolist() == x.tolist()


BAD_FILLS = [
    ("m8[s]", np.datetime64(1, "s"), "expected a timedelta64 or an integer for timedelta64[s], "
     "found np.datetime64('1970-01-01T00:00:01')"),
    ("M8[ns]", np.timedelta64(1, "s"), "expected a datetime64 or an integer for "
     "datetime64[ns], found np.timedelta64(1,'s')"),
    ("m8[Y]", np.timedelta64(1, "D"), "expected a timedelta64 numpy casts to timedelta64[Y] "
     "(casting='same_kind'), found np.timedelta64(1,'D')"),
    ("M8", np.datetime64("2020-01-01"), "expected 'NaT' or -9223372036854775808 (a datetime64 "
     "without a unit holds no date), found np.datetime64('2020-01-01')"),
    (str, b"\xff", "expected a str or UTF-8 encoded bytes, found b'\\xff'"),
    (str, "a\udcff", "expected a string that UTF-8 can encode (no lone surrogates), found "
     "'a\\udcff'"),
    ("U3", "a\udcff", "expected a string that UTF-8 can encode (no lone surrogates), found "
     "'a\\udcff'"),
    (bytes, "a\udcff", "expected bytes, or a str that UTF-8 can encode (no lone surrogates), "
     "found 'a\\udcff'"),
    ("S3", "a\udcff", "expected bytes, or a str that UTF-8 can encode (no lone surrogates), "
     "found 'a\\udcff'"),
    ([("a", "<i4"), ("b", "S2")], np.datetime64("2020-01-01"), "expected a record (one value "
     "per field), an integer or one item's bytes for [('a', '<i4'), ('b', 'S2')], found "
     "np.datetime64('2020-01-01')"),
]


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("dtype,fill,message", BAD_FILLS,
                         ids=["datetime-for-timedelta", "timedelta-for-datetime",
                              "days-into-years", "date-into-unit-less", "non-utf8-bytes",
                              "lone-surrogate", "lone-surrogate-fixed-length",
                              "lone-surrogate-bytes", "lone-surrogate-fixed-bytes",
                              "date-into-short-bytes-field"])
def test_fill_values_the_type_cannot_hold_are_refused_at_creation(tmp_path, dtype, fill,
                                                                   message, fmt) -> None:
    """A datetime was taken as a duration (and the reverse), a time was cast to a unit numpy
    does not cast it to (a day became 0 years; a date became a unit-less datetime64 that
    numpy cannot print), and text that is not UTF-8 was kept with surrogates (no chunk
    holding the fill value could be written, and zarr-python could not open the array; a
    fixed-length one was written as an escape, "\\udcff", that no UTF-8 text holds); text
    for bytes that UTF-8 cannot encode, and a date numpy cannot write into a bytes field,
    raised UnicodeEncodeError and RuntimeError."""
    path = tmp_path / "a.zarr"
    with pytest.raises(FillValueError, match=re.escape(f"array metadata fill_value: {message}")):
        zarrx.create_array(str(path), shape=(4,), chunks=(2,), dtype=np.dtype(dtype)
                           if isinstance(dtype, list) else dtype, fill_value=fill,
                           zarr_format=fmt)
    assert not path.exists()


@pytest.mark.parametrize("fmt", [2, 3])
def test_times_and_text_fill_values_that_fit_are_kept(tmp_path, fmt) -> None:
    z = zarrx.create_array(str(tmp_path / "d"), shape=(2,), dtype="m8[s]", zarr_format=fmt,
                           fill_value=np.timedelta64(1, "m"))
    assert z.fill_value == np.timedelta64(60, "s") and z[1] == np.timedelta64(60, "s")
    z = zarrx.create_array(str(tmp_path / "s"), shape=(2,), chunks=(1,), dtype=str,
                           zarr_format=fmt, fill_value="é".encode())
    z[0] = "x"
    assert z.fill_value == "é" and list(z[...]) == ["x", "é"]


@pytest.mark.parametrize("v3_type,numpy_type", [
    ({"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 1}}, "M8[s]"),
    ({"name": "structured", "configuration": {"fields": [["a", "int32"], ["b", "float64"]]}},
     [("a", "<i4"), ("b", "<f8")]),
    ({"name": "fixed_length_utf32", "configuration": {"length_bytes": 8}}, "U2"),
], ids=["datetime64", "structured", "fixed_length_utf32"])
def test_v3_data_type_objects_with_automatic_chunks(tmp_path, v3_type, numpy_type) -> None:
    """A data type given as its Zarr v3 JSON object went through numpy to size automatic
    chunks, which raised a bare ValueError ('entry not a 2- or 3- tuple')."""
    z = zarrx.create_array(str(tmp_path / "zx"), shape=(100_000,), dtype=v3_type)
    assert z.dtype == np.dtype(numpy_type)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = zarr.create_array(str(tmp_path / "zp"), shape=(100_000,), dtype=numpy_type)
    assert z.chunks == a.chunks


# -- struct and structured -----------------------------------------------------------------
STRUCT_TYPE = {"name": "struct", "configuration": {"fields": [
    {"name": "t", "data_type": {"name": "numpy.datetime64",
                                "configuration": {"unit": "s", "scale_factor": 1}}},
    {"name": "p", "data_type": {"name": "struct", "configuration": {"fields": [
        {"name": "x", "data_type": "float32"}, {"name": "y", "data_type": {"name": "int16"}}]}}},
]}}
STRUCT_NUMPY = np.dtype([("t", "M8[s]"), ("p", [("x", "f4"), ("y", "i2")])])


def _zarr_json(path) -> dict:
    with open(path / "zarr.json") as f:
        return json.load(f)


def test_struct_data_type_is_read_and_written_back(tmp_path) -> None:
    """The registered ``struct`` data type (fields as objects, the fill value as an object of
    the fields' fill values, nested structs) was refused as an unknown data type."""
    path = tmp_path / "s.zarr"
    path.mkdir()
    fill = {"t": "NaT", "p": {"x": "NaN", "y": -7}}
    doc = {"zarr_format": 3, "node_type": "array", "shape": [5], "data_type": STRUCT_TYPE,
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
           "chunk_key_encoding": {"name": "default"}, "fill_value": fill,
           "codecs": [{"name": "bytes", "configuration": {"endian": "big"}}]}
    (path / "zarr.json").write_text(json.dumps(doc))
    z = zarrx.open_array(str(path), mode="r+")
    assert z.dtype == STRUCT_NUMPY
    assert z.fill_value.tobytes() == np.array((np.datetime64("NaT"), (np.nan, -7)),
                                              STRUCT_NUMPY).tobytes()
    item = np.array((np.datetime64(5, "s"), (1.5, 3)), STRUCT_NUMPY)
    z[0] = item
    z.attrs["k"] = 1
    assert _zarr_json(path)["data_type"] == STRUCT_TYPE
    assert _zarr_json(path)["fill_value"] == fill
    assert (path / "c" / "0").read_bytes()[:14] == \
        item.astype(STRUCT_NUMPY.newbyteorder(">")).tobytes()
    got = zarrx.open_array(str(path), mode="r")[...]
    assert got[0].tobytes() == item.tobytes()
    assert got[4].tobytes() == z.fill_value.tobytes()


def test_struct_data_type_created_writes_an_object_fill_value(tmp_path) -> None:
    zarrx.create_array(str(tmp_path / "s"), shape=(3,), chunks=(2,), dtype=STRUCT_TYPE,
                           fill_value=(np.datetime64(3, "s"), (float("-inf"), 2)))
    assert _zarr_json(tmp_path / "s")["fill_value"] == {"t": 3, "p": {"x": "-Infinity",
                                                                      "y": 2}}
    assert zarrx.open_array(str(tmp_path / "s"))[2].tolist() == \
        (np.datetime64(3, "s"), (float("-inf"), 2))
    fill = {"t": "NaT", "p": {"x": "0x7fc00001", "y": -1}}     # or the JSON form itself
    z = zarrx.create_array(str(tmp_path / "j"), shape=(3,), dtype=STRUCT_TYPE, fill_value=fill)
    assert _zarr_json(tmp_path / "j")["fill_value"] == {"t": -2**63, "p": {"x": "0x7fc00001",
                                                                            "y": -1}}
    assert np.isnat(z.fill_value["t"]) and z.fill_value["p"]["y"] == -1
    with pytest.raises(FillValueError, match=re.escape(
            "array metadata fill_value.p: missing required field 'y' (the fill value gives "
            "every field's)")):
        zarrx.create_array(str(tmp_path / "k"), shape=(3,), dtype=STRUCT_TYPE,
                           fill_value={"t": 0, "p": {"x": 0}})


@pytest.mark.parametrize("sharded", [False, True], ids=["chunks", "sharded"])
def test_v3_structured_fill_value_is_in_the_bytes_codecs_byte_order(tmp_path, sharded) -> None:
    """A base64 ``structured`` fill value holds the item in the byte order of the ``bytes``
    codec (little endian without one), as the data type's specification has it: zarrx wrote
    and read it little-endian under a big-endian codec."""
    dt = np.dtype([("a", "<i4"), ("b", "<f8")])
    big = {"name": "bytes", "configuration": {"endian": "big"}}
    path = tmp_path / "s.zarr"
    kw = {"shards": (4,)} if sharded else {}
    z = zarrx.create_array(str(path), shape=(4,), chunks=(2,), dtype=dt, fill_value=(1, 2.5),
                           serializer=big, compressors=None, **kw)
    stored = np.array((1, 2.5), dt.newbyteorder(">")).tobytes()
    assert base64.b64decode(_zarr_json(path)["fill_value"]) == stored
    z[0] = (7, 8.0)
    got = zarrx.open_array(str(path), mode="r")
    assert got.fill_value.tolist() == (1, 2.5)
    assert got[...].tolist() == [(7, 8.0), (1, 2.5), (1, 2.5), (1, 2.5)]
    doc = _zarr_json(path)                          # another writer's spelling of the same
    doc["fill_value"] = base64.b64encode(stored).decode()
    (path / "zarr.json").write_text(json.dumps(doc))
    assert zarrx.open_array(str(path), mode="r").fill_value.tolist() == (1, 2.5)


@pytest.mark.parametrize("fmt", [2, 3])
def test_numpy_str_dtype_is_a_variable_length_string(tmp_path, fmt) -> None:
    """``np.dtype(str)`` (``<U0``) makes a variable-length string array, as in zarr-python;
    zarrx refused it as a fixed-length type of length 0."""
    z = zarrx.create_array(str(tmp_path / "zx"), shape=(2,), dtype=np.dtype(str),
                           zarr_format=fmt)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = zarr.create_array(str(tmp_path / "zp"), shape=(2,), dtype=np.dtype(str),
                              zarr_format=fmt)
    assert z.dtype == a.dtype
    assert z.metadata.data_type.name == "string" and z.fill_value == a.fill_value == ""


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("dtype", ["U", "<U0", "|S0", np.dtype("S"), "V"])
def test_fixed_size_types_without_a_length_are_refused(tmp_path, dtype, fmt) -> None:
    with pytest.raises(DataTypeError, match=re.escape(
            "dtype: expected a fixed-size type with a length ('S5', 'U3', 'V4'), or str for "
            f"variable-length strings, found {dtype!r}")):
        zarrx.create_array(str(tmp_path / "a"), shape=(2,), dtype=dtype, zarr_format=fmt)
    assert not (tmp_path / "a").exists()


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("dtype,fill,kind", [
    ("float8_e4m3fn", "Infinity", "infinities"), ("float8_e8m0fnu", float("-inf"), "infinities"),
    ("float4_e2m1fn", "NaN", "NaN"), ("float6_e3m2fn", float("nan"), "NaN"),
    ("float6_e2m3fn", float("inf"), "infinities")])
def test_non_finite_fill_values_a_float_type_cannot_hold_are_refused(tmp_path, dtype, fill,
                                                                      kind, fmt) -> None:
    """numpy casts a NaN or an infinity into a type without them as another value (NaN for
    float8_e4m3fn's infinity, -0.0 for float4_e2m1fn's NaN); the data type specifications
    do not support those constants there."""
    pytest.importorskip("ml_dtypes")
    with pytest.raises(FillValueError, match=re.escape(
            f"array metadata fill_value: expected a value {dtype} can hold (it has no {kind}), "
            f"found {fill!r}")):
        zarrx.create_array(str(tmp_path / "a"), shape=(2,), dtype=dtype, fill_value=fill,
                           zarr_format=fmt)
    z = zarrx.create_array(str(tmp_path / "b"), shape=(2,), dtype=dtype, fill_value=0.5,
                           zarr_format=fmt)
    assert z.fill_value == 0.5


@pytest.mark.parametrize("dtype", ["float8_e4m3fn", "float8_e8m0fnu", "float16", "bfloat16"])
def test_nan_fill_values_of_float_types_with_nan_are_kept(tmp_path, dtype) -> None:
    pytest.importorskip("ml_dtypes")
    z = zarrx.create_array(str(tmp_path / "a"), shape=(2,), dtype=dtype, fill_value="NaN")
    assert np.isnan(float(z.fill_value)) and np.isnan(float(z[0]))


@pytest.mark.parametrize("dtype,fill,want", [
    ("float32", np.float64(1e300), np.float32("inf")),
    ("float16", np.float32(-1e6), np.float16("-inf")),
    ("complex64", np.complex128(1e300 + 2j), np.complex64(complex(float("inf"), 2))),
    ("complex64", complex(-1e300, 0), np.complex64(complex(float("-inf"), 0))),
], ids=["np-float64", "np-float32", "np-complex128", "complex"])
def test_numpy_and_complex_fill_values_past_the_range_round_to_infinity(tmp_path, dtype,
                                                                          fill, want) -> None:
    """A Python float past a float type's range rounds to an infinity; a numpy float or a
    complex number was refused instead ('expected a fill value for float32'). zarr-python
    rounds them all."""
    z = zarrx.create_array(str(tmp_path / "a"), shape=(2,), dtype=dtype, fill_value=fill)
    assert z.fill_value == want and z[1] == want
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert zarr.open_array(str(tmp_path / "a"), mode="r").fill_value == want


@pytest.mark.parametrize("endian", ["little", "big"])
@pytest.mark.parametrize("name, code", [("complex_float32", "c8"), ("complex_float64", "c16")])
def test_complex_float_names_are_the_core_complex_types(name, code, endian) -> None:
    """zarr-extensions registers ``complex_float32`` / ``complex_float64`` (zarrs writes them)
    as the layouts of ``complex64`` / ``complex128``: they were refused as unknown."""
    doc = {"zarr_format": 3, "node_type": "array", "shape": [3], "data_type": name,
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
           "chunk_key_encoding": {"name": "default"}, "fill_value": ["NaN", -0.0],
           "codecs": [{"name": "bytes", "configuration": {"endian": endian}}]}
    store = MemoryStore({"zarr.json": json.dumps(doc).encode()})
    a = zarrx.open_array(store, mode="r+")
    assert a.dtype == np.dtype(code)
    a[0] = 1 + 2j
    order = "<" if endian == "little" else ">"
    want = np.array([1 + 2j, complex(np.nan, -0.0)], order + code)
    assert bytes(store.get("c/0")) == want.tobytes()
    assert a[...].tobytes() == np.concatenate([want, want[1:]]).astype(code).tobytes()
    a.attrs["k"] = 1                  # the document written back keeps the name
    assert json.loads(bytes(store.get("zarr.json")))["data_type"] == name
    b = zarrx.create_array(MemoryStore(), shape=(2,), dtype=name, fill_value=1j)
    assert b.metadata.data_type.json == name and b[...].tolist() == [1j, 1j]
    c = zarrx.create_array(MemoryStore(), shape=(2,), dtype=name, zarr_format=2)
    assert c.metadata.data_type.json == "<" + code


def test_v3_big_endian_fields_are_stored_in_the_codecs_byte_order(tmp_path) -> None:
    """zarr-python 3.1.6 stores such fields unswapped under a little-endian bytes codec (and
    reads them back byte-swapped); zarrx swaps them, so zarr-python reads what was written."""
    dtype = np.dtype([("a", ">i2"), ("b", "<f8")])
    x = np.array([(1, 1.5), (-2, -0.0)], dtype)
    path = str(tmp_path / "s.zarr")
    a = zarrx.create_array(path, shape=(2,), chunks=(2,), dtype=dtype, compressors=None)
    a[...] = x
    doc = json.loads((tmp_path / "s.zarr" / "zarr.json").read_text())
    assert doc["codecs"] == [{"name": "bytes", "configuration": {"endian": "little"}}]
    assert (tmp_path / "s.zarr" / "c" / "0").read_bytes() == x.astype(
        [("a", "<i2"), ("b", "<f8")]).tobytes()
    assert a[...].tolist() == x.tolist()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert zarr.open_array(path, mode="r")[...].tolist() == x.tolist()
