"""Creating a node in a consolidated hierarchy after another writer changed its consolidated
document parses that document once: the check of the groups above the new node (which reads
the root's document) keeps its parse for the edit that keeps the document in step. It was
parsed twice (once by the check, once by the edit), except for a v3 hierarchy in a local
directory. The bytes written are those of the edit alone (see
tests/test_consolidated_kept_documents.py)."""
from __future__ import annotations

import json

import pytest

import zarrx
from zarrx.metadata import json as mjson
from zarrx.store import LocalStore, MemoryStore

BIG = 20_000        # bytes: a document larger than any node's own


def _key(fmt):
    return "zarr.json" if fmt == 3 else ".zmetadata"


def _hierarchy(store, fmt, n):
    g = zarrx.open_group(store, mode="w", zarr_format=fmt)
    doc = zarrx.create_array(MemoryStore(), shape=(100,), chunks=(25,), dtype="f4",
                             zarr_format=fmt).metadata.to_dict()
    g.create_hierarchy({f"a{i}": doc for i in range(n)})
    zarrx.consolidate_metadata(store)
    return zarrx.open_group(store, mode="a")


def _big_parses(monkeypatch):
    """The sizes of the JSON documents of more than BIG bytes parsed from now on (the parser
    is called once per document)."""
    real = mjson._parse_unique
    sizes: list[int] = []

    def counting(text, keys, allow_nonfinite):
        if len(text) > BIG:
            sizes.append(len(text))
        return real(text, keys, allow_nonfinite)
    monkeypatch.setattr(mjson, "_parse_unique", counting)
    return sizes


@pytest.mark.parametrize("kind", ["memory", "local"])
@pytest.mark.parametrize("fmt", [2, 3])
def test_a_creation_after_another_writer_parses_the_document_once(fmt, kind, tmp_path,
                                                                  monkeypatch):
    store = MemoryStore() if kind == "memory" else LocalStore(str(tmp_path / "d.zarr"))
    g = _hierarchy(store, fmt, 300)
    g.create_array("first", shape=(4,), dtype="i2")
    key = _key(fmt)
    # another writer's document: the same JSON, other bytes
    store.set(key, json.dumps(json.loads(store.get(key)), separators=(",", ":")).encode())
    parses = _big_parses(monkeypatch)
    g.create_array("after", shape=(4,), dtype="i2")
    assert len(parses) == 1                 # was 2 (v3 in a local directory: 1)
    parses.clear()
    g.create_group("then")
    assert parses == []
    doc = json.loads(store.get(key))
    entries = doc["consolidated_metadata"]["metadata"] if fmt == 3 else \
        {k.rpartition("/")[0] for k in doc["metadata"]}
    assert {"first", "after", "then", "a299"} <= set(entries)
    names = {n for n, _ in zarrx.open_group(store, mode="r").members()}
    assert {"first", "after", "then", "a0"} <= names and len(names) == 303


@pytest.mark.parametrize("fmt", [2, 3])
def test_a_failed_creation_leaves_the_document_to_be_read(fmt, monkeypatch):
    """The parse a check kept for the edit is the document as stored: a creation refused
    after the check changes nothing, and the next reader sees the other writer's entries."""
    store = MemoryStore()
    g = _hierarchy(store, fmt, 300)
    key = _key(fmt)
    doc = json.loads(store.get(key))
    store.set(key, json.dumps(doc, separators=(",", ":")).encode())
    with pytest.raises(zarrx.errors.ContainsArrayError):
        g.create_array("a7/below", shape=(2,), dtype="i1")
    assert json.loads(store.get(key)) == doc
    held = zarrx.open_group(store, mode="r")["a0"].attrs.asdict()
    assert held == {}
