"""The decode buffer a thread keeps for an open array holds one chunk, the largest it decoded,
whatever the number of chunk shapes: a read of a rectilinear array whose chunks have many
lengths keeps no memory per shape once it has returned."""
from __future__ import annotations

import gc
import tracemalloc

import numpy as np

import zarrx
from zarrx.store import MemoryStore


def _kept_after(read) -> int:  # type: ignore[no-untyped-def]
    """Bytes still allocated after ``read()`` returned and its result was dropped."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        read()
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


def test_a_read_of_chunks_of_many_shapes_keeps_one_chunk_buffer() -> None:
    edges = list(range(100, 200))                 # 100 chunk lengths along the first axis
    shape = (sum(edges), 64)
    z = zarrx.create_array(MemoryStore(), shape=shape, dtype="f8", chunks=[edges, [64]],
                           compressors=zarrx.codecs.Zstd(level=1))
    data = np.arange(np.prod(shape), dtype="f8").reshape(shape)
    z[...] = data
    largest = max(edges) * 64 * 8                 # 100 KiB; all chunks: 7.3 MiB
    with zarrx.config.set(threads=1):
        np.testing.assert_array_equal(z[1:, 1:], data[1:, 1:])     # every chunk decoded
        kept = _kept_after(lambda: z[1:, 1:])
        # a second read reuses the buffer kept by the first: what is left is at most one chunk
        assert kept < 2 * largest, kept
        again = _kept_after(lambda: z[3:, 2:])
    assert again < 2 * largest, again


def test_a_fresh_handle_keeps_at_most_its_largest_chunk() -> None:
    edges = list(range(100, 200))
    shape = (sum(edges), 64)
    store = MemoryStore()
    z = zarrx.create_array(store, shape=shape, dtype="f8", chunks=[edges, [64]],
                           compressors=zarrx.codecs.Zstd(level=1))
    z[...] = 1.5
    r = zarrx.open_array(store, mode="r")
    with zarrx.config.set(threads=1):
        kept = _kept_after(lambda: r[1:, 1:])
    assert kept < 3 * max(edges) * 64 * 8 + (1 << 20), kept   # one buffer, plans, caches
