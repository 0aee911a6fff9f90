"""The ``blosc`` codec (v3 core, numcodecs ``blosc``): c-blosc 1 frames.

On decode everything is taken from the frame header (typesize and shuffle included, since
writers disagree with their metadata); the header's sizes are checked against the chunk first.
"""
from __future__ import annotations

import copy
from typing import Any

import numpy as np

from zarrx.codecs.base import (Buffer, BytesToBytesCodec, as_u8, cfg_choice, cfg_int, check_keys,
                               check_size)
from zarrx.errors import CodecError

__all__ = ["Blosc"]

CNAMES = ("blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd")
SHUFFLES = {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}
_SHUFFLE_NAMES = {v: k for k, v in SHUFFLES.items()}
MAX_OVERHEAD = 16
MAX_BUFFERSIZE = 2**31 - 1 - MAX_OVERHEAD     # c-blosc 1: INT32_MAX - BLOSC_MAX_OVERHEAD


def _lib() -> Any:
    from zarrx.codecs import _blosc
    return _blosc


class Blosc(BytesToBytesCodec):
    """``blosc``: ``cname`` (blosclz, lz4, lz4hc, snappy, zlib, zstd), ``clevel`` 0..9,
    ``shuffle`` ("noshuffle", "shuffle", "bitshuffle"; numcodecs: 0, 1, 2 or -1 for automatic),
    ``typesize`` (None: the chunk's item size), ``blocksize`` (0: automatic)."""

    name = "blosc"
    codec_id = "blosc"
    direct_into = True
    max_input = MAX_BUFFERSIZE

    def __init__(self, cname: str = "zstd", clevel: int = 5, shuffle: str | int = "shuffle",
                 typesize: int | None = None, blocksize: int = 0) -> None:
        if cname not in CNAMES:
            raise CodecError(f"blosc: cname: expected one of {', '.join(CNAMES)}, found {cname!r}")
        if isinstance(clevel, bool) or not isinstance(clevel, int) or not 0 <= clevel <= 9:
            raise CodecError(f"blosc: clevel: expected an integer in [0, 9], found {clevel!r}")
        if shuffle not in SHUFFLES and shuffle not in (-1, 0, 1, 2) or isinstance(shuffle, bool):
            raise CodecError(f"blosc: shuffle: expected 'noshuffle', 'shuffle', 'bitshuffle' or "
                             f"-1, 0, 1, 2, found {shuffle!r}")
        if typesize is not None and (isinstance(typesize, bool) or not isinstance(typesize, int)
                                     or not 1 <= typesize <= 255):
            raise CodecError(f"blosc: typesize: expected an integer in [1, 255], "
                             f"found {typesize!r}")
        if isinstance(blocksize, bool) or not isinstance(blocksize, int) or blocksize < 0:
            raise CodecError(f"blosc: blocksize: expected an integer >= 0, found {blocksize!r}")
        self.cname, self.clevel, self.shuffle = cname, clevel, shuffle
        self.typesize, self.blocksize = typesize, blocksize

    @classmethod
    def from_config(cls, config: dict, where: str, *, dtype: np.dtype, v2: bool) -> "Blosc":
        shuffle = config.get("shuffle")
        if v2 or (isinstance(shuffle, int) and not isinstance(shuffle, bool)):   # numcodecs form
            check_keys(config, ("cname", "clevel", "shuffle", "blocksize", "typesize"), where)
            return cls(cfg_choice(config, "cname", where, CNAMES, "lz4"),
                       cfg_int(config, "clevel", where, 5, lo=0, hi=9),
                       cfg_choice(config, "shuffle", where, (-1, 0, 1, 2), 1),
                       cfg_int(config, "typesize", where, None, lo=1, hi=255, allow_none=True),
                       cfg_int(config, "blocksize", where, 0, lo=0))
        check_keys(config, ("cname", "clevel", "shuffle", "typesize", "blocksize"), where)
        return cls(cfg_choice(config, "cname", where, CNAMES),
                   cfg_int(config, "clevel", where, lo=0, hi=9),
                   cfg_choice(config, "shuffle", where, tuple(SHUFFLES)),
                   cfg_int(config, "typesize", where, None, lo=1, hi=255, allow_none=True),
                   cfg_int(config, "blocksize", where, 0, lo=0))

    def configuration(self) -> dict[str, Any]:
        cfg: dict[str, Any] = {"cname": self.cname, "clevel": self.clevel, "shuffle": self.shuffle}
        if self.typesize is not None:
            cfg["typesize"] = self.typesize
        cfg["blocksize"] = self.blocksize
        return cfg

    def to_spec(self, *, v2: bool | None = None):  # type: ignore[no-untyped-def]
        spec = super().to_spec(v2=v2)
        cfg = spec.configuration
        if spec.v2 or spec.name.startswith("numcodecs."):     # numcodecs: integer shuffle
            if isinstance(cfg["shuffle"], str):
                cfg["shuffle"] = SHUFFLES[cfg["shuffle"]]
            cfg.pop("typesize", None)
        elif isinstance(cfg["shuffle"], int):                 # v3: shuffle names
            cfg["shuffle"] = _SHUFFLE_NAMES[self.shuffle_code(self.typesize or 1)]
        return spec

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
