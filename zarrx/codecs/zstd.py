"""The ``zstd`` codec (v3 registered extension, numcodecs ``zstd``)."""
from __future__ import annotations

import re
from typing import Any

import numpy as np

from zarrx.codecs.base import Buffer, BytesToBytesCodec, as_u8
from zarrx.errors import CodecError

__all__ = ["Zstd"]


def _lib() -> Any:
    from zarrx.codecs import _zstd
    return _zstd


class Zstd(BytesToBytesCodec):
    """``zstd``: ``level`` (-131072..22, 0 = library default) and ``checksum`` (a frame
    content checksum, verified on decode)."""

    name = "zstd"
    direct_into = True

    level: int
    checksum: bool

    def __init__(self, level: int = 0, checksum: bool = False) -> None:
        self._configure(level=level, checksum=checksum)

    def configuration(self) -> dict[str, Any]:
        return {"level": self.level, "checksum": self.checksum}

    def max_encoded_size(self, n: int | None) -> int | None:
        if n is None:
            return None
        return n + (n >> 8) + ((128 * 1024 - n) >> 11 if n < 128 * 1024 else 0)

    def encode(self, data: Buffer) -> Buffer:
        return _lib().compress(as_u8(data), self.level, self.checksum)

    def decode(self, data: Buffer, expected: int | None, limit: int, where: str) -> Buffer:
        src = as_u8(data)
        try:
            if expected is not None:
                return _lib().decompress(src, expected)
            return self._decode_unknown(src, limit, where)
        except CodecError as exc:
            raise CodecError(f"{where}: {exc}") from None

    def _decode_unknown(self, src: memoryview, limit: int, where: str) -> bytes:
        """Variable-length chunks: the decoded size is not known in advance. Trust a declared
        content size only up to ``limit``; without one, grow a bounded output geometrically."""
        lib = _lib()
        cs = lib.content_size(src)
        if cs is not None:
            if cs > limit:
                raise CodecError(f"zstd header claims {cs} decoded bytes, more than the limit "
                                 f"of {limit}")
            try:
                return lib.decompress(src, cs)
            except CodecError as exc:
                if "expected" not in str(exc) or "after the frame" in str(exc):
                    raise
                # several frames: fall through to the bounded search
        limit = min(limit, lib.MAX_RATIO * src.nbytes)     # no frame expands more
        size = min(limit, max(1 << 16, 4 * src.nbytes))
        while True:
            try:
                return lib.decompress(src, size)
            except CodecError as exc:
                m = _SHORT.search(str(exc))
                if m is not None and int(m.group(1)) < size:
                    return lib.decompress(src, int(m.group(1)))
                if "more than" not in str(exc) or size >= limit:
                    if size >= limit and "more than" in str(exc):
                        raise CodecError(f"zstd: decoded data exceeds the limit of {limit} "
                                         f"bytes") from None
                    raise
                size = min(limit, size * 4)

    def decode_into(self, data: Buffer, dst: np.ndarray, where: str) -> None:
        try:
            _lib().decompress_into(as_u8(data), dst)
        except CodecError as exc:
            raise CodecError(f"{where}: {exc}") from None


_SHORT = re.compile(r"decodes? to (\d+) bytes, expected")
