"""Zarr v2 ``_ARRAY_DIMENSIONS`` stored as one string rather than a list of names, as some
writers store it for a one-dimensional array: engine "zarrx" reads it as that one name (it
refused it, where engine "zarr" reads a one-character name and fails on a longer one with a
bare ``ValueError`` from ``zip``). For an array of another number of dimensions a string is a
MetadataError naming the array and the attribute."""
from __future__ import annotations

import re

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
zarr = pytest.importorskip("zarr")

import zarrx  # noqa: E402
import zarrx.xarray as zx  # noqa: E402
from zarrx.xarray import ZarrxBackendEntrypoint  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning")]


def _stored(path, shape, dims):
    g = zarr.open_group(path, mode="w", zarr_format=2)
    a = g.create_array("a", shape=shape, dtype="i4", fill_value=None)
    a[...] = np.arange(int(np.prod(shape)), dtype="i4").reshape(shape)
    a.attrs["_ARRAY_DIMENSIONS"] = dims
    a.attrs["units"] = "m"


@pytest.mark.parametrize("name", ["x", "time"])
def test_one_name_as_a_string_names_the_dimension_of_a_one_dimensional_array(tmp_path, name):
    path = tmp_path / "s.zarr"
    _stored(path, (3,), name)
    got = xr.open_dataset(path, engine=ZarrxBackendEntrypoint).load()
    want = xr.Dataset({"a": (name, np.arange(3, dtype="i4"), {"units": "m"})})
    xr.testing.assert_identical(got, want)
    if len(name) == 1:      # (engine "zarr" takes the string's characters as the names)
        xr.testing.assert_identical(xr.open_zarr(path, consolidated=False).load(), want)
    # an append to it through to_zarrx finds the dimension too
    zx.to_zarrx(xr.Dataset({"a": (name, np.array([7], dtype="i4"))}), path, append_dim=name)
    got = xr.open_dataset(path, engine=ZarrxBackendEntrypoint).load()
    assert got.a.values.tolist() == [0, 1, 2, 7]


@pytest.mark.parametrize("shape, dims", [((2, 3), "x"), ((), "x"), ((3,), "")])
def test_a_string_for_another_number_of_dimensions_is_a_metadata_error(tmp_path, shape, dims):
    path = tmp_path / "s.zarr"
    _stored(path, shape, dims)
    with pytest.raises(zarrx.MetadataError, match=re.escape(
            f"/a: expected the attribute _ARRAY_DIMENSIONS to list the {len(shape)} dimension "
            f"names, found {dims!r}")):
        xr.open_dataset(path, engine=ZarrxBackendEntrypoint)
