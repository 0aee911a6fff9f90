"""The ``blosc`` codec (v3 core, numcodecs ``blosc``): c-blosc 1 frames.

On decode everything is taken from the frame header (typesize and shuffle included, since
writers disagree with their metadata); the header's sizes are checked against the chunk first.

The kernel (:mod:`zarrx.codecs._blosc`) reports a failure as a status code and numbers;
:func:`_message` words it, and the functions below are the kernel's calls with that done.
"""
from __future__ import annotations

import copy
from typing import Any, Sequence

import numpy as np

from zarrx.codecs.base import (Buffer, BytesToBytesCodec, as_u8, check_size, config_field,
                               many_args, out_u8, rows_by_kernel,
                               spans_by_kernel)
from zarrx.codecs.status import KernelStatus, call, common_message
from zarrx.errors import CodecError
from zarrx.metadata.codec_checks import BLOSC_SHUFFLES
from zarrx.metadata.model import CodecSpec

__all__ = ["Blosc", "check", "compress", "decompress", "decompress_into", "header"]

SHUFFLES = {name: i for i, name in enumerate(BLOSC_SHUFFLES)}
_SHUFFLE_NAMES = dict(enumerate(BLOSC_SHUFFLES))
MAX_OVERHEAD = 16
MAX_BUFFERSIZE = 2**31 - 1 - MAX_OVERHEAD     # c-blosc 1: INT32_MAX - BLOSC_MAX_OVERHEAD


def _lib() -> Any:
    from zarrx.codecs import _blosc
    return _blosc


def _message(st: KernelStatus) -> str:
    """The message of a blosc kernel status: the one place they are worded."""
    k = _lib()
    c, v = st.code, st.values
    common = common_message(k, st, "blosc", "the compressed buffer")
    if common is not None:
        return common
    if c == k.CNAME:
        return (f"blosc: unknown compressor {v[0]!r}, expected one of "
                f"{', '.join(map(repr, k.CNAMES))}")
    if c == k.NOT_BUILT:
        return f"blosc: compressor {v[0]!r} is not built into this c-blosc {k.version()}"
    if c == k.TYPESIZE:
        if v[0] >= 1:
            return f"blosc: typesize must be at most {2**31 - 1}, found {v[0]}"
        return f"blosc: typesize must be >= 1, found {v[0]}"
    if c == k.CLEVEL:
        return f"blosc: clevel {v[0]} is out of range, expected 0..9"
    if c == k.SHUFFLE:
        return f"blosc: shuffle {v[0]} is not one of -1 (auto), 0 (none), 1 (byte), 2 (bit)"
    if c == k.BLOCKSIZE:
        if v[0] >= 0:
            return f"blosc: blocksize must be below 2**63, found {v[0]}"
        return f"blosc: blocksize must be >= 0 (0 = automatic), found {v[0]}"
    if c == k.TOO_LARGE:
        return (f"blosc: input of {v[0]} bytes is larger than blosc's limit of {v[1]} bytes; "
                f"use smaller chunks")
    if c == k.COMPRESS_FAILED:
        return f"blosc: compressing {v[0]} bytes with {v[1]} failed (status {v[2]})"
    if c == k.SHORT:
        return f"blosc: input of {v[0]} bytes is shorter than the {v[1]}-byte header"
    if c == k.CBYTES:
        return f"blosc: header declares cbytes={v[0]}, but the input holds {v[1]} bytes"
    if c == k.NBYTES:
        return f"blosc: header declares nbytes={v[0]}, expected {v[1]}"
    if c == k.BIG_BLOCKS:
        return f"blosc: header declares blocksize={v[0]}, larger than nbytes={v[1]}"
    if c == k.INVALID:
        version, flags, nbytes, cbytes, blocksize = v
        return (f"blosc: invalid header (version {version}, flags {flags:#04x}, "
                f"nbytes={nbytes}, cbytes={cbytes}, blocksize={blocksize})")
    if c == k.MEMCPY_SIZE:
        return (f"blosc: uncompressed (memcpy) buffer declares nbytes={v[0]}, but holds {v[1]} "
                f"bytes of data")
    if c == k.GEOMETRY:
        return f"blosc: invalid header: blocksize={v[0]}, typesize={v[1]} for nbytes={v[2]}"
    if c == k.CORRUPT:
        return (f"blosc: corrupt buffer of {v[0]} bytes (blosc status {v[1]}, expected {v[2]} "
                f"decoded bytes)")
    return f"blosc: kernel status {c} {v}"  # pragma: no cover - every code is worded above


def compress(src: Buffer, typesize: int, clevel: int = 5, shuffle: int = 1, cname: str = "lz4",
             blocksize: int = 0) -> bytes:
    """One blosc buffer holding ``src`` (see :func:`zarrx.codecs._blosc.compress`)."""
    return call(_message, _lib().compress, src, typesize, clevel, shuffle, cname, blocksize)


def decompress(src: Buffer, expected: int) -> bytes:
    """The blosc buffer ``src``, which must decode to exactly ``expected`` bytes."""
    return call(_message, _lib().decompress, src, expected)


def decompress_into(src: Buffer, dst: Any) -> None:
    """Decode the blosc buffer ``src`` into the writable bytes ``dst``, filling it exactly."""
    call(_message, _lib().decompress_into, src, dst)


def check(src: Buffer, expected: int) -> None:
    """Refuse ``src`` when its header says it cannot decode to ``expected`` bytes (nothing is
    allocated or decoded)."""
    call(_message, _lib().check, src, expected)


def header(src: Buffer) -> dict[str, Any]:
    """The 16-byte header of the blosc buffer ``src`` as a dict."""
    return call(_message, _lib().header, src)


def _require_built(cname: str, where: str) -> None:
    """Refuses a compressor the linked c-blosc lacks (its snappy support is optional): a codec
    naming one is not made, so an array of it opens and its chunks are refused. ``where``
    names the field."""
    k = _lib()
    if not k.built(cname):
        have = ", ".join(c for c in sorted(k.CNAMES) if k.built(c))
        raise CodecError(f"{where}: compressor {cname!r} is not built into this c-blosc "
                         f"{k.version()} (it has {have})")


class Blosc(BytesToBytesCodec):
    """``blosc``: ``cname`` (blosclz, lz4, lz4hc, snappy, zlib, zstd: one this c-blosc has),
    ``clevel`` 0..9, ``shuffle`` ("noshuffle", "shuffle", "bitshuffle"; numcodecs: 0, 1, 2 or
    -1 for automatic; None, as zarr-python's ``BloscCodec``: "bitshuffle" for 1-byte items,
    else "shuffle"),
    ``typesize`` (None: the chunk's item size), ``blocksize`` (0: automatic; numcodecs' form
    also takes a negative one, which means automatic too).

    Read as ``numcodecs.blosc`` (numcodecs' configuration: an integer shuffle, no typesize), it
    is written back in that form; otherwise in the v3 form."""

    name = "blosc"
    direct_into = True
    max_input = MAX_BUFFERSIZE
    cname: str
    clevel: int
    shuffle: str | int | None
    typesize: int | None
    blocksize: int

    def __init__(self, cname: str = "zstd", clevel: int = 5, shuffle: str | int | None = None,
                 typesize: int | None = None, blocksize: int = 0) -> None:
        numcodecs = isinstance(shuffle, int) and not isinstance(shuffle, bool)
        self._configure("numcodecs.blosc" if numcodecs else "blosc", cname=cname,
                        clevel=clevel, shuffle="shuffle" if shuffle is None else shuffle,
                        typesize=typesize, blocksize=blocksize)
        _require_built(self.cname, "zarrx.codecs.Blosc cname")
        if shuffle is None:
            self.shuffle = None                         # chosen from the item size by ``bind``
        self._typesize_given = typesize is not None     # numcodecs writes only a given one

    @classmethod
    def from_spec(cls, spec: CodecSpec, dtype: Any = None, shape: Sequence[int] = (),
                  *, where: str = "codec") -> "Blosc":
        cname = (spec.configuration or {}).get("cname")
        if isinstance(cname, str) and cname in _lib().CNAMES:
            _require_built(cname, config_field(where, "cname"))
        return super().from_spec(spec, dtype, shape, where=where)  # type: ignore[return-value]

    def configuration(self) -> dict[str, Any]:
        if self._as == "numcodecs.blosc":
            cfg: dict[str, Any] = {"cname": self.cname, "clevel": self.clevel,
                                   "shuffle": self.shuffle_code(self.typesize or 1)
                                   if not isinstance(self.shuffle, int) else self.shuffle}
            if self.typesize is not None and self._typesize_given:
                cfg["typesize"] = self.typesize
            cfg["blocksize"] = self.blocksize
            return cfg
        cfg = {"cname": self.cname, "clevel": self.clevel,
               "shuffle": _SHUFFLE_NAMES[self.shuffle_code(self.typesize or 1)]}
        if self.typesize is not None:
            cfg["typesize"] = self.typesize
        cfg["blocksize"] = self.blocksize
        return cfg

    def shuffle_code(self, typesize: int) -> int:
        if isinstance(self.shuffle, str):
            return SHUFFLES[self.shuffle]
        if self.shuffle is None or self.shuffle == -1:         # numcodecs AUTOSHUFFLE
            return 2 if typesize == 1 else 1
        return self.shuffle

    def bind(self, dtype: np.dtype) -> "Blosc":
        if self.typesize is not None and self.shuffle is not None:
            return self
        bound = copy.copy(self)
        size = dtype.itemsize if not dtype.hasobject else 1
        if self.shuffle is None:                    # zarr-python's choice, by the item size
            object.__setattr__(bound, "shuffle", "bitshuffle" if size == 1 else "shuffle")
        if self.typesize is None:                   # as zarr-python: the item size
            object.__setattr__(bound, "typesize", size if 1 <= size <= 2**31 - 1 else 1)
        return bound

    def max_encoded_size(self, n: int | None) -> int | None:
        return None if n is None else n + MAX_OVERHEAD

    def encode(self, data: Buffer) -> Buffer:
        src = as_u8(data)
        if src.nbytes > MAX_BUFFERSIZE:
            raise CodecError(f"blosc: a chunk of {src.nbytes} bytes exceeds blosc's limit of "
                             f"{MAX_BUFFERSIZE} bytes; use smaller chunks or another compressor")
        typesize = self.typesize or 1
        return compress(src, typesize, self.clevel, self.shuffle_code(typesize), self.cname,
                        max(self.blocksize, 0))

    def encode_rows(self, chunk: np.ndarray, fill: bytes | None) -> Any:
        """``encode`` of the bytes of a 2-D ``chunk`` of 4-byte items whose rows are contiguous
        (a chunk's view into a larger array), byte-shuffled as they are read, with no gathered
        copy (:func:`zarrx.codecs._blosc.compress_rows`). With ``fill`` (one item's bytes),
        None when the chunk is nothing but that item. NotImplemented where it cannot be done
        so: the caller gathers the chunk and calls :meth:`encode`."""
        if chunk.ndim != 2 or chunk.dtype.itemsize != 4 or chunk.strides[1] != 4 \
                or (self.typesize or 1) != 4 or self.shuffle_code(4) != 1:
            return NotImplemented
        try:
            return _lib().compress_rows(chunk.view(np.uint8),
                                        None if fill is None else np.frombuffer(fill, np.uint8),
                                        self.clevel, self.cname, max(self.blocksize, 0))
        except KernelStatus as st:
            raise CodecError(_message(st)) from None

    def encode_many(self, bufs: Any, skip: Any = None) -> list[bytes | None]:
        """Rows of a 2-D uint8 array (each under blosc's limit) compressed by the kernel
        straight, its settings worked out once; other sequences one by one."""
        if not isinstance(bufs, np.ndarray) or bufs.ndim != 2:
            return super().encode_many(bufs, skip)
        bufs, skip = many_args(self.name, bufs, skip)
        if bufs.shape[1] > MAX_BUFFERSIZE:
            return super().encode_many(bufs, skip)
        typesize = self.typesize or 1
        args = (typesize, self.clevel, self.shuffle_code(typesize), self.cname,
                max(self.blocksize, 0))
        return rows_by_kernel(bufs, skip, _lib().compress, args, _message)

    def _check(self, src: memoryview, expected: int | None, limit: int) -> int:
        """The decoded size the header declares, checked against the chunk's."""
        h = header(src)
        if h["cbytes"] != src.nbytes:
            raise CodecError(f"blosc header claims {h['cbytes']} compressed bytes, "
                             f"found {src.nbytes}")
        check_size("blosc", h["nbytes"], expected, limit)
        return h["nbytes"]

    def check_stored(self, data: memoryview, expected: int) -> None:
        src = as_u8(data)
        self._check(src, expected, expected)
        check(src, expected)

    def decode(self, data: Buffer, expected: int | None, limit: int) -> Buffer:
        src = as_u8(data)
        n = self._check(src, expected, limit)
        return decompress(src, n)       # allocates only a size the buffer's length can decode to

    def decode_into(self, data: Buffer, dst: np.ndarray) -> None:
        src, dst = as_u8(data), out_u8("blosc", dst)
        self._check(src, dst.shape[0], dst.shape[0])
        if dst.shape[0]:
            decompress_into(src, dst)

    def decode_many(self, src: np.ndarray, starts: np.ndarray, lengths: np.ndarray,
                    dst: np.ndarray) -> tuple[int, None] | None:
        """:meth:`decode_into` of many chunks of ``src`` into the rows of ``dst``, the kernel
        called straight (it checks the header as :meth:`_check` does); ``(i, None)`` for the
        first chunk that does not decode (:meth:`decode_into` of it says why)."""
        return spans_by_kernel(src, starts, lengths, dst, _lib().decompress_into)
