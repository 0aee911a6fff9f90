"""Sequences of operations that once went wrong, found by the model-based tests of
tests/test_stateful.py, each reduced to its few steps."""
from __future__ import annotations

import os

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
