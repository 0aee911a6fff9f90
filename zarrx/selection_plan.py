"""The plan of one selection: :class:`SelectionPlan` (the result shape, and the chunks the
selection touches with what it takes of each) and :class:`ChunkList`, its chunk projections
as a lazy sequence. Plans are made by :func:`zarrx.indexing.plan_selection`.
"""
from __future__ import annotations

import itertools
import operator
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from zarrx.chunk_grid import shard_major

if TYPE_CHECKING:
    from zarrx.indexing import ChunkProjection

__all__ = ["ChunkList", "SelectionPlan"]


class ChunkList(Sequence):
    """The chunk projections of a plan as a lazy sequence: ``len()``, iteration, indexing and
    slicing build :class:`ChunkProjection` objects on demand, never all at once."""

    __slots__ = ("_it", "_plan", "_pos")

    def __init__(self, plan: SelectionPlan) -> None:
        self._plan = plan
        self._it: Iterator[ChunkProjection] | None = None   # consecutive slices continue it
        self._pos = 0

    def __len__(self) -> int:
        return self._plan.nchunks

    def __iter__(self) -> Iterator[ChunkProjection]:
        return self._plan._iter(self._plan._ordered())

    def __getitem__(self, i: Any) -> Any:
        n = self._plan.nchunks
        if isinstance(i, slice):
            start, stop, step = i.indices(n)
            if step != 1 or stop <= start or (start != self._pos and start != 0):
                return [self[k] for k in range(start, stop, step)]
            if start == 0 or self._it is None:
                self._it, self._pos = iter(self), 0
            out = list(itertools.islice(self._it, stop - start))
            self._pos = start + len(out)
            return out
        k = operator.index(i)
        if k < 0:
            k += n
        if not 0 <= k < n:
            raise IndexError(f"chunk {i} of a plan listing {n} chunks")
        order = self._plan._ordered()
        return self._plan._at(k if order is None else int(order[k]))

    def coords(self) -> np.ndarray:
        """The listed chunks' coordinates, in listing order, as an ``(n, ndim)`` array."""
        return self._plan.chunk_coords()

    def coords_of(self, a: int, b: int) -> np.ndarray:
        """The coordinates of the listed chunks ``a`` to ``b`` (``0 <= a <= b <= len``), as an
        ``(b - a, ndim)`` int64 array, worked out without a projection per chunk."""
        return self._plan.window_coords(a, b)

    @property
    def plan(self) -> SelectionPlan:
        return self._plan

    def __repr__(self) -> str:
        return f"ChunkList(<{len(self)} chunk projections>)"


class SelectionPlan:
    """Result shape plus the chunk projections of one selection (``plan.chunks``)."""

    __slots__ = ("_at", "_coords", "_coords_at", "_iter", "_levels", "_order", "box", "cells",
                 "kind", "nchunks", "out_shape", "picks", "points", "region", "view")

    def __init__(self, kind: str, out_shape: tuple[int, ...], nchunks: int, it: Any, at: Any,
                 coords: Any, box: tuple[tuple[int, int], ...] | None = None,
                 coords_at: Any = None) -> None:
        self.kind = kind
        # ``(start, stop)`` per array axis when the selection is one box of cells (integers and
        # step-1 slices, maybe new axes; not empty): the output then holds the box's cells in C
        # order, and the chunks are listed in C order over those the box touches
        self.box = box
        self.region = box          # the same box of cells, whatever order the chunks are listed in
        self.out_shape = out_shape
        self.nchunks = nchunks
        self._iter = it            # callable(order or None) -> iterator of ChunkProjection
        self._at = at              # callable(C-order index) -> ChunkProjection
        self._coords = coords      # callable() -> (nchunks, ndim) int64 array, C order
        self._coords_at = coords_at  # callable(C-order indices) -> their coordinates, or None
        # an outer selection's output cells by chunk, for filling missing chunks together:
        # callable() -> (per array axis, the chunk numbers its entries list (ascending); per
        # output axis, the entry each cell lies in, or None for a new axis; the array axes
        # feeding output axes), else None
        self.cells: Any = None
        self._order: np.ndarray | None = None
        self._levels: Any = None          # shard levels of an order not worked out yet
        # (output axis, index shape) when a basic selection's index array has several axes:
        # ``out_shape`` holds its positions flattened on that axis, and
        # :func:`~zarrx.selection.numpy_layout` lays a result out as numpy does
        self.view: tuple[int, tuple[int, ...]] | None = None
        # an outer selection's cells per array axis, in output order: ``(start, count, step)``
        # of a slice (any step) or an integer (a count of 1), or an int64 array of positions;
        # None for other plans
        self.picks: tuple | None = None
        # a coordinate or mask plan's points grouped by chunk: ``(points, perm, bounds, first,
        # grid)``: per array axis the points' positions in output order, the order listing
        # them chunk by chunk (None: they already are), where each chunk's run of them starts
        # in that order (and the end), each such chunk's C-order number in the grid of
        # ``grid`` chunks per axis; None for other plans
        self.points: tuple | None = None

    @property
    def shape(self) -> tuple[int, ...]:
        """numpy's shape of the result (``out_shape`` unless ``view`` is set)."""
        if self.view is None:
            return self.out_shape
        at, ishape = self.view
        return self.out_shape[:at] + ishape + self.out_shape[at + 1:]

    @property
    def flat(self) -> bool:
        """True when ``out_sel`` indexes the flattened output (coordinate and mask plans)."""
        return self.kind in ("coordinate", "mask")

    @property
    def chunks(self) -> ChunkList:
        return ChunkList(self)

    def __iter__(self) -> Iterator[ChunkProjection]:
        return self._iter(self._ordered())

    def __len__(self) -> int:
        return self.nchunks

    def chunk_coords(self) -> np.ndarray:
        """Coordinates of the listed chunks, in listing order, as an ``(nchunks, ndim)`` array."""
        c = self._coords()
        order = self._ordered()
        return c if order is None else c[order]

    def window_coords(self, a: int, b: int) -> np.ndarray:
        """Coordinates of the listed chunks ``a`` to ``b``, as a ``(b - a, ndim)`` int64 array:
        a few numpy calls whatever the number of chunks, holding nothing per chunk of the
        plan beyond the order (when the chunks are listed shard-major)."""
        order = self._ordered()
        idx = np.arange(a, b, dtype=np.int64) if order is None else order[a:b]
        if self._coords_at is None:
            return self._coords()[idx]
        return self._coords_at(idx)

    def reorder_shard_major(self, shard_shape: Any) -> None:
        """List the chunks shard-major: the order (8 bytes per chunk, and a sort) is worked
        out when the chunks are first listed, not for a read that takes ``region`` alone."""
        if self.nchunks > 1:
            self._levels = shard_shape
            self.box = None              # the listing is no longer C order

    def _ordered(self) -> np.ndarray | None:
        if self._levels is not None:     # (two threads may both sort: the same order)
            self._order = shard_major(self._coords(), self._levels)
            self._levels = None
        return self._order

    def __repr__(self) -> str:
        return f"SelectionPlan(kind={self.kind!r}, out_shape={self.out_shape}, nchunks={self.nchunks})"
