"""The decompressors of the zip methods :class:`~zarrx.store.zipread.Reader` inflates (deflate,
bzip2, LZMA), fed alike, and the points a deflated entry's inflation resumes from.

Inflating a range of a compressed entry means inflating everything before it. An entry too
large for the reader's cache keeps, as it is inflated, a copy of its deflate state every
``spacing`` inflated bytes (at most ``MAX_POINTS`` of them, about 40 KiB each): a later read
resumes from the last point before its range, so reading a large deflated shard inner chunk by
inner chunk costs about one inflation of it, not one per chunk. bzip2 and LZMA states cannot be
copied: such an entry is inflated once, whole, into an unnamed temporary file
(:class:`Spills`, the most recently read ``MAX_ENTRIES`` of them), which later ranges are read
from.
"""
from __future__ import annotations

import bz2
import contextlib
import lzma
import tempfile
import zipfile
import zlib
from collections import OrderedDict
from typing import BinaryIO

__all__ = ["DECOMPRESSORS", "Points", "Spills", "MAX_DEFLATE_RATIO", "MAX_BZIP2_RATIO", "MAX_LZMA_RATIO"]

#: the most each method can expand its compressed bytes; an entry declaring more is lying.
#: deflate: a 258-byte match in 2 bits, about 1032:1
MAX_DEFLATE_RATIO = 1032
#: bzip2: a block holds at most 900,000 bytes after its first run-length stage, each 5 of them
#: standing for at most 255 bytes (45,900,000 bytes), and takes at least 173 bits (headers,
#: tables and one symbol)
MAX_BZIP2_RATIO = 45_900_000 * 8 // 173 + 1
#: LZMA: a 273-byte repeated match takes 14 range-coded decisions, each at least
#: log2(2048 / 2017) = 0.022 bits (the most probable an 11-bit probability gets), about
#: 7,100:1; rounded up
MAX_LZMA_RATIO = 8192
#: resume points kept per entry, and entries that keep them (the most recently inflated)
MAX_POINTS = 64
MAX_ENTRIES = 4
MIN_SPACING = 4 << 20


class Points:
    """Resume points of the deflated entries of one archive: ``(inflated bytes, compressed
    bytes read, decompressor)`` per entry, in order, the decompressor a copy taken there."""

    def __init__(self) -> None:
        self._by_entry: OrderedDict[str, list[tuple[int, int, object]]] = OrderedDict()

    @staticmethod
    def spacing(declared: int) -> int:
        return max(MIN_SPACING, -(-declared // MAX_POINTS))

    def best(self, name: str, before: int) -> tuple[int, int, object] | None:
        """The last point of entry ``name`` at or before inflated byte ``before`` (its
        decompressor copied again, so the point stays usable), or None."""
        points = self._by_entry.get(name)
        found = None
        for point in points or ():
            if point[0] > before:
                break
            found = point
        if found is None:
            return None
        self._by_entry.move_to_end(name)
        return found[0], found[1], found[2].copy()  # type: ignore[attr-defined]

    def add(self, name: str, made: int, consumed: int, d: object) -> None:
        points = self._by_entry.setdefault(name, [])
        self._by_entry.move_to_end(name)
        if (not points or made > points[-1][0]) and len(points) < MAX_POINTS + 1:
            points.append((made, consumed, d.copy()))  # type: ignore[attr-defined]
        while len(self._by_entry) > MAX_ENTRIES:
            self._by_entry.popitem(last=False)


class Spills:
    """Inflated copies of the bzip2 and LZMA entries of one archive too large for the cache, in
    unnamed temporary files (removed by the system once closed): ``MAX_ENTRIES`` of them, the
    most recently read, so the disk they take is bounded by the entries read."""

    def __init__(self) -> None:
        self._files: OrderedDict[str, BinaryIO] = OrderedDict()

    def __contains__(self, name: str) -> bool:
        return name in self._files

    def read(self, name: str, start: int, stop: int) -> bytes:
        """Bytes ``[start, stop)`` of the inflated entry ``name`` (one it holds); OSError when
        the copy cannot be read (it is dropped)."""
        f = self._files[name]
        self._files.move_to_end(name)
        try:
            f.seek(start)
            data = f.read(stop - start)
            if len(data) != stop - start:
                raise OSError(f"the inflated copy holds {start + len(data)} bytes, not {stop}")
        except (OSError, ValueError):
            self._files.pop(name).close()
            raise
        return data

    @staticmethod
    def start() -> BinaryIO:
        return tempfile.TemporaryFile(prefix="zarrx-zip-")

    def keep(self, name: str, f: BinaryIO) -> None:
        """Keep ``f`` (from :meth:`start`, holding the whole entry ``name`` inflated)."""
        self._files[name] = f
        while len(self._files) > MAX_ENTRIES:
            self._files.popitem(last=False)[1].close()

    def close(self) -> None:
        while self._files:
            with contextlib.suppress(OSError):
                self._files.popitem()[1].close()


class _Deflate:
    """A raw deflate stream, fed as the bz2 and lzma decompressors are."""

    name = "deflate"
    max_ratio = MAX_DEFLATE_RATIO

    def __init__(self) -> None:
        self._d = zlib.decompressobj(-15)

    @property
    def eof(self) -> bool:
        return self._d.eof

    @property
    def needs_input(self) -> bool:
        return not self._d.unconsumed_tail

    def decompress(self, data: bytes, max_length: int) -> bytes:
        return self._d.decompress(data or self._d.unconsumed_tail, max_length)

    def copy(self) -> "_Deflate":
        twin = _Deflate.__new__(_Deflate)
        twin._d = self._d.copy()
        return twin


class _Bzip2:
    name = "bzip2"
    max_ratio = MAX_BZIP2_RATIO

    def __init__(self) -> None:
        self._d = bz2.BZ2Decompressor()
        self.decompress = self._d.decompress

    @property
    def eof(self) -> bool:
        return self._d.eof

    @property
    def needs_input(self) -> bool:
        return self._d.needs_input


class _Lzma:
    """LZMA as zip stores it (APPNOTE 5.8.8): a 2-byte version, a 2-byte size of the
    properties, the properties (lc/lp/pb in one byte, the dictionary size in four), then a raw
    LZMA stream."""

    name = "LZMA"
    max_ratio = MAX_LZMA_RATIO

    def __init__(self) -> None:
        self._head = b""
        self._d: lzma.LZMADecompressor | None = None

    @property
    def eof(self) -> bool:
        return self._d is not None and self._d.eof

    @property
    def needs_input(self) -> bool:
        return self._d is None or self._d.needs_input

    def decompress(self, data: bytes, max_length: int) -> bytes:
        if self._d is not None:
            return self._d.decompress(data, max_length)
        self._head += data
        if len(self._head) < 4:
            return b""
        size = int.from_bytes(self._head[2:4], "little")
        if len(self._head) < 4 + size:
            return b""
        if size != 5:
            raise ValueError(f"expected 5 bytes of LZMA properties, found {size}")
        props = self._head[4:9]
        pb, rest = divmod(props[0], 45)
        lp, lc = divmod(rest, 9)
        self._d = lzma.LZMADecompressor(lzma.FORMAT_RAW, filters=[{
            "id": lzma.FILTER_LZMA1, "dict_size": int.from_bytes(props[1:], "little"),
            "lc": lc, "lp": lp, "pb": pb}])
        data, self._head = self._head[9:], b""
        return self._d.decompress(data, max_length)


DECOMPRESSORS = {zipfile.ZIP_DEFLATED: _Deflate, zipfile.ZIP_BZIP2: _Bzip2,
                  zipfile.ZIP_LZMA: _Lzma}
