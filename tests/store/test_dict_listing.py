"""A ``dict`` passed as a store (``zarrx.open_group({})``, a :class:`DictStore`) is listed
through a sorted index of its keys, kept in step by the writes of zarrx's stores over it and
made again when the dict's version says someone else changed it: a listing costs a bisection
plus what it returns (before: a scan of every key per listing, so walking a hierarchy of n
groups cost n**2 key visits), and sees every change made to the dict directly."""
from __future__ import annotations

import random

import pytest
from call_counts import calls_made

import zarrx
from zarrx.storage import DictStore
from zarrx.store._dictversion import version

needs_versions = pytest.mark.skipif(version({}) is None,
                                    reason="this interpreter keeps no dict versions")


def _walk_calls(n: int) -> int:
    d: dict = {}
    g = zarrx.open_group(d, mode="w")
    for i in range(n):
        g.create_group(f"g{i % 30}/h{i}")
    g = zarrx.open_group(d, mode="r", use_consolidated=False)
    names: list = []
    calls = calls_made(lambda: names.extend(name for name, _ in g.members(max_depth=None)))
    assert len(names) == n + 30
    return calls


@needs_versions
def test_walking_a_hierarchy_in_a_dict_costs_in_proportion_to_its_nodes():
    small, large = _walk_calls(300), _walk_calls(900)
    assert large < 3.6 * small, (small, large)      # a scan per listing: about 6.5 times


def test_changes_made_to_the_dict_directly_are_listed():
    d: dict = {}
    g = zarrx.open_group(d, mode="w")
    g.create_group("a")
    g.create_group("b")
    assert sorted(g.keys()) == ["a", "b"]
    d["c/zarr.json"] = d.pop("b/zarr.json")     # as many keys as before, other ones
    assert sorted(g.keys()) == ["a", "c"]
    d["a/x/zarr.json"] = d["a/zarr.json"]
    assert sorted(g["a"].keys()) == ["x"]
    d.clear()
    assert list(g.store.list_prefix("")) == []
    assert g.store.list_dir("") == ([], [])


def test_listings_equal_a_scan_of_the_dict_under_writes_from_stores_and_the_caller():
    rng = random.Random(5)
    d: dict = {}
    stores = [DictStore(d), DictStore(d)]
    names = [f"{a}/{b}/k{c}" for a in "pq" for b in "xyz" for c in range(4)] + ["top"]
    for step in range(600):
        key = rng.choice(names)
        who = rng.randrange(3)
        if who < 2:
            store = stores[who]
            if rng.random() < 0.6:
                store.set(key, b"%d" % step)
            else:
                store.delete(key)
        elif rng.random() < 0.6:
            d[key] = b"%d" % step
        else:
            d.pop(key, None)
        store = stores[rng.randrange(2)]
        for prefix in ("", "p/", "p/x/", "q/z/k1", "t"):
            assert sorted(store.list_prefix(prefix)) == sorted(k for k in d
                                                               if k.startswith(prefix))
        keys, dirs = store.list_dir("p")
        assert sorted(keys) == [] and sorted(dirs) == sorted({k.split("/")[1] for k in d
                                                              if k.startswith("p/")})
        keys, dirs = store.list_dir("")
        assert sorted(keys) == sorted(k for k in d if "/" not in k)
