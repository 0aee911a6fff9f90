"""zarr-extensions ``cast_value``: stores each value converted to ``data_type`` by the spec's
ordered procedure (scalar map, exact value, rounding, out-of-range rule), and decodes by the
same procedure back (:mod:`zarrx.codecs.value_cast`)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from zarrx.codecs.base import config_field, native
from zarrx.codecs.scale_offset import ValueWise, parse_scalar, value_type
from zarrx.errors import CodecError, MetadataError

__all__ = ["CastValue"]


class CastValue(ValueWise):
    """``cast_value``: ``data_type`` (the stored type's v3 name), ``rounding`` (default
    ``"nearest-even"``), ``out_of_range`` (None: an error; ``"clamp"``; ``"wrap"``),
    ``scalar_map`` (``{"encode": [[in, out], ...], "decode": [...]}``), as zarr-python's
    ``CastValue``."""

    name = "cast_value"
    data_type: str
    rounding: str
    out_of_range: str | None
    scalar_map: dict[str, tuple[tuple[Any, Any], ...]] | None

    def __init__(self, *, data_type: Any, rounding: str = "nearest-even",
                 out_of_range: str | None = None, scalar_map: Any = None) -> None:
        if isinstance(scalar_map, Mapping):   # zarr-python's form {"encode": {in: out}} too,
            scalar_map = {k: [list(p) for p in v.items()] if isinstance(v, Mapping) else v
                          for k, v in scalar_map.items() if v is not None}    # None: absent
        self._configure(data_type=data_type, rounding=rounding, out_of_range=out_of_range,
                        scalar_map=scalar_map)
        for k, d in (("rounding", "nearest-even"), ("out_of_range", None), ("scalar_map", None)):
            if k not in self.__dict__:
                object.__setattr__(self, k, d)

    def configuration(self) -> dict[str, Any]:
        out: dict[str, Any] = {"data_type": self.data_type}
        if self.rounding != "nearest-even":
            out["rounding"] = self.rounding
        if self.out_of_range is not None:
            out["out_of_range"] = self.out_of_range
        if self.scalar_map is not None:
            out["scalar_map"] = {k: [list(p) for p in v] for k, v in self.scalar_map.items()}
        return out

    def _target(self) -> np.dtype:
        from zarrx.metadata._util import Loc
        from zarrx.metadata.dtypes import parse_dtype_v3
        return parse_dtype_v3(self.data_type, Loc("cast_value data_type")).numpy

    def resolve(self, dtype: np.dtype, shape: tuple[int, ...], where: str
                ) -> tuple[np.dtype, tuple[int, ...]]:
        self._parsed(dtype, where)
        return native(self._target()), shape

    def _parse(self, dt: np.dtype, where: str) -> tuple[Any, ...]:
        """``(source type, target type, encode pairs, decode pairs)`` for chunks of ``dt``."""
        src = value_type(dt, where, self.name)
        tgt = value_type(self._target(), config_field(where, "data_type"), self.name)
        smap = self.scalar_map or {}
        pairs = [_pairs(smap.get(side, ()), a, b, config_field(where, f"scalar_map.{side}"))
                 for side, a, b in (("encode", src, tgt), ("decode", tgt, src))]
        return (src, tgt, *pairs)

    def _run(self, arr: np.ndarray, a: Any, b: Any, pairs: Any, enc: bool) -> np.ndarray:
        from zarrx.codecs.value_cast import CastFailure, cast_values
        try:
            return cast_values(arr, a, b, self.rounding, self.out_of_range, pairs)
        except CastFailure as exc:
            raise CodecError(f"cast_value: {self._why(exc, a, b, enc)}") from None

    def _why(self, exc: Any, a: Any, b: Any, enc: bool) -> str:
        way = "encode" if enc else "decode"
        return (f"cannot {way} the value {exc.value!r} of {a.name} as {b.name}: {exc.why} "
                f"(rounding {self.rounding!r}, out_of_range {self.out_of_range!r}, no "
                f"scalar_map.{way} entry for it)")

    def encode(self, arr: np.ndarray) -> np.ndarray:
        src, tgt, enc, _ = self._parsed(arr.dtype)
        return self._run(arr, src, tgt, enc, True)

    def decode(self, arr: np.ndarray, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        src, tgt, _, dec = self._parsed(dtype)
        stored = np.asarray(arr).astype(tgt.dt, copy=False)
        return self._run(stored, tgt, src, dec, False)

    def encode_fill(self, fill: Any, dtype: np.dtype, where: str = "cast_value") -> Any:
        """The fill value of the stored chunks for ``fill`` of chunks of ``dtype``; a
        MetadataError when it does not come back as itself (the spec requires it)."""
        from zarrx.codecs.value_cast import CastFailure, cast_values, same_value
        src, tgt, enc, dec = self._parsed(dtype)
        value = np.array([fill], dtype=src.dt)
        enc_ = True
        try:
            stored = cast_values(value, src, tgt, self.rounding, self.out_of_range, enc)
            enc_ = False
            back = cast_values(stored, tgt, src, self.rounding, self.out_of_range, dec)
        except CastFailure as exc:
            a, b = (src, tgt) if enc_ else (tgt, src)
            raise MetadataError(f"{where}: the fill value {_show(value[0])} cannot be cast: "
                                f"{self._why(exc, a, b, enc_)}") from None
        if not same_value(back[0], value[0], src):
            raise MetadataError(f"{where}: the fill value {_show(value[0])} does not survive "
                                f"the cast: encoded as {_show(stored[0])} of {tgt.name}, it "
                                f"decodes as {_show(back[0])}; expected a fill value the "
                                f"codec maps back to itself (add a scalar_map pair)")
        return stored[0]



def _show(v: Any) -> Any:
    f = float(np.asarray(v).astype(np.float64))
    return int(v) if np.asarray(v).dtype.kind in "iu" else f


def _pairs(items: Any, a: Any, b: Any, at: str) -> Any:
    """The scalar map pairs of one direction as numpy scalars of the types ``a`` (inputs)
    and ``b`` (outputs): plain numbers in bulk, others (and any error) item by item."""
    from zarrx.codecs.value_cast import PairMap
    if len(items) > 8:
        keys, values = _bulk([k for k, _ in items], a), _bulk([v for _, v in items], b)
        if keys is not None and values is not None:
            return PairMap(zip(keys, values))
    return PairMap((parse_scalar(k, a, f"{at}[{i}][0]"), parse_scalar(v, b, f"{at}[{i}][1]"))
                   for i, (k, v) in enumerate(items))


_NATIVE_FLOATS = tuple(np.dtype(t) for t in ("f2", "f4", "f8"))


def _bulk(col: list[Any], vt: Any) -> np.ndarray | None:
    """``col`` as an array of ``vt``'s type, as :func:`parse_scalar` parses each item; None
    when an item needs that parse (a string, a value out of range, a narrow type...)."""
    if vt.is_int:
        if vt.bits < 8 or not all(type(v) is int for v in col) \
                or min(col) < vt.lo or max(col) > vt.hi:
            return None
        return np.array(col, dtype=vt.dt)
    if vt.dt not in _NATIVE_FLOATS or not all(type(v) in (int, float) for v in col):
        return None
    try:
        f = np.array(col, dtype=np.float64)
    except OverflowError:
        return None
    if not np.isfinite(f).all() or np.abs(f).max() > float(np.finfo(vt.dt).max):
        return None
    return f.astype(vt.dt)

