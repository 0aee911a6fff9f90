"""A zfp stream (numcodecs' ``zfpy``) checked before the zfp library decodes it.

The zfp library trusts its input: it allocates the array its stream header describes and
reads the compressed bits without knowing where the buffer ends, so a stream whose header was
damaged, or that was cut short, makes it read past the buffer and can crash the process.
Before a chunk is handed to it, the header is read (``zfpy.header``) and must describe the
chunk (its shape and data type), and the stream is padded with zero bytes up to the most
that the decoder can read for an array of that shape: a damaged stream then decodes to wrong
values, or fails, but stays within its buffer.

The bound: zfp decodes the array block by block (blocks of 4**d values), and a block takes at
most 1 + 11 exponent bits + 6 precision bits + 3 * 4**d bits for each of its integer
precision's bit planes (a bit plane reads each value's bit at most once and one group bit
and one run bit per value), or the mode's minimum bits per block when that is more (a
fixed-rate stream: its rate; the 64-bit expert form of the mode: at most 2**15).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from zarrx.errors import CodecError

__all__ = ["checked_stream"]

_HEADER_BYTES = 24              # magic (32 bits), field (52), mode (12 or 64): 148 bits
_SLACK = 16                     # the word zfp reads ahead, and one for rounding
_MAX_MINBITS = 1 << 15          # the largest minimum bits per block the mode can hold


def _block_bits(dims: int, itemsize: int, header: dict[str, Any]) -> int:
    size = 4 ** dims
    most = 18 + 8 * itemsize * 3 * size
    mode = header.get("mode")
    if mode == "rate":
        least = math.ceil(float(header["config"]["rate"]) * size) + 1
    elif mode in ("tolerance", "precision", "reversible"):
        least = 1
    else:                       # the expert form: whatever minimum it declares
        least = _MAX_MINBITS
    return max(most, least)


def checked_stream(name: str, data: Any, dtype: np.dtype, shape: tuple[int, ...]) -> bytes:
    """The zfp stream ``data`` of a chunk of ``shape`` and ``dtype``, padded for decoding;
    CodecError (naming ``name``) when its header does not describe that chunk."""
    import zfpy
    raw = bytes(data)
    head = raw if len(raw) >= _HEADER_BYTES + _SLACK else \
        raw + bytes(_HEADER_BYTES + _SLACK - len(raw))
    try:
        header = zfpy.header(head)
    except Exception as exc:
        raise CodecError(f"{name}: not a zfp stream with a header ({len(raw)} bytes): "
                         f"{type(exc).__name__}: {exc}") from None
    dims = tuple(int(header[k]) for k in ("nw", "nz", "ny", "nx") if int(header[k]))
    try:
        found = np.dtype(header["type"])
    except TypeError:
        found = None
    # (a 0-d chunk, or one zarr-python hands over flat, is a 1-d stream of its item count)
    flat = len(dims) == 1 and dims[0] == math.prod(shape)
    if (dims != tuple(shape) and not flat) or found is None or \
            found != dtype.newbyteorder("="):
        raise CodecError(f"{name}: the zfp stream's header describes an array of shape "
                         f"{dims} and type {found}; expected the chunk's shape {tuple(shape)} "
                         f"and type {dtype}")
    blocks = math.prod((n + 3) // 4 for n in dims)
    need = _HEADER_BYTES + _SLACK + blocks * \
        -(-_block_bits(len(dims), dtype.itemsize, header) // 64) * 8
    return raw if len(raw) >= need else raw + bytes(need - len(raw))
