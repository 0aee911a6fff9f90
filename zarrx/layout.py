"""Where an array's chunks live: the chunk source, the visit order, and the stored objects.

The one place that turns an array's lowered :class:`~zarrx.metadata.model.ChunkLayout` into
store-level objects. The array and chunk I/O ask it and never look at sharding themselves.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Iterator

import numpy as np

from zarrx import _pool
from zarrx.errors import ZarrError
from zarrx.metadata.model import ArrayMeta
from zarrx.shard_objects import encoded_objects
from zarrx.store.base import Store
from zarrx.store.chunks import ChunkSource, Coords, KeyedChunks, SizeLimit
from zarrx.store.sharded import ShardedChunks
from zarrx.size_limits import shard_limit, unit_limit

__all__ = ["chunk_source", "visit_order", "stored_objects", "empty_outside",
           "outside_boxes"]

_LAST = 2**63 - 1       # no axis is longer: the end of every cell position


def chunk_source(store: Store, path: str, meta: ArrayMeta) -> ChunkSource:
    """The chunk source of the array at ``path`` (``""`` for the root): its read units, over
    its stored objects. A stored object longer than any encoding of what it holds is refused
    without being read whole (:mod:`zarrx.size_limits`)."""
    prefix = f"{path}/" if path else ""
    units = _limit(unit_limit, meta, path)
    if not meta.layout.sharded:
        return KeyedChunks(store, prefix, meta.key_encoding, ndim=meta.ndim, name=path,
                           limit=units)
    objects = KeyedChunks(encoded_objects(store, meta, path), prefix, meta.key_encoding,
                          ndim=meta.ndim, name=path, limit=_limit(shard_limit, meta, path))
    return ShardedChunks(objects, meta.layout, name=path, unit_limit=units)


def _limit(limit: Callable[[ArrayMeta, str], SizeLimit], meta: ArrayMeta, path: str
           ) -> Callable[[], SizeLimit | None]:
    """``limit(meta, path)`` when first asked for; None when the array's codecs cannot be
    resolved (decoding a chunk then says what is wrong with them, as it always has)."""
    @functools.cache            # worked out once (threads racing at first use agree)
    def get() -> SizeLimit | None:
        try:
            return limit(meta, path)
        except ZarrError:
            return None
    return get


def visit_order(meta: ArrayMeta) -> list[tuple[int, ...]] | None:
    """The shard-major visit order for selections (read units per shard per axis, outermost
    level first), or None for C order: each shard is then assembled once per write and
    consecutive reads hit the same cached index."""
    return meta.layout.shard_major


def stored_objects(source: ChunkSource) -> Iterator[Coords]:
    """Coordinates of the stored objects (chunks, or shards when sharded) in the grid of
    stored objects."""
    return source.objects.list_chunks()


def empty_outside(source: ChunkSource, meta: ArrayMeta,
                  clear: Callable[[tuple[slice, ...]], None]) -> int:
    """Leave no data stored outside ``meta.shape`` (after a shrink): ``clear(box)`` for each
    part outside it of every stored object straddling its edge, then delete the objects wholly
    outside it. ``clear`` sets ``box`` (array coordinates, within one object: slices, or for a
    shard per-axis index arrays of the cells of its stored read units there, an orthogonal
    selection) to the fill value; an object's boxes are disjoint. Returns how many objects were
    deleted."""
    grid = meta.chunk_grid.chunk_shape            # type: ignore[attr-defined]
    shape = meta.shape
    dead, across = [], []
    for c in stored_objects(source):
        if any(ci * cs >= n for ci, cs, n in zip(c, grid, shape)):
            dead.append(c)
        elif any((ci + 1) * cs > n for ci, cs, n in zip(c, grid, shape)):
            across.append(c)
    across.sort()

    def clear_one(i: int) -> None:          # the objects in parallel, the boxes of one in turn
        start = tuple(ci * cs for ci, cs in zip(across[i], grid))
        held = _stored_units(source, across[i], meta)
        for box in outside_boxes(start, grid, shape):
            if held is None:
                clear(box)
                continue
            # only the cells of the read units stored there: per axis, those units' cells
            # in the box (their outer product meets no more read units than the box does)
            unit = meta.layout.read_shape
            # (ends past 2**63 - 1, where an axis' last object reaches, end there)
            picks = [np.concatenate([np.arange(max(c * u, b.start),
                                               min((c + 1) * u, b.stop, _LAST),
                                               dtype=np.int64) for c in cs]
                                    or [np.zeros(0, dtype=np.int64)])
                     for cs, u, b in zip(held, unit, box)]
            if all(len(p) for p in picks):
                clear(tuple(picks))

    _pool.run_shared(clear_one, len(across))
    if dead:
        source.objects.set_chunks([(c, None) for c in dead])
    return len(dead)


def _stored_units(source: ChunkSource, obj: Coords, meta: ArrayMeta
                  ) -> list[list[int]] | None:
    """Per axis, the coordinates of the read units stored in the shard ``obj`` that reach
    outside ``meta.shape``, found from its index; None when ``source`` is not sharded.
    Clearing outside the shape needs nothing else: a shard of millions of inner chunks holding
    a few is cleared at the cost of those few."""
    present_in = getattr(source, "present_in", None)
    unit = meta.layout.read_shape
    if present_in is None or not unit:
        return None
    outside = [u for u in present_in(obj)
               if any((c + 1) * s > n for c, s, n in zip(u, unit, meta.shape))]
    return [sorted({u[a] for u in outside}) for a in range(len(unit))]


def outside_boxes(start: tuple[int, ...], size: tuple[int, ...],
             shape: tuple[int, ...]) -> Iterator[tuple[slice, ...]]:
    """The part outside ``shape`` of the box at ``start`` of ``size`` (which starts inside it),
    as disjoint boxes: for each axis it crosses, the part beyond ``shape`` on that axis and
    inside it on the axes before."""
    ndim = len(shape)
    for i in range(ndim):
        if start[i] + size[i] > shape[i]:
            yield tuple(slice(start[j], min(start[j] + size[j], shape[j])) if j < i else
                        slice(shape[j], start[j] + size[j]) if j == i else
                        slice(start[j], start[j] + size[j]) for j in range(ndim))
