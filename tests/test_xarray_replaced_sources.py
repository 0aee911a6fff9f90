"""``to_zarrx(mode="w")`` of dask-backed variables read lazily from the group it replaces is
refused before the store changes: replacing the group first (as xarray's writer does) leaves
the arrays the dask graphs read empty, and the fill value would be written in their place."""
from __future__ import annotations

import re

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
pytest.importorskip("dask")

import zarrx.xarray as zx  # noqa: E402
from zarrx.errors import ArgumentError  # noqa: E402
from zarrx.xarray import ZarrxBackendEntrypoint  # noqa: E402
from zarrx.xarray.sources import lazy_sources  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::FutureWarning")]


def _dataset():
    return xr.Dataset({"a": (("t", "x"), np.arange(20.0).reshape(4, 5)),
                       "p": ("t", np.linspace(250, 300, 4))}, coords={"t": np.arange(4)})


def _write(path, fmt, group=None):
    zx.to_zarrx(_dataset(), path, zarr_format=fmt, group=group, mode="w",
                encoding={"a": {"chunks": (3, 5)},
                          "p": {"dtype": "i2", "scale_factor": 0.01, "_FillValue": -1}})


def _message(name, array, group):
    return re.escape(f"to_zarrx: variable {name!r} is read lazily (dask) from the array "
                     f"{array!r}, which mode 'w' replaces (with the group {group!r})")


@pytest.mark.parametrize("engine", ["zarrx", "zarr"])
@pytest.mark.parametrize("inline", [False, True], ids=["graph", "inline"])
@pytest.mark.parametrize("fmt", [2, 3])
def test_lazy_variable_of_the_replaced_group_is_refused(tmp_path, fmt, inline, engine):
    path = str(tmp_path / "d.zarr")
    _write(path, fmt)
    open_engine = ZarrxBackendEntrypoint if engine == "zarrx" else "zarr"
    src = xr.open_dataset(path, engine=open_engine, chunks={}, inline_array=inline)
    with pytest.raises(ArgumentError, match=_message("c", "/a", "/")):
        zx.to_zarrx((src * 2).rename(a="c")[["c"]], path, mode="w")
    # nothing changed: the stored values are all there
    back = xr.open_dataset(path, engine=ZarrxBackendEntrypoint).load()
    xr.testing.assert_allclose(back, _dataset(), atol=0.01)
    # loaded first, the write replaces the group with them
    zx.to_zarrx((src * 2).load(), path, mode="w")
    np.testing.assert_array_equal(
        xr.open_dataset(path, engine=ZarrxBackendEntrypoint).a.values, _dataset().a.values * 2)


@pytest.mark.parametrize("fmt", [2, 3])
def test_only_arrays_at_or_below_the_replaced_group_count(tmp_path, fmt):
    path = str(tmp_path / "d.zarr")
    _write(path, fmt, group="g1")
    _write(path, fmt, group="g1/h")
    src = xr.open_dataset(path, engine=ZarrxBackendEntrypoint, group="g1", chunks={})
    for other in ("g10", "g2/g1"):          # a sibling whose name starts alike, another branch
        zx.to_zarrx(src, path, group=other, mode="w")
        xr.testing.assert_identical(
            xr.open_dataset(path, engine=ZarrxBackendEntrypoint, group=other).load(), src.compute())
    zx.to_zarrx(src, str(tmp_path / "other.zarr"), mode="w")       # another store
    below = xr.open_dataset(path, engine=ZarrxBackendEntrypoint, group="g1/h", chunks={})
    with pytest.raises(ArgumentError, match=_message("a", "/g1/h/a", "/g1")):
        zx.to_zarrx(below, path, group="g1", mode="w")
    # through a link to the same folder
    (tmp_path / "link.zarr").symlink_to(path)
    with pytest.raises(ArgumentError, match=_message("a", "/g1/a", "/g1")):
        zx.to_zarrx(src, str(tmp_path / "link.zarr"), group="g1", mode="w")


@pytest.mark.parametrize("engine", ["zarrx", "zarr"])
@pytest.mark.parametrize("name, values", [
    ("when", np.array(["2000-01-01", "2000-01-02", "NaT"], "datetime64[ns]")),
    ("lag", np.array([1, 2, 3], "timedelta64[h]").astype("timedelta64[ns]")),
    ("text", np.array(["a", "bc", ""], dtype=object))])
def test_lazily_decoded_variables_are_found(tmp_path, engine, name, values):
    # (engine zarrx wraps decoded times in a guard of its own, below xarray's decoders)
    path = str(tmp_path / "d.zarr")
    ds = xr.Dataset({name: ("x", values)})
    zx.to_zarrx(ds, path)
    open_engine = ZarrxBackendEntrypoint if engine == "zarrx" else "zarr"
    src = xr.open_dataset(path, engine=open_engine, chunks={})
    with pytest.raises(ArgumentError, match=_message(name, f"/{name}", "/")):
        zx.to_zarrx(src, path, mode="w")
    xr.testing.assert_identical(
        xr.open_dataset(path, engine=ZarrxBackendEntrypoint).load(), ds)


def test_memory_store_source_is_refused():
    store: dict = {}
    zx.to_zarrx(_dataset(), store)
    src = xr.open_dataset(store, engine=ZarrxBackendEntrypoint, chunks={})
    with pytest.raises(ArgumentError, match=_message("a", "/a", "/")):
        zx.to_zarrx(src, store, mode="w")
    np.testing.assert_array_equal(
        xr.open_dataset(store, engine=ZarrxBackendEntrypoint).a.values, _dataset().a.values)


@pytest.mark.parametrize("fmt", [2, 3])
def test_tree_node_read_from_the_replaced_tree_is_refused_before_any_node_is_written(
        tmp_path, fmt):
    path = str(tmp_path / "t.zarr")
    tree = xr.DataTree.from_dict({"/": xr.Dataset({"a": ("x", np.arange(4.0))}),
                                  "/c": xr.Dataset({"b": ("y", np.arange(3.0) + 1)})})
    zx.to_zarrx(tree, path, zarr_format=fmt)
    src = xr.open_datatree(path, engine=ZarrxBackendEntrypoint, chunks={})
    new = xr.DataTree.from_dict({"/": xr.Dataset({"a": ("x", np.zeros(4))}),
                                 "/c": src["c"].to_dataset()})
    with pytest.raises(ArgumentError, match=_message("b", "/c/b", "/")):
        zx.to_zarrx(new, path, mode="w")
    back = xr.open_datatree(path, engine=ZarrxBackendEntrypoint).load()
    xr.testing.assert_identical(back, tree)


def test_lazy_sources_walks_the_graph_without_building_its_blocks(tmp_path):
    path = str(tmp_path / "d.zarr")
    zx.to_zarrx(xr.Dataset({"a": (("t", "x"), np.zeros((4000, 2)))}), path,
                encoding={"a": {"chunks": (1, 2)}})
    src = xr.open_dataset(path, engine=ZarrxBackendEntrypoint, chunks={})
    data = (src.a * 2 + 1).data
    assert [p for _, p in lazy_sources(data)] == ["a"]
    layers = data.__dask_graph__().layers
    assert not any(getattr(layer, "_cached_dict", None) for layer in layers.values())
