"""A Zarr v3 ``_FillValue`` attribute (and ``dimension_names``) as stored, by any writer or
edited by hand, is read by engine "zarrx" as engine "zarr" reads it, or refused with a
MetadataError naming it: never another exception."""
from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
pytest.importorskip("zarr")

from xarray_checks import read  # noqa: E402

from zarrx.errors import MetadataError  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _stored(path, dtype, fill):
    ds = xr.Dataset({"i": ("t", np.array([1, 2], dtype))})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds.to_zarr(path, zarr_format=3, consolidated=False)
    doc = path / "i" / "zarr.json"
    meta = json.loads(doc.read_text())
    meta["attributes"]["_FillValue"] = fill
    doc.write_text(json.dumps(meta))


@pytest.mark.parametrize("dtype, fill", [("i2", 10**30), ("u8", 2**64), ("i8", -2**64),
                                         ("i2", 70000)],
                         ids=["i2-1e30", "u8-2**64", "i8--2**64", "i2-70000"])
def test_an_integer_fill_value_beyond_the_type_masks_nothing(tmp_path, dtype, fill):
    # a _FillValue beyond int64 raised a TypeError (from np.isfinite)
    _stored(tmp_path / "a.zarr", dtype, fill)
    got = read(tmp_path / "a.zarr", "zarrx")
    xr.testing.assert_identical(got, read(tmp_path / "a.zarr", "zarr"))
    assert got.i.values.tolist() == [1.0, 2.0]
    assert got.i.encoding["_FillValue"] == fill


@pytest.mark.parametrize("dtype, fill", [("f8", 10**400), ("c16", [10**400, 0])],
                         ids=["f8", "c16"])
def test_an_integer_fill_value_beyond_every_float_is_refused(tmp_path, dtype, fill):
    # it raised an OverflowError (engine "zarr" refuses it with a TypeError)
    _stored(tmp_path / "a.zarr", dtype, fill)
    msg = ("/i attributes: _FillValue: expected a number within the range of float64, found "
           "an integer of 1329 bits")
    with pytest.raises(MetadataError, match=re.escape(msg)):
        read(tmp_path / "a.zarr", "zarrx")


def test_dimension_names_given_as_a_string_are_refused(tmp_path):
    # zarr-python opens "tx" as the names t and x; the spec (and tensorstore) want an array
    _stored(tmp_path / "a.zarr", "i2", 1)
    doc = tmp_path / "a.zarr" / "i" / "zarr.json"
    meta = json.loads(doc.read_text())
    meta["dimension_names"] = "t"
    doc.write_text(json.dumps(meta))
    msg = "i/zarr.json dimension_names: expected an array of strings or nulls, or null, found 't'"
    with pytest.raises(MetadataError, match=re.escape(msg)):
        read(tmp_path / "a.zarr", "zarrx")
