"""A write into a stored shard costs in proportion to its index and the inner chunks stored
in it, not a Python object per slot of the index."""
import time
import tracemalloc

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
