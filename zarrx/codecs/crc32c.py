"""The ``crc32c`` codec: append a CRC-32C (Castagnoli) of the bytes, little endian."""
from __future__ import annotations

from zarrx.codecs.base import Buffer, BytesToBytesCodec, as_u8
from zarrx.errors import CodecError
from zarrx.metadata.model import CodecSpec

__all__ = ["Crc32c"]


def _crc(data: Buffer) -> int:
    from zarrx.codecs._crc32c import crc32c
    return crc32c(data)


class Crc32c(BytesToBytesCodec):
    """``crc32c``: 4 bytes of checksum after the data; decoding verifies and strips them."""

    name = "crc32c"
    view_only = True
    location: str

    def __init__(self, location: str = "end") -> None:
        self._configure("numcodecs.crc32c", location=location)   # numcodecs CRC32C(location)

    def configuration(self) -> dict:
        return {} if self.location == "end" else {"location": self.location}

    def to_spec(self) -> CodecSpec:
        """``crc32c``; ``numcodecs.crc32c`` for a checksum at the start (v3 has none there)."""
        name = "numcodecs.crc32c" if self.location == "start" else self._as or self.name
        return CodecSpec(name, self.configuration())

    def encoded_size(self, n: int | None) -> int | None:
        return None if n is None else n + 4

    def encode(self, data: Buffer) -> Buffer:
        mv = as_u8(data)
        crc = _crc(mv).to_bytes(4, "little")
        return b"".join((mv, crc) if self.location == "end" else (crc, mv))    # one copy

    def decode(self, data: Buffer, expected: int | None, limit: int) -> Buffer:
        mv = as_u8(data)
        n = mv.nbytes
        if n < 4:
            raise CodecError(f"crc32c: expected at least 4 bytes (the checksum), found {n}")
        if expected is not None and n - 4 != expected:
            raise CodecError(f"crc32c: expected {expected + 4} bytes ({expected} + 4 checksum), "
                             f"found {n}")
        body, tail = (mv[:-4], mv[-4:]) if self.location == "end" else (mv[4:], mv[:4])
        stored = int.from_bytes(tail, "little")
        actual = _crc(body)
        if stored != actual:
            raise CodecError(f"crc32c checksum mismatch: stored 0x{stored:08x}, "
                             f"computed 0x{actual:08x}")
        return body
