"""Python calls per shard of a box write into shards it covers in part: each such shard is read,
merged and written back in a bounded number of calls (its update and lock, index and packing),
whatever the number of its inner chunks. Counted on the calling thread, never timed."""
from __future__ import annotations

import numpy as np
import pytest

import zarrx
from zarrx.codecs import Zstd
from zarrx.store import MemoryStore

from call_counts import calls_made


@pytest.mark.parametrize("compressors", [None, "zstd"], ids=["raw", "zstd"])
def test_a_shard_covered_in_part_is_read_merged_and_written_in_few_calls(compressors):
    """1024x1024 float32 in 16x16 inner chunks, 256x256 shards (256 chunks each), stored
    beforehand; ``z[64:960, 64:960] = v`` touches the 16 shards, 12 of them in part. Before,
    that took 261 calls per shard raw and 273 zstd (packing a shard alone about 100: numpy's
    ``isin`` and a cumulative sum; a predicate call per cached index; the box's edges worked
    out again for each shard)."""
    z = zarrx.create_array(MemoryStore(), shape=(1024, 1024), dtype="f4", chunks=(16, 16),
                           shards=(256, 256), fill_value=0,
                           compressors=Zstd(level=0) if compressors else None)
    a = np.random.default_rng(5).random((1024, 1024)).astype("f4")
    sel = (slice(64, 960), slice(64, 960))
    v = a[sel] + 1
    with zarrx.config.set(threads=1):
        z[...] = a
        z[sel] = v                                  # plans and codecs made
        per_shard = calls_made(lambda: z.__setitem__(sel, v)) / 16
    assert per_shard < 160, f"{per_shard:.1f} calls per shard"
    a[sel] = v
    np.testing.assert_array_equal(z[...], a)
