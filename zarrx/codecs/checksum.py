"""32-bit checksum codecs: 4 bytes (little endian) before or after the data, verified and
stripped when decoding. ``crc32c`` (:mod:`zarrx.codecs.crc32c`) and numcodecs' ``crc32``,
``adler32`` (both through ``zlib``), ``fletcher32`` and ``jenkins_lookup3`` (HDF5's definitions,
``zarrx.codecs._checksum``)."""
from __future__ import annotations

import zlib
from typing import Any, ClassVar

from zarrx.codecs.base import Buffer, BytesToBytesCodec, as_u8
from zarrx.errors import CodecError

__all__ = ["Checksum32", "CRC32", "Adler32", "Fletcher32", "JenkinsLookup3"]


class Checksum32(BytesToBytesCodec):
    """A 32-bit checksum of the bytes at ``location`` ("start" or "end"); decoding verifies and
    strips it without copying. Subclasses set ``label`` (how messages name it) and ``_sum``."""

    view_only = True
    label: ClassVar[str] = ""
    location: str = "end"

    def _sum(self, data: memoryview) -> int:
        raise NotImplementedError

    def encoded_size(self, n: int | None) -> int | None:
        return None if n is None else n + 4

    def encode(self, data: Buffer) -> Buffer:
        mv = as_u8(data)
        value = self._sum(mv).to_bytes(4, "little")
        return b"".join((mv, value) if self.location == "end" else (value, mv))    # one copy

    def _split(self, mv: memoryview, expected: int | None) -> tuple[memoryview, memoryview]:
        """The data and the stored checksum of ``mv``, its length checked."""
        n = mv.nbytes
        if n < 4:
            raise CodecError(f"{self.label}: expected at least 4 bytes (the checksum), found {n}")
        if expected is not None and n - 4 != expected:
            raise CodecError(f"{self.label}: expected {expected + 4} bytes ({expected} + 4 "
                             f"checksum), found {n}")
        return (mv[:-4], mv[-4:]) if self.location == "end" else (mv[4:], mv[:4])

    def check_stored(self, data: memoryview, expected: int | None) -> memoryview | None:
        return self._split(as_u8(data), expected)[0]

    def decode(self, data: Buffer, expected: int | None, limit: int) -> Buffer:
        body, stored_at = self._split(as_u8(data), expected)
        stored = int.from_bytes(stored_at, "little")
        actual = self._sum(body)
        if stored != actual:
            raise CodecError(f"{self.label} checksum mismatch: stored 0x{stored:08x}, "
                             f"computed 0x{actual:08x}")
        return body


class CRC32(Checksum32):
    """numcodecs ``crc32``: the CRC-32 of zlib, at the ``location`` "start" (default) or "end"."""

    name = "numcodecs.crc32"
    label = "crc32"

    def __init__(self, location: str = "start") -> None:
        self._configure(location=location)

    def configuration(self) -> dict[str, Any]:
        return {"location": self.location}

    def _sum(self, data: memoryview) -> int:
        return zlib.crc32(data)


class Adler32(Checksum32):
    """numcodecs ``adler32``: the Adler-32 of zlib, at the ``location`` "start" (default) or
    "end"."""

    name = "numcodecs.adler32"
    label = "adler32"

    def __init__(self, location: str = "start") -> None:
        self._configure(location=location)

    def configuration(self) -> dict[str, Any]:
        return {"location": self.location}

    def _sum(self, data: memoryview) -> int:
        return zlib.adler32(data)


class Fletcher32(Checksum32):
    """numcodecs ``fletcher32``: HDF5's Fletcher-32 (big-endian 16-bit words) after the data."""

    name = "numcodecs.fletcher32"
    label = "fletcher32"

    def __init__(self) -> None:
        self._configure()

    def configuration(self) -> dict[str, Any]:
        return {}

    def _sum(self, data: memoryview) -> int:
        from zarrx.codecs._checksum import fletcher32
        return fletcher32(data)


class JenkinsLookup3(Checksum32):
    """numcodecs ``jenkins_lookup3``: Bob Jenkins' lookup3 hash (HDF5's metadata checksum) with
    the seed ``initval``, after the data. numcodecs' ``prefix`` (bytes hashed before the data)
    has no JSON form, so only ``prefix: null`` is read."""

    name = "numcodecs.jenkins_lookup3"
    label = "jenkins_lookup3"
    initval: int

    def __init__(self, initval: int = 0, prefix: None = None) -> None:
        self._configure(initval=initval, prefix=prefix)

    def configuration(self) -> dict[str, Any]:
        return {"initval": self.initval, "prefix": None}

    def _sum(self, data: memoryview) -> int:
        from zarrx.codecs._checksum import jenkins_lookup3
        return jenkins_lookup3(data, self.initval)
