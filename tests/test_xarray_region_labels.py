"""``to_zarrx(region="auto")`` locates the region by the stored index coordinate's labels; a
stored coordinate that holds a label twice cannot locate it (pandas raises its own
``InvalidIndexError`` there, as xarray's writer lets it out)."""
from __future__ import annotations

import re

import numpy as np
import pytest

xr = pytest.importorskip("xarray")

import zarrx.xarray as zx  # noqa: E402
from zarrx.errors import ArgumentError  # noqa: E402
from zarrx.xarray import ZarrxBackendEntrypoint  # noqa: E402


@pytest.mark.parametrize("rows", [slice(3, 6), slice(1, 3)], ids=["elsewhere", "on-it"])
@pytest.mark.parametrize("fmt", [2, 3])
def test_region_auto_in_a_stored_coordinate_with_a_label_twice_is_refused(tmp_path, fmt, rows):
    path = str(tmp_path / "d.zarr")
    ds = xr.Dataset({"a": (("t", "x"), np.arange(30.0).reshape(10, 3))},
                    coords={"t": [0, 10, 10, 30, 40, 50, 60, 70, 80, 90], "x": [1, 2, 3]})
    zx.to_zarrx(ds, path, zarr_format=fmt)
    with pytest.raises(ArgumentError, match=re.escape(
            "to_zarrx: region['t'] = 'auto': the stored coordinate 't' holds the value 10 "
            "more than once, so labels do not locate the region; give it as "
            "region={'t': slice(...)}")):
        zx.to_zarrx(ds.isel(t=rows) + 1, path, region="auto")
    # the rows given by position are written
    zx.to_zarrx((ds.isel(t=rows) + 1).drop_vars(["t", "x"]), path, region={"t": rows})
    back = xr.open_dataset(path, engine=ZarrxBackendEntrypoint).load()
    want = ds.a.values.copy()
    want[rows] += 1
    np.testing.assert_array_equal(back.a.values, want)


@pytest.mark.parametrize("sel", [slice(1.0, 3.0), slice("b", "c"), slice(1, 3.5)],
                         ids=["floats", "labels", "float-stop"])
def test_a_region_slice_of_other_than_integer_positions_is_refused(sel):
    # (a bare TypeError from slice.indices before)
    from zarrx.errors import ArgumentTypeError
    from zarrx.store import MemoryStore
    store = MemoryStore()
    ds = xr.Dataset({"a": ("t", np.arange(4.0))}, coords={"t": list("abcd")})
    zx.to_zarrx(ds, store)
    before = {k: store.get(k) for k in store.list_prefix("")}
    with pytest.raises(ArgumentTypeError, match=re.escape(
            f"to_zarrx: region['t']: expected a slice of integer positions (labels: "
            f"region='auto'), found {sel!r}")):
        zx.to_zarrx(ds.isel(t=slice(1, 3)) + 1, store, region={"t": sel})
    assert {k: store.get(k) for k in store.list_prefix("")} == before
