"""Sequences of operations that once went wrong, found by the model-based tests of
tests/test_stateful_arrays.py and tests/test_stateful_trees.py, each reduced to its few steps."""
from __future__ import annotations

import json
import os
import warnings

import pytest

import zarrx
from zarrx.store import CountingStore, MemoryStore, ZipStore


@pytest.mark.parametrize("fmt", [2, 3])
def test_a_move_in_a_zip_archive_is_refused_before_anything_is_copied(tmp_path, fmt):
    path = os.path.join(tmp_path, "a.zip")
    store = ZipStore(path, mode="w")
    g = zarrx.open_group(store, mode="w", zarr_format=fmt)
    g.create_group("a").create_array("x", shape=(3,), dtype="i2", chunks=(2,))[:] = 1
    before = sorted(store.list_prefix(""))
    with pytest.raises(zarrx.StoreError) as info:
        g.move("a/x", "y")
    assert str(info.value) == (f"group '/': cannot move 'a/x' to 'y': {store!r} cannot delete "
                               "objects, so the source would stay")
    assert sorted(store.list_prefix("")) == before
    store.close()
    with ZipStore(path) as again:
        assert [n for n, _ in zarrx.open_group(again, mode="r").members(max_depth=None)] == \
            ["a", "a/x"]


def test_stores_say_whether_they_can_delete(tmp_path):
    with ZipStore(os.path.join(tmp_path, "a.zip"), mode="w") as zip_store:
        assert zip_store.supports_deletes is False
        assert CountingStore(zip_store).supports_deletes is False
    assert MemoryStore().supports_deletes is True
    assert CountingStore(MemoryStore()).supports_deletes is True
    zarr = pytest.importorskip("zarr")
    from zarrx.store.zarrpy import ZarrPythonStore
    archive = zarr.storage.ZipStore(os.path.join(tmp_path, "b.zip"), mode="w")
    assert ZarrPythonStore(archive).supports_deletes is False
    archive.close()
    assert ZarrPythonStore(zarr.storage.MemoryStore()).supports_deletes is True


@pytest.mark.parametrize("fmt", [2, 3])
def test_consolidated_metadata_kept_in_step_lists_each_groups_entries_together(fmt):
    """Entries added as nodes are created go next to their group's other entries, in
    zarr-python's order (by depth, then by path), so zarr-python (which looks for a group's
    children among neighbouring entries of one depth) lists every member."""
    zarr = pytest.importorskip("zarr")
    from zarr.core.buffer import default_buffer_prototype
    store = MemoryStore()
    g = zarrx.open_group(store, mode="w", zarr_format=fmt)
    g.create_group("a")
    g.create_group("b")
    zarrx.consolidate_metadata(store)
    g = zarrx.open_group(store, mode="r+")
    g["a"].create_group("x")
    g["b"].create_group("y")
    g["a"].create_group("z")
    doc = json.loads(store.get(".zmetadata" if fmt == 2 else "zarr.json"))
    entries = list(doc["metadata"] if fmt == 2 else doc["consolidated_metadata"]["metadata"])
    paths = [k.rpartition("/")[0] for k in entries] if fmt == 2 else entries
    assert [p for i, p in enumerate(paths) if p not in paths[:i]] == \
        (["", "a", "b", "a/x", "a/z", "b/y"] if fmt == 2 else ["a", "b", "a/x", "a/z", "b/y"])
    buffers = {k: default_buffer_prototype().buffer.from_bytes(store.get(k))
               for k in store.list_prefix("")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # zarr-python's warning on v3 consolidated metadata
        found = zarr.open_group(zarr.storage.MemoryStore(buffers), mode="r",
                                use_consolidated=True)
        assert sorted(n for n, _ in found.members(max_depth=None)) == \
            ["a", "a/x", "a/z", "b", "b/y"]


@pytest.mark.parametrize("fmt", [2, 3])
def test_deleting_an_attribute_another_handle_set_deletes_it_as_stored(fmt):
    store = MemoryStore()
    a = zarrx.create_array(store, shape=(2,), dtype="i2", zarr_format=fmt)
    b = zarrx.open_array(store, mode="r+")          # opened before the attribute was set
    a.attrs["c"] = 1
    del b.attrs["c"]
    assert dict(zarrx.open_array(store).attrs) == {} == dict(b.attrs)
    with pytest.raises(zarrx.ArgumentKeyError) as info:      # a KeyError, as in zarr-python
        del b.attrs["c"]
    assert str(info.value) == "attributes of array '/': no attribute 'c'"
