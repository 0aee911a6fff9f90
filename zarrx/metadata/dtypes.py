"""Data types: v3 names and extension objects, v2 typestrs, and the numpy dtypes behind them.

A :class:`DataType` holds a native-byte-order numpy dtype; the stored byte order lives in the
``bytes`` codec (a v2 structured type whose fields differ in byte order holds them as stored).
v3 types: the core types (``bool``, ``int8``…``uint64``, ``float16/32/64``, ``complex64/128``,
raw bits ``r<N>``), the registered extensions ``string``, ``bytes`` (also read as
``variable_length_bytes``), ``numpy.datetime64`` / ``numpy.timedelta64``, the fixed-size types
``fixed_length_utf32``, ``null_terminated_bytes``, ``raw_bytes``, ``struct`` and its legacy
alias ``structured``, and the ML types (``bfloat16``, ``float8_*``, ``float6_*``,
``float4_e2m1fn``, ``int2/int4/uint2/uint4``) when the optional ``ml_dtypes`` package is
installed. v2 types: every numpy typestr with a byte order (``<``, ``>``, ``|``), ``O`` for
objects, structured descriptors, and the ML type names.

The data types a user asks for when creating an array (numpy dtypes, names, zarr-python
data type objects) are resolved into these by :mod:`zarrx.metadata.dtype_input`.
"""
from __future__ import annotations

import re
import sys
from math import prod
from typing import Any

import numpy as np

from zarrx.metadata._util import Loc, freeze, thaw
from zarrx.metadata.frozen import FrozenDict
from zarrx.metadata.model import DataType

__all__ = ["parse_dtype_v3", "dtype_v3_json", "parse_dtype_v2", "dtype_v2_json", "category",
           "v3_json_for_numpy", "v2_typestr", "struct_fields", "TIME_UNITS", "ML_NAMES", "CORE",
           "RAW_NAME", "ml_dtype", "big_endian", "COMPLEX_ALIASES", "struct_dtype",
           "MAX_ITEM_BYTES", "value_bits_mask", "value_bits_row", "clear_unused_bits"]

CORE = {"bool": "?", "int8": "i1", "int16": "i2", "int32": "i4", "int64": "i8", "uint8": "u1",
        "uint16": "u2", "uint32": "u4", "uint64": "u8", "float16": "f2", "float32": "f4",
        "float64": "f8", "complex64": "c8", "complex128": "c16"}
#: zarr-extensions' names of the core complex types (zarrs writes them), read and written back
COMPLEX_ALIASES = {"complex_float32": "c8", "complex_float64": "c16"}
ML_NAMES = ("bfloat16", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn",
            "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
            "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "int2", "int4", "uint2", "uint4")
TIME_UNITS = ("Y", "M", "W", "D", "h", "m", "s", "ms", "us", "μs", "ns", "ps", "fs", "as")
GENERIC = "generic"      # numpy's unit-less datetime64 / timedelta64 ('<m8' in Zarr v2)
FIXED = {"fixed_length_utf32": "U", "null_terminated_bytes": "S", "raw_bytes": "V"}
STRING_NAMES = ("string",)
BYTES_NAMES = ("bytes", "variable_length_bytes")
MAX_ITEM_BYTES = 2**31 - 1
RAW_NAME = re.compile(r"r([0-9]{1,10})\Z")
_V2 = re.compile(r"([<>|=]?)(b1|[iu][1248]|f[248]|c8|c16|[SUV][0-9]{1,10}"
                 r"|[Mm]8(?:\[([0-9]*)(\w+)\])?|O)\Z")


def ml_dtype(name: str) -> np.dtype | None:
    try:
        import ml_dtypes
    except ImportError:
        return None
    t = getattr(ml_dtypes, name, None)
    return None if t is None else np.dtype(t)


def category(dt: DataType) -> str:
    """One of bool int float complex raw string bytes datetime timedelta fixed_str fixed_bytes
    structured object — how fill values and codecs treat the type."""
    n = dt.numpy
    if dt.variable:
        name = dt.name if isinstance(dt.name, str) else ""
        if name == "object":        # Zarr v2 |O of vlen-array, json2, msgpack2 items
            return "object"
        return "bytes" if name in BYTES_NAMES else "string"
    if n.kind == "O":
        return "object"
    if n.fields is not None:
        return "structured"
    if isinstance(dt.name, str) and dt.name in _ML_SET:
        return "int" if "int" in dt.name else "float"
    if n.kind == "V":
        ml = _ml_name(n)
        if ml is not None:
            return "int" if "int" in ml else "float"
        return "raw"
    return _KIND_CATEGORY[n.kind]


_ML_SET = frozenset(ML_NAMES)
_KIND_CATEGORY = {"b": "bool", "i": "int", "u": "int", "f": "float", "c": "complex",
                  "M": "datetime", "m": "timedelta", "U": "fixed_str", "S": "fixed_bytes"}


#: ML types narrower than their byte, by the bits that hold the value: the ``bytes`` codec
#: stores each in one byte whose other (upper) bits readers ignore (zarr-extensions)
_VALUE_BITS = {"int2": 2, "uint2": 2, "int4": 4, "uint4": 4, "float4_e2m1fn": 4,
               "float6_e2m3fn": 6, "float6_e3m2fn": 6}


def value_bits_mask(n: np.dtype) -> int:
    """For a type narrower than its byte (``int4``, ``float4_e2m1fn``...), the mask of the bits
    that hold the value (``0x0f``), as ml_dtypes holds it in memory; 0 for other types."""
    bits = _VALUE_BITS.get(n.name) if n.itemsize == 1 and _maybe_ml(n) else None
    return 0 if bits is None else (1 << bits) - 1


def value_bits_row(n: np.dtype) -> np.ndarray | None:
    """For a type holding values narrower than their byte (``int4``, or a structured type with
    such a field at any depth, subarray fields included), one item's mask of the bits that hold
    values: ``itemsize`` bytes, ``0xff`` but at those values' bytes. None when it has none."""
    if n.subdtype is not None:
        sub = value_bits_row(n.subdtype[0])
        return None if sub is None else np.tile(sub, prod(n.subdtype[1]))
    if n.fields is None:
        bits = value_bits_mask(n)
        return None if not bits else np.array([bits], dtype=np.uint8)
    row: np.ndarray | None = None
    for field, offset, *_ in n.fields.values():     # (10**5 fields: a few ms)
        if field.itemsize != 1 and field.fields is None and field.subdtype is None:
            continue                                 # not narrow, holds none
        sub = value_bits_row(field)
        if sub is not None:
            if row is None:
                row = np.full(n.itemsize, 0xFF, dtype=np.uint8)
            row[offset:offset + sub.size] &= sub
    return row


def clear_unused_bits(value: Any, n: np.dtype) -> Any:
    """The scalar ``value`` of type ``n`` with the bits no value of it uses cleared (see
    :func:`value_bits_row`): as decoding leaves them, so fill values compare bit for bit."""
    row = value_bits_row(n)
    if row is None:
        return value
    item = np.array(value, dtype=n)
    raw = item.reshape(1).view(np.uint8)
    np.bitwise_and(raw, row, out=raw)
    return item[()]


def _maybe_ml(n: np.dtype) -> bool:
    """An ml_dtypes type (most are kind "V"; some, such as float8_e5m2, kind "f")."""
    return n.kind == "V" or n.type.__module__.startswith("ml_dtypes")


def _ml_name(n: np.dtype) -> str | None:
    for name in ML_NAMES:
        if ml_dtype(name) == n:
            return name
    return None


def _time_dtype(kind: str, unit: str, scale: int) -> np.dtype:
    if unit == GENERIC:
        return np.dtype(f"{kind}8")
    unit = "us" if unit == "μs" else unit
    return np.dtype(f"{kind}8[{scale if scale != 1 else ''}{unit}]")


# -- v3 --------------------------------------------------------------------------------------
# the core types by name, made once (frozen: every array of a type shares one)
_CORE_TYPES = {name: DataType(name, np.dtype(code), json=name) for name, code in CORE.items()}


def parse_dtype_v3(value: Any, loc: Loc) -> DataType:
    """A v3 ``data_type`` (name string or ``{"name", "configuration"}`` object)."""
    if type(value) is str:
        core = _CORE_TYPES.get(value)
        if core is not None:
            return core
    conf: dict[str, Any] | None = None
    if isinstance(value, str):
        name = value
    elif isinstance(value, dict):
        loc.keys(value, ("name",), ("configuration", "must_understand"))
        name = (loc / "name").str(value["name"])
        if "configuration" in value:
            conf = (loc / "configuration").obj(value["configuration"])
        if "must_understand" in value:
            (loc / "must_understand").bool(value["must_understand"])
    else:
        raise loc.error("a data type name or object", value)
    cl = loc / "configuration"
    if name in CORE or name in COMPLEX_ALIASES or name in STRING_NAMES or name in BYTES_NAMES \
            or RAW_NAME.match(name) or name in ML_NAMES:
        if conf:
            raise (cl / next(iter(conf))).fail(f"unknown field; data type {name!r} takes no "
                                                "configuration")
    if name in CORE or name in COMPLEX_ALIASES:
        return DataType(name, np.dtype(CORE.get(name) or COMPLEX_ALIASES[name]), json=value)
    if name in STRING_NAMES or name in BYTES_NAMES:
        return DataType(name, np.dtype("O"), variable=True, json=value)
    m = RAW_NAME.match(name)
    if m:
        bits = int(m.group(1))
        if bits == 0 or bits % 8 or bits // 8 > MAX_ITEM_BYTES:
            raise loc.error("raw bits r<N> with N a positive multiple of 8", name)
        return DataType(name, np.dtype(f"V{bits // 8}"), json=value)
    if name in ML_NAMES:
        nd = ml_dtype(name)
        if nd is None:
            raise loc.error(f"a data type this installation supports ({name!r} needs the "
                            "optional ml_dtypes package)", name)
        return DataType(name, nd, json=value)
    if name in ("numpy.datetime64", "numpy.timedelta64"):
        conf = cl.obj(conf if conf is not None else None)
        cl.keys(conf, ("unit", "scale_factor"))
        unit = (cl / "unit").str(conf["unit"])
        if unit not in TIME_UNITS and unit != GENERIC:
            raise (cl / "unit").error(f"one of {', '.join(TIME_UNITS)}, {GENERIC}", unit)
        if unit == GENERIC:       # numpy has no scaled unit-less type
            scale = (cl / "scale_factor").int(conf["scale_factor"], 1, 1,
                                              f"1 for the unit {GENERIC!r}")
        else:
            scale = (cl / "scale_factor").int(conf["scale_factor"], 1, 2**31 - 1)
        return DataType(name, _time_dtype("M" if "date" in name else "m", unit, scale), json=value)
    if name in FIXED:
        conf = cl.obj(conf)
        cl.keys(conf, ("length_bytes",))
        n = (cl / "length_bytes").int(conf["length_bytes"], 1 if name != "fixed_length_utf32"
                                      else 4, MAX_ITEM_BYTES)
        if name == "fixed_length_utf32":
            if n % 4:
                raise (cl / "length_bytes").error("a multiple of 4", n)
            n //= 4
        return DataType(name, np.dtype(f"{FIXED[name]}{n}"), json=value)
    if name in ("structured", "struct"):
        conf = cl.obj(conf)
        cl.keys(conf, ("fields",))
        fields = _struct_fields(name, conf["fields"], cl / "fields")
        dt = DataType(name, struct_dtype([(f, sub.numpy) for f, sub in fields], loc),
                      json=value)
        if name == "struct":
            _remember(value, fields)
        return dt
    raise loc.error("a known data type", value)


_DICTS = (dict, FrozenDict)


def _struct_fields(name: str, value: Any, fl: Loc) -> list[tuple[str, DataType]]:
    """The fields of a ``struct`` (``{"name", "data_type"}`` objects) or legacy ``structured``
    (``[name, data type]`` pairs) data type, each with its data type."""
    fields = fl.list(value)
    if not fields:
        raise fl.error("at least one field", fields)
    out: list[tuple[str, DataType]] = []
    names: set[str] = set()
    for i, f in enumerate(fields):
        if name == "struct" and type(f) in _DICTS and len(f) == 2:    # the common case, no Loc
            fname, ftype = f.get("name"), f.get("data_type")
            sub = _CORE_TYPES.get(ftype) if type(ftype) is str else None
            if sub is not None and type(fname) is str and fname and fname not in names:
                names.add(fname)
                out.append((fname, sub))
                continue
        if name == "struct":
            f = (fl / i).obj(f)
            (fl / i).keys(f, ("name", "data_type"))
            at_name, at_type, fname, ftype = fl / i / "name", fl / i / "data_type", \
                f["name"], f["data_type"]
        else:
            f = (fl / i).list(f, "a [name, data type] pair")
            if len(f) != 2:
                raise (fl / i).error("a [name, data type] pair", f)
            at_name, at_type, fname, ftype = fl / i / 0, fl / i / 1, f[0], f[1]
        fname = at_name.str(fname)
        if not fname or fname in names:
            raise at_name.error("a unique non-empty field name", fname)
        names.add(fname)
        sub = parse_dtype_v3(ftype, at_type)
        if sub.variable:
            raise at_type.error("a fixed-size data type", ftype)
        out.append((fname, sub))
    return out


def struct_fields(dt: DataType) -> list[tuple[str, DataType]] | None:
    """The fields of a v3 ``struct`` data type, each with its data type (their fill values
    are given field by field), or None for any other type."""
    j = dt._json
    if not (isinstance(j, dict) and j.get("name") == "struct"):
        return None
    known = _FIELDS.get(id(j))
    if known is not None and known[0] is j:       # parsed already (a type of 10**5 fields)
        return known[1]
    return _remember(j, _struct_fields("struct", j["configuration"]["fields"],
                                       Loc("data_type")))


_FIELDS: dict[int, tuple[Any, list[tuple[str, DataType]]]] = {}


def _remember(j: Any, fields: list[tuple[str, DataType]]) -> list[tuple[str, DataType]]:
    """Keep the parsed fields of the ``struct`` data type ``j`` for :func:`struct_fields`."""
    if len(_FIELDS) >= 16:
        _FIELDS.clear()
    _FIELDS[id(j)] = (j, fields)                  # holds j: its id is not reused meanwhile
    return fields


def item_bytes(n: np.dtype) -> int:
    """The bytes of one item of ``n``, its fields' sizes added up in Python integers (numpy
    adds them in a C int, which wraps)."""
    if n.subdtype is not None:
        base, shape = n.subdtype
        return item_bytes(base) * prod(shape)
    if n.fields is None:
        return n.itemsize
    return max(n.itemsize, sum(item_bytes(n.fields[f][0]) for f in n.names))


def struct_dtype(fields: list[tuple], loc: Loc) -> np.dtype:
    """The packed structured dtype of ``fields`` (``(name, dtype)`` or ``(name, dtype,
    shape)``), refused when an item would be larger than numpy's limit: numpy adds the field
    sizes in a C int, which wraps (fields of 2**31-1, 2**31-1 and 6 bytes made an item of 4
    bytes with a field at offset -2, whose reads ran outside the chunk's memory)."""
    total = sum(item_bytes(f[1]) * (prod(f[2]) if len(f) == 3 else 1) for f in fields)
    if total > MAX_ITEM_BYTES:
        raise loc.found(f"a structured type of at most {MAX_ITEM_BYTES} bytes an item",
                        f"fields of {total} bytes")
    return _safe_dtype(fields, loc)


def _safe_dtype(spec: Any, loc: Loc) -> np.dtype:
    try:
        return np.dtype(spec)
    except (TypeError, ValueError, OverflowError, MemoryError, SyntaxError) as exc:
        raise loc.error("a data type numpy can represent", str(exc)) from None


def dtype_v3_json(dt: DataType) -> Any:
    if dt._json is not None and not _is_v2_name(dt.name) and not _is_v2_name(dt._json):
        return dt._json
    if isinstance(dt.name, str) and not _is_v2_name(dt.name):
        return dt.name
    return v3_json_for_numpy(dt.numpy, dt.variable, dt.name)


def _is_v2_name(name: Any) -> bool:
    return isinstance(name, tuple) or (isinstance(name, str) and bool(_V2.match(name))
                                       and name not in CORE)


def v3_json_for_numpy(n: np.dtype, variable: bool = False, hint: Any = None) -> Any:
    """The v3 ``data_type`` JSON for a (native) numpy dtype."""
    if variable or n.kind == "O":
        return "string" if hint not in BYTES_NAMES else "bytes"
    if n.fields is not None:
        return {"name": "structured", "configuration": {"fields": [
            [f, v3_json_for_numpy(n.fields[f][0])] for f in n.names]}}
    ml = _ml_name(n) if _maybe_ml(n) else None
    if ml:
        return ml
    for name, code in CORE.items():
        if np.dtype(code) == n:
            return name
    if n.kind in "Mm":
        unit, scale = np.datetime_data(n)
        return {"name": "numpy.datetime64" if n.kind == "M" else "numpy.timedelta64",
                "configuration": {"unit": unit, "scale_factor": scale}}
    if n.kind == "U":
        return {"name": "fixed_length_utf32", "configuration": {"length_bytes": n.itemsize}}
    if n.kind == "S":
        return {"name": "null_terminated_bytes", "configuration": {"length_bytes": n.itemsize}}
    if n.kind == "V":
        return {"name": "raw_bytes", "configuration": {"length_bytes": n.itemsize}}
    raise Loc("data type").error("a numpy dtype with a Zarr v3 equivalent", str(n))


# -- v2 --------------------------------------------------------------------------------------
def parse_dtype_v2(value: Any, loc: Loc) -> tuple[DataType, str | None]:
    """A v2 ``dtype``: returns the data type and the stored byte order ("little", "big", None)."""
    if isinstance(value, str):
        n, endian = _parse_typestr(value, loc)
        return DataType(value, n, variable=n.kind == "O", json=value), endian
    if isinstance(value, list):
        n, stored, endians = _parse_struct(value, loc, 0)
        if len(endians) > 1:        # no one byte order: held in memory in the fields' own
            return DataType(freeze(value), stored, json=value), None
        return DataType(freeze(value), n, json=value), (endians.pop() if endians else None)
    raise loc.error("a typestr such as '<f4' or a structured descriptor", value)


def _parse_typestr(s: str, loc: Loc) -> tuple[np.dtype, str | None]:
    if s in ML_NAMES:
        nd = ml_dtype(s)
        if nd is None:
            raise loc.error(f"a data type this installation supports ({s!r} needs the "
                            "optional ml_dtypes package)", s)
        return nd, ("little" if nd.itemsize > 1 else None)
    m = _V2.match(s)
    if not m:
        raise loc.error("a typestr such as '<f4', '|u1', '<M8[ns]', '|S5' or '|O'", s)
    order, code = m.group(1), m.group(2)
    if code[0] in "SUV" and int(code[1:]) == 0:
        raise loc.error("a positive length", s)
    if m.group(4) is not None and m.group(4) not in TIME_UNITS:
        raise loc.error(f"a time unit among {', '.join(TIME_UNITS)}", s)
    if m.group(3) and not 1 <= int(m.group(3)) <= 2**31 - 1:   # v3's scale_factor range
        raise loc.error("a time unit multiplier in [1, 2147483647]", s)
    n = _safe_dtype(code.replace("μs", "us"), loc)
    if n.itemsize > MAX_ITEM_BYTES:
        raise loc.error(f"an item of at most {MAX_ITEM_BYTES} bytes", s)
    multi = n.itemsize > 1 and n.kind not in "SVOb"
    if multi:
        if order not in "<>" or not order:
            raise loc.error("a byte order '<' or '>' for a multi-byte type", s)
        endian: str | None = "little" if order == "<" else "big"
    else:
        if order not in ("|", "<", ">"):
            raise loc.error("a byte order '|', '<' or '>'", s)
        endian = None
    return n.newbyteorder("="), endian


def _parse_struct(value: list, loc: Loc, depth: int) -> tuple[np.dtype, np.dtype, set[str]]:
    """A v2 structured descriptor: the type in native byte order, the type with each field in
    the byte order it declares, and the byte orders declared."""
    if not value:
        raise loc.error("at least one field", value)
    if depth > 8:
        raise loc.found("structured types nested at most 8 deep", "deeper nesting")
    fields, stored, endians, names = [], [], set(), set()
    for i, f in enumerate(value):
        fl = loc / i
        if not isinstance(f, list) or len(f) not in (2, 3):
            raise fl.error("a [name, dtype] or [name, dtype, shape] field", f)
        name = (fl / 0).str(f[0])
        if not name or name in names:
            raise (fl / 0).error("a unique non-empty field name", name)
        names.add(name)
        if isinstance(f[1], list):
            sub, own, e = _parse_struct(f[1], fl / 1, depth + 1)
            endians |= e
        else:
            sub, en = _parse_typestr((fl / 1).str(f[1], "a typestr or a list of fields"), fl / 1)
            if sub.kind == "O":
                raise (fl / 1).error("a fixed-size field type", f[1])
            own = sub
            if en:
                endians.add(en)
                if en != sys.byteorder and not _maybe_ml(sub):
                    own = sub.newbyteorder("<" if en == "little" else ">")
        if len(f) == 3:
            shape = (fl / 2).list(f[2])
            dims = tuple((fl / 2 / j).int(d, 1, 2**31 - 1) for j, d in enumerate(shape))
            fields.append((name, sub, dims))
            stored.append((name, own, dims))
        else:
            fields.append((name, sub))
            stored.append((name, own))
    return struct_dtype(fields, loc), struct_dtype(stored, loc), endians


def v2_typestr(n: np.dtype, endian: str | None = None, own: bool = False) -> Any:
    """The v2 ``dtype`` JSON for a numpy dtype stored with ``endian`` byte order or, with
    ``own``, each field of a structured type in its own byte order."""
    if n.fields is not None:
        out = []
        for name in n.names:
            sub, _off = n.fields[name][:2]
            base, shape = (sub.subdtype if sub.subdtype else (sub, ()))
            order = ("big" if big_endian(base) else "little") if own and base.fields is None \
                else endian
            entry = [name, v2_typestr(base, order, own)]
            if shape:
                entry.append(list(shape))
            out.append(entry)
        return out
    ml = _ml_name(n) if _maybe_ml(n) else None
    if ml:
        return ml
    s = n.str
    if n.kind == "O":
        return "|O"
    if n.itemsize > 1 and n.kind not in "SVb":
        return (">" if endian == "big" else "<") + s[1:]
    return "|" + s[1:]


def dtype_v2_json(dt: DataType, endian: str | None) -> Any:
    if dt._json is not None and _is_v2_name(dt.name):
        return dt._json
    if _is_v2_name(dt.name):
        return thaw(dt.name)
    return v2_typestr(dt.numpy, endian)


def big_endian(n: np.dtype) -> bool:
    """Whether ``n`` (not structured) is big-endian."""
    return n.byteorder == ">" or (n.byteorder == "=" and not np.little_endian)
