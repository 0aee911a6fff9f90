"""Codecs and the codec pipeline.

The codec classes are importable from here (``zarrx.codecs.Zstd(level=3)``) but their modules
load on first use, so ``import zarrx`` stays fast.
"""
from __future__ import annotations

import importlib
from typing import Any

__all__ = ["Bytes", "Transpose", "Gzip", "Zlib", "Zstd", "Blosc", "Crc32c", "LZ4", "BZ2", "LZMA",
           "VLenUTF8", "VLenBytes", "Delta", "FixedScaleOffset", "Quantize", "BitRound",
           "AsType", "PackBits", "Shuffle", "Categorize", "CodecPipeline", "get_codec_class",
           "register_codec"]

_WHERE = {
    "Bytes": "bytes_", "Transpose": "transpose", "Gzip": "deflate", "Zlib": "deflate",
    "Zstd": "zstd", "Blosc": "blosc", "Crc32c": "crc32c", "LZ4": "lz4", "BZ2": "stdlib",
    "LZMA": "stdlib", "VLenUTF8": "vlen", "VLenBytes": "vlen", "Delta": "delta",
    "FixedScaleOffset": "scaleoffset", "Quantize": "scaleoffset", "BitRound": "scaleoffset",
    "AsType": "astype", "PackBits": "packbits", "Shuffle": "shuffle", "Categorize": "categorize",
    "CodecPipeline": "plan", "get_codec_class": "registry", "register_codec": "registry",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'zarrx.codecs' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"zarrx.codecs.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
