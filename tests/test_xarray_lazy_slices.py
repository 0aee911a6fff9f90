"""Lazy reads of engine "zarrx" through slices of negative step select what numpy selects, the
empty ones included (xarray splits such a slice into one of positive step and a reversal,
which fails for an empty one)."""
from __future__ import annotations

import numpy as np
import pytest

xr = pytest.importorskip("xarray")

import zarrx.xarray as zx  # noqa: E402
from zarrx.xarray import ZarrxBackendEntrypoint  # noqa: E402

SELECTIONS = [{"a": slice(1, 3, -1)}, {"c": slice(0, 4, -2)},
              {"a": slice(None, None, -1), "c": slice(1, 3, -1)},
              {"a": [0, 2], "c": slice(1, 3, -1)}, {"a": 0, "c": slice(2, 2, -1)},
              {"a": xr.DataArray([0, 2], dims="p"), "c": slice(0, 2, -1)},
              {"a": slice(5, 1, -2), "c": slice(None, None, -2)}]


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    ds = xr.Dataset({"v": (("a", "c"), np.arange(21.0).reshape(7, 3)),
                     "s": (("a", "c"), np.array([f"é{i}" for i in range(21)]).reshape(7, 3))})
    path = tmp_path_factory.mktemp("neg") / "a.zarr"
    zx.to_zarrx(ds, path, encoding={"v": {"chunks": (3, 1)}})
    return ds, path


@pytest.mark.parametrize("sel", SELECTIONS, ids=[str(s) for s in range(len(SELECTIONS))])
def test_slices_of_negative_step_read_what_numpy_selects(stored, sel):
    # an empty one raised IndexError('range object index out of range')
    ds, path = stored
    lazy = xr.open_dataset(path, engine=ZarrxBackendEntrypoint)
    got = lazy.isel(sel).load()
    xr.testing.assert_identical(got.drop_encoding(), ds.isel(sel))
