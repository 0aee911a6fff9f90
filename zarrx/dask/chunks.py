"""Dask block boundaries for a zarrx array: aligned with its stored objects (shards, or chunks
when unsharded), merged up to a target size, and the regrouping that aligns a dask array's
blocks with them before a write.

Pure functions over shapes and the array's chunk grid: no dask import, no I/O.
"""
from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from zarrx.errors import ArgumentError, ArgumentTypeError, SelectionSizeError, ZarrError
from zarrx.indexing import MAX_CHUNKS
from zarrx.metadata.model import ArrayMeta, RectilinearGrid

__all__ = ["TARGET_BYTES", "object_shape", "object_edges", "default_chunks", "aligned_chunks", "is_aligned",
           "region_offset", "region_extent", "region_edges", "check_chunks", "least_blocks",
           "check_blocks", "bounded_block", "MAX_BLOCKS"]

#: default size of one dask block
TARGET_BYTES = 128 * 2**20
#: most blocks of a dask array reading a zarrx array: dask lists the key of every block of it
#: whenever it computes anything from it (one element of an array of 2^22 blocks, the most
#: made, took 8 s and 1.2 GiB; of 2^40 blocks, it never finished)
MAX_BLOCKS = 1 << 22

Chunks = tuple[tuple[int, ...], ...]


def object_shape(meta: ArrayMeta) -> tuple[int, ...]:
    """The largest stored object (shard, or chunk when unsharded) inside the array along each
    axis, 1 for an axis of length 0; found without listing the objects of a regular grid."""
    grid = meta.chunk_grid
    if isinstance(grid, RectilinearGrid):
        return tuple(max((b - a for a, b in zip(e, e[1:])), default=0) or 1
                     for e in object_edges(meta))
    return tuple(min(int(c), n) or 1 for c, n in zip(grid.chunk_shape,  # type: ignore[attr-defined]
                                                    meta.shape))


def object_edges(meta: ArrayMeta) -> list[list[int]]:
    """Per axis, the boundaries of the stored objects (shards, or chunks when unsharded) that
    lie inside the array, from 0 to the axis length (both included). More than
    :data:`zarrx.indexing.MAX_CHUNKS` objects along an axis are a SelectionSizeError."""
    grid = meta.chunk_grid
    out = []
    for axis, n in enumerate(meta.shape):
        if not isinstance(grid, RectilinearGrid):    # a rectilinear axis is listed in the metadata
            count = -(-n // max(int(grid.chunk_shape[axis]), 1))   # type: ignore[attr-defined]
            if count > MAX_CHUNKS:
                raise SelectionSizeError(f"axis {axis} has {count} stored objects; at most "
                                         f"{MAX_CHUNKS} are listed per axis to lay out dask "
                                         f"blocks")
        if isinstance(grid, RectilinearGrid):
            edges = [0]
            for size in grid.chunk_sizes[axis]:
                if edges[-1] >= n:
                    break
                edges.append(min(edges[-1] + size, n))
        else:
            step = max(int(grid.chunk_shape[axis]), 1)      # type: ignore[attr-defined]
            edges = list(range(0, n, step)) + [n]
        if edges[-1] != n:
            edges.append(n)
        out.append(edges if n else [0])
    return out


def _itemsize(dtype: np.dtype) -> int:
    return max(dtype.itemsize, 1) if not dtype.hasobject else 16


def default_chunks(meta: ArrayMeta, target: int = TARGET_BYTES) -> Chunks:
    """Dask chunks whose boundaries are stored-object boundaries, each block grouping up to
    ``target`` bytes of whole objects (a single object larger than ``target`` is one block).
    Blocks grow on the axis where they are smallest first, so they stay roughly cubic."""
    edges = object_edges(meta)
    ndim = len(edges)
    units = [max((b - a for a, b in zip(e, e[1:])), default=0) for e in edges]
    counts = [len(e) - 1 for e in edges]
    group = [1] * ndim
    itemsize = _itemsize(meta.data_type.numpy)

    def nbytes(g: list[int]) -> int:
        return math.prod(min(gi * u, sum_u) for gi, u, sum_u in
                         zip(g, units, (e[-1] for e in edges))) * itemsize

    growing = [i for i in range(ndim) if counts[i] > 1]
    while growing:
        # the axis whose block is smallest (in elements); the last axis wins ties
        axis = min(growing, key=lambda i: (group[i] * units[i], -i))
        trial = list(group)
        trial[axis] = min(group[axis] * 2, counts[axis])
        if nbytes(trial) <= target:
            group = trial
            if group[axis] >= counts[axis]:
                growing.remove(axis)
            continue
        # the largest group on this axis that still fits, then leave the axis alone
        other = nbytes([1 if i == axis else g for i, g in enumerate(group)])
        fit = target // other if other else counts[axis]
        group[axis] = max(group[axis], min(int(fit), counts[axis]))
        growing.remove(axis)
    return tuple(_group_edges(e, g) for e, g in zip(edges, group))


def _group_edges(edges: list[int], group: int) -> tuple[int, ...]:
    """Block sizes along one axis: ``group`` consecutive objects per block."""
    if len(edges) == 1:
        return (0,)
    cut = edges[::group]
    if cut[-1] != edges[-1]:
        cut.append(edges[-1])
    return tuple(b - a for a, b in zip(cut, cut[1:]))


def is_aligned(chunks: Chunks, edges: list[list[int]], offset: Sequence[int]) -> bool:
    """Whether every inner boundary of ``chunks`` (placed at ``offset`` in the array) is a
    stored-object boundary, so that no two blocks write to one stored object."""
    for sizes, e, off in zip(chunks, edges, offset):
        bounds = set(e)
        pos = off
        for s in sizes[:-1]:
            pos += s
            if pos not in bounds:
                return False
    return True


def aligned_chunks(chunks: Chunks, edges: list[list[int]], offset: Sequence[int]) -> Chunks:
    """``chunks`` (placed at ``offset``) with every inner boundary moved to the nearest
    stored-object boundary, so blocks keep about their size and no two blocks share an object.
    Empty blocks that the moves create are dropped."""
    out = []
    for axis, (sizes, e, off) in enumerate(zip(chunks, edges, offset)):
        total = sum(sizes)
        if total == 0:
            out.append(tuple(sizes))
            continue
        inner = [b for b in e if off < b < off + total]
        cuts = [off]
        pos = off
        for s in sizes[:-1]:
            pos += s
            if not inner:
                break
            near = _nearest(inner, pos)
            if near > cuts[-1]:
                cuts.append(near)
        cuts.append(off + total)
        new = tuple(b - a for a, b in zip(cuts, cuts[1:]) if b > a)
        if sum(new) != total:
            raise ZarrError(f"aligning dask chunks on axis {axis}: lost elements "
                            f"({sum(new)} != {total})")     # an internal invariant, worded
        out.append(new)
    return tuple(out)


def _nearest(sorted_edges: list[int], pos: int) -> int:
    """The edge of ``sorted_edges`` (ascending, not empty) nearest ``pos``, the lower on a tie;
    found by bisection, so aligning many blocks over many objects stays linear in the blocks."""
    i = bisect.bisect_left(sorted_edges, pos)
    if i == len(sorted_edges):
        return sorted_edges[-1]
    if i == 0 or sorted_edges[i] == pos:
        return sorted_edges[i]
    below, above = sorted_edges[i - 1], sorted_edges[i]
    return below if pos - below <= above - pos else above


def region_offset(region: Any, shape: tuple[int, ...], where: str) -> tuple[tuple[int, ...],
                                                                         tuple[slice, ...]]:
    """``region`` (None, or a tuple of slices with a positive step) as (start offsets, slices)
    within ``shape``; each slice has its step (1 when none was given) and a stop past its last
    element by at most the step (``len(range(s.start, s.stop, s.step))`` elements)."""
    if region is None:
        region = ()
    if isinstance(region, slice):
        region = (region,)
    if not isinstance(region, tuple) or len(region) > len(shape) \
            or not all(isinstance(r, slice) for r in region):
        raise ArgumentError(f"{where}: region: expected a tuple of at most {len(shape)} slices, "
                            f"found {region!r}")
    region = region + (slice(None),) * (len(shape) - len(region))
    starts, slices = [], []
    for axis, (r, n) in enumerate(zip(region, shape)):
        if r.step is not None and not isinstance(r.step, (int, np.integer)):
            raise ArgumentTypeError(f"{where}: region[{axis}]: expected a slice with an int "
                                    f"step, found {r!r}")
        start, stop, step = r.indices(n)
        if step < 1:
            raise ArgumentError(f"{where}: region[{axis}]: expected a slice with a positive "
                                f"step, found {r!r}")
        count = len(range(start, stop, step))
        starts.append(start)
        slices.append(slice(start, start + count * step if step == 1 or not count
                            else start + (count - 1) * step + 1, step))
    return tuple(starts), tuple(slices)


def region_extent(slices: Sequence[slice]) -> tuple[int, ...]:
    """How many elements each slice of :func:`region_offset` selects."""
    return tuple(len(range(s.start, s.stop, s.step)) for s in slices)


def region_edges(edges: list[list[int]], slices: Sequence[slice]) -> list[list[int]]:
    """The stored-object boundaries of ``edges`` (positions in the array) as positions in the
    region ``slices`` selects (0 to its extent): a boundary between two selected elements is
    a boundary of the region, so blocks cut there write no object two blocks share."""
    out = []
    for e, s, n in zip(edges, slices, region_extent(slices)):
        inside = {-(-(b - s.start) // s.step) for b in e if s.start < b < s.start + n * s.step}
        out.append(sorted({0, n} | {k for k in inside if 0 < k < n}))
    return out


_WHOLE = "a block size of at least 1, -1 or None (the whole axis), 'auto' or a byte size"


def check_chunks(chunks: Any, shape: tuple[int, ...], where: str) -> None:
    """Refuse a ``chunks`` argument of a dask array reading an array of ``shape`` that
    ``dask.array.from_array`` would refuse with a message saying nothing of the argument (or
    silently ignore: a dict naming an axis the array does not have): an ArgumentError (an
    ArgumentTypeError for a value of the wrong kind) naming ``chunks``, what is wrong and what
    is expected. Text is ``"auto"`` or a byte size (``"100MiB"``), as dask reads it."""
    head = f"{where}: chunks={chunks!r}"
    ndim = len(shape)
    if chunks is None:
        return
    if isinstance(chunks, str):
        _check_text(chunks, head)
        return
    if isinstance(chunks, dict):
        for axis in chunks:
            if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) \
                    or not 0 <= axis < ndim:
                axes = f"axes 0 to {ndim - 1}" if ndim else "no axes"
                raise ArgumentError(f"{head}: names axis {axis!r}, but the array of shape "
                                    f"{shape} has {axes}")
        for axis, entry in chunks.items():
            _check_axis(entry, int(axis), shape[int(axis)], head)
        return
    if isinstance(chunks, (tuple, list)):
        if len(chunks) != ndim:
            raise ArgumentError(f"{head}: expected {ndim} entries, one per axis of the array of "
                                f"shape {shape}, found {len(chunks)}")
        for axis, (entry, n) in enumerate(zip(chunks, shape)):
            _check_axis(entry, axis, n, head)
        return
    if _is_int(chunks):
        for axis, n in enumerate(shape):
            _check_size(chunks, n, f"{head}: axis {axis}")
        return
    raise ArgumentTypeError(f"{head}: expected an int, a tuple of one entry per axis, a dict of "
                            f"axis -> entry, 'auto' or a byte size such as '100MiB', found "
                            f"{type(chunks).__name__}")


def least_blocks(chunks: Any, shape: tuple[int, ...]) -> int:
    """The fewest blocks ``chunks`` (as :func:`check_chunks` accepts it) can give an array of
    ``shape``, counted without listing them: the block sizes given as numbers count; an axis
    given as text (``"auto"``, a byte size) or none counts one block."""
    def count(entry: Any, n: int) -> int:
        if isinstance(entry, (tuple, list)):
            return max(len(entry), 1)
        if _is_int(entry) and entry > 0:
            return max(-(-n // int(entry)), 1)
        return 1

    if isinstance(chunks, dict):
        return math.prod(count(chunks.get(axis), n) for axis, n in enumerate(shape))
    if isinstance(chunks, (tuple, list)):
        return math.prod(count(e, n) for e, n in zip(chunks, shape))
    return math.prod(count(chunks, n) for n in shape)


def bounded_block(block: tuple[int, ...], shape: tuple[int, ...],
                  most: int | None = None) -> tuple[int, ...]:
    """``block`` (the shape of one stored object, or whole objects) doubled along the axis of
    most blocks, again and again, until an array of ``shape`` has at most ``most`` blocks of
    it: whole objects still, and as many blocks as may be made (see :data:`MAX_BLOCKS`)."""
    most = MAX_BLOCKS if most is None else most
    out = [max(int(b), 1) for b in block]

    def per_axis(axis: int) -> int:
        return max(-(-shape[axis] // out[axis]), 1)

    while out and math.prod(per_axis(a) for a in range(len(out))) > most:
        axis = max(range(len(out)), key=per_axis)
        out[axis] *= 2
    return tuple(out)


def check_blocks(n: int, where: str) -> None:
    """Refuse a dask array of ``n`` blocks, more than :data:`MAX_BLOCKS`, with a
    SelectionSizeError saying why."""
    if n > MAX_BLOCKS:
        raise SelectionSizeError(f"{where}: the dask array would have {n} blocks; at most "
                                 f"{MAX_BLOCKS} are made, since dask lists every block whenever "
                                 f"it computes from the array: ask for larger blocks (chunks=), "
                                 f"or read a part of the array")


def _check_text(text: str, where: str) -> None:
    """Text dask takes for a block size: ``"auto"`` or a byte size such as ``"100MiB"``."""
    from dask.utils import parse_bytes

    if text == "auto":
        return
    try:
        parse_bytes(text)
    except (ValueError, TypeError, KeyError, IndexError):
        raise ArgumentError(f"{where}: expected 'auto' or a byte size such as '100MiB', found "
                            f"{text!r}") from None


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _check_axis(entry: Any, axis: int, n: int, head: str) -> None:
    """One axis's entry: a block size (or None, -1, text), or the tuple of its block sizes."""
    where = f"{head}: axis {axis}"
    if entry is None:
        return
    if isinstance(entry, str):
        _check_text(entry, where)
        return
    if isinstance(entry, (tuple, list)):
        if not all(_is_int(c) and c >= 0 for c in entry):
            raise ArgumentError(f"{where}: expected block sizes of at least 0, found "
                                f"{entry!r}")
        if sum(entry) != n:
            raise ArgumentError(f"{where}: block sizes {entry!r} add up to {sum(entry)}, but the "
                                f"axis has {n} elements")
        return
    if not _is_int(entry):
        raise ArgumentTypeError(f"{where}: expected {_WHOLE}, or a tuple of block sizes, found "
                                f"{type(entry).__name__} {entry!r}")
    _check_size(entry, n, where)


def _check_size(size: Any, n: int, where: str) -> None:
    if size >= 1 or size == -1 or (size == 0 and n == 0):
        return
    raise ArgumentError(f"{where}: expected {_WHOLE}, found {size!r}")
