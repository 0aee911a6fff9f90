"""The ``crc32c`` codec: append a CRC-32C (Castagnoli) of the bytes, little endian."""
from __future__ import annotations

from zarrx.codecs.checksum import Checksum32
from zarrx.metadata.model import CodecSpec

__all__ = ["Crc32c"]


class Crc32c(Checksum32):
    """``crc32c``: 4 bytes of checksum after the data; decoding verifies and strips them."""

    name = "crc32c"
    label = "crc32c"

    def __init__(self, location: str = "end") -> None:
        self._configure("numcodecs.crc32c", location=location)   # numcodecs CRC32C(location)

    def configuration(self) -> dict:
        return {} if self.location == "end" else {"location": self.location}

    def to_spec(self) -> CodecSpec:
        """``crc32c``; ``numcodecs.crc32c`` for a checksum at the start (v3 has none there)."""
        name = "numcodecs.crc32c" if self.location == "start" else self._as or self.name
        return CodecSpec(name, self.configuration())

    def _sum(self, data: memoryview) -> int:
        from zarrx.codecs._crc32c import crc32c
        return crc32c(data)
