"""Deterministic sample arrays of any dtype for round-trip and interop tests."""
from __future__ import annotations

import numpy as np


def sample(shape, dtype, seed=0, *, with_nan=False):
    """Random values filling each dtype's range (non-native byte orders included); with
    ``with_nan``, the second element of a float array is NaN."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    n = int(np.prod(shape))
    if dt.kind == "b":
        a = rng.integers(0, 2, n).astype(bool)
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        a = rng.integers(info.min, info.max, n, dtype=dt.newbyteorder("="), endpoint=True).astype(dt)
    elif dt.kind == "f":
        a = rng.normal(0, 100, n).astype(dt)
        if with_nan and n > 2:
            a[1] = np.nan
    elif dt.kind == "c":
        a = (rng.normal(0, 1, n) + 1j * rng.normal(0, 1, n)).astype(dt)
    elif dt.kind == "S":
        a = np.array([bytes(rng.integers(97, 123, dt.itemsize, dtype=np.uint8)) for _ in range(n)], dt)
    elif dt.kind == "U":
        a = np.array(["".join(map(chr, rng.integers(0x61, 0x3000, dt.itemsize // 4)))
                      for _ in range(n)], dt)
    elif dt.kind in "mM":
        a = rng.integers(-10**9, 10**9, n).astype(dt)
    else:
        raise AssertionError(f"no sample data for {dt}")
    return a.reshape(shape)
