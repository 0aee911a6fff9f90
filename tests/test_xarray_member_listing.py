"""Engine "zarrx" lists a group without consolidated metadata once per opening, as its docs
say: xarray asks the backend's data store for its variables twice (once for zarrx's checks
of the CF attributes, once to decode them), and each time the group was listed again, which
on an object store is a listing of every key below the group (every chunk of every array)."""
from __future__ import annotations

import numpy as np
import pytest

xr = pytest.importorskip("xarray")

import zarrx.xarray  # noqa: E402,F401
from zarrx.store import CountingStore, LocalStore, MemoryStore  # noqa: E402
from zarrx.xarray import ZarrxBackendEntrypoint  # noqa: E402


@pytest.mark.parametrize("chunks", [None, {}])
def test_open_dataset_lists_the_group_once(chunks):
    inner = MemoryStore()
    ds = xr.Dataset({"v": ("t", np.arange(6.0)), "w": ("t", np.arange(6))},
                    coords={"t": np.arange(6)})
    ds.zarrx.to_zarrx(inner, consolidated=False, encoding={"v": {"chunks": (1,)}})
    store = CountingStore(inner)
    back = xr.open_dataset(store, engine=ZarrxBackendEntrypoint, consolidated=False,
                           chunks=chunks)
    assert store.counts["list"] == 1
    xr.testing.assert_identical(back.load(), ds)



def _tree(path, fmt: int) -> None:
    tree = xr.DataTree.from_dict({
        "/": xr.Dataset({"v": ("t", np.arange(4.0))}, coords={"t": np.arange(4)}),
        "/a": xr.Dataset({"w": ("x", np.arange(3))}, attrs={"n": 1}),
        "/a/b": xr.Dataset({"u": (("x", "y"), np.ones((3, 2), "f4"))}),
        "/c": xr.Dataset()})
    tree.zarrx.to_zarrx(path, consolidated=False, zarr_format=fmt)


@pytest.mark.skipif(not hasattr(xr, "DataTree"), reason="this xarray has no DataTree")
@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("how", ["open_datatree", "open_groups"])
def test_a_tree_lists_each_group_once(tmp_path, how, fmt):
    """Each group of a tree without consolidated metadata is listed once: the walk of the
    tree hands each group's arrays to its data store (before: each group was listed again
    for its variables, 8 listings for 4 groups); the values are engine "zarr"'s."""
    _tree(tmp_path / "t.zarr", fmt)
    store = CountingStore(LocalStore(tmp_path / "t.zarr", read_only=True))
    back = getattr(xr, how)(store, engine=ZarrxBackendEntrypoint, consolidated=False)
    assert store.counts["list"] == 4
    for group, lists in (("a", 2), ("c", 1)):
        store.counts.clear()
        below = getattr(xr, how)(store, engine=ZarrxBackendEntrypoint, consolidated=False,
                                 group=group)
        assert store.counts["list"] == lists
    pytest.importorskip("zarr")
    want = getattr(xr, how)(tmp_path / "t.zarr", engine="zarr", consolidated=False)
    want_below = getattr(xr, how)(tmp_path / "t.zarr", engine="zarr", consolidated=False,
                                  group="c")
    if how == "open_datatree":
        xr.testing.assert_identical(back.load(), want.load())
        xr.testing.assert_identical(below.load(), want_below.load())
    else:
        for got, ref in ((back, want), (below, want_below)):
            # (in the order of a consolidated hierarchy; engine "zarr" walks an unconsolidated
            # one in an order of its own)
            assert list(got) == sorted(ref)
            for k in ref:
                xr.testing.assert_identical(got[k].load(), ref[k].load())


@pytest.mark.parametrize("fmt", [2, 3])
def test_an_append_lists_the_stored_group_once_to_check_it(fmt):
    """The checks of an append (the dimension appended to, the stored variables left out, the
    lengths new variables must have) share one listing of the stored group and one read of
    its arrays' metadata (before: three more of each, on an object store a listing of every
    key below the group each time)."""
    inner = MemoryStore()
    ds = xr.Dataset({f"v{i}": ("x", np.arange(3.0)) for i in range(3)},
                    coords={"x": [0, 1, 2]})
    ds.zarrx.to_zarrx(inner, zarr_format=fmt)
    store = CountingStore(inner)
    ds.assign_coords(x=[3, 4, 5]).zarrx.to_zarrx(store, append_dim="x")
    doc = ".zarray" if fmt == 2 else "zarr.json"
    assert store.counts["list"] == 2         # the checks' listing, and consolidation's
    for name in ("v0", "v1", "v2", "x"):
        assert store.gets_by_key[f"{name}/{doc}"] <= 7       # (before: 10)
    back = xr.open_dataset(inner, engine=ZarrxBackendEntrypoint).load()
    assert back.x.values.tolist() == [0, 1, 2, 3, 4, 5]
    assert back.v2.values.tolist() == [0.0, 1.0, 2.0] * 2


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("auto", [False, True])
def test_a_region_write_lists_the_stored_group_once(fmt, auto):
    """Locating the region (the stored dimensions' lengths) uses the listing the write's other
    checks made (before: the group was listed a second time)."""
    inner = MemoryStore()
    ds = xr.Dataset({f"v{i}": ("x", np.arange(6.0)) for i in range(3)},
                    coords={"x": np.arange(6)})
    ds.zarrx.to_zarrx(inner, zarr_format=fmt)
    store = CountingStore(inner)
    part = ds.isel(x=slice(2, 4)) + 1
    if auto:
        part.zarrx.to_zarrx(store, region="auto")
    else:
        part.drop_vars("x").zarrx.to_zarrx(store, region={"x": slice(2, 4)})
    assert store.counts["list"] == 1
    back = xr.open_dataset(inner, engine=ZarrxBackendEntrypoint).load()
    assert back.v1.values.tolist() == [0.0, 1.0, 3.0, 4.0, 4.0, 5.0]
