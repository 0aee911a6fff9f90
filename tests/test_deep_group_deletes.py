"""Deleting a deep chain of nested groups costs work in proportion to the number of nodes:
the groups above each deleted document are found once each, not rebuilt from the root for
every document (a chain of n groups made about n**2 / 2 joined paths of up to n parts)."""
from __future__ import annotations

import json

import pytest
from call_counts import calls_made

import zarrx


def _chain(depth: int, zarr_format: int) -> dict:
    if zarr_format == 3:
        name, doc = "zarr.json", {"zarr_format": 3, "node_type": "group", "attributes": {}}
    else:
        name, doc = ".zgroup", {"zarr_format": 2}
    raw = json.dumps(doc).encode()
    store, path = {name: raw}, ""
    for _ in range(depth):
        path = f"{path}/g" if path else "g"
        store[f"{path}/{name}"] = raw
    return store


def _calls_to_delete(depth: int, zarr_format: int) -> int:
    """Python and builtin calls made by ``del group["g"]`` on a chain of ``depth`` groups."""
    store = _chain(depth, zarr_format)
    group = zarrx.open_group(store, mode="r+")
    calls = calls_made(lambda: group.__delitem__("g"))
    assert sorted(store) == [".zgroup" if zarr_format == 2 else "zarr.json"]
    return calls


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_deleting_a_deep_chain_of_groups_costs_linear_work(zarr_format):
    small, large = _calls_to_delete(200, zarr_format), _calls_to_delete(600, zarr_format)
    assert large < 100 * 600, large
    assert large < 4 * small, (small, large)      # 3 times the nodes: about 3 times the calls


@pytest.mark.parametrize("path", ["", "a", "a/b"])
def test_every_deleted_subtree_leaves_its_siblings(path):
    g = zarrx.open_group({}, mode="w")
    base = g.require_group(path) if path else g
    base.create_group("x/y/z")
    base.create_array("x/y/arr", shape=(2,), dtype="i1")[...] = 1
    base.create_group("keep/y")
    del base["x"]
    assert sorted(k for k, _ in base.members(max_depth=None)) == ["keep", "keep/y"]
