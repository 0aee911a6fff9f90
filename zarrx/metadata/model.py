"""The one version-blind metadata model. v2 documents are lowered into it at parse time.

Only ``zarrx.metadata`` (and ``zarrx.api``) know which Zarr version a document came from;
``ArrayMeta.zarr_format`` is read only when writing metadata back.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

if TYPE_CHECKING:
    from zarrx.metadata.layout import ChunkLayout

__all__ = ["DataType", "CodecSpec", "ChunkGrid", "RegularGrid", "RectilinearGrid", "KeyEncoding",
           "ShardLevel", "ArrayMeta", "GroupMeta"]


@dataclass(frozen=True, slots=True)
class DataType:
    """An array's data type.

    ``name`` is the v3 name (``"float32"``, ``"r16"``, ``"string"``, ``"numpy.datetime64"``…) or,
    for a v2 array, the v2 typestr / structured descriptor it was read from (kept to write it back
    unchanged; a structured descriptor is held as nested tuples so the type stays hashable).
    ``numpy`` is the in-memory numpy dtype, always native byte order (the stored byte order is
    the ``bytes`` codec's ``endian``). ``variable`` is true for variable-length strings
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
    """One codec as named in metadata, not yet resolved to an executable codec.

    ``name`` is the v3 name (``"bytes"``, ``"zstd"``, ``"numcodecs.delta"``…) or, for a codec
    lowered from v2, the numcodecs ``id`` (``"blosc"``, ``"zlib"``…) with ``v2=True``;
    ``configuration`` is the JSON object of its parameters (for v2: the codec dict minus ``id``).
    """

    name: str
    configuration: dict[str, Any] = field(default_factory=dict)
    must_understand: bool = True
    v2: bool = False
    json: Any = field(default=None, compare=False, repr=False)   # the JSON object as read

    def __hash__(self) -> int:
        return hash((self.name, repr(sorted(self.configuration.items())), self.v2))


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
    ``index_crc32c`` says whether the index is followed by a crc32c checksum; ``index_endian`` is
    the byte order of its ``bytes`` encoding.
    """

    chunk_shape: tuple[int, ...]
    index_location: Literal["start", "end"] = "end"
    index_crc32c: bool = True
    outer_codecs: tuple[CodecSpec, ...] = ()      # array->array codecs applied before this level
    index_endian: Literal["little", "big"] = "little"


@dataclass(frozen=True, slots=True, kw_only=True)
class ArrayMeta:
    shape: tuple[int, ...]
    data_type: DataType
    chunk_grid: ChunkGrid                         # the grid of stored objects (shards if sharded)
    key_encoding: KeyEncoding
    fill_value: Any                               # numpy scalar of data_type.numpy, or None (v2 null)
    codecs: tuple[CodecSpec, ...]                 # the full v3-shaped list as stored (incl. sharding)
    shard_levels: tuple[ShardLevel, ...] = ()     # outermost first; () when not sharded
    chunk_codecs: tuple[CodecSpec, ...] = ()      # the innermost chunks' codec list
    attributes: dict[str, Any] = field(default_factory=dict)
    dimension_names: tuple[str | None, ...] | None = None
    zarr_format: Literal[2, 3] = 3
    extra: dict[str, Any] = field(default_factory=dict)   # unknown must_understand=false fields
    json: Any = field(default=None, compare=False, repr=False)  # the document as read (layout only)
    # derived once at construction (parse time) from the grid and the codec list
    layout: ChunkLayout = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        from zarrx.metadata.layout import lower_layout
        object.__setattr__(self, "layout", lower_layout(self))

    def __eq__(self, other: object) -> bool:
        """Field-wise, with fill values compared bit for bit (NaN == NaN of the same payload)."""
        if not isinstance(other, ArrayMeta):
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in _ARRAY_EQ_FIELDS) and \
            _fill_key(self.fill_value) == _fill_key(other.fill_value)

    __hash__ = None  # type: ignore[assignment]   # holds dicts

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def chunk_shape(self) -> tuple[int, ...]:
        """The read unit's shape in array space: the innermost chunk when sharded, else the
        grid's chunk shape. A MetadataError for a rectilinear grid, which has none."""
        shape = self.layout.read_shape
        if shape is None:
            from zarrx.errors import MetadataError
            raise MetadataError("a rectilinear chunk grid has no single chunk shape: use "
                                "metadata.chunk_grid.chunk_sizes (the chunk edge lengths along "
                                "each axis)")
        return shape


def _fill_key(value: Any) -> Any:
    if value is None or isinstance(value, (str, bytes)):
        return (type(value) is str, value) if value is not None else None
    arr = np.asarray(value)
    return (arr.dtype.str, arr.tobytes())


_ARRAY_EQ_FIELDS = ("shape", "data_type", "chunk_grid", "key_encoding", "codecs", "shard_levels",
                    "chunk_codecs", "attributes", "dimension_names", "zarr_format", "extra")


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupMeta:
    attributes: dict[str, Any] = field(default_factory=dict)
    zarr_format: Literal[2, 3] = 3
    consolidated: dict[str, ArrayMeta | GroupMeta] | None = None   # path -> meta, when present
    extra: dict[str, Any] = field(default_factory=dict)
    json: Any = field(default=None, compare=False, repr=False)  # the document as read (layout only)
