"""ShardStore against the store contract, and KeyedChunks key parsing.

The contract speaks of arbitrary keys (``zarr.json``, ``t3/7``); a ShardStore stores only inner
chunks. ``NamedChunks`` gives each contract key an inner chunk of its own (allocated in order, so
several keys share a shard) and forwards every call to the ShardStore's string API, so the
contract exercises the ShardStore's reads, byte ranges, read-modify-write of shards, deletes,
listing and concurrency.
"""
from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from store_contract import StoreContract

from zarrx.metadata.model import KeyEncoding, ShardLevel
from zarrx.store.base import ByteRange, Store, check_prefix
from zarrx.store.chunks import KeyedChunks, parse_chunk_key
from zarrx.store.memory import MemoryStore
from shard_adapter import ShardStore


class NamedChunks(Store):
    """Contract keys -> inner chunk keys ``c/i/j`` of a 2-d ShardStore (3 x 3 chunks/shard)."""

    def __init__(self, shard: ShardStore, names: dict[str, str] | None = None) -> None:
        self.shard = shard
        self.names = names if names is not None else {}
        self._lock = threading.Lock()

    @property
    def read_only(self) -> bool:  # type: ignore[override]
        return self.shard.read_only

    def _inner(self, key: object, *, create: bool = False) -> object:
        if not isinstance(key, str):
            return key                                  # let the ShardStore reject it
        with self._lock:
            inner = self.names.get(key)
            if inner is None:
                if not create:
                    return "c/1000000/0"                # an inner chunk never written
                i = len(self.names)
                inner = self.names[key] = f"c/{i // 5}/{i % 5}"
        return inner

    def get(self, key, byte_range=None):
        return self.shard.get(self._inner(key), byte_range)

    def get_many(self, requests):
        return self.shard.get_many([(self._inner(k), r) for k, r in requests])

    def set(self, key, value):
        self.shard.set(self._inner(key, create=True), value)

    def set_many(self, items):
        self.shard.set_many([(self._inner(k, create=True), v) for k, v in items])

    def delete(self, key):
        self.shard.delete(self._inner(key))

    def delete_many(self, keys):
        self.shard.delete_many([self._inner(k) for k in keys])

    def exists(self, key):
        return self.shard.exists(self._inner(key))

    def list_prefix(self, prefix: str) -> Iterator[str]:
        check_prefix(prefix, self)
        back = {v: k for k, v in self.names.items()}
        return (back[k] for k in self.shard.list_prefix("") if back[k].startswith(prefix))

    def close(self):
        self.shard.close()


def sharded(mem: MemoryStore) -> ShardStore:
    return ShardStore(KeyedChunks(mem, "arr/", KeyEncoding()), ShardLevel((1, 1)), (3, 3),
                      key="arr")


class TestShardStore(StoreContract):
    snapshot_pins_version = True     # generations digest the whole object: a snapshot holds it

    def make_store(self, tmp_path):
        return NamedChunks(sharded(MemoryStore()))

    def reopen_read_only(self, store, tmp_path):
        mem = store.shard.objects.store
        ro = MemoryStore({k: mem.get(k) for k in mem.list_prefix("")}, read_only=True)
        return NamedChunks(sharded(ro), store.names)


class TestNestedShardStore(StoreContract):
    snapshot_pins_version = True     # generations digest the whole object: a snapshot holds it
    large_size = 2**20 + 3

    def make_store(self, tmp_path):
        mem = MemoryStore()
        outer = ShardStore(KeyedChunks(mem, "", KeyEncoding()), ShardLevel((3, 3), "start"),
                           (6, 6), key="")
        return NamedChunks(ShardStore(outer, ShardLevel((1, 1), "end", False), (3, 3)))

    def reopen_read_only(self, store, tmp_path):
        mem = store.shard.objects.store
        ro = MemoryStore({k: mem.get(k) for k in mem.list_prefix("")}, read_only=True)
        outer = ShardStore(KeyedChunks(ro, "", KeyEncoding()), ShardLevel((3, 3), "start"),
                           (6, 6), key="")
        return NamedChunks(ShardStore(outer, ShardLevel((1, 1), "end", False), (3, 3)),
                           store.names)


# -- KeyedChunks ---------------------------------------------------------------------------------
ENCODINGS = {
    "default-slash": (KeyEncoding("default", "/"), "c/1/23", "c"),
    "default-dot": (KeyEncoding("default", "."), "c.1.23", "c"),
    "v2-dot": (KeyEncoding("v2", "."), "1.23", "0"),
    "v2-slash": (KeyEncoding("v2", "/"), "1/23", "0"),
}


@pytest.mark.parametrize("name", list(ENCODINGS))
def test_keyed_chunks_round_trip(name):
    enc, key_2d, key_0d = ENCODINGS[name]
    mem = MemoryStore()
    src = KeyedChunks(mem, "g/arr/", enc, ndim=2)
    src.set_chunks([((1, 23), b"a"), ((0, 0), b"b"), ((4, 5), b"c")])
    src.set_chunks([((4, 5), None)])
    assert sorted(mem.list_prefix("")) == sorted(["g/arr/" + key_2d, "g/arr/" + enc.encode((0, 0))])
    mem.set("g/arr/zarr.json", b"{}")
    mem.set("g/arr/.zarray", b"{}")
    mem.set("g/arr/" + enc.encode((1, 2, 3)), b"wrong ndim")
    assert sorted(src.list_chunks()) == [(0, 0), (1, 23)]
    assert src.exists_any()
    assert src.get_chunks([((1, 23), None), ((9, 9), None), ((0, 0), ByteRange.last(1))]) == \
        [b"a", None, b"b"]
    assert src.chunk_name((1, 23)) == repr("g/arr/" + key_2d)
    zero = KeyedChunks(MemoryStore(), "", enc, ndim=0)
    zero.set_chunks([((), b"s")])
    assert zero.store.get(key_0d) == b"s"
    assert list(zero.list_chunks()) == [()]
    assert not KeyedChunks(MemoryStore(), "", enc, ndim=1).exists_any()


@pytest.mark.parametrize("rest, enc, ndim, expected", [
    ("c/0/0", KeyEncoding(), 2, (0, 0)),
    ("c/0/0", KeyEncoding(), 3, None),
    ("c/0/0", KeyEncoding(), None, (0, 0)),
    ("c", KeyEncoding(), 0, ()),
    ("c", KeyEncoding(), 1, None),
    ("c/01", KeyEncoding(), 1, None),
    ("c/+1", KeyEncoding(), 1, None),
    ("c/١", KeyEncoding(), 1, None),
    ("c/1/", KeyEncoding(), 1, None),
    ("0", KeyEncoding("v2", "."), 0, ()),
    ("0", KeyEncoding("v2", "."), 1, (0,)),
    ("zarr.json", KeyEncoding("v2", "."), 2, None),
    ("3.4", KeyEncoding("v2", "."), 2, (3, 4)),
    ("3/4", KeyEncoding("v2", "."), 2, None),
], ids=lambda v: repr(v) if isinstance(v, str) else None)
def test_parse_chunk_key(rest, enc, ndim, expected):
    assert parse_chunk_key(rest, enc, ndim) == expected


def test_keyed_chunks_prefix_must_end_in_slash():
    from zarrx.errors import StoreError
    with pytest.raises(StoreError, match="expected '' or a path ending in '/'"):
        KeyedChunks(MemoryStore(), "arr", KeyEncoding())
