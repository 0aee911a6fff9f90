"""Time units of a store are decoded by xarray when a dataset is read, and when ``to_zarrx``
locates a region or appends by a stored time coordinate: a hostile ``units`` (a megabyte of
digits after ``since``, which dateutil parses in time quadratic in its length: minutes) and a
malformed one are a MetadataError naming the variable, on both paths (the writer's raised
xarray's ValueError)."""
from __future__ import annotations

import re

import numpy as np
import pytest

xr = pytest.importorskip("xarray")

import zarrx  # noqa: E402
import zarrx.xarray as zx  # noqa: E402
from zarrx.errors import MetadataError  # noqa: E402
from zarrx.xarray import ZarrxBackendEntrypoint  # noqa: E402
from zarrx.xarray.cf_checks import MAX_UNITS  # noqa: E402

_LONG = "days since " + "1" * 10**6
_TIME = ("CF time units ('<unit> since <date>', days since 2000-01-01) by which xarray "
         "decodes the values stored")


def _store(path, zarr_format, units):
    g = zarrx.open_group(str(path), mode="w", zarr_format=zarr_format)
    kw = {"dimension_names": ["t"]} if zarr_format == 3 else {
        "attributes": {"_ARRAY_DIMENSIONS": ["t"]}}
    g.create_array("t", shape=(3,), dtype="i8", **kw)[:] = [0, 1, 2]
    g["t"].attrs["units"] = units
    g.create_array("v", shape=(3,), dtype="f8", **kw)[:] = [0.0, 1.0, 2.0]
    return str(path)


def _writes(path):
    update = xr.Dataset({"v": ("t", [5.0])}, coords={"t": [1]})
    return [lambda: zx.to_zarrx(update, path, region="auto"),
            lambda: zx.to_zarrx(update.assign_coords(t=[7]), path, append_dim="t")]


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_overlong_time_units_are_refused_before_they_are_parsed(tmp_path, zarr_format):
    path = _store(tmp_path / "d.zarr", zarr_format, _LONG)
    message = re.escape(f"variable 't': attribute units: expected CF time units ('<unit> since "
                        f"<date>') of at most {MAX_UNITS} characters, found 'days since 1111")
    with pytest.raises(MetadataError, match=message):
        xr.open_dataset(path, engine=ZarrxBackendEntrypoint)
    for write in _writes(path):
        with pytest.raises(MetadataError, match=message):
            write()
    ds = xr.open_dataset(path, engine=ZarrxBackendEntrypoint, decode_times=False)
    assert ds.t.attrs["units"] == _LONG


@pytest.mark.parametrize("units", ["fortnights since whenever", "days since 2000-13-45"])
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_a_write_located_by_stored_times_that_do_not_decode_names_them(tmp_path, zarr_format,
                                                                      units):
    path = _store(tmp_path / "d.zarr", zarr_format, units)
    for write in _writes(path):
        with pytest.raises(MetadataError, match=re.escape(
                f"variable 't': attribute units: expected {_TIME}, found {units!r}")):
            write()
    back = xr.open_dataset(path, engine=ZarrxBackendEntrypoint, decode_cf=False)
    np.testing.assert_array_equal(back.v.values, [0.0, 1.0, 2.0])     # nothing written
    assert back.sizes["t"] == 3
