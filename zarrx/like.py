"""The arguments of the ``*_like`` functions: those of a source array, overridden by keywords."""
from __future__ import annotations

from typing import Any

import numpy as np

from zarrx.array import Array
from zarrx.creation import as_zarrx_array, check_format, data_array
from zarrx.errors import ArgumentTypeError, FillValueError, FillValueOverflowError, ZarrError
from zarrx.metadata._util import Loc, short
from zarrx.metadata.dtype_input import numpy_string_dtype, resolve_dtype
from zarrx.metadata.make import refuse_changed_fill
from zarrx.metadata.model import DataType, RectilinearGrid

__all__ = ["like_arguments", "kept_chunks"]


def kept_chunks(a: Array, shape: Any, zarr_format: int) -> Any:
    """The chunks a copy of ``a`` of ``shape`` takes from it: ``a.chunks``, or for a
    rectilinear grid its edges when the copy has ``a``'s shape and is Zarr v3 (the edges fit
    no other shape, and Zarr v2 has no such grid), else ``"auto"``."""
    grid = a.metadata.chunk_grid
    if not isinstance(grid, RectilinearGrid):
        return a.chunks
    if zarr_format == 3 and tuple(shape) == a.shape:
        return grid.chunk_sizes
    return "auto"


def like_arguments(a: Any, kwargs: dict, *, fill: bool, into: Any = None) -> dict:
    """``kwargs`` completed from ``a``: shape and dtype; for a zarrx :class:`Array` also its
    chunks, Zarr format, shards and codecs (those two in its own format only), and (``fill``)
    its fill value. A ``dtype=`` other than the source's takes the default filters and
    serializer of that type (the source's compressors are kept) and the source's fill value
    converted to it, as a write converts a value. ``into``, the group the array goes into,
    gives the Zarr format unless ``zarr_format=`` does: a hierarchy holds one format."""
    if into is not None and kwargs.get("zarr_format") is None:
        kwargs["zarr_format"] = into.metadata.zarr_format
    if kwargs.get("zarr_format") is not None:         # compared with the source's below
        kwargs["zarr_format"] = check_format(kwargs["zarr_format"])
    a = as_zarrx_array(a)
    if not (hasattr(a, "shape") and hasattr(a, "dtype")):
        if a is None or not isinstance(a, (list, tuple)):
            raise ArgumentTypeError(f"*_like: expected an array (anything with a shape and a "
                                    f"dtype) or a list, found {type(a).__name__} {short(a, 60)}")
        a = data_array(a, "*_like")       # a nested list, as numpy's *_like take it
    kwargs.setdefault("shape", a.shape)
    if not isinstance(a, Array):
        kwargs.setdefault("dtype", a.dtype)
        return kwargs
    from zarrx.codec_args import array_codecs
    new_type = _new_type(a, kwargs)
    kwargs.setdefault("dtype", a.dtype)
    kwargs.setdefault("chunks", kept_chunks(a, kwargs["shape"],
                                            kwargs.get("zarr_format") or a.zarr_format))
    kwargs.setdefault("zarr_format", a.zarr_format)
    if kwargs["zarr_format"] == a.zarr_format:      # Zarr v2 has no shards
        kwargs.setdefault("shards", a.shards)
    if kwargs["zarr_format"] == a.zarr_format and not {"compressor", "codecs"} & set(kwargs):
        codecs = array_codecs(a.metadata)
        kwargs.setdefault("compressors", codecs["compressors"])
        if a.zarr_format == 2:        # the layout of a v2 chunk: a transpose in v3
            kwargs.setdefault("order", a.order)
        if new_type is None:          # filters and serializer are made for the data type
            kwargs.setdefault("filters", codecs["filters"])
            if codecs["serializer"] is not None:
                kwargs.setdefault("serializer", codecs["serializer"])
        else:                         # a transpose is the layout, whatever the type
            from zarrx.codecs.transpose import Transpose    # codecs load on first use
            kwargs.setdefault("filters", tuple(f for f in codecs["filters"]
                                               if isinstance(f, Transpose)))
    if fill and "fill_value" not in kwargs:
        kwargs["fill_value"] = (a.fill_value if new_type is None
                                else _converted_fill(a, new_type, kwargs["dtype"]))
    return kwargs


def _new_type(a: Array, kwargs: dict) -> DataType | None:
    """The data type ``dtype=`` asks for when it is not that of ``a`` (byte order aside)."""
    if "dtype" not in kwargs:
        return None
    try:
        dt, _ = resolve_dtype(kwargs["dtype"], a.zarr_format)
    except ZarrError:
        return None                   # create_array names what is wrong with it
    old = a.metadata.data_type
    if dt.variable or old.variable:
        same = dt.variable and old.variable and dt.name == old.name
    else:
        same = dt.numpy.newbyteorder("=") == old.numpy.newbyteorder("=")
    return None if same else dt


def _converted_fill(a: Array, dt: DataType, dtype: Any) -> Any:
    """The fill value of ``a`` as data type ``dt``: converted as ``numpy.asarray(value,
    dtype)`` converts a Python value written to an array (``1.5`` to ``int32``: ``1``); a value
    the type cannot hold is a :class:`FillValueError` naming both, and so is a number a
    fixed-width text type would hold as other text (``-inf`` for ``S3``: ``b'-in'``, as
    zarr-python refuses it)."""
    value = a.fill_value
    if value is None:                 # a v2 null fill value: none to convert
        return None
    target = (numpy_string_dtype() if dt.variable and dt.name == "string"
              else np.dtype("S") if dt.variable else dt.numpy)
    if isinstance(value, np.generic) and value.dtype.kind not in "mMV":
        value = value.item()          # a Python value, converted as a write converts one
    try:
        if target.kind in "SU":
            refuse_changed_fill(value, target, Loc("fill_value", error=FillValueError))
        with np.errstate(all="raise"):
            return np.asarray(value, dtype=target)[()]
    except OverflowError as exc:
        raise FillValueOverflowError(_no_fill(a, dtype, exc)) from None
    except (ValueError, TypeError, FloatingPointError) as exc:
        raise FillValueError(_no_fill(a, dtype, exc)) from None


def _no_fill(a: Array, dtype: Any, exc: Exception) -> str:
    return (f"*_like: the fill value of the source array ({short(a.fill_value, 40)}, of dtype "
            f"{a.dtype}) cannot be converted to dtype {short(dtype, 40)} ({exc}); give "
            f"fill_value=")
