"""The fill value of a fixed-length bytes type (``S<n>``, v3 ``null_terminated_bytes``) is the
value numpy reads from an item: stored padded to the item size, read without trailing NULs."""
from __future__ import annotations

import warnings

import pytest

import zarrx

zarr = pytest.importorskip("zarr")


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("fill", [b"xy", b"", b"a\x00b", b"abc"])
def test_the_fill_value_is_the_value_numpy_reads_as_in_zarr_python(fmt, fill):
    """Stored padded to the item size (``eHkA``), read as numpy reads an item: without the
    trailing NULs, equal to what was given, as in zarr-python."""
    got = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lib in (zarr, zarrx):
            a = lib.create_array({}, shape=(2,), dtype="S3", fill_value=fill, zarr_format=fmt)
            again = lib.open_array(a.store, mode="r")
            got[lib.__name__] = (a.fill_value, again.fill_value, a[...].tolist())
    assert got["zarrx"] == got["zarr"]
    assert got["zarrx"][0] == fill and bytes(got["zarrx"][1]) == fill
    src = zarrx.create_array({}, shape=(2,), dtype="S3", fill_value=fill, zarr_format=fmt)
    assert zarrx.full_like(src, dtype="S5").fill_value == fill
