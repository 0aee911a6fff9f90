"""numcodecs lossy float filters: ``fixedscaleoffset``, ``quantize``, ``bitround``."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from zarrx.codecs.base import ArrayToArrayCodec, casts_alike, config_field, native
from zarrx.codecs.delta import _drop_none, dtype_str, match_dtype
from zarrx.errors import CodecError

__all__ = ["FixedScaleOffset", "Quantize", "BitRound"]


class FixedScaleOffset(ArrayToArrayCodec):
    """numcodecs ``fixedscaleoffset``: stores ``round((x - offset) * scale)`` as ``astype``;
    decodes ``enc / scale + offset`` back to ``dtype``."""

    name = "numcodecs.fixedscaleoffset"
    offset: float
    scale: float
    dtype: np.dtype | None
    astype: np.dtype | None

    def __init__(self, offset: float, scale: float, dtype: Any = None, astype: Any = None) -> None:
        self._configure(offset=offset, scale=scale, dtype=dtype, astype=astype)

    def bind(self, dtype: np.dtype, shape: tuple[int, ...]) -> "FixedScaleOffset":
        return self if self.dtype is not None else \
            FixedScaleOffset(self.offset, self.scale, dtype, self.astype)

    def configuration(self) -> dict[str, Any]:
        return _drop_none({"offset": self.offset, "scale": self.scale,
                           "dtype": dtype_str(self.dtype),
                           "astype": dtype_str(self.astype)})

    def resolve(self, dtype: np.dtype, shape: tuple[int, ...], where: str
                ) -> tuple[np.dtype, tuple[int, ...]]:
        dt = match_dtype(self.dtype, dtype, where)
        if dt.kind not in "iuf":
            raise CodecError(f"{where}: fixedscaleoffset needs a numeric data type, found {dt}")
        astype = native(self.astype) if self.astype is not None else dt
        if astype.kind not in "iuf":
            raise CodecError(f"{where}: fixedscaleoffset needs a numeric astype, found {astype}")
        return astype, shape

    def encode(self, arr: np.ndarray) -> np.ndarray:
        astype = native(self.astype) if self.astype is not None else native(arr.dtype)
        return self._scaled(arr).astype(astype, copy=False)

    def _scaled(self, arr: np.ndarray) -> np.ndarray:
        """``round((arr - offset) * scale)``, before the cast to ``astype``."""
        if arr.dtype.kind in "iu":
            enc = _shift_scale(arr, self.offset, self.scale)
        else:                       # as numcodecs: in the chunk's own float type
            enc = (arr - self.offset) * self.scale
        return np.around(enc)

    def encode_stack(self, chunks: np.ndarray) -> np.ndarray:
        """:meth:`encode` of each of ``chunks`` (the chunk axis first), all at once: the same
        items, each computed alone. Float chunks are scaled item by item; integer chunks take
        the arithmetic :func:`_shift_scale` picks from their bounds, the same for all of them
        when it is exact in int64 for the bounds of the stack (then it is for each chunk's,
        which lie inside). NotImplemented otherwise (chunks near the 64-bit limits, where
        chunks of the stack may each take another arithmetic), and when the cast to
        ``astype`` may give an item other bytes than it gives alone
        (:func:`~zarrx.codecs.base.casts_alike`: out of range, NaN or infinite)."""
        if chunks.dtype.kind in "iu" and type(self.offset) is int and chunks.size \
                and not _exact_int64(int(chunks.min()), int(chunks.max()), self.offset,
                                     self.scale):
            return NotImplemented
        astype = native(self.astype) if self.astype is not None else native(chunks.dtype)
        enc = self._scaled(chunks)
        if not casts_alike(enc, astype):
            return NotImplemented
        return enc.astype(astype, copy=False)

    def decode(self, arr: np.ndarray, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        # as numcodecs computes it; the checked configuration holds finite floats' values
        return ((arr / float(self.scale)) + float(self.offset)).astype(dtype, copy=False)

    def decode_stack(self, stack: np.ndarray, dtype: np.dtype, shape: tuple[int, ...]
                     ) -> np.ndarray:
        """:meth:`decode` of each of ``stack`` (the chunk axis first), all at once: the same
        items; NotImplemented when the cast to ``dtype`` may give an item other bytes than it
        gives alone (:func:`~zarrx.codecs.base.casts_alike`)."""
        dec = (stack / float(self.scale)) + float(self.offset)
        if not casts_alike(dec, dtype):
            return NotImplemented
        return dec.astype(dtype, copy=False)


def _fits(t: type, *values: int) -> bool:
    info = np.iinfo(t)
    return all(int(info.min) <= v <= int(info.max) for v in values)


def _exact_int64(lo: int, hi: int, offset: int, scale: float) -> bool:
    """Whether :func:`_shift_scale` computes in int64 alone for values from ``lo`` to ``hi``
    (an ``int`` offset): int64 holds the values, the offset and the differences, and, for an
    ``int`` scale, the products too."""
    d = (lo - offset, hi - offset)
    if not _fits(np.int64, lo, hi, offset, *d):
        return False
    return type(scale) is not int or _fits(np.int64, *d, scale, d[0] * scale, d[1] * scale)


def _shift_scale(arr: np.ndarray, offset: float, scale: float) -> np.ndarray:
    """``(arr - offset) * scale`` for integer ``arr``, without the wrap-around of numcodecs'
    arithmetic in ``arr``'s own type (which corrupts values silently: int16 data with offset
    1000 and scale 100). The result is numcodecs' wherever numcodecs does not wrap: exact
    integers (int64 or uint64) while the bounds of the chunk's values allow, float64 when a
    float takes part (as in numcodecs), float64 beyond the 64-bit integers."""
    lo, hi = (int(arr.min()), int(arr.max())) if arr.size else (0, 0)
    if type(offset) is not int:
        diff: np.ndarray = arr.astype(np.float64) - offset
    else:
        d = (lo - offset, hi - offset)
        t = next((t for t in (np.int64, np.uint64) if _fits(t, lo, hi, offset, *d)), None)
        if t is None:
            return (arr.astype(np.float64) - float(offset)) * float(scale)
        diff = arr.astype(t) - t(offset)
        if type(scale) is int:
            p = (d[0] * scale, d[1] * scale)
            t2 = next((t2 for t2 in (np.int64, np.uint64)
                       if _fits(t2, *d, scale, *p)), None)
            if t2 is not None:
                return diff.astype(t2) * t2(scale)
            return diff.astype(np.float64) * float(scale)
    return diff * scale


class Quantize(ArrayToArrayCodec):
    """numcodecs ``quantize``: keep ``digits`` decimal digits of precision (rounding to a power
    of two step), stored as ``astype``."""

    name = "numcodecs.quantize"
    digits: int
    dtype: np.dtype | None
    astype: np.dtype | None

    def __init__(self, digits: int, dtype: Any = None, astype: Any = None) -> None:
        self._configure(digits=digits, dtype=dtype, astype=astype)

    def bind(self, dtype: np.dtype, shape: tuple[int, ...]) -> "Quantize":
        return self if self.dtype is not None else Quantize(self.digits, dtype, self.astype)

    def configuration(self) -> dict[str, Any]:
        return _drop_none({"digits": self.digits, "dtype": dtype_str(self.dtype),
                           "astype": dtype_str(self.astype)})

    def resolve(self, dtype: np.dtype, shape: tuple[int, ...], where: str
                ) -> tuple[np.dtype, tuple[int, ...]]:
        dt = match_dtype(self.dtype, dtype, where)
        if dt.kind != "f":
            raise CodecError(f"{where}: quantize needs a floating point data type, found {dt}")
        return native(self.astype) if self.astype is not None else dt, shape

    def _scale(self) -> float:
        exp = math.log10(10.0 ** -self.digits)
        exp = math.floor(exp) if exp < 0 else math.ceil(exp)
        return 2.0 ** math.ceil(math.log2(10.0 ** -exp))

    def encode(self, arr: np.ndarray) -> np.ndarray:
        astype = native(self.astype) if self.astype is not None else native(arr.dtype)
        return self._rounded(arr).astype(astype, copy=False)

    def _rounded(self, arr: np.ndarray) -> np.ndarray:
        scale = self._scale()
        return np.around(scale * arr) / scale

    def encode_stack(self, chunks: np.ndarray) -> np.ndarray:
        """:meth:`encode` of each of ``chunks`` (the chunk axis first), all at once: the same
        items (the step depends on ``digits`` alone, each item is rounded alone);
        NotImplemented when the cast to ``astype`` may give an item other bytes than it gives
        alone (:func:`~zarrx.codecs.base.casts_alike`)."""
        astype = native(self.astype) if self.astype is not None else native(chunks.dtype)
        enc = self._rounded(chunks)
        if not casts_alike(enc, astype):
            return NotImplemented
        return enc.astype(astype, copy=False)

    def decode(self, arr: np.ndarray, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        return arr.astype(dtype, copy=False)

    def decode_stack(self, stack: np.ndarray, dtype: np.dtype, shape: tuple[int, ...]
                     ) -> np.ndarray:
        """:meth:`decode` of each of ``stack`` (the chunk axis first), all at once: floats
        converted item by item."""
        if not casts_alike(stack, dtype):
            return NotImplemented
        return stack.astype(dtype, copy=False)


_MANTISSA = {2: 10, 4: 23, 8: 52}


class BitRound(ArrayToArrayCodec):
    """numcodecs ``bitround``: keep ``keepbits`` mantissa bits of floats (round half to even);
    the data type is unchanged, decoding is the identity."""

    name = "numcodecs.bitround"
    keepbits: int

    def __init__(self, keepbits: int) -> None:
        self._configure(keepbits=keepbits)

    def configuration(self) -> dict[str, Any]:
        return {"keepbits": self.keepbits}

    def resolve(self, dtype: np.dtype, shape: tuple[int, ...], where: str
                ) -> tuple[np.dtype, tuple[int, ...]]:
        if dtype.kind != "f" or dtype.itemsize not in _MANTISSA:
            raise CodecError(f"{where}: bitround needs a float16/32/64 data type, found {dtype}")
        if self.keepbits > _MANTISSA[dtype.itemsize]:
            raise CodecError(f"{config_field(where, 'keepbits')}: expected at most "
                             f"{_MANTISSA[dtype.itemsize]} for {dtype}, found {self.keepbits}")
        return dtype, shape

    def encode(self, arr: np.ndarray) -> np.ndarray:
        bits = _MANTISSA[arr.dtype.itemsize]
        if self.keepbits == bits:
            return arr
        ints = np.dtype(f"i{arr.dtype.itemsize}")
        b = np.array(arr, dtype=native(arr.dtype), order="C").view(ints)
        drop = bits - self.keepbits
        mask = (np.array(-1, dtype=ints) >> drop) << drop
        b += ((b >> drop) & 1) + ints.type((1 << (drop - 1)) - 1)
        b &= mask
        return b.view(native(arr.dtype))

    def encode_stack(self, chunks: np.ndarray) -> np.ndarray:
        """:meth:`encode` of each of ``chunks`` (the chunk axis first), all at once: the same
        items (each rounded alone)."""
        return self.encode(chunks)

    def decode(self, arr: np.ndarray, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        return arr

    def decode_stack(self, stack: np.ndarray, dtype: np.dtype, shape: tuple[int, ...]
                     ) -> np.ndarray:
        """:meth:`decode` of each of ``stack``: the stack itself."""
        return stack
