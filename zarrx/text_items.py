"""Fixed-length text items read from chunks: every code unit must be a Unicode code point.

numpy's ``U<n>`` (Zarr v3 ``fixed_length_utf32``, Zarr v2 ``<U<n>``) items are UTF-32 code
units taken from the stored bytes as they are. A unit above ``0x10FFFF`` is no code point: numpy
holds it, but turning the item into a ``str`` (indexing one item, printing, ``tolist()``) raises
``SystemError``. A read checks the text it hands out once, and a unit out of range is a
:class:`~zarrx.errors.CodecError` naming the stored object it came from.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from zarrx.chunk_io import ArrayIO, _located
from zarrx.errors import CodecError

__all__ = ["holds_text", "check_text"]

LAST_CODE_POINT = 0x10FFFF


def holds_text(dtype: np.dtype) -> bool:
    """Whether items of ``dtype`` hold ``U`` text (itself, a field or a field's subarray)."""
    if dtype.names is not None:
        return any(holds_text(dtype.fields[name][0]) for name in dtype.names)
    if dtype.subdtype is not None:
        return holds_text(dtype.subdtype[0])
    return dtype.kind == "U"


def _largest_unit(values: np.ndarray) -> int:
    """The largest UTF-32 code unit in the text of ``values`` (0 when it holds none)."""
    dt = values.dtype
    if values.size == 0:
        return 0
    if dt.names is not None:
        return max(_largest_unit(values[name]) for name in dt.names)
    if dt.kind != "U":
        return 0
    unit = np.dtype(np.uint32).newbyteorder(dt.byteorder)
    # the same item size: a view of any layout, each item as its code units
    return int(values.view(np.dtype((unit, dt.itemsize // 4))).max())


def _error(dtype: np.dtype, found: int) -> CodecError:
    return CodecError(f"expected text of Unicode code points (at most 0x{LAST_CODE_POINT:X}) "
                      f"in items of {dtype}, found code unit 0x{found:X}")


def check_text(io: ArrayIO, plan: Any, out: np.ndarray) -> None:
    """Raise CodecError, located at the first chunk holding it, when the text read into ``out``
    by ``plan`` (a :class:`~zarrx.indexing.SelectionPlan`) has a code unit past the last code
    point. One pass over ``out``; the chunks are looked at only when something is wrong."""
    found = _largest_unit(out)
    if found <= LAST_CODE_POINT:
        return
    # a field's subarray adds axes after those the plan indexes
    target = out.reshape((-1, *out.shape[len(plan.out_shape):])) if plan.flat else out
    for p in plan.chunks:
        part = _largest_unit(np.asarray(target[p.out_sel]))
        if part > LAST_CODE_POINT:
            raise _located(_error(out.dtype, part), io, p.coords, io.shape_of(p.coords))
    raise _error(out.dtype, found).at(array=io.key)
