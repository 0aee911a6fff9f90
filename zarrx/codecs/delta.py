"""numcodecs ``delta``: first value, then differences of consecutive values (C order)."""
from __future__ import annotations

from typing import Any

import numpy as np

from zarrx.codecs.base import ArrayToArrayCodec, config_field, native
from zarrx.errors import CodecError

__all__ = ["Delta", "match_dtype", "dtype_str", "_drop_none"]


def dtype_str(dt: np.dtype | None) -> str | None:
    return None if dt is None else dt.str


def _drop_none(cfg: dict[str, Any]) -> dict[str, Any]:
    """A configuration without unset (chunk-dependent) fields."""
    return {k: v for k, v in cfg.items() if v is not None}


def match_dtype(declared: np.dtype | None, actual: np.dtype, where: str, field: str = "dtype"
                ) -> np.dtype:
    """The codec's declared input dtype must be the one it receives (byte order aside)."""
    if declared is None:
        return actual
    if native(declared) != native(actual):
        raise CodecError(f"{config_field(where, field)}: the codec receives {actual.str} data, "
                         f"found {declared.str}")
    return native(actual)


class Delta(ArrayToArrayCodec):
    """numcodecs ``delta``: ``dtype`` (the input type; None: the chunk's), ``astype`` (the
    stored type of the differences; None: ``dtype``)."""

    name = "numcodecs.delta"
    dtype: np.dtype | None
    astype: np.dtype | None

    def __init__(self, dtype: Any = None, astype: Any = None) -> None:
        self._configure(dtype=dtype, astype=astype)

    def bind(self, dtype: np.dtype, shape: tuple[int, ...]) -> "Delta":
        return self if self.dtype is not None else Delta(dtype, self.astype)

    def configuration(self) -> dict[str, Any]:
        return _drop_none({"dtype": dtype_str(self.dtype),
                           "astype": dtype_str(self.astype or self.dtype)})

    def resolve(self, dtype: np.dtype, shape: tuple[int, ...], where: str
                ) -> tuple[np.dtype, tuple[int, ...]]:
        dt = match_dtype(self.dtype, dtype, where)
        if dt.kind not in "iufc" and dt.kind != "m":
            raise CodecError(f"{where}: delta needs a numeric data type, found {dt}")
        astype = native(self.astype) if self.astype is not None else dt
        if astype.kind not in ("m" if dt.kind == "m" else "biufc"):
            want = "a timedelta" if dt.kind == "m" else "a numeric"
            raise CodecError(f"{where}: delta needs {want} astype for the differences of "
                             f"{dt}, found {astype}")
        return astype, shape

    def encode(self, arr: np.ndarray) -> np.ndarray:
        flat = arr.reshape(-1)
        astype = native(self.astype) if self.astype is not None else native(arr.dtype)
        enc = np.empty(flat.shape, dtype=astype)
        if flat.size:
            enc[0] = flat[0]
            enc[1:] = np.diff(flat)
        return enc.reshape(arr.shape)

    def decode(self, arr: np.ndarray, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        dec = np.empty(arr.size, dtype=dtype)
        if arr.size:
            np.cumsum(arr.reshape(-1), out=dec)
        return dec.reshape(shape)
