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


def _where() -> dict[str, str]:
    """Public name -> module: the codec classes from the codec table, and the plan/registry."""
    from zarrx.metadata.codec_table import builtin_impls
    out = {cls: module.rpartition(".")[2] for module, cls in builtin_impls()}
    out.update(CodecPipeline="plan", get_codec_class="registry", register_codec="registry")
    return out


def __getattr__(name: str) -> Any:
    module = _where().get(name) if name in __all__ else None
    if module is None:
        raise AttributeError(f"module 'zarrx.codecs' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"zarrx.codecs.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
