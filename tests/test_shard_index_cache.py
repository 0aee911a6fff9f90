"""The decoded shard indexes an open array keeps are bounded by bytes
(``zarrx.config.shard_index_cache_bytes``), not only by count: shards with many inner chunks
have indexes of 16 bytes an inner chunk, which 16 entries would keep by the hundred MiB."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import zarrx
from zarrx.errors import ArgumentError
from zarrx.store.counting import CountingStore
from zarrx.store.memory import MemoryStore
from zarrx.store.shard_index import IndexCache

N = 1 << 14                 # inner chunks per shard: a 256 KiB index
SHARDS = 12


def _cache(z) -> IndexCache:
    return z._io.source._cache


def _entries(n: int, value: int = 0) -> np.ndarray:
    return np.full((n, 2), value, dtype=np.uint64)


@pytest.fixture
def big_index_array():
    z = zarrx.create_array(store=MemoryStore(), shape=(SHARDS * N,), chunks=(1,), shards=(N,),
                           dtype="u1", fill_value=0)
    expected = np.zeros(SHARDS * N, dtype="u1")
    for s in range(SHARDS):
        expected[s * N + 3: s * N + 6] = s + 1
        z[s * N + 3: s * N + 6] = s + 1
    reader = zarrx.open_array(z.store, mode="r")
    return reader, expected


def test_reading_many_large_index_shards_keeps_at_most_the_budget(big_index_array):
    z, expected = big_index_array
    budget = 3 * 16 * N + 100               # three of these indexes
    with zarrx.config.set(shard_index_cache_bytes=budget):
        for s in range(SHARDS):
            assert np.array_equal(z[s * N: s * N + 8], expected[s * N: s * N + 8])
            cache = _cache(z)
            assert cache.nbytes <= budget
            assert cache.nbytes == sum(e[1].nbytes for e in cache._data.values())
        assert len(_cache(z)) == 3
        assert np.array_equal(z[:], expected)
        assert _cache(z).nbytes <= budget


def test_the_default_budget_is_tens_of_mib_and_keeps_many_shards_of_2_20_chunks_out():
    budget = zarrx.config.shard_index_cache_bytes
    assert budget == 32 << 20
    cache = IndexCache()
    for i in range(16):
        cache.put((i,), "g", _entries(1 << 20), None)      # 16 MiB each
        assert cache.nbytes <= budget
    assert len(cache) == 2


def test_an_index_larger_than_the_budget_is_used_and_not_kept(big_index_array):
    z, expected = big_index_array
    with zarrx.config.set(shard_index_cache_bytes=16 * N - 1):
        assert np.array_equal(z[3:6], expected[3:6])
        assert len(_cache(z)) == 0 and _cache(z).nbytes == 0
        assert np.array_equal(z[N + 3: N + 6], expected[N + 3: N + 6])
    with zarrx.config.set(shard_index_cache_bytes=0):
        assert np.array_equal(z[:], expected)
        assert len(_cache(z)) == 0


def test_one_index_is_kept_alone_when_it_alone_fits():
    cache = IndexCache(budget=lambda: 1000)
    cache.put(("a",), "g", _entries(20), None)             # 320 bytes
    cache.put(("b",), "g", _entries(20), None)
    cache.put(("c",), "g", _entries(60), None)             # 960 bytes: the others go
    assert cache.get(("c",), "g") is not None
    assert cache.get(("a",), "g") is None and cache.get(("b",), "g") is None
    assert cache.nbytes == 960
    cache.put(("c",), "g", _entries(10), None)             # replacing counts once
    assert cache.nbytes == 160 and len(cache) == 1
    cache.put(("c",), "h", _entries(100), None)            # too large: the old one goes too
    assert cache.get(("c",), "g") is None and cache.nbytes == 0


def test_a_view_is_counted_by_the_memory_it_keeps_alive():
    cache = IndexCache(budget=lambda: 10_000)
    whole = _entries(1000)                                  # 16,000 bytes
    cache.put(("a",), "g", whole[:10], None)
    assert len(cache) == 0


def _reads_of_second_chunks(counting, z) -> int:
    counting.reset()
    for s in range(16):
        assert int(z[4 * s + 2]) == 4 * s + 2
    return counting.counts["get"]


def test_small_indexes_still_hit():
    counting = CountingStore(MemoryStore())
    z = zarrx.create_array(store=counting, shape=(64,), chunks=(1,), shards=(4,), dtype="i4",
                           fill_value=0)
    z[:] = np.arange(64, dtype="i4")
    z = zarrx.open_array(counting, mode="r")
    for s in range(16):
        assert int(z[4 * s]) == 4 * s
    assert len(_cache(z)) == 16 and _cache(z).nbytes == 16 * 4 * 16
    assert _reads_of_second_chunks(counting, z) == 16      # the inner chunks only
    with zarrx.config.set(shard_index_cache_bytes=0):       # dropped at once: indexes again
        assert _reads_of_second_chunks(counting, z) == 32
        assert len(_cache(z)) == 0


def test_lowering_the_budget_drops_the_oldest_indexes_at_the_next_lookup():
    budget = [10_000]
    cache = IndexCache(budget=lambda: budget[0])
    for key in "abc":
        cache.put((key,), "g", _entries(100), None)        # 1,600 bytes each
    budget[0] = 2000
    assert cache.get(("a",), "g") is None
    assert cache.get(("c",), "g") is not None and cache.nbytes == 1600


def test_threads_keep_the_accounting_exact(big_index_array):
    z, expected = big_index_array
    budget = 2 * 16 * N
    failures = []

    def read(s: int) -> None:
        for _ in range(5):
            if not np.array_equal(z[s * N: s * N + 8], expected[s * N: s * N + 8]):
                failures.append(s)

    with zarrx.config.set(shard_index_cache_bytes=budget):
        threads = [threading.Thread(target=read, args=(s,)) for s in range(SHARDS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    cache = _cache(z)
    assert not failures
    assert cache.nbytes == sum(e[1].nbytes for e in cache._data.values()) <= budget


BUDGETS = ["shard_index_cache_bytes", "decoded_shard_cache_bytes"]


@pytest.mark.parametrize("name", BUDGETS)
@pytest.mark.parametrize("value", [-1, 1.5, True, "32"])
def test_the_budget_must_be_a_non_negative_int(name, value):
    with pytest.raises(ArgumentError, match=f"{name}: expected an int >= 0"):
        zarrx.config.set(**{name: value})


@pytest.mark.parametrize("name", BUDGETS)
def test_the_budget_starts_from_its_environment_variable(name):
    """Both budgets are read from their environment variables when zarrx is imported."""
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZARRX_")}
    var = "ZARRX_" + name.upper()
    code = f"import zarrx; print(zarrx.config.{name})"
    for value, shown in (("0", "0"), (" 1048576 ", "1048576")):
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              env={**env, "PYTHONPATH": root, var: value}, timeout=120)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == shown
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**env, "PYTHONPATH": root, var: "x"}, timeout=120)
    assert done.returncode != 0
    assert f"{var}: expected an int >= 0 (bytes), found 'x'" in done.stderr
