"""A write into a stored shard costs in proportion to its index and the inner chunks stored
in it, not a Python object per slot of the index."""
import time
import tracemalloc

import numpy as np
import pytest

import zarrx
from zarrx.store import MemoryStore


def test_rewriting_a_chunk_of_a_shard_of_a_million_slots_is_cheap():
    z = zarrx.create_array(MemoryStore(), shape=(2**40,), chunks=(1,), shards=(2**20,),
                           dtype="u1")
    z[5] = 1
    z[2**20 - 1] = 2            # the shard: 2 inner chunks stored, a 16 MiB index
    tracemalloc.start()
    t0 = time.process_time()
    try:
        z[6] = 3                # read, merged, written again
        elapsed = time.process_time() - t0
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # before: a list of every slot and of every index entry, 176 MiB and 1.6 s
    assert peak < 7 * 16 << 20 and elapsed < 1
    assert z[4:8].tolist() == [0, 1, 3, 0] and z[2**20 - 1] == 2
    z[5] = 0
    z[6] = 0
    z[2**20 - 1] = 0            # the last inner chunk gone: the shard is deleted
    assert z.nshards_initialized == 0


def _parts_written(monkeypatch, write) -> list[int]:  # type: ignore[no-untyped-def]
    """The number of parts of each shard packed while ``write()`` runs."""
    from zarrx.store import shard_index
    from zarrx.store.pieces import Pieces
    counts: list[int] = []

    def counted(parts):  # type: ignore[no-untyped-def]
        p = Pieces(parts)
        counts.append(len(p.parts))
        return p
    monkeypatch.setattr(shard_index, "Pieces", counted)
    write()
    return counts


@pytest.mark.parametrize("location", ["end", "start"])
def test_rewriting_chunks_of_a_full_shard_keeps_the_others_as_byte_runs(monkeypatch, location):
    # a shard of 2^12 stored one-byte inner chunks: the unchanged ones are passed on as runs
    # of the stored shard's bytes, not one view each (2^12 views per one-element write)
    n = 2**12
    z = zarrx.create_array(MemoryStore(), shape=(n,), chunks=(n,), dtype="u1",
                           fill_value=0, serializer={"name": "sharding_indexed", "configuration": {
                               "chunk_shape": [1], "index_location": location,
                               "codecs": [{"name": "bytes"}]}}, compressors=None)
    ref = (np.arange(n) % 251 + 1).astype("u1")
    z[:] = ref
    assert _parts_written(monkeypatch, lambda: z.__setitem__(7, 0)) == [3]     # deleted
    ref[7] = 0
    at = [3, 100, 2000, n - 1]
    counts = _parts_written(monkeypatch, lambda: z.set_coordinate_selection(at, 9))
    ref[at] = 9
    assert counts == [2 * len(at) + 1]     # the 4 chunks, the 4 runs before them, the index
    assert np.array_equal(z[:], ref)
