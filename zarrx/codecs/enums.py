"""zarr-python's enumerations of codec settings (``zarrx.codecs.BloscShuffle.bitshuffle`` and
so on). The codecs take a member of these, of zarr-python's own enumerations of the same
names, or the plain string the member stands for."""
from __future__ import annotations

from enum import Enum

__all__ = ["BloscShuffle", "BloscCname", "Endian", "ShardingCodecIndexLocation"]


class BloscShuffle(Enum):
    """How blosc shuffles the bytes or bits of the values before compressing them."""

    noshuffle = "noshuffle"
    shuffle = "shuffle"
    bitshuffle = "bitshuffle"


class BloscCname(Enum):
    """The compressor blosc uses inside."""

    lz4 = "lz4"
    lz4hc = "lz4hc"
    blosclz = "blosclz"
    zstd = "zstd"
    snappy = "snappy"
    zlib = "zlib"


class Endian(Enum):
    """The byte order of the ``bytes`` codec."""

    big = "big"
    little = "little"


class ShardingCodecIndexLocation(Enum):
    """Where a shard keeps its index."""

    start = "start"
    end = "end"
