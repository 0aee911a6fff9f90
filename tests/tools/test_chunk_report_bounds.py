"""``zarrx chunk`` describes an object that is not stored without reading its region: every
value there reads as the fill value."""
import time

import numpy as np

import zarrx
from zarrx.store import MemoryStore
from zarrx.tools.summary import chunk_report


def test_a_missing_shard_of_a_million_inner_chunks_is_described_at_once():
    z = zarrx.create_array(MemoryStore(), shape=(2**62,), chunks=(1,), shards=(2**20,),
                           dtype="u1", fill_value=3)
    z[-1] = 7
    t0 = time.perf_counter()
    rep = chunk_report(z, "c/0")            # before: its 2^20 inner chunks read, in 17 s
    assert time.perf_counter() - t0 < 2
    assert not rep["stored"] and rep["region"] == [[0, 2**20]]
    assert rep["decoded"] == {"shape": [2**20], "dtype": "uint8", "min": 3, "max": 3,
                              "mean": 3.0, "fill": 2**20}


def test_a_missing_chunk_larger_than_memory_is_described():
    z = zarrx.create_array(MemoryStore(), shape=(2**50, 3), chunks=(2**48, 2), dtype="f8",
                           fill_value=np.nan)
    rep = chunk_report(z, "3,1")            # before: "does not fit in memory", no statistics
    assert "error" not in rep and rep["region"] == [[3 * 2**48, 2**50], [2, 3]]
    assert rep["decoded"] == {"shape": [2**48, 1], "dtype": "float64", "nan": 2**48,
                              "fill": 2**48}
