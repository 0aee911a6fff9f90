"""``cast_value`` converts a chunk in a few whole-array passes, and looks a long scalar map
up by binary search: the common casts (float64 to
uint8, int16, float32; with a NaN scalar map) hold a bounded number of temporaries, measured
as the peak of traced allocations per item (numpy reports its buffers to tracemalloc)."""
from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from zarrx.codecs import CastValue

N = 1 << 18


def _peak_per_item(fn) -> float:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / N
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("conf, limit", [
    ({"data_type": "uint8"}, 16),                   # the result (1) + the rounded float64s
    ({"data_type": "int16", "rounding": "towards-zero"}, 16),
    ({"data_type": "float32"}, 16),
    ({"data_type": "uint8", "scalar_map": {"encode": [["NaN", 0]]}}, 24),
])
def test_encoding_a_float64_chunk_makes_few_temporaries(conf, limit):
    x = np.random.default_rng(0).uniform(0, 250, N)
    if "scalar_map" in conf:
        x[::100] = np.nan
    c = CastValue(**conf)
    c.encode(x[:10])                                # parsed once, outside the measure
    assert _peak_per_item(lambda: c.encode(x)) < limit
    stored = c.encode(x)
    back = c.decode(stored, np.dtype("f8"), stored.shape)
    assert _peak_per_item(lambda: c.decode(stored, np.dtype("f8"), stored.shape)) < 32
    np.testing.assert_array_equal(back, c.decode(stored, np.dtype("f8"), stored.shape))


def _long_map(n):
    pairs = [[float(i), i % 200] for i in range(n)]
    return {"encode": [["NaN", 250], [3.0, 251]] + pairs + [[-0.0, 252]],   # first ones win
            "decode": [[i % 200, float(i)] for i in range(n)]}


def test_a_long_scalar_map_is_looked_up_not_walked_pair_by_pair():
    from tests.call_counts import calls_made
    small, big = (CastValue(data_type="uint8", scalar_map=_long_map(n)) for n in (100, 2000))
    x = np.array([np.nan, 3.0, 0.0, -0.0, 150.0, 250.4, 17.0])
    for c in (small, big):
        c.encode(x)                                 # parsed once, outside the count
    counts = [calls_made(lambda: c.encode(x)) for c in (small, big)]
    assert counts[1] <= counts[0] + 5, counts       # not growing with the pairs
    for c in (small, big):
        assert c.encode(x).tolist() == [250, 251, 0, 0, 150, 250, 17]
    stored = np.array([199, 7, 201], dtype="u1")
    assert big.decode(stored, np.dtype("f8"), (3,)).tolist() == [199.0, 7.0, 201.0]


@pytest.mark.parametrize("source, conf", [
    ("int64", {"data_type": "float32"}),            # values past 2**53: worked out in integers
    ("float64", {"data_type": "uint8", "out_of_range": "wrap"}),
    ("float64", {"data_type": "float16", "rounding": "towards-zero", "out_of_range": "clamp"}),
])
def test_the_exact_paths_hold_their_temporaries_a_block_at_a_time(source, conf):
    n = 1 << 20
    rng = np.random.default_rng(1)
    x = rng.integers(-2**63, 2**63 - 1, n, dtype=np.int64) if source == "int64" \
        else rng.uniform(-1e6, 1e6, n)
    c = CastValue(**conf)
    c.encode(x[:10])
    tracemalloc.start()
    try:
        c.encode(x)
        peak = tracemalloc.get_traced_memory()[1] / n
    finally:
        tracemalloc.stop()
    assert peak < 24, peak                          # (about 110 bytes an item at once)
    whole = c.encode(x)
    np.testing.assert_array_equal(whole, np.concatenate([c.encode(x[i:i + 50_000])
                                                         for i in range(0, n, 50_000)]))
