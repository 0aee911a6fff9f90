"""DEFLATE codecs: ``gzip`` (v3 core and numcodecs) and ``zlib`` (numcodecs).

The kernel (:mod:`zarrx.codecs._zlib`) reports a failure as a status code and numbers;
:func:`_message` words it, and the functions below are the kernel's calls with that done.
"""
from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, ClassVar

import numpy as np

from zarrx.codecs.base import Buffer, BytesToBytesCodec, as_u8, many_args, out_u8, \
    rows_by_kernel, spans_by_kernel
from zarrx.codecs.status import KernelStatus, call, common_message

__all__ = ["Gzip", "Zlib", "check", "compress", "decompress", "decompress_into",
           "decompress_bounded"]


def _lib() -> Any:
    from zarrx.codecs import _zlib
    return _zlib


def _message(st: KernelStatus, wrapper: str) -> str:
    """The message of a zlib kernel status for a ``wrapper`` stream: the one place they are
    worded."""
    k = _lib()
    c, v = st.code, st.values
    common = common_message(k, st, wrapper, "the compressed stream")
    if common is not None:
        return common
    if c == k.WRAPPER:
        return f"zlib: unknown wrapper {v[0]!r}, expected one of 'zlib', 'gzip', 'raw'"
    if c == k.BACKEND:
        return f"zlib: unknown backend {v[0]!r}, expected 'auto', 'zlib' or 'libdeflate'"
    if c == k.NO_LIBDEFLATE:
        return "zlib: backend 'libdeflate' requested, but zarrx was built without libdeflate"
    if c == k.LEVEL:
        return f"zlib: compression level {v[0]} is out of range, expected -1..9"
    if c == k.SETUP:
        return f"zlib: cannot set up compression at level {v[0]}"
    if c == k.NO_COMPRESSOR:
        return f"{wrapper}: cannot allocate a libdeflate compressor"
    if c == k.BOUND:
        return f"zlib: compressing {v[0]} bytes did not fit the {v[1]}-byte bound"
    if c == k.COMPRESS_FAILED:
        return f"zlib: compressing {v[0]} bytes failed (zlib status {v[1]})"
    if c == k.EMPTY:
        to = "" if v[0] is None else f" decoding to {v[0]} bytes"
        return f"{wrapper}: empty input, expected a {wrapper} stream{to}"
    if c == k.SIZE:
        return f"{wrapper}: stream decodes to {v[0]} bytes, expected {v[1]}"
    if c == k.NO_DECOMPRESSOR:
        return f"{wrapper}: cannot allocate a libdeflate decompressor"
    if c == k.EXCESS:
        return f"{wrapper}: stream decodes to more than {v[0]} bytes, expected {v[0]}"
    if c == k.TRUNCATED:
        n, produced, m = v
        want = "" if m is None else f", expected {m}"
        return (f"{wrapper}: input of {n} bytes ends inside the stream (truncated) after "
                f"{produced} decoded bytes{want}")
    if c == k.TRAILING:
        return (f"{wrapper}: trailing garbage: {v[0]} more bytes after the stream ending at "
                f"offset {v[1]}")
    if c == k.NEED_DICT:
        return f"{wrapper}: stream needs a preset dictionary, which zarrx does not support"
    if c == k.NO_INFLATE:
        return f"{wrapper}: cannot allocate an inflate state"
    if c == k.CORRUPT:
        off, n, m, detail = v
        want = "" if m is None else f", expected {m} decoded bytes"
        return f"{wrapper}: corrupt stream at input offset {off} of {n} ({detail}){want}"
    if c == k.LIMIT_EXCEEDED:
        return f"{wrapper}: decoded data exceeds the limit of {v[0]} bytes"
    return f"{wrapper}: kernel status {c} {v}"  # pragma: no cover - every code is worded above


def _worded(wrapper: str) -> Callable[[KernelStatus], str]:
    return partial(_message, wrapper=wrapper)


def compress(src: Buffer, level: int = -1, wrapper: str = "zlib", backend: str = "auto") -> bytes:
    """One ``wrapper`` stream (zlib, gzip, raw) holding ``src``."""
    return call(_worded(wrapper), _lib().compress, src, level, wrapper, backend)


def decompress(src: Buffer, expected: int, wrapper: str = "zlib", backend: str = "auto") -> bytes:
    """The stream(s) of ``src``, which must decode to exactly ``expected`` bytes."""
    return call(_worded(wrapper), _lib().decompress, src, expected, wrapper, backend)


def check(src: Buffer, expected: int, wrapper: str = "zlib") -> None:
    """Refuse ``src`` when its length says it cannot inflate to ``expected`` bytes (nothing is
    allocated or inflated)."""
    call(_worded(wrapper), _lib().check, src, expected, wrapper)


def decompress_into(src: Buffer, dst: Any, wrapper: str = "zlib", backend: str = "auto") -> None:
    """Inflate ``src`` into the writable bytes ``dst``, filling it exactly."""
    call(_worded(wrapper), _lib().decompress_into, src, dst, wrapper, backend)


def decompress_bounded(src: Buffer, limit: int, wrapper: str = "zlib") -> bytes:
    """The stream(s) of ``src``, whose decoded size is not known in advance: at most ``limit``
    bytes."""
    return call(_worded(wrapper), _lib().decompress_bounded, src, limit, wrapper)


#: the most bytes a wrapper adds: zlib's header, preset dictionary id and Adler-32; gzip's
#: header, CRC-32 and size, with its optional fields (an extra field of up to 64 KiB, and a
#: name and a comment taken to be at most 4 KiB each)
_WRAPPER_BYTES = {"zlib": 2 + 4 + 4, "gzip": 10 + 8 + 2 + 65535 + 2 * 4096 + 2, "raw": 0}


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
        # zlib's deflateBound for any settings (a writer using fixed Huffman codes, as
        # zlib-ng's fastest level does, spends up to 9 bits on a byte), plus the wrapper
        return None if n is None else \
            n + ((n + 7) >> 3) + ((n + 63) >> 6) + 5 + _WRAPPER_BYTES[self.wrapper]

    def encode(self, data: Buffer) -> Buffer:
        return compress(as_u8(data), self.level, self.wrapper)

    def encode_many(self, bufs: Any, skip: Any = None) -> list[bytes | None]:
        """Rows of a 2-D uint8 array compressed by the kernel straight; other sequences one by
        one."""
        if not isinstance(bufs, np.ndarray) or bufs.ndim != 2:
            return super().encode_many(bufs, skip)
        bufs, skip = many_args(self.name, bufs, skip)
        wrapper = self.wrapper
        return rows_by_kernel(bufs, skip, _lib().compress, (self.level, wrapper),
                              lambda st: _message(st, wrapper))

    def decode(self, data: Buffer, expected: int | None, limit: int) -> Buffer:
        if expected is None:
            return decompress_bounded(as_u8(data), limit, self.wrapper)
        # allocates only a size the stream's length can decode to
        return decompress(as_u8(data), expected, self.wrapper)

    def check_stored(self, data: memoryview, expected: int) -> None:
        check(as_u8(data), expected, self.wrapper)

    def decode_into(self, data: Buffer, dst: np.ndarray) -> None:
        decompress_into(as_u8(data), out_u8(self.wrapper, dst), self.wrapper)

    def decode_many(self, src: np.ndarray, starts: np.ndarray, lengths: np.ndarray,
                    dst: np.ndarray) -> tuple[int, None] | None:
        """:meth:`decode_into` of many chunks of ``src`` into the rows of ``dst``, the kernel
        called straight; ``(i, None)`` for the first chunk that does not decode
        (:meth:`decode_into` of it says why)."""
        return spans_by_kernel(src, starts, lengths, dst, _lib().decompress_into,
                               (self.wrapper, "auto"))


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
