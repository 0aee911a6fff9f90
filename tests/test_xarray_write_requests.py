"""The requests a ``to_zarrx`` write makes do not grow with the number of variables where the
write does not need them to: a group created or replaced (modes "w", "w-") is listed once for
what is below its new arrays' places (before: once per array, on an object store a listing
request each), and each stored array's metadata is read once (before: three or four times)."""
from __future__ import annotations

import numpy as np
import pytest

xr = pytest.importorskip("xarray")

import zarrx.xarray  # noqa: E402,F401
from zarrx.store import CountingStore, MemoryStore  # noqa: E402
from zarrx.xarray import ZarrxBackendEntrypoint  # noqa: E402


def _ds(n: int, start: int = 0):
    x = np.arange(start, start + 3)
    return xr.Dataset({f"v{i}": ("x", x + float(i)) for i in range(n)}, coords={"x": x})


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("mode", ["w", "w-"])
@pytest.mark.parametrize("consolidated", [None, False])
@pytest.mark.parametrize("n", [3, 40])
def test_a_new_group_is_listed_a_fixed_number_of_times(fmt, mode, consolidated, n):
    inner = MemoryStore()
    if mode == "w":
        _ds(2).zarrx.to_zarrx(inner, zarr_format=fmt)
    store = CountingStore(inner)
    _ds(n).zarrx.to_zarrx(store, mode=mode, zarr_format=fmt, consolidated=consolidated)
    # mode "w": the group replaced (one listing), then its new arrays' places (one);
    # mode "w-": the place checked unused (one), then the new arrays' places (one); and the
    # consolidation's walk of the hierarchy
    assert store.counts["list"] == 2 + (consolidated is None)
    back = xr.open_dataset(inner, engine=ZarrxBackendEntrypoint,
                           consolidated=consolidated).load()
    xr.testing.assert_identical(back, _ds(n))


@pytest.mark.parametrize("fmt", [2, 3])
def test_replacing_a_sub_group_deletes_what_was_below_each_array(fmt):
    """A sub-group replaced is listed twice (replaced, then its new arrays' places), however
    many arrays it gets, and nothing outside it is touched."""
    inner = MemoryStore()
    _ds(2).zarrx.to_zarrx(inner, group="g", zarr_format=fmt)
    _ds(1).zarrx.to_zarrx(inner, group="h", zarr_format=fmt)
    store = CountingStore(inner)
    _ds(3).zarrx.to_zarrx(store, mode="w", group="g", consolidated=False)
    assert store.counts["list"] == 2
    for group, n in (("g", 3), ("h", 1)):
        back = xr.open_dataset(inner, engine=ZarrxBackendEntrypoint, group=group,
                               consolidated=False).load()
        xr.testing.assert_identical(back, _ds(n))


def _doc_reads(store: CountingStore, fmt: int, names: list[str]) -> dict[str, int]:
    doc = ".zarray" if fmt == 2 else "zarr.json"
    return {name: store.gets_by_key[f"{name}/{doc}"] for name in names}


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("how", ["r+", "region", "auto"])
def test_a_stored_array_s_metadata_is_read_twice(fmt, how):
    """Writing into stored variables (mode "r+", a region) reads each array's metadata when
    the group is listed (the checks of the stored variable and the plan of its write share
    that handle), then once more just before the values are written, so that they go into
    the array as stored then (before: 4 times in all)."""
    inner = MemoryStore()
    _ds(5).zarrx.to_zarrx(inner, zarr_format=fmt)
    store = CountingStore(inner)
    new = _ds(5) + 1
    if how == "r+":
        new.drop_vars("x").zarrx.to_zarrx(store, mode="r+")
    elif how == "region":
        new.isel(x=slice(1, 2)).drop_vars("x").zarrx.to_zarrx(store, region={"x": slice(1, 2)})
    else:
        new.isel(x=slice(1, 2)).zarrx.to_zarrx(store, region="auto")
    names = [f"v{i}" for i in range(5)]
    reads = _doc_reads(store, fmt, names + ["x"])
    assert reads == {**dict.fromkeys(names, 2), "x": 1}      # (x is not written)
    back = xr.open_dataset(inner, engine=ZarrxBackendEntrypoint).load()
    assert back.v4.values.tolist() == ([5.0, 6.0, 7.0] if how == "r+" else [4.0, 6.0, 6.0])


@pytest.mark.parametrize("fmt", [2, 3])
def test_an_append_reads_the_metadata_once_then_grows_each_array(fmt):
    """An append reads each array's metadata once to check and plan it, then once more as it
    grows it (the conditional update of its shape, so that another writer's append is never
    lost); before, 5 reads of each."""
    inner = MemoryStore()
    _ds(5).zarrx.to_zarrx(inner, zarr_format=fmt, consolidated=False)
    store = CountingStore(inner)
    _ds(5, start=3).zarrx.to_zarrx(store, append_dim="x", consolidated=False)
    names = [f"v{i}" for i in range(5)]
    reads = _doc_reads(store, fmt, names + ["x"])
    assert reads == {**dict.fromkeys(names, 2), "x": 2}
    back = xr.open_dataset(inner, engine=ZarrxBackendEntrypoint, consolidated=False).load()
    assert back.x.values.tolist() == list(range(6))
    assert back.v4.values.tolist() == [4.0, 5.0, 6.0, 7.0, 8.0, 9.0]


@pytest.mark.skipif(not hasattr(xr, "DataTree"), reason="this xarray has no DataTree")
@pytest.mark.parametrize("mode", ["w", "w-"])
@pytest.mark.parametrize("n", [2, 20])
def test_a_tree_s_new_groups_are_listed_a_fixed_number_of_times(mode, n):
    """Each group of a DataTree written in mode "w" or "w-" is listed for its new arrays'
    places once (before: once per array: 97 listings for 3 groups of 31 arrays)."""
    tree = xr.DataTree.from_dict({"/": _ds(n), "/a": _ds(n), "/a/b": _ds(n)})
    inner = MemoryStore()
    if mode == "w":
        tree.zarrx.to_zarrx(inner)
    store = CountingStore(inner)
    tree.zarrx.to_zarrx(store, mode=mode)
    assert store.counts["list"] == 9
    back = xr.open_datatree(inner, engine=ZarrxBackendEntrypoint).load()
    xr.testing.assert_identical(back, tree)
