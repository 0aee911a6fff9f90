"""numcodecs ``bz2`` and ``lzma``, through Python's standard library modules."""
from __future__ import annotations

from typing import Any

import numpy as np

from zarrx.codecs.base import Buffer, BytesToBytesCodec, as_u8, cfg_int, check_keys
from zarrx.errors import CodecError

__all__ = ["BZ2", "LZMA"]

LZMA_MEMLIMIT = 1 << 28       # decoder memory (dictionary) an lzma stream may ask for


def _bounded(make: Any, src: memoryview, expected: int | None, limit: int, where: str,
             what: str, errors: tuple[type[BaseException], ...], multistream: bool) -> bytes:
    """Run decompressor objects from ``make()`` over ``src`` (concatenated streams allowed when
    ``multistream``), never producing more than ``expected`` (or ``limit``) bytes."""
    cap = limit if expected is None else expected
    out = bytearray()
    data = bytes(src)
    try:
        while True:
            d = make()
            out += d.decompress(data, cap + 1 - len(out))
            if len(out) > cap:
                raise CodecError(f"{where}: {what}: decoded data exceeds "
                                 f"{'the limit of ' if expected is None else 'the expected '}"
                                 f"{cap} bytes")
            if not d.eof:
                raise CodecError(f"{where}: {what}: truncated stream (no end of stream after "
                                 f"{src.nbytes} bytes)")
            data = d.unused_data
            if not data:
                break
            if not multistream:
                raise CodecError(f"{where}: {what}: {len(data)} bytes of trailing data after "
                                 f"the end of stream")
    except CodecError:
        raise
    except errors as exc:
        raise CodecError(f"{where}: {what}: corrupt stream ({exc})") from None
    if expected is not None and len(out) != expected:
        raise CodecError(f"{where}: {what}: stream decodes to {len(out)} bytes, "
                         f"expected {expected}")
    return bytes(out)


class BZ2(BytesToBytesCodec):
    """numcodecs ``bz2``: ``level`` 1..9."""

    name = "numcodecs.bz2"
    codec_id = "bz2"

    def __init__(self, level: int = 1) -> None:
        if isinstance(level, bool) or not isinstance(level, int) or not 1 <= level <= 9:
            raise CodecError(f"bz2: level: expected an integer in [1, 9], found {level!r}")
        self.level = level

    @classmethod
    def from_config(cls, config: dict, where: str, *, dtype: np.dtype, v2: bool) -> "BZ2":
        check_keys(config, ("level",), where)
        return cls(cfg_int(config, "level", where, 1, lo=1, hi=9))

    def configuration(self) -> dict[str, Any]:
        return {"level": self.level}

    def max_encoded_size(self, n: int | None) -> int | None:
        return None if n is None else n + n // 100 + 600

    def encode(self, data: Buffer) -> Buffer:
        import bz2
        return bz2.compress(as_u8(data), self.level)

    def decode(self, data: Buffer, expected: int | None, limit: int, where: str) -> Buffer:
        import bz2
        return _bounded(bz2.BZ2Decompressor, as_u8(data), expected, limit, where, "bz2",
                        (OSError, ValueError, EOFError), True)


class LZMA(BytesToBytesCodec):
    """numcodecs ``lzma``: ``format`` (1 xz, 2 alone, 3 raw), ``check``, ``preset``,
    ``filters`` (as the lzma module takes them)."""

    name = "numcodecs.lzma"
    codec_id = "lzma"

    def __init__(self, format: int = 1, check: int = -1, preset: int | None = None,
                 filters: list[dict] | None = None) -> None:
        if format not in (1, 2, 3):
            raise CodecError(f"lzma: format: expected 1 (xz), 2 (alone) or 3 (raw), "
                             f"found {format!r}")
        if format == 3 and not filters:
            raise CodecError("lzma: filters: required for format 3 (raw)")
        self.format, self.check, self.preset, self.filters = format, check, preset, filters

    @classmethod
    def from_config(cls, config: dict, where: str, *, dtype: np.dtype, v2: bool) -> "LZMA":
        check_keys(config, ("format", "check", "preset", "filters"), where)
        filters = config.get("filters")
        if filters is not None and not (isinstance(filters, list)
                                        and all(isinstance(f, dict) for f in filters)):
            raise CodecError(f"{where}.filters: expected a list of objects or null, "
                             f"found {filters!r}")
        return cls(cfg_int(config, "format", where, 1, lo=1, hi=3),
                   cfg_int(config, "check", where, -1, lo=-1, hi=15),
                   cfg_int(config, "preset", where, None, lo=0, hi=2**32 - 1, allow_none=True),
                   filters)

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

    def decode(self, data: Buffer, expected: int | None, limit: int, where: str) -> Buffer:
        import lzma
        fmt, filters = self.format, self._filters() if self.format == 3 else None
        memlimit = None if fmt == 3 else LZMA_MEMLIMIT     # a header may ask for a huge dictionary
        return _bounded(lambda: lzma.LZMADecompressor(fmt, memlimit, filters), as_u8(data),
                        expected, limit, where, "lzma", (lzma.LZMAError, ValueError, EOFError),
                        self.format != 3)
