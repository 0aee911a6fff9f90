"""Fill value arguments numpy would cast into another value are refused, naming the field:
a float for a fixed-width bytes type (refused by zarr-python too), a number whose text a
fixed-width text type would cut short, a fractional float for an integer field of a
structured type (refused for a plain integer type)."""
from __future__ import annotations

import datetime
import re
import warnings

import numpy as np
import pytest

import zarrx
from zarrx.errors import FillValueError, FillValueOverflowError

zarr = pytest.importorskip("zarr")

STRUCT = [("a", "i4"), ("b", "f8")]

REFUSED = [
    ("S3", -np.inf, "fill_value: expected bytes, a str or an integer for |S3, found -inf"),
    ("S3", np.nan, "expected bytes, a str or an integer for |S3, found nan"),
    ("S3", 1.5, "expected bytes, a str or an integer for |S3, found 1.5"),
    ("S1", np.float32(2.5), "for |S1, found np.float32(2.5)"),
    ("S3", 1 + 2j, "for |S3, found (1+2j)"),
]


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("dtype,fill,want", REFUSED, ids=[repr(c[1]) for c in REFUSED])
def test_a_float_for_fixed_width_bytes_is_refused_as_in_zarr_python(fmt, dtype, fill, want):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(TypeError):
            zarr.create_array({}, shape=(2,), dtype=dtype, fill_value=fill, zarr_format=fmt)
    store: dict = {}
    with pytest.raises(FillValueError, match=re.escape(want)) as info:
        zarrx.create_array(store, shape=(2,), dtype=dtype, fill_value=fill, zarr_format=fmt)
    assert isinstance(info.value, TypeError)
    assert store == {}


CUT = [("S3", 12345, "|S3 (at most 3 characters, not 5"),
       ("U3", -np.inf, "<U3 (at most 3 characters, not 4"),
       ("U3", True, "<U3 (at most 3 characters, not 4"),
       ("U2", np.int64(-10), "<U2 (at most 2 characters, not 3")]


@pytest.mark.parametrize("dtype,fill,want", CUT, ids=[repr(c[1]) for c in CUT])
def test_a_number_cut_short_by_a_text_type_is_refused(dtype, fill, want):
    with pytest.raises(FillValueError, match=re.escape(f"expected a number whose text fits in "
                                                       f"{want}")):
        zarrx.create_array({}, shape=(2,), dtype=dtype, fill_value=fill)


@pytest.mark.parametrize("dtype,fill,want", [("S3", 12, b"12"), ("S3", np.int64(5), b"5"),
                                             ("S4", True, b"True"), ("U3", 1.5, "1.5"),
                                             ("U3", "abcd", "abc"), ("S2", b"xyz", b"xy")])
def test_what_fits_is_taken(dtype, fill, want):
    a = zarrx.create_array({}, shape=(2,), dtype=dtype, fill_value=fill)
    assert a.fill_value == want
    assert zarrx.open_array(a.store, mode="r").fill_value == want


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("fill", [(1.5, 2.0), [np.float64(-0.5), 2], np.array((1.5, 2.0),
                                                                              dtype="f8,f8")])
def test_a_fractional_float_for_an_integer_field_is_refused(fmt, fill):
    plain = "fill_value: expected an integer in [-2147483648, 2147483647]"
    with pytest.raises(FillValueError, match=re.escape(plain)):
        zarrx.create_array({}, shape=(2,), dtype="i4", fill_value=1.5, zarr_format=fmt)
    with pytest.raises(FillValueError, match=r"fill_value\.a: expected an integer for int32, "
                                             r"found .*(1\.5|-0\.5)"):
        zarrx.create_array({}, shape=(2,), dtype=STRUCT, fill_value=fill, zarr_format=fmt)


@pytest.mark.parametrize("fill,want", [((2**40, 1.0), "found 1099511627776"),
                                       ((-np.inf, 1.0), "found -inf")])
def test_an_integer_field_out_of_range_is_an_overflow_error_as_in_zarr_python(fill, want):
    with pytest.raises(OverflowError):
        zarr.create_array({}, shape=(2,), dtype=STRUCT, fill_value=fill)
    with pytest.raises(FillValueOverflowError,
                       match=re.escape(f"fill_value.a: expected an integer in "
                                       f"[-2147483648, 2147483647], {want}")):
        zarrx.create_array({}, shape=(2,), dtype=STRUCT, fill_value=fill)


def test_fields_are_checked_as_their_types_and_whole_floats_are_taken():
    nested = [("s", [("x", "u1"), ("t", "S2")]), ("f", "f4")]
    with pytest.raises(FillValueError, match=re.escape("fill_value.s.t: expected bytes")):
        zarrx.create_array({}, shape=(2,), dtype=nested, fill_value=((1, 0.5), 1.0))
    a = zarrx.create_array({}, shape=(2,), dtype=STRUCT, fill_value=(3.0, 0.5))
    assert a.fill_value.tolist() == (3, 0.5)
    b = zarrx.create_array({}, shape=(2,), dtype=nested, fill_value=((True, 42), 1))
    assert b.fill_value.tolist() == ((1, b"42"), 1.0)


@pytest.mark.parametrize("src,fill,dtype,want", [
    ("f8", -np.inf, "S3", "expected bytes, a str or an integer for |S3, found -inf"),
    ("f8", 1.5, "S3", "expected bytes, a str or an integer for |S3, found 1.5"),
    ("i4", 12345, "U3", "<U3 (at most 3 characters, not 5")])
def test_a_like_copy_refuses_a_source_fill_value_its_text_type_would_change(src, fill, dtype,
                                                                            want):
    a = zarrx.create_array({}, shape=(2,), dtype=src, fill_value=fill)
    with pytest.raises(FillValueError, match=re.escape(want)):
        zarrx.full_like(a, dtype=dtype, store={})
    assert zarrx.full_like(a, dtype=dtype, fill_value="x", store={}).fill_value in ("x", b"x")


def test_a_like_copy_converts_what_fits_as_a_write_does():
    a = zarrx.create_array({}, shape=(2,), dtype="f8", fill_value=1.5)
    assert zarrx.full_like(a, dtype="U3", store={}).fill_value == "1.5"
    assert zarrx.full_like(a, dtype="i4", store={}).fill_value == 1


@pytest.mark.parametrize("dtype,fill,want", [
    ("S30", np.datetime64(1, "s"), "expected bytes, a str or an integer for |S30"),
    ("S30", np.timedelta64(5, "ms"), "expected bytes, a str or an integer for |S30"),
    ("U4", np.datetime64(1, "s"), "expected a date or duration whose text fits in <U4"),
    ("M8[s]", np.float64(2.5), "expected a datetime64 or an integer for datetime64[s]"),
    ("m8[ms]", np.complex64(1j), "expected a timedelta64 or an integer for timedelta64[ms]")])
def test_dates_are_not_text_nor_floats_dates(dtype, fill, want):
    if dtype[0] in "SMm":
        with pytest.raises(TypeError):      # zarr-python refuses them too
            zarr.create_array({}, shape=(2,), dtype=dtype, fill_value=fill)
    with pytest.raises(FillValueError, match=re.escape(want)):
        zarrx.create_array({}, shape=(2,), dtype=dtype, fill_value=fill)


def test_a_date_whose_text_fits_is_taken_as_text():
    a = zarrx.create_array({}, shape=(2,), dtype="U30", fill_value=np.timedelta64(5, "ms"))
    assert a.fill_value == "5 milliseconds"


NUMPY_INTS = [(dtype, t(v)) for dtype in ("S3", "U3", "M8[s]", "m8[ms]", "M8[D]")
              for t in (np.int8, np.uint8, np.int64, np.uint64) for v in (0, 7, 100)]


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("dtype,fill", NUMPY_INTS, ids=[f"{d}-{f!r}" for d, f in NUMPY_INTS])
def test_a_numpy_integer_stores_what_the_python_integer_stores(fmt, dtype, fill):
    # zarr-python 3.1.6 refuses numpy integers for these types (it checks for int), and takes
    # the Python integer; zarrx takes both, to the same stored value (docs/guide/migrating.md)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        zarr.create_array({}, shape=(2,), dtype=dtype, fill_value=int(fill), zarr_format=fmt)
    docs = []
    for value in (fill, int(fill)):
        store: dict = {}
        a = zarrx.create_array(store, shape=(2,), dtype=dtype, fill_value=value,
                               zarr_format=fmt)
        docs.append((a.metadata.to_dict()["fill_value"], a[...].tobytes()))
    assert docs[0] == docs[1]


RAW_REFUSED = [3, np.int16(3), np.uint8(1), np.True_, True, 1.5, np.float16(1.0),
               np.complex64(1j), np.datetime64(1, "s"), np.timedelta64(2, "ms"),
               np.array(3, np.uint16)]


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("fill", RAW_REFUSED, ids=[repr(f) for f in RAW_REFUSED])
def test_a_number_or_date_for_a_raw_type_is_refused_as_in_zarr_python(fmt, fill):
    # numpy copied a numpy number's bytes in (np.int16(3) for V2 was b"\x03\x00"), where a
    # Python number was refused
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(TypeError):
            zarr.create_array({}, shape=(2,), dtype="V2", fill_value=fill, zarr_format=fmt)
    shown = repr(fill[()] if isinstance(fill, np.ndarray) else fill)
    for dtype, at in [("V2", "fill_value"), ([("a", "V2"), ("b", "i2")], "fill_value.a")]:
        value = fill if isinstance(dtype, str) else (fill, 1)
        with pytest.raises(FillValueError, match=re.escape(
                f"{at}: expected bytes or a base64 string for |V2, found {shown}")):
            zarrx.create_array({}, shape=(2,), dtype=dtype, fill_value=value, zarr_format=fmt)
    for value, stored in [(b"ab", b"ab"), (np.void(b"ab"), b"ab"), ("AQI=", b"\x01\x02")]:
        a = zarrx.create_array({}, shape=(2,), dtype="V2", fill_value=value, zarr_format=fmt)
        assert a[...].tobytes() == stored * 2


@pytest.mark.parametrize("dtype,fill,unit", [("M8", "2020-01-01", "D"),
                                             ("M8", datetime.datetime(2020, 1, 1), "us"),
                                             ("M8", "5", "Y"),
                                             ("m8", datetime.timedelta(days=1), "us")])
def test_a_date_or_duration_for_a_type_without_a_unit_is_refused(dtype, fill, unit):
    # numpy gives such a value a unit; its count of that unit was stored, a number no reader
    # can take for that date (2020-01-01 was stored as 18262); zarr-python refuses it
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises((TypeError, ValueError)):
            zarr.create_array({}, shape=(2,), dtype=dtype, fill_value=fill)
    kind = "date" if dtype == "M8" else "duration"
    name = "datetime64" if dtype == "M8" else "timedelta64"
    with pytest.raises(FillValueError, match=re.escape(
            f"fill_value: expected 'NaT' or an integer for {name} (a {kind} of unit {unit!r} "
            f"has no value in a type without a unit), found {fill!r}")):
        zarrx.create_array({}, shape=(2,), dtype=dtype, fill_value=fill)
    for value in ("NaT", 5):                    # as a stored document gives them
        a = zarrx.create_array({}, shape=(2,), dtype=dtype, fill_value=value)
        assert a[...].view("i8").tolist() == [np.iinfo("i8").min if value == "NaT" else 5] * 2
