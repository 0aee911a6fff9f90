"""Reads and writes of many small chunks hold the requests and values of a window of chunks at
a time (``chunk_io.MAX_WINDOW``), not of every chunk of the selection."""
import tracemalloc

import numpy as np
import pytest

import zarrx
from zarrx import chunk_io
from zarrx.store import MemoryStore


@pytest.fixture
def small_window(monkeypatch):
    # one thread: the bound is the chunk loop's; with a pool, tracemalloc's peak also counts
    # what the other threads hold at that moment, which varies from run to run
    monkeypatch.setattr(chunk_io, "MAX_WINDOW", 64, raising=False)
    with zarrx.config.set(threads=1):
        yield


def _peak(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("shards", [None, (2, 2)], ids=["chunks", "shards"])
def test_a_selection_of_many_one_byte_chunks_is_handled_a_window_at_a_time(small_window, shards):
    # 4,096 chunks of one byte, whose per-axis plan is only 64 entries long: beyond the plan
    # and its shard-major order (a few int64 per chunk), a read or write holds one window
    # (under 128 B per chunk in all; before: 300-700 B per chunk, as the whole selection was
    # fetched, or grouped by object, at once)
    z = zarrx.create_array(MemoryStore(), shape=(2**20, 2**20), chunks=(1, 1), shards=shards,
                           dtype="u1")
    z[0:4, 0:4] = 1
    assert z[0:4, 0:4].sum() == 16          # imports and caches warmed up
    z[0:4, 0:4] = 0

    def write(values):
        z[0:64, 0:64] = values

    # the fill value: nothing is stored, so what the write holds is all that is measured
    assert _peak(lambda: write(np.zeros((64, 64), dtype="u1"))) < 128 * 64 * 64
    assert z.nchunks_initialized == 0
    values = np.arange(64 * 64, dtype="u1").reshape(64, 64)
    write(values)
    got = {}
    assert _peak(lambda: got.setdefault("a", z[0:64, 0:64])) < 128 * 64 * 64
    np.testing.assert_array_equal(got["a"], values)
