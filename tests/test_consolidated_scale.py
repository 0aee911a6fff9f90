"""Walking a consolidated hierarchy is linear in its size, whatever its shape."""
from __future__ import annotations

import gc
import time

import pytest

import zarrx
from zarrx.metadata import nodes
from zarrx.metadata.consolidated import with_consolidated
from zarrx.metadata.make import make_array_meta
from zarrx.metadata.model import GroupMeta
from zarrx.store import MemoryStore


def paths(shape: str, n: int) -> list[str]:
    if shape == "flat":
        return [f"g{i}" for i in range(n)]
    if shape == "tree":                         # 100 groups of (n / 100 - 1) groups each
        return [p for i in range(100)
                for p in [f"g{i}"] + [f"g{i}/h{j}" for j in range(n // 100 - 1)]]
    return [f"c{i}/" + "/".join(f"d{k}" for k in range(j))   # n / 50 chains 50 groups deep
            for i in range(n // 50) for j in range(50)]


def consolidated_root(shape: str, n: int, fmt: int) -> zarrx.Group:
    """A root group carrying consolidated metadata for ``n`` groups and one array."""
    entries = {p.rstrip("/"): GroupMeta(zarr_format=fmt) for p in paths(shape, n)}
    entries["g0/arr" if shape != "deep" else "c0/d0/arr"] = make_array_meta(
        shape=(4,), dtype="i2", chunks=(2,), zarr_format=fmt)
    meta = with_consolidated(GroupMeta(zarr_format=fmt), entries)
    return zarrx.Group(MemoryStore(), "", meta, read_only=True)


def walk_time(group: zarrx.Group) -> tuple[float, list]:
    """The best of 2 CPU times of a full walk. The cyclic garbage collector is paused while
    timing: its passes scan every object of the test process, not only the walk's."""
    best, members = float("inf"), []
    for _ in range(2):
        members = []
        gc.collect()
        gc.disable()
        try:
            t = time.process_time()
            members = list(group.members(max_depth=None))
            best = min(best, time.process_time() - t)
        finally:
            gc.enable()
    return best, members


@pytest.mark.parametrize("shape", ["flat", "tree", "deep"])
def test_members_of_a_consolidated_hierarchy_is_linear(shape):
    small, _ = walk_time(consolidated_root(shape, 5000, 3))
    large, members = walk_time(consolidated_root(shape, 20000, 3))
    assert len(members) == 20001
    assert all(isinstance(m, zarrx.Group) for p, m in members if not p.endswith("arr"))
    assert large < 1.0                          # 20k groups well under a second
    assert large < 8 * small + 0.05             # 4x the groups: under 8x the time


def test_a_consolidated_document_of_20k_groups_opens_and_walks(tmp_path):
    entries = {f"g{i}": GroupMeta(zarr_format=2) for i in range(20000)}
    store = MemoryStore()
    nodes.save_node(store, "", GroupMeta(zarr_format=2))
    store.set(".zmetadata", zarrx.metadata.dumps(zarrx.metadata.serialize_zmetadata(
        {"": GroupMeta(zarr_format=2), **entries})))
    group = zarrx.open_consolidated(store)
    gc.collect()
    gc.disable()
    try:
        t = time.process_time()
        names = [name for name, _ in group.members(max_depth=None)]
        elapsed = time.process_time() - t
    finally:
        gc.enable()
    assert elapsed < 1.0
    assert names == sorted(entries)


def test_members_from_consolidated_equal_members_from_the_store():
    store = MemoryStore()
    root = zarrx.open_group(store, mode="w", zarr_format=2)
    for p in ("a", "a/b", "a/b/c", "a/z", "y"):
        root.create_group(p)
    root.create_array("a/b/arr", shape=(3,), dtype="u1", chunks=(3,))
    plain = {depth: [(n, type(m).__name__) for n, m in root.members(max_depth=depth)]
             for depth in (0, 1, None)}
    zarrx.consolidate_metadata(store)
    group = zarrx.open_consolidated(store)
    for depth, expected in plain.items():
        assert [(n, type(m).__name__) for n, m in group.members(max_depth=depth)] == expected
    sub = group["a"]
    assert [n for n, _ in sub.members(max_depth=None)] == ["b", "b/arr", "b/c", "z"]
    assert sorted(sub.metadata.consolidated) == ["b", "b/arr", "b/c", "z"]
    assert sub["b"]["arr"].shape == (3,) and "c" in sub["b"] and len(sub["b"]) == 2


def _zmetadata(n: int) -> dict:
    za = {"zarr_format": 2, "shape": [4], "chunks": [2], "dtype": "<i4", "fill_value": 0,
          "order": "C", "filters": None, "compressor": None}
    md: dict = {".zgroup": {"zarr_format": 2}}
    for i in range(n):
        md[f"g{i}/.zgroup"] = {"zarr_format": 2}
        md[f"g{i}/.zattrs"] = {"i": i}
        md[f"g{i}/a/.zarray"] = za
    return {"zarr_consolidated_format": 1, "metadata": md}


@pytest.mark.parametrize("as_bytes", [True, False])
def test_a_zmetadata_document_is_walked_once_not_once_per_entry(monkeypatch, as_bytes):
    """Each entry of a loaded ``.zmetadata`` was checked again as a document of its own (a
    second walk of every object, 18 % of the time of opening 200,000 entries)."""
    from zarrx.metadata import json as mjson
    from zarrx.metadata.consolidated import parse_zmetadata
    walks = []
    real = mjson.check_tree
    monkeypatch.setattr(mjson, "check_tree", lambda *a, **k: walks.append(1) or real(*a, **k))
    doc = _zmetadata(50)
    payload = mjson.dumps(doc) if as_bytes else doc
    walks.clear()
    entries = parse_zmetadata(payload, ".zmetadata")
    assert len(entries) == 101
    assert entries["g7"].attributes == {"i": 7} and entries["g7/a"].shape == (4,)
    assert len(walks) == (0 if as_bytes else 1)     # a dict given is checked as a whole


def test_the_garbage_collector_is_paused_while_consolidated_metadata_is_parsed(monkeypatch):
    """Parsing allocates an object or more per entry, none in a cycle: the collections those
    allocations set off (40 % of the time of opening a large ``.zmetadata``) are not run; the
    collector runs again afterwards, after a failed parse too."""
    from zarrx.metadata import consolidated as mcons
    from zarrx.metadata.v2 import parse_group_v2
    seen = []

    def parse(*args, **kw):
        seen.append(gc.isenabled())
        return parse_group_v2(*args, **kw)

    monkeypatch.setattr(mcons, "parse_group_v2", parse)
    assert gc.isenabled()
    assert len(mcons.parse_zmetadata(_zmetadata(3), ".zmetadata")) == 7
    assert seen and not any(seen) and gc.isenabled()
    bad = _zmetadata(3)
    bad["metadata"]["g1/.zgroup"] = {"zarr_format": 5}
    with pytest.raises(zarrx.ZarrError, match=r'metadata\["g1/.zgroup"\] zarr_format'):
        mcons.parse_zmetadata(bad, ".zmetadata")
    assert gc.isenabled()
    g = zarrx.open_consolidated(MemoryStore({".zgroup": b'{"zarr_format": 2}',
                                             ".zmetadata": mjson_bytes(_zmetadata(2))}), mode="r")
    assert sorted(g.group_keys()) == ["g0", "g1"] and gc.isenabled()


def mjson_bytes(doc: dict) -> bytes:
    from zarrx.metadata import json as mjson
    return mjson.dumps(doc)


def test_a_consolidated_entry_of_json_null_or_text_is_refused_as_before():
    from zarrx.metadata.consolidated import parse_zmetadata
    doc = _zmetadata(1)
    doc["metadata"]["g0/.zgroup"] = None
    with pytest.raises(zarrx.ZarrError, match=r"expected a JSON document .*found NoneType"):
        parse_zmetadata(doc, ".zmetadata")
    doc["metadata"]["g0/.zgroup"] = [1]
    with pytest.raises(zarrx.ZarrError, match=r"expected a JSON document .*found list"):
        parse_zmetadata(doc, ".zmetadata")
    doc["metadata"]["g0/.zgroup"] = {"zarr_format": 2}
    doc["metadata"]["g0/.zattrs"] = None                # no attributes, as zarr-python reads it
    assert parse_zmetadata(doc, ".zmetadata")["g0"].attributes == {}


def test_parsing_a_zmetadata_document_holds_little_beyond_its_result():
    """The documents were gathered into one dict per node before parsing (380 bytes per node of
    a group and its attributes beyond what the parse returns, 550 before that with each
    entry's tree walked again); the nodes' paths in one dict take about 260."""
    import tracemalloc

    from zarrx.metadata import json as mjson
    from zarrx.metadata.consolidated import parse_zmetadata
    n = 20_000
    md: dict = {".zgroup": {"zarr_format": 2}}
    for i in range(n):
        md[f"g{i}/.zgroup"] = {"zarr_format": 2}
        md[f"g{i}/.zattrs"] = {}
    doc = mjson.dumps({"zarr_consolidated_format": 1, "metadata": md})
    del md
    tracemalloc.start()
    try:
        out = parse_zmetadata(doc, ".zmetadata")
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(out) == n + 1
    assert (peak - kept) / n < 320


def test_parses_in_several_threads_keep_the_collector_paused_until_the_last_ends():
    """Two threads parsing at once: the collector stays paused while either parses, and runs
    again once both are done, whichever ends first."""
    from zarrx.metadata.json import gc_paused
    assert gc.isenabled()
    first, second = gc_paused(), gc_paused()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert not gc.isenabled()          # the second parse is still running
    second.__exit__(None, None, None)
    assert gc.isenabled()
