"""A variable's Zarr encoding (``encoding["chunks"]``, ``"shards"``, ``"compressors"``, ...) as
the arguments of ``create_array``, taken as engine "zarr" takes them: codecs given as zarrx
codecs, metadata dicts or zarr-python and numcodecs codec objects; chunks from the encoding,
else from the dask blocks.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from zarrx.errors import ArgumentError, ArgumentTypeError

__all__ = ["ZARR_KEYS", "asks_vlen_utf8", "creation_kwargs"]

#: as engine "zarr" with zarr-python 3 takes them (no ``compressor``, in either format)
ZARR_KEYS = {"chunks", "shards", "compressors", "filters", "serializer",
             "fill_value", "write_empty_chunks", "chunk_key_encoding"}


def _codec_arg(value: Any) -> Any:
    """A codec setting from a variable's encoding: zarrx codecs and metadata dicts as given,
    zarr-python or numcodecs codec objects by their metadata."""
    if value is None or isinstance(value, (str, dict)):
        return value
    if isinstance(value, (list, tuple)):
        return [_codec_arg(v) for v in value]
    for method in ("to_dict", "get_config"):
        fn = getattr(value, method, None)
        if callable(fn) and not type(value).__module__.startswith("zarrx"):
            return fn()
    return value


def asks_vlen_utf8(encoding: Mapping) -> bool:
    """Whether a variable's encoding names the ``vlen-utf8`` codec (as reading a Zarr v2 array
    of variable-length strings puts in its ``filters``): its strings stay variable-length."""
    for key in ("filters", "serializer"):
        codecs = _codec_arg(encoding.get(key))
        for codec in codecs if isinstance(codecs, list) else [codecs]:
            if isinstance(codec, dict) and "vlen-utf8" in (codec.get("id"), codec.get("name")):
                return True
    return False


def _int_shape(value: Any, ndim: int, name: str, key: str) -> tuple[int, ...] | None:
    """``encoding[key]`` (chunks, shards): an int for every dimension or a tuple of ints."""
    if value is None:
        return None
    where = f"to_zarrx: encoding of {name!r}: {key}"
    if isinstance(value, (int, np.integer)):
        value = (value,) * ndim
    if not isinstance(value, (tuple, list)) \
            or not all(isinstance(c, (int, np.integer)) for c in value):
        raise ArgumentTypeError(f"{where}: expected an int or a tuple of ints, found {value!r}")
    if any(c <= 0 for c in value):
        raise ArgumentError(f"{where}: expected positive sizes, found {value!r}")
    return tuple(int(c) for c in value)


def _shards(value: Any, ndim: int, name: str) -> Any:
    """``encoding["shards"]`` as ``create_array`` takes it: a shape (an int for every dimension
    or a tuple of ints), or as given when it is ``"auto"`` or a ``{"shape", "index_location"}``
    dict, which engine "zarr" hands to zarr-python as they are."""
    if (isinstance(value, str) and value == "auto") or isinstance(value, Mapping):
        return value
    return _int_shape(value, ndim, name, "shards")


def creation_kwargs(var: Any, name: str, fmt: int, write_empty: bool | None) -> dict:
    enc = {k: v for k, v in var.encoding.items() if k in ZARR_KEYS}
    kw: dict[str, Any] = {}
    shards = _shards(enc.get("shards"), var.ndim, name)
    chunks = enc.get("chunks")
    if isinstance(chunks, (tuple, list, dict)) and not chunks:
        chunks = None                   # (empty: none given, as xarray takes it)
    chunks = _int_shape(chunks, var.ndim, name, "chunks")
    if chunks is not None and len(chunks) != var.ndim:
        chunks = None                   # (of another rank: dropped, as xarray drops them)
    if chunks is None and var.chunks is not None:
        chunks = tuple(max(int(c[0]), 1) if c else 1 for c in var.chunks)
        if isinstance(shards, tuple):   # dask blocks as shards: chunks must divide them
            chunks = None
    if chunks is not None:
        kw["chunks"] = tuple(int(c) for c in chunks)
    if shards is not None:
        kw["shards"] = shards
    if "serializer" in enc and enc["serializer"] is None:
        # engine "zarr" hands None to zarr-python, which refuses it (a TypeError): there is
        # always a serializer; "auto" picks the one the data type needs
        raise ArgumentTypeError(f"to_zarrx: encoding of {name!r}: serializer: expected an "
                                f"array->bytes codec or 'auto', found None")
    for key in ("compressors", "filters", "serializer"):
        if key in enc and enc[key] is not None:
            kw[key] = _codec_arg(enc[key])
    if "compressors" in enc and enc["compressors"] is None:
        kw["compressors"] = None            # no compressor, as engine "zarr" reads it
    if "chunk_key_encoding" in enc:
        kw["chunk_key_encoding"] = enc["chunk_key_encoding"]
    we = enc.get("write_empty_chunks", write_empty)
    if we is not None:
        kw["write_empty_chunks"] = bool(we)
    if fmt == 3 and enc.get("fill_value") is not None:
        kw["fill_value"] = enc["fill_value"]
    return kw
