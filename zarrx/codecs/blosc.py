"""The ``blosc`` codec (v3 core, numcodecs ``blosc``): c-blosc 1 frames.

On decode everything is taken from the frame header (typesize and shuffle included, since
writers disagree with their metadata); the header's sizes are checked against the chunk first.
"""
from __future__ import annotations

import copy
from typing import Any

import numpy as np

from zarrx.codecs.base import Buffer, BytesToBytesCodec, as_u8, check_size
from zarrx.errors import CodecError
from zarrx.metadata.codec_checks import BLOSC_SHUFFLES

__all__ = ["Blosc"]

SHUFFLES = {name: i for i, name in enumerate(BLOSC_SHUFFLES)}
_SHUFFLE_NAMES = dict(enumerate(BLOSC_SHUFFLES))
MAX_OVERHEAD = 16
MAX_BUFFERSIZE = 2**31 - 1 - MAX_OVERHEAD     # c-blosc 1: INT32_MAX - BLOSC_MAX_OVERHEAD


def _lib() -> Any:
    from zarrx.codecs import _blosc
    return _blosc


class Blosc(BytesToBytesCodec):
    """``blosc``: ``cname`` (blosclz, lz4, lz4hc, zlib, zstd), ``clevel`` 0..9, ``shuffle``
    ("noshuffle", "shuffle", "bitshuffle"; numcodecs: 0, 1, 2 or -1 for automatic),
    ``typesize`` (None: the chunk's item size), ``blocksize`` (0: automatic).

    Read as ``numcodecs.blosc`` (numcodecs' configuration: an integer shuffle, no typesize), it
    is written back in that form; otherwise in the v3 form."""

    name = "blosc"
    direct_into = True
    max_input = MAX_BUFFERSIZE
    cname: str
    clevel: int
    shuffle: str | int
    typesize: int | None
    blocksize: int

    def __init__(self, cname: str = "zstd", clevel: int = 5, shuffle: str | int = "shuffle",
                 typesize: int | None = None, blocksize: int = 0) -> None:
        numcodecs = isinstance(shuffle, int) and not isinstance(shuffle, bool)
        self._configure("numcodecs.blosc" if numcodecs else "blosc", cname=cname,
                        clevel=clevel, shuffle=shuffle, typesize=typesize, blocksize=blocksize)
        self._typesize_given = typesize is not None     # numcodecs writes only a given one

    def configuration(self) -> dict[str, Any]:
        if self._as == "numcodecs.blosc":
            cfg: dict[str, Any] = {"cname": self.cname, "clevel": self.clevel,
                                   "shuffle": self.shuffle_code(self.typesize or 1)
                                   if isinstance(self.shuffle, str) else self.shuffle}
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
        if self.shuffle == -1:                                 # numcodecs AUTOSHUFFLE
            return 2 if typesize == 1 else 1
        return self.shuffle

    def bind(self, dtype: np.dtype) -> "Blosc":
        if self.typesize is not None:
            return self
        bound = copy.copy(self)
        size = dtype.itemsize if not dtype.hasobject else 1
        bound.typesize = size if 1 <= size <= 255 else 1
        return bound

    def max_encoded_size(self, n: int | None) -> int | None:
        return None if n is None else n + MAX_OVERHEAD

    def encode(self, data: Buffer) -> Buffer:
        src = as_u8(data)
        if src.nbytes > MAX_BUFFERSIZE:
            raise CodecError(f"blosc: a chunk of {src.nbytes} bytes exceeds blosc's limit of "
                             f"{MAX_BUFFERSIZE} bytes; use smaller chunks or another compressor")
        typesize = self.typesize or 1
        return _lib().compress(src, typesize, self.clevel, self.shuffle_code(typesize),
                               self.cname, self.blocksize)

    def _check(self, src: memoryview, expected: int | None, limit: int, where: str) -> None:
        try:
            h = _lib().header(src)
        except CodecError as exc:
            raise CodecError(f"{where}: {exc}") from None
        if h["cbytes"] != src.nbytes:
            raise CodecError(f"{where}: blosc header claims {h['cbytes']} compressed bytes, "
                             f"found {src.nbytes}")
        check_size(where, "blosc", h["nbytes"], expected, limit)

    def decode(self, data: Buffer, expected: int | None, limit: int, where: str) -> Buffer:
        src = as_u8(data)
        self._check(src, expected, limit, where)
        n = _lib().header(src)["nbytes"]
        try:            # allocates only a size the buffer's length can decode to
            return _lib().decompress(src, n)
        except CodecError as exc:
            raise CodecError(f"{where}: {exc}") from None

    def _into(self, src: memoryview, dst: np.ndarray, where: str) -> None:
        if dst.shape[0] == 0:
            return
        try:
            _lib().decompress_into(src, dst)
        except CodecError as exc:
            raise CodecError(f"{where}: {exc}") from None

    def decode_into(self, data: Buffer, dst: np.ndarray, where: str) -> None:
        src = as_u8(data)
        self._check(src, dst.shape[0], dst.shape[0], where)
        self._into(src, dst, where)
