"""The decoded shards an open array keeps, when its shards are encoded as a whole (``zstd``
after ``sharding_indexed``, as zarr-python writes by default), are bounded by bytes
(``zarrx.config.decoded_shard_cache_bytes``): a decoded shard larger than the budget is used by
its read and not kept, and that read still decodes it once, not once per inner chunk."""
from __future__ import annotations

import json
import threading

import numpy as np
import pytest

import zarrx
from zarrx.shard_objects import EncodedObjects
from zarrx.store.counting import CountingStore
from zarrx.store.memory import MemoryStore

INNER = 512                 # elements (bytes) of an inner chunk
PER = 128                   # inner chunks per shard: 64 KiB decoded, plus a 2 KiB index
SHARD = INNER * PER
SHARD_BYTES = SHARD + 16 * PER
SHARDS = 6


def _meta() -> dict:
    return {"zarr_format": 3, "node_type": "array", "shape": [SHARDS * SHARD],
            "data_type": "uint8", "fill_value": 0, "attributes": {},
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [SHARD]}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "codecs": [{"name": "sharding_indexed", "configuration": {
                "chunk_shape": [INNER], "codecs": [{"name": "bytes"}],
                "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}},
                {"name": "zstd", "configuration": {"level": 1, "checksum": False}}]}


class CountingCodec:
    """A bytes->bytes codec counting the decodes it makes for the one it wraps."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.decodes = 0
        self.lock = threading.Lock()

    @property
    def name(self) -> str:
        return self.inner.name          # type: ignore[attr-defined]

    def decode(self, *args: object) -> object:
        with self.lock:
            self.decodes += 1
        return self.inner.decode(*args)     # type: ignore[attr-defined]

    def encode(self, *args: object) -> object:
        return self.inner.encode(*args)     # type: ignore[attr-defined]


@pytest.fixture
def whole_encoded():
    """(reader over a CountingStore, its view of the shards, its counting codec, values)."""
    store = MemoryStore()
    store.set("zarr.json", json.dumps(_meta()).encode())
    x = (np.arange(SHARDS * SHARD) * 7 % 251).astype("u1")
    zarrx.open_array(store, mode="r+")[:] = x
    counted = CountingStore(store)
    z = zarrx.open_array(counted, mode="r")
    view = z._io.source.store
    assert isinstance(view, EncodedObjects)
    codec = CountingCodec(view.codecs[0])
    view.codecs = (codec,)
    return z, counted, view, codec, x


def _kept(view: EncodedObjects) -> tuple[int, int]:
    """(decoded shards kept, the bytes they hold, as counted entry by entry)."""
    data = view._kept._data
    return len(data), sum(len(e[1]) for e in data.values())


def test_reading_several_large_shards_keeps_at_most_the_budget(whole_encoded):
    z, _, view, codec, x = whole_encoded
    budget = 2 * SHARD_BYTES + SHARD_BYTES // 2              # two decoded shards
    with zarrx.config.set(decoded_shard_cache_bytes=budget):
        for s in range(SHARDS):
            assert np.array_equal(z[s * SHARD + 5: s * SHARD + 3000],
                                  x[s * SHARD + 5: s * SHARD + 3000])
            count, held = _kept(view)
            assert view._kept.nbytes == held <= budget
            assert count == min(s + 1, 2)
        assert codec.decodes == SHARDS
        assert np.array_equal(z[SHARDS * SHARD - 9:], x[SHARDS * SHARD - 9:])
        assert codec.decodes == SHARDS                       # the newest shard is kept
    with zarrx.config.set(decoded_shard_cache_bytes=SHARD_BYTES - 1):
        assert np.array_equal(z[7:9], x[7:9])       # over the lowered budget: all dropped
        assert _kept(view) == (0, 0) and view._kept.nbytes == 0


@pytest.mark.parametrize("budget", [0, SHARD_BYTES - 1])
def test_a_read_of_many_inner_chunks_of_a_shard_over_the_budget_decodes_it_once(
        whole_encoded, budget):
    z, counted, view, codec, x = whole_encoded
    with zarrx.config.set(decoded_shard_cache_bytes=budget):
        assert np.array_equal(z[SHARD + 3: 2 * SHARD: 300], x[SHARD + 3: 2 * SHARD: 300])
        assert codec.decodes == 1                   # all 128 inner chunks, one decode
        assert counted.gets_by_key["c/1"] == 1
        assert _kept(view) == (0, 0)                # used by the read, not kept
        pick = np.array([SHARD * 3 + 1, SHARD * 5 - 1, SHARD * 3 + 9000, SHARD * 5 - 4000])
        assert np.array_equal(z[pick], x[pick])
        assert codec.decodes == 3                   # one per shard touched
        assert np.array_equal(z[:], x)
        assert codec.decodes == 3 + SHARDS
        assert _kept(view) == (0, 0)
    assert np.array_equal(z[SHARD + 3: 2 * SHARD: 300], x[SHARD + 3: 2 * SHARD: 300])
    assert np.array_equal(z[SHARD: 2 * SHARD: 301], x[SHARD: 2 * SHARD: 301])
    assert codec.decodes == 4 + SHARDS              # the default budget keeps it


def test_writes_drop_the_shards_they_replace(whole_encoded):
    _, _, _, _, x = whole_encoded
    z = zarrx.open_array(whole_encoded[1], mode="r+")
    view = z._io.source.store
    assert np.array_equal(z[:], x)
    assert _kept(view)[0] == 4
    z[SHARD + 10: SHARD + 20] = 255
    x[SHARD + 10: SHARD + 20] = 255
    assert np.array_equal(z[SHARD: SHARD + 40], x[SHARD: SHARD + 40])
    assert view._kept.nbytes == _kept(view)[1]


def test_threads_keep_the_accounting_exact(whole_encoded):
    z, _, view, _, x = whole_encoded
    budget = 3 * SHARD_BYTES
    failures = []

    def read(s: int) -> None:
        for i in range(4):
            lo = s * SHARD + i * 1000
            if not np.array_equal(z[lo: lo + 9000: 7], x[lo: lo + 9000: 7]):
                failures.append(s)

    with zarrx.config.set(decoded_shard_cache_bytes=budget):
        threads = [threading.Thread(target=read, args=(s,)) for s in range(SHARDS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not failures
    count, held = _kept(view)
    assert view._kept.nbytes == held <= budget and count <= 3


def test_the_default_budget():
    assert zarrx.config.decoded_shard_cache_bytes == 64 << 20


# the setting's checks and environment variable: tests/test_shard_index_cache.py (BUDGETS)
