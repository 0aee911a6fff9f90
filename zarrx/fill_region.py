"""The cells of missing chunks in a read, filled with a few numpy calls.

A chunk that is not stored reads as the fill value. Filling each one on its own costs
microseconds of Python per chunk, the bulk of reading a sparse array of small chunks. Here the
missing chunks of a read are marked in a boolean grid over the chunks the box touches, and the
output is filled by runs: a run of whole rows of missing chunks along the first axis is one
assignment, a row holding both kinds one masked assignment (its mask spans one row of the
output's cells), and in one dimension each run of missing chunks is one assignment. Other
outer selections (strides, index arrays) are filled by masks of at most ``MASK_CELLS`` cells
(:func:`fill_entries`). Runs are filled by a C kernel without the GIL when the fill value's
bytes are given and the items are structured, fixed-length text or complex numbers (5-9 times
numpy's speed: numpy copies such items one by one); other runs, and masks, by numpy.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from zarrx._gather import fill_view

__all__ = ["fill_missing", "fill_entries"]

#: most cells of the output one masked assignment of :func:`fill_entries` covers
MASK_CELLS = 1 << 24


#: kinds of items numpy fills item by item (5-9 times slower than the kernel); it fills the
#: others (numbers, booleans, dates) by stores or ``memset``, 1.3 times the kernel's speed
KERNEL_KINDS = frozenset("SUVc")


def _put(view: np.ndarray, fill: Any, fill_bytes: bytes | None) -> None:
    """``view[...] = fill``: by the C kernel when ``fill_bytes`` (one item of ``view``'s
    dtype) is given and numpy would copy item by item."""
    if fill_bytes is not None and view.dtype.kind in KERNEL_KINDS \
            and view.dtype.itemsize == len(fill_bytes):
        fill_view(view, fill_bytes)
    else:
        view[...] = fill


def fill_missing(target: np.ndarray, box: tuple[tuple[int, int], ...],
                 chunk: tuple[int, ...], missing: np.ndarray, fill: Any,
                 fill_bytes: bytes | None = None) -> None:
    """Set the cells of ``target`` (the cells of ``box``, one ``(start, stop)`` per axis of a
    regular grid of ``chunk`` cells) that lie in the chunks at the coordinates ``missing``
    (an ``(n, ndim)`` int64 array of chunks the box touches) to ``fill`` (whose bytes, one
    item of ``target``'s dtype, are ``fill_bytes`` when given)."""
    if not len(missing):
        return
    first = [a // c for (a, _), c in zip(box, chunk)]
    grid = np.zeros([(b - 1) // c + 1 - f for (_, b), c, f in zip(box, chunk, first)],
                    dtype=np.bool_)
    grid[tuple((missing - np.asarray(first, dtype=np.int64)).T)] = True
    # per axis: where each chunk of the grid starts and ends in ``target``
    edges = [np.concatenate(([0], np.arange(f + 1, f + n, dtype=np.int64) * c - a, [b - a]))
             for (a, b), c, f, n in zip(box, chunk, first, grid.shape)]
    _fill(target, grid, edges, fill, fill_bytes)


def _runs(flags: np.ndarray) -> tuple[list[int], list[int]]:
    """The ``[start, stop)`` runs of True in the 1-d boolean ``flags``."""
    d = np.diff(np.concatenate(([0], flags.view(np.int8), [0])))
    return np.flatnonzero(d == 1).tolist(), np.flatnonzero(d == -1).tolist()


def _fill(target: np.ndarray, grid: np.ndarray, edges: list[np.ndarray], fill: Any,
          fill_bytes: bytes | None) -> None:
    if grid.ndim == 0:
        if grid:
            _put(target, fill, fill_bytes)
        return
    rows = grid.reshape(grid.shape[0], -1)
    whole = rows.all(axis=1)
    e0 = edges[0].tolist()
    for s, t in zip(*_runs(whole)):
        _put(target[e0[s]:e0[t]], fill, fill_bytes)
    if grid.ndim == 1:
        return
    # the rows holding missing and stored chunks: one mask over a row of cells each
    cells = [np.repeat(np.arange(len(e) - 1), np.diff(e)) for e in edges[1:]]
    for r in np.flatnonzero(rows.any(axis=1) & ~whole).tolist():
        mask = grid[r][np.ix_(*cells)]
        target[e0[r]:e0[r + 1]][:, mask] = fill


def fill_entries(target: np.ndarray, ids: list[np.ndarray], maps: list[np.ndarray | None],
                 fed: list[int], missing: np.ndarray, fill: Any,
                 fill_bytes: bytes | None = None) -> None:
    """Set the cells of ``target`` (the output of an outer selection) that lie in the chunks
    at the coordinates ``missing`` (an ``(n, ndim)`` int64 array of chunks the selection
    touches) to ``fill``. ``ids``: per array axis, the chunk numbers the selection touches,
    ascending; ``maps``: per axis of ``target``, the index into ``ids`` of each cell's chunk
    along the array axis feeding it, or None for a new axis; ``fed``: those array axes, in
    order (the others select one integer, so one chunk)."""
    if not len(missing):
        return
    grid = np.zeros([len(k) for k in ids], dtype=np.bool_)
    grid[tuple(np.searchsorted(k, missing[:, ax]) for ax, k in enumerate(ids))] = True
    grid = grid[tuple(slice(None) if ax in fed else 0 for ax in range(grid.ndim))]
    if not grid.any():
        return
    real = [m for m in maps if m is not None]
    if not real or grid.all():
        _put(target, fill, fill_bytes)
        return
    rest = int(np.prod(target.shape[1:], dtype=np.int64))
    step = max(1, MASK_CELLS // max(1, rest))
    first = maps[0]
    for b0 in range(0, target.shape[0], step):
        b1 = b0 + step
        block = [first[b0:b1], *real[1:]] if first is not None else real
        part = target[b0:b1]
        part[grid[np.ix_(*block)].reshape(part.shape)] = fill
