"""What a reader of consolidated metadata finds when ``to_zarrx`` stops part way (a store
failing, a killed writer) while it replaces a group (mode ``w`` with ``group=``) of a
hierarchy whose root has consolidated metadata.

The replaced group's arrays were deleted while the root's consolidated document still listed
them (only marked pending, which zarr-python ignores): engine "zarr" with
``consolidated=True`` then read the old variables, their chunks gone, as the fill value (NaN
where the data had been). The document now drops the subtree's entries before any of its
objects is deleted, so such a reader finds no stale variables."""
from __future__ import annotations

import json

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
zarr = pytest.importorskip("zarr")

import zarrx  # noqa: E402
import zarrx.xarray as zx  # noqa: E402
from zarrx.store import LocalStore  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::FutureWarning"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]


class FailingDeletes(LocalStore):
    """A local store whose second batch delete fails (the objects of the first are gone)."""

    deletes = 0

    def delete_many(self, keys):
        keys = list(keys)
        type(self).deletes += 1
        if type(self).deletes == 2:
            raise zarrx.StoreError(f"injected failure deleting {len(keys)} objects")
        super().delete_many(keys)


def _old():
    return xr.Dataset({"a": ("x", np.arange(4.0))}, coords={"x": np.arange(4)})


def _new():
    return xr.Dataset({"a": ("y", np.arange(6, dtype="i2"))}, coords={"y": np.arange(6)})


def _consolidated_entries(path, fmt):
    if fmt == 2:
        return set(json.loads((path / ".zmetadata").read_text())["metadata"])
    return set(json.loads((path / "zarr.json").read_text())["consolidated_metadata"]
               ["metadata"])


@pytest.mark.parametrize("fmt", [2, 3])
def test_a_replaced_group_stopped_part_way_is_no_longer_listed_as_it_was(tmp_path, fmt):
    path = tmp_path / "z.zarr"
    zx.to_zarrx(_old(), path, zarr_format=fmt, consolidated=False)
    zx.to_zarrx(_old(), path, group="sub", zarr_format=fmt, consolidated=True)
    FailingDeletes.deletes = 0
    with pytest.raises(zarrx.StoreError, match="injected failure"):
        zx.to_zarrx(_new(), FailingDeletes(str(path)), group="sub", mode="w", zarr_format=fmt)
    assert not path.joinpath("sub", "a", ".zarray" if fmt == 2 else "zarr.json").exists()
    # the root's document lists nothing of the group being replaced (before: its old arrays)
    assert not {e for e in _consolidated_entries(path, fmt) if e.startswith("sub")}
    # engine "zarr" reading the consolidated metadata: no stale variable read as fill values
    # (before: 'a' of 4 NaN)
    with pytest.raises(KeyError):
        xr.open_zarr(path, group="sub", consolidated=True)
    # the root's own variables are as they were, for both engines
    for engine in ("zarr", "zarrx"):
        got = xr.open_dataset(path, engine=engine, consolidated=True, chunks=None)
        xr.testing.assert_identical(got.load(), _old())
    # writing again finishes the replacement
    zx.to_zarrx(_new(), path, group="sub", mode="w", zarr_format=fmt)
    for engine in ("zarr", "zarrx"):
        got = xr.open_dataset(path, engine=engine, group="sub", consolidated=True, chunks=None)
        xr.testing.assert_identical(got.load(), _new())


@pytest.mark.parametrize("fmt", [2, 3])
def test_a_group_deleted_part_way_is_not_listed_by_the_consolidated_metadata(tmp_path, fmt):
    path = tmp_path / "z.zarr"
    g = zarrx.open_group(str(path), mode="w", zarr_format=fmt)
    g.create_group("keep").create_array("k", shape=(2,), dtype="i4")[:] = 5
    g.create_group("sub").create_array("a", shape=(4,), chunks=(2,), dtype="f8")[:] = 1.0
    zarrx.consolidate_metadata(str(path))
    FailingDeletes.deletes = 0
    g = zarrx.open_group(FailingDeletes(str(path)), mode="r+")
    with pytest.raises(zarrx.StoreError, match="injected failure"):
        del g["sub"]
    root = zarr.open_consolidated(str(path), mode="r", zarr_format=fmt)
    assert "sub/a" not in root.metadata.consolidated_metadata.flattened_metadata
    assert root["keep/k"][...].tolist() == [5, 5]
