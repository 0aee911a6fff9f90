"""The attributes of a dataset opened with engine "zarrx" are its own: plain dicts and lists
that may be changed, a change showing in no other dataset opened on the same store (the
metadata's attributes are shared by the handles of a process, and read-only where they come
from consolidated metadata)."""
from __future__ import annotations

import numpy as np
import pytest

xr = pytest.importorskip("xarray")

import zarrx.xarray  # noqa: E402,F401


@pytest.mark.parametrize("consolidated", [True, False])
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_changing_a_datasets_nested_attributes_changes_no_other_dataset(
        tmp_path, consolidated, zarr_format):
    path = str(tmp_path / "d.zarr")
    ds = xr.Dataset({"v": ("x", np.arange(4.0), {"flags": [1, 2], "nest": {"a": 1}})},
                    attrs={"history": ["made"]})
    ds.to_zarr(path, mode="w", consolidated=consolidated, zarr_format=zarr_format)
    first = xr.open_dataset(path, engine="zarrx", consolidated=consolidated)
    first["v"].attrs["flags"].append(3)
    first["v"].attrs["nest"]["a"] = 9
    first.attrs["history"].append("changed")
    assert first["v"].attrs == {"flags": [1, 2, 3], "nest": {"a": 9}}
    second = xr.open_dataset(path, engine="zarrx", consolidated=consolidated)
    assert second["v"].attrs == {"flags": [1, 2], "nest": {"a": 1}}
    assert second.attrs == {"history": ["made"]}
    assert type(second["v"].attrs["flags"]) is list
    assert type(second["v"].attrs["nest"]) is dict
