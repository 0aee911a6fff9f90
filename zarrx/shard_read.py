"""Shard reads: a box of cells (or another outer selection: steps, integers, index arrays; or
the points of a coordinate or mask selection) of a sharded array of small inner chunks, read
shard by shard with the inner chunks described by arrays.

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
from collections.abc import Callable
from math import prod
from typing import Any

import numpy as np

from zarrx import _pool, chunk_io
from zarrx._outer_copy import copy_outer
from zarrx._scatter import scatter_chunks
from zarrx.chunk_io import ArrayIO, _located, check_count
from zarrx.store.shard_slots import slot_reader
from zarrx.store.sharded import ABSENT_MIN

__all__ = ["read_shards", "decode_picked", "decode_points", "decode_slab", "decode_into",
           "run_in_order", "COMPACT_CHUNK_BYTES", "SLAB_BYTES", "SLAB_CHUNKS", "SLAB_POINTS"]

#: inner chunks of at most this many decoded bytes are read shard by shard here (larger ones
#: cost little per chunk on the general path, which decodes them straight into the output)
COMPACT_CHUNK_BYTES = 1 << 14
#: most decoded bytes, and most inner chunks, of a slab of inner chunks (at least a row of them)
SLAB_BYTES = 1 << 22
SLAB_CHUNKS = 1 << 16
#: most points of a slab of a coordinate or mask read (unless one chunk holds more): each
#: takes a few int64 indices (24 to 40 bytes) while its slab is copied
SLAB_POINTS = 1 << 18
#: the picked cells of a slab of at most this many decoded bytes are gathered by one copy
#: between outer products (on a larger slab, numpy's gather was faster: 1024×1024 ``float32``
#: in 32×32 chunks, 700 indices per axis, CPU time numpy over copy 1.3–1.9 for slabs of 256 KiB
#: and 1 MiB, 0.8–0.96 for slabs of 4 MiB)
OUTER_COPY_BYTES = 1 << 20
#: coordinate and mask reads of fewer chunks take the general path
MIN_POINT_CHUNKS = 4


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
    if (box is None and ((plan.points is None and plan.picks is None)
                         or plan.nchunks < MIN_POINT_CHUNKS)) \
            or out.dtype != io.dtype or not (out.flags.c_contiguous and out.flags.writeable) \
            or not _eligible(io):
        return False
    check_count(io, plan.nchunks)
    if box is None and plan.points is not None:
        _read_shard_points(io, plan.points, out.reshape(-1))
        return True
    if box is None:
        _read_shard_picked(io, plan.picks, out)
        return True
    _read_box(io, box, out.reshape([b - a for a, b in box]))   # (a view: only axes of one)
    return True


def _read_box(io: ArrayIO, box: tuple, target: np.ndarray) -> None:
    """Read the box ``box`` into ``target`` (its cells) shard by shard, a window of at most
    ``chunk_io.MAX_WINDOW`` shards at a time. What each shard of a window reads (its first
    inner chunk in the box and their counts per axis, its slots) is worked out for all the
    window's shards at once, the slots once for each shape of shard part there is."""
    span = [c * r for c, r in zip(io.chunk_shape, io.object_ratio)]  # type: ignore[arg-type]
    objs = list(itertools.product(*[range(a // s, (b - 1) // s + 1)
                                    for (a, b), s in zip(box, span)]))
    # many shards: those the store tells cheaply are not stored are filled, not opened
    absent = io.source.objects.known_absent(objs) if len(objs) >= ABSENT_MIN else None
    slots: dict[tuple, np.ndarray] = {}        # per kind, made at first use
    step = max(1, chunk_io.MAX_WINDOW)
    for w in range(0, len(objs), step):
        _read_box_window(io, box, target, objs[w:w + step],
                         None if absent is None else absent[w:w + step], slots)


def _read_box_window(io: ArrayIO, box: tuple, target: np.ndarray, objs: list, absent: Any,
                     slots: dict) -> None:
    """The part of :func:`_read_box` in the shards ``objs`` (``absent``: which of them the
    store told are not stored, or None)."""
    chunk, ratio = io.chunk_shape, io.object_ratio
    nd = len(chunk)
    o = np.asarray(objs, dtype=np.int64).reshape(len(objs), nd)
    ch, ra = np.asarray(chunk, dtype=np.int64), np.asarray(ratio, dtype=np.int64)
    b0, b1 = np.asarray(box, dtype=np.int64).reshape(nd, 2).T
    # each shard's inner chunks in the box, per axis: the first (in array chunks), how many
    lo = np.maximum(o * ra, b0 // ch)
    cnt = np.minimum((o + 1) * ra, (b1 - 1) // ch + 1) - lo
    # (the part of a shard its first inner chunk there and their counts, per axis: its kind)
    kinds = list(map(tuple, np.concatenate([lo - o * ra, cnt], axis=1).tolist()))
    # and their cells in the box: from ``a`` to ``e``, the first ``a - c0`` of them not read
    c0, c1 = lo * ch, (lo + cnt) * ch
    a, e = np.maximum(c0, b0), np.minimum(c1, b1)
    whole = (((a == c0) & (e == c1)).all(axis=1) & (cnt[:, 1:] == 1).all(axis=1)).tolist()
    firsts, counts = lo.tolist(), cnt.tolist()
    at, to, skips = (a - b0).tolist(), (e - b0).tolist(), list(map(tuple, (a - c0).tolist()))
    read = slot_reader(io.source, o)         # the window's shard keys worked out once
    del o, lo, cnt, c0, c1, a, e
    nbytes = io.plan(chunk).nbytes                        # type: ignore[arg-type]

    def one(i: int) -> None:
        first, count = firsts[i], counts[i]
        if absent is not None and absent[i]:
            target[tuple(map(slice, at[i], to[i]))] = io.fill
            return
        sl = slots.get(kinds[i])
        if sl is None:
            sl = slots[kinds[i]] = _slots(kinds[i], ratio)
        got = read(i, sl)
        row = prod(count[1:])
        rows = max(1, min(SLAB_BYTES // max(1, row * nbytes), SLAB_CHUNKS // row))
        if rows >= count[0]:                # the shard in one slab
            if got is None:
                target[tuple(map(slice, at[i], to[i]))] = io.fill
                return
            dst = target[tuple(map(slice, at[i], to[i]))]
            decode_into(io, got[0], got[1], got[2], first, count, dst, skips[i],
                        whole[i] and dst.flags.c_contiguous)
            return
        for r0 in range(0, count[0], rows):
            r1 = min(count[0], r0 + rows)
            decode_slab(io, got, [first[0] + r0, *first[1:]], [r1 - r0, *count[1:]],
                        r0 * row, box, target)

    run_in_order(len(objs), one,
                 len(objs) > 1 and _pool.threads() > 1 and not io.gil_bound)


def _slots(kind: tuple[int, ...], ratio: tuple[int, ...]) -> np.ndarray:
    """The slots (C order over the shard's inner chunks) of the part of a shard ``kind``
    says: the first inner chunk (within the shard) and the counts, per axis."""
    nd = len(ratio)
    rel, counts = kind[:nd], kind[nd:]
    slots = np.zeros(counts, dtype=np.int64)
    stride = 1
    for d in range(nd - 1, -1, -1):
        shape = [1] * nd
        shape[d] = counts[d]
        slots += (np.arange(rel[d], rel[d] + counts[d], dtype=np.int64) * stride).reshape(shape)
        stride *= ratio[d]
    return slots.reshape(-1)


def _read_shard_picked(io: ArrayIO, picks: tuple, out: np.ndarray) -> None:
    """Read an outer selection that is not a box (slices of any step, integers, index arrays:
    ``picks``, see :class:`~zarrx.selection_plan.SelectionPlan`) into ``out`` shard by shard,
    in C order of the shards and of the inner chunks in each (as the general path lists them):
    the inner chunks holding a picked cell (those a step skips are not fetched) fetched by their
    slots, decoded a slab of rows at a time and their picked cells gathered as a box's."""
    chunk, ratio = io.chunk_shape, io.object_ratio
    pos = [p.astype(np.int64, copy=False) if isinstance(p, np.ndarray)
           else p[0] + p[2] * np.arange(p[1], dtype=np.int64) for p in picks]
    kpos = [p // c for p, c in zip(pos, chunk)]            # type: ignore[operator]
    target = out.reshape([len(p) for p in pos])            # a view: no new axis, no integer
    runs = []          # per axis: (shard, its chunks touched, the output cells in them)
    for kp, r in zip(kpos, ratio):
        ks = np.unique(kp)
        order = np.argsort(kp, kind="stable")
        cut = [0, *(np.flatnonzero(np.diff(ks // r)) + 1).tolist(), len(ks)]
        ends = np.searchsorted(kp[order], ks[np.array(cut[1:]) - 1], side="right")
        runs.append([(int(ks[a]) // r, ks[a:b], np.sort(order[e0:e1]))
                     for a, b, e0, e1 in zip(cut, cut[1:], [0, *ends[:-1].tolist()],
                                             ends.tolist())])
    objs = list(itertools.product(*runs))
    shards = np.array([[r[0] for r in o] for o in objs], dtype=np.int64).reshape(len(objs), -1)
    # many shards: those the store tells cheaply are not stored are filled, not opened
    absent = io.source.objects.known_absent(list(map(tuple, shards.tolist()))) \
        if len(objs) >= ABSENT_MIN else None
    read = slot_reader(io.source, shards)
    nbytes = io.plan(chunk).nbytes                          # type: ignore[arg-type]

    def one(i: int) -> None:
        obj = shards[i].tolist()
        sk = [r[1] for r in objs[i]]
        within = [r[2] for r in objs[i]]
        got = None
        if absent is None or not absent[i]:
            slots = np.zeros([len(s) for s in sk], dtype=np.int64)   # C order over them
            stride = 1
            for d in range(len(chunk) - 1, -1, -1):
                shape = [1] * len(chunk)
                shape[d] = len(sk[d])
                slots += ((sk[d] - obj[d] * ratio[d]) * stride).reshape(shape)
                stride *= ratio[d]
            got = read(i, slots.reshape(-1))
        if got is None:
            decode_picked(io, None, sk, pos, kpos, target, within)
            return
        row = prod(len(s) for s in sk[1:])
        rows = max(1, min(SLAB_BYTES // max(1, row * nbytes), SLAB_CHUNKS // row))
        for r0 in range(0, len(sk[0]), rows):
            r1 = min(len(sk[0]), r0 + rows)
            part = (got[0], got[1][r0 * row:r1 * row], got[2][r0 * row:r1 * row])
            decode_picked(io, part, [sk[0][r0:r1], *sk[1:]], pos, kpos, target, within)

    run_in_order(len(objs), one, len(objs) > 1 and _pool.threads() > 1 and not io.gil_bound)


def _read_shard_points(io: ArrayIO, points: tuple, flat: np.ndarray) -> None:
    """Read a coordinate or mask selection (``points``, see
    :attr:`~zarrx.selection_plan.SelectionPlan.points`) into ``flat`` (the output's cells in C
    order) shard by shard, in C order of the shards and of the inner chunks in each (as the
    general path lists them): the inner chunks holding a point fetched by their slots, decoded
    a slab at a time and their points gathered with one numpy indexing per slab."""
    _, _, bounds, first, grid = points
    chunk, ratio = io.chunk_shape, io.object_ratio
    cc = np.stack(np.unravel_index(first, grid), axis=1).astype(np.int64, copy=False)
    shard_of = cc // np.asarray(ratio, dtype=np.int64)
    lin = np.ravel_multi_index(tuple(shard_of.T), [-(-g // r) for g, r in zip(grid, ratio)])
    order = np.argsort(lin, kind="stable")     # shard-major, C order within each shard
    cuts = [0, *(np.flatnonzero(np.diff(lin[order])) + 1).tolist(), len(order)]
    nbytes = io.plan(chunk).nbytes                          # type: ignore[arg-type]
    step = max(1, min(SLAB_BYTES // max(1, nbytes), SLAB_CHUNKS))
    read = slot_reader(io.source, shard_of[order[cuts[:-1]]])

    def one(i: int) -> None:
        gs = order[cuts[i]:cuts[i + 1]]
        local = cc[gs] - shard_of[gs[0]] * np.asarray(ratio, dtype=np.int64)
        got = read(i, np.ravel_multi_index(tuple(local.T), ratio).astype(np.int64, copy=False))
        held = np.cumsum(bounds[gs + 1] - bounds[gs])   # points up to each chunk
        a = 0
        while a < len(gs):
            b = int(np.searchsorted(held, (held[a - 1] if a else 0) + SLAB_POINTS, "right"))
            b = min(max(b, a + 1), a + step)
            part = None if got is None else (got[0], got[1][a:b], got[2][a:b])
            decode_points(io, points, gs[a:b], cc[gs[a:b]], part, flat)
            a = b

    run_in_order(len(cuts) - 1, one,
                 len(cuts) > 2 and _pool.threads() > 1 and not io.gil_bound)


def decode_points(io: ArrayIO, points: tuple, gs: np.ndarray, cc: np.ndarray, got: Any,
                  flat: np.ndarray) -> None:
    """Decode the chunks ``gs`` (an int64 array: their places among the chunks holding a
    point of ``points``, see :attr:`~zarrx.selection_plan.SelectionPlan.points`), at ``cc``
    (their coordinates, ``(len(gs), ndim)``) and fetched as ``got`` (``(buffer, starts,
    lengths)`` over them, a start of -1 for a missing chunk; None: none is stored), and copy
    their points into ``flat`` (the output's cells in C order). A chunk that does not decode
    raises the error reading it alone raises, the first such in order."""
    pts, perm, bounds, _, _ = points
    chunk = io.chunk_shape
    counts = bounds[gs + 1] - bounds[gs]
    ends = np.cumsum(counts)
    # the chunks' points, one chunk's after another: their places in the plan's order
    take = np.arange(int(ends[-1]), dtype=np.int64) + np.repeat(bounds[gs] - (ends - counts),
                                                                counts)
    at = take if perm is None else perm[take]
    if got is None:
        flat[at] = io.fill
        return
    k = len(gs)
    # each point's place in the decoded chunks: its chunk's, plus its place in that chunk
    place = np.repeat(np.arange(k, dtype=np.int64) * prod(chunk), counts)
    for d, (p, c) in enumerate(zip(pts, chunk)):
        place += (p[at] - np.repeat(cc[:, d] * c, counts)) * prod(chunk[d + 1:])
    buf, starts, lengths = got
    dec = np.empty((k, *chunk), dtype=io.dtype)

    def located(i: int, exc: BaseException) -> Any:
        return _located(exc, io, tuple(int(x) for x in cc[i]), chunk)

    from zarrx.codecs.plan_many import decode_many    # codecs load on first use
    decode_many(io.plan(chunk), buf, starts, lengths, dec, located)
    missing = starts < 0
    if missing.any():
        dec[missing] = io.fill
    flat[at] = dec.reshape(-1)[place]


def run_in_order(n: int, one: Callable[[int], None], parallel: bool) -> None:
    """``one(i)`` for each ``i`` below ``n``: in order, or (``parallel``) taken by the pool's
    threads. Either way the error raised is that of the first ``i`` failing: with threads,
    tasks after one that failed are skipped and those before it finish."""
    failed: list = [n, None]           # the first task failing, and its error
    lock = threading.Lock()

    def task(i: int) -> None:
        if i < failed[0]:
            try:
                one(i)
            except BaseException as exc:
                with lock:
                    if i < failed[0]:
                        failed[:] = [i, exc]

    if parallel:
        _pool.run_shared(task, n)
    else:
        for i in range(n):
            task(i)
            if failed[1] is not None:
                break
    if failed[1] is not None:
        raise failed[1]


def decode_slab(io: ArrayIO, got: Any, first: list[int], counts: list[int], at: int,
                box: tuple, target: np.ndarray) -> None:
    """Decode the box of chunks from ``first`` (array chunks) of ``counts`` chunks, the
    ``at``-th onwards of those ``got`` describes (``(buffer, starts, lengths)``, a start of -1
    for a missing chunk; None: none is stored), and copy their cells inside the box into
    ``target`` (the box's cells). Chunks the box covers whole, lying one after another in
    ``target`` (a 1-d array, say), are decoded straight into it."""
    chunk = io.chunk_shape
    # the cells of the slab's chunks, and the part of them in the box, per axis
    c0 = [f * c for f, c in zip(first, chunk)]
    a = [max(x, b0) for x, (b0, _) in zip(c0, box)]
    e = [min(x + n * c, b1) for x, n, c, (_, b1) in zip(c0, counts, chunk, box)]
    dst = target[tuple(slice(x - b0, y - b0) for x, y, (b0, _) in zip(a, e, box))]
    if got is None:
        dst[...] = io.fill
        return
    k = prod(counts)
    covered = a == c0 and all(y == x + n * c for y, x, n, c in zip(e, c0, counts, chunk))
    decode_into(io, got[0], got[1][at:at + k], got[2][at:at + k], first, counts, dst,
                tuple(x - y for x, y in zip(a, c0)),
                covered and dst.flags.c_contiguous and all(n == 1 for n in counts[1:]))


def decode_into(io: ArrayIO, buf: Any, starts: np.ndarray, lengths: np.ndarray,
                first: list[int], counts: list[int], dst: np.ndarray, skip: tuple[int, ...],
                direct: bool) -> None:
    """Decode the chunks ``buf``, ``starts`` and ``lengths`` describe (a start of -1: a missing
    chunk), the box of ``counts`` chunks from ``first`` (array chunks), and copy their cells
    into ``dst``: the part of their cells from ``skip`` (per axis) onwards that the read
    wants. With ``direct``, ``dst`` is their cells in order (the chunks covered whole, one
    after another in it), and they are decoded straight into it."""
    chunk = io.chunk_shape
    k = len(starts)
    if direct:
        dec = dst.reshape(k, *chunk)                # the chunks' cells in order: a view
    else:
        dec = np.empty((k, *chunk), dtype=io.dtype)

    def located(i: int, exc: BaseException) -> Any:
        coords = np.unravel_index(i, counts)
        return _located(exc, io, tuple(int(f + x) for f, x in zip(first, coords)), chunk)

    from zarrx.codecs.plan_many import decode_many    # codecs load on first use
    decode_many(io.plan(chunk), buf, starts, lengths, dec, located)
    missing = starts < 0
    if missing.any():
        dec[missing] = io.fill
    if direct:
        return
    if not dec.dtype.hasobject:
        # each chunk's cells in the box copied into it, in one kernel call
        scatter_chunks(dec, tuple(counts), dst, skip)
        return
    # (n0, ..., c0, ...) -> (n0, c0, n1, c1, ...): the slab's cells
    ndim = len(chunk)
    cells = dec.reshape(*counts, *chunk).transpose(
        [x for d in range(ndim) for x in (d, ndim + d)])
    whole = np.empty([n * c for n, c in zip(counts, chunk)], dtype=io.dtype)
    whole.reshape([x for n, c in zip(counts, chunk) for x in (n, c)])[...] = cells
    dst[...] = whole[tuple(slice(x, x + n) for x, n in zip(skip, dst.shape))]


def decode_picked(io: ArrayIO, got: Any, sk: list[np.ndarray], pos: list[np.ndarray],
                  kpos: list[np.ndarray], target: np.ndarray, within: Any = None) -> None:
    """Decode the chunks of the outer product of ``sk`` (chunk numbers per axis, ascending, a
    run of those the selection touches), fetched as ``got`` (``(buffer, starts, lengths)`` over
    them in C order, a start of -1 for a missing chunk; None: none is stored), and copy the
    cells picked in them (``pos``, their chunks ``kpos``, per axis) into ``target``: through
    views of the decoded chunks when each of them holds the same picks (a step dividing the
    chunk), else with one gather of flat positions. ``within``: per axis, the output cells
    (ascending) among which those of ``sk`` lie, or None (all of them)."""
    chunk = io.chunk_shape
    ndim = len(chunk)
    counts = [len(s) for s in sk]
    dst: list[Any] = []
    qs: list[np.ndarray] = []           # per axis: each picked cell's chunk in the slab
    rs: list[np.ndarray] = []           # and its place in that chunk
    arrays = False
    for d, (s, p, kp, c) in enumerate(zip(sk, pos, kpos, chunk)):
        w = None if within is None else within[d]
        if w is None:                                       # the output cells the slab holds
            js = np.flatnonzero((kp >= s[0]) & (kp <= s[-1]))
        else:
            js = w[(kp[w] >= s[0]) & (kp[w] <= s[-1])]
        q, r = np.searchsorted(s, kp[js]), p[js] - kp[js] * c
        j0, j1 = int(js[0]), int(js[-1]) + 1
        if j1 - j0 != len(js):
            dst.append(js)
            arrays = True
        elif len(js) > 1 and p[j0] > p[j0 + 1]:     # read in reverse: taken in array order
            dst.append(slice(j1 - 1, j0 - 1 if j0 else None, -1))
            q, r = q[::-1], r[::-1]
        else:
            dst.append(slice(j0, j1))
        qs.append(q)
        rs.append(r)
    if arrays:
        dst = list(np.ix_(*[_as_index(x) for x in dst]))
    if got is None:
        target[tuple(dst)] = io.fill
        return
    k = prod(counts)
    buf, starts, lengths = got
    dec = np.empty((k, *chunk), dtype=io.dtype)

    def located(i: int, exc: BaseException) -> Any:
        at = np.unravel_index(i, counts)
        return _located(exc, io, tuple(int(s[x]) for s, x in zip(sk, at)), chunk)

    from zarrx.codecs.plan_many import decode_many    # codecs load on first use
    decode_many(io.plan(chunk), buf, starts, lengths, dec, located)
    missing = starts < 0
    if missing.any():
        dec[missing] = io.fill
    grids = None if arrays else [_regular(q, r, n) for q, r, n in zip(qs, rs, counts)]
    if grids is not None and all(g is not None for g in grids):
        # (n0, n1, ..., m0, m1, ...) picked per chunk -> (n0, m0, n1, m1, ...): output order
        src = dec.reshape(*counts, *chunk)[(slice(None),) * ndim + tuple(g[0] for g in grids)]
        split = [x for n, g in zip(counts, grids) for x in (n, g[1])]
        # dst holds slices only (no index arrays: `arrays` is False), so target[dst] is a view;
        # as a plain ndarray (an out= may be a subclass, np.matrix, that takes no 4 axes). Its
        # axis d of n*g items, stride s, becomes axes (n, g) of strides (g*s, s): splitting an
        # axis is always a view, whatever the strides (numpy before 2.1 has no
        # reshape(copy=False) to say so). Checked all the same (not by assert, which python -O
        # drops): a copy would take the values and the output would keep what it held.
        out = np.asarray(target[tuple(dst)]).reshape(split)
        if out.size and not np.may_share_memory(out, target):
            raise AssertionError("decode_picked: the output reshaped is a copy")  # (never)
        out[...] = src.transpose([x for d in range(ndim) for x in (d, ndim + d)])
        return
    # each picked cell's place in the decoded chunks: the sum of an offset per axis
    ats = [q * (prod(counts[d + 1:]) * prod(chunk)) + r * prod(chunk[d + 1:])
           for d, (q, r) in enumerate(zip(qs, rs))]
    if ndim > 1 and dec.nbytes <= OUTER_COPY_BYTES:
        # a view of the decoded items stepping one item along every axis: its item at the
        # offsets of a cell is that cell, so the gather is a copy between outer products (the
        # view ends where the decoded items do: the copy finds it apart from the output)
        items = dec.reshape(-1)
        lattice = np.lib.stride_tricks.as_strided(
            items, [int(a.max()) + 1 if len(a) else 1 for a in ats], (items.itemsize,) * ndim,
            writeable=False)
        to = tuple(dst) if arrays else np.ix_(*[_as_index(x) for x in dst])
        if copy_outer(lattice, np.ix_(*ats), target, to):
            return
    flat: Any = 0
    for d, at in enumerate(ats):
        shape = [1] * ndim
        shape[d] = len(at)
        flat = flat + at.reshape(shape)
    target[tuple(dst)] = dec.reshape(-1)[flat]


def _as_index(x: Any) -> np.ndarray:
    """An axis's output cells (a slice of step 1 or -1, or an array of them) as an array."""
    if isinstance(x, np.ndarray):
        return x
    return np.arange(x.start, x.stop) if x.step is None else \
        np.arange(x.start, -1 if x.stop is None else x.stop, -1)


def _regular(q: np.ndarray, r: np.ndarray, n: int) -> tuple[slice, int] | None:
    """``(slice, m)`` when the picks ``(q, r)`` of an axis (chunk in the slab, place in it) are
    ``m`` places of each of the ``n`` chunks in turn, the same in each and evenly spaced; None
    otherwise."""
    m = len(q) // n
    if m * n != len(q):
        return None
    r0 = r[:m]
    step = int(r0[1] - r0[0]) if m > 1 else 1
    if step <= 0 or (m > 2 and not (np.diff(r0) == step).all()):
        return None
    if not (np.array_equal(r.reshape(n, m), np.broadcast_to(r0, (n, m)))
            and np.array_equal(q.reshape(n, m), np.broadcast_to(np.arange(n)[:, None], (n, m)))):
        return None
    return slice(int(r0[0]), int(r0[-1]) + 1, step), m
