"""Node metadata I/O: the parse cache never lets one handle's changes leak into another."""
from __future__ import annotations

import zarrx
from zarrx.metadata import node_read, nodes, parse_cache
from zarrx.store import MemoryStore


def test_reopen_is_equal_and_attributes_are_private():
    store = MemoryStore()
    zarrx.create_array(store, shape=(4,), dtype="i2", chunks=(2,), attributes={"a": {"b": 1}})
    m1 = nodes.load_node(store, "")
    m2 = nodes.load_node(store, "")
    assert m1 == m2
    # the parse is shared; what a handle shows is its own copy
    a = zarrx.open_array(store, mode="r")
    a.metadata.attributes["a"]["b"] = 99          # a user poking at the metadata object
    assert a.attrs["a"] == {"b": 99}
    assert nodes.load_node(store, "").attributes == {"a": {"b": 1}}
    assert zarrx.open_array(store, mode="r").metadata.attributes == {"a": {"b": 1}}


def test_changed_document_is_parsed_again():
    store = MemoryStore()
    z = zarrx.create_array(store, shape=(4,), dtype="i2", chunks=(2,))
    assert nodes.load_node(store, "").shape == (4,)
    z.resize((9,))
    assert nodes.load_node(store, "").shape == (9,)
    assert zarrx.open_array(store, mode="r").shape == (9,)


def test_consolidated_metadata_of_a_large_group_is_parsed_once(monkeypatch):
    store = MemoryStore()
    g = zarrx.open_group(store, mode="w")
    for i in range(300):                  # a consolidated document well over 64 KiB
        g.create_array(f"a{i}", shape=(4,), dtype="i2", chunks=(2,), attributes={"i": i})
    zarrx.consolidate_metadata(store)
    assert len(store.get("zarr.json")) > 1 << 16
    calls = []
    real = node_read.read_v3
    monkeypatch.setattr(node_read, "read_v3", lambda *a: calls.append(1) or real(*a))
    first = zarrx.open_group(store, mode="r")
    again = zarrx.open_group(store, mode="r")
    assert len(calls) == 1 and again["a299"].attrs["i"] == first["a299"].attrs["i"] == 299


def test_the_cache_holds_a_bounded_number_of_bytes(monkeypatch):
    monkeypatch.setattr(parse_cache, "_CACHE_BYTES", 4096)
    store = MemoryStore()
    for i in range(20):
        zarrx.create_array(store, name=f"a{i}", shape=(4,), dtype="i2", chunks=(2,),
                           attributes={"pad": "x" * 1000})
        nodes.load_node(store, f"a{i}")
    assert parse_cache._parsed_bytes <= 4096
    assert sum(size for _, size in parse_cache._parsed.values()) == parse_cache._parsed_bytes


def test_a_codec_chain_parsed_before_keeps_each_document_s_own_errors():
    import json

    import pytest

    from zarrx.errors import MetadataError
    from zarrx.metadata.v3 import parse_array_v3

    def doc(dtype, chunks):
        return json.dumps({
            "zarr_format": 3, "node_type": "array", "shape": [8] * len(chunks),
            "data_type": dtype,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
            "codecs": [{"name": "transpose", "configuration": {"order": [1, 0]}},
                       {"name": "bytes", "configuration": {"endian": "little"}}]}).encode()

    a = parse_array_v3(doc("int16", [4, 4]), "a/zarr.json")
    b = parse_array_v3(doc("int16", [4, 4]), "b/zarr.json")
    assert a.codecs == b.codecs
    with pytest.raises(MetadataError, match=r"^c/zarr\.json codecs\[0\]"):
        parse_array_v3(doc("int16", [4, 4, 4]), "c/zarr.json")   # order of another rank
