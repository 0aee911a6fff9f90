"""Node metadata I/O: the parse cache never lets one handle's changes leak into another."""
from __future__ import annotations

import zarrx
from zarrx.metadata import nodes
from zarrx.store import MemoryStore


def test_reopen_is_equal_and_attributes_are_private():
    store = MemoryStore()
    zarrx.create_array(store, shape=(4,), dtype="i2", chunks=(2,), attributes={"a": {"b": 1}})
    m1 = nodes.load_node(store, "")
    m2 = nodes.load_node(store, "")
    assert m1 == m2
    m1.attributes["a"]["b"] = 99          # a user poking at the metadata object
    assert nodes.load_node(store, "").attributes == {"a": {"b": 1}}


def test_changed_document_is_parsed_again():
    store = MemoryStore()
    z = zarrx.create_array(store, shape=(4,), dtype="i2", chunks=(2,))
    assert nodes.load_node(store, "").shape == (4,)
    z.resize((9,))
    assert nodes.load_node(store, "").shape == (9,)
    assert zarrx.open_array(store, mode="r").shape == (9,)
