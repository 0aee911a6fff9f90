"""Fill values given as scalars numpy would turn into another value of the type are refused,
as zarr-python refuses them; those zarr-python takes are taken to the value it stores."""
from __future__ import annotations

import datetime
import re
import warnings

import numpy as np
import pytest

import zarrx
from zarrx.errors import FillValueError, FillValueOverflowError

zarr = pytest.importorskip("zarr")

STRUCT = [("a", "i2"), ("b", "f4")]


def _zarr_refuses(dtype, fill, fmt=3):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises((TypeError, ValueError)):
            zarr.create_array({}, shape=(2,), dtype=dtype, fill_value=fill, zarr_format=fmt)


SCALAR_FOR_STRUCT = [1.5, 2.0, np.float64(np.nan), np.longdouble(1.5), np.complex64(1j),
                     np.datetime64("NaT"), np.timedelta64(5, "ms")]


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("fill", SCALAR_FOR_STRUCT, ids=[repr(f) for f in SCALAR_FOR_STRUCT])
def test_a_float_or_date_for_a_structured_type_is_refused(fmt, fill):
    # numpy cast it into every field: np.float64(nan) was stored as (0, nan), 1.5 as (1, 1.5)
    _zarr_refuses(STRUCT, fill, fmt)
    with pytest.raises(FillValueError, match=re.escape(
            "fill_value: expected a record (one value per field), an integer or one item's "
            "bytes for [('a', '<i2'), ('b', '<f4')], found ")):
        zarrx.create_array({}, shape=(2,), dtype=STRUCT, fill_value=fill, zarr_format=fmt)


@pytest.mark.parametrize("fill", [2**40, np.int64(-2**40), np.uint64(2**64 - 1)])
def test_an_integer_a_field_cannot_hold_is_an_overflow_error(fill):
    # a numpy integer wrapped (np.int64(-2**40) was stored as (0, -1.1e12))
    with pytest.raises(FillValueOverflowError, match=re.escape(
            f"fill_value: expected a fill value for [('a', '<i2'), ('b', '<f4')], found "
            f"{int(fill)}")):
        zarrx.create_array({}, shape=(2,), dtype=STRUCT, fill_value=fill)


@pytest.mark.parametrize("fmt", [2, 3])
def test_integers_and_one_items_bytes_for_a_structured_type_as_zarr_python_stores_them(fmt):
    item = np.array((1, 1.0), dtype=STRUCT).tobytes()
    for fill in (5, np.int8(5), item):
        want = zarr.create_array({}, shape=(2,), dtype=STRUCT, fill_value=fill if not
                                 isinstance(fill, np.integer) else int(fill),
                                 zarr_format=fmt)[...].tobytes()
        got = zarrx.create_array({}, shape=(2,), dtype=STRUCT, fill_value=fill,
                                 zarr_format=fmt)
        assert got[...].tobytes() == want
        assert zarrx.open_array(got.store, mode="r")[...].tobytes() == want
    with pytest.raises(FillValueError, match=re.escape(
            "fill_value: expected bytes of one item of [('a', '<i2'), ('b', '<f4')] (6 bytes), "
            "found 5 bytes")):
        zarrx.create_array({}, shape=(2,), dtype=STRUCT, fill_value=item[:5], zarr_format=fmt)


OTHER_FOR_BYTES = [{"a": 1}, datetime.date(2020, 1, 1), Ellipsis, np.longdouble(1.25)]


@pytest.mark.parametrize("fill", OTHER_FOR_BYTES, ids=[repr(f) for f in OTHER_FOR_BYTES])
def test_other_objects_for_fixed_width_bytes_are_refused(fill):
    # numpy stored their text cut short (b"{'a", b"202", b"1.2")
    _zarr_refuses("S3", fill)
    with pytest.raises(FillValueError, match=re.escape(
            f"fill_value: expected bytes, a str or an integer for |S3, found {fill!r}")):
        zarrx.create_array({}, shape=(2,), dtype="S3", fill_value=fill)


@pytest.mark.parametrize("dtype,shown", [("M8[s]", "datetime64"), ("m8[ms]", "timedelta64"),
                                         ("V2", None)])
def test_a_long_double_is_refused_as_a_float_is(dtype, shown):
    # np.longdouble(1.25) was stored as 1 for dates and durations, and as b"\x00\x00" for V2
    _zarr_refuses(dtype, np.longdouble(1.25))
    want = f"a {shown} or an integer for" if shown else "bytes or a base64 string for"
    with pytest.raises(FillValueError, match=re.escape(f"fill_value: expected {want}")):
        zarrx.create_array({}, shape=(2,), dtype=dtype, fill_value=np.longdouble(1.25))


@pytest.mark.parametrize("fill,text", [(np.timedelta64(5, "ms"), "5 milliseconds"),
                                       (np.datetime64(1, "s"), "1970-01-01T00:00:01")])
def test_a_date_or_duration_for_strings_is_numpys_text(fill, text):
    # a duration was stored as Python's text of it ('0:00:00.005000'), where a fixed-width
    # text type and zarr-python hold numpy's ('5 milliseconds')
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert zarr.create_array({}, shape=(1,), dtype=str, fill_value=fill).fill_value == text
    assert zarrx.create_array({}, shape=(1,), dtype=str, fill_value=fill).fill_value == text
    assert zarrx.create_array({}, shape=(1,), dtype="U30", fill_value=fill).fill_value == text


@pytest.mark.parametrize("name,fill", [("float8_e8m0fnu", 0.0), ("float8_e8m0fnu", 0),
                                       ("float8_e8m0fnu", -1), ("float8_e4m3fn", 1e10),
                                       ("float8_e4m3fnuz", "1e10"),
                                       ("float8_e8m0fnu", np.float16(0))])
def test_a_number_an_ml_float_type_would_hold_as_nan_is_refused(name, fill):
    # float8_e8m0fnu has no zero and no negative values, float8_e4m3fn no infinities: numpy
    # made these NaN, stored as "NaN", where NaN given for a type without it is refused
    pytest.importorskip("ml_dtypes")
    with pytest.raises(FillValueError, match=re.escape(
            f"fill_value: expected a value {name} can hold (it would hold NaN for this "
            f"number), found {fill!r}")):
        zarrx.create_array({}, shape=(2,), dtype=name, fill_value=fill)
    assert zarrx.create_array({}, shape=(2,), dtype=name, fill_value=1.0).fill_value == 1
    for big in (1e300, 10**400):            # past the range of a type with infinities
        assert zarrx.create_array({}, shape=(2,), dtype="bfloat16",
                                  fill_value=big).fill_value == np.inf
