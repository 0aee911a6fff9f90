"""DEFLATE codecs: ``gzip`` (v3 core and numcodecs) and ``zlib`` (numcodecs)."""
from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from zarrx.codecs.base import Buffer, BytesToBytesCodec, as_u8
from zarrx.errors import CodecError

__all__ = ["Gzip", "Zlib"]


def _lib() -> Any:
    from zarrx.codecs import _zlib
    return _zlib


def _inflate_bounded(src: memoryview, wrapper: str, limit: int, where: str) -> bytes:
    """Inflate a stream of unknown decoded size, refusing more than ``limit`` bytes."""
    import zlib
    wbits = {"zlib": 15, "gzip": 31, "raw": -15}[wrapper]
    d = zlib.decompressobj(wbits)
    try:
        out = d.decompress(src, limit + 1)
        if len(out) > limit:
            raise CodecError(f"{where}: {wrapper}: decoded data exceeds the limit of {limit} bytes")
        if not d.eof:
            raise CodecError(f"{where}: {wrapper}: truncated stream (no end of stream after "
                             f"{src.nbytes} bytes)")
        if d.unused_data:
            raise CodecError(f"{where}: {wrapper}: {len(d.unused_data)} bytes of trailing data "
                             f"after the end of stream")
    except zlib.error as exc:
        raise CodecError(f"{where}: {wrapper}: corrupt stream ({exc})") from None
    return out


class _Deflate(BytesToBytesCodec):
    wrapper: ClassVar[str] = "zlib"
    direct_into = True
    default_level: ClassVar[int] = 1

    level: int

    def __init__(self, level: int | None = None) -> None:
        self._configure(level=self.default_level if level is None else level)

    def configuration(self) -> dict[str, Any]:
        return {"level": self.level}

    def max_encoded_size(self, n: int | None) -> int | None:
        # deflateBound: stored blocks cost 5 bytes per 16 KiB at worst, plus wrapper bytes
        return None if n is None else n + (n >> 12) + (n >> 14) + (n >> 25) + 13 + 18

    def encode(self, data: Buffer) -> Buffer:
        return _lib().compress(as_u8(data), self.level, self.wrapper)

    def decode(self, data: Buffer, expected: int | None, limit: int, where: str) -> Buffer:
        src = as_u8(data)
        if expected is None:
            return _inflate_bounded(src, self.wrapper, limit, where)
        try:            # allocates only a size the stream's length can decode to
            return _lib().decompress(src, expected, self.wrapper)
        except CodecError as exc:
            raise CodecError(f"{where}: {exc}") from None

    def decode_into(self, data: Buffer, dst: np.ndarray, where: str) -> None:
        try:
            _lib().decompress_into(as_u8(data), dst, self.wrapper)
        except CodecError as exc:
            raise CodecError(f"{where}: {exc}") from None


class Gzip(_Deflate):
    """``gzip``: DEFLATE in the gzip container (RFC 1952); ``level`` 0..9 (default 5, as
    zarr-python's; numcodecs' GZip defaults to 1)."""

    name = "gzip"
    wrapper = "gzip"
    default_level = 5


class Zlib(_Deflate):
    """numcodecs ``zlib``: DEFLATE in the zlib container (RFC 1950); ``level`` -1..9 (-1:
    zlib's default)."""

    name = "numcodecs.zlib"
    wrapper = "zlib"
    default_level = 1
