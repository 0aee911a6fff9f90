"""Shard reads: a box of cells of a sharded array of small inner chunks, read shard by shard
with the inner chunks described by arrays.

The general read path (:func:`zarrx.chunk_read.read_into`) makes Python objects for every
inner chunk (a projection, a request, the bytes fetched): about 1.3 KB each, 1.3 GiB for a
shard of 2**20 one-byte chunks. Here a shard's inner chunks in the box are numbered by an int64
array of slots; the shard's index gives their starts and lengths in one buffer
(:func:`~zarrx.store.shard_slots.read_slots`); and they are decoded a slab at a time (rows of
inner chunks along the first axis, at most ``SLAB_BYTES`` decoded) into one array
(:func:`~zarrx.codecs.plan_many.decode_many`), which is copied into the output with its chunk
axes interleaved. What a read holds above its output is the shard's stored bytes, its index
and a few int64 arrays over its inner chunks (about 40 bytes per inner chunk), plus a slab.
"""
from __future__ import annotations

import itertools
import threading
from math import prod
from typing import Any

import numpy as np

from zarrx import _pool
from zarrx.chunk_io import ArrayIO, _located, check_count
from zarrx.store.shard_slots import read_slots

__all__ = ["read_shards", "COMPACT_CHUNK_BYTES", "SLAB_BYTES", "SLAB_CHUNKS"]

#: inner chunks of at most this many decoded bytes are read shard by shard here (larger ones
#: cost little per chunk on the general path, which decodes them straight into the output)
COMPACT_CHUNK_BYTES = 1 << 14
#: most decoded bytes, and most inner chunks, of a slab of inner chunks (at least a row of them)
SLAB_BYTES = 1 << 22
SLAB_CHUNKS = 1 << 16


def _eligible(io: ArrayIO) -> bool:
    """Whether the array's reads may take this path: a regular grid of one level of shards
    over small inner chunks of fixed-size items, in the array's axis order, of at most 32
    dimensions (a slab's cells take two axes per dimension, numpy at most 64)."""
    src = io.source
    if io.units_per_object <= 1 or not io.regular or not io.chunk_shape or io.object_chunks \
            or 2 * len(io.chunk_shape) > 64 \
            or io.fill_bytes is None or len(getattr(src, "levels", ())) != 1 \
            or getattr(src, "_perm", 0) is not None:
        return False
    return io.plan(io.chunk_shape).nbytes <= COMPACT_CHUNK_BYTES   # type: ignore[arg-type]


def read_shards(io: ArrayIO, plan: Any, out: np.ndarray) -> bool:
    """Read ``plan`` (a :class:`~zarrx.indexing.SelectionPlan`) into ``out`` shard by shard,
    when its selection is a box and the array allows it (see :func:`_eligible`). False, having
    read nothing, otherwise."""
    box = plan.region
    if box is None or out.dtype != io.dtype or not (out.flags.c_contiguous and
                                                    out.flags.writeable) or not _eligible(io):
        return False
    check_count(io, plan.nchunks)
    target = out.reshape([b - a for a, b in box])     # only axes of one cell differ: a view
    chunk, ratio = io.chunk_shape, io.object_ratio
    span = [c * r for c, r in zip(chunk, ratio)]      # type: ignore[arg-type]
    objs = list(itertools.product(*[range(a // s, (b - 1) // s + 1)
                                    for (a, b), s in zip(box, span)]))

    failed: list = [len(objs), None]           # the first shard failing, and its error
    lock = threading.Lock()

    def one(i: int) -> None:
        # with threads, shards after one that failed are skipped and those before it finish,
        # so that the error raised is always that of the first shard failing, as in order
        if i < failed[0]:
            try:
                _read_shard(io, objs[i], box, target)
            except BaseException as exc:
                with lock:
                    if i < failed[0]:
                        failed[:] = [i, exc]

    if len(objs) > 1 and _pool.threads() > 1 and not io.gil_bound:
        _pool.run_shared(one, len(objs))
    else:
        for i in range(len(objs)):
            one(i)
            if failed[1] is not None:
                break
    if failed[1] is not None:
        raise failed[1]
    return True


def _read_shard(io: ArrayIO, obj: tuple[int, ...], box: tuple, target: np.ndarray) -> None:
    """The cells of the box in the shard ``obj``, into ``target`` (the box's cells)."""
    chunk, ratio = io.chunk_shape, io.object_ratio
    # the inner chunks of this shard the box touches, per axis: [lo, hi) in array chunks
    lo = [max(o * r, a // c) for o, r, (a, _), c in zip(obj, ratio, box, chunk)]
    hi = [min((o + 1) * r, (b - 1) // c + 1) for o, r, (_, b), c in zip(obj, ratio, box, chunk)]
    counts = [h - l for l, h in zip(lo, hi)]
    slots = np.zeros(counts, dtype=np.int64)          # C order over the shard's slots
    stride = 1
    for d in range(len(chunk) - 1, -1, -1):
        shape = [1] * len(chunk)
        shape[d] = counts[d]
        slots += (np.arange(lo[d] - obj[d] * ratio[d], hi[d] - obj[d] * ratio[d],
                            dtype=np.int64) * stride).reshape(shape)
        stride *= ratio[d]
    got = read_slots(io.source, obj, slots.reshape(-1))
    del slots
    row = prod(counts[1:])
    rows = max(1, min(SLAB_BYTES // max(1, row * io.plan(chunk).nbytes), SLAB_CHUNKS // row))
    for r0 in range(0, counts[0], rows):
        r1 = min(counts[0], r0 + rows)
        _slab(io, got, [lo[0] + r0, *lo[1:]], [r1 - r0, *counts[1:]], r0 * row, box, target)


def _slab(io: ArrayIO, got: Any, first: list[int], counts: list[int], at: int, box: tuple,
          target: np.ndarray) -> None:
    """Decode the box of inner chunks from ``first`` (array chunks) of ``counts`` chunks, the
    ``at``-th onwards of what :func:`read_slots` gave (``got``; None: the shard is not stored),
    and copy their cells inside the box into ``target``."""
    chunk = io.chunk_shape
    ndim = len(chunk)
    # the cells of the slab's chunks, and the part of them in the box, per axis
    c0 = [f * c for f, c in zip(first, chunk)]
    a = [max(x, b0) for x, (b0, _) in zip(c0, box)]
    e = [min(x + n * c, b1) for x, n, c, (_, b1) in zip(c0, counts, chunk, box)]
    dst = target[tuple(slice(x - b0, y - b0) for x, y, (b0, _) in zip(a, e, box))]
    if got is None:
        dst[...] = io.fill
        return
    k = prod(counts)
    buf, starts, lengths = got[0], got[1][at:at + k], got[2][at:at + k]
    dec = np.empty((k, *chunk), dtype=io.dtype)
    plan = io.plan(chunk)

    def located(i: int, exc: BaseException) -> Any:
        coords = np.unravel_index(i, counts)
        return _located(exc, io, tuple(int(f + x) for f, x in zip(first, coords)), chunk)

    from zarrx.codecs.plan_many import decode_many    # codecs load on first use
    decode_many(plan, buf, starts, lengths, dec, located)
    missing = starts < 0
    if missing.any():
        dec[missing] = io.fill
    # (n0, ..., c0, ...) -> (n0, c0, n1, c1, ...): the slab's cells
    cells = dec.reshape(*counts, *chunk).transpose(
        [x for d in range(ndim) for x in (d, ndim + d)])
    split = [x for n, c in zip(counts, chunk) for x in (n, c)]
    if a == c0 and all(y == x + n * c for y, x, n, c in zip(e, c0, counts, chunk)):
        np.reshape(dst, split, copy=False)[...] = cells    # a view: each axis split in two
        return
    whole = np.empty([n * c for n, c in zip(counts, chunk)], dtype=io.dtype)
    whole.reshape(split)[...] = cells
    dst[...] = whole[tuple(slice(x - y, z - y) for x, z, y in zip(a, e, c0))]
