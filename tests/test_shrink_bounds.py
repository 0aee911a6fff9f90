"""A shrink clears what a shard straddling the new edge stores outside it at the cost of the
inner chunks stored there, not of every inner chunk position of the shard."""
import time

import numpy as np

import zarrx
from zarrx.store import MemoryStore


def test_shrinking_into_a_shard_of_four_million_inner_chunks_holding_three():
    z = zarrx.create_array(MemoryStore(), shape=(2**40,), chunks=(1,), shards=(2**22,),
                           dtype="u1")
    z[5] = 1
    z[2**21 + 3] = 4
    z[2**22 - 1] = 2
    t0 = time.process_time()
    z.resize((2**21,))          # before: 2^21 inner chunk positions written as fill, 37 s
    assert time.process_time() - t0 < 5
    assert z.nchunks_initialized == 2**22 and z[5] == 1
    z.resize((2**22,))
    assert z[2**21 + 3] == 0 and z[2**22 - 1] == 0 and z[5] == 1


def test_shrinking_sharded_2d_arrays_keeps_inside_and_clears_outside():
    rng = np.random.default_rng(5)
    for chunks, shards, new in [((2, 3), (8, 9), (13, 10)), ((1, 1), (4, 4), (5, 7)),
                                ((3, 2), (6, 8), (7, 3))]:
        z = zarrx.create_array(MemoryStore(), shape=(24, 24), chunks=chunks, shards=shards,
                               dtype="i2", fill_value=-1)
        want = np.full((24, 24), -1, dtype="i2")
        for _ in range(12):                 # scattered blocks: shards partly stored
            r, c = rng.integers(0, 22, size=2)
            block = rng.integers(0, 100, size=(2, 2)).astype("i2")
            z[r:r + 2, c:c + 2] = block
            want[r:r + 2, c:c + 2] = block
        z.resize(new)
        np.testing.assert_array_equal(z[...], want[:new[0], :new[1]])
        z.resize((24, 24))
        want[new[0]:, :] = -1
        want[:, new[1]:] = -1
        np.testing.assert_array_equal(z[...], want)
