"""The ``zstd`` codec (v3 registered extension, numcodecs ``zstd``).

The kernel (:mod:`zarrx.codecs._zstd`) reports a failure as a status code and numbers;
:func:`_message` words it, and the functions below are the kernel's calls with that done.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from zarrx.codecs.base import Buffer, BytesToBytesCodec, as_u8, many_args, out_u8
from zarrx.codecs.status import KernelStatus, call, common_message
from zarrx.errors import CodecError

__all__ = ["Zstd", "check", "compress", "decompress", "decompress_into",
           "decompress_bounded",
           "decompress_many"]


_kernel: Any = None
_many: Any = None                       # zarrx.codecs._zstd_many, once loaded


def _lib() -> Any:
    global _kernel
    if _kernel is None:
        from zarrx.codecs import _zstd
        _kernel = _zstd
    return _kernel


def _message(st: KernelStatus) -> str:
    """The message of a zstd kernel status: the one place they are worded."""
    k = _lib()
    c, v = st.code, st.values
    common = common_message(k, st, "zstd", "the compressed frame")
    if common is not None:
        return common
    if c == k.NO_DCTX:
        return "zstd: cannot allocate a decompression context"
    if c == k.NO_CCTX:
        return "zstd: cannot allocate a compression context"
    if c == k.LEVEL:
        level, lo, hi, default = v
        return (f"zstd: compression level {level} is out of range, expected {lo}..{hi} (0 means "
                f"the default, {default})")
    if c == k.TOO_LARGE:
        return f"zstd: input of {v[0]} bytes is too large to compress"
    if c == k.COMPRESS_FAILED:
        n, level, rc = v
        return f"zstd: compressing {n} bytes at level {level} failed: {k.error_name(rc)}"
    if c == k.EMPTY:
        return f"zstd: empty input, expected a zstd frame decoding to {v[0]} bytes"
    if c == k.NOT_A_FRAME:
        n, rc = v
        return f"zstd: input of {n} bytes is not a complete zstd frame: {k.error_name(rc)}"
    if c == k.TRAILING:
        rest, off, rc = v
        return (f"zstd: {rest} bytes after the frame ending at offset {off} are not a complete "
                f"zstd frame (trailing garbage or a truncated frame): {k.error_name(rc)}")
    if c == k.BAD_HEADER:
        return f"zstd: frame at offset {v[0]} has an unreadable header"
    if c == k.DECLARED:
        off, size, before, m = v
        return (f"zstd: frame at offset {off} declares {size} bytes, but the frames before it "
                f"already hold {before} of the expected {m}")
    if c == k.SIZE:
        got, m, frames = v
        what = "frame decodes" if frames == 1 else f"{frames} frames decode"
        return f"zstd: {what} to {got} bytes, expected {m}"
    if c == k.CORRUPT:
        n, m, rc = v
        to = "" if m is None else f", expected to decode to {m}"
        return f"zstd: corrupt frame ({n} bytes{to}): {k.error_name(rc)}"
    if c == k.WINDOW:
        off, window, limit = v
        return (f"zstd: frame at offset {off} needs a window of {window} bytes, more than the "
                f"{limit} bytes ({limit >> 20} MiB) zarrx allows: refused for the memory "
                f"decoding it would take (the data is not known to be corrupt)")
    if c == k.EXCESS:
        return f"zstd: frame decodes to more than {v[0]} bytes, expected {v[0]}"
    if c == k.TRUNCATED:
        n, produced, m = v
        want = "" if m is None else f", expected {m}"
        return (f"zstd: input of {n} bytes ends inside a frame (truncated) after {produced} "
                f"decoded bytes{want}")
    if c == k.NO_HEADER:
        return "zstd: empty input, expected a zstd frame header"
    if c == k.BAD_FIRST_HEADER:
        return f"zstd: input of {v[0]} bytes does not start with a valid zstd frame header"
    if c == k.LIMIT_DECLARED:
        size, limit = v
        return f"zstd header claims {size} decoded bytes, more than the limit of {limit}"
    if c == k.LIMIT_EXCEEDED:
        return f"zstd: decoded data exceeds the limit of {v[0]} bytes"
    if c == k.SPAN:
        start, length, n = v
        return (f"zstd: a chunk's bytes [{start}, {start + length}) lie outside the {n} bytes "
                f"given")
    return f"zstd: kernel status {c} {v}"  # pragma: no cover - every code is worded above


def compress(src: Buffer, level: int = 0, checksum: bool = False) -> bytes:
    """One zstd frame holding ``src`` (its content size recorded)."""
    return call(_message, _lib().compress, src, level, checksum)


def decompress(src: Buffer, expected: int) -> bytes:
    """The frame(s) of ``src``, which must decode to exactly ``expected`` bytes."""
    return call(_message, _lib().decompress, src, expected)


def check(src: Buffer, expected: int) -> None:
    """Refuse ``src`` when its frame headers (or its length) say it cannot decode to
    ``expected`` bytes (nothing is allocated or decoded)."""
    call(_message, _lib().check, src, expected)


def decompress_into(src: Buffer, dst: Any) -> None:
    """Decode the frame(s) of ``src`` into the writable bytes ``dst``, filling it exactly."""
    call(_message, _lib().decompress_into, src, dst)


def decompress_many(src: Buffer, starts: Any, lengths: Any, dst: Any
                    ) -> tuple[int, CodecError] | None:
    """Decode chunk ``i`` (``src[starts[i]:starts[i] + lengths[i]]``) into row ``i`` of the
    2-d ``dst`` for every ``i`` whose start is not negative: None when all decode, else the
    index of the first that does not and its error (rows before it are decoded)."""
    failed = _lib().decompress_many(src, starts, lengths, dst)
    if failed is None:
        return None
    i, st = failed
    return i, CodecError(_message(st))


def decompress_bounded(src: Buffer, limit: int) -> bytes:
    """The frame(s) of ``src``, whose decoded size is not known in advance: at most ``limit``
    bytes."""
    return call(_message, _lib().decompress_bounded, src, limit)


def content_size(src: Buffer) -> int | None:
    """The content size the first frame's header declares, or None."""
    return call(_message, _lib().content_size, src)


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

    def _numcodecs_config(self) -> dict[str, Any]:
        """numcodecs' form, which always gives ``checksum`` (a ``.zarray`` omits a false one)."""
        return {**super()._numcodecs_config(), "checksum": self.checksum}

    def max_encoded_size(self, n: int | None) -> int | None:
        if n is None:
            return None
        return n + (n >> 8) + ((128 * 1024 - n) >> 11 if n < 128 * 1024 else 0)

    def encode(self, data: Buffer) -> Buffer:
        try:                                # the kernel called directly: once per chunk
            return (_kernel or _lib()).compress(as_u8(data), self.level, self.checksum)
        except KernelStatus as st:
            raise CodecError(_message(st)) from None

    def encode_many(self, bufs: Any, skip: Any = None) -> list[bytes | None]:
        """Rows of a 2-D uint8 array compressed in one kernel call, with the GIL released
        (:func:`~zarrx.codecs._zstd_many.compress_many`); other sequences one by one."""
        if not isinstance(bufs, np.ndarray) or bufs.ndim != 2:
            return super().encode_many(bufs, skip)
        bufs, skip = many_args(self.name, bufs, skip)
        global _many
        if _many is None:
            from zarrx.codecs import _zstd_many
            _many = _zstd_many
        try:
            return _many.compress_many(bufs, None if skip is None else skip.view(np.uint8),
                                       self.level, self.checksum)
        except KernelStatus as st:
            raise CodecError(_message(st)) from None

    def decode(self, data: Buffer, expected: int | None, limit: int) -> Buffer:
        if expected is not None:
            return decompress(as_u8(data), expected)
        return decompress_bounded(as_u8(data), limit)   # variable-length chunks

    def check_stored(self, data: memoryview, expected: int) -> None:
        check(as_u8(data), expected)

    def decode_into(self, data: Buffer, dst: np.ndarray) -> None:
        decompress_into(as_u8(data), out_u8("zstd", dst))

    def decode_many(self, src: Buffer, starts: np.ndarray, lengths: np.ndarray,
                    dst: np.ndarray) -> tuple[int, CodecError] | None:
        """:meth:`decode_into` for many chunks of one buffer (see :func:`decompress_many`)."""
        return decompress_many(src, starts, lengths, dst)
