"""Builders shared by the benchmark modules.

With ``asv run --python=same`` the project is not installed; the in-place build at the
repository root is used instead (``python setup.py build_ext --inplace``).
"""
from __future__ import annotations

import os
import sys

try:
    import zarrx  # noqa: F401
except ImportError:
    sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
    import zarrx  # noqa: F401

import numpy as np

from zarrx.store import MemoryStore

CODECS = ("raw", "crc32c", "gzip-1", "zstd-0", "blosc-lz4")


def data(size: int, seed: int = 12345) -> np.ndarray:
    """The same compressible float32 field as ``zarrx bench`` (smooth waves plus noise)."""
    from zarrx.bench.workload import make_data
    return make_data(size, seed)


def compressors(codec: str) -> object:
    """The ``compressors=`` argument for a codec name of ``CODECS``."""
    from zarrx.codecs import Blosc, Crc32c, Gzip, Zstd
    if codec == "raw":
        return None
    if codec == "crc32c":
        return Crc32c()
    if codec.startswith("gzip-"):
        return Gzip(level=int(codec[5:]))
    if codec.startswith("zstd-"):
        return Zstd(level=int(codec[5:]))
    if codec == "blosc-lz4":
        return Blosc(cname="lz4", clevel=5, shuffle="shuffle")
    raise NotImplementedError(codec)


def array(values: np.ndarray | None, shape: tuple[int, ...], chunks: tuple[int, ...],
          codec: str = "raw", shards: tuple[int, ...] | None = None,
          zarr_format: int = 3) -> tuple[MemoryStore, "zarrx.Array"]:
    """A float32 array in a fresh MemoryStore, filled with ``values`` when given."""
    store = MemoryStore()
    z = zarrx.create_array(store, shape=shape, dtype="float32", chunks=chunks, shards=shards,
                           compressors=compressors(codec), fill_value=0,
                           zarr_format=zarr_format)
    if values is not None:
        z[...] = values
    return store, z


def tiles(values: np.ndarray, chunk: int) -> list[np.ndarray]:
    """Every ``chunk``×``chunk`` tile of a 2-d array as its own contiguous copy."""
    n0, n1 = values.shape
    return [np.ascontiguousarray(values[i:i + chunk, j:j + chunk])
            for i in range(0, n0, chunk) for j in range(0, n1, chunk)]
