"""numcodecs ``shuffle``: group byte ``j`` of every element together (no compression)."""
from __future__ import annotations

import copy
from typing import Any

import numpy as np

from zarrx.codecs.base import Buffer, BytesToBytesCodec, as_u8, out_u8
from zarrx.errors import CodecError

__all__ = ["Shuffle"]


class Shuffle(BytesToBytesCodec):
    """numcodecs ``shuffle``: ``elementsize`` bytes per element (None: the chunk's item size).
    Output byte ``j * n + i`` is byte ``j`` of element ``i``."""

    name = "numcodecs.shuffle"
    direct_into = True
    elementsize: int | None

    def __init__(self, elementsize: int | None = None) -> None:
        self._configure(elementsize=elementsize)

    def configuration(self) -> dict[str, Any]:
        return {"elementsize": self.elementsize}

    def bind(self, dtype: np.dtype) -> "Shuffle":
        if self.elementsize is not None:
            return self
        bound = copy.copy(self)
        object.__setattr__(bound, "elementsize", dtype.itemsize)
        return bound

    def encoded_size(self, n: int | None) -> int | None:
        return n

    def _split(self, n: int) -> int:
        es = self.elementsize or 1
        if es > 1 and n % es:
            raise CodecError(f"shuffle: {n} bytes is not a multiple of the element size {es}")
        return es

    def encode(self, data: Buffer) -> Buffer:
        src = np.frombuffer(as_u8(data), dtype=np.uint8)
        es = self._split(src.shape[0])
        if es <= 1:
            return src.tobytes()
        return src.reshape(-1, es).T.tobytes()          # one transposing pass

    def decode(self, data: Buffer, expected: int | None, limit: int) -> Buffer:
        out = np.empty(as_u8(data).nbytes, dtype=np.uint8)
        self.decode_into(data, out, expected)
        return out

    def decode_into(self, data: Buffer, dst: np.ndarray,  # type: ignore[override]
                    expected: int | None = -1) -> None:
        src, dst = np.frombuffer(as_u8(data), dtype=np.uint8), out_u8("shuffle", dst)
        n = src.shape[0]
        want = dst.shape[0] if expected == -1 else expected
        if want is not None and n != want:
            raise CodecError(f"shuffle: expected {want} bytes, found {n}")
        es = self._split(n)
        if es <= 1:
            dst[:] = src
        else:
            dst.reshape(-1, es)[...] = src.reshape(es, -1).T
