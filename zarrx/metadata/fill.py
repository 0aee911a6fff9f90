"""Fill values: JSON <-> numpy scalar, per data type, for both formats.

In memory a fill value is a numpy scalar of the array's (native) dtype, a Python ``str`` /
``bytes`` for variable-length strings / bytes, or ``None`` for a v2 ``null`` ("undefined").
Floats keep their bit pattern, NaN payloads included; integers never pass through a float.

JSON spellings read (v3): numbers (one past a double's range, ``1e400``, an infinity), ``"NaN"``, ``"Infinity"``, ``"-Infinity"``, hex bit patterns
``"0x7fc00001"`` (exactly two digits per byte), ``[re, im]`` for complex, ``true``/``false``,
integers for datetime/timedelta (``"NaT"`` too), ``[byte, ...]`` or base64 for raw bits, base64 for
fixed/variable bytes and (legacy ``structured``) structured types, an object of the fields'
fill values for ``struct``, strings for strings, integral numbers written with a fraction
part (``1.0``) for integer types. v2 adds ``null``, bare non-finite
numbers of old writers, base64 for ``S``/``V``/structured (``""`` meaning empty; a structured
item in the byte order its fields are stored in), and numbers for strings (zarr-python 2's).
"""
from __future__ import annotations

import base64
import binascii
import math
import re
from typing import Any

import numpy as np

from zarrx.errors import MetadataError
from zarrx.metadata._util import Loc, few_names
from zarrx.metadata.dtypes import category, clear_unused_bits, struct_fields
from zarrx.metadata.json import OutOfRange
from zarrx.metadata.model import DataType

__all__ = ["parse_fill", "fill_json", "default_fill", "same_fill", "check_unitless_date",
           "finite_json"]

_HEX = re.compile(r"0x[0-9a-fA-F]+\Z")
_NONFINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
_NAT = np.iinfo(np.int64).min
# Fill values spelled as tensorstore reads them. Zarr v2 has no spelling for the ML types:
# tensorstore (whose names they are there) writes a float4_e2m1fn one as the base64 of its
# byte, and refuses a number. In Zarr v3 tensorstore 0.1.86 reads a float8_e8m0fnu number as
# another value (2.0 as 2**-63) but its hex bit pattern bit for bit, which the type's
# specification allows as it does for every float type (docs/SPEC.md).
_BASE64_V2 = frozenset({"float4_e2m1fn"})
_HEX_V3 = frozenset({"float8_e8m0fnu"})


def _bits_dtype(n: np.dtype) -> np.dtype:
    return np.dtype(f"<u{n.itemsize}") if n.itemsize in (1, 2, 4, 8) else np.dtype(f"V{n.itemsize}")


def _int_range(n: np.dtype) -> tuple[int, int]:
    known = _INT_RANGES.get(n)
    if known is not None:
        return known
    try:
        info = np.iinfo(n)
    except ValueError:
        import ml_dtypes  # sub-byte ints are ml_dtypes types
        info = ml_dtypes.iinfo(n)
    _INT_RANGES[n] = known = int(info.min), int(info.max)
    return known


_INT_RANGES: dict[np.dtype, tuple[int, int]] = {}


# the largest finite value of each numpy float type: a number no larger than that converts
# without overflow, so it needs no check of the result (ml_dtypes floats are not listed)
_FLOAT_MAX = {np.dtype(t).num: float(np.finfo(t).max) for t in ("f2", "f4", "f8")}


def _float(value: Any, n: np.dtype, loc: Loc, fmt: int) -> Any:
    """One float component: number, non-finite name, or hex bit pattern."""
    if type(value) is float or type(value) is int:
        top = _FLOAT_MAX.get(n.num)
        if top is not None and -top <= value <= top:
            return n.type(float(value))
    want = ('a number, "NaN", "Infinity", "-Infinity"'
            + (f' or a hex bit pattern of {2 * n.itemsize} digits' if fmt == 3 else ""))
    if isinstance(value, str):
        if value in _NONFINITE:
            return np.array(_NONFINITE[value]).astype(n)[()]
        if fmt == 3 and _HEX.match(value) and len(value) == 2 + 2 * n.itemsize:
            bits = np.array(int(value, 16), dtype=np.uint64).astype(_bits_dtype(n))
            return bits.view(n)[()]
        raise loc.error(want, value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise loc.error(want, value)
    if isinstance(value, float) and not math.isfinite(value) and fmt == 2:
        return np.array(value).astype(n)[()]
    try:
        f = float(value)
    except OverflowError:                        # an integer beyond every float
        f = math.inf if value > 0 else -math.inf
    else:
        if not math.isfinite(f) and not isinstance(value, OutOfRange):  # bare NaN / Infinity
            raise loc.error(want, value)
    # rounded to the nearest value of the type, as IEEE 754 rounds: a number past the largest
    # finite one (``1e400`` included, read as an ``OutOfRange`` infinity) is an infinity
    # (zarr-python and tensorstore read it so)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.array(f).astype(n)[()]


def _b64(value: Any, loc: Loc, size: int | None, exact: bool) -> bytes:
    if not isinstance(value, str):
        raise loc.error("a base64 string", value)
    try:
        raw = base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, ValueError, UnicodeEncodeError):
        raise loc.error("a base64 string", value) from None
    if size is not None and (len(raw) > size or (exact and len(raw) != size)):
        raise loc.found(f"{'exactly' if exact else 'at most'} {size} bytes of base64 data",
                        f"{len(raw)} bytes")
    return raw


def _byte_values(value: list[Any], loc: Loc) -> bytes:
    """A JSON array of byte values (0 to 255) as bytes, in time linear in its length and at
    array speed (a raw type's fill value may hold a million). The first bad item is named."""
    end = len(value)
    if set(map(type, value)) <= {int}:
        try:
            return bytes(value)
        except ValueError:              # an item out of [0, 255]: found below
            pass
    else:
        end = next(i for i, t in enumerate(map(type, value)) if t is not int)
    head = value[:end]                  # the Python ints before the first other item
    try:
        ints = np.array(head, dtype=np.int64)
    except OverflowError:               # an integer beyond int64: compared as Python ints
        ints = np.array(head, dtype=object)
    bad = np.flatnonzero((ints < 0) | (ints > 255))
    if len(bad):
        i = int(bad[0])
        raise (loc / i).error("an integer in [0, 255]", value[i])
    if type(value[end]) is float:           # a byte value is written as an integer
        raise (loc / end).error("an integer in [0, 255]", value[end])
    (loc / end).int(value[end], 0, 255)     # raises unless a numpy integer (a Python caller's)
    return bytes((loc / i).int(b, 0, 255) for i, b in enumerate(value))


def _stored(n: np.dtype, endian: str | None) -> np.dtype:
    """A structured type as a v2 base64 fill value holds it: in the byte order of its fields."""
    return n.newbyteorder(">") if endian == "big" else n


def check_unitless_date(n: np.dtype, value: Any, stored: Any, loc: Loc) -> None:
    """A date given for a datetime64 without a unit (v2 ``<M8``, v3 unit ``generic``) must be
    NaT: numpy keeps the date's integer in it but can neither show nor convert it back.
    ``stored`` is ``value`` as the integer stored. (Integers, as a document gives them, are
    taken.)"""
    if n.kind == "M" and np.datetime_data(n)[0] == "generic" and stored != _NAT:
        raise loc.error(f"'NaT' or {_NAT} (a datetime64 without a unit holds no date)", value)


def parse_fill(value: Any, dt: DataType, loc: Loc, fmt: int = 3,
               endian: str | None = None) -> Any:
    """The fill value ``value`` (JSON) of type ``dt`` in format ``fmt`` (2 or 3); ``endian``
    is the byte order of a base64 structured fill value: the stored byte order of a v2
    structured type, the ``bytes`` codec's of a v3 ``structured`` one. Values narrower than
    their byte (``int4``, also as fields) read from their bits as decoded chunks do: a bit
    pattern (``"0xfe"``) or base64 setting the others reads as the value it holds (``0x0e``)."""
    out = _parse_fill(value, dt, loc, fmt, endian)
    if isinstance(out, np.generic) and category(dt) in ("int", "float", "structured"):
        return clear_unused_bits(out, dt.numpy)
    return out


def _parse_fill(value: Any, dt: DataType, loc: Loc, fmt: int, endian: str | None) -> Any:
    n = dt.numpy
    cat = category(dt)
    if value is None:
        if fmt == 2:
            return None
        raise loc.error(f"a fill value for {_tname(dt)}", value)
    if cat == "bool":
        if isinstance(value, bool) or (fmt == 2 and type(value) is int and value in (0, 1)):
            return np.bool_(value)
        raise loc.error("true or false", value)
    if cat == "int":
        # an integral number written with a fraction part (``1.0``), as zarr-python and
        # tensorstore read it in either format; exact below 2**53, where a double holds every
        # integer (one out of the type's range is refused as written: "found 300.0")
        lo, hi = _int_range(n)
        if isinstance(value, float) and value.is_integer() and abs(value) < 2**53 \
                and lo <= value <= hi:
            value = int(value)
        if isinstance(value, str) and fmt == 3 and _HEX.match(value) \
                and len(value) == 2 + 2 * n.itemsize:
            return np.array(int(value, 16), np.uint64).astype(_bits_dtype(n)).view(n)[()]
        return np.array(loc.int(value, lo, hi), dtype=n)[()]
    if cat == "float":
        if fmt == 2 and dt.name in _BASE64_V2 and isinstance(value, str) \
                and value not in _NONFINITE:
            return np.frombuffer(_b64(value, loc, n.itemsize, exact=True), dtype=n)[0]
        return _float(value, n, loc, fmt)
    if cat == "complex":
        part = np.dtype(f"f{n.itemsize // 2}")
        if not isinstance(value, list) or len(value) != 2:
            raise loc.error("a [real, imaginary] pair", value)
        re_, im = _float(value[0], part, loc / 0, fmt), _float(value[1], part, loc / 1, fmt)
        pair = np.array([re_, im], dtype=part)
        return pair.view(n)[0]
    if cat in ("datetime", "timedelta"):
        if value == "NaT":
            return np.array(_NAT, np.int64).view(n)[()]
        # any integer, even in a type without a unit (numpy holds it there but cannot show it)
        return np.array(loc.int(value, _NAT, 2**63 - 1), np.int64).view(n)[()]
    if cat == "raw":
        if isinstance(value, list):
            if len(value) != n.itemsize:
                raise loc.error(f"an array of {n.itemsize} byte values", value)
            raw = _byte_values(value, loc)
        elif fmt == 2 and value == "":       # empty: zeros, as zarr-python reads it
            try:        # (as large as the item: no document bounds it)
                return np.zeros((), dtype=n)[()]
            except MemoryError:
                raise loc.found("a fill value that fits in memory",
                                f"'' (zeros of {n.itemsize} bytes, one item of {n})") from None
        elif isinstance(value, str):         # base64, as tensorstore writes it
            raw = _b64(value, loc, n.itemsize, exact=True)
        else:
            raise loc.error(f"an array of {n.itemsize} byte values or a base64 string", value)
        return np.frombuffer(raw, dtype=n)[0]
    if cat == "structured":
        fields = struct_fields(dt) if fmt == 3 else None
        if fields is not None:
            return _struct_fill(value, n, fields, loc)
        if fmt == 3 and isinstance(value, list):
            raise loc.error("a base64 string", value)
        raw = _b64(value, loc, n.itemsize, exact=True)
        return np.frombuffer(raw, dtype=_stored(n, endian)).astype(n)[0]
    if cat == "fixed_bytes":
        raw = _b64(value, loc, n.itemsize, exact=False)
        return np.bytes_(raw.rstrip(b"\0"))    # as numpy reads an item: no trailing NULs
    if cat == "fixed_str":
        s = loc.str(value)
        if len(s) > n.itemsize // 4:
            raise loc.error(f"a string of at most {n.itemsize // 4} characters", s)
        return np.str_(s)
    if cat == "bytes":
        if type(value) in (int, float) and fmt == 2 and value == 0:
            return b""     # zarr-python 2 wrote 0 for object arrays
        if isinstance(value, list):
            return _byte_values(value, loc)
        return _b64(value, loc, None, exact=False)
    if cat == "object":    # Zarr v2 |O items of any kind: the JSON value, as zarr-python 2
        if isinstance(value, (str, int, float, bool)):
            return value
        raise loc.error("a number, string or boolean (the fill value of an object array)",
                        value)
    if cat == "string":
        if isinstance(value, (int, float)) and fmt == 2:
            # zarr-python 2 wrote 0 for object arrays, and any number given: the text of the
            # number, as zarr-python 3 reads it (0, its default, is the empty string)
            return "" if value == 0 else str(value)
        return loc.str(value)
    raise loc.error(f"a fill value for {_tname(dt)}", value)   # pragma: no cover


def _struct_fill(value: Any, n: np.dtype, fields: list[tuple[str, DataType]], loc: Loc) -> Any:
    """A ``struct`` fill value: an object giving each field's fill value."""
    obj = loc.obj(value)
    names = [name for name, _ in fields]
    for name in names:
        if name not in obj:
            raise loc.fail(f"missing required field {name!r} (the fill value gives every "
                           f"field's)")
    if len(obj) > len(names):               # every field given: some name is not a field's
        known = set(names)
        name = next(name for name in obj if name not in known)
        raise (loc / name).fail(f"unknown field; the data type's fields are "
                                f"{few_names(names)}")
    try:        # one item (a document may state items of up to 2**31-1 bytes)
        out = np.zeros((), dtype=n)
    except MemoryError:
        raise loc.found("a fill value that fits in memory",
                        f"an item of {n.itemsize} bytes (fields {few_names(names)})") from None
    for name, sub in fields:
        value = obj[name]
        if type(value) is int and sub.numpy.kind in "iu":     # the common case, no Loc
            lo, hi = _int_range(sub.numpy)
            if lo <= value <= hi:
                out[name] = value
                continue
        out[name] = parse_fill(value, sub, loc / name, 3)
    return out[()]


def record_error(value: tuple, n: np.dtype, loc: Loc) -> MetadataError:
    """Why numpy refused the record ``value`` (one value per field) as an item of the structured
    type ``n``: the count of values, or the first field whose value its type cannot take
    (named, with the field's type); the record as a whole when no field says."""
    from zarrx.errors import FillValueOverflowError
    names = n.names
    if len(value) != len(names):
        return loc.found(f"a record of {len(names)} values, one per field ({few_names(names)})",
                         f"{len(value)} value{'s' * (len(value) != 1)}: {value!r}")
    for name, item in zip(names, value):
        field = n.fields[name][0]
        try:
            with np.errstate(over="raise", invalid="ignore"):
                got = np.array(item, dtype=field)
            if got.shape != field.shape:        # a sequence for a scalar field, or too long
                raise ValueError
        except OverflowError:
            return (Loc(loc.key, loc.path, FillValueOverflowError) / name).error(
                f"a value of the field's type {field}", item)
        except (TypeError, ValueError, FloatingPointError, RuntimeError):
            if field.names is not None and isinstance(item, (tuple, list)):   # a nested record
                return record_error(tuple(item), field, loc / name)
            return (loc / name).error(f"a value of the field's type {field}", item)
    return loc.error(f"a fill value for {n}", value)


def _tname(dt: DataType) -> str:
    return dt.name if isinstance(dt.name, str) else "the structured type"


def _float_json(x: Any, fmt: int) -> Any:
    n = np.asarray(x).dtype
    f = float(x)
    if math.isnan(f):
        canonical = np.array(math.nan).astype(n)
        mine = np.asarray(x)
        if mine.tobytes() == canonical.tobytes():
            return "NaN"
        bits = int(np.frombuffer(mine.tobytes(), _bits_dtype(n))[0])
        spelled = f"0x{bits:0{2 * n.itemsize}x}"
        if fmt == 2:        # "NaN" would read back as another NaN: refused, never lost
            plain = int(np.frombuffer(canonical.tobytes(), _bits_dtype(n))[0])
            if bits & ~(1 << (8 * n.itemsize - 1)) == plain:
                return "NaN"    # the plain NaN but for its sign, as arithmetic makes it (0/0)
            raise MetadataError(
                f".zarray fill_value: Zarr v2 can write only the NaN {plain:#0{2 + 2 * n.itemsize}x}"
                f' ("NaN"), found the {n.name} NaN {spelled}, which it would lose; give another '
                f"fill value (fill_value=np.nan, or --fill-value nan) or keep Zarr v3")
        return spelled
    if math.isinf(f):
        return "Infinity" if f > 0 else "-Infinity"
    return f


def fill_json(value: Any, dt: DataType, fmt: int = 3, endian: str | None = None) -> Any:
    """The JSON spelling of a fill value (inverse of :func:`parse_fill`)."""
    if value is None:
        if fmt == 2:
            return None
        value = default_fill(dt)
    cat = category(dt)
    if cat == "bool":
        return bool(value)
    if cat == "int":
        return int(value)
    if cat == "float":
        if fmt == 2 and dt.name in _BASE64_V2:
            return base64.b64encode(np.array(value, dtype=dt.numpy).tobytes()).decode("ascii")
        out = _float_json(value, fmt)
        if fmt == 3 and dt.name in _HEX_V3 and not isinstance(out, str):
            return f"0x{int(np.array(value, dtype=dt.numpy).view(np.uint8)):02x}"
        return out
    if cat == "complex":
        part = np.dtype(f"f{dt.numpy.itemsize // 2}")
        pair = np.array(value, dtype=dt.numpy).reshape(1).view(part)
        return [_float_json(pair[0], fmt), _float_json(pair[1], fmt)]
    if cat in ("datetime", "timedelta"):
        return int(np.array(value, dtype=dt.numpy).view(np.int64))
    if cat == "raw":
        raw = np.array(value, dtype=dt.numpy).tobytes()
        if fmt == 3 and dt.name == "raw_bytes" or fmt == 2:
            return base64.b64encode(raw).decode("ascii")
        return list(raw)
    if cat == "structured":
        fields = struct_fields(dt) if fmt == 3 else None
        if fields is not None:
            item = np.array(value, dtype=dt.numpy)
            return {name: int(item[name]) if sub.numpy.kind in "iu" and sub.json == sub.name
                    else fill_json(item[name][()], sub, 3) for name, sub in fields}
        raw = np.array(value, dtype=dt.numpy).astype(_stored(dt.numpy, endian)).tobytes()
        return base64.b64encode(raw).decode("ascii")
    if cat == "object":
        return value.item() if isinstance(value, np.generic) else value
    if cat == "fixed_bytes":   # padded to the full item size: tensorstore requires it
        return base64.b64encode(np.array(value, dtype=dt.numpy).tobytes()).decode("ascii")
    if cat == "fixed_str":
        return str(value)
    if cat == "bytes":
        return base64.b64encode(bytes(value)).decode("ascii")
    return str(value)


def default_fill(dt: DataType) -> Any:
    """zarr-python 3's default: zero of the type, False, "" / b"", NaT for datetimes."""
    cat = category(dt)
    if cat in ("string", "object"):
        return ""
    if cat == "bytes":
        return b""
    if cat in ("datetime", "timedelta"):
        return np.array(_NAT, np.int64).view(dt.numpy)[()]
    return np.zeros((), dtype=dt.numpy)[()]


def finite_json(value: Any) -> bool:
    """Whether a fill value as read holds no non-finite float (a number read past a double's
    range, or a bare ``NaN``): ``dumps`` would write those bare, which is not JSON."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        if set(map(type, value)) <= {int, str, bool}:    # a raw type's million byte values
            return True
        return all(finite_json(v) for v in value)
    if isinstance(value, dict):
        return all(finite_json(v) for v in value.values())
    return True


def same_fill(a: Any, b: Any, dt: DataType | None = None) -> bool:
    """Bitwise equality of two fill values (NaN payloads and -0.0 compared exactly)."""
    if a is None or b is None:
        return a is None and b is None
    try:
        if dt is not None and not dt.variable:
            return (np.array(a, dtype=dt.numpy).tobytes()
                    == np.array(b, dtype=dt.numpy).tobytes())
        if isinstance(a, (str, bytes)) or isinstance(b, (str, bytes)):
            return isinstance(a, str) == isinstance(b, str) and a == b
        x, y = np.asarray(a), np.asarray(b)
        return x.dtype == y.dtype and x.tobytes() == y.tobytes()
    except (TypeError, ValueError, OverflowError):
        return False
