"""Stored bytes checked against the chunk they should decode to, before its buffer exists.

A reader allocates a chunk's decoded buffer at the size its metadata declares and decodes into
it. Stored bytes that cannot decode to that size (a blosc or lz4 header stating another size,
zstd frames declaring another content size, a deflate stream too short to inflate that far, a
chunk of raw items of another length) are refused by each codec's decoder; :func:`check_stored`
runs the same checks first, without decoding or allocating, so that such bytes never cost a
buffer of the declared size (a 100-byte object where a 16 GiB chunk belongs costs nothing).

Only the outer codecs can be checked this way: each bytes->bytes codec from the outermost in
says what it can of its input (:meth:`~zarrx.codecs.base.BytesToBytesCodec.check_stored`), and
a checksum hands the next codec its data (stripped, not verified: the decoder verifies it).
Chunks below :data:`~zarrx.codecs.plan.CHECK_FIRST_BYTES` are not checked (callers test the
size first, and load this module only for larger chunks): their buffer costs less than the
check.
"""
from __future__ import annotations

from math import prod
from typing import TYPE_CHECKING, Any

from zarrx.codecs.base import as_u8
from zarrx.codecs.bytes_ import Bytes
from zarrx.codecs.transpose import Transpose
from zarrx.errors import CodecError, ZarrError

if TYPE_CHECKING:
    from zarrx.codecs.plan import CodecPipeline

__all__ = ["check_stored", "wrong_serialised"]


def check_stored(plan: "CodecPipeline", data: Any, key: str = "") -> None:
    """Refuse the stored chunk ``data`` of ``plan`` (raising what decoding it would) when its
    headers or its length say it cannot decode to the chunk's size; ``key``, when given, is set
    as the ``key`` of the error. Nothing is allocated."""
    try:
        buf = as_u8(data)
        for st in reversed(plan.b2b):
            if st.size is None and not st.codec.view_only:    # a compressed size
                return
            buf = st.codec.check_stored(buf, st.size)
            if buf is None:
                return
        if isinstance(plan.a2b, Bytes):         # a fixed size: the chunk's serialised items
            if buf.nbytes != prod(plan.a2b_shape) * plan.a2b_dtype.itemsize:
                raise wrong_serialised(plan, buf.nbytes)
    except ZarrError as exc:
        exc.at(key=key or None)
        raise


def wrong_serialised(plan: "CodecPipeline", found: int) -> CodecError:
    """The error for ``found`` bytes where the ``bytes`` codec of ``plan`` serialises its
    chunk's items. The chunk is named by its shape as the array declares it: when transposes
    (a Zarr v2 array of order "F", ``transpose`` codecs) permute its axes before ``bytes``,
    with the shape they store it in beside it (when another), never that alone."""
    dt, shape = plan.a2b_dtype, plan.a2b_shape
    n = prod(shape) * dt.itemsize
    shown = f"{shape}"
    steps = [*(st.shape for st in plan.a2a), shape]     # the shape each stage receives
    moved = [type(st.codec) is Transpose for st in plan.a2a]
    if shape != plan.chunk_shape and any(moved) \
            and all(m or steps[i] == steps[i + 1] for i, m in enumerate(moved)):
        shown = f"{plan.chunk_shape} (stored transposed as {shape})"
    return CodecError(f"expected {n} bytes for a chunk of shape {shown} and data type {dt}, "
                      f"found {found}")
