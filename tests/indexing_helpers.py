"""What the tests of zarrx.indexing share: arrays split into chunks by a plan and joined again,
reads and writes assembled chunk by chunk, and the checks of a plan against numpy."""
from __future__ import annotations

from typing import Any

import numpy as np

from zarrx.indexing import ChunkGridIndex


SENTINEL = -7


def split(a: np.ndarray, grid: ChunkGridIndex) -> dict[tuple[int, ...], np.ndarray]:
    """The chunk arrays of ``a`` at their stored shape; cells past the edge hold SENTINEL."""
    chunks = {}
    for coords in grid.all_coords():
        c = np.full(grid.chunk_shape(coords), SENTINEL, dtype=a.dtype)
        region = grid.chunk_region(coords)
        c[tuple(slice(0, r.stop - r.start) for r in region)] = a[region]
        chunks[coords] = c
    return chunks


def read(plan, chunks: dict, dtype: Any) -> np.ndarray:
    out = np.full(plan.out_shape, SENTINEL, dtype=dtype)
    target = out.reshape(-1) if plan.flat else out
    for p in plan.chunks:
        target[p.out_sel] = chunks[p.coords][p.chunk_sel]
    return out


def write(plan, chunks: dict, values: np.ndarray) -> None:
    src = values.reshape(-1) if plan.flat else values
    for p in plan.chunks:
        chunks[p.coords][p.chunk_sel] = src[p.out_sel]


def _ten():
    import zarrx
    z = zarrx.create_array({}, shape=(10,), chunks=(3,), dtype="i4")
    z[...] = np.arange(10)
    return z


class NumpySelections(np.ndarray):
    """A numpy array read with the selection methods of a zarrx array (``oindex``,
    ``vindex``), so that one selection function reads both."""

    def __new__(cls, a):
        return np.asarray(a).view(cls)

    @property
    def oindex(self):
        return _Take(lambda k: np.asarray(self)[np.ix_(*k)])

    @property
    def vindex(self):
        return _Take(lambda k: np.asarray(self)[tuple(k)])


class _Take:
    def __init__(self, take):
        self.take = take

    def __getitem__(self, k):
        return self.take(k)
