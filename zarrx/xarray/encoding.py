"""xarray's Zarr encoding, as zarrx reads and writes it.

- Variable names: a variable named ``None`` is the array ``__values__`` (read back as ``None``,
  by xarray's data store loading).
- Dimension names: Zarr v3 ``dimension_names``; Zarr v2 the ``_ARRAY_DIMENSIONS`` attribute.
- Fill values: in Zarr v2 the array's ``fill_value`` is the CF ``_FillValue`` (the mask); in
  Zarr v3 the array's ``fill_value`` stays a storage detail and a CF ``_FillValue`` is an
  attribute, base64-encoded for floating-point, complex and byte-string types so that every
  NaN payload survives JSON.
- Strings: variable-length unicode as the ``vlen-utf8`` / ``string`` type, fixed-width unicode
  and byte strings as fixed-width types, text asked to be ``S1`` as encoded bytes; Python
  objects of other kinds are refused.
- Attributes: numpy arrays and scalars become JSON lists and numbers (inside lists and dicts
  too).

CF conventions (times, scale/offset, masks) are xarray's own coders; this module only adds what
is specific to Zarr.
"""
from __future__ import annotations

import base64
import struct
from typing import Any

import numpy as np

from zarrx.errors import (ArgumentError, ArgumentNotImplementedError, ArgumentTypeError,
                          MetadataError)

__all__ = ["DIMENSION_KEY", "NONE_NAME", "array_name", "check_name", "encode_fill_attr", "decode_fill_attr",
           "encode_attr", "check_attrs", "vlen_dtype", "storage_dtype", "cf_encode"]

DIMENSION_KEY = "_ARRAY_DIMENSIONS"
#: the array holding a variable named None, as xarray's backends name it
NONE_NAME = "__values__"


def array_name(name: Any) -> str:
    """The name of the array storing the variable ``name`` (a string, or None)."""
    return NONE_NAME if name is None else str(name)


def check_name(name: str, zarr_format: int | None) -> None:
    """ArgumentError naming the variable ``name`` when it cannot be stored as the array of that
    name directly in its group: a ``/`` would store it in a sub-group, where xarray does not
    read it back (engine "zarr" writes it there, and the variable is lost), and a backslash is
    read as ``/`` in node paths; the name must also be a valid store key segment that is not a
    metadata document's name, and in Zarr v3 not a name the Zarr v3 specification reserves."""
    from zarrx.metadata.node_read import DOCUMENT_NAMES
    from zarrx.store.inputs import key_problem

    where = f"to_zarrx: variable {name!r}"
    if "/" in name or "\\" in name:
        found = "'/'" if "/" in name else "a backslash, which node paths read as '/'"
        raise ArgumentError(f"{where}: expected a name without '/' or backslashes, found "
                            f"{found}: the variable would be stored in a sub-group, where it "
                            f"is not read back as a variable; rename it")
    if (problem := key_problem(name, files=False)) is not None:
        raise ArgumentError(f"{where}: the name is not a valid store key: {problem}")
    if name in DOCUMENT_NAMES:
        raise ArgumentError(f"{where}: expected a name that is not a metadata document's name "
                            f"({', '.join(sorted(DOCUMENT_NAMES))})")
    if zarr_format == 3 and (name.strip(".") == "" or name.startswith("__zarr")):
        raise ArgumentError(f"{where}: expected a Zarr v3 node name not made only of periods "
                            f"and not starting with '__zarr' (reserved by the Zarr v3 "
                            f"specification)")


def _b64(raw: bytes) -> str:
    return base64.standard_b64encode(raw).decode("ascii")


def _unb64(text: Any, where: str) -> bytes:
    try:
        return base64.standard_b64decode(text)
    except (TypeError, ValueError) as exc:
        raise MetadataError(f"{where}: _FillValue: expected base64 text, found {text!r}") \
            from exc


def encode_fill_attr(value: Any, dtype: np.dtype, where: str) -> Any:
    """The ``_FillValue`` attribute of a Zarr v3 array of numpy ``dtype``; an
    ArgumentTypeError naming ``where`` for a value that is not one item of it."""
    try:
        return _fill_attr(value, dtype, where)
    except (TypeError, ValueError, OverflowError) as exc:
        if isinstance(exc, ArgumentError):
            raise
        raise ArgumentTypeError(f"{where}: _FillValue: expected one value of dtype {dtype}, "
                                f"found {type(value).__name__} {value!r}") from exc


def _fill_attr(value: Any, dtype: np.dtype, where: str) -> Any:
    kind = dtype.kind
    if kind == "S":
        if not isinstance(value, (bytes, np.bytes_)):
            raise ArgumentTypeError(f"{where}: _FillValue: expected bytes for dtype {dtype}, "
                                    f"found {type(value).__name__}")
        return _b64(bytes(value))
    if kind == "b":
        return bool(value)
    if kind in "iu":
        return int(value)
    if kind == "f":
        return _b64(struct.pack("<d", float(value)))
    if kind == "c":
        c = complex(value)
        return [_b64(struct.pack("<d", c.real)), _b64(struct.pack("<d", c.imag))]
    if kind in "UOT":
        return str(value)
    raise ArgumentTypeError(f"{where}: _FillValue: cannot encode a fill value for dtype "
                            f"{dtype}")


def decode_fill_attr(value: Any, dtype: np.dtype, where: str) -> Any:
    """The CF ``_FillValue`` of a Zarr v3 array from its attribute (see
    :func:`encode_fill_attr`)."""
    kind = dtype.kind
    if kind == "O":
        return _unb64(value, where) if vlen_element(dtype) is bytes else str(value)
    if kind == "S":
        return _unb64(value, where)
    if kind == "f":
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            try:
                return float(value)
            except OverflowError:       # (an integer beyond every float)
                bits = value.bit_length()
                raise MetadataError(f"{where}: _FillValue: expected a number within the range "
                                    f"of float64, found an integer of {bits} bits") from None
        raw = _unb64(value, where)
        if len(raw) != 8:
            raise MetadataError(f"{where}: _FillValue: expected 8 bytes of a float64, found "
                                f"{len(raw)}")
        return struct.unpack("<d", raw)[0]
    if kind == "c":
        if not (isinstance(value, (list, tuple)) and len(value) == 2):
            raise MetadataError(f"{where}: _FillValue: expected [real, imag], found "
                                f"{value!r}")
        re_, im = (decode_fill_attr(v, np.dtype("f8"), where) for v in value)
        return complex(re_, im)
    if kind == "b":
        return bool(value)
    if kind in "iu":        # a number, as engine "zarr" takes (1.5 is 1, as there)
        if isinstance(value, (int, np.integer)):    # (of any size: it then masks nothing)
            return int(value)
        if not isinstance(value, (float, np.floating)) or not np.isfinite(value):
            raise MetadataError(f"{where}: _FillValue: expected a number for dtype {dtype}, "
                                f"found {value!r}")
        return int(value)
    return value


def encode_attr(value: Any) -> Any:
    """An attribute value as JSON-ready Python data (numpy arrays become lists, numpy scalars
    numbers, also inside lists and dicts)."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [encode_attr(v) for v in value]
    if isinstance(value, dict):
        return {k: encode_attr(v) for k, v in value.items()}
    return value


def check_attrs(attrs: Any, where: str) -> None:
    """Every attribute in ``attrs`` can be stored as JSON (after :func:`encode_attr`); else an
    ``ArgumentTypeError`` naming the attribute, as xarray checks attributes before writing.
    Text UTF-8 cannot encode (a lone surrogate, in a name or a value) is an ``ArgumentError``:
    a metadata document is UTF-8. Both are refused before the store changes."""
    from zarrx.metadata._util import Loc
    from zarrx.metadata.json import check_tree, short, unencodable_text

    for key, value in attrs.items():
        if not isinstance(key, str):
            raise ArgumentTypeError(f"{where}: attribute names must be strings, found "
                                    f"{type(key).__name__} {key!r}")
        encoded = encode_attr(value)
        check_tree(encoded, Loc(f"{where} attribute {key!r}", error=ArgumentTypeError))
        bad = unencodable_text(key) or unencodable_text(encoded)
        if bad is not None:
            raise ArgumentError(f"{where} attribute {key!r}: expected text that UTF-8 can "
                                f"encode (no lone surrogates), found {short(bad)}")


def vlen_dtype(element: type) -> np.dtype:
    """xarray's object dtype for variable-length ``str`` or ``bytes``."""
    return np.dtype("O", metadata={"element_type": element})


def vlen_element(dtype: np.dtype) -> type | None:
    if dtype.kind != "O" or not dtype.metadata:
        return None
    return dtype.metadata.get("element_type", dtype.metadata.get("vlen"))


def storage_dtype(values: Any, dtype: np.dtype, zarr_format: int, where: str, *,
                  variable_text: bool = False, variable_bytes: bool = False
                  ) -> tuple[Any, Any]:
    """``(zarrx dtype, values)`` for a CF-encoded variable's data: variable-length unicode
    becomes zarrx's ``str`` type, variable-length bytes fixed-width bytes (in v2 with
    ``variable_bytes``, zarrx's ``bytes`` type: its encoding asks for the ``vlen-bytes``
    codec), numpy ``StringDType()`` variable-length (v3, or v2 with ``variable_text``: its
    encoding asks for the ``vlen-utf8`` codec) or fixed-width (v2) unicode. Other object arrays
    are inspected."""
    if dtype.kind == "T":
        if _native_text(dtype, zarr_format) or variable_text:
            if type(values).__module__.split(".")[0] == "dask":     # (kept lazy)
                return str, values.map_blocks(_text_objects, True, dtype=object,
                                              meta=np.empty((0,) * values.ndim, object))
            return str, _text_objects(values, True)
        # (as xarray converts it: np.asarray gives all-empty text width 2, astype width 1)
        return None, np.asarray(_text_objects(values), dtype="U")
    if dtype.kind != "O":
        return dtype, values
    element = vlen_element(dtype)
    if element is None and not isinstance(values, np.ndarray):
        _warn_computed(values, where)
    data = np.asarray(values)
    if element is None:
        element, data = _infer_objects(data, where)
    if element is str:
        return str, data
    if element is bytes:
        if variable_bytes and zarr_format == 2:
            return bytes, data
        # (as xarray converts them: all-empty bytes take width 8, as numpy gives them)
        fixed = np.asarray(data, dtype=np.bytes_)
        return fixed.dtype, fixed
    return data.dtype, data


def _native_text(dtype: np.dtype, zarr_format: int) -> bool:
    """Whether ``dtype`` is text engine "zarr" stores as variable-length strings whatever the
    encoding: numpy's plain ``StringDType()`` in Zarr v3. Other ``StringDType``s (with an
    ``na_object``) it stores as other text is stored (fixed-width)."""
    return zarr_format == 3 and dtype.kind == "T" and dtype == np.dtypes.StringDType()


def _text_objects(values: Any, variable: bool = False) -> np.ndarray:
    """``StringDType`` text as Python strings, missing values (None) as empty ones; for
    ``variable``-length strings a NaN ``na_object`` too (fixed-width text stores it as
    ``"nan"``, as engine "zarr" does)."""
    data = np.asarray(values, dtype=object)
    if variable:
        data[np.array([v is None or (isinstance(v, float) and v != v) for v in data.flat],
                      dtype=bool).reshape(data.shape)] = ""
    else:
        data[data == None] = ""   # noqa: E711 - elementwise
    return data


def _warn_computed(values: Any, where: str) -> None:
    """A ``SerializationWarning`` (xarray's) when lazy (dask) values of dtype object are
    computed here, to find what their elements are: nothing else of the write is computed
    before the data is stored."""
    try:
        import dask.array as da
    except ImportError:
        return
    if isinstance(values, da.Array):
        import os
        import sys
        import warnings

        from xarray import SerializationWarning

        # it points at the first caller outside zarrx (the call of to_zarrx), however deep
        # the write is below it
        package = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
        frame, level = sys._getframe(0), 1
        while frame is not None and frame.f_code.co_filename.startswith(package):
            frame, level = frame.f_back, level + 1
        warnings.warn(f"{where} holds a dask array with dtype=object: it is computed now, to "
                      f"find the type its values are stored as; cast it with astype() to "
                      f"keep it lazy", SerializationWarning, stacklevel=level)


def _infer_objects(data: np.ndarray, where: str) -> tuple[type | None, np.ndarray]:
    flat = data.reshape(-1)
    missing = np.array([v is None or (isinstance(v, float) and v != v) for v in flat], bool)
    kinds = {type(v) for v, m in zip(flat, missing) if not m}
    if kinds <= {str, np.str_} and kinds:
        out = flat.copy()
        out[missing] = ""
        return str, out.reshape(data.shape)
    if kinds <= {bytes, np.bytes_} and kinds:
        out = flat.copy()
        out[missing] = b""
        return bytes, out.reshape(data.shape)
    if not kinds:
        return None, np.full(data.shape, np.nan)
    sample = np.asarray([v for v, m in zip(flat, missing) if not m])
    if sample.dtype.kind in "biufc" and len(kinds) == 1:
        out = np.asarray(flat.tolist() if not missing.any() else
                         [np.nan if m else v for v, m in zip(flat, missing)])
        return None, out.reshape(data.shape)
    names = ", ".join(sorted(k.__name__ for k in kinds))
    raise ArgumentTypeError(f"{where}: cannot store an object array holding {names}; expected "
                            f"str or bytes (or cast the variable with astype())")


def cf_encode(var: Any, name: Any, zarr_format: int) -> Any:
    """``var`` encoded by xarray's CF coders as its Zarr backend does (booleans stay booleans
    where this xarray knows the Zarr coder list); text whose encoding asks for ``dtype: "S1"``
    (or has an ``_Encoding`` and a bytes dtype, as read from such a variable) becomes bytes in
    that encoding (UTF-8 by default) with an ``_Encoding`` attribute, except numpy
    ``StringDType()`` text in Zarr v3, which engine "zarr" stores as variable-length strings
    whatever the encoding."""
    from xarray import conventions

    as_bytes = _as_bytes(var.encoding) and not _native_text(var.dtype, zarr_format)
    if as_bytes:                # the coders then leave the text to _utf8_bytes
        var = var.copy(deep=False)
        var.encoding = {**var.encoding, "dtype": "S1"}
    coders = getattr(conventions, "ZARR_CODERS", None)
    if coders is not None:
        encoded = conventions.encode_cf_variable(var, name=name, coders=coders)
    else:
        encoded = conventions.encode_cf_variable(var, name=name)
    return _utf8_bytes(encoded, name) if as_bytes else encoded


def _as_bytes(encoding: dict) -> bool:
    """Whether text is to be stored as encoded bytes: its encoding asks for ``dtype: "S1"``, or
    names an ``_Encoding`` with a bytes dtype (as reading such a variable sets them: appending
    to it, or writing it again, encodes with its ``_Encoding``, not as ASCII)."""
    dtype = encoding.get("dtype")
    if isinstance(dtype, str) and dtype == "S1":
        return True
    if "_Encoding" not in encoding or dtype is None:
        return False
    try:
        return np.dtype(dtype).kind == "S"
    except TypeError:
        return False


def _holds_text(var: Any) -> bool:
    """Whether ``var`` holds unicode text (not only bytes)."""
    if var.dtype.kind in "UT":
        return True
    if var.dtype.kind != "O":
        return False
    if vlen_element(var.dtype) is not None:
        return vlen_element(var.dtype) is str
    return any(isinstance(v, str) for v in np.asarray(var.data).reshape(-1))


def _utf8_bytes(var: Any, name: Any) -> Any:
    """Text ``var`` (fixed-width unicode, Python strings, ``StringDType``) as UTF-8 bytes with an
    ``_Encoding`` attribute, by xarray's string coder; other data as it is."""
    from xarray import Variable
    from xarray.coding.strings import EncodedStringCoder

    if "_FillValue" in var.attrs and _holds_text(var):
        # (also a NotImplementedError, the class xarray's writer raises for it)
        raise ArgumentNotImplementedError(
            f"to_zarrx: variable {name!r}: a _FillValue cannot be given for text stored as "
            f"bytes (encoding dtype 'S1'), as xarray refuses it (found _FillValue "
            f"{encode_attr(var.attrs['_FillValue'])!r})")
    if var.dtype.kind == "O" and vlen_element(var.dtype) is None:
        element, data = _infer_objects(np.asarray(var.data), f"to_zarrx: variable {name!r}")
        if element is str:
            var = Variable(var.dims, np.asarray(data, dtype=vlen_dtype(str)), var.attrs,
                           var.encoding)
    return EncodedStringCoder(allows_unicode=True).encode(var, name=name)
