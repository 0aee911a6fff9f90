"""The inner chunks of a shard that a write covers in part, merged together: decoded from the
stored shard into the rows of one buffer, the value's cells assigned, and encoded by each codec
in one call, inside the shard's update (see :func:`zarrx.store.shard_write.merge_shard`).

They are the bytes :func:`zarrx.chunk_write.write_from` makes chunk by chunk (decode, merge,
encode); any chunk that does not decode or encode sends them all back that way, which words
the error about its chunk.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from zarrx._gather import is_all_rows
from zarrx.chunk_io import ArrayIO, _assign
from zarrx.errors import ZarrError
from zarrx.metadata.grid import MAX_NDIM

__all__ = ["mergeable", "merge_many"]


def mergeable(io: ArrayIO) -> bool:
    """Whether the partial inner chunks of a write :func:`merge_many` may take (besides what
    ``chunk_write._batches`` asks of the write): fixed-size items other than booleans (stored
    bytes other than 0 and 1 are made 0 and 1, one chunk at a time), codecs ``encode_rows``
    takes once laid out by ``stored_rows``; chunks of fewer than numpy's 64 dimensions (they
    are stacked on one more axis)."""
    if (io.dtype.kind == "b" or io.units_per_object == 1 or not io.chunk_shape
            or len(io.chunk_shape) >= MAX_NDIM):
        return False
    from zarrx.codecs.plan_many import encodes_laid_out     # codecs load on first use
    return encodes_laid_out(io.plan(io.chunk_shape))


def merge_many(io: ArrayIO, projs: list, buf: Any, starts: np.ndarray, lengths: np.ndarray,
               src: np.ndarray) -> list | None:
    """The new bytes (None: all fill) of the chunks of ``projs``, each covered in part by the
    write of ``src``: chunk ``i`` stored as ``buf[starts[i]:starts[i] + lengths[i]]`` (start
    -1: missing, the fill value). None when one does not decode or encode."""
    from zarrx.codecs.plan_many import decode_many, encode_rows, stored_rows
    shape = io.chunk_shape
    plan = io.plan(shape)                            # type: ignore[arg-type]
    k = len(projs)
    try:
        dec = np.empty((k, *shape), dtype=io.dtype)  # type: ignore[misc]
        if (starts >= 0).any():
            decode_many(plan, buf, starts, lengths, dec, _unlocated)
        missing = starts < 0
        if missing.any():
            dec[missing] = io.fill
        for row, p in zip(dec, projs):
            _assign(row, p.chunk_sel, src, p.out_sel)
        if io.write_empty_chunks:
            skip = np.zeros(k, dtype=bool)
        else:
            skip = is_all_rows(dec.reshape(k, -1).view(np.uint8), io.fill_bytes)
        return list(encode_rows(plan, stored_rows(plan, dec), False, skip))
    except (ZarrError, MemoryError):
        return None


def _unlocated(i: int, exc: BaseException) -> BaseException:
    """A chunk that does not decode: the chunks go one by one, which locates the error."""
    return exc if isinstance(exc, (ZarrError, MemoryError)) else ZarrError(str(exc))
