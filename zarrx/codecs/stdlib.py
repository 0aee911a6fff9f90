"""numcodecs ``bz2`` and ``lzma``, through Python's standard library modules.

Their decompressors report corrupt data only as an exception whose text is the library's
description (no code); that text is quoted in the CodecError, never inspected.
"""
from __future__ import annotations

from typing import Any

from zarrx.codecs.base import Buffer, BytesToBytesCodec, as_u8
from zarrx.errors import CodecError

__all__ = ["BZ2", "LZMA"]

LZMA_MEMLIMIT = 1 << 28       # decoder memory (dictionary) an lzma stream may ask for


def _zeros(src: memoryview, pos: int) -> int:
    """The number of zero bytes in ``src`` from ``pos`` (read in growing windows: a short run
    costs little)."""
    end, step = pos, 64
    while end < src.nbytes:
        window = bytes(src[end:end + step])
        rest = window.lstrip(b"\0")
        end += len(window) - len(rest)
        if rest:
            break
        step = min(step * 2, 1 << 16)
    return end - pos


def _bounded(make: Any, src: memoryview, expected: int | None, limit: int, what: str,
             errors: tuple[type[BaseException], ...], multistream: bool,
             padding: bool = False) -> bytes:
    """Run decompressor objects from ``make()`` over ``src`` (concatenated streams allowed when
    ``multistream``; with ``padding``, xz stream padding too: zero bytes, a multiple of 4, after
    a stream), never producing more than ``expected`` (or ``limit``) bytes.

    The input is handed over in pieces that start small for each stream and grow: a
    decompressor copies what follows its stream's end, so handing it all that is left would cost
    time quadratic in the number of streams (a chunk of a million empty streams)."""
    cap = limit if expected is None else expected
    out = bytearray()
    n, pos = src.nbytes, 0
    start = 0                   # where the stream being decoded starts

    def after() -> str:
        return f"{what}: {n - start} bytes after the stream ending at offset {start}"
    try:
        while True:
            d, piece, start = make(), 256, pos
            while not d.eof:
                if d.needs_input:
                    if pos >= n and start:
                        raise CodecError(f"{after()} are not a complete {what} stream")
                    if pos >= n:
                        raise CodecError(f"{what}: truncated stream (no end of stream after "
                                         f"{n} bytes)")
                    out += d.decompress(src[pos:pos + piece], cap + 1 - len(out))
                    pos = min(pos + piece, n)
                    piece = min(piece * 2, 1 << 16)
                else:
                    out += d.decompress(b"", cap + 1 - len(out))
                if len(out) > cap:
                    raise CodecError(f"{what}: decoded data exceeds "
                                     f"{'the limit of ' if expected is None else 'the expected '}"
                                     f"{cap} bytes")
            pos -= len(d.unused_data)
            if padding and pos < n:
                zeros = _zeros(src, pos)
                if zeros % 4:
                    raise CodecError(f"{what}: {zeros} zero bytes after the stream ending at "
                                     f"offset {pos}: stream padding is a multiple of 4 bytes")
                pos += zeros
            if pos >= n:
                break
            if not multistream:
                raise CodecError(f"{what}: {n - pos} bytes of trailing data after the end of "
                                 f"stream")
    except CodecError:
        raise
    except errors as exc:
        if start:
            raise CodecError(f"{after()} do not decode as a {what} stream ({exc})") from None
        raise CodecError(f"{what}: corrupt stream ({exc})") from None
    if expected is not None and len(out) != expected:
        raise CodecError(f"{what}: stream decodes to {len(out)} bytes, expected {expected}")
    return bytes(out)


class BZ2(BytesToBytesCodec):
    """numcodecs ``bz2``: ``level`` 1..9."""

    name = "numcodecs.bz2"
    level: int

    def __init__(self, level: int = 1) -> None:
        self._configure(level=level)

    def configuration(self) -> dict[str, Any]:
        return {"level": self.level}

    def max_encoded_size(self, n: int | None) -> int | None:
        return None if n is None else n + n // 100 + 600

    def encode(self, data: Buffer) -> Buffer:
        import bz2
        return bz2.compress(as_u8(data), self.level)

    def decode(self, data: Buffer, expected: int | None, limit: int) -> Buffer:
        import bz2
        return _bounded(bz2.BZ2Decompressor, as_u8(data), expected, limit, "bz2",
                        (OSError, ValueError, EOFError), True)


class LZMA(BytesToBytesCodec):
    """numcodecs ``lzma``: ``format`` (1 xz, 2 alone, 3 raw), ``check``, ``preset``,
    ``filters`` (as the lzma module takes them)."""

    name = "numcodecs.lzma"
    format: int
    check: int
    preset: int | None
    filters: list[dict] | None

    def __init__(self, format: int = 1, check: int = -1, preset: int | None = None,
                 filters: list[dict] | None = None) -> None:
        self._configure(format=format, check=check, preset=preset, filters=filters)

    def configuration(self) -> dict[str, Any]:
        return {"format": self.format, "check": self.check, "preset": self.preset,
                "filters": self.filters}

    def max_encoded_size(self, n: int | None) -> int | None:
        return None if n is None else n + n // 8 + 1024

    def _filters(self) -> list[dict] | None:
        return None if self.filters is None else [dict(f) for f in self.filters]

    def encode(self, data: Buffer) -> Buffer:
        import lzma
        try:
            return lzma.compress(as_u8(data), format=self.format, check=self.check,
                                 preset=self.preset, filters=self._filters())
        except (lzma.LZMAError, ValueError, TypeError) as exc:
            raise CodecError(f"lzma: cannot compress with {self.configuration()}: {exc}") from None

    def decode(self, data: Buffer, expected: int | None, limit: int) -> Buffer:
        import lzma
        fmt, filters = self.format, self._filters() if self.format == 3 else None
        memlimit = None if fmt == 3 else LZMA_MEMLIMIT     # a header may ask for a huge dictionary
        for i, f in enumerate(filters or ()):     # raw streams: the filters name the dictionary
            if f.get("dict_size", 0) > LZMA_MEMLIMIT:
                raise CodecError(f"lzma: filters[{i}].dict_size: a dictionary of "
                                 f"{f['dict_size']} bytes is over the limit of {LZMA_MEMLIMIT}")
        return _bounded(lambda: lzma.LZMADecompressor(fmt, memlimit, filters), as_u8(data),
                        expected, limit, "lzma", (lzma.LZMAError, ValueError, EOFError),
                        self.format != 3, padding=self.format == 1)
