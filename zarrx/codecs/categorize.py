"""numcodecs ``categorize``: strings stored as 1-based indices into a list of labels."""
from __future__ import annotations

from typing import Any

import numpy as np

from zarrx.codecs.base import ArrayToArrayCodec, native
from zarrx.errors import CodecError

__all__ = ["Categorize"]


class Categorize(ArrayToArrayCodec):
    """numcodecs ``categorize``: ``labels`` (strings), ``dtype`` (``<U..`` or ``|O``),
    ``astype`` (an unsigned integer type). Values not among the labels encode as 0 and
    0 decodes to the empty string."""

    name = "numcodecs.categorize"
    labels: list[str]
    dtype: np.dtype
    astype: np.dtype

    def __init__(self, labels: list[str], dtype: Any = "|O", astype: Any = "|u1") -> None:
        self._configure(labels=labels, dtype=dtype, astype=astype)

    def configuration(self) -> dict[str, Any]:
        return {"labels": list(self.labels), "dtype": self.dtype.str, "astype": self.astype.str}

    def resolve(self, dtype: np.dtype, shape: tuple[int, ...], where: str
                ) -> tuple[np.dtype, tuple[int, ...]]:
        if dtype.kind not in "UO":
            raise CodecError(f"{where}: categorize needs a string data type, found {dtype}")
        return native(self.astype), shape

    def encode(self, arr: np.ndarray) -> np.ndarray:
        enc = np.zeros(arr.shape, dtype=native(self.astype))
        for i, label in enumerate(self.labels):
            enc[arr == label] = i + 1
        return enc

    def encode_stack(self, chunks: np.ndarray) -> np.ndarray:
        """:meth:`encode` of each of ``chunks`` (the chunk axis first), all at once: the same
        codes (the labels are the configuration's, each item is looked up alone)."""
        return self.encode(chunks)

    def decode(self, arr: np.ndarray, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        codes = np.asarray(arr)
        if codes.size and int(codes.max()) > len(self.labels):
            raise CodecError(f"categorize: code {int(codes.max())} is beyond the "
                             f"{len(self.labels)} labels")
        dec = np.full(shape, "", dtype=dtype)
        for i, label in enumerate(self.labels):
            dec[codes == i + 1] = label
        return dec

    def decode_stack(self, stack: np.ndarray, dtype: np.dtype, shape: tuple[int, ...]
                     ) -> np.ndarray:
        """:meth:`decode` of each of ``stack`` (the chunk axis first), all at once, each code
        looked up alone; NotImplemented when a code is beyond the labels (decoding the chunk
        alone words that)."""
        if stack.size and int(stack.max()) > len(self.labels):
            return NotImplemented
        dec = np.full((len(stack), *shape), "", dtype=dtype)
        for i, label in enumerate(self.labels):
            dec[stack == i + 1] = label
        return dec
