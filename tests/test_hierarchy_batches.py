"""``create_hierarchy`` writes its nodes and the implicit groups above them together: each
consolidated document above them is edited a fixed number of times, however many nodes there
are (each node edited the documents listing it twice: 1,000 nodes into a consolidated
hierarchy took 50 s), and the store reads grow in proportion to the nodes and their depth.
With ``overwrite=True`` the groups between a replaced node and the nodes given below it are
made anew (they went with the replaced subtree, leaving those nodes unreachable)."""
from __future__ import annotations

import pytest

import zarrx
from zarrx.store import CountingStore, MemoryStore

CASES = [(fmt, consolidated) for fmt in (2, 3) for consolidated in (False, True)]
IDS = [f"v{fmt}{'-consolidated' if c else ''}" for fmt, c in CASES]


def _group(fmt):
    return {"zarr_format": 3, "node_type": "group"} if fmt == 3 else {"zarr_format": 2}


def _array(fmt):
    meta = zarrx.create_array(MemoryStore(), shape=(2,), dtype="i1", zarr_format=fmt).metadata
    return meta.to_dict()


def _costs(shape, n, fmt, consolidated):
    store = CountingStore(MemoryStore())
    g = zarrx.open_group(store, mode="w", zarr_format=fmt)
    if consolidated:
        zarrx.consolidate_metadata(store)
    if shape == "wide":
        nodes = {f"w{j % 10}/{'a' if j % 2 else 'g'}{j}": _array(fmt) if j % 2 else _group(fmt)
                 for j in range(n)}
    else:
        nodes = {"/".join(["g"] * n): _array(fmt)}
    store.reset()
    g.create_hierarchy(nodes)
    root_doc = "zarr.json" if fmt == 3 else ".zmetadata"
    listed = {name for name, _ in zarrx.open_group(store, mode="r").members(max_depth=None)}
    assert set(nodes) <= listed
    return store.counts["get"], store.sets_by_key[root_doc]


@pytest.mark.parametrize("shape", ["wide", "deep"])
@pytest.mark.parametrize("fmt,consolidated", CASES, ids=IDS)
def test_the_cost_of_a_hierarchy_grows_in_proportion_to_its_nodes(shape, fmt, consolidated):
    small_reads, small_writes = _costs(shape, 100, fmt, consolidated)
    large_reads, large_writes = _costs(shape, 300, fmt, consolidated)
    assert large_reads < 3.5 * small_reads, (small_reads, large_reads)
    assert large_writes == small_writes <= 3, (small_writes, large_writes)


@pytest.mark.parametrize("fmt,consolidated", CASES, ids=IDS)
def test_overwrite_makes_the_groups_between_a_replaced_node_and_the_nodes_below_anew(
        fmt, consolidated):
    store = MemoryStore()
    g = zarrx.open_group(store, mode="w", zarr_format=fmt)
    g.create_group("a/b/old")
    if consolidated:
        zarrx.consolidate_metadata(store)
    zarrx.create_hierarchy(store=store, nodes={"a": _group(fmt), "a/b/c/d": _array(fmt)},
                           overwrite=True)
    for use_consolidated in (False, None):
        got = zarrx.open_group(store, mode="r", use_consolidated=use_consolidated)
        assert sorted(n for n, _ in got.members(max_depth=None)) == \
            ["a", "a/b", "a/b/c", "a/b/c/d"]
        assert got["a/b/c/d"].shape == (2,)


@pytest.mark.parametrize("fmt", [2, 3])
def test_save_group_edits_the_consolidated_metadata_above_it_once_for_all_its_arrays(fmt):
    # before: each array edited the root's consolidated document twice (its pending mark,
    # then its entry), so saving n arrays rewrote a document of n entries 2n times
    import numpy as np

    root_doc = "zarr.json" if fmt == 3 else ".zmetadata"
    writes = {}
    for n in (10, 40):
        store = CountingStore(MemoryStore())
        g = zarrx.open_group(store, mode="w", zarr_format=fmt)
        g.create_array("kept", shape=(2,), dtype="i1")
        g.create_group("sub/old")
        zarrx.consolidate_metadata(store)
        store.reset()
        arrays = {f"a{i}": np.arange(i, i + 3) for i in range(n)}
        zarrx.save_group(store, path="sub", zarr_format=fmt, **arrays)
        writes[n] = store.sets_by_key[root_doc]
        listed = zarrx.open_group(store, mode="r")
        assert listed.metadata.consolidated is not None
        assert sorted(listed["sub"].keys()) == sorted(arrays)       # "old" replaced
        assert "kept" in listed
        for name, values in arrays.items():
            np.testing.assert_array_equal(listed[f"sub/{name}"][...], values)
    assert writes[10] == writes[40] <= 6, writes


@pytest.mark.parametrize("fmt", [2, 3])
def test_convert_of_a_hierarchy_edits_the_consolidated_metadata_above_it_once(fmt):
    # before: each array and each group converted edited the destination's consolidated
    # document twice, so converting n arrays rewrote a document of n entries 2n times
    root_doc = "zarr.json" if fmt == 3 else ".zmetadata"
    writes = {}
    for n in (10, 40):
        src = zarrx.open_group(MemoryStore(), mode="w", zarr_format=fmt)
        for i in range(n):
            src.create_array(f"g{i % 3}/a{i}", shape=(4,), dtype="i2")[...] = i
        store = CountingStore(MemoryStore())
        dst = zarrx.open_group(store, mode="w", zarr_format=fmt)
        sub = dst.create_group("sub")
        zarrx.consolidate_metadata(store)
        store.reset()
        report = zarrx.convert(src, sub, overwrite=True, verify=True)
        assert report.ok
        writes[n] = store.sets_by_key[root_doc]
        listed = zarrx.open_group(store, mode="r")
        assert listed.metadata.consolidated is not None
        assert sorted(name for name, _ in listed["sub"].members(max_depth=None)) == sorted(
            [f"g{j}" for j in range(3)] + [f"g{i % 3}/a{i}" for i in range(n)])
        assert listed[f"sub/g{(n - 2) % 3}/a{n - 2}"][...].tolist() == [n - 2] * 4
    assert writes[10] == writes[40] <= 4, writes
