"""Writes ``to_zarrx`` refuses before the store changes: an append (``append_dim``) that leaves
out a stored variable along the appended dimension (it would stay shorter than the appended
ones and the group would no longer open, which is what xarray's writer leaves), and dask values
in blocks of unknown sizes."""
from __future__ import annotations

import re

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
zarr = pytest.importorskip("zarr")

import zarrx  # noqa: E402
import zarrx.xarray as zx  # noqa: E402
from xarray_checks import stored  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::FutureWarning"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]


def dataset(n, start=0):
    values = np.arange(2 * start, 2 * (start + n), dtype="f8").reshape(n, 2)
    return xr.Dataset({"a": (("t", "y"), values),
                       "b": ("t", np.arange(start, start + n)), "c": ("y", [1.0, 2.0])},
                      coords={"t": np.arange(start, start + n)})


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("left_out", [["b"], ["t"], ["a", "b"]])
def test_an_append_leaving_out_a_stored_variable_along_it_is_refused(tmp_path, fmt, left_out):
    path = tmp_path / "z.zarr"
    zx.to_zarrx(dataset(3), path, zarr_format=fmt)
    before = stored(path)
    more = dataset(2, start=3).drop_vars(left_out)
    with pytest.raises(zarrx.ArgumentError, match=re.escape(
            f"to_zarrx: append_dim='t': the stored variables {sorted(left_out)} along 't' are "
            f"not in the dataset; appending without them would leave them shorter and the "
            f"group unreadable (append them too)")):
        zx.to_zarrx(more, path, append_dim="t")
    assert stored(path) == before
    xr.testing.assert_identical(xr.open_zarr(path).load(), dataset(3))
    # (xarray's writer appends without them, and its engine can no longer open the group)
    more.to_zarr(path, append_dim="t")
    with pytest.raises(ValueError, match="conflicting sizes for dimension 't'"):
        xr.open_zarr(path)


def test_variables_not_along_the_appended_dimension_may_be_left_out(tmp_path):
    path = tmp_path / "z.zarr"
    zx.to_zarrx(dataset(3), path)
    zx.to_zarrx(dataset(2, start=3).drop_vars("c"), path, append_dim="t")
    xr.testing.assert_identical(xr.open_zarr(path).load(), dataset(5))
    # (no row appended: nothing grows, so nothing needs to be there)
    zx.to_zarrx(dataset(0).drop_vars(["b", "c"]), path, append_dim="t")
    xr.testing.assert_identical(xr.open_zarr(path).load(), dataset(5))


@pytest.mark.parametrize("how", ["new", "append", "region"])
def test_dask_blocks_of_unknown_sizes_are_refused_before_the_store_changes(tmp_path, how):
    # (a new variable failed with numpy's ValueError "cannot convert float NaN to integer")
    import dask.array as da

    path = tmp_path / "z.zarr"
    if how != "new":
        zx.to_zarrx(dataset(3), path)
    before = stored(path) if how != "new" else None
    values = da.arange(10, chunks=3)
    values = values[values > 7]                 # 2 elements, in blocks of unknown sizes
    more = xr.Dataset({"b": ("t", values)})
    kw = {"new": {}, "append": {"append_dim": "t"}, "region": {"region": {"t": slice(0, 2)}}}
    with pytest.raises(zarrx.ArgumentError, match=re.escape(
            "to_zarrx: variable 'b' has dask blocks of unknown sizes (shape (nan,)); call "
            "compute_chunk_sizes() on its dask array first")):
        zx.to_zarrx(more, path, **kw[how])
    if how == "new":
        assert not path.exists()
    else:
        assert stored(path) == before


@pytest.mark.parametrize("dim", [["t"], {"t": 1}])
def test_an_append_dim_that_is_no_name_is_an_argument_type_error(tmp_path, dim):
    # (a bare TypeError, "unhashable type", before)
    path = tmp_path / "t.zarr"
    zx.to_zarrx(dataset(2), path)
    before = stored(path)
    with pytest.raises(zarrx.errors.ArgumentTypeError, match=re.escape(
            f"to_zarrx: append_dim: expected a dimension name, found {type(dim).__name__} "
            f"{dim!r}")):
        zx.to_zarrx(dataset(1, 2), path, append_dim=dim)
    assert stored(path) == before


@pytest.mark.parametrize("coordinate_first", [True, False])
def test_an_append_to_a_variable_of_a_rectilinear_grid_leaves_the_group_as_it_was(
        tmp_path, coordinate_first):
    # (before, the group's attributes were written and the coordinate grown before the
    # variable of fixed chunk edges refused to grow: the group no longer opened, its 't'
    # having 5 elements in one array and 3 in the other)
    path = tmp_path / "r.zarr"
    g = zarrx.open_group(str(path), mode="w", attributes={"title": "old"})
    t = g.create_array("t", shape=(3,), chunks=(2,), dtype="i8", dimension_names=("t",))
    t[:] = [0, 1, 2]
    b = g.create_array("b", shape=(3,), chunks=[[2, 2]], dtype="i8", dimension_names=("t",))
    b[:] = [0, 1, 2]
    before = {k.name: k.read_bytes() for k in path.rglob("*") if k.is_file()}
    more = xr.Dataset({"b": ("t", [3, 4])}, coords={"t": [3, 4]}, attrs={"title": "new"})
    if not coordinate_first:
        more = more.drop_vars("t").assign(t=("t", [3, 4]))
    with pytest.raises(zarrx.ArgumentError, match=re.escape(
            "/b: cannot append to an array with a rectilinear chunk grid")):
        zx.to_zarrx(more, path, mode="a", append_dim="t")
    assert {k.name: k.read_bytes() for k in path.rglob("*") if k.is_file()} == before
    got = xr.open_dataset(path, engine=zx.ZarrxBackendEntrypoint).load()
    assert got.attrs == {"title": "old"} and got.sizes["t"] == 3
