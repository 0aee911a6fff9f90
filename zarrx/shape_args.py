"""The shape and chunk-shape arguments of array creation, read as zarr-python reads them:
``shape=`` as a tuple of ints, ``chunks=`` (``"auto"``, an int, a tuple, edge lengths) as a
chunk shape, and the automatic chunk shape zarr-python picks; and ``create``'s
``dimension_separator=``, the layout of the chunk keys."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from zarrx.errors import ArgumentError, ArgumentTypeError, MetadataError
from zarrx.metadata._util import short
from zarrx.metadata.grid import AxisEdges
from zarrx.metadata.dtype_input import resolve_dtype

__all__ = ["shape_arg", "chunks_arg", "create_chunks", "auto_chunks", "separator_encoding"]


def shape_arg(shape: Any) -> tuple[int, ...]:
    """The ``shape`` argument of a call as a tuple of ints (an int is one axis), or an
    ArgumentError (ArgumentTypeError for values that are not ints, as zarr-python raises)."""
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        out = tuple(int(s) for s in shape)
        ints = all(_is_int(s) for s in shape)
    except (TypeError, ValueError, OverflowError):
        ints = False
    if not ints or any(s < 0 for s in out):   # not ints: a TypeError, as in zarr-python
        raise (ArgumentError if ints else ArgumentTypeError)(
            f"shape: expected a tuple of non-negative ints, found {shape!r}")
    if math.prod(out) >= 2**63 or any(s >= 2**63 for s in out):
        raise ArgumentError(f"shape: expected at most 2**63-1 elements and along each axis, "
                            f"found {shape!r}")
    return out


def chunks_arg(chunks: Any, shape: tuple[int, ...], dtype: Any, *, sharded: bool = False,
               zarr_format: int = 3) -> Any:
    """The chunk shape ``chunks=`` of ``create_array`` asks for, for an array of ``shape``
    and ``dtype`` (``sharded``: the inner chunks of a sharded array)."""
    if chunks is None or (isinstance(chunks, str) and chunks == "auto"):
        # as zarr-python: inner chunks of about 1 MiB at most when sharded
        return auto_chunks(shape, _item_size(dtype, zarr_format),
                           max_bytes=1 << 20 if sharded else 64 << 20)
    if isinstance(chunks, (str, bytes)):
        raise ArgumentTypeError(f"chunks: expected a tuple of positive ints or 'auto', found "
                                f"{chunks!r}")
    if isinstance(chunks, (int, np.integer)) and not isinstance(chunks, bool):
        c = int(chunks)                 # every axis; -1 is a whole axis, as in a tuple
        if c >= 2**63:
            raise ArgumentError(f"chunks: expected a positive int below 2**63, found {chunks!r}")
        # kept when longer than an axis, as in zarr-python: an array made empty to be grown
        # by append (shape=(0,), chunks=1000) keeps the chunk length it asked for
        return _positive(tuple(max(s, 1) if c == -1 else c for s in shape), chunks, shape)
    if isinstance(chunks, Sequence) and any(_edges(c) for c in chunks):
        # rectilinear: the edge lengths of each axis (an int for a regular one)
        # an axis's edges as a grid holds them (AxisEdges: positive ints in run-length form)
        # stay so: listing them would cost a step per chunk, millions for a tiny document
        if not all(_is_int(x) for c in chunks if not isinstance(c, AxisEdges)
                   for x in (c if _edges(c) else (c,))):
            raise ArgumentTypeError(f"chunks: expected a tuple of positive ints or of edge "
                                    f"lengths per axis, found {short(chunks)}")
        return tuple(c if isinstance(c, AxisEdges) else tuple(int(x) for x in c) if _edges(c)
                     else int(c) for c in chunks)
    try:
        items = tuple(chunks)
    except TypeError:
        items = (chunks,)
    if any(not _is_int(c) and c is not None for c in items):       # 2.5 would not truncate
        raise ArgumentTypeError(f"chunks: expected a tuple of positive ints, found "
                                f"{short(chunks)}")
    if len(items) != len(shape):        # (a ValueError, as zarr-python raises)
        raise ArgumentError(f"chunks: expected {len(shape)} chunk sizes (one per dimension of "
                            f"shape {shape}), found {short(chunks)}")
    chunks = items
    out = tuple(int(c) if c not in (None, -1) else max(s, 1) for c, s in zip(chunks, shape))
    if any(isinstance(c, int) and c >= 2**63 for c in out):
        raise ArgumentError(f"chunks: expected a tuple of positive ints below 2**63, found "
                            f"{chunks!r}")
    return _positive(out, chunks, shape)


def _positive(out: tuple, given: Any, shape: tuple[int, ...]) -> tuple:
    """``out`` (the chunk shape ``given`` resolves to), refused when an entry is not positive
    (-1 and None, a whole axis, are resolved before), but for a 0 along an axis of length 0,
    which zarr-python creates (``shape=(0, 5), chunks=(0, 5)``) and which holds no chunks."""
    if any(isinstance(c, int) and c <= 0 and not (c == 0 and i < len(shape) and shape[i] == 0)
           for i, c in enumerate(out)):
        raise ArgumentError(f"chunks: expected positive ints (-1 or None for a whole axis, 0 "
                            f"on an axis of length 0), found {given!r} for shape {shape}")
    return out


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _edges(c: Any) -> bool:
    """A rectilinear axis of ``chunks=``: a sequence of edge lengths (a string is not one)."""
    return isinstance(c, Sequence) and not isinstance(c, (str, bytes))


def create_chunks(chunks: Any, shape: Any) -> Any:
    """``chunks=`` of ``create`` and the functions built on it (``zeros``, ``open``, ...), as
    zarr-python reads it there: ``True`` or ``None`` for automatic chunks, ``False`` for one
    chunk, an int for every axis, fewer sizes than axes for whole chunks along the rest, and
    regular dask-style edge lengths (``((2, 2, 1), (3, 3))``) for their first edge."""
    if chunks is True or chunks is None:
        return "auto"
    shape = shape_arg(shape)
    if chunks is False:
        return (-1,) * len(shape)
    if isinstance(chunks, (str, bytes)) or not isinstance(chunks, Sequence):
        return chunks
    chunks = tuple(chunks)
    if chunks and all(isinstance(c, Sequence) and not isinstance(c, (str, bytes)) for c in chunks):
        if all(c and all(_is_int(x) for x in c) and all(x == c[0] for x in c[:-1])
               and c[-1] <= c[0] for c in chunks):
            chunks = tuple(c[0] for c in chunks)        # regular: a regular grid
    if len(chunks) < len(shape) and all(_is_int(c) or c is None for c in chunks):
        chunks += (-1,) * (len(shape) - len(chunks))    # (else refused as given)
    return chunks


def _item_size(dtype: Any, zarr_format: int) -> int:
    """Bytes per element for choosing chunk shapes: 1 for variable-length types (strings,
    bytes, objects), as zarr-python counts them. ``dtype`` is anything ``create_array``
    takes: a numpy dtype, a Zarr v3 data type name or JSON object, ..."""
    try:
        dt, _ = resolve_dtype(dtype, zarr_format)
    except MetadataError:
        return 1                     # refused, naming the dtype, when the metadata is made
    return 1 if dt.variable or dt.itemsize == 0 else dt.itemsize


def auto_chunks(shape: tuple[int, ...], itemsize: int, *, min_bytes: int = 128 << 10,
                max_bytes: int = 64 << 20, step: int = 256 << 10) -> tuple[int, ...]:
    """The chunk shape zarr-python picks for ``chunks="auto"``, so that both make the same
    stored layout from the same arguments.

    The goal grows with the array: ``step`` bytes times 2 ** log10(array size in MiB),
    clipped to ``[min_bytes, max_bytes]``. Starting from the whole array (empty axes count
    as 1), the axes are halved in turn, rounding up, until a chunk is below the goal or
    within half of it, and below ``max_bytes``, or holds a single element."""
    if itemsize == 0:
        return tuple(shape)
    chunks = [max(int(s), 1) for s in shape]
    size = math.prod(chunks) * itemsize
    goal = step * 2 ** math.log10(size / (1 << 20))
    goal = min(max(goal, min_bytes), max_bytes)
    axis = 0
    while True:
        nbytes = math.prod(chunks) * itemsize
        if (nbytes < goal or abs(nbytes - goal) / goal < 0.5) and nbytes < max_bytes:
            break
        if not chunks or math.prod(chunks) == 1:
            break
        i = axis % len(chunks)
        chunks[i] = -(-chunks[i] // 2)
        axis += 1
    return tuple(chunks)


def separator_encoding(separator: Any, chunk_key_encoding: Any, zarr_format: int) -> dict:
    """``create(dimension_separator=...)`` as the chunk key encoding of ``zarr_format``
    (``default`` for Zarr v3, ``v2`` for Zarr v2, with that separator); refused beside a
    ``chunk_key_encoding`` (which would win, dropping the separator without a word)."""
    if chunk_key_encoding is not None:
        raise ArgumentError("create: pass dimension_separator= or chunk_key_encoding=, not both")
    if not isinstance(separator, str) or separator not in ("/", "."):
        error = ArgumentError if isinstance(separator, str) else ArgumentTypeError
        raise error(f"create: dimension_separator: expected '/' or '.', found {separator!r}")
    return {"name": "default" if zarr_format == 3 else "v2", "separator": separator}
