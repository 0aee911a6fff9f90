"""Writes in mode "r+" (the default with ``region=``) change no metadata, and, as with xarray's
writer, add no consolidated metadata to a store kept without any; ``consolidated=True`` there
reads through the stored consolidated metadata, and so requires it."""
from __future__ import annotations

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
pytest.importorskip("zarr")

import zarrx  # noqa: E402
import zarrx.xarray as zx  # noqa: E402

from xarray_samples import load  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::FutureWarning"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]


def _unconsolidated(path, fmt, group=None):
    ds = xr.Dataset({"v": ("t", np.arange(6.0))}, coords={"t": np.arange(6)})
    zx.to_zarrx(ds, path, zarr_format=fmt, consolidated=False, group=group)
    return ds


def _consolidated(path, group=""):
    return zarrx.open_group(str(path), path=group, mode="r").metadata.consolidated


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("how", [{"region": {"t": slice(1, 3)}}, {"region": "auto"},
                                 {"mode": "r+", "region": {"t": slice(1, 3)}}])
def test_a_region_write_adds_no_consolidated_metadata(tmp_path, fmt, how):
    path = tmp_path / "z.zarr"
    ds = _unconsolidated(path, fmt)
    part = ds.isel(t=slice(1, 3)) + 10
    if how["region"] != "auto":
        part = part.drop_vars("t")
    zx.to_zarrx(part, path, **how)
    assert _consolidated(path) is None
    assert load(path, "zarr").v.values.tolist() == [0, 11, 12, 3, 4, 5]


@pytest.mark.parametrize("fmt", [2, 3])
def test_mode_r_plus_leaves_a_sub_group_and_the_root_unconsolidated(tmp_path, fmt):
    path = tmp_path / "z.zarr"
    ds = _unconsolidated(path, fmt, group="a/b")
    zx.to_zarrx(ds + 1, path, mode="r+", group="a/b")
    assert _consolidated(path) is None and _consolidated(path, "a/b") is None
    np.testing.assert_array_equal(load(path, "zarrx", group="a/b").v.values, ds.v.values + 1)


@pytest.mark.parametrize("fmt", [2, 3])
def test_region_with_consolidated_true_requires_consolidated_metadata(tmp_path, fmt):
    """As xarray's writer, which opens the store through its consolidated metadata (a
    ValueError): refused before anything is written."""
    path = tmp_path / "z.zarr"
    ds = _unconsolidated(path, fmt)
    with pytest.raises(zarrx.MetadataError, match="has no consolidated metadata") as info:
        zx.to_zarrx(ds.isel(t=slice(0, 2)).drop_vars("t") + 10, path,
                    region={"t": slice(0, 2)}, consolidated=True)
    assert isinstance(info.value, ValueError)
    assert load(path, "zarrx").v.values.tolist() == list(range(6))
    zarrx.consolidate_metadata(str(path))
    zx.to_zarrx(ds.isel(t=slice(0, 2)).drop_vars("t") + 10, path,
                region={"t": slice(0, 2)}, consolidated=True)
    assert load(path, "zarr").v.values.tolist() == [10, 11, 2, 3, 4, 5]


@pytest.mark.parametrize("fmt", [2, 3])
def test_a_tree_written_in_mode_r_plus_adds_no_consolidated_metadata(tmp_path, fmt):
    path = tmp_path / "t.zarr"
    tree = xr.DataTree.from_dict({"/": xr.Dataset({"v": ("t", np.arange(3.0))}),
                                  "/c": xr.Dataset({"w": ("s", np.arange(2))})})
    zx.to_zarrx(tree, path, zarr_format=fmt, consolidated=False)
    zx.to_zarrx(tree + 1, path, mode="r+")
    assert _consolidated(path) is None
    xr.testing.assert_identical(xr.open_datatree(path, engine="zarr").load(), tree + 1)
    with pytest.raises(zarrx.MetadataError, match="has no consolidated metadata"):
        zx.to_zarrx(tree, path, mode="r+", consolidated=True)
    xr.testing.assert_identical(xr.open_datatree(path, engine="zarr").load(), tree + 1)
