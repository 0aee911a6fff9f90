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
