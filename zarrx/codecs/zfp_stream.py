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
fixed-rate stream: its rate; the 64-bit expert form of the mode: at most 2**15). A stream
shorter than that minimum for all of its blocks is cut short, and refused.

Encoding trusts its configuration too: in fixed-rate mode (``mode`` 2) a rate giving a block
fewer bits than its sign and exponent take (9 for float32, 12 for float64; 1 for integers)
makes zfp write past its buffer, and one giving more than 2**15 bits cannot be stored in the
stream's header, which then describes another rate than the data (the values read back are
wrong). :func:`check_rate` refuses both before zfp is called.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from zarrx.errors import CodecError

__all__ = ["check_rate", "checked_stream"]

_HEADER_BYTES = 24              # magic (32 bits), field (52), mode (12 or 64): 148 bits
_SLACK = 16                     # the word zfp reads ahead, and one for rounding
_MAX_MINBITS = 1 << 15          # the largest minimum bits per block the mode can hold
_SHORTEST_HEADER_BITS = 96      # magic, field and the 12-bit form of the mode


def _least_bits(header: dict[str, Any]) -> int:
    """The minimum bits a block the header's mode declares (zfpy reports it in every mode:
    1 unless fixed-rate or expert); the most the mode can hold when it is not an int."""
    try:
        least = header["config"]["expert"]["minbits"]
    except (KeyError, TypeError):
        return _MAX_MINBITS
    return least if isinstance(least, int) and 1 <= least <= _MAX_MINBITS else _MAX_MINBITS


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
    least = _least_bits(header)
    if _SHORTEST_HEADER_BITS + blocks * least > 8 * len(raw):
        raise CodecError(f"{name}: the zfp stream is cut short: {len(raw)} bytes, but its "
                         f"header asks for at least {least} bits for each of the chunk's "
                         f"{blocks} blocks")
    most = 18 + 8 * dtype.itemsize * 3 * 4 ** len(dims)
    need = _HEADER_BYTES + _SLACK + blocks * -(-max(most, least) // 64) * 8
    return raw if len(raw) >= need else raw + bytes(need - len(raw))


_FIXED_RATE = 2                 # zfpy.mode_fixed_rate
_SIGN_EXPONENT = {np.dtype(np.float32): 9, np.dtype(np.float64): 12}


def check_rate(name: str, config: dict[str, Any], dtype: np.dtype, ndim: int) -> None:
    """CodecError (naming ``name``) when ``config`` (numcodecs' ``ZFPY``) asks for a fixed rate
    zfp cannot encode a ``ndim``-dimensional array of ``dtype`` at (see above)."""
    if config.get("mode", None) != _FIXED_RATE:
        return
    rate = config.get("rate", -1)
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not rate >= 0:
        return          # zfpy leaves a negative (unset) rate alone; numcodecs refuses a str
    size = 4 ** max(ndim, 1)
    least = _SIGN_EXPONENT.get(dtype.newbyteorder("="), 1)
    bits = math.floor(size * rate + 0.5) if math.isfinite(rate) else None
    if bits is None or not least <= bits <= _MAX_MINBITS:
        raise CodecError(f"{name}: rate {rate!r}: zfp encodes a {ndim}-d array of {dtype} at "
                         f"a rate from {(least - 0.5) / size:g} to {(_MAX_MINBITS + 0.49) / size:g} "
                         f"bits a value ({least} to {_MAX_MINBITS} bits a block of {size} "
                         f"values); other rates make it write past its buffer or store a rate "
                         f"its header cannot hold")
