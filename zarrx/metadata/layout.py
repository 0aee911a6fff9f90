"""The chunk layout of an array, lowered from its grid and codec list once, at parse time.

Everything below metadata reads the layout instead of interpreting codec specs: the read unit
(the chunk that is fetched and decoded on its own: the innermost chunk when sharded), the codec
chain that decodes one read unit, and the geometry of every sharding level.

A ``transpose`` before the (outermost) ``sharding_indexed`` codec commutes with cutting a shard
into inner chunks, so it is pushed down into every inner chunk: read units stay in array space
and are decoded by a chain that starts with the same transpose, and only the index slot of an
inner chunk is computed in the transposed space (:attr:`ShardGeometry.perm`).
"""
from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import TYPE_CHECKING

from zarrx.errors import ShardError
from zarrx.metadata.model import CodecSpec, RegularGrid, ShardLevel

if TYPE_CHECKING:
    from zarrx.metadata.model import ArrayMeta

__all__ = ["ChunkLayout", "ShardGeometry", "lower_layout", "MAX_INDEX_BYTES"]

# A shard index larger than this is refused at parse time (16 bytes per inner chunk): 2^26
# inner chunks per shard, far beyond any practical layout, and never a MemoryError.
MAX_INDEX_BYTES = 1 << 30


@dataclass(frozen=True, slots=True)
class ShardGeometry:
    """One sharding level.

    ``shard_shape`` and ``chunk_shape`` are in the sharding codec's space (after ``perm``);
    ``per_shard`` is the number of inner chunks per shard along each of those axes and ``ratio``
    the number of read units per inner chunk of this level along each *array* axis.
    """

    level: ShardLevel
    shard_shape: tuple[int, ...]
    chunk_shape: tuple[int, ...]
    per_shard: tuple[int, ...]
    ratio: tuple[int, ...]
    perm: tuple[int, ...] | None
    n_chunks: int
    index_nbytes: int

    @property
    def at_end(self) -> bool:
        return self.level.index_location == "end"


@dataclass(frozen=True, slots=True)
class ChunkLayout:
    """``read_shape``: the read unit's shape in array space (None for a rectilinear grid);
    ``read_codecs``: the chain that decodes one read unit; ``shards``: the sharding levels,
    outermost first (empty when not sharded); ``object_ratio``: read units per stored object
    along each array axis (all ones when not sharded)."""

    read_shape: tuple[int, ...] | None
    read_codecs: tuple[CodecSpec, ...]
    shards: tuple[ShardGeometry, ...]
    object_ratio: tuple[int, ...] | None

    @property
    def sharded(self) -> bool:
        return bool(self.shards)

    @property
    def shard_major(self) -> list[tuple[int, ...]] | None:
        """Read units per shard per axis at each level, outermost first (array space): the
        visit order that assembles each shard once per write. None when not sharded."""
        if not self.shards:
            return None
        return [tuple(p * r for p, r in zip(to_array_space(g.per_shard, g.perm), g.ratio))
                for g in self.shards]


def to_array_space(shape: tuple[int, ...], perm: tuple[int, ...] | None) -> tuple[int, ...]:
    """A shape seen after a transpose with ``perm``, back in array axis order."""
    if perm is None:
        return tuple(shape)
    out = [0] * len(perm)
    for i, o in enumerate(perm):
        out[o] = shape[i]
    return tuple(out)


def _outer_perm(levels: tuple[ShardLevel, ...]) -> tuple[int, ...] | None:
    perm: tuple[int, ...] | None = None
    for i, level in enumerate(levels):
        for spec in level.outer_codecs:
            if spec.name != "transpose":
                raise ShardError(f"array codecs: {spec.name!r} before sharding_indexed is not "
                                 f"supported: only a transpose can be applied to a whole shard, "
                                 f"since inner chunks must stay independently decodable")
            if i > 0:
                raise ShardError("array codecs: a transpose inside a nested sharding_indexed "
                                 "codec is not supported")
            order = tuple(int(o) for o in spec.configuration["order"])
            perm = order if perm is None else tuple(perm[o] for o in order)
    return perm


def lower_layout(meta: ArrayMeta) -> ChunkLayout:
    grid = meta.chunk_grid
    levels = meta.shard_levels
    if not levels:
        shape = grid.chunk_shape if isinstance(grid, RegularGrid) else None
        ones = None if shape is None else (1,) * len(shape)
        return ChunkLayout(shape, tuple(meta.chunk_codecs), (), ones)
    if not isinstance(grid, RegularGrid):
        raise ShardError(f"sharding_indexed needs a regular chunk grid, found "
                         f"{type(grid).__name__}")
    perm = _outer_perm(levels)
    outer = grid.chunk_shape if perm is None else tuple(grid.chunk_shape[o] for o in perm)
    read = to_array_space(levels[-1].chunk_shape, perm)
    geoms = []
    shard = outer
    for level in levels:
        inner = tuple(level.chunk_shape)
        if len(inner) != len(shard) or any(c <= 0 or s % c for s, c in zip(shard, inner)):
            raise ShardError(f"sharding_indexed: chunk_shape {inner}: expected inner chunk "
                             f"lengths that divide the shard shape {shard}")
        per = tuple(s // c for s, c in zip(shard, inner))
        n = prod(per)
        nbytes = 16 * n + (4 if level.index_crc32c else 0)
        if nbytes > MAX_INDEX_BYTES:
            raise ShardError(f"sharding_indexed: a shard of {n} inner chunks ({per}) needs a "
                             f"{nbytes}-byte index; at most {MAX_INDEX_BYTES} bytes are "
                             f"supported")
        ratio = tuple(c // r for c, r in zip(to_array_space(inner, perm), read))
        geoms.append(ShardGeometry(level, shard, inner, per, ratio, perm, n, nbytes))
        shard = inner
    codecs = tuple(meta.chunk_codecs)
    if perm is not None:
        codecs = (CodecSpec("transpose", {"order": list(perm)}),) + codecs
    object_ratio = tuple(s // r for s, r in zip(grid.chunk_shape, read))
    return ChunkLayout(read, codecs, tuple(geoms), object_ratio)
