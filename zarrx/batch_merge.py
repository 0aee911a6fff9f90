"""Batch merges: the chunks a write covers in part, of an array of small chunks each stored as
an object of its own, read, merged and stored a slab of chunks at a time.

The general write path (:func:`zarrx.chunk_write.write_from`) updates a chunk the write covers
in part on its own: a projection, a locked read, a decode, a merge, an encode and a
conditional write each (a few dozen Python calls per chunk). Here the chunks of a box
selection that it covers in part (those at its edges, and those reaching past the array's
end) and all the chunks of an outer selection of slices with steps of either sign
(``z[::2, :]``, ``z[::-2, :]``) and index arrays (``z.oindex[[9, 1, 5, 1], :]``) are cut into
slabs (boxes of chunks, as :mod:`zarrx.batch_read` cuts them), and each slab is updated as one.
A negative step is taken as the same cells ascending, the value read backwards along its axis;
an index array as its distinct positions ascending, each set by the last of the value's
positions naming it (numpy's assignment, and the general path, keep the last value written):

- the locks of all its chunks are taken at once (:func:`~zarrx.store.locks.with_objects_lock`;
  when another thread of the process holds one of them, the slab goes through the general
  path, chunk by chunk);
- the stored chunks it covers in part are read with one store call (with their generations on
  a store with conditional writes: :func:`~zarrx.store.update.read_versioned_many`) and
  decoded into the rows of one buffer (:func:`~zarrx.codecs.plan_many.decode_many`), missing
  ones and those the write covers whole set to the fill value;
- the rows are laid out as the slab's cells, the selected cells of the value assigned with
  one numpy assignment, and the cells laid back into rows;
- rows all of the fill value are found by one comparison, the others laid out as stored (each
  transposition, then the byte order, for all the rows at once; filters such as ``delta`` or
  ``fixedscaleoffset`` chunk by chunk: :func:`~zarrx.codecs.plan_many.stored_rows`) and
  encoded by each codec in one call (:func:`~zarrx.codecs.plan_many.encode_rows`), and the
  chunks stored together:
  conditionally on the generations read where the store writes conditionally
  (:func:`~zarrx.store.update.write_conditional_many`), a chunk another writer changed
  meanwhile then updated again by the general path, which reads, merges and retries.

So what is stored is what the general path stores: the same bytes, chunks all fill deleted
unless ``write_empty_chunks``, cells past the array's end kept from the stored chunk (or the
fill value for a chunk the write covers whole). A slab with a chunk that does not decode or
encode, or that is longer than its limit, goes through the general path, which raises the
error about its chunk. The chunks a box covers whole, inside the array, are written as before
(:func:`~zarrx.batch_write.write_batches`, :func:`~zarrx.box_write.write_box`).
Memory: a slab's cells three times (its rows, its cells laid out, the encoded chunks) per
thread, four times with transpositions or the other byte order.
"""
from __future__ import annotations

from math import prod
from typing import Any, Callable

import numpy as np

from zarrx import _pool, batch_write, box_write, chunk_io
from zarrx.batch_read import BATCH_CHUNKS, MIN_CHUNKS, _slabs
from zarrx._gather import is_all_rows
from zarrx.chunk_io import WINDOW_BYTES, ArrayIO, check_count
from zarrx.chunk_write import _sets_together, write_from
from zarrx.errors import ZarrError
from zarrx.shard_read import SLAB_BYTES, run_in_order
from zarrx.store._values import MIN_SIZE
from zarrx.store.base import ABSENT
from zarrx.store.locks import with_objects_lock
from zarrx.store.update import conditional, read_versioned_many, write_conditional_many

__all__ = ["write_merged", "merge_chunks", "eligible", "ENABLED"]

#: whether writes take this path (tests compare what it stores with the general path)
ENABLED = True


def eligible(io: ArrayIO, value: np.ndarray) -> bool:
    """Whether the array's partial writes may take this path: small chunks (under
    ``MIN_SIZE`` bytes) of fixed-size items of a regular grid of at most 32 dimensions, each
    stored as an object of its own, whose codecs ``encode_rows`` encodes (transpositions,
    other filters and either byte order laid out first by ``stored_rows``), a chunk all fill
    found by its bytes (or, for a NaN fill, by NaNs everywhere), on a store that answers at
    once."""
    chunk = io.chunk_shape
    if not ENABLED or io.units_per_object != 1 or not io.regular or not chunk \
            or 2 * len(chunk) > 64 or io.object_chunks or value.dtype != io.dtype \
            or io.dtype.kind == "b" or getattr(io.source, "store_whole", None) is None:
        return False
    if not io.write_empty_chunks and io.fill_bytes is None:
        return False
    if io.fill_is_nan and io.dtype.kind != "f":
        return False
    from zarrx.codecs.plan_many import encodes_laid_out     # codecs load on first use
    store = io.source.objects.store
    if store.latency_bound or not _sets_together(store):
        return False
    plan = io.plan(chunk)
    return plan.nbytes < MIN_SIZE and plan.mask is None and encodes_laid_out(plan)


def _picks(plan: Any) -> tuple[list[Any], list[bool]] | None:
    """Per array axis of a box plan or of an outer plan of slices, integers and index
    arrays: ``(start, count, step)`` of a positive step, or the positions of an index array
    (in the value's order), and whether the value runs backwards along it (a slice of a
    negative step, taken as the same cells in ascending order); None for other plans."""
    if plan.box is not None:
        return [(a, b - a, 1) for a, b in plan.box], [False] * len(plan.box)
    if plan.picks is None or plan.kind == "block":
        return None
    out: list[Any] = []
    flips = []
    for p in plan.picks:
        flip = False
        if isinstance(p, np.ndarray):
            if p.ndim != 1 or not len(p):
                return None
            out.append(p)
            flips.append(False)
            continue
        start, count, step = p
        if count <= 0 or step == 0:
            return None
        if count == 1:
            step = 1
        elif step < 0:                      # the same cells, from the lowest one up
            start, step, flip = start + step * (count - 1), -step, True
        out.append((int(start), int(count), int(step)))
        flips.append(flip)
    return out, flips


def write_merged(io: ArrayIO, plan: Any, value: np.ndarray) -> bool:
    """Write ``value`` (broadcast to the selection's shape, of the array's dtype, laid out as
    the plan's ``out_shape`` when an index array has several axes) into the cells of ``plan``
    (a :class:`~zarrx.indexing.SelectionPlan`: a box, or an outer selection of slices of any
    step, integers and index arrays, of one axis or several: ``z[rows2d, 1:9]``, whose
    positions the plan lists flattened) when at least ``MIN_CHUNKS`` of its chunks are
    covered in part and the array allows it (see :func:`eligible`): those a slab at a time,
    the chunks a box covers whole inside the array as before. False, having written nothing,
    otherwise."""
    if plan.flat or plan.nchunks < MIN_CHUNKS:
        return False
    picked = _picks(plan)
    if picked is None or not eligible(io, value):
        return False
    steps, flips = picked
    # before the per-axis chunk lists, which a selection of too many chunks could not hold
    check_count(io, plan.nchunks)
    chunk, size = io.chunk_shape, io.meta.shape
    axes = [_Axis(s, c, n) for s, c, n in zip(steps, chunk, size)]
    touched = [len(a.ks) for a in axes]
    # the chunks covered whole inside the array, per axis a run of ``ks`` (a box only)
    inner = [a.inner() for a in axes] if all(a.step == 1 for a in axes) else None
    if inner is not None and any(b <= a for a, b in inner):
        inner = None
    faces = _faces(touched, inner)
    if sum(prod(n) for _, n in faces) < MIN_CHUNKS:
        return False
    src = value.reshape([len(s) if isinstance(s, np.ndarray) else s[1] for s in steps])
    if any(flips):          # a negative step: the value read backwards along that axis
        src = src[tuple([slice(None, None, -1) if f else slice(None) for f in flips])]
    enc = io.plan(chunk)
    parallel = _pool.threads() > 1 and not io.gil_bound
    limit = min(SLAB_BYTES, WINDOW_BYTES) if parallel else SLAB_BYTES
    most = min(BATCH_CHUNKS, chunk_io.MAX_WINDOW)
    slabs = [s for f, n in faces for s in _slabs(f, n, enc.nbytes, limit, most)]

    def one(i: int) -> None:
        first, n = slabs[i]
        left = _merge_slab(io, enc, axes, first, n, src)
        if left is not None and len(left):      # by the general path: errors, conflicts
            grid = np.stack(np.meshgrid(*[np.arange(f, f + m) for f, m in zip(first, n)],
                                        indexing="ij"), axis=-1).reshape(-1, len(n))[left]
            at = np.ravel_multi_index(tuple(grid.T), touched).reshape(-1)
            chunks = plan.chunks
            write_from(io, [chunks[j] for j in at.tolist()], value)

    run_in_order(len(slabs), one, parallel and len(slabs) > 1)
    if inner is not None:
        _write_inner(io, axes, inner, src)
    return True


class _Axis:
    """One axis of the selection: ``count`` cells from ``start`` a ``step`` apart (``step``
    positive), or the cells of an index array, over chunks of ``chunk`` cells of an axis of
    ``size``; ``ks`` the chunks holding a selected cell (ascending), ``covered`` whether the
    selection takes all of each one's cells inside the array, ``border`` whether it reaches
    past the array's end. An index array is kept as its distinct positions ascending
    (``pos``) and, when it is not ascending already, the value's position setting each
    (``at``): the last one naming it, as in numpy's assignment, where the last value written
    to a cell is the one it keeps."""

    __slots__ = ("start", "count", "step", "chunk", "size", "ks", "covered", "border", "pos",
                 "at")

    def __init__(self, pick: Any, chunk: int, size: int) -> None:
        self.chunk, self.size = chunk, size
        self.pos = self.at = None
        if isinstance(pick, np.ndarray):
            pos = pick.astype(np.int64, copy=False)
            self.start, self.count, self.step = 0, len(pos), 0
            if len(pos) > 1 and not (pos[1:] > pos[:-1]).all():
                # the last of the value's positions naming each cell
                pos, first = np.unique(pos[::-1], return_index=True)
                self.at = len(pick) - 1 - first
            self.pos = pos
            self.ks, taken = np.unique(pos // chunk, return_counts=True)
        else:
            start, count, step = pick
            self.start, self.count, self.step = start, count, step
            if step == 1:
                self.ks = np.arange(start // chunk, (start + count - 1) // chunk + 1,
                                    dtype=np.int64)
                lo = np.maximum(self.ks * chunk, start)
                hi = np.minimum((self.ks + 1) * chunk, start + count)
                taken = hi - lo
            else:
                kpos = (start + step * np.arange(count, dtype=np.int64)) // chunk
                self.ks, taken = np.unique(kpos, return_counts=True)
        self.covered = taken == np.minimum(chunk, size - self.ks * chunk)
        self.border = (self.ks + 1) * chunk > size

    def inner(self) -> tuple[int, int]:
        """The run of ``ks`` (positions in it) covered whole inside the array (step 1)."""
        whole = np.flatnonzero(self.covered & ~self.border)
        return (int(whole[0]), int(whole[-1]) + 1) if len(whole) else (0, 0)

    def within(self, a: int, b: int) -> tuple[Any, Any]:
        """The selected cells in the chunks ``ks[a:b]``: their positions among the cells of
        those chunks laid end to end, and their positions in the value (slices when they are
        evenly spaced)."""
        ks, c, start, step = self.ks, self.chunk, self.start, self.step
        k0, k1 = int(ks[a]), int(ks[b - 1])
        if self.pos is not None:
            i0, i1 = np.searchsorted(self.pos, [k0 * c, (k1 + 1) * c]).tolist()
            pos = self.pos[i0:i1]
            part = slice(i0, i1) if self.at is None else self.at[i0:i1]
            if k1 - k0 + 1 == b - a:
                return pos - k0 * c, part
            return np.searchsorted(ks[a:b], pos // c) * c + pos % c, part
        i0 = max(0, -(-(k0 * c - start) // step))
        i1 = min(self.count, -(-((k1 + 1) * c - start) // step))
        if k1 - k0 + 1 == b - a:             # consecutive chunks: one slice
            x0 = start + step * i0 - k0 * c
            return slice(x0, x0 + step * (i1 - i0 - 1) + 1, step), slice(i0, i1)
        pos = start + step * np.arange(i0, i1, dtype=np.int64)
        rank = np.searchsorted(ks[a:b], pos // c)
        return rank * c + pos % c, slice(i0, i1)


def _faces(touched: list[int], inner: list[tuple[int, int]] | None
           ) -> list[tuple[list[int], list[int]]]:
    """The boxes (``(first, counts)`` over positions in each axis's ``ks``) partitioning the
    chunks touched (``touched`` per axis) outside the box ``inner`` (all of them when None)."""
    ndim = len(touched)
    if inner is None:
        return [([0] * ndim, list(touched))]
    out = []
    for d in range(ndim):
        head = [a for a, _ in inner[:d]]
        span = [b - a for a, b in inner[:d]]
        for a, b in ((0, inner[d][0]), (inner[d][1], touched[d])):
            if b > a:
                out.append((head + [a] + [0] * (ndim - d - 1),
                            span + [b - a] + touched[d + 1:]))
    return out


def _merge_slab(io: ArrayIO, enc: Any, axes: list[_Axis], first: list[int], n: list[int],
                src: np.ndarray) -> np.ndarray | None:
    """Update the chunks of the slab (positions ``first`` + ``n`` in each axis's ``ks``) with
    the cells of ``src`` they hold: :func:`merge_chunks`, whose answer it is."""
    ndim = len(io.chunk_shape)
    ks = [a.ks[f:f + m] for a, f, m in zip(axes, first, n)]
    coords = np.stack(np.meshgrid(*ks, indexing="ij"), axis=-1).reshape(prod(n), ndim)
    covered = _outer_all([a.covered[f:f + m] for a, f, m in zip(axes, first, n)])
    return merge_chunks(io, enc, coords, covered,
                        lambda dec: _place(dec, io.chunk_shape, axes, first, n, src))


def merge_chunks(io: ArrayIO, enc: Any, coords: np.ndarray, covered: np.ndarray,
                 merge: Callable[[np.ndarray], None]) -> np.ndarray | None:
    """Update the chunks at ``coords`` (an ``(k, ndim)`` int64 array) together: their locks
    taken, those not ``covered`` read and decoded into the rows of one ``(k, *chunk)`` array
    (the others, and missing ones, of the fill value), ``merge`` called on it to set the
    write's cells, and the rows encoded and stored. None once done; else the positions (in
    ``coords``) of the chunks left to the general path: all of them when some chunk does not
    decode or encode or their locks are in use, those another writer changed meanwhile
    otherwise."""
    k = len(coords)
    source = io.source
    store = source.objects.store
    keys = source.keys_of(coords)
    state: dict[str, Any] = {}

    def update() -> None:
        state["left"] = _update(io, enc, coords, keys, covered, merge)

    if not with_objects_lock(store, keys, update):
        return np.arange(k)
    return state["left"]


def _outer_all(flags: list[np.ndarray]) -> np.ndarray:
    """For each chunk of the outer product (C order), whether its flags are all true."""
    out = np.ones([len(f) for f in flags], dtype=bool)
    for d, f in enumerate(flags):
        out &= f.reshape([-1 if e == d else 1 for e in range(len(flags))])
    return out.reshape(-1)


def _update(io: ArrayIO, enc: Any, coords: np.ndarray, keys: list[str], covered: np.ndarray,
            merge: Callable[[np.ndarray], None]) -> np.ndarray | None:
    """:func:`merge_chunks`'s work, holding the chunks' locks."""
    chunk = io.chunk_shape
    k = len(keys)
    store = io.source.objects.store
    cond = conditional(store)
    need = np.flatnonzero(~covered)
    lim = io.source.size_limit()
    head = None if lim is None or store.reads_are_views else lim.head
    try:
        if cond:
            got = read_versioned_many(store, [keys[i] for i in need.tolist()], head)
            held = [None if g is None else g[0] for g in got]
            gens = [ABSENT] * k
            for i, g in zip(need.tolist(), got):
                if g is not None:
                    gens[i] = g[1]
        else:
            held = io.source.get_chunk_array(coords[need]) if len(need) else []
        lengths = np.array([-1 if h is None else memoryview(h).nbytes for h in held],
                           dtype=np.int64)
        if lim is not None and (lengths > lim.nbytes).any():
            return np.arange(k)                      # the general path refuses it
        dec = io.byte_scratch(k * enc.nbytes)[:k * enc.nbytes].view(io.dtype).reshape(
            k, *chunk)
        starts = np.full(k, -1, dtype=np.int64)
        sizes = np.zeros(k, dtype=np.int64)
        have = lengths >= 0
        if have.any():
            buf = b"".join([h for h in held if h is not None])
            sizes[need[have]] = lengths[have]
            starts[need[have]] = np.cumsum(lengths[have]) - lengths[have]
            from zarrx.codecs.plan_many import decode_many    # codecs load on first use
            decode_many(enc, buf, starts, sizes, dec, _unlocated)
        missing = starts < 0
        if missing.any():
            dec[missing] = io.fill
        merge(dec)
        rows = dec.reshape(k, -1)
        if io.write_empty_chunks:
            skip = np.zeros(k, dtype=bool)
        elif io.fill_is_nan:
            skip = np.isnan(rows).all(axis=1)
        else:
            skip = is_all_rows(rows.view(np.uint8), io.fill_bytes)   # type: ignore[arg-type]
        from zarrx.codecs.plan_many import encode_rows, stored_rows
        values = encode_rows(enc, stored_rows(enc, dec), False, skip)
    except (ZarrError, MemoryError):
        return np.arange(k)                          # the general path words the error
    if cond:
        # a chunk covered whole is replaced whatever it held (as the general path does)
        plain = covered.tolist()
        items = [(key, v, gens[i]) for i, (key, v, p) in enumerate(zip(keys, values, plain))
                 if not p]
        failed = write_conditional_many(store, items)
        whole = [(key, v) for key, v, p in zip(keys, values, plain) if p]
        _put_plain(store, [kv for kv in whole if kv[1] is not None],
                   [key for key, v in whole if v is None])
        return need[failed] if failed else None
    was = np.zeros(k, dtype=bool)
    was[need[have]] = True
    plain = covered | was
    _put_plain(store, [(key, v) for key, v in zip(keys, values) if v is not None],
               [key for key, v, p in zip(keys, values, plain.tolist()) if v is None and p])
    return None


def _place(dec: np.ndarray, chunk: tuple[int, ...], axes: list[_Axis], first: list[int],
           n: list[int], src: np.ndarray) -> None:
    """Set the cells of ``src`` the slab (positions ``first`` + ``n`` in each axis's ``ks``)
    holds in ``dec``, its decoded chunks (C order) of shape ``(k, *chunk)``."""
    ndim = len(chunk)
    # (n0, n1, ..., c0, c1, ...) <-> (n0 c0, n1 c1, ...): the slab's cells
    split = [x for m, c in zip(n, chunk) for x in (m, c)]
    blocks = dec.reshape(*n, *chunk)
    cells = np.empty([m * c for m, c in zip(n, chunk)], dtype=dec.dtype)
    cells.reshape(split)[...] = blocks.transpose(
        [x for d in range(ndim) for x in (d, ndim + d)])
    sel = [a.within(f, f + m) for a, f, m in zip(axes, first, n)]
    at, part = [s for s, _ in sel], [v for _, v in sel]
    got = src[tuple([v if isinstance(v, slice) else slice(None) for v in part])]
    for d, v in enumerate(part):        # an index array's values, each cell's last
        if not isinstance(v, slice):
            got = got.take(v, axis=d)
    if all(isinstance(s, slice) for s in at):
        cells[tuple(at)] = got
    else:
        cells[np.ix_(*[np.arange(c * m)[s] if isinstance(s, slice) else s
                       for s, c, m in zip(at, chunk, n)])] = got
    blocks[...] = cells.reshape(split).transpose(
        [*range(0, 2 * ndim, 2), *range(1, 2 * ndim, 2)])


def _put_plain(store: Any, writes: list, deletes: list) -> None:
    """Store ``writes`` and delete ``deletes`` with one call each."""
    if writes:
        store.set_many(writes)
    if deletes:
        store.delete_many(deletes)


def _unlocated(i: int, exc: BaseException) -> BaseException:
    """A chunk that does not decode: the slab goes through the general path, which locates
    the error."""
    return exc if isinstance(exc, (ZarrError, MemoryError)) else ZarrError(str(exc))


def _write_inner(io: ArrayIO, axes: list[_Axis], inner: list[tuple[int, int]],
                 src: np.ndarray) -> None:
    """Write the chunks a box covers whole inside the array (positions ``inner`` of each
    axis's ``ks``) as a box write of those chunks alone."""
    from zarrx import indexing
    cut = []
    for a, (lo, hi) in zip(axes, inner):
        cut.append((int(a.ks[lo]) * a.chunk, int(a.ks[hi - 1] + 1) * a.chunk))
    sub = indexing.plan_selection(tuple(slice(x, y) for x, y in cut), io.meta.shape,
                                  io.chunk_shape, kind="basic")
    part = src[tuple(slice(x - a.start, y - a.start) for (x, y), a in zip(cut, axes))]
    # (through the modules: the same functions the array's write calls, and tests replace)
    if not batch_write.write_batches(io, sub, part) and not box_write.write_box(io, sub, part):
        write_from(io, sub.chunks, part)
