"""A to_zarrx write (not an append) whose dask-backed values fail as their blocks compute
leaves the store partly written, as xarray's writer does; the error says what the store holds
then and how to recover (docs/guide/xarray.md, "When a write of dask values fails"). An
append gives its rows back instead (tests/test_xarray_failed_dask_writes.py)."""
from __future__ import annotations

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
da = pytest.importorskip("dask.array")

import zarrx  # noqa: E402
import zarrx.xarray as zx  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::FutureWarning"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]

SYNC = {"scheduler": "synchronous"}


class Boom(RuntimeError):
    pass


def _fail_from(limit):
    def block(values):
        if values.max() >= limit:
            raise Boom("the graph failed")
        return values
    return block


def failing(n=8, limit=4.0):
    """Dask values 0..n-1 in blocks of 2, whose blocks holding ``limit`` or more fail."""
    return da.arange(float(n), chunks=2).map_blocks(_fail_from(limit))


def old_dataset():
    return xr.Dataset({"v": ("t", np.arange(8.0) + 100), "keep": ("s", np.arange(3))},
                      coords={"t": np.arange(8)})


def notes(info):
    return getattr(info.value, "__notes__", [])


@pytest.mark.parametrize("fmt", [2, 3])
def test_a_failed_replacing_write_says_the_group_was_replaced(tmp_path, fmt):
    # before: the graph's error alone, with no word of the old group being gone
    path = tmp_path / "a.zarr"
    zx.to_zarrx(old_dataset(), path, zarr_format=fmt, encoding={"v": {"chunks": (2,)}})
    new = xr.Dataset({"v": ("t", failing()), "w": ("t", np.ones(8))},
                     coords={"t": np.arange(8)})
    with pytest.raises(Boom, match="the graph failed") as info:
        zx.to_zarrx(new, path, mode="w", chunkmanager_store_kwargs=SYNC)
    assert notes(info) == [
        "to_zarrx: the group '/' was replaced: it holds the dataset's attributes, every "
        "variable's metadata and the values of those held in memory; what it held before is "
        "gone; the dask-backed variables ['v'] hold the blocks written before the failure "
        "(writes under way finished, none started after), the fill value elsewhere; write the "
        "dataset again with mode='w'"]
    # what the note says: the old variable is gone, the new ones are there, the one held in
    # memory written, the dask-backed one at the fill value where its blocks failed
    back = xr.open_dataset(path, engine=zx.ZarrxBackendEntrypoint).load()
    assert sorted(back.variables) == ["t", "v", "w"]
    assert back.w.values.tolist() == [1.0] * 8
    assert np.isnan(back.v.values[4:]).all()
    # and as it says, writing again with mode='w' recovers
    fixed = new.assign(v=("t", da.arange(8.0, chunks=2)))
    zx.to_zarrx(fixed, path, mode="w")
    xr.testing.assert_identical(xr.open_zarr(path).load(), fixed.load())


def test_a_failed_new_group_write_says_it_was_created(tmp_path):
    path = tmp_path / "a.zarr"
    ds = xr.Dataset({"v": ("t", failing())})
    with pytest.raises(Boom) as info:
        zx.to_zarrx(ds, path, group="g", chunkmanager_store_kwargs=SYNC)
    assert notes(info)[0].startswith("to_zarrx: the group 'g' was created: it holds")
    assert notes(info)[0].endswith("write the dataset again with mode='w'")
    assert "gone" not in notes(info)[0]


@pytest.mark.parametrize("region", [{"t": slice(2, 8)}, "auto"])
def test_a_failed_region_write_says_the_region_is_partly_written(tmp_path, region):
    path = tmp_path / "a.zarr"
    zx.to_zarrx(old_dataset(), path, encoding={"v": {"chunks": (2,)}})
    part = xr.Dataset({"v": ("t", failing(6, limit=4.0))}, coords={"t": np.arange(2, 8)})
    if region != "auto":
        part = part.drop_vars("t")
    with pytest.raises(Boom) as info:
        zx.to_zarrx(part, path, region=region, chunkmanager_store_kwargs=SYNC)
    assert notes(info) == [
        "to_zarrx: the region {'t': '2:8'} of '/' is partly written: the variables ['v'] hold "
        "the new values in the blocks written before the failure (writes under way finished, "
        "none started after), their previous values elsewhere; write the region again"]
    got = xr.open_zarr(path).v.values
    assert got[:2].tolist() == [100.0, 101.0] and got[6:].tolist() == [106.0, 107.0]
    for i in (2, 4):        # each stored chunk of the region: old or new values, whole
        assert got[i:i + 2].tolist() in ([i - 2.0, i - 1.0], [100.0 + i, 101.0 + i])


def test_a_failed_mode_a_write_names_added_and_rewritten_variables(tmp_path):
    path = tmp_path / "a.zarr"
    zx.to_zarrx(old_dataset(), path)
    ds = xr.Dataset({"v": ("t", failing()), "new": ("t", failing())},
                    coords={"t": np.arange(8)})
    with pytest.raises(Boom) as info:
        zx.to_zarrx(ds, path, mode="a", chunkmanager_store_kwargs=SYNC)
    note, = notes(info)
    assert "the dask-backed variables ['new'] hold the blocks written before" in note
    assert "the stored variables ['v'] hold the new values in the blocks" in note
    assert "replaced" not in note and note.endswith("again with mode='a'")
    assert xr.open_zarr(path).keep.values.tolist() == [0, 1, 2]


def test_a_write_refused_before_the_store_changes_has_no_note(tmp_path):
    path = tmp_path / "a.zarr"
    zx.to_zarrx(old_dataset(), path)
    with pytest.raises(zarrx.ArgumentError) as info:
        zx.to_zarrx(xr.Dataset({"v": ("t", failing(3))}), path, mode="r+")
    assert notes(info) == []


def test_a_failed_tree_write_says_what_each_group_holds(tmp_path):
    # every node is written (metadata and values held in memory) before the dask values of
    # all nodes compute together: the error notes the nodes whose dask values were cut short
    path = tmp_path / "t.zarr"
    tree = xr.DataTree.from_dict({"/": xr.Dataset({"a": ("x", np.arange(3))}),
                                  "/c": xr.Dataset({"v": ("y", failing())}),
                                  "/d": xr.Dataset({"w": ("y", np.arange(3))})})
    old = xr.DataTree.from_dict({"/": xr.Dataset({"a": ("x", np.arange(3))}),
                                 "/e": xr.Dataset({"w": ("y", np.arange(3))})})
    old.to_zarr(path)           # what the failed write replaces
    with pytest.raises(Boom) as info:
        zx.to_zarrx(tree, path, mode="w", chunkmanager_store_kwargs=SYNC)
    *each, last = notes(info)
    assert last == (
        "to_zarrx: the DataTree's dask-backed values (every node's, computed together) failed "
        "as they computed; the groups ['/', 'c', 'd'] are written but for those values (see "
        "the notes above); write the tree again")
    assert len(each) == 1 and each[0].startswith("to_zarrx: the group 'c' was replaced")
    assert "the dask-backed variables ['v'] hold the blocks written before" in each[0]
    assert sorted(zarrx.open_group(path, mode="r").group_keys()) == ["c", "d"]
    assert xr.open_zarr(path, group="d").w.values.tolist() == [0, 1, 2]


class FailingNodeDocument(zarrx.store.LocalStore):
    """A local store whose writes of node documents below ``d/`` fail."""

    def set(self, key, value):
        if key.startswith("d/") and key.rpartition("/")[2] in (
                "zarr.json", ".zarray", ".zattrs", ".zgroup"):
            raise zarrx.StoreError(f"injected failure writing {key}")
        super().set(key, value)


@pytest.mark.parametrize("compute", [True, False])
def test_a_tree_write_failing_at_a_node_says_the_earlier_dask_values_are_not_computed(
        tmp_path, compute):
    # the nodes' dask values compute together once every node is written: a node whose
    # metadata fails to be stored leaves those of the nodes before it uncomputed (as xarray's
    # writer does), and the note says so instead of calling those groups written
    path = tmp_path / "t.zarr"
    tree = xr.DataTree.from_dict({"/": xr.Dataset({"a": ("x", da.arange(4.0, chunks=2))}),
                                  "/c": xr.Dataset({"b": ("x", da.arange(4.0, chunks=2)),
                                                    "m": ("x", np.arange(4.0))}),
                                  "/d": xr.Dataset({"e": ("x", np.arange(4.0))})})
    with pytest.raises(zarrx.StoreError, match="injected failure") as info:
        zx.to_zarrx(tree, FailingNodeDocument(str(path)), compute=compute)
    assert notes(info) == [
        "to_zarrx: the DataTree's write failed at the group 'd'; the groups ['/', 'c'] before "
        "it are written but for the values of their dask-backed variables {'/': ['a'], "
        "'c': ['b']}, not computed (they hold the fill value, or in arrays stored before, "
        "their previous values); write the tree again"]
    back = xr.open_datatree(path, engine="zarr", consolidated=False)
    assert np.isnan(back["a"].values).all() and np.isnan(back["c/b"].values).all()
    assert back["c/m"].values.tolist() == [0.0, 1.0, 2.0, 3.0]


class FailingConsolidation(zarrx.store.LocalStore):
    """A local store whose writes of consolidated metadata (Zarr v2) fail."""

    def set_if(self, key, value, if_generation):
        if key == ".zmetadata":
            raise zarrx.StoreError(f"injected failure writing {key}")
        return super().set_if(key, value, if_generation)


@pytest.mark.parametrize("compute", [True, False])
def test_a_tree_write_whose_consolidation_fails_says_the_dask_values_are_not_computed(
        tmp_path, compute):
    path = tmp_path / "t.zarr"
    tree = xr.DataTree.from_dict({"/": xr.Dataset({"a": ("x", np.arange(4.0))}),
                                  "/c": xr.Dataset({"b": ("x", da.arange(4.0, chunks=2))})})
    with pytest.raises(zarrx.StoreError, match="injected failure") as info:
        zx.to_zarrx(tree, FailingConsolidation(str(path)), compute=compute, zarr_format=2)
    assert notes(info) == [
        "to_zarrx: the DataTree's groups ['/', 'c'] are written but for the values of their "
        "dask-backed variables {'c': ['b']}, not computed; its consolidated metadata is not; "
        "write the tree again"]
    back = xr.open_datatree(path, engine="zarr", consolidated=False)
    assert back["a"].values.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert np.isnan(back["c/b"].values).all()


def test_a_failed_tree_compute_stops_every_node_s_writes_before_waiting_for_any(
        tmp_path, monkeypatch):
    # the note says no block write started after the failure: while the writes under way of
    # one node are waited for, those of the other nodes must not start either
    from zarrx.dask.graph import WriteGate
    made, started = [], []
    init, close = WriteGate.__init__, WriteGate.close

    def recorded(self):
        init(self)
        made.append(self)

    def closing(self):
        for other in made:          # a write of another node starting meanwhile
            if other is not self and other.enter():
                started.append(other)
                other.leave()
        close(self)

    monkeypatch.setattr(WriteGate, "__init__", recorded)
    monkeypatch.setattr(WriteGate, "close", closing)
    tree = xr.DataTree.from_dict({"/": xr.Dataset({"v": ("x", failing())}),
                                  "/b": xr.Dataset({"w": ("x", da.arange(8.0, chunks=2))})})
    with pytest.raises(Boom):
        zx.to_zarrx(tree, tmp_path / "t.zarr", chunkmanager_store_kwargs=SYNC)
    assert len(made) == 2 and started == []
