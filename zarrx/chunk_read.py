"""Read a selection of an array: fetch windows of chunks, decode them, scatter them into the
output; and one element alone (:func:`read_point`).

Reads are windows of chunks, each fetched with one ``get_chunks`` call and decoded on one
thread; a window never splits the chunks of one stored object. Memory: a read allocates its
output plus O(threads) decoded chunk buffers and holds the stored bytes of one window (never
less than one stored object's requested chunks; a local shard of at most 16 MiB nearly all
wanted is read whole) per thread; a huge raw chunk
(``RANGED_RAW_BYTES`` in :mod:`zarrx.chunk_io`) is fetched as the byte range the selection
spans in it.
"""
from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from zarrx import _pool, chunk_io
from zarrx.chunk_io import ArrayIO, _assign, _located, check_count
from zarrx.codecs.plan import CHECK_FIRST_BYTES
from zarrx.errors import ZarrError
from zarrx.fill_region import fill_entries, fill_missing
from zarrx.indexing import ChunkList, is_view
from zarrx.store.base import ByteRange

__all__ = ["read_into", "read_point", "NOT_A_POINT"]

WINDOW_PER_THREAD = 8
#: a read of this many chunks listed lazily (a plan's :class:`~zarrx.indexing.ChunkList`)
#: fetches them by coordinates, making projections only for those stored
LAZY_READ_CHUNKS = 256
#: chunks of such a read a window may take (it holds a projection of each stored one)
LAZY_WINDOW = 1024


_NO_ARENA = object()
class _Window(NamedTuple):
    """The cells a selection reads of a raw chunk, as one byte range of it: ``rng`` spans the
    selection's first cell to its last, ``shape`` is the box of cells between them and
    ``sel`` the selection relative to that box."""
    rng: ByteRange
    shape: tuple[int, ...]
    sel: tuple


def _window(io: ArrayIO, chunk_sel: tuple) -> _Window | None:
    """The byte range of a raw chunk (regular shape, C order) that ``chunk_sel`` (ints,
    slices with a positive step, or integer arrays per axis) reads, when it is less than half
    the chunk; None otherwise (the whole chunk is fetched)."""
    chunk = io.chunk_shape
    itemsize = io.dtype.itemsize
    at = next((i for i, s in enumerate(chunk_sel) if s is Ellipsis), None)
    if at is not None:              # (box reads select ``(i, ...)``): full slices in its place
        rest = len(chunk) - len(chunk_sel) + 1   # type: ignore[arg-type]
        if rest < 0:
            return None
        chunk_sel = chunk_sel[:at] + (slice(None),) * rest + chunk_sel[at + 1:]
    if len(chunk_sel) != len(chunk):             # type: ignore[arg-type]
        return None
    lo: list[int] = []
    hi: list[int] = []
    sel: list[Any] = []
    for s, n in zip(chunk_sel, chunk):           # type: ignore[arg-type]
        if isinstance(s, (int, np.integer)):
            a = int(s)
            lo.append(a), hi.append(a + 1), sel.append(0)
        elif isinstance(s, slice):
            start, stop, step = s.indices(n)
            if step <= 0 or start >= stop:
                return None
            last = start + (stop - 1 - start) // step * step
            lo.append(start), hi.append(last + 1), sel.append(slice(0, last + 1 - start, step))
        elif isinstance(s, np.ndarray) and s.dtype.kind in "iu" and s.size:
            a = int(s.min())
            lo.append(a), hi.append(int(s.max()) + 1), sel.append(s - a)
        else:
            return None
    strides = [itemsize] * len(chunk)
    for d in range(len(chunk) - 2, -1, -1):
        strides[d] = strides[d + 1] * chunk[d + 1]   # type: ignore[index]
    first = sum(a * st for a, st in zip(lo, strides))
    length = sum((b - 1) * st for b, st in zip(hi, strides)) + itemsize - first
    if 2 * length > io.plan(chunk).nbytes:       # type: ignore[arg-type]
        return None
    return _Window(ByteRange.trusted(first, length),
                   tuple(b - a for a, b in zip(lo, hi)), tuple(sel))


def _window_view(io: ArrayIO, win: _Window, data: Any, size: int | None) -> np.ndarray | None:
    """The cells of ``win`` over the fetched bytes ``data`` (no copy), or None when the stored
    chunk is shorter than the range or its stored ``size`` (None: unknown) is not a chunk's
    (the whole chunk is read then, and its size refused)."""
    if memoryview(data).nbytes != win.rng.length or \
            (size is not None and size != io.plan(io.chunk_shape).nbytes):  # type: ignore[arg-type]
        return None
    chunk = io.chunk_shape
    strides = [io.dtype.itemsize] * len(chunk)   # type: ignore[arg-type]
    for d in range(len(strides) - 2, -1, -1):
        strides[d] = strides[d + 1] * chunk[d + 1]   # type: ignore[index]
    return np.ndarray(win.shape, dtype=io.dtype, buffer=data, strides=tuple(strides))


def _refuse_size(io: ArrayIO, coords: tuple[int, ...], size: int | None) -> None:
    """Raise the error about the raw chunk at ``coords`` when its stored ``size`` (None:
    unknown) is known not to be a chunk's: reading it whole to find that out may not fit in
    memory."""
    plan = io.plan(io.chunk_shape)                   # type: ignore[arg-type]
    if size is not None and size != plan.nbytes:
        raise _located(plan.wrong_size(size), io, coords, io.chunk_shape)  # type: ignore[arg-type]


def read_into(io: ArrayIO, projections: Sequence, out: np.ndarray, *, flat: bool = False) -> None:
    """Fill ``out`` from the chunks of ``projections`` (ChunkProjection objects from
    ``zarrx.indexing``). ``flat``: ``out_sel`` indexes the flattened output (coordinate and
    mask selections)."""
    check_count(io, len(projections))
    if flat and out.ndim > 1 and not out.flags.c_contiguous:
        # flattening such an ``out`` (Fortran order, strided) would copy it: fill a C-ordered
        # array, then ``out`` from it
        whole = np.empty(out.shape, dtype=out.dtype)
        read_into(io, projections, whole, flat=True)
        out[...] = whole
        return
    target = out.reshape(-1) if flat else out
    window = max(16, WINDOW_PER_THREAD * _pool.threads())
    source = io.source
    ranged = io.ranged_raw

    def requests(win: Sequence) -> list:
        """What to fetch for each projection: the chunk, or (a huge raw chunk read in part)
        the bytes its selection spans."""
        if not ranged:
            return [(p, (p.coords, None), None) for p in win]
        reqs = []
        for p in win:
            w = None if p.full else _window(io, p.chunk_sel)
            reqs.append((p, (p.coords, None if w is None else w.rng), w))
        return reqs

    def decode(fetched: Sequence) -> None:
        for p, data, w, size in fetched:
            if w is not None and data is not None:
                part = _window_view(io, w, data, size)
                if part is not None:
                    _assign(target, p.out_sel, part, w.sel)
                    continue
                _refuse_size(io, p.coords, size)
                data = source.get_chunks([(p.coords, None)])[0]   # read whole, size refused
            if data is None:
                target[p.out_sel] = io.fill
                continue
            shape = io.shape_of(p.coords)
            plan = io.plan(shape)
            try:
                # decoded in place when the chunk is the region: an index array in chunk_sel
                # (duplicates covering a border chunk) may give the region the chunk's shape
                if p.full and not flat and is_view(p.out_sel) and is_view(p.chunk_sel):
                    region = target[p.out_sel]
                    if region.shape == shape and region.flags.c_contiguous:
                        plan.decode(data, region)
                        continue
                if plan.raw:        # scatter straight from the stored bytes
                    _assign(target, p.out_sel, plan.view(data), p.chunk_sel)
                    continue
                if io.object_chunks:    # made once the stored bytes are known to hold it
                    buf = plan.decode_new(data)
                else:
                    if plan.nbytes >= CHECK_FIRST_BYTES:   # before a buffer of its size is made
                        from zarrx.codecs.plan_check import check_stored
                        check_stored(plan, data)
                    buf = io.scratch(shape)
                    plan.decode(data, buf)
            except (ZarrError, MemoryError) as exc:
                raise _located(exc, io, p.coords, shape)
            _assign(target, p.out_sel, buf, p.chunk_sel)

    if len(projections) == 1:        # one chunk: no windows, no pool
        ((p, req, w),) = requests(projections)
        sizes = [None]
        decode([(p, source.get_chunks([req], None, sizes)[0], w, sizes[0])])
        return

    arenas = threading.local()     # a read buffer per thread, reused by its windows
    # a plan listed lazily: a window's chunks are fetched by coordinates, and projections are
    # made only for those stored; the missing chunks of an outer selection (a box, strides,
    # index arrays) are filled together at the end
    lazy = isinstance(projections, ChunkList) and not ranged \
        and len(projections) >= LAZY_READ_CHUNKS
    fill_at = _filler(io, projections, target) if lazy and not flat else None
    missing: list[np.ndarray] = []          # coordinates of missing chunks (fill_at reads)
    listing = threading.Lock()              # a ChunkList is sliced by one thread at a time

    def fetch(a: int, b: int, win: Sequence | None = None) -> tuple[list, bool]:
        """The window's chunks ``a`` to ``b`` (their projections ``win``, when taken already)
        fetched, and whether any is stored."""
        arena = getattr(arenas, "arena", _NO_ARENA)
        if arena is _NO_ARENA:
            arena = arenas.arena = source.new_arena()
        if lazy:
            cs = projections.coords_of(a, b)                 # type: ignore[attr-defined]
            got = source.get_chunk_array(cs, arena)
            keep = [i for i, d in enumerate(got) if d is not None]
            if fill_at is not None and len(keep) < len(got):
                missing.append(cs[np.flatnonzero([d is None for d in got])])
                with listing:
                    ps = [projections[a + i] for i in keep]
                return [(p, got[i], None, None) for p, i in zip(ps, keep)], bool(keep)
            with listing:
                ps = projections[a:b]
            return [(p, d, None, None) for p, d in zip(ps, got)], bool(keep)
        if win is None:
            with listing:
                win = projections[a:b]
        reqs = requests(win)
        sizes = [None] * len(reqs) if ranged else None
        got = source.get_chunks([r for _, r, _ in reqs], arena, sizes)
        if sizes is None:
            return [(p, data, None, None) for (p, _, _), data in zip(reqs, got)], True
        return [(p, data, w, size) for (p, _, w), data, size in zip(reqs, got, sizes)], True

    one_thread = _pool.threads() <= 1 or io.gil_bound or _small(io, len(projections), out)
    size = window if one_thread else io.read_window
    if lazy:      # larger windows of small chunks: a window's own work is a few numpy calls
        size = max(size, min(io.read_window, LAZY_WINDOW))
    elif not one_thread:     # at least a window per thread
        size = max(1, min(size, -(-len(projections) // _pool.threads())))
    bounds = _read_windows(io, projections, size)
    if not one_thread and len(bounds) == 1:    # one stored object: fetch it once, decode in
        fetched = fetch(*bounds[0])[0]         # parallel
        _pool.run_batches(decode, fetched, min_batch=2)
        bounds = []
    # windows on this thread while they hold no stored chunk: missing chunks leave nothing to
    # do in parallel, and threads would only take turns on the GIL listing them. After a
    # window of a lazy plan with none stored the next fetch takes twice as many windows (up
    # to LAZY_WINDOW chunks): a sparse read of chunks of a few hundred KiB, windows of 4
    # chunks, costs a few numpy calls per window rather than per 4 chunks. With threads, the
    # first window holding a stored chunk is decoded beside the windows after it
    at, span, nb = 0, 1, len(bounds)
    cap = LAZY_WINDOW // (bounds[0][1] - bounds[0][0]) if lazy and nb else 1
    first: list | None = None
    while at < nb:
        end = at + span
        if end > nb:
            end = nb
        fetched, stored = fetch(bounds[at][0], bounds[end - 1][1])
        at = end
        if stored and not one_thread and at < nb:
            # decoded by whichever thread takes it, while this one may fetch the next window:
            # its bytes stay in this arena, and this thread's next fetch gets a new one
            first = fetched
            arenas.arena = _NO_ARENA
            break
        decode(fetched)
        if stored and not one_thread:
            break
        if stored or cap <= 1:
            span = 1
        elif span < cap:
            span = 2 * span if 2 * span < cap else cap
    if at < len(bounds):
        # several threads: each takes the next window, fetches and decodes it (or the window
        # fetched above). Windows are taken under the lock, in order: a lazy projection list is
        # walked once, by one thread at a time (projections of stored chunks only are made
        # after the fetch)
        windows = iter(bounds[at:])

        def task(i: int) -> None:
            if i == 0 and first is not None:
                decode(first)
                return
            with listing:
                a, b = next(windows)
                win = None if lazy else projections[a:b]
            decode(fetch(a, b, win)[0])

        _pool.run_shared(task, len(bounds) - at + (first is not None))
    if missing:
        fill_at(np.concatenate(missing))  # type: ignore[misc]


def _small(io: ArrayIO, nchunks: int, out: np.ndarray) -> bool:
    """Whether reading ``nchunks`` chunks into ``out`` is less work than
    ``chunk_io.PARALLEL_MIN_BYTES``: the bytes copied into ``out``, plus those decoded from
    each chunk when the chunks are not raw (a regular grid of items holding no Python objects,
    on a store that answers at once: a remote store's requests wait, and threads overlap them;
    False otherwise)."""
    chunk = io.chunk_shape
    if chunk is None or io.object_chunks or io.source.objects.store.latency_bound:
        return False
    work = out.nbytes
    plan = io.plan(chunk)
    if not plan.raw:
        work += nchunks * plan.nbytes
    return work < chunk_io.PARALLEL_MIN_BYTES


def _filler(io: ArrayIO, projections: Any, target: np.ndarray) -> Any:
    """A function filling the cells of ``target`` in the missing chunks at the coordinates
    it is given, all at once, when the plan of ``projections`` allows it: a box of cells over
    a regular grid, or another outer selection (strides, an index array). Else None (each
    missing chunk is filled on its own)."""
    plan = projections.plan
    box = plan.region
    fb = io.fill_bytes if target.dtype == io.dtype else None
    if box is not None and io.regular:
        shape = tuple(b - a for a, b in box)
        view = target if target.shape == shape else \
            target.reshape(shape) if target.flags.c_contiguous else None
        if view is not None:
            return lambda missing: fill_missing(view, box, io.chunk_shape, missing, io.fill, fb)
    if plan.cells is None:
        return None
    return lambda missing: fill_entries(target, *plan.cells(), missing, io.fill, fb)


def _read_windows(io: ArrayIO, projections: Sequence, size: int) -> list[tuple[int, int]]:
    """``(start, stop)`` windows of about ``size`` projections that never split the chunks of
    one stored object: a window's fetch reads each shard through one snapshot, so a read sees
    every shard as of one version."""
    n = len(projections)
    if io.units_per_object == 1 or io.object_ratio is None:
        return [(a, min(a + size, n)) for a in range(0, n, size)]
    coords = projections.coords() if hasattr(projections, "coords") \
        else np.array([p.coords for p in projections], dtype=np.int64).reshape(n, -1)
    objs = coords // np.asarray(io.object_ratio, dtype=np.int64)
    starts = [0, *(np.flatnonzero(np.any(objs[1:] != objs[:-1], axis=1)) + 1).tolist(), n]
    out: list[tuple[int, int]] = []
    a = 0
    for b in starts[1:]:
        if b - a >= size or b == n:
            out.append((a, b))
            a = b
    return out


NOT_A_POINT = object()


def read_point(io: ArrayIO, index: tuple) -> Any:
    """``z[i, j, ...]`` for one in-bounds element given by plain ints: one chunk fetch, and for
    raw chunks no decode at all. Returns ``NOT_A_POINT`` for anything else (the general path
    then handles it, errors included)."""
    shape = io.meta.shape
    chunk = io.chunk_shape
    coords = []
    local = []
    for i, n, c in zip(index, shape, chunk):
        if type(i) is not int:
            return NOT_A_POINT
        if i < 0:
            i += n
        if not 0 <= i < n:
            return NOT_A_POINT
        coords.append(i // c)
        local.append(i % c)
    coords_t = tuple(coords)
    w = _window(io, tuple(local)) if io.ranged_raw else None    # a huge raw chunk: one item
    if w is not None:
        sizes = [None]
        data = io.source.get_chunks([(coords_t, w.rng)], None, sizes)[0]
        if data is None:
            return np.asarray(io.fill, dtype=io.dtype)[()]
        part = _window_view(io, w, data, sizes[0])
        if part is not None:
            return part[w.sel]
        _refuse_size(io, coords_t, sizes[0])
    data = io.source.get_chunks([(coords_t, None)])[0]
    if data is None:
        return np.asarray(io.fill, dtype=io.dtype)[()]
    plan = io.plan(chunk)
    try:
        if plan.raw:
            return plan.view(data)[tuple(local)]
        if io.object_chunks:
            buf = plan.decode_new(data)
        else:
            if plan.nbytes >= CHECK_FIRST_BYTES:   # before a buffer of its size is made
                from zarrx.codecs.plan_check import check_stored
                check_stored(plan, data)
            buf = io.scratch(chunk)
            plan.decode(data, buf)
    except (ZarrError, MemoryError) as exc:
        raise _located(exc, io, coords_t, chunk)
    return buf[tuple(local)]
