"""Codec classes by spec name (``bytes``, ``zstd``, ``numcodecs.delta``...).

The names, kinds and classes are the rows of the codec table
(:mod:`zarrx.metadata.codec_table`); built-in classes are imported on first use, so importing
zarrx does not import the codec modules (nor their compiled kernels) until a plan needs them.
"""
from __future__ import annotations

import importlib

from zarrx.errors import CodecError
from zarrx.metadata import codec_table

__all__ = ["get_codec_class", "register_codec", "registered_names", "lookup"]

_LOADED: dict[str, type] = {}


def _load(impl: str | type) -> type:
    if isinstance(impl, type):
        return impl
    cls = _LOADED.get(impl)
    if cls is None:
        module, _, name = impl.partition(":")
        cls = getattr(importlib.import_module(module), name)
        _LOADED[impl] = cls
    return cls


def lookup(name: str) -> type | None:
    """The class for a spec name, or None."""
    info = codec_table.codec_info(name)
    return None if info is None else _load(info.impl)


def get_codec_class(name: str, *, key: str = "") -> type:
    """The codec class registered under ``name``; CodecError naming it (and the array) if none,
    with the closest known names."""
    cls = lookup(name)
    if cls is None:
        raise codec_table.unknown_codec(name, array=key)
    return cls


def register_codec(name: str, cls: type) -> None:
    """Register ``cls`` (a subclass of one of the three codec kinds of ``zarrx.codecs.base``)
    under the spec name ``name``; it takes precedence over a built-in codec of the same name.
    A numcodecs codec is registered as ``numcodecs.<id>``."""
    from zarrx.codecs.base import ArrayToArrayCodec, ArrayToBytesCodec, BytesToBytesCodec
    kinds = (ArrayToArrayCodec, ArrayToBytesCodec, BytesToBytesCodec)
    if not (isinstance(cls, type) and issubclass(cls, kinds)):
        raise CodecError(f"register_codec({name!r}): expected a subclass of "
                         f"zarrx.codecs.base.ArrayToArrayCodec, ArrayToBytesCodec or "
                         f"BytesToBytesCodec, found {cls!r}")
    codec_table.register(name, cls, cls.kind)


def registered_names() -> list[str]:
    return codec_table.known_names()
