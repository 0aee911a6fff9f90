"""Data stored outside an array's shape, as :func:`zarrx.tools.check.check` finds it: what a
shrink by a writer that does not clear it (zarr-python 3, tensorstore) leaves in the stored
objects straddling the new edge, which a later grow would read back instead of the fill value.

The objects wholly outside the array's grid are orphaned chunks, found from their keys; this
module looks inside the objects straddling the edge: the inner chunks of a shard wholly outside
the shape (found from its index), and the cells outside the shape of a chunk or inner chunk
that are not the fill value (found by decoding it). A repair clears them as zarrx's shrink does
(:meth:`zarrx.Array.resize`).

Cells are compared only where decoding gives back each stored value: a codec run by numcodecs
that zarrx does not build in (zfp's modes, all lossy, mix the values of a block, so the fill
value stored past the edge can decode as other numbers; a plugin may be lossy too; ``pcodec``
is lossless) leaves them unchecked, and a repair never rewrites such an object, which would
encode its values once more with their loss.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from zarrx.array import Array
from zarrx.chunk_io import fill_scalar
from zarrx.errors import ZarrError
from zarrx.layout import outside_boxes
from zarrx.metadata._util import short
from zarrx.metadata.codec_table import codec_info
from zarrx.metadata.model import ArrayMeta, RegularGrid
from zarrx.tools.shards import get_shard, inner_blocks, object_blocks, one_level, read_index, \
    stored_inner_blocks

__all__ = ["decodes_exactly", "edge_view", "straddles", "stored_outside"]

_GROW = "a grow would read {} back instead of the fill value"


def edge_view(arr: Array) -> Array | None:
    """``arr`` with its shape reaching the end of the stored objects at its edge, through which
    what they store outside the shape is read; None for an array whose stored objects end
    where its shape does (a rectilinear grid, which cannot be resized)."""
    meta = arr.metadata
    if not isinstance(meta.chunk_grid, RegularGrid) or meta.layout.read_shape is None:
        return None
    return arr._reaching_object_ends(meta)


#: codecs run by numcodecs that decode each value as stored
_EXACT_PLUGINS = ("numcodecs.pcodec",)


def decodes_exactly(meta: ArrayMeta) -> bool:
    """Whether every codec of ``meta`` gives back the values its chunks were encoded from
    where they hold the fill value (see the module docstring)."""
    specs = list(meta.layout.read_codecs)
    for level in meta.shard_levels:
        specs += [*level.outer_codecs, *level.object_codecs]
    for spec in specs:
        info = codec_info(spec.name)
        if info is not None and isinstance(info.impl, str) and \
                info.impl.startswith("zarrx.codecs.numcodecs_plugin:") and \
                spec.name not in _EXACT_PLUGINS:
            return False
    return True


def straddles(meta: ArrayMeta, coords: tuple[int, ...]) -> bool:
    """Whether the stored object at ``coords`` (in the grid of stored objects, a regular grid)
    starts inside the array's shape and ends outside it on some axis."""
    step = meta.chunk_grid.chunk_shape            # type: ignore[attr-defined]
    return all(c * s < n for c, s, n in zip(coords, step, meta.shape)) and \
        any((c + 1) * s > n for c, s, n in zip(coords, step, meta.shape))


def stored_outside(arr: Array, view: Array, key: str, coords: tuple[int, ...]
                   ) -> tuple[list[tuple[str | None, str]], bool]:
    """``(inner chunk or None, what was found)`` for each read unit of the stored object
    ``key`` at ``coords`` (which :func:`straddles` the edge of ``arr``'s shape; ``view`` is
    its :func:`edge_view`) holding data outside the shape, and whether the object (a chunk,
    not a shard) was decoded whole without error. A read unit that does not decode is left to
    the check of the object."""
    meta = arr.metadata
    cdata = view.cdata_shape
    sharded = meta.layout.sharded
    if not sharded:
        sel = object_blocks(view.metadata, coords, cdata)
        assert sel is not None
        units: Any = [(None, sel)]
    elif one_level(meta):
        try:
            got = get_shard(arr.store, meta, arr.path, key)
        except ZarrError:
            return [], False
        entries = None if got is None else read_index(got[0], meta)[0]
        if entries is None:
            return [], False
        units = stored_inner_blocks(view.metadata, coords, cdata, entries)
    else:
        units = inner_blocks(view.metadata, coords, cdata)
    read = meta.layout.read_shape
    assert read is not None
    shape = meta.shape
    found: list[tuple[str | None, str]] = []
    whole = exact = decodes_exactly(meta)
    for inner, sel in units:
        origin = tuple(s.start * r for s, r in zip(sel, read))
        if all(o + r <= n for o, r, n in zip(origin, read, shape)):
            continue                        # wholly inside
        beyond = any(o >= n for o, n in zip(origin, shape))
        if beyond and one_level(meta):      # stored, says the index: no need to decode it
            found.append((inner, f"stored wholly outside the array's shape {shape}: "
                                 f"{_GROW.format('it')}"))
            continue
        if not exact:                       # not decoded: the object's own check decodes it
            continue
        try:
            values = view.get_block_selection(sel)
        except ZarrError:
            whole = False
            continue
        if beyond:
            if not view._io.is_fill(values):
                found.append((inner, f"values other than the fill value {_fill(meta)} stored "
                                     f"wholly outside the array's shape {shape}: "
                                     f"{_GROW.format('them')}"))
            continue
        boxes = [box for box in outside_boxes(origin, read, shape)
                 if not view._io.is_fill(values[tuple(slice(b.start - o, b.stop - o)
                                                      for b, o in zip(box, origin))])]
        if boxes:
            where = ", ".join("[" + ", ".join(f"{b.start}:{b.stop}" for b in box) + "]"
                              for box in boxes)
            found.append((inner, f"values other than the fill value {_fill(meta)} stored "
                                 f"outside the array's shape {shape}, in {where}: "
                                 f"{_GROW.format('them')}"))
    return found, whole and not sharded


def _fill(meta: ArrayMeta) -> str:
    value = fill_scalar(meta)
    return short(value.item() if isinstance(value, np.generic) else value, 40)
