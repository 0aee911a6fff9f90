"""zarr-extensions ``scale_offset``: stores ``(x - offset) * scale``, decodes
``x / scale + offset``, in the arithmetic of the chunk's own data type.

Integer types compute exactly and refuse what the type cannot hold (an overflow, in an
intermediate or final value, is an error, never a wrap) and, decoding, a division that leaves
a remainder. Float types compute in their type (IEEE results: an overflow gives an infinity;
into a type without infinities it is an error).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from zarrx.codecs.base import ArrayToArrayCodec, config_field, native
from zarrx.errors import CodecError, MetadataError

__all__ = ["ScaleOffset", "ValueWise", "value_type", "parse_scalar"]


class _Unrepresentable(ValueError):
    """A value the arithmetic cannot represent (the text of the codec's error)."""


def value_type(dtype: np.dtype, where: str, codec: str) -> Any:
    """The :class:`~zarrx.codecs.value_cast.VType` of a chunk's ``dtype``; MetadataError for a
    type the codec is not defined for."""
    from zarrx.codecs.value_cast import vtype
    from zarrx.metadata.codec_checks_cast import VALUE_TYPES
    from zarrx.metadata.dtypes import v3_json_for_numpy
    try:
        name = v3_json_for_numpy(native(dtype))
    except (TypeError, ValueError):
        name = None
    if not isinstance(name, str) or name not in VALUE_TYPES:
        raise MetadataError(f"{where}: {codec} is defined for integer and floating-point data "
                            f"types ({', '.join(VALUE_TYPES)}), found {dtype}")
    return vtype(native(dtype), name)


def parse_scalar(value: Any, vt: Any, where: str) -> Any:
    """A JSON scalar (the Zarr v3 fill value encoding of ``vt``'s type) as a numpy scalar."""
    from zarrx.metadata._util import Loc
    from zarrx.metadata.fill import parse_fill
    from zarrx.metadata.model import DataType
    key, _, path = where.rpartition(" ") if " " in where else (where, "", "")
    if value == "+Infinity" and not vt.is_int:     # the spelling of cast_value's own example
        value = "Infinity"
    loc = Loc(key, path) if path else Loc(where)
    out = parse_fill(value, DataType(vt.name, vt.dt, json=vt.name), loc)
    if vt.is_int or not (isinstance(value, (int, float)) or value in _SPECIAL):
        return out                                # integers are checked; bit patterns exact
    want = _SPECIAL[value] if isinstance(value, str) else _as_float(value)
    if math.isnan(want) and not vt.has_nan or math.isinf(want) and not vt.has_inf:
        raise loc.error(f"a value {vt.name} holds (it has no "
                        f"{'NaN' if math.isnan(want) else 'infinities'})", value)
    if not math.isfinite(want) or vt.has_inf:
        return out                  # rounded as IEEE 754 rounds (an infinity past the range)
    from zarrx.codecs.value_cast import CastFailure, cast_values, vtype
    try:                            # a type without infinities: nearest-even, never saturated
        return cast_values(np.array([want]), vtype(np.dtype(np.float64), "float64"), vt,
                           "nearest-even", None)[0]
    except CastFailure as exc:
        raise loc.error(f"a value {vt.name} holds ({exc.why})", value) from None


_SPECIAL = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def _as_float(value: Any) -> float:
    try:
        return float(value)
    except OverflowError:                       # an integer past every float
        return math.inf if value > 0 else -math.inf


class ValueWise(ArrayToArrayCodec):
    """A codec mapping each value alone (``scale_offset``, ``cast_value``): a stack of chunks
    is encoded or decoded as one array, and its parsed state (``_cache``) is not pickled."""

    def encode_stack(self, chunks: np.ndarray) -> Any:
        """:meth:`encode` of a stack of chunks (the chunk axis first): item by item, the same
        values; NotImplemented when a chunk cannot be encoded (encoding each alone says
        which)."""
        try:
            return self.encode(chunks)
        except CodecError:
            return NotImplemented

    def decode_stack(self, stack: np.ndarray, dtype: np.dtype, shape: tuple[int, ...]
                     ) -> Any:
        """:meth:`decode` of a stack of chunks (the chunk axis first): item by item, the same
        values; NotImplemented when a chunk cannot be decoded (decoding each alone says
        which)."""
        try:
            return self.decode(stack, dtype, shape)
        except CodecError:
            return NotImplemented

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "_cache"}

    def _parsed(self, dtype: np.dtype, where: str | None = None) -> Any:
        """:meth:`_parse` for chunks of ``dtype`` (``where``: the codec's name by default),
        parsed once per type."""
        cache = self.__dict__.get("_cache")
        if cache is None:
            cache = {}
            object.__setattr__(self, "_cache", cache)
        dt = native(np.dtype(dtype))
        got = cache.get(dt)
        if got is None:
            got = cache[dt] = self._parse(dt, where or self.name)
        return got


class ScaleOffset(ValueWise):
    """``scale_offset``: ``offset`` (default 0) and ``scale`` (default 1), numbers or their
    JSON spellings (``"NaN"``, ``"0x3f800000"``), as zarr-python's ``ScaleOffset``."""

    name = "scale_offset"
    offset: Any
    scale: Any

    def __init__(self, *, offset: Any = 0, scale: Any = 1) -> None:
        self._configure(offset=offset, scale=scale)
        for k, d in (("offset", 0), ("scale", 1)):
            if not hasattr(self, k) or getattr(self, k) is None:
                object.__setattr__(self, k, d)

    def configuration(self) -> dict[str, Any]:
        out = {}
        if not (type(self.offset) in (int, float) and self.offset == 0):
            out["offset"] = self.offset
        if not (type(self.scale) in (int, float) and self.scale == 1):
            out["scale"] = self.scale
        return out

    def resolve(self, dtype: np.dtype, shape: tuple[int, ...], where: str
                ) -> tuple[np.dtype, tuple[int, ...]]:
        self._parsed(dtype, where)
        return dtype, shape

    def _parse(self, dt: np.dtype, where: str) -> tuple[Any, Any, Any]:
        """``(value type, offset, scale)`` for chunks of ``dt``."""
        vt = value_type(dt, where, self.name)
        return (vt, *_scalars(self, vt, where))

    def encode(self, arr: np.ndarray) -> np.ndarray:
        vt, o, s = self._parsed(arr.dtype)
        try:
            return _apply(arr, vt, o, s, True)
        except _Unrepresentable as exc:
            raise CodecError(f"scale_offset: {exc.args[0]}") from None

    def decode(self, arr: np.ndarray, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        vt, o, s = self._parsed(dtype)
        try:
            return _apply(np.asarray(arr).astype(native(dtype), copy=False), vt, o, s, False)
        except _Unrepresentable as exc:
            raise CodecError(f"scale_offset: {exc.args[0]}") from None

    def encode_fill(self, fill: Any, dtype: np.dtype, where: str = "scale_offset") -> Any:
        """The fill value of the encoded chunks, for ``fill`` of chunks of ``dtype``; a
        MetadataError (located at ``where``) when the arithmetic cannot represent it."""
        vt, o, s = self._parsed(dtype)
        try:
            return _apply(np.array([fill], dtype=native(dtype)), vt, o, s, True)[0]
        except _Unrepresentable as exc:
            raise MetadataError(f"{where}: the fill value cannot be encoded: "
                                f"{exc.args[0]}") from None



def _scalars(codec: ScaleOffset, vt: Any, where: str) -> tuple[Any, Any]:
    if type(codec.offset) in (int, float) and codec.offset == 0:
        offset = 0.0 if vt.table is not None and 0 not in vt.table else \
            vt.dt.type(0)               # the identity, also of a type without a zero
    else:
        offset = parse_scalar(codec.offset, vt, config_field(where, "offset"))
    scale = parse_scalar(codec.scale, vt, config_field(where, "scale"))
    if float(np.asarray(scale).astype(np.float64)) == 0:
        raise MetadataError(f"{config_field(where, 'scale')}: expected a non-zero scale "
                            f"(decoding divides by it), found {codec.scale!r}")
    return offset, scale


def _apply(arr: np.ndarray, vt: Any, offset: Any, scale: Any, enc: bool) -> np.ndarray:
    if vt.is_int:
        return _ints(arr, vt, int(offset), int(scale), enc)
    if not vt.has_inf:
        return _no_inf(arr, vt, offset, scale, enc)
    with np.errstate(all="ignore"):
        o, s = np.asarray(offset, vt.dt), np.asarray(scale, vt.dt)
        out = ((arr - o) * s) if enc else (arr / s + o)
        out = np.asarray(out).astype(vt.dt, copy=False)
    if not vt.has_inf or not vt.has_nan:
        bad = ~np.isfinite(out.astype(np.float64)) & np.isfinite(arr.astype(np.float64))
        if bad.any():
            x = arr.reshape(-1)[np.flatnonzero(bad.reshape(-1))[0]]
            raise _Unrepresentable(f"{_what(enc, offset, scale)} is not representable in "
                                   f"{vt.name} for the value {float(x)!r}")
    return out


def _no_inf(arr: np.ndarray, vt: Any, offset: Any, scale: Any, enc: bool) -> np.ndarray:
    """The float types without infinities (every one of at most 8 bits): each operation
    exact in float64, then rounded to the type (nearest-even), where a result past the
    finite range is an error (numpy's conversion would saturate it, or make it NaN)."""
    from zarrx.codecs.value_cast import CastFailure, cast_values, vtype
    f8 = vtype(np.dtype(np.float64), "float64")
    o, s = float(np.asarray(offset).astype(np.float64)), \
        float(np.asarray(scale).astype(np.float64))
    no_zero = vt.table is not None and 0 not in vt.table
    steps = ((lambda x: x - o, o == 0), (lambda x: x * s, s == 1)) if enc else \
        ((lambda x: x / s, s == 1), (lambda x: x + o, o == 0 and no_zero))
    out = arr
    for op, identity in steps:
        if identity:     # x - 0, x * 1, x / 1 are x (-0.0 + 0 is 0.0: added unless no 0)
            continue
        with np.errstate(all="ignore"):
            wide = op(out.astype(np.float64))
        try:
            out = cast_values(wide, f8, vt, "nearest-even", None)
        except CastFailure:
            x = arr.reshape(-1)[_first_failing(wide.reshape(-1), f8, vt)]
            raise _Unrepresentable(f"{_what(enc, offset, scale)} is not representable in "
                                   f"{vt.name} for the value {float(x)!r}") from None
    return out if out is not arr else arr.copy()


def _first_failing(wide: np.ndarray, f8: Any, vt: Any) -> int:
    """The index of the first item of ``wide`` the cast to ``vt`` refuses (by halving:
    time linear in the chunk)."""
    from zarrx.codecs.value_cast import CastFailure, cast_values
    lo, hi = 0, wide.size
    while hi - lo > 1:
        mid = (lo + hi) // 2
        try:
            cast_values(wide[lo:mid], f8, vt, "nearest-even", None)
        except CastFailure:
            hi = mid
        else:
            lo = mid
    return lo


def _what(enc: bool, offset: Any, scale: Any) -> str:
    o, s = _num(offset), _num(scale)
    return f"(x - {o}) * {s}" if enc else f"x / {s} + {o}"


def _num(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) and v.dtype.kind in "iuf" else \
        float(np.asarray(v).astype(np.float64)) if isinstance(v, np.generic) else v


def _ints(arr: np.ndarray, vt: Any, offset: int, scale: int, enc: bool) -> np.ndarray:
    """Exact integer arithmetic: the linear map's extremes are at the chunk's extremes, so
    bounds checked on those prove every item (and intermediate) fits; then numpy computes
    in the type itself (or int64 for int2/int4 types)."""
    if not arr.size:
        return arr.copy()
    if vt.bits < 8:                          # int2/int4 types: computed in int64
        arr = arr.astype(np.int64)
    lo, hi = int(arr.min()), int(arr.max())
    work = arr.dtype if arr.dtype != np.uint64 else np.dtype(np.uint64)

    def fail(x: int, what: str) -> _Unrepresentable:
        return _Unrepresentable(f"{what} for the value {x} of {vt.name} [{vt.lo}, {vt.hi}] "
                                f"(offset {offset}, scale {scale})")

    def check(x: int, v: int, what: str) -> None:
        if not vt.lo <= v <= vt.hi:
            raise fail(x, f"{what} = {v} is out of the range of {vt.name}")

    if enc:
        for x in (lo, hi):
            check(x, x - offset, f"x - {offset}")
            check(x, (x - offset) * scale, f"(x - {offset}) * {scale}")
        return ((arr - work.type(offset)) * work.type(scale)).astype(vt.dt)
    a = arr if arr.dtype in (np.uint64, np.int64) else arr.astype(np.int64)
    if scale == -1 and lo == vt.lo and vt.lo < 0:
        raise fail(lo, f"x / {scale} = {-lo} is out of the range of {vt.name}")
    sc = a.dtype.type(scale)
    rem = a % sc
    if rem.any():
        x = int(a.reshape(-1)[np.flatnonzero(rem.reshape(-1))[0]])
        raise fail(x, f"x / {scale} is not an integer")
    q = a // sc
    for qq in (int(q.min()), int(q.max())):
        check(qq * scale, qq + offset, f"x / {scale} + {offset}")
    return (q + q.dtype.type(offset)).astype(vt.dt)
