"""Codec arguments of array creation as codec objects or checked v3 codec specs.

``as_codec`` takes a zarrx codec object, a zarr-python codec object, a v3 dict
(``{"name": "zstd", "configuration": {...}}``), a numcodecs dict or codec object; the helpers
below it read the other shapes ``create_array``'s codec and shard arguments come in.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from zarrx.codecs.base import Codec
from zarrx.codecs.registry import lookup
from zarrx.errors import ArgumentTypeError, CodecError, UnknownCodecArgumentError
from zarrx.metadata._util import Loc
from zarrx.metadata.codec_table import check_codec, codec_kind, lower_numcodecs, unknown_codec
from zarrx.metadata.model import CodecSpec

__all__ = ["WHERE", "Arg", "as_codec", "kind_of", "listify", "is_auto", "int_tuple"]

Arg = CodecSpec | Codec

WHERE = "create_array"


_WANT = ("a codec: a zarrx.codecs object such as zarrx.codecs.Zstd(), a zarr.codecs or "
         "numcodecs codec object, or a codec dict")


def _plain(obj: Any) -> Any:
    """A zarr-python ``to_dict()`` as JSON: tuples as lists, enums as their values."""
    if isinstance(obj, Mapping):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    value = getattr(obj, "value", obj)        # enum.Enum members (zarr-python's Endian...)
    return value if isinstance(value, (str, int, float, bool, type(None))) else obj


# what zarr-python's codec classes fill in when a user leaves a field out ({"name": "gzip"}):
# metadata documents must spell these out, arguments need not
_USER_DEFAULTS = {"bytes": {"endian": "little"},        # as zarrx's BytesCodec() too
                  "gzip": {"level": 5},
                  "blosc": {"cname": "zstd", "clevel": 5, "shuffle": "shuffle"},
                  "zstd": {"level": 0, "checksum": False}}


def as_codec(obj: Any, where: str) -> Arg:
    """A codec argument as a codec object (checked when it was made) or a v3 codec spec (known,
    its configuration checked)."""
    loc = Loc(WHERE, where, error=CodecError)
    if isinstance(obj, Codec):
        return obj
    if isinstance(obj, type):
        raise ArgumentTypeError(f"{loc}: expected a codec object, found the class "
                                f"{obj.__module__}.{obj.__name__}; pass an instance, such as "
                                f"{obj.__name__}()")
    if isinstance(obj, CodecSpec):
        spec = obj
    elif hasattr(obj, "to_dict") and callable(obj.to_dict) and not isinstance(obj, Mapping) \
            and not hasattr(obj, "get_config"):
        return _from_zarr_python(obj, where)
    elif isinstance(obj, Mapping) and "name" in obj:
        loc.keys(dict(obj), ("name",), ("configuration", "must_understand"))
        name = (loc / "name").str(obj["name"])
        conf = (loc / "configuration").obj(obj.get("configuration", {}))
        conf = {**_USER_DEFAULTS.get(name, {}), **conf}
        spec = CodecSpec(name, dict(conf),
                         must_understand=(loc / "must_understand").bool(
                             obj.get("must_understand", True)))
    elif isinstance(obj, Mapping) and "id" in obj:
        spec = lower_numcodecs(dict(obj), loc, known_only=True)
    elif hasattr(obj, "get_config") and callable(obj.get_config):     # a numcodecs codec
        spec = lower_numcodecs(dict(obj.get_config()), loc, known_only=True)
    else:
        raise ArgumentTypeError(f"{loc}: expected {_WANT}, found {type(obj).__name__} {obj!r}")
    if spec.name == "sharding_indexed":
        from zarrx.codecs.sharding import ShardingIndexed
        conf = dict(spec.configuration)
        if "chunk_shape" not in conf:
            raise (loc / "configuration").fail("missing required field 'chunk_shape'")
        return ShardingIndexed(**conf)
    if lookup(spec.name) is None:
        raise unknown_codec(spec.name, f"{loc}: ", cls=UnknownCodecArgumentError)
    check_codec(spec.name, spec.configuration, loc / "configuration")
    return spec


def _from_zarr_python(obj: Any, where: str) -> Arg:
    """A zarr-python codec object, through its ``to_dict()``. Fields it leaves to be chosen
    from the array (blosc ``typesize`` and ``shuffle`` when not given) are left to zarrx's
    codec class defaults the same way."""
    doc = _plain(obj.to_dict())
    open_fields = getattr(obj, "_tunable_attrs", None) or ()
    conf = doc.get("configuration") if isinstance(doc, dict) else None
    if open_fields and isinstance(conf, dict):
        conf = {k: v for k, v in conf.items() if k not in open_fields}
        cls = lookup(doc.get("name", ""))
        if cls is not None:
            try:
                return cls(**conf)
            except TypeError:
                pass
        doc = {**doc, "configuration": conf}
    return as_codec(doc, where)


def kind_of(c: Arg) -> str | None:
    return c.kind if isinstance(c, Codec) else codec_kind(c.name)


def listify(arg: Any) -> list:
    if arg is None:
        return []
    if isinstance(arg, (Mapping, CodecSpec, Codec, type)) or hasattr(arg, "get_config") \
            or hasattr(arg, "to_dict"):
        return [arg]
    if isinstance(arg, Sequence) and not isinstance(arg, (str, bytes)):
        return list(arg)
    return [arg]


def is_auto(arg: Any) -> bool:
    return isinstance(arg, str) and arg == "auto"


def int_tuple(value: Any, ndim: int | None = None) -> tuple[int, ...] | None:
    """``value`` (a sequence or numpy array of ints; with ``ndim``, also one int for every
    axis, as zarr-python takes ``shards=4`` and as ``chunks=`` takes an int) as a tuple of
    ints, else None."""
    if ndim is not None and isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value),) * ndim
    if isinstance(value, (str, bytes, Mapping)):
        return None
    try:
        items = tuple(value)
    except TypeError:
        return None
    if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in items):
        return None
    return tuple(int(v) for v in items)
