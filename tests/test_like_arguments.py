"""``zeros_like``, ``full_like``, ... with keywords that override the source's settings.

A ``dtype=`` other than the source's takes that type's own filters and serializer (the
source's compressors and layout are kept) and, for ``full_like`` and ``empty_like``, the
source's fill value converted to the new type as a write converts a value.
"""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import zarrx
from zarrx.errors import FillValueError, FillValueOverflowError

zarr = pytest.importorskip("zarr")


def _source(lib, **kw):
    a = lib.create_array({}, shape=(4,), chunks=(2,), **kw)
    return a


@pytest.mark.parametrize("fn", ["zeros_like", "ones_like", "full_like", "empty_like"])
@pytest.mark.parametrize("shards", [None, (4,)], ids=["chunks", "shards"])
def test_a_string_array_like_of_another_dtype_takes_that_types_codecs(fn, shards):
    src = _source(zarrx, dtype=str, fill_value="7", shards=shards,
                  compressors=zarrx.codecs.Zstd(level=3))
    b = getattr(zarrx, fn)(src, dtype="i4")
    assert b.dtype == np.dtype("i4") and b.shards == src.shards
    assert b.serializer == zarrx.codecs.Bytes(endian="little")
    assert b.compressors == (zarrx.codecs.Zstd(level=3),)
    b[...] = [1, 2, 3, 4]
    assert b[...].tolist() == [1, 2, 3, 4]
    if fn in ("full_like", "empty_like"):
        assert b.fill_value == 7


def test_zeros_like_of_another_dtype_reads_as_zarr_python():
    got = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lib in (zarr, zarrx):
            got[lib.__name__] = lib.zeros_like(_source(lib, dtype=str), dtype="i4")[...]
    np.testing.assert_array_equal(got["zarrx"], got["zarr"])
    assert got["zarrx"].dtype == got["zarr"].dtype


@pytest.mark.parametrize("fill,dtype", [(1.5, "i4"), (2.0, "bool"), (-3.25, "f2"),
                                        (3.0, "c8")])
def test_the_source_fill_value_converts_to_the_new_dtype_as_in_zarr_python(fill, dtype):
    got = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lib in (zarr, zarrx):
            b = lib.full_like(_source(lib, dtype="f4", fill_value=fill), dtype=dtype)
            got[lib.__name__] = (b.fill_value, b.dtype, b[...].tolist())
    assert got["zarrx"] == got["zarr"]


def test_the_source_fill_value_converts_to_text_and_dates():
    b = zarrx.full_like(_source(zarrx, dtype="i2", fill_value=7), dtype=str)
    assert b.fill_value == "7" and b[...].tolist() == ["7"] * 4
    b = zarrx.empty_like(_source(zarrx, dtype=str, fill_value="xy"), dtype="S3")
    assert b.fill_value == b"xy"
    b = zarrx.full_like(_source(zarrx, dtype="M8[s]", fill_value=5), dtype="i8")
    assert b.fill_value == 5
    b = zarrx.full_like(_source(zarrx, dtype="i8", fill_value=5), dtype="M8[s]")
    assert b[0] == np.datetime64(5, "s")


@pytest.mark.parametrize("kw,dtype,cls,why", [
    (dict(dtype="f4", fill_value=float("nan")), "i4", FillValueError,
     "cannot convert float NaN to integer"),
    (dict(dtype="i2", fill_value=300), "i1", FillValueOverflowError,
     "Python integer 300 out of bounds for int8"),
    (dict(dtype=str, fill_value="xy"), "f8", FillValueError,
     "could not convert string to float: 'xy'"),
])
def test_a_source_fill_value_the_new_dtype_cannot_hold_is_refused_naming_both(kw, dtype, cls,
                                                                               why):
    src = _source(zarrx, **kw)
    store: dict = {}
    with pytest.raises(cls, match=re.escape(
            f"*_like: the fill value of the source array ({src.fill_value!r}, of dtype "
            f"{src.dtype}) cannot be converted to dtype {dtype!r} ({why}); give fill_value=")):
        zarrx.full_like(src, dtype=dtype, store=store)
    assert store == {}                      # refused before anything is written
    assert zarrx.full_like(src, dtype=dtype, fill_value=1).fill_value == 1
    assert zarrx.zeros_like(src, dtype=dtype).fill_value == 0


def test_a_dtype_equal_to_the_sources_keeps_its_codecs_and_byte_order():
    src = _source(zarrx, dtype=">i2", fill_value=3, filters=[zarrx.codecs.Transpose(order=(0,))])
    for dtype in (">i2", "<i2", "int16"):
        b = zarrx.full_like(src, dtype=dtype)
        assert (b.filters, b.serializer, b.fill_value) == (src.filters, src.serializer, 3)


def test_a_v2_array_like_keeps_its_order_as_zarr_python_takes_it():
    src = zarrx.create_array({}, shape=(4, 3), dtype="i4", zarr_format=2, order="F",
                             filters=[{"id": "delta", "dtype": "<i4"}])
    b = zarrx.zeros_like(src)
    assert (b.order, b.filters) == ("F", src.filters)
    b = zarrx.zeros_like(src, dtype="f8")          # the delta filter is made for int32
    assert (b.order, b.filters) == ("F", ())
    assert zarrx.zeros_like(src, order="C").order == "C"


def test_a_transpose_filter_is_kept_with_another_dtype():
    t = zarrx.codecs.Transpose(order=(1, 0))
    src = zarrx.create_array({}, shape=(4, 3), dtype=str, filters=[t])
    b = zarrx.ones_like(src, dtype="u1")
    assert b.filters == (t,) and isinstance(b.serializer, zarrx.codecs.Bytes)
    assert b[...].tolist() == [[1] * 3] * 4


def test_group_like_methods_take_another_dtype():
    g = zarrx.open_group({}, mode="w")
    src = g.create_array("s", shape=(3,), dtype=str, fill_value="2")
    assert g.zeros_like(name="z", data=src, dtype="i4")[...].tolist() == [0, 0, 0]
    assert g.full_like(name="f", data=src, dtype="f8").fill_value == 2.0



@pytest.mark.parametrize("fn", ["zeros_like", "full_like"])
def test_a_sharded_array_like_in_zarr_v2_takes_its_inner_chunks(fn):
    src = _source(zarrx, dtype="i4", shards=(4,), fill_value=3)
    b = getattr(zarrx, fn)(src, zarr_format=2)
    assert (b.zarr_format, b.chunks, b.shards) == (2, (2,), None)
    b[...] = [1, 2, 3, 4]
    assert b[...].tolist() == [1, 2, 3, 4]
    assert zarrx.zeros_like(src).shards == (4,)
