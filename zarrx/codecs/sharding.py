"""``sharding_indexed`` is recognised here only to be refused by the codec plan.

Sharding is a chunk source (``zarrx.store.sharded``): the metadata parser lowers the codec into
``ArrayMeta.shard_levels`` and plans are built from ``ArrayMeta.chunk_codecs``.
"""
from __future__ import annotations

from zarrx.codecs.base import ArrayToBytesCodec
from zarrx.errors import MetadataError

__all__ = ["ShardingIndexed"]


class ShardingIndexed(ArrayToBytesCodec):
    name = "sharding_indexed"

    @classmethod
    def from_config(cls, config: dict, where: str) -> "ShardingIndexed":
        raise MetadataError(f"{where}: sharding_indexed is not a chunk codec here; it is lowered "
                            f"into shard levels (build the plan from ArrayMeta.chunk_codecs)")
