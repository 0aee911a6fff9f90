"""Validators of the zarr-extensions value codecs ``scale_offset`` and ``cast_value``: the
configuration's shape (known fields only, their JSON types, the enumerations). The scalars
(``offset``, ``scale``, ``scalar_map`` entries) are JSON fill values of a data type the codec
learns when a plan binds it to a chunk, so they are parsed then (:mod:`zarrx.codecs.value_cast`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from zarrx.metadata._util import Loc

__all__ = ["check_scale_offset", "check_cast_value", "ROUNDING", "OUT_OF_RANGE",
           "VALUE_TYPES", "INT_TYPES"]

ROUNDING = ("nearest-even", "towards-zero", "towards-positive", "towards-negative",
            "nearest-away")
OUT_OF_RANGE = ("clamp", "wrap")
#: the data types both codecs are defined for (zarr-extensions' lists)
INT_TYPES = ("int2", "int4", "int8", "int16", "int32", "int64",
             "uint2", "uint4", "uint8", "uint16", "uint32", "uint64")
VALUE_TYPES = INT_TYPES + (
    "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e3m4", "float8_e4m3",
    "float8_e4m3b11fnuz", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
    "float8_e8m0fnu", "bfloat16", "float16", "float32", "float64")


def _scalar(value: Any, loc: Loc) -> Any:
    """A JSON fill value of a number type: a number or a string ("NaN", "0x7fc00000"...)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise loc.error("a number or a string (a fill value of the data type)", value,
                        loc._type_err)
    return value


def check_scale_offset(conf: dict[str, Any], loc: Loc) -> dict[str, Any]:
    """``offset`` (default 0), ``scale`` (default 1): JSON scalars of the input data type."""
    loc.keys(conf, (), ("offset", "scale"))
    return {k: _scalar(conf[k], loc / k) for k in ("offset", "scale") if k in conf}


def check_cast_value(conf: dict[str, Any], loc: Loc) -> dict[str, Any]:
    """``data_type`` (required), ``rounding``, ``out_of_range``, ``scalar_map``."""
    loc.keys(conf, ("data_type",), ("rounding", "out_of_range", "scalar_map"))
    out: dict[str, Any] = {"data_type": data_type_json(conf["data_type"], loc / "data_type")}
    if "rounding" in conf:
        out["rounding"] = (loc / "rounding").choice(conf["rounding"], ROUNDING)
    if "out_of_range" in conf:
        out["out_of_range"] = (loc / "out_of_range").choice(conf["out_of_range"], OUT_OF_RANGE)
    if "out_of_range" in out and out["out_of_range"] == "wrap" \
            and out["data_type"] not in INT_TYPES:
        raise (loc / "out_of_range").fail(
            f"'wrap' is only defined for integer data types (two's complement), found "
            f"data_type {out['data_type']!r}")
    if "scalar_map" in conf:
        out["scalar_map"] = _scalar_map(conf["scalar_map"], loc / "scalar_map")
    return out


def data_type_json(value: Any, loc: Loc) -> str:
    """The v3 name of a ``cast_value`` target (a name, or a numpy dtype for codec objects)."""
    if callable(getattr(value, "to_json", None)) and not isinstance(value, (str, dict)):
        try:                                # a zarr-python data type object (``UInt8()``)
            value = value.to_json(zarr_format=3)
        except (TypeError, ValueError):
            pass
    if isinstance(value, (np.dtype, type)) and not isinstance(value, str):
        from zarrx.metadata.dtypes import v3_json_for_numpy
        try:
            value = v3_json_for_numpy(np.dtype(value))
        except (TypeError, ValueError):
            pass
    if isinstance(value, dict) and isinstance(value.get("name"), str) \
            and set(value) <= {"name", "configuration"} and not value.get("configuration"):
        value = value["name"]               # the object form of a type without parameters
    if not isinstance(value, str) or value not in VALUE_TYPES:
        raise loc.error(f"an integer or floating-point data type name ({', '.join(VALUE_TYPES)})",
                        value, None if isinstance(value, str) else loc._type_err)
    return value


_PAIR = (list, tuple)
_PLAIN = (int, float, str)


def _scalar_map(value: Any, loc: Loc) -> dict[str, tuple[tuple[Any, Any], ...]]:
    obj = loc.obj(value)
    loc.keys(obj, (), ("encode", "decode"))
    out = {}
    for side in ("encode", "decode"):
        if side not in obj:
            continue
        sl = loc / side
        pairs = []
        for i, pair in enumerate(sl.list(obj[side], "an array of [input, output] pairs")):
            if type(pair) in _PAIR and len(pair) == 2 and type(pair[0]) in _PLAIN \
                    and type(pair[1]) in _PLAIN:
                pairs.append((pair[0], pair[1]))      # (a long map: no location made)
                continue
            pl = sl / i
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                raise pl.error("an [input, output] pair", pair, pl._type_err)
            pairs.append((_scalar(pair[0], pl / 0), _scalar(pair[1], pl / 1)))
        out[side] = tuple(pairs)
    return out
