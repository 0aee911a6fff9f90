"""User selections -> per-chunk projections over a chunk grid.

``plan_selection(selection, shape, grid, kind)`` parses a selection with numpy semantics and
returns a :class:`SelectionPlan`: the result shape and, for every chunk the selection touches,
a :class:`ChunkProjection` saying which cells of the chunk array (``chunk_sel``) go where in the
output (``out_sel``), and whether the selection covers the chunk entirely (``full``).

- ``basic`` / ``orthogonal`` / ``block``: ``out[out_sel] = chunk[chunk_sel]`` (reads) and
  ``chunk[chunk_sel] = values[out_sel]`` (writes) are correct numpy statements. The chunk array
  has the chunk's stored shape (a regular grid's full chunk shape, even at the border).
- ``coordinate`` / ``mask``: ``out_sel`` is ``(positions,)`` into the *flattened* output:
  ``out.reshape(-1)[out_sel[0]] = chunk[chunk_sel]``.

Parsing the selection is :mod:`zarrx.selection`'s, and the grid :mod:`zarrx.chunk_grid`'s.
Chunks are listed in C order, or shard-major when ``shard_shape`` is given. The plan itself
(:class:`SelectionPlan`, :class:`ChunkList`) is :mod:`zarrx.selection_plan`'s. Per-axis
projections are made once and combined lazily (a slice over many regular chunks entry by entry,
:mod:`zarrx.slice_runs`): a plan holds no Python object per chunk until it is iterated.
"""
from __future__ import annotations

import functools
import itertools
import math
import threading
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np

from zarrx import _indexing
from zarrx.chunk_grid import AxisGrid, ChunkGridIndex, Grid, shard_major
from zarrx.errors import IndexingError, SelectionSizeError
from zarrx.selection_plan import ChunkList, SelectionPlan
from zarrx.slice_runs import LAZY_MIN, SliceRuns, product
from zarrx.selection import (kind_of, parse_basic, parse_block, parse_coordinate, parse_mask,
                             parse_orthogonal, ravel)

__all__ = ["KINDS", "AxisGrid", "ChunkGridIndex", "ChunkList", "ChunkProjection", "Grid",
           "SelectionPlan", "is_view", "kind_of", "plan_selection", "shard_major"]

KINDS = ("basic", "orthogonal", "coordinate", "mask", "block")
#: most dimensions of a coordinate or mask selection (numpy's limit for index arrays)
MAX_POINT_NDIM = 63
#: most chunks one read or write touches, and most chunks along one axis a plan lists (a
#: :class:`~zarrx.errors.SelectionSizeError` beyond): a chunk costs up to a few hundred bytes
#: and microseconds before any I/O, so more than this is read or written in parts
MAX_CHUNKS = 1 << 22
#: chunks of a coordinate or mask plan projected together (a few numpy calls for the block)
POINT_BLOCK = 1024
#: ... and at most this many points (unless one chunk holds more)
POINT_CELLS = 1 << 16

class ChunkProjection(NamedTuple):
    coords: tuple[int, ...]      # chunk grid coordinates
    chunk_sel: tuple             # selection inside the chunk array
    out_sel: tuple               # selection inside the output (flat positions for coordinate/mask)
    full: bool                   # the selection covers every in-bounds cell of the chunk


def check_chunk_count(n: int) -> None:
    """Raise :class:`~zarrx.errors.SelectionSizeError` when a read or write of ``n`` chunks
    exceeds :data:`MAX_CHUNKS`."""
    if n > MAX_CHUNKS:
        raise SelectionSizeError(f"the selection touches {n} chunks; at most {MAX_CHUNKS} are "
                                 f"read or written in one call: select less at a time")


def plan_selection(selection: Any, shape: Sequence[int], grid: Any, kind: str = "basic",
                   shard_shape: Any = None) -> SelectionPlan:
    """Plan ``selection`` (numpy semantics of ``kind``) over an array of ``shape`` chunked by
    ``grid`` (a chunk shape, rectilinear edge lengths, or a :class:`ChunkGridIndex`).

    ``shard_shape`` (chunks per shard per axis, or a list of levels outermost first) lists the
    chunks shard-major instead of in C order."""
    g = grid if isinstance(grid, ChunkGridIndex) else ChunkGridIndex(shape, grid)
    if tuple(shape) != g.shape:
        raise IndexingError(f"plan_selection: shape {tuple(shape)} differs from the grid's {g.shape}")
    if kind == "basic":
        parsed, data = parse_basic(selection, g.shape)
        plan = _plan_points(*parse_mask(data, g.shape), g, "mask") if parsed == "mask" \
            else _plan_outer(data, g, "basic")
    elif kind == "orthogonal":
        plan = _plan_outer(parse_orthogonal(selection, g.shape), g, kind)
    elif kind == "coordinate":
        plan = _plan_points(*parse_coordinate(selection, g.shape), g, kind)
    elif kind == "mask":
        plan = _plan_points(*parse_mask(selection, g.shape), g, kind)
    elif kind == "block":
        plan = _plan_outer(parse_block(selection, g.shape, g.axes), g, kind)
    else:
        raise IndexingError(f"selection kind: expected one of {', '.join(KINDS)}, found {kind!r}")
    if shard_shape is not None:
        plan.reorder_shard_major(shard_shape)
    return plan


# ----------------------------------------------------------- basic / orthogonal / block plans

def _array_groups(pos: np.ndarray, a: AxisGrid) -> tuple:
    """The positions of an index array grouped by chunk, without a step per chunk:
    ``(order flag, permutation or None, sorted chunk ids, group bounds)``; the chunks it
    touches are ``len(bounds) - 1``."""
    ids, order_flag = _indexing.chunk_ids(pos, a.chunk, a.offsets)
    perm = None if order_flag else _indexing.stable_order(ids, a.nchunks)
    sids = ids if perm is None else ids[perm]
    return order_flag, perm, sids, _indexing.group_bounds(sids)


def _project_array(pos: np.ndarray, a: AxisGrid, groups: tuple | None = None
                   ) -> list[tuple[int, Any, Any, bool]]:
    """Group the positions of an index array by chunk: ``(k, chunk-local positions or slice,
    output positions or slice, full)`` per chunk, chunks ascending (``groups``: its
    :func:`_array_groups`, when already made)."""
    order_flag, perm, sids, bounds = groups if groups is not None else _array_groups(pos, a)
    bounds = bounds.tolist()
    entries = []
    for b0, b1 in itertools.pairwise(bounds):
        k = int(sids[b0])
        start, inb, m = a.start(k), a.inbound_len(k), b1 - b0
        if perm is None:
            local = pos[b0:b1] - start
            osel: Any = slice(b0, b1)
            if order_flag == 2:
                full = m == inb
                csel: Any = slice(int(local[0]), int(local[-1]) + 1) \
                    if local[-1] - local[0] == m - 1 else local
            else:
                csel = local
                full = _covers(local, m, inb)
        else:
            osel = perm[b0:b1]
            csel = pos[osel] - start
            full = _covers(csel, m, inb)
        if full and m == inb and not isinstance(csel, slice):
            # each cell once, in some order: list the cells in chunk order instead
            osel = (np.arange(b0, b1) if isinstance(osel, slice) else osel)[np.argsort(csel)]
            csel = slice(0, inb)
        entries.append((k, csel, osel, bool(full)))
    return entries


def _covers(local: np.ndarray, m: int, inb: int) -> bool:
    """Do the ``m`` chunk-local positions ``local`` hit every one of the ``inb`` in-bounds cells?"""
    return m >= inb and int(np.count_nonzero(np.bincount(local, minlength=inb)[:inb])) == inb


_VIEW_TYPES = frozenset([int, slice, type(None), type(Ellipsis)])


def is_view(sel: tuple) -> bool:
    """True when ``sel`` holds only ints, slices, None and Ellipsis, so ``a[sel]`` is a view of
    ``a`` (a decode may write into it); index arrays make ``a[sel]`` a copy. (Called for every
    chunk read: the usual items are told by their type, with no call per item.)"""
    for s in sel:
        if type(s) not in _VIEW_TYPES and not isinstance(s, (int, slice)):
            return False
    return True


def _as_ix(sel: Any, n: int, j: int, m: int) -> np.ndarray:
    """An index (slice or 1-d array) over ``n`` cells as an int array shaped for output axis
    ``j`` of ``m`` (np.ix_ style), so several arrays select an outer product."""
    a = np.arange(*sel.indices(n)) if isinstance(sel, slice) else np.asarray(sel)
    shape = [1] * m
    shape[j] = a.shape[0]
    return a.reshape(shape)


def _plan_outer(items: list, g: ChunkGridIndex, kind: str) -> SelectionPlan:
    lists: list[Any] = []        # per array axis: (k, chunk_sel, out_sel, full)
    lens: list[int] = []         # per array axis: how many chunks the selection touches
    lazy: list[tuple] = []       # (axis, start, count, AxisGrid) of runs not yet projected
    box: list[tuple[int, int]] | None = []
    out_shape: list[int] = []
    outmap: list[int] = []       # per output axis: array axis feeding it, -1 for newaxis
    positions: list[Any] = []    # per output axis fed by an array axis: its cells' positions
    n_int = n_new = n_arr = 0
    view = None
    picks: list = []             # per array axis: the cells picked, in output order
    for it in items:
        tag = it[0]
        if tag == "new":
            out_shape.append(1)
            outmap.append(-1)
            n_new += 1
            continue
        ax = len(lists)
        a = g.axes[ax]
        if box is not None:
            if tag == "int":
                box.append((it[1], it[1] + 1))
            elif tag == "slice" and it[3] == 1 and it[2] > 0:
                box.append((it[1], it[1] + it[2]))
            else:
                box = None
        picks.append((it[1], 1, 1) if tag == "int" else tuple(it[1:4]) if tag == "slice"
                     else it[1])
        if tag == "int":
            p = it[1]
            k = a.chunk_of(p)
            lists.append([(k, p - a.start(k), None, a.inbound_len(k) == 1)])
            lens.append(1)
            n_int += 1
            continue
        if tag == "slice" and it[2] > 0 and (it[3] == 1 or a.chunk):
            # a run of cells, or a strided slice over regular chunks: its chunks are counted
            # now and projected only when listed
            start, count, step = it[1], it[2], it[3]
            lo = start if step > 0 else start + (count - 1) * step
            hi = start + (count - 1) * step if step > 0 else start
            lists.append(None)
            # a step of at least a chunk hits one chunk per cell; a shorter one skips no chunk
            lens.append(count if abs(step) >= a.chunk > 0 else a.chunk_of(hi) - a.chunk_of(lo) + 1)
            # many chunks of a regular axis: an entry made per chunk as it is listed
            lazy.append((ax, functools.partial(
                SliceRuns, start, count, step, a.size, a.chunk) if a.chunk and lens[-1] >= LAZY_MIN
                else functools.partial(_indexing.project_slice, start, count, step, a.size,
                                       a.chunk, a.offsets)))
            out_shape.append(count)
            positions.append((start, count, step))
        elif tag == "slice":
            positions.append((it[1], it[2], it[3]))
            lists.append(_indexing.project_slice(it[1], it[2], it[3], a.size, a.chunk, a.offsets))
            lens.append(len(lists[-1]))
            out_shape.append(it[2])
        else:           # counted now, projected (a step per chunk) only when listed
            groups = _array_groups(it[1], a)
            lists.append(None)
            lazy.append((ax, functools.partial(_project_array, it[1], a, groups)))
            lens.append(len(groups[3]) - 1)
            if len(it) > 2:
                view = (len(out_shape), it[2])
            out_shape.append(it[1].shape[0])
            positions.append(it[1])
            n_arr += 1
        outmap.append(ax)

    nchunks = math.prod(lens)
    # numpy would broadcast several arrays (or an array and ints) together: every output
    # axis is then made an np.ix_-shaped array, so that the selection stays an outer product
    ix = n_arr > 1 or (n_arr and (n_int or n_new))
    guard = threading.Lock() if lazy or ix else None

    def project() -> list[list]:
        """The per-axis lists, the runs and index arrays projected on first use (by one
        thread: an axis leaves ``lazy`` only once its list is in place). A selection too large
        to read is refused by its count before this step per chunk."""
        nonlocal ix
        if lazy or ix:
            with guard:  # type: ignore[union-attr]
                while lazy:
                    ax, make = lazy[-1]
                    if nchunks and lens[ax] > MAX_CHUNKS:
                        raise SelectionSizeError(
                            f"{kind} selection: touches {lens[ax]} chunks along axis {ax}; at "
                            f"most {MAX_CHUNKS} are listed per axis: select less at a time")
                    lists[ax] = make() if nchunks else []
                    lazy.pop()
                if ix:
                    real = [ax for ax in outmap if ax >= 0]
                    for j, ax in enumerate(real):
                        n_chunk = g.axes[ax]
                        lists[ax] = [(k, _as_ix(cs, n_chunk.stored_len(k), j, len(real)),
                                      _as_ix(os, out_shape[outmap.index(ax)], j, len(real)), f)
                                     for k, cs, os, f in lists[ax]]
                    ix = False
        return lists
    simple_out = not n_int and not n_new

    def combos(order: np.ndarray | None) -> Iterator[tuple]:
        ls_all = project()
        if order is None:
            return product(ls_all)

        def blocks() -> Iterator[Iterator[tuple]]:
            """The combinations of a block of the order at a time, made axis by axis (no
            Python call per chunk)."""
            for b in range(0, len(order), 4096):
                at = np.unravel_index(order[b:b + 4096], lens)
                yield zip(*[[ls[i] for i in ix.tolist()] for ls, ix in zip(ls_all, at)])
        return itertools.chain.from_iterable(blocks())

    # a selection of one cell gets a trailing Ellipsis on both sides, so that both
    # out[out_sel] and chunk[chunk_sel] are 0-d views rather than scalar copies
    tail = (Ellipsis,) if not any(ax >= 0 for ax in outmap) else ()

    def build(combo: tuple) -> ChunkProjection:
        if not combo:                   # a 0-d array: its one chunk
            coords = chunk_sel = outs = ()
            full: tuple = ()
        else:
            coords, chunk_sel, outs, full = zip(*combo)     # one pass over the axes
        if not simple_out:
            outs = tuple([combo[i][2] if i >= 0 else 0 for i in outmap])
        return ChunkProjection(coords, chunk_sel + tail, outs + tail, all(full))

    def it(order: np.ndarray | None) -> Iterator[ChunkProjection]:
        return map(build, combos(order))

    def at(i: int) -> ChunkProjection:
        combo = []
        for entries, n in zip(reversed(project()), reversed(lens)):
            i, r = divmod(i, n)
            combo.append(entries[r])
        return build(tuple(combo[::-1]))

    ids: list[np.ndarray] = []     # per axis: the chunk number of each entry, made once

    def axis_ids() -> list[np.ndarray]:
        if not ids:          # (two threads may both make them: the same arrays)
            ids[:] = [entries.chunk_ids() if isinstance(entries, SliceRuns) else
                      np.array([e[0] for e in entries], dtype=np.int64)
                      for entries in project()]
        return ids

    def coords_at(idx: np.ndarray) -> np.ndarray:
        ks = ids or axis_ids()
        if not ks:
            return np.zeros((len(idx), 0), dtype=np.int64)
        return np.stack([k[u] for k, u in zip(ks, np.unravel_index(idx, lens))], axis=1)

    def coords() -> np.ndarray:
        ks = ids or axis_ids()
        if not ks:
            return np.zeros((nchunks, 0), dtype=np.int64)
        # the outer product of the axes' chunk numbers, C order (numpy's meshgrid stops at 32
        # dimensions; arrays may have 64)
        return np.stack([np.tile(np.repeat(k, math.prod(lens[ax + 1:])), math.prod(lens[:ax]))
                         for ax, k in enumerate(ks)], axis=1)

    def cells() -> tuple[list[np.ndarray], list[np.ndarray | None], list[int]]:
        ks = ids or axis_ids()
        maps: list[np.ndarray | None] = []
        fed = iter(zip([ax for ax in outmap if ax >= 0], positions))
        for ax in outmap:
            if ax < 0:
                maps.append(None)
                continue
            ax, pos = next(fed)
            if isinstance(pos, tuple):
                start, count, step = pos
                pos = start + np.arange(count, dtype=np.int64) * step
            a = g.axes[ax]
            k = pos // a.chunk if a.offsets is None else \
                np.searchsorted(a.offsets, pos, side="right") - 1
            maps.append(np.searchsorted(ks[ax], k))
        return ks, maps, [ax for ax in outmap if ax >= 0]

    plan = SelectionPlan(kind, tuple(out_shape), nchunks, it, at, coords,
                         tuple(box) if box else None, coords_at)
    plan.cells = cells
    plan.view = view
    plan.picks = tuple(picks) if picks and nchunks else None
    return plan


# ------------------------------------------------------------------- coordinate / mask plans

def _plan_points(points: list[np.ndarray], bshape: tuple[int, ...], g: ChunkGridIndex,
                 kind: str) -> SelectionPlan:
    """Group flat point coordinates by chunk; ``out_sel`` holds flat output positions."""
    if g.ndim == 0:   # the one cell (or, for a false 0-d mask, nothing)
        n = 0 if bshape == (0,) else 1
        one = ChunkProjection((), (), (0,), True)
        return SelectionPlan(kind, tuple(bshape), n, lambda order: iter([one][:n]), lambda i: one,
                             lambda: np.zeros((n, 0), dtype=np.int64))
    if g.ndim > MAX_POINT_NDIM:
        raise IndexingError(f"{kind} selection: expected an array of at most {MAX_POINT_NDIM} "
                            f"dimensions (numpy indexes with at most {MAX_POINT_NDIM} index "
                            f"arrays), found {g.ndim}")
    npts = int(points[0].shape[0])
    # each temporary is as long as the points: dropped as soon as it has served, so planning
    # millions of points holds the points, the order and two more arrays at most
    ids = [_indexing.chunk_ids(p, a.chunk, a.offsets)[0] for p, a in zip(points, g.axes)]
    lin = ravel(ids, g.nchunks)
    del ids
    perm = None if npts < 2 or bool(np.all(lin[1:] >= lin[:-1])) else \
        _indexing.stable_order(lin, math.prod(g.nchunks))
    slin = lin if perm is None else lin[perm]
    del lin
    bounds = _indexing.group_bounds(slin)
    nchunks = len(bounds) - 1
    first = slin[bounds[:-1]]

    def block(gs: np.ndarray | None, g0: int = 0, g1: int = 0) -> list[ChunkProjection]:
        """The projections of the groups ``gs`` (an int64 array), or of ``g0`` to ``g1`` when
        ``gs`` is None: the chunk coordinates, chunk-local positions and coverage of the whole
        block worked out by a few numpy calls, then a few slices per chunk."""
        if gs is None:
            counts = np.diff(bounds[g0:g1 + 1])
            b0, b1 = int(bounds[g0]), int(bounds[g1])
            pos = np.arange(b0, b1, dtype=np.int64) if perm is None else perm[b0:b1]
            lins = first[g0:g1]
        else:
            counts = bounds[gs + 1] - bounds[gs]
            ends = np.cumsum(counts)
            # the groups' places in the sorted points, one after another
            take = np.arange(int(ends[-1]) if len(ends) else 0, dtype=np.int64) + \
                np.repeat(bounds[gs] - (ends - counts), counts)
            pos = take if perm is None else perm[take]
            lins = first[gs]
        cc = np.unravel_index(lins, g.nchunks)       # per axis, the groups' chunk coordinates
        local: list[np.ndarray] = []
        inb: list[np.ndarray] = []
        region = np.ones(len(counts), dtype=np.float64)   # (a comparison only: no overflow)
        for p, a, k in zip(points, g.axes, cc):
            if a.chunk:
                start = k * a.chunk
                n = np.minimum(a.chunk, a.size - start)
            else:
                start = a.offsets[k]
                n = np.minimum(a.offsets[k + 1], a.size) - start
            local.append(p[pos] - np.repeat(start, counts))
            inb.append(n)
            region *= n
        rel = np.concatenate(([0], np.cumsum(counts))).tolist()
        coords = np.stack(cc, axis=1).tolist()
        # a chunk is covered only when it has at least as many points as cells inside the array
        maybe = set(np.flatnonzero(counts >= region).tolist())
        out = []
        for j, c in enumerate(coords):
            s, t = rel[j], rel[j + 1]
            loc = tuple([v[s:t] for v in local])
            full = False
            if j in maybe:
                nb = tuple([int(v[j]) for v in inb])
                full = _covers(ravel(loc, nb), t - s, math.prod(nb))
            out.append(ChunkProjection(tuple(c), loc, (pos[s:t],), bool(full)))
        return out

    def at(gi: int) -> ChunkProjection:
        return block(None, gi, gi + 1)[0]

    def blocks(order: np.ndarray | None) -> Iterator[list[ChunkProjection]]:
        """Blocks of at most POINT_BLOCK chunks and (unless one chunk holds more) POINT_CELLS
        points: a block's arrays are a bounded part of the points' length."""
        if order is None:
            a = 0
            while a < nchunks:
                b = int(np.searchsorted(bounds, bounds[a] + POINT_CELLS, side="right")) - 1
                b = min(max(b, a + 1), a + POINT_BLOCK, nchunks)
                yield block(None, a, b)
                a = b
            return
        for a in range(0, nchunks, POINT_BLOCK):
            gs = order[a:a + POINT_BLOCK].astype(np.int64, copy=False)
            before = np.concatenate(([0], np.cumsum(bounds[gs + 1] - bounds[gs])))
            s = 0
            while s < len(gs):
                e = int(np.searchsorted(before, before[s] + POINT_CELLS, side="right")) - 1
                e = max(e, s + 1)
                yield block(gs[s:e])
                s = e

    def it(order: np.ndarray | None) -> Iterator[ChunkProjection]:
        return itertools.chain.from_iterable(blocks(order))

    def coords() -> np.ndarray:
        return np.stack(np.unravel_index(first, g.nchunks), axis=1).astype(np.int64) \
            if nchunks else np.zeros((0, g.ndim), dtype=np.int64)

    def coords_at(idx: np.ndarray) -> np.ndarray:
        return np.stack(np.unravel_index(first[idx], g.nchunks), axis=1).astype(np.int64)

    plan = SelectionPlan(kind, tuple(bshape), nchunks, it, at, coords, coords_at=coords_at)
    plan.points = (points, perm, bounds, first, g.nchunks)
    return plan
