"""Codec registry: spec name (v3 name, v2 numcodecs id, ``numcodecs.<id>``) -> codec class.

Built-in codecs are registered lazily by module path, so importing zarrx does not import the
codec modules (nor their compiled kernels) until a plan needs them.
"""
from __future__ import annotations

import importlib

from zarrx.errors import CodecError

__all__ = ["get_codec_class", "register_codec", "registered_names", "lookup"]

# name -> "module:Class"; names are spec names. ``v2`` ids resolve through ``_V2`` first.
_BUILTIN: dict[str, str] = {
    # v3 core and registered extensions
    "bytes": "zarrx.codecs.bytes_:Bytes",
    "transpose": "zarrx.codecs.transpose:Transpose",
    "gzip": "zarrx.codecs.deflate:Gzip",
    "blosc": "zarrx.codecs.blosc:Blosc",
    "crc32c": "zarrx.codecs.crc32c:Crc32c",
    "zstd": "zarrx.codecs.zstd:Zstd",
    "vlen-utf8": "zarrx.codecs.vlen:VLenUTF8",
    "vlen-bytes": "zarrx.codecs.vlen:VLenBytes",
    "sharding_indexed": "zarrx.codecs.sharding:ShardingIndexed",
}
# numcodecs ids (v2 metadata, and ``numcodecs.<id>`` in v3 metadata written by zarr-python)
_NUMCODECS: dict[str, str] = {
    "zlib": "zarrx.codecs.deflate:Zlib",
    "gzip": "zarrx.codecs.deflate:Gzip",
    "zstd": "zarrx.codecs.zstd:Zstd",
    "blosc": "zarrx.codecs.blosc:Blosc",
    "lz4": "zarrx.codecs.lz4:LZ4",
    "bz2": "zarrx.codecs.stdlib:BZ2",
    "lzma": "zarrx.codecs.stdlib:LZMA",
    "crc32c": "zarrx.codecs.crc32c:Crc32c",
    "shuffle": "zarrx.codecs.shuffle:Shuffle",
    "delta": "zarrx.codecs.delta:Delta",
    "fixedscaleoffset": "zarrx.codecs.scaleoffset:FixedScaleOffset",
    "quantize": "zarrx.codecs.scaleoffset:Quantize",
    "bitround": "zarrx.codecs.scaleoffset:BitRound",
    "astype": "zarrx.codecs.astype:AsType",
    "packbits": "zarrx.codecs.packbits:PackBits",
    "categorize": "zarrx.codecs.categorize:Categorize",
    "vlen-utf8": "zarrx.codecs.vlen:VLenUTF8",
    "vlen-bytes": "zarrx.codecs.vlen:VLenBytes",
}

_USER: dict[str, type] = {}
_LOADED: dict[str, type] = {}


def _load(path: str) -> type:
    cls = _LOADED.get(path)
    if cls is None:
        module, _, name = path.partition(":")
        cls = getattr(importlib.import_module(module), name)
        _LOADED[path] = cls
    return cls


def lookup(name: str, *, v2: bool = False) -> type | None:
    """The class for a spec name, or None. ``v2`` names are numcodecs ids."""
    if name in _USER:
        return _USER[name]
    if v2:
        path = _NUMCODECS.get(name)
    elif name.startswith("numcodecs."):
        path = _NUMCODECS.get(name[len("numcodecs."):])
    else:
        path = _BUILTIN.get(name)
    return _load(path) if path else None


def get_codec_class(name: str, *, v2: bool = False, key: str = "") -> type:
    """The codec class registered under ``name``; CodecError naming it (and the array) if none."""
    cls = lookup(name, v2=v2)
    if cls is None:
        where = f" in array {key!r}" if key else ""
        kind = "numcodecs codec id" if v2 else "codec"
        raise CodecError(f"unknown {kind} {name!r}{where}; known: "
                         f"{', '.join(registered_names(v2=v2))}")
    return cls


def register_codec(name: str, cls: type) -> None:
    """Register ``cls`` (a codec class with ``from_spec``) under the spec name ``name``.

    A user registration takes precedence over the built-in codec of the same name, for v3 names
    and numcodecs ids alike."""
    from zarrx.codecs.base import Codec
    if not (isinstance(cls, type) and issubclass(cls, Codec)):
        raise CodecError(f"register_codec({name!r}): expected a subclass of "
                         f"zarrx.codecs.base.Codec, "
                         f"found {cls!r}")
    _USER[name] = cls


def registered_names(*, v2: bool = False) -> list[str]:
    names = set(_USER)
    names |= set(_NUMCODECS) if v2 else (set(_BUILTIN) | {f"numcodecs.{n}" for n in _NUMCODECS})
    return sorted(names)
