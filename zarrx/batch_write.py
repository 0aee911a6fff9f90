"""Batch writes: a box of cells of an array of small chunks, each stored as an object of its
own, written a slab of chunks at a time with no Python call per chunk (the mirror of
:mod:`zarrx.batch_read`).

The general write path (:func:`zarrx.chunk_write.write_from`) makes a projection per chunk
(about 6 Python calls for a chunk of 4 KiB). Here the chunks the box covers whole are cut into
slabs (boxes of chunks of at most ``SLAB_BYTES`` and ``BATCH_CHUNKS`` chunks, in C order);
each slab's cells are copied into the rows of one buffer (one chunk a row, C order) with one
numpy assignment, the rows all of the fill value found by one comparison, each codec stage
encodes all the rows in one call (:func:`~zarrx.codecs.plan_many.encode_rows`) and the chunks
are stored together (:meth:`~zarrx.store.chunks.KeyedChunks.store_whole`: each under its
object lock, one ``set_many`` and one ``delete_many``). So what is stored is what the general
path stores: the same bytes, chunks all fill deleted unless ``write_empty_chunks``.

Chunks the box covers in part, or that reach past the array's end, go through the general
path afterwards. A slab whose encoding fails is written by the general path too, which raises
the error about its first failing chunk, located at its key (the slabs before it are stored).
Memory: a slab's cells twice (its rows, and the encoded chunks) per thread.
"""
from __future__ import annotations

from math import prod
from typing import Any

import numpy as np

from zarrx import _pool, chunk_io
from zarrx._gather import is_all_rows
from zarrx.batch_read import BATCH_CHUNKS, MIN_CHUNKS, _slabs
from zarrx.chunk_io import WINDOW_BYTES, ArrayIO, check_count
from zarrx.chunk_write import _batches, write_from
from zarrx.errors import ZarrError
from zarrx.shard_read import SLAB_BYTES, run_in_order

__all__ = ["write_batches"]


def _eligible(io: ArrayIO, value: np.ndarray) -> bool:
    """Whether the array's box writes may take this path: small chunks of a regular grid of at
    most 32 dimensions, each stored as an object of its own, that the general path would
    encode a batch at a time too (see :func:`zarrx.chunk_write._batches`), unless the store
    writes raw chunks of a box with a kernel of its own (local files: see
    :func:`zarrx.box_write.write_box`)."""
    chunk = io.chunk_shape
    if io.units_per_object != 1 or not chunk or 2 * len(chunk) > 64 \
            or value.dtype != io.dtype or not _batches(io, False, value, laid_out=True):
        return False
    if getattr(io.source, "store_whole", None) is None:
        return False
    if io.box_ok:
        writer = io.source.box_writer()
        if writer is not None and getattr(writer, "kernel", False):
            return False
    return True


def write_batches(io: ArrayIO, plan: Any, value: np.ndarray) -> bool:
    """Write ``value`` (broadcast to the selection's shape, of the array's dtype) into the box
    of ``plan`` (a :class:`~zarrx.indexing.SelectionPlan`) a slab of chunks at a time, when
    the box covers at least ``MIN_CHUNKS`` chunks whole and the array allows it (see
    :func:`_eligible`); the chunks it covers in part go through
    :func:`~zarrx.chunk_write.write_from`. False, having written nothing, otherwise."""
    box = plan.box
    chunk = io.chunk_shape
    if box is None or plan.nchunks < MIN_CHUNKS or plan.flat or not io.regular or not chunk:
        return False
    size = io.meta.shape
    lo = [a // c for (a, _), c in zip(box, chunk)]                     # touched, per axis
    hi = [(b - 1) // c + 1 for (_, b), c in zip(box, chunk)]
    # whole: inside the box, and inside the array (a chunk reaching past its end is not)
    first = [-(-a // c) for (a, _), c in zip(box, chunk)]
    stop = [min(b, s) // c for (_, b), c, s in zip(box, chunk, size)]
    counts = [e - f for f, e in zip(first, stop)]
    if any(n <= 0 for n in counts) or prod(counts) < MIN_CHUNKS or not _eligible(io, value):
        return False
    check_count(io, plan.nchunks)
    src = value.reshape([b - a for a, b in box])       # only axes of one cell differ: a view
    start = [a for a, _ in box]
    enc = io.plan(chunk)
    raw_fill = None if io.write_empty_chunks else io.fill_bytes
    parallel = _pool.threads() > 1 and not io.gil_bound
    slabs = _slabs(first, counts, enc.nbytes,
                   min(SLAB_BYTES, WINDOW_BYTES) if parallel else SLAB_BYTES,
                   min(BATCH_CHUNKS, chunk_io.MAX_WINDOW))

    def one(i: int) -> None:
        f, n = slabs[i]
        if not _write_slab(io, enc, src, start, f, n, raw_fill):
            write_from(io, _projections(plan, lo, hi, f, n), value)

    run_in_order(len(slabs), one, parallel and len(slabs) > 1)
    touched = [e - s for s, e in zip(lo, hi)]
    if touched != counts:                               # the chunks covered in part
        inside = np.ones(touched, dtype=bool)
        for d, (s, f, n) in enumerate(zip(lo, first, counts)):
            axis = np.zeros(touched[d], dtype=bool)
            axis[f - s:f - s + n] = True
            inside &= axis.reshape([-1 if k == d else 1 for k in range(len(touched))])
        chunks = plan.chunks
        write_from(io, [chunks[j] for j in np.flatnonzero(~inside.reshape(-1)).tolist()],
                   value)
    return True


def _write_slab(io: ArrayIO, enc: Any, src: np.ndarray, start: list[int], first: list[int],
                n: list[int], raw_fill: bytes | None) -> bool:
    """Gather, encode and store the chunks of the slab ``first`` + ``n`` (chunks per axis),
    all covered by the box at ``start`` whose cells ``src`` holds. False, having stored
    nothing, when a chunk does not encode (the general path then words the error)."""
    chunk = io.chunk_shape
    ndim = len(chunk)
    k = prod(n)
    cells = src[tuple([slice(f * c - a, (f + m) * c - a)
                       for f, m, c, a in zip(first, n, chunk, start)])]
    try:        # reused by the thread's next slabs: encoding copies what it keeps
        dec = io.byte_scratch(k * enc.nbytes)[:k * enc.nbytes].view(io.dtype).reshape(
            *n, *chunk)
    except (MemoryError, ValueError):
        return False
    # (n0 c0, n1 c1, ...) -> (n0, n1, ..., c0, c1, ...): each chunk's cells a row, in C order
    split = [x for m, c in zip(n, chunk) for x in (m, c)]
    dec[...] = cells.reshape(split).transpose([*range(0, 2 * ndim, 2), *range(1, 2 * ndim, 2)])
    rows = dec.reshape(k, -1).view(np.uint8)
    skip = np.zeros(k, dtype=bool) if raw_fill is None else is_all_rows(rows, raw_fill)
    from zarrx.codecs.plan_many import encode_rows, stored_rows   # codecs load on first use
    try:
        # the chunks as the ``bytes`` codec makes them (the rows themselves unless filters,
        # transposes or the other byte order lay them out anew), then compressed together
        values = encode_rows(enc, stored_rows(enc, dec.reshape(k, *chunk)), False, skip)
    except (ZarrError, MemoryError):
        return False
    axes = [np.arange(f, f + m, dtype=np.int64) for f, m in zip(first, n)]
    coords = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(k, ndim)
    io.source.store_whole(coords, values)
    return True


def _projections(plan: Any, lo: list[int], hi: list[int], first: list[int],
                 n: list[int]) -> list:
    """The projections of ``plan`` (listing the chunks ``lo`` to ``hi`` per axis in C order)
    of the chunks of the slab ``first`` + ``n``, in C order."""
    touched = [e - s for s, e in zip(lo, hi)]
    axes = [np.arange(f - s, f - s + m) for f, s, m in zip(first, lo, n)]
    at = np.ravel_multi_index(np.meshgrid(*axes, indexing="ij"), touched).reshape(-1)
    chunks = plan.chunks
    return [chunks[j] for j in at.tolist()]
