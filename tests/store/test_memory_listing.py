"""MemoryStore listings from a sorted key index kept in step with every write and delete: they
equal a scan of every key, under any sequence of writes and deletes and from many threads at
once, while visiting only the keys (and child folders) they return; so listing every group of
a hierarchy (``members(max_depth=None)``, ``consolidate_metadata``) costs work in proportion
to its size, not to its size squared (every listing scanned every key of the store)."""
from __future__ import annotations

import math
import threading

import pytest
from call_counts import calls_made
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrx
from zarrx.store import MemoryStore
from zarrx.store import keyindex

PARTS = ["a", "b", "b0", "b-", "a.b", "é", "\U0001f600", "\U0010ffff", "0", "."]
names = st.lists(st.sampled_from(PARTS), min_size=1, max_size=4).map("/".join)


def scan_prefix(store, prefix):
    return sorted(k for k in store._data if k.startswith(prefix))


def scan_dir(store, prefix):
    keys, dirs = set(), set()
    for key in scan_prefix(store, prefix):
        head, sep, _ = key[len(prefix):].partition("/")
        (dirs if sep else keys).add(head)
    return sorted(keys), sorted(dirs)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["set", "delete", "set_many", "delete_many",
                                           "set_if", "delete_if"]),
                          st.lists(names, min_size=1, max_size=3)), max_size=40))
def test_listings_equal_a_scan_of_every_key(ops):
    store = MemoryStore()
    real = keyindex._BLOCK
    keyindex._BLOCK = 2              # blocks split and emptied often
    try:
        for op, keys in ops:
            if op == "set":
                store.set(keys[0], b"x")
            elif op == "delete":
                store.delete(keys[0])
            elif op == "set_many":
                store.set_many((k, b"y") for k in keys)
            elif op == "delete_many":
                store.delete_many(keys)
            elif op == "set_if" and store.generation(keys[0]) is None:
                store.set_if(keys[0], b"z", zarrx.store.ABSENT)
            elif op == "delete_if" and (gen := store.generation(keys[0])) is not None:
                store.delete_if(keys[0], gen)
            for prefix in ["", "a", "a/", "b", "b/", "a/b", "\U0010ffff", *keys,
                           *(k + "/" for k in keys)]:
                assert list(store.list_prefix(prefix)) == scan_prefix(store, prefix), prefix
                if not prefix or prefix.endswith("/"):
                    assert store.list_dir(prefix) == scan_dir(store, prefix), prefix
    finally:
        keyindex._BLOCK = real


def test_listings_stay_in_step_with_writers_and_deleters_in_other_threads():
    store = MemoryStore()
    errors = []

    def work(t):
        try:
            for i in range(400):
                store.set(f"t{t}/k{i}", b"1")
                if i % 3 == 0:
                    store.delete(f"t{t}/k{i - 3}")
                if i % 50 == 0:
                    got = list(store.list_prefix(f"t{t}/"))
                    assert got == sorted(got) and f"t{t}/k{i}" in got
        except Exception as exc:            # pragma: no cover - reported below
            errors.append(exc)
    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert list(store.list_prefix("")) == sorted(store._data)
    assert store.list_dir("") == ([], ["t0", "t1", "t2", "t3"])


class Visits(list):
    """A list counting the items read from it (bisection reads items one at a time)."""
    visits = 0

    def __getitem__(self, i):
        Visits.visits += 1
        return super().__getitem__(i)


def test_a_listing_visits_only_the_keys_it_returns():
    store = MemoryStore({**{f"other/k{i}": b"" for i in range(5000)},
                         **{f"g/{c}/c/{i}": b"" for c in "xyz" for i in range(1000)},
                         "g/zarr.json": b""})
    index = store._index
    index._blocks = [Visits(b) for b in index._blocks]
    index._maxes = Visits(index._maxes)
    bound = 2 * (math.ceil(math.log2(len(index))) + 2)          # a bisection or two
    Visits.visits = 0
    assert store.list_dir("g/") == (["zarr.json"], ["x", "y", "z"])
    assert Visits.visits <= 5 * bound                            # one bisection per child
    Visits.visits = 0
    assert len(list(store.list_prefix("g/y/"))) == 1000
    assert Visits.visits <= bound + 1001


def _calls(groups, op):
    """Python and builtin calls made by ``op(store)`` on a hierarchy of ``groups`` groups."""
    store = MemoryStore()
    zarrx.create_hierarchy(store=store, nodes={
        f"g{j % 10}/h{j}": {"zarr_format": 3, "node_type": "group"} for j in range(groups)})
    return calls_made(lambda: op(store))


@pytest.mark.parametrize("op", [
    lambda store: zarrx.open_group(store, mode="r").members(max_depth=None),
    lambda store: zarrx.open_group(store, mode="r").nmembers(max_depth=None),
    zarrx.consolidate_metadata], ids=["members", "nmembers", "consolidate_metadata"])
def test_walking_a_hierarchy_of_many_groups_costs_work_in_proportion_to_its_size(op):
    small, large = _calls(300, op), _calls(900, op)
    assert large < 4 * small, (small, large)      # 3 times the groups: about 3 times the calls
