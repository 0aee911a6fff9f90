"""Data types from user input (``create_array(dtype=...)``): a numpy dtype or its string, a
Zarr v3 name or object, ``str`` / ``bytes``, numpy 2's ``StringDType`` or a zarr-python data type
object, resolved into the :class:`~zarrx.metadata.model.DataType` of a Zarr v2 or v3 array and
the byte order asked for (the stored forms themselves are :mod:`zarrx.metadata.dtypes`)."""
from __future__ import annotations

from typing import Any

import numpy as np

from zarrx.metadata._util import Loc, freeze, short
from zarrx.metadata.dtypes import (COMPLEX_ALIASES, CORE, ML_NAMES, RAW_NAME, big_endian,
                                   category, ml_dtype, parse_dtype_v2, parse_dtype_v3, struct_dtype,
                                   v2_typestr, v3_json_for_numpy)
from zarrx.metadata.model import DataType, register_memory_dtype

__all__ = ["resolve_dtype", "is_string_dtype", "numpy_string_dtype", "memory_dtype"]


def is_string_dtype(dtype: Any) -> bool:
    """A numpy 2 ``StringDType`` (variable-length UTF-8 strings in memory)."""
    return isinstance(dtype, np.dtype) and dtype.kind == "T"


def numpy_string_dtype() -> np.dtype:
    """What variable-length strings read as: numpy 2's ``StringDType``, else ``object``."""
    t = getattr(np.dtypes, "StringDType", None)
    return np.dtype("O") if t is None else t()


def memory_dtype(dt: DataType) -> np.dtype:
    """The dtype reads hand out for ``dt`` (``ArrayMeta.dtype``): :func:`numpy_string_dtype`
    for variable-length strings, else ``dt.numpy``."""
    if dt.variable and category(dt) == "string":
        return numpy_string_dtype()
    return dt.numpy


register_memory_dtype(memory_dtype)


_WANT = ("a numpy dtype, a Zarr v3 data type name (int32, float64, string, ...) or an "
         "ml_dtypes name (bfloat16, float8_e4m3fn, ...)")


def resolve_dtype(dtype: Any, zarr_format: int) -> tuple[DataType, str | None]:
    """A data type from user input: a v3 name, numpy dtype (or its string), ``str``/``bytes``,
    a numpy ``StringDType`` or a zarr-python data type object (``zarr.dtype.Int8()``).
    Returns the type and the byte order requested by the numpy dtype (None: little / 1-byte). Anything else raises ``DataTypeError`` (a ``MetadataError``
    and a ``TypeError``, as numpy raises) naming it."""
    from zarrx.errors import DataTypeError

    loc = Loc("dtype", error=DataTypeError)
    if isinstance(dtype, DataType):
        return dtype, None
    zdtype = _zarr_python_dtype(dtype, zarr_format)
    if zdtype is not None:
        return resolve_dtype(zdtype, zarr_format)
    variable: str | None = None
    if isinstance(dtype, str) and not dtype:
        raise loc.error(_WANT, dtype)
    if dtype is str or dtype is object or (isinstance(dtype, np.dtype) and dtype.kind in "OT") \
            or (isinstance(dtype, str) and dtype in ("str", "string", "|O", "O", "T")):
        variable = "string"
    elif dtype is bytes or (isinstance(dtype, str) and dtype in ("bytes", "variable_length_bytes")):
        variable = "bytes"
    if variable:       # v2 stores both as "|O"; the object codec tells them apart
        return DataType(variable, np.dtype("O"), variable=True,
                        json=variable if zarr_format == 3 else "|O"), None
    if isinstance(dtype, (str, dict)) and zarr_format == 3 and (
            isinstance(dtype, dict) or dtype in CORE or dtype in COMPLEX_ALIASES
            or dtype in ML_NAMES or RAW_NAME.match(dtype)):
        return parse_dtype_v3(dtype, loc), None
    if isinstance(dtype, str) and dtype in ML_NAMES:
        n = ml_dtype(dtype)
        if n is None:
            raise loc.error(f"a data type this installation supports ({dtype!r} needs the "
                            "optional ml_dtypes package)", dtype)
    elif isinstance(dtype, str) and dtype in COMPLEX_ALIASES:
        n = np.dtype(COMPLEX_ALIASES[dtype])
    else:
        n = _user_dtype(dtype, loc)
    if n.kind in "SUV" and n.itemsize == 0 and n.fields is None:
        if isinstance(dtype, np.dtype) and n.kind == "U":
            return resolve_dtype(str, zarr_format)     # np.dtype(str), as zarr-python takes it
        raise loc.error("a fixed-size type with a length ('S5', 'U3', 'V4'), or str for "
                        "variable-length strings", dtype)
    if n.subdtype is not None:
        from zarrx.errors import DataTypeError
        raise DataTypeError(f"{loc}: {short(dtype)} is a subarray type ({n.base} of shape "
                            f"{n.shape}); give the array {len(n.shape)} more dimension(s) "
                            f"instead")
    endian = None
    if n.fields is None and big_endian(n):
        endian = "big"
    elif n.fields is not None and zarr_format == 2 and _field_orders(n) == {True}:
        endian = "big"          # a v2 structured type keeps its fields' one byte order
    elif n.fields is not None and zarr_format == 2 and len(_field_orders(n)) > 1:
        return parse_dtype_v2(v2_typestr(n, own=True), loc)     # or their own byte orders
    native = n.newbyteorder("=") if n.fields is None else _native_struct(n, loc)
    if n.kind in "OT":
        return resolve_dtype(str, zarr_format)
    if zarr_format == 3:
        if native.fields is not None and (field := _subarray_field(native)) is not None:
            from zarrx.errors import DataTypeError
            raise DataTypeError(f"{loc}: field {field!r} of {short(dtype)} is a subarray; Zarr v3 "
                                f"structured types have scalar fields only (Zarr v2 stores "
                                f"subarray fields: zarr_format=2)")
        j = v3_json_for_numpy(native)
        name = j if isinstance(j, str) else j["name"]
        return DataType(name, native, json=j), endian
    j = v2_typestr(native, endian)
    return DataType(freeze(j), native, json=j), endian


def _zarr_python_dtype(dtype: Any, zarr_format: int) -> Any:
    """A zarr-python 3 data type object (``zarr.dtype.Int32()``, ``VariableLengthBytes()``...)
    as the data type it names, or None for anything else: its Zarr v3 JSON form in Zarr v3; in
    Zarr v2 the numpy dtype of a fixed-size type (its byte order kept) or ``str`` / ``bytes``
    by its object codec."""
    to_json, to_native = getattr(dtype, "to_json", None), getattr(dtype, "to_native_dtype", None)
    if isinstance(dtype, (np.dtype, type, str)) or not (callable(to_json) and callable(to_native)):
        return None
    import warnings
    with warnings.catch_warnings():      # zarr-python's notes on types it calls unstable
        warnings.simplefilter("ignore")
        if zarr_format == 3:
            return to_json(zarr_format=3)
        native = to_native()
        if isinstance(native, np.dtype) and native.kind not in "OT":
            return native
        codec = to_json(zarr_format=2).get("object_codec_id")
        return bytes if codec == "vlen-bytes" else str


def _user_dtype(dtype: Any, loc: Loc) -> np.dtype:
    try:
        return np.dtype(dtype)
    except (TypeError, ValueError, OverflowError, MemoryError) as exc:
        raise loc.found(_WANT, f"{short(dtype)} ({exc})") from None


def _field_orders(n: np.dtype) -> set[bool]:
    """Whether each field of ``n`` that has a byte order (at any depth) is big-endian."""
    out: set[bool] = set()
    for f in n.names:
        base = n.fields[f][0].base
        if base.fields is not None:
            out |= _field_orders(base)
        elif base.byteorder != "|":
            out.add(big_endian(base))
    return out


def _native_struct(n: np.dtype, loc: Loc) -> np.dtype:
    out: list[tuple] = []
    for f in n.names:
        sub = n.fields[f][0]
        if sub.subdtype is not None:          # a subarray field: its base, in native order
            out.append((f, sub.base.newbyteorder("="), sub.shape))
        else:
            out.append((f, sub.newbyteorder("=")))
    return struct_dtype(out, loc)


def _subarray_field(n: np.dtype) -> str | None:
    """The name of the first field of ``n`` (at any depth) that is a subarray, or None."""
    for f in n.names or ():
        sub = n.fields[f][0]
        if sub.subdtype is not None:
            return f
        if sub.fields is not None and (inner := _subarray_field(sub)) is not None:
            return f"{f}.{inner}"
    return None
