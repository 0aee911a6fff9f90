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

__all__ = ["ZARR_KEYS", "asks_vlen_utf8", "asks_vlen_bytes", "creation_kwargs"]

#: as engine "zarr" with zarr-python 3 takes them (no ``compressor``, in either format)
ZARR_KEYS = {"chunks", "shards", "compressors", "filters", "serializer",
             "fill_value", "write_empty_chunks", "chunk_key_encoding"}
#: the compressor of a Zarr v2 array whose encoding names none: what xarray's writer stores
#: (zarr-python's ``Group.create`` default; its ``create_array`` function takes zstd)
V2_COMPRESSOR = {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}


def _codec_arg(value: Any) -> Any:
    """A codec setting from a variable's encoding: zarrx codecs, metadata dicts and zarr-python
    codec objects as given (``create_array`` fills in what a zarr-python codec leaves to the
    array, as blosc's ``typesize`` and ``shuffle``, which its ``to_dict()`` would spell as
    ``1`` and ``"bitshuffle"``), numcodecs codec objects by their configuration."""
    if value is None or isinstance(value, (str, dict)):
        return value
    if isinstance(value, (list, tuple)):
        return [_codec_arg(v) for v in value]
    fn = getattr(value, "get_config", None)
    if callable(fn) and not type(value).__module__.startswith("zarrx"):
        return fn()
    return value


def _codec_name(codec: Any) -> str | None:
    """The name of a codec setting: a metadata dict's ``id`` or ``name``, a zarrx codec's
    name, a zarr-python codec's by its ``to_dict()``."""
    if isinstance(codec, dict):
        return codec.get("id", codec.get("name"))
    name = getattr(codec, "name", None)
    if isinstance(name, str):
        return name
    to_dict = getattr(codec, "to_dict", None)
    if callable(to_dict):
        doc = to_dict()
        return doc.get("name") if isinstance(doc, dict) else None
    return None


VLEN_CODECS = ("vlen-utf8", "vlen-bytes")


def _vlen_codecs(encoding: Mapping) -> list[str]:
    """The variable-length codecs (``vlen-utf8``, ``vlen-bytes``) a variable's encoding names
    in its ``filters`` or ``serializer``."""
    found = []
    for key in ("filters", "serializer"):
        codecs = _codec_arg(encoding.get(key))
        for codec in codecs if isinstance(codecs, list) else [codecs]:
            name = _codec_name(codec)
            if name in VLEN_CODECS:
                found.append(name)
    return found


def asks_vlen_utf8(encoding: Mapping) -> bool:
    """Whether a variable's encoding names the ``vlen-utf8`` codec (as reading a Zarr v2 array
    of variable-length strings puts in its ``filters``): its strings stay variable-length."""
    return "vlen-utf8" in _vlen_codecs(encoding)


def asks_vlen_bytes(encoding: Mapping) -> bool:
    """Whether a variable's encoding names the ``vlen-bytes`` codec (as reading a Zarr v2 array
    of variable-length bytes puts in its ``filters``): its bytes stay variable-length in Zarr
    v2."""
    return "vlen-bytes" in _vlen_codecs(encoding)


def _vlen_name(codec: Any) -> str | None:
    name = _codec_name(codec)
    return name if name in VLEN_CODECS else None


def _v3_vlen(kw: dict) -> None:
    """The variable-length codecs of a Zarr v3 array's arguments put in place: a Zarr v2 array
    lists its codec among its filters (so reading one puts it there), where Zarr v3 has it as
    the serializer. ``vlen-utf8`` becomes the serializer; ``vlen-bytes`` is dropped, as bytes
    are stored fixed-width in Zarr v3 (as engine "zarr" stores them)."""
    filters = kw.get("filters")
    if isinstance(filters, list) and any(_vlen_name(f) for f in filters):
        kw["filters"] = [f for f in filters if not _vlen_name(f)]
        text = [f for f in filters if _vlen_name(f) == "vlen-utf8"]
        if text:
            kw.setdefault("serializer", text[0])
    if _vlen_name(kw.get("serializer")) == "vlen-bytes":
        del kw["serializer"]


def _int_shape(value: Any, ndim: int, name: str, key: str,
               shape: tuple[int, ...] = ()) -> tuple[int, ...] | None:
    """``encoding[key]`` (chunks, shards): an int for every dimension or a tuple of ints;
    positive, or 0 along a dimension of length 0 in ``shape`` (as zarr-python creates it)."""
    if value is None:
        return None
    where = f"to_zarrx: encoding of {name!r}: {key}"
    if isinstance(value, (int, np.integer)):
        value = (value,) * ndim
    if not isinstance(value, (tuple, list)) \
            or not all(isinstance(c, (int, np.integer)) for c in value):
        raise ArgumentTypeError(f"{where}: expected an int or a tuple of ints, found {value!r}")
    if any(c < 0 or (c == 0 and not (i < len(shape) and shape[i] == 0))
           for i, c in enumerate(value)):
        raise ArgumentError(f"{where}: expected positive sizes (0 along a dimension of "
                            f"length 0), found {value!r}")
    return tuple(int(c) for c in value)


def _shards(value: Any, ndim: int, name: str, shape: tuple[int, ...]) -> Any:
    """``encoding["shards"]`` as ``create_array`` takes it: a shape (an int for every dimension
    or a tuple of ints), or as given when it is ``"auto"`` or a ``{"shape", "index_location"}``
    dict, which engine "zarr" hands to zarr-python as they are."""
    if (isinstance(value, str) and value == "auto") or isinstance(value, Mapping):
        return value
    return _int_shape(value, ndim, name, "shards", shape)


def creation_kwargs(var: Any, name: str, fmt: int, write_empty: bool | None) -> dict:
    enc = {k: v for k, v in var.encoding.items() if k in ZARR_KEYS}
    kw: dict[str, Any] = {}
    shards = _shards(enc.get("shards"), var.ndim, name, tuple(var.shape))
    chunks = enc.get("chunks")
    if isinstance(chunks, (tuple, list, dict)) and not chunks or \
            isinstance(chunks, str) and chunks == "auto":
        chunks = None                   # (empty or "auto": none given, as xarray takes them)
    chunks = _int_shape(chunks, var.ndim, name, "chunks", tuple(var.shape))
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
    if fmt == 3:
        _v3_vlen(kw)
    if "compressors" in enc and enc["compressors"] is None:
        kw["compressors"] = None            # no compressor, as engine "zarr" reads it
    elif fmt == 2 and "compressors" not in kw and "shards" not in kw:
        kw["compressors"] = [V2_COMPRESSOR]
    if "chunk_key_encoding" in enc:
        kw["chunk_key_encoding"] = enc["chunk_key_encoding"]
    we = enc.get("write_empty_chunks", write_empty)
    if we is not None and not isinstance(we, (bool, np.bool_)):
        # (not taken by its truth: "false" would be True; engine "zarr" refuses it too)
        raise ArgumentTypeError(f"to_zarrx: encoding of {name!r}: write_empty_chunks: expected "
                                f"True or False, found {type(we).__name__} {we!r}")
    if we is not None:
        kw["write_empty_chunks"] = bool(we)
    if fmt == 3 and enc.get("fill_value") is not None:
        kw["fill_value"] = enc["fill_value"]
    return kw
