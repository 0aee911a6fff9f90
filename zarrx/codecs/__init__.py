"""Codecs and the codec pipeline.

The codec classes are importable from here (``zarrx.codecs.Zstd(level=3)``) but their modules
load on first use, so ``import zarrx`` stays fast. zarr-python's names are aliases of the same
classes: ``ZstdCodec`` is ``Zstd``, ``BloscCodec`` is ``Blosc``, ``ShardingCodec`` is
``ShardingIndexed`` and so on (``ALIASES``).
"""
from __future__ import annotations

import importlib
from typing import Any

__all__ = ["Bytes", "Transpose", "Gzip", "Zlib", "Zstd", "Blosc", "Crc32c", "LZ4", "BZ2", "LZMA",
           "VLenUTF8", "VLenBytes", "Delta", "FixedScaleOffset", "Quantize", "BitRound",
           "AsType", "PackBits", "Shuffle", "Categorize", "CRC32", "Adler32", "Fletcher32",
           "JenkinsLookup3", "VLenArray", "JSON", "MsgPack", "ShardingIndexed", "ScaleOffset",
           "CastValue", "CodecPipeline",
           "get_codec_class", "register_codec",
           # zarr-python's names (zarr.codecs)
           "BytesCodec", "TransposeCodec", "GzipCodec", "ZstdCodec", "BloscCodec", "Crc32cCodec",
           "VLenUTF8Codec", "VLenBytesCodec", "ShardingCodec",
           # zarr-python's enumerations of codec settings
           "BloscShuffle", "BloscCname", "Endian", "ShardingCodecIndexLocation"]

#: zarr-python's class names -> zarrx's
ALIASES = {"BytesCodec": "Bytes", "TransposeCodec": "Transpose", "GzipCodec": "Gzip",
           "ZstdCodec": "Zstd", "BloscCodec": "Blosc", "Crc32cCodec": "Crc32c",
           "VLenUTF8Codec": "VLenUTF8", "VLenBytesCodec": "VLenBytes",
           "ShardingCodec": "ShardingIndexed"}


def _where() -> dict[str, str]:
    """Public name -> module: the codec classes from the codec table, and the plan/registry."""
    from zarrx.metadata.codec_table import builtin_impls
    out = {cls: module.rpartition(".")[2] for module, cls in builtin_impls()}
    out.update(CodecPipeline="plan", get_codec_class="registry", register_codec="registry",
               BloscShuffle="enums", BloscCname="enums", Endian="enums",
               ShardingCodecIndexLocation="enums")
    return out


def __getattr__(name: str) -> Any:
    if name == "numcodecs":                 # zarr.codecs.numcodecs.LZMA, as in zarr-python
        return importlib.import_module("zarrx.codecs.numcodecs")
    target = ALIASES.get(name, name)
    module = _where().get(target) if name in __all__ else None
    if module is None:
        raise AttributeError(f"module 'zarrx.codecs' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"zarrx.codecs.{module}"), target)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
