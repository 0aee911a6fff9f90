"""Batch merges of point writes: coordinate and mask selections (``z.vindex[rows, cols] = v``,
``z.vindex[mask] = v``, ``set_coordinate_selection``, ``set_mask_selection``) of an array of
small chunks each stored as an object of its own, read, merged and stored a run of chunks at
a time.

The general write path (:func:`zarrx.chunk_write.write_from`) updates each chunk holding a
point on its own (a projection, a locked read, a decode, a merge, an encode and a conditional
write: a few dozen Python calls per chunk). The plan of a point selection lists its points
grouped by chunk (:attr:`~zarrx.selection_plan.SelectionPlan.points`: the chunks in C order,
each one's points in the order of the selection); here the chunks are cut into runs of at
most a slab's bytes and ``shard_read.SLAB_POINTS`` points (as point reads cut them), and each
run is updated as one by :func:`~zarrx.batch_merge.merge_chunks`: the locks of its chunks
taken at once, the stored ones read with one store call (with their generations where the
store writes conditionally), decoded into the rows of one buffer, the points' values set by
one numpy assignment over those rows, the rows encoded by each codec in one call and stored
together, conditionally on the generations read. A point named twice keeps the last of its
values, as numpy's assignment and the general path keep it: the points of a chunk stay in
the selection's order, and numpy's assignment sets them in that order.

A chunk whose cells inside the array the points cover all (a mask selecting whole chunks) is
not read: its other cells, past the array's end, are the fill value, as the general path
makes them. A chunk another writer changed meanwhile, and every chunk of a run with a chunk
that does not decode or encode (or one longer than its limit, or whose lock another thread
of the process holds), go through the general path, which merges again or raises the error
naming the chunk. Which arrays may take this path: :func:`zarrx.batch_merge.eligible`.
"""
from __future__ import annotations

from math import prod
from typing import Any

import numpy as np

from zarrx import _pool, batch_merge, chunk_io, shard_read
from zarrx.batch_read import BATCH_CHUNKS, MIN_CHUNKS
from zarrx.chunk_io import WINDOW_BYTES, ArrayIO, check_count
from zarrx.chunk_write import write_from
from zarrx.shard_read import SLAB_BYTES, run_in_order

__all__ = ["write_points"]


def write_points(io: ArrayIO, plan: Any, value: np.ndarray) -> bool:
    """Write ``value`` (broadcast to the selection's shape, of the array's dtype) into the
    points of ``plan`` (a coordinate or mask :class:`~zarrx.indexing.SelectionPlan`) when they
    lie in at least ``MIN_CHUNKS`` chunks and the array allows it (see
    :func:`~zarrx.batch_merge.eligible`). False, having written nothing, otherwise."""
    points = plan.points
    if points is None or plan.nchunks < MIN_CHUNKS or plan.view is not None \
            or not batch_merge.eligible(io, value):
        return False
    check_count(io, plan.nchunks)
    chunk = io.chunk_shape
    enc = io.plan(chunk)
    parallel = _pool.threads() > 1 and not io.gil_bound
    limit = min(SLAB_BYTES, WINDOW_BYTES) if parallel else SLAB_BYTES
    step = max(1, min(limit // max(1, enc.nbytes), BATCH_CHUNKS, chunk_io.MAX_WINDOW))
    bounds = points[2]
    runs = []                   # (first, end) of each run's chunks, in the plan's groups
    a = 0
    while a < plan.nchunks:
        b = int(np.searchsorted(bounds, bounds[a] + shard_read.SLAB_POINTS, side="right")) - 1
        b = min(max(b, a + 1), a + step, plan.nchunks)
        runs.append((a, b))
        a = b
    flat = value.reshape(-1)

    def one(i: int) -> None:
        g0, g1 = runs[i]
        left = _merge_run(io, enc, points, g0, g1, flat)
        if left is not None and len(left):      # by the general path: errors, conflicts
            chunks = plan.chunks
            write_from(io, [chunks[g0 + j] for j in left.tolist()], value, flat=True)

    run_in_order(len(runs), one, parallel and len(runs) > 1)
    return True


def _merge_run(io: ArrayIO, enc: Any, points: tuple, g0: int, g1: int, flat: np.ndarray
               ) -> np.ndarray | None:
    """Update the chunks ``g0`` to ``g1`` of those holding a point (C order) with their points'
    values (of ``flat``, the value's cells in the selection's order); the answer of
    :func:`~zarrx.batch_merge.merge_chunks`."""
    pts, perm, bounds, first, grid = points
    chunk = io.chunk_shape
    k = g1 - g0
    coords = np.stack(np.unravel_index(first[g0:g1], grid), axis=1).astype(np.int64,
                                                                          copy=False)
    b0, b1 = int(bounds[g0]), int(bounds[g1])
    pos = np.arange(b0, b1, dtype=np.int64) if perm is None else perm[b0:b1]
    counts = np.diff(bounds[g0:g1 + 1])
    cells = prod(chunk)
    # each point's place among the run's decoded cells: its chunk's row, then its cell there
    at = np.repeat(np.arange(k, dtype=np.int64) * cells, counts)
    stride = cells
    for p, c in zip(pts, chunk):
        stride //= c
        at += (p[pos] % c) * stride
    vals = flat[pos]
    covered = _covered(io, coords, counts, at, cells)

    def merge(dec: np.ndarray) -> None:
        dec.reshape(-1)[at] = vals          # in the selection's order: the last value wins

    return batch_merge.merge_chunks(io, enc, coords, covered, merge)


def _covered(io: ArrayIO, coords: np.ndarray, counts: np.ndarray, at: np.ndarray,
             cells: int) -> np.ndarray:
    """For each of the run's chunks, whether its points (``at``: their places among the
    run's cells) take all its cells inside the array. Only a chunk with at least as many
    points as such cells may be covered: the others are not looked at further."""
    k = len(coords)
    inside = np.ones(k, dtype=np.int64)
    for d, (c, size) in enumerate(zip(io.chunk_shape, io.meta.shape)):
        inside *= np.minimum(c, size - coords[:, d] * c)
    maybe = counts >= inside
    if not maybe.any():
        return maybe
    taken = np.zeros(k * cells, dtype=bool)
    taken[at] = True
    return maybe & (np.count_nonzero(taken.reshape(k, cells), axis=1) == inside)
