"""Consolidated entries are parsed when a node is used, not when its group is opened: opening
costs the JSON load and a check of the document's layout, listing names and kinds parses
nothing, and a malformed entry raises the MetadataError an eager parse gave (same key, same
JSON path) when that node is looked up, while ``zarrx check`` still reports it."""
from __future__ import annotations

import json
import pickle
import re

import pytest

import zarrx
from zarrx.metadata import consolidated as mcons
from zarrx.metadata import parse_v3, parse_zmetadata
from zarrx.metadata import v3 as mv3
from zarrx.store import MemoryStore
from zarrx.tools.check import check


def _hierarchy(fmt: int, n: int = 30) -> MemoryStore:
    st = MemoryStore()
    g = zarrx.open_group(st, mode="w", zarr_format=fmt)
    for i in range(n):
        g.create_array(f"a{i}", shape=(8,), chunks=(4,), dtype="i4", attributes={"i": i})
    g.create_group("sub").create_array("deep", shape=(3,), chunks=(3,), dtype="u1")
    zarrx.consolidate_metadata(st)
    return st


def _break_entry(st: MemoryStore, fmt: int, name: str) -> str:
    """Make the consolidated entry of ``name`` malformed; the message an eager parse of the
    whole document gives for it."""
    if fmt == 2:
        doc = json.loads(st.get(".zmetadata"))
        doc["metadata"][f"{name}/.zarray"]["shape"] = [8, "6"]
        st.set(".zmetadata", json.dumps(doc).encode())
        with pytest.raises(zarrx.MetadataError) as exc:
            parse_zmetadata(st.get(".zmetadata"), ".zmetadata")
    else:
        doc = json.loads(st.get("zarr.json"))
        doc["consolidated_metadata"]["metadata"][name]["shape"] = [-6]
        st.set("zarr.json", json.dumps(doc).encode())
        with pytest.raises(zarrx.MetadataError) as exc:
            parse_v3(st.get("zarr.json"), "zarr.json")
    return str(exc.value)


def _count_parses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    for module, name in ((mcons, "parse_array_v2"), (mcons, "parse_group_v2"),
                         (mv3, "_array"), (mv3, "_group")):
        real = getattr(module, name)
        monkeypatch.setattr(module, name,
                            lambda *a, _real=real, **k: calls.append(1) or _real(*a, **k))
    return calls


@pytest.mark.parametrize("fmt", [2, 3])
def test_opening_and_listing_parse_no_entry_and_a_lookup_parses_one(fmt, monkeypatch):
    st = _hierarchy(fmt)
    calls = _count_parses(monkeypatch)
    g = zarrx.open_group(st, mode="r", use_consolidated=True)
    opened = len(calls)             # the group itself (v2: its .zgroup and the root entry)
    assert opened <= 2
    assert len(g) == 31 and sorted(g.group_keys()) == ["sub"]
    assert len(list(g.array_keys())) == 30
    assert len(calls) == opened
    assert g["a7"].attrs["i"] == 7
    assert len(calls) == opened + 1
    assert g["a7"].shape == (8,) and len(calls) == opened + 1    # kept once parsed
    assert g.tree(max_nodes=2).count("\n") == 3
    assert len(calls) <= opened + 3
    assert len(g.members(max_depth=None)) == 32


@pytest.mark.parametrize("fmt", [2, 3])
def test_a_malformed_entry_raises_its_message_when_its_node_is_used(fmt):
    st = _hierarchy(fmt, 3)
    message = _break_entry(st, fmt, "a1")
    g = zarrx.open_group(st, mode="r")
    assert list(g.keys()) == ["a0", "a1", "a2", "sub"]
    assert g["a0"].attrs["i"] == 0 and g["sub"]["deep"].shape == (3,)
    for use in (lambda: g["a1"], lambda: g.members(), lambda: zarrx.open_consolidated(st)["a1"],
                lambda: g.metadata.consolidated["a1"]):
        with pytest.raises(zarrx.MetadataError, match=re.escape(message) + "$"):
            use()
    assert "a1" in g and "a1" in g.metadata.consolidated    # listed, as the document has it


@pytest.mark.parametrize("fmt", [2, 3])
def test_check_reports_a_malformed_entry_with_its_node(fmt):
    st = _hierarchy(fmt, 3)
    message = _break_entry(st, fmt, "a1")
    found = [(f.kind, f.key, f.node, f.detail) for f in check(st).findings]
    assert found == [("metadata", ".zmetadata" if fmt == 2 else "zarr.json", "/a1", message)]


def test_a_node_both_array_and_group_is_still_refused_when_the_group_opens():
    st = _hierarchy(2, 2)
    doc = json.loads(st.get(".zmetadata"))
    doc["metadata"]["a1/.zgroup"] = {"zarr_format": 2}
    st.set(".zmetadata", json.dumps(doc).encode())
    with pytest.raises(zarrx.MetadataError, match=re.escape(
            '.zmetadata metadata["a1/.zgroup"]: a node cannot be both an array and a group '
            '(.zarray is present too)')):
        zarrx.open_group(st, mode="r")
    doc["metadata"].pop("a1/.zgroup")
    doc["metadata"].pop("a1/.zarray")
    st.set(".zmetadata", json.dumps(doc).encode())
    with pytest.raises(zarrx.MetadataError, match=re.escape(
            '.zmetadata metadata["a1/.zattrs"]: attributes without a .zarray or .zgroup for '
            'the same node')):
        zarrx.open_group(st, mode="r")


@pytest.mark.parametrize("fmt", [2, 3])
def test_a_group_opened_lazily_pickles_and_equals_an_eager_parse(fmt):
    st = _hierarchy(fmt, 4)
    g = zarrx.open_group(st, mode="r")
    g["a2"]                                     # one entry parsed, the others not
    back = pickle.loads(pickle.dumps(g))
    assert back["a3"].attrs["i"] == 3 and back["sub"]["deep"].shape == (3,)
    eager = parse_zmetadata(st.get(".zmetadata"), ".zmetadata") if fmt == 2 else \
        parse_v3(st.get("zarr.json"), "zarr.json").consolidated
    eager = dict(eager)                         # (a group's metadata is read-only)
    eager.pop("", None)
    assert g.metadata.consolidated == eager and back.metadata.consolidated == eager


@pytest.mark.parametrize("fmt", [2, 3])
def test_an_entry_of_unknown_kind_raises_when_kinds_are_listed(fmt):
    st = _hierarchy(fmt, 2)
    if fmt == 2:        # no kind to miss in v2: a .zarray or a .zgroup is checked at open
        return
    doc = json.loads(st.get("zarr.json"))
    del doc["consolidated_metadata"]["metadata"]["a1"]["node_type"]
    st.set("zarr.json", json.dumps(doc).encode())
    g = zarrx.open_group(st, mode="r")
    assert "a1" in list(g.keys())
    with pytest.raises(zarrx.MetadataError, match=re.escape(
            "zarr.json consolidated_metadata.metadata[\"a1\"]: missing required field "
            "'node_type'")):
        list(g.array_keys())


@pytest.mark.parametrize("node_type", [[], {}, ["array"], 1, None],
                         ids=["list", "object", "list-of-name", "number", "null"])
def test_an_entry_whose_node_type_is_no_string_raises_when_its_kind_is_needed(node_type):
    """A node_type of another JSON type than a string (unhashable ones raised TypeError
    when the group was opened)."""
    st = _hierarchy(3, 2)
    doc = json.loads(st.get("zarr.json"))
    doc["consolidated_metadata"]["metadata"]["a1"]["node_type"] = node_type
    st.set("zarr.json", json.dumps(doc).encode())
    g = zarrx.open_group(st, mode="r")
    assert "a1" in list(g.keys())
    with pytest.raises(zarrx.MetadataError, match=re.escape(
            "zarr.json consolidated_metadata.metadata[\"a1\"].node_type: expected 'array' "
            f"or 'group', found {node_type!r}")):
        list(g.array_keys())


@pytest.mark.parametrize("fmt", [2, 3])
def test_an_opened_group_holds_about_its_loaded_document_not_a_parse_per_entry(fmt):
    """Counted with tracemalloc: the open holds the loaded JSON (and the parse cache's copy
    of the document's bytes) and a few hundred bytes per entry, not the 1.3-2.5 KB of
    metadata objects per array an eager parse held."""
    import gc
    import tracemalloc

    n = 2000
    st = _hierarchy(fmt, n)
    doc = st.get(".zmetadata" if fmt == 2 else "zarr.json")
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        loaded = json.loads(doc)
        json_bytes = tracemalloc.get_traced_memory()[0] - base
        del loaded
        gc.collect()
        base = tracemalloc.get_traced_memory()[0]
        g = zarrx.open_group(st, mode="r")
        held = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert held < json_bytes + len(doc) + 250 * n, (held, json_bytes, len(doc))
    assert len(g.members()) == n + 1          # the arrays and "sub"
