"""numcodecs ``lz4``: an LZ4 block behind a 4-byte little-endian decoded-size header.

The kernel (:mod:`zarrx.codecs._lz4`) reports a failure as a status code and numbers;
:func:`_message` words it, and the functions below are the kernel's calls with that done.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from zarrx.codecs.base import Buffer, BytesToBytesCodec, as_u8, check_size, out_u8
from zarrx.codecs.status import KernelStatus, call, common_message
from zarrx.errors import CodecError

__all__ = ["LZ4", "check", "compress", "decompress", "decompress_into"]


def _lib() -> Any:
    from zarrx.codecs import _lz4
    return _lz4


def _message(st: KernelStatus) -> str:
    """The message of an lz4 kernel status: the one place they are worded."""
    k = _lib()
    c, v = st.code, st.values
    common = common_message(k, st, "lz4", "the compressed block")
    if common is not None:
        return common
    if c == k.ACCELERATION:
        return f"lz4: acceleration {v[0]} is out of range, expected 1..{v[1]}"
    if c == k.TOO_LARGE:
        return f"lz4: input of {v[0]} bytes is larger than the LZ4 block limit of {v[1]} bytes"
    if c == k.COMPRESS_FAILED:
        return f"lz4: compressing {v[0]} bytes failed (status {v[1]})"
    if c == k.SHORT:
        return f"lz4: input of {v[0]} bytes is shorter than the 4-byte size header"
    if c == k.DECLARED:
        return f"lz4: header declares {v[0]} decoded bytes, expected {v[1]}"
    if c == k.BLOCK_LIMIT:
        return (f"lz4: block of {v[0]} bytes decoding to {v[1]} bytes exceeds the LZ4 block "
                f"limit of {v[2]} bytes")
    if c == k.CORRUPT:
        return (f"lz4: corrupt block ({v[0]} bytes, expected to decode to {v[1]} bytes; liblz4 "
                f"status {v[2]})")
    if c == k.SIZE:
        return f"lz4: block decodes to {v[0]} bytes, expected {v[1]}"
    return f"lz4: kernel status {c} {v}"  # pragma: no cover - every code is worded above


def compress(src: Buffer, acceleration: int = 1) -> bytes:
    """The size header and LZ4 block of ``src``."""
    return call(_message, _lib().compress, src, acceleration)


def decompress(src: Buffer, expected: int) -> bytes:
    """The block of ``src``, whose header and content must both say ``expected`` bytes."""
    return call(_message, _lib().decompress, src, expected)


def check(src: Buffer, expected: int) -> None:
    """Refuse ``src`` when its header (or its length) says it cannot decode to ``expected``
    bytes (nothing is allocated or decoded)."""
    call(_message, _lib().check, src, expected)


def decompress_into(src: Buffer, dst: Any) -> None:
    """Decode the block of ``src`` into the writable bytes ``dst``, filling it exactly."""
    call(_message, _lib().decompress_into, src, dst)


class LZ4(BytesToBytesCodec):
    """numcodecs ``lz4``: ``acceleration`` >= 1 (higher is faster, compresses less)."""

    name = "numcodecs.lz4"
    direct_into = True
    max_input = 0x7E000000        # LZ4_MAX_INPUT_SIZE
    acceleration: int

    def __init__(self, acceleration: int = 1) -> None:
        self._configure(acceleration=acceleration)

    def configuration(self) -> dict[str, Any]:
        return {"acceleration": self.acceleration}

    def max_encoded_size(self, n: int | None) -> int | None:
        return None if n is None else 4 + n + n // 255 + 16

    def encode(self, data: Buffer) -> Buffer:
        return compress(as_u8(data), max(1, self.acceleration))

    def _header(self, src: memoryview, expected: int | None, limit: int) -> int:
        if src.nbytes < 4:
            raise CodecError(f"lz4: expected a 4-byte size header, found {src.nbytes} bytes")
        n = int.from_bytes(src[:4], "little", signed=True)
        if n < 0:
            raise CodecError(f"lz4: header claims a negative decoded size {n}")
        _check_not_a_frame(src, n, expected)
        check_size("lz4", n, expected, limit)
        return n

    def decode(self, data: Buffer, expected: int | None, limit: int) -> Buffer:
        src = as_u8(data)
        n = self._header(src, expected, limit)
        return decompress(src, n)       # allocates only a size the block's length can decode to

    def check_stored(self, data: memoryview, expected: int) -> None:
        src = as_u8(data)
        self._header(src, expected, expected)
        check(src, expected)

    def decode_into(self, data: Buffer, dst: np.ndarray) -> None:
        src, dst = as_u8(data), out_u8("lz4", dst)
        self._header(src, dst.shape[0], dst.shape[0])
        decompress_into(src, dst)


#: the magic number starting an lz4 frame (0x184D2204, little-endian)
FRAME_MAGIC = b"\x04\x22\x4d\x18"


def _check_not_a_frame(src: memoryview, n: int, expected: int | None) -> None:
    """Refuse an lz4 frame, which numcodecs' block format reads as a size header of
    407,708,164 bytes: when those bytes are not the expected size, or more than a block of
    ``src``'s length can decode to."""
    if bytes(src[:4]) != FRAME_MAGIC:
        return
    if expected is None and n <= src.nbytes * _lib().MAX_RATIO or expected == n:
        return
    want = "" if expected is None else f", expected {expected}"
    raise CodecError(f"lz4: the bytes start with the lz4 frame magic number 0x184D2204 (read as "
                     f"the size header: {n} decoded bytes{want}): they are an lz4 frame (as the "
                     "lz4 command line tool and lz4.frame write), not the size-prefixed lz4 "
                     "block numcodecs' LZ4 codec reads")
