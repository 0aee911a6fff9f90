"""Decode many stored chunks of one buffer at once, with no Python object per chunk; encode
many gathered chunks at once, with no Python call per chunk where the codecs have batch
kernels.

:func:`decode_many` decodes the chunks a :class:`~zarrx.codecs.plan.CodecPipeline` reads that
lie in one buffer (a shard's bytes, or the stored chunks of a read joined), described by two
int64 arrays, into the rows of one array. Each stage takes all the chunks in one call: a
``crc32c`` verifies every checksum in one kernel call, raw chunks are copied by another, zstd
frames decoded by :func:`~zarrx.codecs.zstd.decompress_many`, blosc and deflate streams by
their one-buffer kernel called straight in a loop, transpositions (a Zarr v2 array of
order "F") undone for all the chunks with one copy, and filters that decode a stack of chunks
(``decode_stack``) undone for all of them at once; any other chain runs ``plan.decode`` chunk
by chunk, as does every chain when a chunk fails or a filter declines the stack (to word the
error, and to give the items, as reading each chunk alone would).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from zarrx.codecs._rows import copy_spans
from zarrx.errors import ZarrError

if TYPE_CHECKING:
    from zarrx.codecs.plan import CodecPipeline

__all__ = ["decode_many", "encodes_rows", "encode_rows"]


def decode_many(plan: CodecPipeline, buf: Any, starts: np.ndarray, lengths: np.ndarray,
                out: np.ndarray, located: Callable[[int, BaseException], ZarrError]) -> None:
    """Decode chunk ``i`` (``buf[starts[i]:starts[i] + lengths[i]]``) into ``out[i]`` for
    every ``i`` whose start is not -1 (the caller fills the rows of the others afterwards:
    a byte swap may pass over them). ``out`` is
    C-contiguous of ``plan``'s dtype and shape ``(len(starts),) + plan.chunk_shape``; the
    spans lie inside ``buf``. A chunk that does not decode raises ``located(i, error)``, the
    error ``plan.decode`` of it raises: the first such chunk in order.

    Each stage decodes every chunk in one call where it can (:func:`_batched`); when one
    cannot, or a chunk fails in one, the chunks are decoded one by one with ``plan.decode``,
    which words the first failure."""
    if not len(starts):
        return
    src = np.frombuffer(buf, dtype=np.uint8)
    if _batched(plan, src, starts, lengths, out):
        return
    for i in np.flatnonzero(starts >= 0).tolist():
        s = int(starts[i])
        try:
            plan.decode(src[s:s + int(lengths[i])], out[i])
        except (ZarrError, MemoryError) as exc:
            raise located(i, exc) from None


def _batched(plan: CodecPipeline, src: np.ndarray, starts: np.ndarray, lengths: np.ndarray,
             out: np.ndarray) -> bool:
    """:func:`decode_many` with one call per stage for all the chunks: checksums verified by
    their ``verify_many``, the compressor's ``decode_many``, raw bytes copied by one kernel
    call (:func:`~zarrx.codecs._rows.copy_spans`). False
    when the chain has a stage with no such call (nothing decoded then) or a chunk fails in
    one (rows may be written)."""
    filtered = not plan.direct and not _transposed(plan)
    if filtered and not _filters_stack(plan):
        return False
    b2b = plan.b2b
    comp = b2b[0] if b2b and not b2b[0].codec.view_only else None
    for st in reversed(b2b[1:] if comp is not None else b2b):
        verify = getattr(st.codec, "verify_many", None)
        if verify is None:
            return False
        got = verify(src, starts, lengths, st.size)
        if got is None:
            return False
        starts, lengths = got
    # with transpositions, the chunks are decoded in their stored axis order, then laid out
    # in the array's with one copy for them all; with filters, as they store them
    dec = out if not plan.a2a else np.empty((len(starts), *plan.a2b_shape),
                                            dtype=plan.a2b_dtype)
    rows = dec.reshape(len(starts), -1).view(np.uint8)
    if comp is None:
        if copy_spans(src, starts, lengths, rows) >= 0:     # a chunk not nbytes long
            return False
    else:
        kernel = getattr(comp.codec, "decode_many", None)
        if kernel is None or kernel(src, starts, lengths, rows) is not None:
            return False
    if plan.swap:
        dec.byteswap(inplace=True)
    if filtered:
        if not _unfilter(plan, dec, starts, out):
            return False
    elif plan.a2a:
        for st in reversed(plan.a2a):   # each undone as its decode does, chunk axis kept first
            perm = np.argsort(st.codec.permutation(dec.ndim - 1))   # type: ignore[attr-defined]
            dec = dec.transpose([0, *(1 + perm)])
        out[...] = dec
    if plan.mask is not None:           # one item's mask: applied item by item
        items = out.reshape(-1).view(np.uint8).reshape(-1, plan.mask.size)
        np.bitwise_and(items, plan.mask, out=items)
    return True


def _filters_stack(plan: CodecPipeline) -> bool:
    """Whether ``plan`` is a chain :func:`_batched` decodes all at once but for array-to-array
    codecs that each decode a stack of chunks (``decode_stack``: the element-wise filters,
    ``delta``, ``packbits``, ``categorize``, ``transpose``): the ``bytes`` codec, any checksums
    and at most one compressor that decodes into a given buffer, over items that are not
    Python objects."""
    from zarrx.codecs.bytes_ import Bytes
    b2b = plan.b2b
    return bool(plan.a2a) and type(plan.a2b) is Bytes and not plan.a2b_dtype.hasobject \
        and not plan.dtype.hasobject \
        and all(getattr(st.codec, "decode_stack", None) is not None for st in plan.a2a) \
        and all(st.codec.view_only for st in b2b[1:]) \
        and (not b2b or b2b[0].codec.direct_into or b2b[0].codec.view_only)


def _unfilter(plan: CodecPipeline, dec: np.ndarray, starts: np.ndarray,
              out: np.ndarray) -> bool:
    """Undo the array-to-array codecs of ``plan`` (:func:`_filters_stack`) for the chunks
    whose start is not -1, the rows of ``dec`` as the ``bytes`` codec decoded them, into
    their rows of ``out``: each codec's ``decode_stack`` for them all, the items decoding
    each chunk alone gives. False, ``out`` untouched, when one of them declines
    (NotImplemented: a chunk whose result could differ, or that decoding it alone refuses)."""
    present = starts >= 0
    keep = None if present.all() else np.flatnonzero(present)
    if keep is not None and not keep.size:
        return True                     # no chunk of these is stored: nothing to undo
    arr = dec if keep is None else dec[keep]
    for st in reversed(plan.a2a):
        arr = st.codec.decode_stack(arr, st.dtype, st.shape)   # type: ignore[attr-defined]
        if arr is NotImplemented:
            return False
    if keep is None:
        np.copyto(out, arr, casting="unsafe")
    else:
        out[keep] = arr
    return True


def _transposed(plan: CodecPipeline) -> bool:
    """Whether ``plan`` is a chain :func:`_batched` decodes all at once but for transpositions
    before it (a Zarr v2 array of order "F", a ``transpose`` codec): the ``bytes`` codec, any
    checksums and at most one compressor that decodes into a given buffer."""
    from zarrx.codecs.bytes_ import Bytes
    from zarrx.codecs.transpose import Transpose
    b2b = plan.b2b
    return bool(plan.a2a) and all(type(st.codec) is Transpose for st in plan.a2a) \
        and type(plan.a2b) is Bytes and plan.a2b_dtype == plan.dtype and not plan.dtype.hasobject \
        and all(st.codec.view_only for st in b2b[1:]) \
        and (not b2b or b2b[0].codec.direct_into or b2b[0].codec.view_only)


def encodes_rows(plan: CodecPipeline) -> bool:
    """Whether :func:`encode_rows` encodes chunks of ``plan``: no array-to-array codec, the
    ``bytes`` codec in native order (a chunk's encoding starts from its C-order bytes) over
    items that are not Python objects, and chunks no bytes-to-bytes codec refuses by size."""
    if plan.a2a or plan.a2b.name != "bytes" or plan.swap or plan.a2b_dtype.hasobject \
            or plan.dtype != plan.a2b_dtype or not plan.nbytes:
        return False
    return _sized(plan)


def encodes_laid_out(plan: CodecPipeline) -> bool:
    """Whether :func:`encode_rows` encodes chunks of ``plan`` once :func:`stored_rows` has
    laid them out: as :func:`encodes_rows`, but with any array-to-array codecs before the
    ``bytes`` codec (transpositions: a Zarr v2 array of order "F", ``transpose`` codecs; and
    filters such as ``delta``, ``astype``, ``fixedscaleoffset``, which may change the items'
    type) and either byte order."""
    from zarrx.codecs.bytes_ import Bytes
    if type(plan.a2b) is not Bytes or plan.a2b_dtype.hasobject or plan.dtype.hasobject \
            or not plan.nbytes:
        return False
    return _sized(plan)


def _transposes(plan: CodecPipeline) -> bool:
    """Whether every array-to-array codec of ``plan`` is a ``transpose`` (or there is none)
    and the items keep their type: :func:`stored_rows` lays all the chunks out at once."""
    from zarrx.codecs.transpose import Transpose
    return all(type(st.codec) is Transpose for st in plan.a2a) and plan.dtype == plan.a2b_dtype


def _sized(plan: CodecPipeline) -> bool:
    """Whether no bytes-to-bytes codec of ``plan`` refuses its chunks by size."""
    return all(st.codec.max_input is None or st.size is None or st.size <= st.codec.max_input
               for st in plan.b2b)


def stored_rows(plan: CodecPipeline, chunks: np.ndarray) -> np.ndarray:
    """The bytes the ``bytes`` codec of ``plan`` (:func:`encodes_laid_out`) makes of each of
    ``chunks`` (``(k, *chunk_shape)`` of the plan's dtype) as the rows of a ``(k, n)`` uint8
    C-contiguous array: the chunks themselves when the plan has no array-to-array codec and
    keeps the native byte order; a copy transposed by each ``transpose`` in turn (one pass for
    all of them) and byte-swapped for the other byte order when its array-to-array codecs are
    transpositions; else each chunk encoded by them and the ``bytes`` codec in turn."""
    k = len(chunks)
    if not plan.a2a and not plan.swap and plan.dtype == plan.a2b_dtype:
        return np.ascontiguousarray(chunks).reshape(k, -1).view(np.uint8)
    if not _transposes(plan):
        stacked = _filtered_stack(plan, chunks)
        if stacked is not None:
            return stacked
        # other filters: each chunk through them and the ``bytes`` codec, as plan.encode
        # takes it (a few calls per chunk), into one row each
        first = _filtered(plan, chunks[0])
        out = np.empty((k, len(first)), dtype=np.uint8)
        out[0] = np.frombuffer(first, dtype=np.uint8)
        for i in range(1, k):
            out[i] = np.frombuffer(_filtered(plan, chunks[i]), dtype=np.uint8)
        return out
    arr = chunks
    for st in plan.a2a:                 # as each encodes, the chunk axis kept first
        perm = st.codec.permutation(arr.ndim - 1)   # type: ignore[attr-defined]
        arr = arr.transpose([0, *(1 + np.asarray(perm))])
    out = np.ascontiguousarray(arr)
    if plan.swap:
        out = out.byteswap(inplace=out is not chunks)
    return out.reshape(k, -1).view(np.uint8)


def _filtered_stack(plan: CodecPipeline, chunks: np.ndarray) -> np.ndarray | None:
    """:func:`_filtered` of every one of ``chunks`` as the rows of a ``(k, n)`` uint8 array,
    made at once when each array-to-array codec encodes a stack of chunks (``encode_stack``:
    ``delta``, ``fixedscaleoffset``, ``astype``, ``quantize``, ``bitround``, ``categorize``,
    ``packbits``; each gives the items encoding every chunk alone gives, or NotImplemented);
    None otherwise."""
    arr = chunks
    for st in plan.a2a:
        stack = getattr(st.codec, "encode_stack", None)
        arr = NotImplemented if stack is None else stack(arr)
        if arr is NotImplemented:
            return None
    rows = np.frombuffer(plan.a2b.encode(arr), dtype=np.uint8).reshape(len(chunks), -1)
    return rows if rows.flags.writeable else rows.copy()


def _filtered(plan: CodecPipeline, chunk: np.ndarray) -> Any:
    """The bytes the ``bytes`` codec of ``plan`` makes of ``chunk`` once its array-to-array
    codecs have encoded it (what ``plan.encode`` hands its bytes-to-bytes codecs)."""
    arr = chunk
    for st in plan.a2a:
        arr = st.codec.encode(arr)
    return plan.a2b.encode(arr)


def encode_rows(plan: CodecPipeline, rows: np.ndarray, stored: bool, skip: np.ndarray
                ) -> list[bytes | None]:
    """``plan.encode`` of the chunks whose C-order bytes are the rows of ``rows`` (``(k, n)``
    uint8, C-contiguous; with ``stored``, each row already followed by the 4 bytes of its
    CRC-32C, the plan being ``bytes`` and ``crc32c`` alone), None for those ``skip`` marks
    (a bool array of ``k``). Each bytes-to-bytes codec encodes all the rows in one call
    (:meth:`~zarrx.codecs.base.BytesToBytesCodec.encode_many`)."""
    stages = plan.b2b[1:] if stored else plan.b2b
    if not stages:                      # the rows are what is stored: sliced from one copy
        whole, n = rows.tobytes(), rows.shape[1]
        return [None if s else whole[i * n:i * n + n] for i, s in enumerate(skip.tolist())]
    bufs: Any = rows
    keep = skip
    for st in stages:
        bufs = st.codec.encode_many(bufs, keep)
        keep = None
    return bufs
