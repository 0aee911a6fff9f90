"""A write into stored variables (a region, mode "r+", mode "a" over a stored variable) puts its
values into each array as stored when they are written: another writer that shrinks or
replaces an array after the group was listed and before the values go in has its change kept
(the write is refused outside the smaller shape; a replaced array gets the values on its own
chunk grid), never written through the listing's stale metadata, which would leave objects
outside the stored shape (brought back by a later grow) or under the old grid's keys (lost)."""
from __future__ import annotations

import numpy as np
import pytest

xr = pytest.importorskip("xarray")

import zarrx  # noqa: E402
import zarrx.xarray  # noqa: E402,F401
from zarrx.array import Array  # noqa: E402
from zarrx.errors import NodeNotFoundError, ZarrError  # noqa: E402
from zarrx.store import MemoryStore  # noqa: E402
from zarrx.xarray import writer  # noqa: E402


def _stored(fmt: int) -> MemoryStore:
    store = MemoryStore()
    xr.Dataset({"v": ("x", np.arange(6.0))}).zarrx.to_zarrx(
        store, zarr_format=fmt, encoding={"v": {"chunks": (2,)}}, consolidated=False)
    return store


def _write_after(monkeypatch, change) -> None:
    """Run ``change()`` once the next write is prepared (its group listed), before it applies."""
    apply = writer.PreparedWrite.apply

    def changed_first(self, **kw):
        change()
        return apply(self, **kw)
    monkeypatch.setattr(writer.PreparedWrite, "apply", changed_first)


def _region(store: MemoryStore) -> None:
    xr.Dataset({"v": ("x", np.array([40.0, 50.0]))}).zarrx.to_zarrx(
        store, region={"x": slice(4, 6)}, consolidated=False)


@pytest.mark.parametrize("fmt", [2, 3])
def test_a_region_outside_an_array_shrunk_meanwhile_is_refused(fmt, monkeypatch):
    store = _stored(fmt)
    _write_after(monkeypatch, lambda: zarrx.open_array(store, path="v", mode="r+").resize((2,)))
    with pytest.raises(ZarrError):
        _region(store)
    arr = zarrx.open_array(store, path="v", mode="r+")
    assert arr.shape == (2,)
    arr.resize((6,))            # nothing was stored outside the smaller shape
    assert np.isnan(arr[2:]).all() and arr[:2].tolist() == [0.0, 1.0]


@pytest.mark.parametrize("fmt", [2, 3])
def test_an_array_replaced_meanwhile_gets_the_values_on_its_own_grid(fmt, monkeypatch):
    store = _stored(fmt)

    def replace() -> None:
        attrs = dict(zarrx.open_array(store, path="v").attrs)
        new = zarrx.create_array(store, name="v", shape=(6,), chunks=(4,), dtype="f8",
                                 overwrite=True, attributes=attrs, zarr_format=fmt,
                                 dimension_names=["x"] if fmt == 3 else None)
        new[:] = np.arange(100.0, 106.0)
    _write_after(monkeypatch, replace)
    _region(store)
    arr = zarrx.open_array(store, path="v")
    assert arr[:].tolist() == [100.0, 101.0, 102.0, 103.0, 40.0, 50.0]
    prefix = "v/" if fmt == 2 else "v/c/"
    assert sorted(k for k in store.list_prefix(prefix) if k[len(prefix):].isdigit()) == \
        [prefix + "0", prefix + "1"]        # no object of the old grid's keys


@pytest.mark.parametrize("fmt", [2, 3])
def test_an_array_deleted_meanwhile_is_not_written(fmt, monkeypatch):
    store = _stored(fmt)
    _write_after(monkeypatch, lambda: zarrx.open_group(store, mode="r+").__delitem__("v"))
    with pytest.raises(ZarrError):
        _region(store)
    assert list(store.list_prefix("v/")) == []


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("error", [NodeNotFoundError, KeyboardInterrupt])
def test_an_append_whose_grows_fail_part_way_gives_its_rows_back(fmt, error, monkeypatch):
    """A grow failing after the rows were claimed (another writer deleted an array meanwhile,
    an interrupt) shrinks back the arrays grown so far: the variables keep one length."""
    store = MemoryStore()
    names = ["t", "v0", "v1", "v2"]
    xr.Dataset({n: ("t", np.array([-1.0])) for n in names[1:]}, coords={"t": [-1]}
               ).zarrx.to_zarrx(store, zarr_format=fmt)
    grow, calls = Array._grow, []

    def failing(self, grown):
        calls.append(self.path)
        if len(calls) == 3:
            raise error("the third grow fails")
        return grow(self, grown)
    monkeypatch.setattr(Array, "_grow", failing)
    with pytest.raises(error):
        xr.Dataset({n: ("t", np.array([1.0])) for n in names[1:]}, coords={"t": [1]}
                   ).zarrx.to_zarrx(store, append_dim="t")
    monkeypatch.undo()
    assert {n: zarrx.open_array(store, path=n).shape for n in names} == dict.fromkeys(names, (1,))
    root = zarrx.open_group(store, mode="r", use_consolidated=True)
    assert {n: root[n].shape for n in names} == dict.fromkeys(names, (1,))
