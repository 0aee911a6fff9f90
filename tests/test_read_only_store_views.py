"""A zarrx store object opened in mode "r" is handed out as a read-only view of itself, as
zarr-python 3.1 hands out ``store.with_read_only(True)``: ``node.store`` refuses writes, and
still reads what other handles write to the store. Deleting a missing attribute of a node
opened read-only is a KeyError, as in zarr-python."""
from __future__ import annotations

import numpy as np
import pytest

import zarrx
from zarrx.store import LocalStore, MemoryStore


def _stores(tmp_path):
    return [MemoryStore(), LocalStore(str(tmp_path / "d"))]


@pytest.mark.parametrize("kind", [0, 1], ids=["memory", "local"])
def test_nodes_opened_read_only_hand_out_a_read_only_store(kind, tmp_path):
    store = _stores(tmp_path)[kind]
    zarrx.open_group(store, mode="w").create_array("b", shape=(2,), dtype="i1")
    before = sorted(store.list_prefix(""))
    for node in (zarrx.open_group(store, mode="r"), zarrx.open(store, path="b", mode="r"),
                 zarrx.open_array(store, path="b", mode="r")):
        assert node.store.read_only and not store.read_only
        with pytest.raises(zarrx.errors.ReadOnlyError, match="is read-only, cannot open it "
                                                             "with mode 'w'"):
            zarrx.open_group(node.store, mode="w")         # it deleted the whole store
        with pytest.raises(zarrx.errors.ReadOnlyError):
            zarrx.consolidate_metadata(node.store)
    assert sorted(store.list_prefix("")) == before


def test_a_read_only_view_reads_what_other_handles_write():
    store = MemoryStore()
    zarrx.create_array(store, name="b", shape=(2,), dtype="i1")
    reader = zarrx.open_array(store, path="b", mode="r")
    zarrx.open_array(store, path="b", mode="r+")[...] = [4, 5]
    assert reader[...].tolist() == [4, 5]
    assert zarrx.open_array(reader.store, path="b", mode="r")[...].tolist() == [4, 5]


def test_copying_a_read_only_handle_over_itself_is_still_refused():
    store = MemoryStore()
    zarrx.create_array(store, name="b", shape=(2,), dtype="i1")[...] = [1, 2]
    source = zarrx.open_array(store, path="b", mode="r")
    with pytest.raises(zarrx.ArgumentError):
        zarrx.from_array(store, data=source, name="b", overwrite=True)
    assert zarrx.open_array(store, path="b", mode="r")[...].tolist() == [1, 2]
    np.testing.assert_array_equal(source[...], [1, 2])


@pytest.mark.parametrize("fmt", [2, 3])
def test_deleting_a_missing_attribute_of_a_read_only_node_names_the_key(fmt):
    # it raised ReadOnlyError; zarr-python 3.1 raises KeyError, as a dict does
    store = MemoryStore()
    zarrx.open_group(store, mode="w", zarr_format=fmt, attributes={"a": 1})
    g = zarrx.open_group(store, mode="r")
    with pytest.raises(zarrx.errors.ArgumentKeyError, match="no attribute 'x'"):
        del g.attrs["x"]
    with pytest.raises(zarrx.errors.ReadOnlyError):
        del g.attrs["a"]
    assert dict(g.attrs) == {"a": 1}


@pytest.mark.parametrize("kind", ["memory", "local"])
def test_a_store_subclass_opened_read_only_is_used_as_given(tmp_path, kind) -> None:
    """What a subclass records (here: the keys it was asked for) stays in the object the
    caller holds; the node opened with mode "r" still refuses writes."""
    base = zarrx.storage.MemoryStore if kind == "memory" else zarrx.storage.LocalStore

    class Recording(base):  # type: ignore[misc, valid-type]
        def get(self, key, byte_range=None):  # type: ignore[no-untyped-def]
            self.__dict__.setdefault("asked", []).append(key)
            return super().get(key, byte_range)

    store = Recording() if kind == "memory" else Recording(str(tmp_path / "s"))
    zarrx.create_array(store, shape=(4,), chunks=(2,), dtype="i4")[...] = 1
    z = zarrx.open_array(store, mode="r")
    assert z.store is store
    assert "zarr.json" in store.__dict__["asked"]
    with pytest.raises(zarrx.ReadOnlyError):
        z[...] = 2


def test_a_read_only_memory_store_says_so_in_its_repr() -> None:
    store = MemoryStore()
    zarrx.create_array(store, shape=(2,), chunks=(1,), dtype="i1")
    view = zarrx.open_array(store, mode="r").store
    assert repr(view) == "MemoryStore(<1 keys>, read_only=True)"
    assert repr(store) == "MemoryStore(<1 keys>)"
    with pytest.raises(zarrx.ReadOnlyError, match=r"read_only=True"):
        view.set("x", b"1")
