"""Where an array's chunks live: the chunk source, the visit order, and the stored objects.

The one place that turns an array's lowered :class:`~zarrx.metadata.model.ChunkLayout` into
store-level objects. The array and chunk I/O ask it and never look at sharding themselves.
"""
from __future__ import annotations

from collections.abc import Iterator

from zarrx.metadata.model import ArrayMeta
from zarrx.shard_objects import encoded_objects
from zarrx.store.base import Store
from zarrx.store.chunks import ChunkSource, Coords, KeyedChunks
from zarrx.store.sharded import ShardedChunks

__all__ = ["chunk_source", "visit_order", "stored_objects", "delete_objects_outside"]


def chunk_source(store: Store, path: str, meta: ArrayMeta) -> ChunkSource:
    """The chunk source of the array at ``path`` (``""`` for the root): its read units, over
    its stored objects."""
    prefix = f"{path}/" if path else ""
    if not meta.layout.sharded:
        return KeyedChunks(store, prefix, meta.key_encoding, ndim=meta.ndim)
    objects = KeyedChunks(encoded_objects(store, meta, path), prefix, meta.key_encoding,
                          ndim=meta.ndim)
    return ShardedChunks(objects, meta.layout, name=path)


def visit_order(meta: ArrayMeta) -> list[tuple[int, ...]] | None:
    """The shard-major visit order for selections (read units per shard per axis, outermost
    level first), or None for C order: each shard is then assembled once per write and
    consecutive reads hit the same cached index."""
    return meta.layout.shard_major


def stored_objects(source: ChunkSource) -> Iterator[Coords]:
    """Coordinates of the stored objects (chunks, or shards when sharded) in the grid of
    stored objects."""
    return source.objects.list_chunks()


def delete_objects_outside(source: ChunkSource, meta: ArrayMeta) -> int:
    """Delete the stored objects wholly outside ``meta.shape`` (after a shrink); returns how
    many were deleted."""
    grid = meta.chunk_grid.chunk_shape            # type: ignore[attr-defined]
    shape = meta.shape
    dead = [c for c in stored_objects(source)
            if any(ci * cs >= n for ci, cs, n in zip(c, grid, shape))]
    if dead:
        source.objects.set_chunks([(c, None) for c in dead])
    return len(dead)
