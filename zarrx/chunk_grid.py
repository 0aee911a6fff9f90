"""The chunk grid of an array: chunk boundaries along each axis (regular or rectilinear), chunk
counts, the stored shape and in-bounds region of each chunk, the chunk holding a position, and
the shard-major order of chunk coordinates.

:mod:`zarrx.indexing` projects selections onto it.
"""
from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from zarrx.errors import IndexingError

__all__ = ["AxisGrid", "ChunkGridIndex", "Grid", "shard_major"]

INT64_MAX = 2**63 - 1

#: a regular chunk shape, or the explicit chunk edge lengths of every axis (rectilinear)
Grid = Sequence[int] | Sequence[Sequence[int]]


class AxisGrid:
    """Chunk boundaries along one axis of length ``size``: regular (``chunk`` > 0, or 0 when
    ``size`` is 0) or explicit edge lengths (``edges``, rectilinear)."""

    __slots__ = ("chunk", "lens", "nchunks", "offsets", "size")

    def __init__(self, size: int, chunk: int | None = None, edges: Sequence[int] | None = None,
                 axis: int = 0) -> None:
        self.size = size
        if edges is None:
            if not isinstance(chunk, (int, np.integer)) or isinstance(chunk, bool) or \
                    chunk < (0 if size == 0 else 1):
                raise IndexingError(f"chunk shape[{axis}]: expected an integer >= 1 (or 0 on an "
                                    f"axis of length 0), found {chunk!r}")
            # an axis of length 0 has no chunks, whatever their length: a length of 0 there
            # (as zarr-python writes for shape=(0, n)) is stepped as 1, so nothing divides by 0
            self.chunk = int(chunk) or 1
            self.offsets = self.lens = None
            self.nchunks = -(-size // self.chunk)
        else:
            if hasattr(edges, "covering"):        # run-length edges: only those the axis touches
                edges = edges.covering(size)
            lens = [int(e) for e in edges]
            if any(e < 1 for e in lens):
                raise IndexingError(f"chunk edges of axis {axis}: expected lengths >= 1, found {edges!r}")
            total = sum(lens)
            if total < size:
                raise IndexingError(f"chunk edges of axis {axis}: expected lengths summing to at "
                                    f"least the axis size {size}, found sum {total}")
            if total <= INT64_MAX:
                offs = np.concatenate([[0], np.cumsum(lens, dtype=np.int64)]).astype(np.int64)
            else:   # the last boundary passes 2**63-1 (the others lie below the axis size):
                # held at that limit, below which every position lies; lengths are ``lens``
                offs = np.array([min(o, INT64_MAX) for o in itertools.accumulate([0, *lens])],
                                dtype=np.int64)
            self.chunk = 0
            self.nchunks = int(np.searchsorted(offs, size, side="left")) if size else 0
            kept = max(self.nchunks, 1)
            self.lens = lens[:kept]
            self.offsets = offs[: kept + 1].copy()

    def start(self, k: int) -> int:
        return k * self.chunk if self.chunk else int(self.offsets[k])

    def stored_len(self, k: int) -> int:
        """Length of chunk ``k``'s array along this axis."""
        return self.chunk if self.chunk else self.lens[k]

    def inbound_len(self, k: int) -> int:
        """Cells of chunk ``k`` inside the array along this axis."""
        s = self.start(k)
        return min(s + self.stored_len(k), self.size) - s

    def boundaries(self) -> np.ndarray:
        """The ``nchunks + 1`` chunk boundaries along this axis, the last clipped to the size."""
        if self.chunk:
            b = np.arange(self.nchunks + 1, dtype=np.int64) * self.chunk
        else:
            b = self.offsets[: self.nchunks + 1].copy()  # type: ignore[index]
        if self.nchunks:
            b[-1] = self.size
        return b

    def sizes(self) -> np.ndarray:
        """Stored chunk lengths along this axis (a regular grid's border chunk is full size)."""
        if self.chunk:
            return np.full(self.nchunks, self.chunk, dtype=np.int64)
        return np.array(self.lens[: self.nchunks], dtype=np.int64)  # type: ignore[index]

    def chunk_of(self, pos: int) -> int:
        if self.chunk:
            return pos // self.chunk
        return bisect.bisect_right(self.offsets, pos) - 1  # type: ignore[arg-type]


class ChunkGridIndex:
    """The chunk grid of an array: per-axis boundaries, chunk counts, chunk shapes and regions.

    ``grid`` is a regular chunk shape ``(c0, c1, ...)`` or rectilinear edge lengths
    ``((e00, e01, ...), (e10, ...), ...)``; model objects with ``chunk_shape`` (regular) or
    ``chunk_sizes`` (rectilinear) are accepted too."""

    __slots__ = ("axes", "nchunks", "regular", "shape")

    def __init__(self, shape: Sequence[int], grid: Any) -> None:
        if type(grid) is tuple:                   # the common case: no attribute lookups
            pass
        elif hasattr(grid, "chunk_sizes"):        # model RectilinearGrid
            grid = grid.chunk_sizes
        elif hasattr(grid, "chunk_shape"):        # model RegularGrid
            grid = grid.chunk_shape
        if type(shape) is tuple and all(type(s) is int and s >= 0 for s in shape):
            self.shape = shape
        else:
            self.shape = tuple(_as_size(s, f"shape[{i}]") for i, s in enumerate(shape))
        try:
            grid = tuple(grid)
        except TypeError:
            raise IndexingError(f"chunk grid: expected a chunk shape or per-axis edge lengths, "
                                f"found {grid!r}") from None
        if len(grid) != len(self.shape):
            raise IndexingError(f"chunk grid has {len(grid)} axes but the array shape "
                                f"{self.shape} has {len(self.shape)}")
        self.regular = all(type(g) is int for g in grid) or \
            all(not isinstance(g, (Sequence, np.ndarray)) for g in grid)
        self.axes = tuple(AxisGrid(n, g, None, i) if self.regular or not isinstance(g, (Sequence, np.ndarray))
                          else AxisGrid(n, None, g, i) for i, (n, g) in enumerate(zip(self.shape, grid)))
        self.nchunks = tuple(a.nchunks for a in self.axes)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def chunk_shape(self, coords: Sequence[int]) -> tuple[int, ...]:
        """Shape of the stored chunk array at ``coords``."""
        return tuple(a.stored_len(k) for a, k in zip(self.axes, coords))

    def chunk_region(self, coords: Sequence[int]) -> tuple[slice, ...]:
        """The array region (in-bounds cells) covered by the chunk at ``coords``."""
        return tuple(slice(a.start(k), a.start(k) + a.inbound_len(k)) for a, k in zip(self.axes, coords))

    def chunk_of(self, position: Sequence[int]) -> tuple[int, ...]:
        return tuple(a.chunk_of(p) for a, p in zip(self.axes, position))

    def all_coords(self) -> Iterator[tuple[int, ...]]:
        return itertools.product(*(range(n) for n in self.nchunks))


def _as_size(v: Any, where: str) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
        raise IndexingError(f"{where}: expected an integer >= 0, found {v!r}")
    return int(v)


def shard_major(coords: np.ndarray, levels: Sequence[int] | Sequence[Sequence[int]]) -> np.ndarray:
    """The permutation listing chunk ``coords`` (an ``(n, ndim)`` int array) shard-major.

    ``levels`` is one shard shape or a list of them, outermost first, each in chunks per shard
    along every axis (in units of the chunks being listed). Chunks are grouped by outer shard
    (shards in C order), then by the next level's shard inside it, and so on; leaves in C order.
    """
    c = np.asarray(coords, dtype=np.int64)
    if c.ndim != 2:
        raise IndexingError(f"shard_major: expected an (n, ndim) coordinate array, found shape {c.shape}")
    if levels and not isinstance(levels[0], (tuple, list, np.ndarray)):
        levels = [levels]  # type: ignore[list-item]
    keys: list[np.ndarray] = []
    for li, lev in enumerate(levels):
        lev = tuple(int(x) for x in lev)  # type: ignore[union-attr]
        if len(lev) != c.shape[1] or any(x < 1 for x in lev):
            raise IndexingError(f"shard shape level {li}: expected {c.shape[1]} integers >= 1, found {lev}")
        keys += [c[:, ax] // lev[ax] for ax in range(c.shape[1])]
    keys += [c[:, ax] for ax in range(c.shape[1])]
    if not keys:
        return np.arange(c.shape[0], dtype=np.int64)
    return np.lexsort(keys[::-1]).astype(np.int64)
