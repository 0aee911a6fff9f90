"""A fill value out of the range of an integer-backed type is an ``OverflowError``, as in
zarr-python: infinity for an integer type, an integer beyond int64 for dates and durations."""
from __future__ import annotations

import re
import warnings

import pytest

import zarrx
from zarrx.errors import FillValueOverflowError

zarr = pytest.importorskip("zarr")

CASES = [("i1", float("inf"), "an integer in [-128, 127], found inf"),
         ("u8", float("-inf"), "an integer in [0, 18446744073709551615], found -inf"),
         ("M8[s]", 2**63, "an integer in [-9223372036854775808, 9223372036854775807], found "
                          "9223372036854775808"),
         ("m8[ms]", -2**63 - 1, "an integer in [-9223372036854775808, 9223372036854775807], "
                                "found -9223372036854775809")]


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("dtype,fill,want", CASES, ids=[c[0] for c in CASES])
def test_a_fill_value_out_of_range_is_an_overflow_error_as_in_zarr_python(fmt, dtype, fill,
                                                                          want):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(OverflowError):
            zarr.create_array({}, shape=(2,), dtype=dtype, fill_value=fill, zarr_format=fmt)
    store: dict = {}
    with pytest.raises(FillValueOverflowError, match=re.escape(want)):
        zarrx.create_array(store, shape=(2,), dtype=dtype, fill_value=fill, zarr_format=fmt)
    assert store == {}


@pytest.mark.parametrize("dtype,fill", [("M8[s]", 2**63 - 1), ("m8[ms]", -2**63 + 1)])
def test_the_ends_of_the_int64_range_are_dates_and_durations(dtype, fill):
    a = zarrx.create_array({}, shape=(2,), dtype=dtype, fill_value=fill)
    assert a.fill_value.astype("i8") == fill
