"""The inner chunks of a shard that a box write covers in part, with no Python call per chunk
the box covers whole: those chunks are cut from the value and encoded together (one call per
codec, :func:`zarrx.chunk_write.encode_views`); only the chunks at the box's edges (covered in
part, or reaching past the array's end) get a chunk projection, and are merged with what is
stored inside the shard's update as :func:`zarrx.chunk_write.write_from` merges them.

What is stored is byte for byte what ``write_from`` stores given the shard's projections: the
same bytes for every chunk (all fill: left out of the shard), the same merges, the same chunks
outside the array dropped. A chunk that does not encode sends the shard back to ``write_from``,
which words the error about its chunk.
"""
from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from zarrx import _pool, shard_merge
from zarrx.chunk_io import ArrayIO, _located
from zarrx.chunk_write import _encode_one, _outside_units, encode_views
from zarrx.errors import StoreError, ZarrError
from zarrx.indexing import ChunkProjection
from zarrx.store.chunks import PARTIAL

__all__ = ["ENABLED", "in_part"]

#: False: shards a box covers in part go through ``write_from`` with a projection per chunk
#: (the tests compare what both ways store)
ENABLED = True


class Axes:
    """What :func:`in_part` needs of a write's box, worked out once for all the shards it
    touches: per axis, for each shard position along it (``o``), the chunks the box covers
    whole (a range), their cells in the box (slices), the edge chunks (``(k, chunk slice,
    value slice, full)``: one or two at most) and whether the shard reaches past the array's
    end; and whether the edge chunks may be merged together (:func:`shard_merge.mergeable`)."""

    __slots__ = ("per_axis", "mergeable")

    def __init__(self, io: ArrayIO, box: list[tuple[int, int]]) -> None:
        chunk, ratio, size = io.chunk_shape, io.object_ratio, io.meta.shape
        self.per_axis: list[dict[int, tuple[range, list[slice], list[tuple], bool]]] = []
        for r, c, (a, b), n in zip(ratio, chunk, box, size):           # type: ignore[arg-type]
            along = {}
            for o in range(a // (c * r), -(-b // (c * r))):
                k0, k1 = max(o * r, a // c), min(o * r + r, (b - 1) // c + 1)
                i0 = max(k0, -(-a // c))
                i1 = max(i0, min(k1, b // c))   # (b <= n: a chunk past the array's end: an edge)
                outs = []
                for k in [*range(k0, min(i0, k1)), *range(max(i1, k0), k1)]:
                    lo, hi, end = max(a, k * c), min(b, k * c + c), min(k * c + c, n)
                    outs.append((k, slice(lo - k * c, hi - k * c), slice(lo - a, hi - a),
                                 lo == k * c and hi == end))
                along[o] = (range(i0, i1), [slice(k * c - a, k * c + c - a)
                                            for k in range(i0, i1)],
                            outs, o * r + r > -(-n // c))
            self.per_axis.append(along)
        self.mergeable = shard_merge.mergeable(io)


def in_part(io: ArrayIO, src: np.ndarray, box: list[tuple[int, int]], obj: tuple[int, ...],
            raw_fill: bytes | None, parallel: bool, axes: Axes | None = None
            ) -> tuple[list, Any, bool] | None:
    """The items and ``finish`` of ``io.source.commit`` for the stored object ``obj`` (a
    shard of small chunks a write :func:`zarrx.chunk_write._batches` takes), which the box
    ``box`` of cells covers in part, its cells being ``src`` (of the box's shape), and whether
    a chunk is merged with what is stored (covered in part). None when a chunk it covers whole
    does not encode (``write_from`` then words the error). ``axes``: the write's
    :class:`Axes` (made here when not given)."""
    chunk = io.chunk_shape
    if axes is None:
        axes = Axes(io, box)
    per = [along[o] for along, o in zip(axes.per_axis, obj)]
    inner = [p[0] for p in per]             # per axis: the chunks the box covers whole
    edge = [p[2] for p in per]              # and the others: (k, chunk slice, value slice, full)
    past = any([p[3] for p in per])         # whether the shard reaches past the array's end
    coords = list(itertools.product(*inner))
    made: list = []
    if coords:
        views = [src[sel] for sel in itertools.product(*[p[1] for p in per])]
        made = _encoded(io, views, raw_fill, parallel)         # type: ignore[assignment]
        if made is None:
            return None
    projs = _edge_projections(inner, edge, chunk, box) \
        if any(edge) else []                                    # type: ignore[arg-type]
    shape = io.chunk_shape
    if not projs:                           # every chunk covered whole: nothing to merge
        items = list(zip(coords, made))
        if past and len(items) < io.units_per_object:
            items += [(c, None) for c in _outside_units(io, obj, coords)]
        return items, _unused, False
    items = [(p.coords, PARTIAL) for p in projs]
    borders = [j for j, p in enumerate(projs) if p.full]
    for j in borders:                       # a border chunk: cells past the array's end fill
        p = projs[j]
        try:
            items[j] = p.coords, _encode_one(io, io.plan(shape), p, shape, None, src, False,
                                             raw_fill)
        except (ZarrError, MemoryError) as exc:
            raise _located(exc, io, p.coords, shape)
    items += zip(coords, made)
    if past and len(items) < io.units_per_object:
        covered = coords + [projs[j].coords for j in borders]
        items += [(c, None) for c in _outside_units(io, obj, covered)]

    def finish(j: int, old: Any) -> Any:
        p = projs[j]
        try:
            return _encode_one(io, io.plan(shape), p, shape, old, src, False, raw_fill)
        except (ZarrError, MemoryError) as exc:
            raise _located(exc, io, p.coords, shape)

    if axes.mergeable:
        finish.many = lambda js, buf, starts, lengths: shard_merge.merge_many(  # type: ignore
            io, [projs[j] for j in js], buf, starts, lengths, src)
    return items, finish, len(borders) < len(projs)


def _unused(j: int, old: Any) -> Any:
    """The ``finish`` of a shard whose every chunk's new bytes are given."""
    raise StoreError("a shard write covering its chunks whole asked for an old chunk")


def _encoded(io: ArrayIO, views: list[np.ndarray], raw_fill: bytes | None,
             parallel: bool) -> list | None:
    """The new bytes (None: all fill) of the chunks ``views``, encoded together (split among
    the threads when ``parallel``); None when one does not encode."""
    if not parallel or len(views) < 2:
        return encode_views(io, views, raw_fill)
    made = _pool.run_batches(lambda vs: encode_views(io, vs, raw_fill), views, min_batch=2)
    return None if None in made else [v for part in made for v in part]


def _edge_projections(inner: list[range], edge: list[list[tuple]], chunk: tuple[int, ...],
                      box: list[tuple[int, int]]) -> list[ChunkProjection]:
    """The projections of the chunks not covered whole: for each axis ``d``, those at an edge
    along ``d`` and covered whole along the axes before it (each chunk once); made axis by
    axis, with no Python call per chunk."""
    whole = [[(k, slice(0, c), slice(k * c - a, k * c + c - a), True) for k in ks]
             for ks, c, (a, _) in zip(inner, chunk, box)]
    out: list[ChunkProjection] = []
    for d in range(len(chunk)):
        if not edge[d]:
            continue
        axes = whole[:d] + [edge[d]] + [w + e for w, e in zip(whole[d + 1:], edge[d + 1:])]
        parts = [itertools.product(*[[e[i] for e in ax] for ax in axes]) for i in range(4)]
        out += map(tuple.__new__, itertools.repeat(ChunkProjection),
                   zip(parts[0], parts[1], parts[2], map(all, parts[3])))
    return out
