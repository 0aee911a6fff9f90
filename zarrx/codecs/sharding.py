"""``sharding_indexed``: a configuration to pass as ``create_array``'s ``serializer`` (also
``zarrx.codecs.ShardingCodec``, zarr-python's name), never a chunk codec.

Sharding is a chunk source (``zarrx.store.sharded``): the metadata parser lowers the codec into
``ArrayMeta.shard_levels`` and plans are built from ``ArrayMeta.chunk_codecs``, so building this
codec from metadata is refused.

    zarrx.create_array(store, shape=(64, 64), dtype="f4", chunks=(32, 32),
                       serializer=ShardingCodec(chunk_shape=(8, 8), codecs=[Bytes(), Zstd()]))

is the same array as ``chunks=(8, 8), shards=(32, 32), compressors=Zstd()``.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Any

import numpy as np

from zarrx.codecs.base import ArrayToBytesCodec, Codec
from zarrx.errors import CodecArgumentTypeError, CodecError, MetadataError
from zarrx.metadata.codecs import codec_json

__all__ = ["ShardingIndexed"]

_BYTES = {"name": "bytes", "configuration": {"endian": "little"}}


def _codec_list(codecs: Any, where: str) -> tuple[Any, ...]:
    if isinstance(codecs, (Codec, Mapping)) or hasattr(codecs, "to_dict"):
        codecs = [codecs]
    if not isinstance(codecs, Sequence) or isinstance(codecs, (str, bytes)):
        raise CodecError(f"zarrx.codecs.ShardingCodec {where}: expected a list of codecs, "
                         f"found {codecs!r}")
    return tuple(codecs)


def _json(codec: Any) -> Any:
    if isinstance(codec, Codec):
        return codec_json(codec.to_spec())
    return codec          # a dict or a foreign codec object: checked by create_array


class ShardingIndexed(ArrayToBytesCodec):
    """Inner chunks of ``chunk_shape``, each encoded by ``codecs`` (default: ``bytes``), packed
    into one stored object per chunk of the array's grid, with an index encoded by
    ``index_codecs`` (default: ``bytes`` + ``crc32c``) at ``index_location`` (``"end"`` or
    ``"start"``)."""

    name = "sharding_indexed"

    def __init__(self, chunk_shape: Sequence[int], codecs: Any = None, index_codecs: Any = None,
                 index_location: str = "end") -> None:
        try:           # () is the inner chunk shape of a 0-d array's shards
            items = tuple(chunk_shape) if not isinstance(chunk_shape, (str, bytes)) else None
        except TypeError:
            items = None
        ints = items is not None and all(isinstance(c, (int, np.integer))
                                         and not isinstance(c, bool) for c in items)
        if not ints or any(c < 1 for c in items):   # type: ignore[union-attr]
            # not a tuple of ints (2.5 would be cut to 2): a TypeError, as in zarr-python
            raise (CodecError if ints else CodecArgumentTypeError)(
                f"zarrx.codecs.ShardingCodec chunk_shape: expected a tuple of positive "
                f"integers, found {chunk_shape!r}")
        shape = tuple(int(c) for c in items)     # type: ignore[union-attr]
        if isinstance(index_location, Enum):     # zarr-python's ShardingCodecIndexLocation
            index_location = index_location.value
        if not isinstance(index_location, str) or index_location not in ("start", "end"):
            raise (CodecError if isinstance(index_location, str) else CodecArgumentTypeError)(
                f"zarrx.codecs.ShardingCodec index_location: expected 'start' or 'end', found "
                f"{index_location!r}")
        self.chunk_shape = shape
        self.codecs = _codec_list([_BYTES] if codecs is None else codecs, "codecs")
        self.index_codecs = _codec_list([_BYTES, {"name": "crc32c"}] if index_codecs is None
                                        else index_codecs, "index_codecs")
        self.index_location = index_location

    def configuration(self) -> dict[str, Any]:
        return {"chunk_shape": list(self.chunk_shape),
                "codecs": [_json(c) for c in self.codecs],
                "index_codecs": [_json(c) for c in self.index_codecs],
                "index_location": self.index_location}

    @classmethod
    def from_config(cls, config: dict, where: str) -> "ShardingIndexed":
        raise MetadataError(f"{where}: sharding_indexed is not a chunk codec here; it is lowered "
                            f"into shard levels (build the plan from ArrayMeta.chunk_codecs)")
