"""``zarrx check`` over a hierarchy nested n groups deep (a hostile store can hold one) costs
steps in proportion to n, not to n for each of its n nodes: each directory is looked up once
when deciding whether it lies below an array and whether a group document above a node is
missing. Counted as lookups, not timed."""
from __future__ import annotations

import importlib
import json

import pytest

from zarrx.store import MemoryStore
from zarrx.tools.check import check

check_module = importlib.import_module("zarrx.tools.check")   # (the package names the function)

DEPTH = 300


class _Counted(dict):
    lookups = 0

    def __contains__(self, key: object) -> bool:
        type(self).lookups += 1
        return super().__contains__(key)


class _CountedSet(set):
    lookups = 0

    def __contains__(self, key: object) -> bool:
        type(self).lookups += 1
        return super().__contains__(key)


def _nested(fmt: int, depth: int) -> MemoryStore:
    group = (json.dumps({"zarr_format": 3, "node_type": "group"}) if fmt == 3
             else json.dumps({"zarr_format": 2})).encode()
    name = "zarr.json" if fmt == 3 else ".zgroup"
    return MemoryStore({"/".join(["g"] * i + [name]): group for i in range(depth + 1)})


@pytest.mark.parametrize("fmt", [2, 3])
def test_checking_a_deep_hierarchy_looks_each_directory_up_once(fmt, monkeypatch):
    init, missing = check_module._Check.__init__, check_module._Check._missing_documents

    def counted_init(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.arrays = _Counted()

    def counted_missing(self, documented, found):
        return missing(self, _CountedSet(documented), found)

    monkeypatch.setattr(check_module._Check, "__init__", counted_init)
    monkeypatch.setattr(check_module._Check, "_missing_documents", counted_missing)
    _Counted.lookups = _CountedSet.lookups = 0
    report = check(_nested(fmt, DEPTH))
    assert report.groups == DEPTH + 1 and not report.findings
    # before: a walk from each node up to the root, DEPTH**2 / 2 lookups (45,150) for each
    assert _Counted.lookups <= 2 * DEPTH and _CountedSet.lookups <= 3 * DEPTH


def test_a_missing_group_document_above_nodes_is_still_found_once():
    store = _nested(3, 6)
    store.delete("g/g/zarr.json")
    store.delete("g/g/g/g/zarr.json")
    found = sorted((f.kind, f.key) for f in check(store).findings)
    assert found == [("metadata", "g/g/g/g/zarr.json"), ("metadata", "g/g/zarr.json")]
