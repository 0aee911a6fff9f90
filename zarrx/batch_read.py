"""Batch reads: a box of cells of an array of small chunks, each stored as an object of its
own, read a slab of chunks at a time with no Python call per chunk; other outer selections
(slices of any step, integers, index arrays) and coordinate and mask selections the same way,
their picked cells (points) gathered per slab.

The general read path (:func:`zarrx.chunk_read.read_into`) makes a projection, a decode call
and a copy per chunk: 16 to 40 Python calls for a chunk of 4 KiB. Here the chunks of a slab (a
box of chunks of at most ``SLAB_BYTES`` decoded) are fetched with one store call by their
coordinates (:meth:`~zarrx.store.chunks.ChunkSource.get_chunk_array`, keys made column by
column), joined into one buffer, decoded by :func:`~zarrx.codecs.plan_many.decode_many` (one
call per codec stage where the codecs allow) and copied into the output with one numpy
assignment (:func:`~zarrx.shard_read.decode_slab`, shared with shard reads). Missing chunks
are filled; a chunk that does not decode raises the error reading it alone raises, located at
its key, the first such chunk in C order. With threads, the slabs (about ``WINDOW_BYTES``
decoded each then) are shared by the pool's threads. What a read holds above its output is, per
thread, a slab's stored bytes twice (as fetched, and joined) and its decoded chunks. A slab
holds at most ``SLAB_STORED_BYTES`` of stored chunks as long as each is within its stored-size
limit (longer ones are refused unread): chunks whose codecs allow much more stored than decoded
(gzip's optional header fields: about 74 KB more for any chunk) come fewer to a slab.
"""
from __future__ import annotations

import itertools
import threading
from itertools import repeat
from math import prod
from operator import is_not
from typing import Any

import numpy as np

from zarrx import _pool, chunk_io, shard_read
from zarrx.chunk_io import WINDOW_BYTES, ArrayIO, check_count
from zarrx.shard_read import SLAB_BYTES, decode_picked, decode_points, decode_slab, run_in_order

__all__ = ["read_batches", "BATCH_CHUNK_BYTES", "BATCH_CHUNKS", "MIN_CHUNKS",
           "SLAB_STORED_BYTES"]

#: chunks of at most this many decoded bytes are read here (larger ones cost little per chunk
#: on the general path, which decodes a chunk the box covers straight into the output when it
#: can)
BATCH_CHUNK_BYTES = 1 << 16
#: most chunks of a slab (and at most ``chunk_io.MAX_WINDOW``): each costs a few hundred bytes
#: of Python objects while it is fetched (its key, the request and the bytes fetched)
BATCH_CHUNKS = 4096
#: reads of fewer chunks take the general path (a batch costs a few dozen calls to set up)
MIN_CHUNKS = 4
#: most stored bytes a slab's chunks may hold by their stored-size limit (each chunk counts its
#: limit: the bytes are not known before they are fetched); a slab of any size holds one chunk
SLAB_STORED_BYTES = 1 << 25

_NO_ARENA = object()


def _eligible(io: ArrayIO) -> bool:
    """Whether the array's reads may take this path: a regular grid of small chunks of
    fixed-size items, each stored as an object of its own, of at most 32 dimensions (a slab's
    cells take two axes per dimension, numpy at most 64)."""
    chunk = io.chunk_shape
    if io.units_per_object != 1 or not io.regular or not chunk or io.object_chunks \
            or 2 * len(chunk) > 64 or io.fill_bytes is None:
        return False
    return io.plan(chunk).nbytes <= BATCH_CHUNK_BYTES


def read_batches(io: ArrayIO, plan: Any, out: np.ndarray) -> bool:
    """Read ``plan`` (a :class:`~zarrx.indexing.SelectionPlan`) into ``out`` a slab of chunks
    at a time, when its selection is a box or another outer selection (``plan.picks``) of at
    least ``MIN_CHUNKS`` chunks and the array allows it (see :func:`_eligible`). False, having
    read nothing, otherwise."""
    box = plan.region
    if (box is None and plan.picks is None and plan.points is None) \
            or plan.nchunks < MIN_CHUNKS or out.dtype != io.dtype \
            or not (out.flags.c_contiguous and out.flags.writeable) or not _eligible(io):
        return False
    check_count(io, plan.nchunks)
    if plan.points is not None:
        _read_points(io, plan.points, plan.nchunks, out)
        return True
    if box is None:
        _read_picked(io, plan.picks, out)
        return True
    target = out.reshape([b - a for a, b in box])     # only axes of one cell differ: a view
    chunk = io.chunk_shape
    lo = [a // c for (a, _), c in zip(box, chunk)]   # type: ignore[arg-type]
    counts = [(b - 1) // c + 1 - x for (_, b), c, x in zip(box, chunk, lo)]  # type: ignore
    parallel = _pool.threads() > 1 and not io.gil_bound
    nbytes = io.plan(chunk).nbytes                    # type: ignore[arg-type]
    slabs = _slabs(lo, counts, nbytes, min(SLAB_BYTES, WINDOW_BYTES) if parallel else SLAB_BYTES,
                   _most(io))
    arenas = threading.local()      # a read buffer per thread, reused by its slabs

    def one(i: int) -> None:
        first, n = slabs[i]
        arena = getattr(arenas, "arena", _NO_ARENA)
        if arena is _NO_ARENA:
            arena = arenas.arena = io.source.new_arena()
        got = _fetch(io, [np.arange(f, f + m, dtype=np.int64) for f, m in zip(first, n)], arena)
        decode_slab(io, got, first, n, 0, box, target)

    run_in_order(len(slabs), one, parallel and len(slabs) > 1)
    return True


def _most(io: ArrayIO) -> int:
    """The most chunks of a slab: ``BATCH_CHUNKS`` (and ``chunk_io.MAX_WINDOW``), and as many
    as ``SLAB_STORED_BYTES`` holds at the chunks' stored-size limit, but at least one."""
    limit = io.plan(io.chunk_shape).stored_limit        # type: ignore[arg-type]
    return max(1, min(BATCH_CHUNKS, chunk_io.MAX_WINDOW, SLAB_STORED_BYTES // max(1, limit)))


def _slabs(lo: list[int], counts: list[int], nbytes: int, limit: int, most: int
           ) -> list[tuple[list[int], list[int]]]:
    """The box of ``counts`` chunks from ``lo`` cut into boxes of at most ``limit`` decoded
    bytes (chunks of ``nbytes``) and ``most`` chunks, but at least one chunk, in C
    order: ``(first, counts)`` of each. Each spans whole rows of chunks along the trailing
    axes that fit, and a run along the axis before them."""
    ndim = len(counts)
    d = 0
    while d < ndim - 1:
        inner = prod(counts[d + 1:])
        if inner * nbytes <= limit and inner <= most:
            break
        d += 1
    inner = prod(counts[d + 1:])
    step = max(1, min(limit // max(1, inner * nbytes), most // inner))
    out = []
    for head in itertools.product(*[range(n) for n in counts[:d]]):
        for s in range(0, counts[d], step):
            first = [x + h for x, h in zip(lo, head)] + [lo[d] + s] + lo[d + 1:]
            out.append((first, [1] * d + [min(step, counts[d] - s)] + counts[d + 1:]))
    return out


def _fetch(io: ArrayIO, axes: list[np.ndarray], arena: object | None
           ) -> tuple[Any, np.ndarray, np.ndarray] | None:
    """The stored chunks of the outer product of ``axes`` (chunk numbers per axis), fetched
    with one store call, as ``(buffer, starts, lengths)`` over them in C order (a start of -1
    for a missing chunk); None when none is stored."""
    coords = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, len(axes))
    return _fetch_at(io, coords, arena)


def _fetch_at(io: ArrayIO, coords: np.ndarray, arena: object | None
              ) -> tuple[Any, np.ndarray, np.ndarray] | None:
    """:func:`_fetch` of the chunks at ``coords`` (an ``(n, ndim)`` int64 array), in order."""
    got = io.source.get_chunk_array(coords, arena)
    held = [d for d in got if d is not None]
    if not held:
        return None
    k = len(got)
    lengths = np.fromiter(map(len, held), dtype=np.int64, count=len(held))
    buf = b"".join(held)
    if int(lengths.sum()) != len(buf):      # buffers of items wider than a byte
        lengths = np.array([memoryview(d).nbytes for d in held], dtype=np.int64)
    starts = np.full(k, -1, dtype=np.int64)
    sizes = np.zeros(k, dtype=np.int64)
    have = np.fromiter(map(is_not, got, repeat(None)), dtype=bool, count=k)
    sizes[have] = lengths
    starts[have] = np.cumsum(lengths) - lengths
    return buf, starts, sizes


def _read_points(io: ArrayIO, points: tuple, nchunks: int, out: np.ndarray) -> None:
    """Read a coordinate or mask selection (``points``, see
    :attr:`~zarrx.selection_plan.SelectionPlan.points`, touching ``nchunks`` chunks) into
    ``out`` (its cells in C order): the chunks holding a point, a slab of them at a time in C
    order (at most ``shard_read.SLAB_POINTS`` points, unless one chunk holds more), each
    slab's points gathered from its decoded chunks with one numpy indexing."""
    chunk = io.chunk_shape
    nbytes = io.plan(chunk).nbytes                          # type: ignore[arg-type]
    parallel = _pool.threads() > 1 and not io.gil_bound
    limit = min(SLAB_BYTES, WINDOW_BYTES) if parallel else SLAB_BYTES
    step = max(1, min(limit // max(1, nbytes), _most(io)))    # _most: stored bytes too
    bounds = points[2]
    runs = []                   # (first, end) of each slab's chunks, in the plan's groups
    a = 0
    while a < nchunks:
        b = int(np.searchsorted(bounds, bounds[a] + shard_read.SLAB_POINTS, side="right")) - 1
        b = min(max(b, a + 1), a + step, nchunks)
        runs.append((a, b))
        a = b
    flat = out.reshape(-1)
    arenas = threading.local()

    def one(i: int) -> None:
        arena = getattr(arenas, "arena", _NO_ARENA)
        if arena is _NO_ARENA:
            arena = arenas.arena = io.source.new_arena()
        _decode_points(io, points, *runs[i], arena, flat)

    run_in_order(len(runs), one, parallel and len(runs) > 1)


def _decode_points(io: ArrayIO, points: tuple, g0: int, g1: int, arena: object | None,
                   flat: np.ndarray) -> None:
    """Fetch and decode the chunks ``g0`` to ``g1`` of those holding a point (C order), and
    copy their points into ``flat`` (the output's cells in C order)."""
    cc = np.stack(np.unravel_index(points[3][g0:g1], points[4]), axis=1).astype(np.int64,
                                                                               copy=False)
    decode_points(io, points, np.arange(g0, g1, dtype=np.int64), cc, _fetch_at(io, cc, arena),
                  flat)


def _read_picked(io: ArrayIO, picks: tuple, out: np.ndarray) -> None:
    """Read an outer selection that is not a box (slices of any step, integers, index arrays:
    ``picks``, see :class:`~zarrx.selection_plan.SelectionPlan`) into ``out``: the chunks
    holding a picked cell (those a step skips are not fetched), a slab of them at a time in C
    order of their coordinates, each slab decoded as a box's and its picked cells gathered with
    one numpy indexing."""
    chunk = io.chunk_shape
    pos = [p.astype(np.int64, copy=False) if isinstance(p, np.ndarray)
           else p[0] + p[2] * np.arange(p[1], dtype=np.int64) for p in picks]
    kpos = [p // c for p, c in zip(pos, chunk)]            # type: ignore[operator]
    ks = [np.unique(k) for k in kpos]                      # per axis, the chunks touched
    target = out.reshape([len(p) for p in pos])            # a view: no new axis, no integer
    parallel = _pool.threads() > 1 and not io.gil_bound
    nbytes = io.plan(chunk).nbytes                          # type: ignore[arg-type]
    slabs = _slabs([0] * len(ks), [len(k) for k in ks], nbytes,
                   min(SLAB_BYTES, WINDOW_BYTES) if parallel else SLAB_BYTES, _most(io))
    arenas = threading.local()

    def one(i: int) -> None:
        first, n = slabs[i]
        sk = [k[f:f + m] for k, f, m in zip(ks, first, n)]
        arena = getattr(arenas, "arena", _NO_ARENA)
        if arena is _NO_ARENA:
            arena = arenas.arena = io.source.new_arena()
        decode_picked(io, _fetch(io, sk, arena), sk, pos, kpos, target)

    run_in_order(len(slabs), one, parallel and len(slabs) > 1)
