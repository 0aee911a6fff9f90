"""CountingStore: the store contract through the wrapper, and exactly what it counts."""
import pickle

import pytest
from store_contract import StoreContract

from zarrx.errors import ReadOnlyError
from zarrx.store import ByteRange, CountingStore, LocalStore, MemoryStore


class TestCountingStore(StoreContract):
    snapshot_pins_version = True

    def make_store(self, tmp_path):
        return CountingStore(MemoryStore())

    def reopen_read_only(self, store, tmp_path):
        data = {k: store.get(k) for k in store.list_prefix("")}
        return CountingStore(MemoryStore(data, read_only=True))


class TestCountingLocalStore(StoreContract):
    snapshot_pins_version = True

    def make_store(self, tmp_path):
        return CountingStore(LocalStore(tmp_path / "root"))

    def reopen_read_only(self, store, tmp_path):
        return CountingStore(LocalStore(tmp_path / "root", read_only=True))


def test_counts_reads():
    s = CountingStore(MemoryStore({"a": b"0123456789", "b": b"xy"}))
    s.get("a")
    s.get("a", ByteRange.full())
    s.get("a", ByteRange.last(4))
    s.get("missing")
    s.get_many([("a", ByteRange.slice(1, 2)), ("b", None), ("nope", ByteRange.last(1))])
    assert s.counts == {"get": 7, "get_range": 3, "get_many": 1, "get_many_requests": 3}
    assert s.bytes_read == 10 + 10 + 4 + 2 + 2
    assert s.gets_by_key == {"a": 4, "b": 1, "missing": 1, "nope": 1}


def test_counts_writes_and_listing():
    s = CountingStore(MemoryStore())
    s.set("a", b"123")
    s.set("a", bytearray(b"4567"))
    s.set_many([("b", b"x"), ("c/d", memoryview(b"yz"))])
    s.delete("b")
    s.delete("missing")
    s.delete_many(["c/d", "zz"])
    s.delete_prefix("q/")
    s.exists("a")
    list(s.list_prefix(""))
    s.list_dir("")
    assert s.counts == {"set": 4, "delete": 4, "delete_prefix": 1, "exists": 1, "list": 2}
    assert s.sets_by_key == {"a": 2, "b": 1, "c/d": 1}
    assert s.bytes_written == 3 + 4 + 1 + 2
    s.reset()
    assert (s.counts, s.sets_by_key, s.gets_by_key) == ({}, {}, {})
    assert (s.bytes_read, s.bytes_written) == (0, 0)


def test_failed_calls_are_not_counted():
    s = CountingStore(MemoryStore(read_only=True))
    for call in (lambda: s.set("a", b"1"), lambda: s.delete("a")):
        with pytest.raises(ReadOnlyError):
            call()
    assert s.counts == {} and s.sets_by_key == {}


def test_forwards_read_only_and_pickles():
    s = CountingStore(MemoryStore({"a": b"1"}, read_only=True))
    assert s.read_only
    s.get("a")
    t = pickle.loads(pickle.dumps(s))
    assert t.get("a") == b"1" and t.read_only
    assert t.counts == {"get": 1}                 # a fresh count after unpickling


def test_counts_generations_conditional_writes_and_snapshots():
    from zarrx.errors import ConflictError
    from zarrx.store import ABSENT
    s = CountingStore(MemoryStore())
    gen = s.set_if("a", b"0123456789", ABSENT)
    assert s.generation("a") == gen
    assert s.get_versioned("a", ByteRange.last(2), if_generation=gen) == (b"89", gen)
    with pytest.raises(ConflictError):
        s.set_if("a", b"x", ABSENT)
    with s.snapshot("a") as snap:
        assert snap.generation == gen and snap.size == 10
        assert snap.read([ByteRange.slice(0, 2), None]) == [b"01", b"0123456789"]
    s.delete_if("a", gen)
    assert s.counts == {"set": 1, "set_if": 1, "generation": 1, "get": 3, "get_range": 2,
                        "get_versioned": 1, "conflict": 1, "snapshot": 1, "snapshot_read": 1,
                        "delete": 1, "delete_if": 1}
    assert s.bytes_read == 2 + 2 + 10 and s.gets_by_key == {"a": 3}
    assert s.supports_conditional_writes
