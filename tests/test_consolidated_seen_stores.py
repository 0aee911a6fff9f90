"""What a chain of group creations remembers of a store's group documents (their generations,
and whether each may hold consolidated metadata) belongs to that store object: never shared
with an equal store, never keeping the store alive, and gone once the store is collected."""
from __future__ import annotations

import gc
import weakref

import pytest

import zarrx
from zarrx.metadata import consolidated_edit
from zarrx.store import LocalStore, MemoryStore


def _chain(store, zarr_format: int) -> None:
    g = zarrx.open_group(store, mode="w", zarr_format=zarr_format)
    zarrx.consolidate_metadata(store)
    g = zarrx.open_group(store, mode="r+")
    g.create_group("a").create_group("b").create_group("c")


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_what_is_remembered_of_a_store_is_forgotten_with_it(tmp_path, zarr_format):
    gc.collect()
    before = len(consolidated_edit._SEEN)
    refs = []
    for i in range(20):
        store = MemoryStore() if i % 2 else LocalStore(str(tmp_path / f"{i}.zarr"))
        _chain(store, zarr_format)
        assert id(store) in consolidated_edit._SEEN         # remembered while it lives
        refs.append(weakref.ref(store))
        del store
    gc.collect()
    assert all(ref() is None for ref in refs)               # the memory never kept them
    assert len(consolidated_edit._SEEN) == before


def test_equal_memory_stores_are_remembered_apart_without_comparing_them(monkeypatch):
    """Memory stores holding equal values are equal (as zarr-python's); what one remembers is
    still its own, found by identity, never by comparing their contents."""
    compared = []
    real = MemoryStore.__eq__

    def eq(self, other):
        compared.append(1)
        return real(self, other)

    monkeypatch.setattr(MemoryStore, "__eq__", eq)
    one, two = MemoryStore(), MemoryStore()
    _chain(one, 3)
    _chain(two, 3)
    assert one == two and compared
    compared.clear()
    zarrx.open_group(one, mode="r+")["a/b/c"].create_group("d")
    zarrx.open_group(two, mode="r+")["a/b"].create_group("e")
    assert compared == []
    seen_one, seen_two = consolidated_edit._SEEN[id(one)], consolidated_edit._SEEN[id(two)]
    assert seen_one is not seen_two and seen_one and seen_two
    for store, new in ((one, "a/b/c/d"), (two, "a/b/e")):
        listed = zarrx.open_group(store, mode="r")
        assert listed.metadata.consolidated is not None
        assert new in {n for n, _ in listed.members(max_depth=None)}
