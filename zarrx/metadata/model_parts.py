"""The parts of the version-blind metadata model (:mod:`zarrx.metadata.model`): data type,
codec specs, chunk grids, key encoding, sharding levels, and the chunk layout lowered from them
when an array's metadata is made. Every one is read-only (:mod:`zarrx.metadata.frozen`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from math import prod
from typing import Any, Literal

import numpy as np

from zarrx.metadata.frozen import freeze_json, guard_document, refuse_assignment

__all__ = ["DataType", "CodecSpec", "ChunkGrid", "RegularGrid", "RectilinearGrid", "KeyEncoding",
           "ShardLevel", "V2Codecs", "ChunkLayout", "ShardGeometry", "lower_layout",
           "to_array_space", "MAX_INDEX_BYTES", "index_size"]

@dataclass(frozen=True, slots=True)
class DataType:
    """An array's data type.

    ``name`` is the v3 name (``"float32"``, ``"r16"``, ``"string"``, ``"numpy.datetime64"``…) or,
    for a v2 array, the v2 typestr / structured descriptor it was read from (kept to write it back
    unchanged; a structured descriptor is held as nested tuples so the type stays hashable).
    ``numpy`` is the in-memory numpy dtype, in native byte order (the stored byte order is
    the ``bytes`` codec's ``endian``), except for a v2 structured type whose fields differ in
    byte order: it holds them as stored, and its ``bytes`` codec has no ``endian``. ``variable`` is true for variable-length strings
    and bytes, held in memory as numpy object arrays (or ``StringDType``) and encoded by the
    vlen-* codecs.
    """

    name: str | Any
    numpy: np.dtype
    variable: bool = False
    json: Any = field(default=None, compare=False)   # the exact JSON read (None: derive from name)

    @property
    def itemsize(self) -> int:
        return self.numpy.itemsize


@dataclass(frozen=True, slots=True)
class CodecSpec:
    """One codec as named in v3 metadata, not yet resolved to an executable codec.

    ``name`` is the v3 name (``"bytes"``, ``"zstd"``, ``"numcodecs.delta"``…); a Zarr v2 codec
    is lowered to one at parse time (see :mod:`zarrx.metadata.codec_table`). ``configuration``
    is the JSON object of its parameters.
    """

    name: str
    configuration: dict[str, Any] = field(default_factory=dict)
    must_understand: bool = True
    json: Any = field(default=None, compare=False, repr=False)   # the JSON object as read

    def __post_init__(self) -> None:
        # (shared by every array whose metadata names this codec so: read-only)
        object.__setattr__(self, "configuration", freeze_json(self.configuration))

    def __hash__(self) -> int:
        return hash((self.name, repr(sorted(self.configuration.items()))))


class ChunkGrid:
    """Where chunk boundaries lie along each axis."""

    ndim: int


@dataclass(frozen=True, slots=True)
class RegularGrid(ChunkGrid):
    chunk_shape: tuple[int, ...]

    @property
    def ndim(self) -> int:  # type: ignore[override]
        return len(self.chunk_shape)


@dataclass(frozen=True, slots=True)
class RectilinearGrid(ChunkGrid):
    """The ``rectilinear`` extension: explicit chunk edge lengths along each axis."""

    chunk_sizes: tuple[tuple[int, ...], ...]      # fully expanded lengths per axis
    json: Any = field(default=None, compare=False)   # the configuration as read (run-length etc.)

    @property
    def ndim(self) -> int:  # type: ignore[override]
        return len(self.chunk_sizes)


@dataclass(frozen=True, slots=True)
class KeyEncoding:
    """Chunk key encoding: ``default`` (``c/0/1`` or ``c.0.1``; 0-d ``c``) or ``v2`` (``0.1``;
    0-d ``0``)."""

    name: Literal["default", "v2"] = "default"
    separator: Literal["/", "."] = "/"

    def encode(self, coords: tuple[int, ...]) -> str:
        if self.name == "default":
            return "c" if not coords else "c" + self.separator + self.separator.join(map(str, coords))
        return "0" if not coords else self.separator.join(map(str, coords))


@dataclass(frozen=True, slots=True)
class ShardLevel:
    """One ``sharding_indexed`` codec, lowered out of the codec list.

    ``chunk_shape`` is the inner chunk shape of this level (as the sharding codec sees it: after
    the array->array codecs before it); ``index_location`` is ``"end"`` or ``"start"``;
    ``index_crc32c`` is the number of crc32c checksums after the index (a bool for none or
    one; each checksums all the bytes before it); ``index_endian`` is the byte order of its
    ``bytes`` encoding; ``index_order`` the ``transpose`` of the ``(*per_shard, 2)`` index
    array before it is encoded (None: C order); ``object_codecs`` encode the whole stored shard.
    """

    chunk_shape: tuple[int, ...]
    index_location: Literal["start", "end"] = "end"
    index_crc32c: int = True
    outer_codecs: tuple[CodecSpec, ...] = ()      # array->array codecs applied before this level
    index_endian: Literal["little", "big"] = "little"
    #: bytes->bytes codecs after this level, encoding each shard object as a whole (zarr-python
    #: writes them by default with a sharding serializer): outermost level only
    object_codecs: tuple[CodecSpec, ...] = ()
    index_order: tuple[int, ...] | None = None


@dataclass(frozen=True, slots=True)
class V2Codecs:
    """A Zarr v2 array's ``filters`` and ``compressor`` exactly as its ``.zarray`` holds them
    (numcodecs JSON objects), kept to write the document back unchanged; ``codecs`` holds their
    lowered, version-blind form."""

    filters: tuple[dict[str, Any], ...] | None
    compressor: dict[str, Any] | None
    #: where each codec of the lowered list comes from in the document read (``a/.zarray
    #: filters[0]``, ``a/.zarray compressor``...), naming it in codec errors; None if not read
    where: tuple[str, ...] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "filters", freeze_json(self.filters))
        object.__setattr__(self, "compressor", freeze_json(self.compressor))


# -- the chunk layout, lowered from the grid and the codec list at construction -----------------
#
# Everything below metadata reads the layout instead of interpreting codec specs: the read unit
# (the chunk that is fetched and decoded on its own: the innermost chunk when sharded), the codec
# chain that decodes one read unit, and the geometry of every sharding level. A ``transpose``
# before a ``sharding_indexed`` codec commutes with cutting a shard into inner chunks, so it is
# pushed down into every inner chunk: read units stay in array space and are decoded by a chain
# that starts with the transposes of every level composed, and only the index slot of an inner
# chunk is computed in its level's transposed space (:attr:`ShardGeometry.perm`, the transposes
# before that level's codec and before the levels around it composed).

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


def _level_perms(levels: tuple[ShardLevel, ...]) -> list[tuple[int, ...] | None]:
    """The axis order each level's sharding codec sees, in array axes (None: the array's): the
    transposes before it and before the levels around it, composed."""
    from zarrx.errors import ShardError
    perm: tuple[int, ...] | None = None
    out: list[tuple[int, ...] | None] = []
    for level in levels:
        for spec in level.outer_codecs:
            if spec.name in ("scale_offset", "cast_value"):    # applied to each read unit
                continue
            if spec.name != "transpose":
                raise ShardError(f"array codecs: {spec.name!r} before sharding_indexed is not "
                                 f"supported: only a transpose can be applied to a whole shard, "
                                 f"since inner chunks must stay independently decodable")
            order = tuple(int(o) for o in spec.configuration["order"])
            perm = order if perm is None else tuple(perm[o] for o in order)
        out.append(perm)
    return out


def index_size(per_shard: tuple[int, ...], crc32c: int, where: Any) -> int:
    """The byte size of the index of a shard of ``per_shard`` inner chunks per axis; a
    MetadataError at ``where`` (a :class:`~zarrx.metadata._util.Loc` or a prefix) when it
    exceeds ``MAX_INDEX_BYTES``."""
    n = prod(per_shard)
    nbytes = 16 * n + 4 * int(crc32c)
    if nbytes > MAX_INDEX_BYTES:
        from zarrx.errors import MetadataError    # a limit of the document, not a shard
        raise MetadataError(f"{where}: a shard of {n} inner chunks ({per_shard}) needs a "
                            f"{nbytes}-byte index; at most {MAX_INDEX_BYTES} bytes are "
                            f"supported")
    return nbytes


def lower_layout(meta: Any) -> ChunkLayout:
    """The layout of ``meta``, an ``ArrayMeta`` (ShardError for a sharding the layout cannot hold)."""
    from zarrx.errors import ShardError
    grid = meta.chunk_grid
    levels = meta.shard_levels
    if not levels:
        shape = grid.chunk_shape if isinstance(grid, RegularGrid) else None
        ones = None if shape is None else (1,) * len(shape)
        return ChunkLayout(shape, tuple(meta.chunk_codecs), (), ones)
    if not isinstance(grid, RegularGrid):
        raise ShardError(f"sharding_indexed needs a regular chunk grid, found "
                         f"{type(grid).__name__}")
    perms = _level_perms(levels)
    read = to_array_space(levels[-1].chunk_shape, perms[-1])
    geoms = []
    above: tuple[int, ...] = grid.chunk_shape     # the shard in array axes
    for level, perm in zip(levels, perms):
        shard = above if perm is None else tuple(above[o] for o in perm)
        inner = tuple(level.chunk_shape)
        if len(inner) != len(shard) or any(c <= 0 or s % c for s, c in zip(shard, inner)):
            raise ShardError(f"sharding_indexed: chunk_shape {inner}: expected inner chunk "
                             f"lengths that divide the shard shape {shard}")
        per = tuple(s // c for s, c in zip(shard, inner))
        n = prod(per)
        nbytes = index_size(per, level.index_crc32c, "sharding_indexed")
        ratio = tuple(c // r for c, r in zip(to_array_space(inner, perm), read))
        geoms.append(ShardGeometry(level, shard, inner, per, ratio, perm, n, nbytes))
        above = to_array_space(inner, perm)
    # codecs mapping each value alone, from before any level: run on each read unit, in order
    codecs = tuple(c for level in levels for c in level.outer_codecs
                   if c.name in ("scale_offset", "cast_value")) + tuple(meta.chunk_codecs)
    if perms[-1] is not None:
        codecs = (CodecSpec("transpose", {"order": list(perms[-1])}),) + codecs
    # a shard length of 0 (zarr-python's, along an axis of length 0, which has no shards)
    # counts as one read unit per shard there, so that nothing divides by it
    object_ratio = tuple(s // r or 1 for s, r in zip(grid.chunk_shape, read))
    return ChunkLayout(read, codecs, tuple(geoms), object_ratio)


for _cls in (DataType, CodecSpec, RegularGrid, RectilinearGrid, KeyEncoding, ShardLevel, V2Codecs,
             ShardGeometry, ChunkLayout):
    refuse_assignment(_cls)
for _cls in (DataType, CodecSpec, RectilinearGrid):     # JSON as read, shared with the document
    guard_document(_cls)
