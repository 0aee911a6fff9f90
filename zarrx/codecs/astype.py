"""numcodecs ``astype``: store the chunk converted to another numeric type."""
from __future__ import annotations

from typing import Any

import numpy as np

from zarrx.codecs.base import ArrayToArrayCodec, casts_alike, native
from zarrx.codecs.delta import match_dtype
from zarrx.errors import CodecError

__all__ = ["AsType"]


class AsType(ArrayToArrayCodec):
    """numcodecs ``astype``: ``encode_dtype`` (stored), ``decode_dtype`` (the chunk's; None:
    whatever the chunk has). Values are converted with numpy's ``astype`` both ways."""

    name = "numcodecs.astype"
    encode_dtype: np.dtype
    decode_dtype: np.dtype | None

    def __init__(self, encode_dtype: Any, decode_dtype: Any = None) -> None:
        self._configure(encode_dtype=encode_dtype, decode_dtype=decode_dtype)

    def bind(self, dtype: np.dtype, shape: tuple[int, ...]) -> "AsType":
        return self if self.decode_dtype is not None else AsType(self.encode_dtype, dtype)

    def configuration(self) -> dict[str, Any]:
        cfg = {"encode_dtype": self.encode_dtype.str}
        if self.decode_dtype is not None:
            cfg["decode_dtype"] = self.decode_dtype.str
        return cfg

    def resolve(self, dtype: np.dtype, shape: tuple[int, ...], where: str
                ) -> tuple[np.dtype, tuple[int, ...]]:
        match_dtype(self.decode_dtype, dtype, where, "decode_dtype")
        if dtype.hasobject:
            raise CodecError(f"{where}: astype cannot convert the variable-length type {dtype}")
        for dt in (dtype, self.encode_dtype):     # numpy converts only these kinds both ways
            if dt.kind not in "biufcmM":
                raise CodecError(f"{where}: astype converts between bool, numeric, datetime "
                                 f"and timedelta types, found {dt}")
        return native(self.encode_dtype), shape

    def encode(self, arr: np.ndarray) -> np.ndarray:
        return arr.astype(native(self.encode_dtype))

    def encode_stack(self, chunks: np.ndarray) -> np.ndarray:
        """:meth:`encode` of each of ``chunks`` (the chunk axis first), all at once: the same
        items (each converted alone); NotImplemented for a conversion whose result may depend
        on where an item lies (:func:`~zarrx.codecs.base.casts_alike`: floats out of an
        integer type's range, NaN or infinite)."""
        if not casts_alike(chunks, native(self.encode_dtype)):
            return NotImplemented
        return self.encode(chunks)

    def decode(self, arr: np.ndarray, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        return arr.astype(dtype)

    def decode_stack(self, stack: np.ndarray, dtype: np.dtype, shape: tuple[int, ...]
                     ) -> np.ndarray:
        """:meth:`decode` of each of ``stack`` (the chunk axis first), all at once: the same
        items; NotImplemented as for :meth:`encode_stack`."""
        if not casts_alike(stack, dtype):
            return NotImplemented
        return stack.astype(dtype)
