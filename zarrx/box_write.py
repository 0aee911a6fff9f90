"""Box writes: a selection that is one box of cells, written through the chunk source's box
writer, or shard by shard for the shards it covers whole.

When every chunk is raw and stored as an object of its own, and the store offers a writer
(``LocalStore``'s is a Cython kernel), each chunk the box covers whole is gathered from the
value and written with no Python object per chunk, the threads each taking a range of chunks
without the GIL. Chunks the writer leaves (covered in part, all fill, or an error to word) go
through :func:`zarrx.chunk_write.write_from`, which merges, deletes or reports them.
"""
from __future__ import annotations

import itertools
from math import prod
from typing import Any

import numpy as np

from zarrx import _behind, _pool, shard_box
from zarrx.box_read import BOX_TASK_BYTES
from zarrx.chunk_io import ArrayIO, box_scratch, check_count
from zarrx.chunk_write import _batches, encode_views, gather_size, write_from
from zarrx.errors import StoreError

__all__ = ["write_box"]

#: a box over fewer chunks than this, covering no shard whole, goes to the general path (a
#: projection for each of a few chunks costs less than working out the shards' parts)
FEW = 4


def write_box(io: ArrayIO, plan: Any, value: np.ndarray) -> bool:
    """Write ``value`` (broadcast to the selection's shape, of the array's dtype) into the box
    of ``plan`` (a :class:`~zarrx.indexing.SelectionPlan`) through the chunk source's box
    writer. Chunks it leaves go through :func:`write_from`. False, having written nothing,
    when the array, the selection, the value or the store do not allow it."""
    if io.units_per_object > 1:
        return _write_shards(io, plan, value)
    box = plan.box
    if box is None or not io.box_ok or value.dtype != io.dtype:
        return False
    chunk = io.chunk_shape
    if any(b // c <= -(-a // c) for (a, b), c in zip(box, chunk)):
        return False                # no chunk is covered whole: all of it is the general path's
    fill = None if io.write_empty_chunks else io.fill_bytes
    if fill is not None and io.fill_is_nan:
        return False                # any NaN is fill there, whatever its bits: the general path
    writer = io.source.box_writer()
    if writer is None:
        return False
    check_count(io, plan.nchunks)
    start = tuple([a for a, _ in box])
    src = value.reshape([b - a for a, b in box])     # only axes of one cell differ: a view
    n = plan.nchunks
    writer.prepare([a // c for a, c in zip(start, chunk)],
                   [(b - 1) // c - a // c + 1 for (a, b), c in zip(box, chunk)])
    per_task = max(1, BOX_TASK_BYTES // max(1, io.plan(chunk).nbytes))
    left = _pool.run_ranges(
        lambda lo, hi: writer(src, start, chunk, fill, box_scratch(io, plan, lo), lo, hi),
        n, per_task)
    if left:
        chunks = plan.chunks
        write_from(io, [chunks[i] for i in left], value, flat=plan.flat)
    return True


def _write_shards(io: ArrayIO, plan: Any, value: np.ndarray) -> bool:
    """The sharded form of :func:`write_box`: every shard the box covers whole is committed
    whole, its raw inner chunks assembled in place, or its small compressed ones gathered and
    encoded together (as :func:`write_from` encodes them, with no Python call per chunk); the
    shards it covers in part, when their chunks are small enough to be encoded together,
    have the chunks it covers whole encoded so too and the others merged with what is stored
    (:func:`zarrx.shard_box.in_part`); the rest goes through :func:`write_from`. False, having
    written nothing, when no shard is written so or the array or the store do not allow it."""
    box = plan.region
    if box is None or value.dtype != io.dtype:
        return False
    nbytes = gather_size(io, False)
    if nbytes is None and not io.regular:
        return False
    chunk, ratio = io.chunk_shape, io.object_ratio
    shard = [c * r for c, r in zip(chunk, ratio)]
    first = [-(-a // s) for (a, _), s in zip(box, shard)]      # shards inside the box
    stop = [b // s for (_, b), s in zip(box, shard)]
    covers = all(f < e for f, e in zip(first, stop))         # a shard at least
    if not covers and plan.nchunks < FEW:
        return False
    # small chunks of a regular grid: encoded together (see zarrx.chunk_write._batches)
    batched = _batches(io, False, value)
    # chunks a codec compresses (no fixed size to encode them in place): each shard's chunks
    # gathered and encoded together, the shard packed from their bytes
    encoded = nbytes is None and batched
    if nbytes is None and not encoded:
        return False
    in_part = batched and shard_box.ENABLED
    if not covers and not in_part:
        return False
    check_count(io, plan.nchunks)
    if in_part:                                         # every shard the box touches
        objs = list(itertools.product(*[range(a // s, -(-b // s))
                                        for (a, b), s in zip(box, shard)]))
        whole = [all(f <= o < e for o, f, e in zip(obj, first, stop)) for obj in objs]
        axes = shard_box.Axes(io, box)                  # made once for every shard in part
    else:
        objs = list(itertools.product(*[range(f, e) for f, e in zip(first, stop)]))
        whole = [True] * len(objs)
        axes = None
    fill = None if io.write_empty_chunks else io.fill_bytes
    start = [a for a, _ in box]
    src = value.reshape([b - a for a, b in box])         # only axes of one cell differ: a view
    within: list = []
    offsets = None
    if any(whole):
        # made once for every shard covered whole: each inner chunk's cells within its
        # shard's cells, and its coordinates less the shard's first chunk's (no Python call
        # per chunk below)
        inner = list(itertools.product(*[range(r) for r in ratio]))
        within = list(itertools.product(*[[slice(o * c, o * c + c) for o in range(r)]
                                          for r, c in zip(ratio, chunk)]))
        offsets = np.array(inner, dtype=np.int64).reshape(len(inner), len(ratio))
    enc = io.plan(chunk)
    done = [False] * len(objs)
    parallel = len(objs) == 1

    def unused(j: int, old: Any) -> Any:                # every chunk's bytes are given
        raise StoreError("a whole shard write asked for an old chunk")

    def assemble(i: int) -> tuple | None:
        """The commit of shard ``objs[i]`` assembled (in a slab, or its chunks encoded), or
        None when it is the general path's or was committed here."""
        obj = objs[i]
        if not whole[i]:
            got = shard_box.in_part(io, src, box, obj, fill, parallel, axes)
            if got is None:
                return None                             # a chunk's error, to locate
            made = i, obj, got[0], None, got[1]
            if got[2]:
                commit(made)                # merged with what is stored on this thread
                return None
            return made
        base = [o * r for o, r in zip(obj, ratio)]
        cells = src[tuple([slice(b * c - a, b * c - a + s)
                           for b, c, a, s in zip(base, chunk, start, shard)])]
        parts = [cells[sel] for sel in within]
        coords = list(map(tuple, (np.array(base, dtype=np.int64) + offsets).tolist()))
        if encoded:                                     # None: a chunk's error, to locate
            made = _encode_parts(io, parts, fill, parallel)
            return None if made is None else (i, obj, list(zip(coords, made)), None, unused)
        slab = io.source.slab(obj, nbytes)
        if slab is None:
            return None                                 # no slab: the general path's
        dsts = slab.views(coords)
        # the shard's chunks gathered in one GIL-free section (see zarrx._gather.gather_many)
        if any(enc.encode_many(parts, dsts, fill=fill)):
            return None                                 # a chunk of fill: the general path's
        return i, obj, list(zip(coords, dsts)), slab, unused

    def commit(made: tuple) -> None:
        i, obj, items, slab, finish = made
        io.source.commit(obj, items, finish, slab)
        done[i] = True

    if _behind.enabled(io.source.objects.store, len(objs), io.object_nbytes):
        _behind.run(assemble, commit, len(objs))     # stored on an I/O thread meanwhile
    else:
        def one(i: int) -> None:
            made = assemble(i)
            if made is not None:
                commit(made)
        _pool.run_shared(one, len(objs))
    touched = prod(-(-b // s) - a // s for (a, b), s in zip(box, shard))
    if touched > len(objs) or not all(done):
        kept = {o for o, d in zip(objs, done) if d}
        shard_of = map(tuple, (plan.chunks.coords() // np.array(ratio, dtype=np.int64)).tolist())
        rest = list(itertools.compress(plan.chunks, [o not in kept for o in shard_of]))
        if rest:
            write_from(io, rest, value, flat=plan.flat)
    return True


def _encode_parts(io: ArrayIO, parts: list[np.ndarray], fill: bytes | None,
                  parallel: bool) -> list | None:
    """The new bytes (None: all fill) of a shard's chunks ``parts``, encoded together (split
    among the threads when ``parallel``), as the general path encodes them."""
    if not parallel or len(parts) < 2:
        return encode_views(io, parts, fill)
    made = _pool.run_batches(lambda ps: encode_views(io, ps, fill), parts, min_batch=2)
    return None if None in made else [v for part in made for v in part]
