"""Codec throughput: the bare Cython codecs on one chunk, and whole-array write/read through
each codec chain."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from . import _common
from ._common import CODECS


def _bare(codec: str) -> tuple[Callable, Callable]:
    """(compress(src) -> bytes, decompress_into(blob, out)) of the zarrx Cython codec modules."""
    if codec == "zstd-0":
        from zarrx.codecs import _zstd
        return (lambda s: _zstd.compress(s, 0)), _zstd.decompress_into
    if codec.startswith("gzip-"):
        from zarrx.codecs import _zlib
        level = int(codec[5:])
        return ((lambda s: _zlib.compress(s, level, "gzip")),
                (lambda b, o: _zlib.decompress_into(b, o, "gzip")))
    if codec == "blosc-lz4":
        from zarrx.codecs import _blosc
        return (lambda s: _blosc.compress(s, 4, 5, 1, "lz4")), _blosc.decompress_into
    raise NotImplementedError(codec)


class BareCodec:
    """One 256×256 float32 chunk (256 KiB) through the bare codec."""

    params = (["zstd-0", "gzip-1", "gzip-5", "blosc-lz4"],)
    param_names = ["codec"]

    def setup(self, codec: str) -> None:
        self.compress, self.decompress_into = _bare(codec)
        self.src = np.ascontiguousarray(_common.data(256)).reshape(-1).view(np.uint8)
        self.blob = self.compress(self.src)
        self.out = np.empty_like(self.src)

    def time_compress(self, codec: str) -> None:
        self.compress(self.src)

    def time_decompress(self, codec: str) -> None:
        self.decompress_into(self.blob, self.out)

    def track_ratio(self, codec: str) -> float:
        return len(self.blob) / self.src.nbytes


class Checksum:
    """crc32c over one 256 KiB chunk."""

    def setup(self) -> None:
        from zarrx.codecs._crc32c import crc32c
        self.crc32c = crc32c
        self.src = np.ascontiguousarray(_common.data(256)).reshape(-1).view(np.uint8)

    def time_crc32c(self) -> None:
        self.crc32c(self.src)


class ArrayCodec:
    """Whole-array write and read of a 1024×1024 float32 array (4 MiB), chunks 256×256."""

    params = (list(CODECS),)
    param_names = ["codec"]

    def setup(self, codec: str) -> None:
        self.values = _common.data(1024)
        self.store, self.z = _common.array(self.values, (1024, 1024), (256, 256), codec)

    def time_write(self, codec: str) -> None:
        self.z[...] = self.values

    def time_read(self, codec: str) -> None:
        self.z[...]

    def track_stored_ratio(self, codec: str) -> float:
        stored = sum(len(self.store.get(k) or b"") for k in list(self.store.list_prefix("c")))
        return stored / self.values.nbytes
