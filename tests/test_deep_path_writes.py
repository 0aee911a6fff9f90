"""Creating a node at the end of a deep path of missing groups (``create_group("g/" * n)``,
``open_group(path=..., mode="a")``, ``move`` to such a path, ``zarrx.create_group(store,
path=...)``, ``zarrx.create_array(store, name=...)``) costs store reads in proportion
to the depth: the implicit groups are written together, with the consolidated documents above
them edited once for all of them, and the documents already read are not read again for each
group (each group read every document above it: about n**2 / 2 reads, and with consolidated
metadata n rewrites of a document listing n groups)."""
from __future__ import annotations

import pytest

import zarrx
from zarrx.store import CountingStore, MemoryStore

CASES = [(fmt, consolidated) for fmt in (2, 3) for consolidated in (False, True)]
IDS = [f"v{fmt}{'-consolidated' if c else ''}" for fmt, c in CASES]
OPS = {
    "create_group": lambda g, path: g.create_group(path),
    "open_group": lambda g, path: zarrx.open_group(g.store, path=path, mode="a"),
    "move": lambda g, path: g.move("src", path),
    "zarrx.create_group": lambda g, path: zarrx.create_group(g.store, path=path),
    "zarrx.create_array": lambda g, path: zarrx.create_array(g.store, name=path, shape=(2,),
                                                             dtype="i1"),
}


def _costs(op: str, depth: int, zarr_format: int, consolidated: bool) -> tuple[int, int, dict]:
    """``(reads, writes of the root's consolidated document, the root group's listing)`` of
    one ``op`` to a path ``depth`` groups deep."""
    store = CountingStore(MemoryStore())
    g = zarrx.open_group(store, mode="w", zarr_format=zarr_format)
    g.create_group("src/inner")
    if consolidated:
        zarrx.consolidate_metadata(store)
    store.reset()
    OPS[op](g, "/".join(["g"] * depth))
    root_doc = "zarr.json" if zarr_format == 3 else ".zmetadata"
    reads = store.counts["get"]
    writes = store.sets_by_key[root_doc]
    listing = dict(zarrx.open_group(store, mode="r").members(max_depth=None))
    return reads, writes, listing


@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("zarr_format,consolidated", CASES, ids=IDS)
def test_a_deep_path_costs_reads_in_proportion_to_its_depth(op, zarr_format, consolidated):
    small, small_writes, _ = _costs(op, 100, zarr_format, consolidated)
    large, large_writes, listing = _costs(op, 300, zarr_format, consolidated)
    assert large < 3.5 * small, (small, large)    # 3 times as deep: about 3 times the reads
    assert large < 40 * 300, large
    # the root's consolidated document is edited a fixed number of times, not once a group
    assert large_writes == small_writes <= 6, (small_writes, large_writes)
    deepest = "/".join(["g"] * 300)
    assert deepest in listing and all("/".join(["g"] * i) in listing for i in range(1, 300))


@pytest.mark.parametrize("zarr_format,consolidated", CASES, ids=IDS)
def test_a_deep_path_is_listed_by_the_consolidated_metadata_as_stored(zarr_format,
                                                                      consolidated):
    store = MemoryStore()
    g = zarrx.open_group(store, mode="w", zarr_format=zarr_format)
    g.create_array("x", shape=(2,), dtype="i1")
    if consolidated:
        zarrx.consolidate_metadata(store)
    g.create_group("a/b/c/d", attributes={"k": 1})
    zarrx.open_group(store, path="e/f/g", mode="a")
    g.move("a/b", "h/i/j")
    fresh = zarrx.open_group(store, mode="r", use_consolidated=False)
    stored = {name: type(node).__name__ for name, node in fresh.members(max_depth=None)}
    assert sorted(stored) == ["a", "e", "e/f", "e/f/g", "h", "h/i", "h/i/j", "h/i/j/c",
                              "h/i/j/c/d", "x"]
    listed = zarrx.open_group(store, mode="r")
    assert (listed.metadata.consolidated is not None) == consolidated
    assert {name: type(node).__name__ for name, node in listed.members(max_depth=None)} \
        == stored
    assert listed["h/i/j/c/d"].attrs.asdict() == {"k": 1}
