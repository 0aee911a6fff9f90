"""numcodecs ``lz4``: an LZ4 block behind a 4-byte little-endian decoded-size header."""
from __future__ import annotations

from typing import Any

import numpy as np

from zarrx.codecs.base import Buffer, BytesToBytesCodec, as_u8, check_size
from zarrx.errors import CodecError

__all__ = ["LZ4"]


def _lib() -> Any:
    from zarrx.codecs import _lz4
    return _lz4


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
        return _lib().compress(as_u8(data), max(1, self.acceleration))

    def _header(self, src: memoryview, expected: int | None, limit: int, where: str) -> int:
        if src.nbytes < 4:
            raise CodecError(f"{where}: lz4: expected a 4-byte size header, "
                             f"found {src.nbytes} bytes")
        n = int.from_bytes(src[:4], "little", signed=True)
        if n < 0:
            raise CodecError(f"{where}: lz4: header claims a negative decoded size {n}")
        check_size(where, "lz4", n, expected, limit)
        return n

    def decode(self, data: Buffer, expected: int | None, limit: int, where: str) -> Buffer:
        src = as_u8(data)
        n = self._header(src, expected, limit, where)
        try:            # allocates only a size the block's length can decode to
            return _lib().decompress(src, n)
        except CodecError as exc:
            raise CodecError(f"{where}: {exc}") from None

    def _into(self, src: memoryview, dst: np.ndarray, where: str) -> None:
        try:
            _lib().decompress_into(src, dst)
        except CodecError as exc:
            raise CodecError(f"{where}: {exc}") from None

    def decode_into(self, data: Buffer, dst: np.ndarray, where: str) -> None:
        src = as_u8(data)
        self._header(src, dst.shape[0], dst.shape[0], where)
        self._into(src, dst, where)
