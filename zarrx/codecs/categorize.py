"""numcodecs ``categorize``: strings stored as 1-based indices into a list of labels."""
from __future__ import annotations

from typing import Any

import numpy as np

from zarrx.codecs.base import ArrayToArrayCodec, cfg_dtype, check_keys, native
from zarrx.errors import CodecError

__all__ = ["Categorize"]


class Categorize(ArrayToArrayCodec):
    """numcodecs ``categorize``: ``labels`` (strings), ``dtype`` (``<U..`` or ``|O``),
    ``astype`` (an unsigned integer type). Values not among the labels encode as 0 and
    0 decodes to the empty string."""

    name = "numcodecs.categorize"
    codec_id = "categorize"

    def __init__(self, labels: list[str], dtype: Any = "|O", astype: Any = "|u1") -> None:
        if not isinstance(labels, (list, tuple)) or not all(isinstance(s, str) for s in labels):
            raise CodecError(f"categorize: labels: expected a list of strings, found {labels!r}")
        self.labels = list(labels)
        self.dtype = np.dtype(dtype)
        if self.dtype.kind not in "UO":
            raise CodecError(f"categorize: dtype: expected a unicode or object dtype, "
                             f"found {self.dtype.str}")
        self.astype = cfg_dtype({"d": astype}, "d", "categorize: astype")
        if self.astype.kind not in "iu" or len(self.labels) >= np.iinfo(self.astype).max:
            raise CodecError(f"categorize: astype: expected an integer type that can count "
                             f"{len(self.labels)} labels, found {self.astype.str}")

    @classmethod
    def from_config(cls, config: dict, where: str, *, dtype: np.dtype, v2: bool) -> "Categorize":
        check_keys(config, ("labels", "dtype", "astype"), where)
        if "labels" not in config:
            raise CodecError(f"{where}.labels: required field is missing")
        try:
            return cls(config["labels"], config.get("dtype", "|O"), config.get("astype", "|u1"))
        except (TypeError, ValueError) as exc:
            raise CodecError(f"{where}: {exc}") from None

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

    def decode(self, arr: np.ndarray, dtype: np.dtype, shape: tuple[int, ...],
               where: str) -> np.ndarray:
        codes = np.asarray(arr)
        if codes.size and int(codes.max()) > len(self.labels):
            raise CodecError(f"{where}: categorize: code {int(codes.max())} is beyond the "
                             f"{len(self.labels)} labels")
        dec = np.full(shape, "", dtype=dtype)
        for i, label in enumerate(self.labels):
            dec[codes == i + 1] = label
        return dec
