"""The one version-blind metadata model. v2 documents are lowered into it at parse time.

Only ``zarrx.metadata`` (and ``zarrx.api``) know which Zarr version a document came from;
``ArrayMeta.zarr_format`` is read only when writing metadata back.
"""
from __future__ import annotations

import copy
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, field, fields
from math import prod
from typing import Any, Literal

import numpy as np

from zarrx.metadata._util import safe_repr

__all__ = ["DataType", "CodecSpec", "ChunkGrid", "RegularGrid", "RectilinearGrid", "KeyEncoding",
           "ShardLevel", "V2Codecs", "ArrayMeta", "GroupMeta", "ChunkLayout", "ShardGeometry",
           "lower_layout", "to_array_space", "with_attributes", "MAX_INDEX_BYTES",
           "index_size", "node_dict", "register_node_dict", "register_memory_dtype"]


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
    v2_codecs: V2Codecs | None = field(default=None, compare=False, repr=False)   # v2 only
    json: Any = field(default=None, compare=False, repr=False)  # the document as read (layout only)
    # derived once at construction (parse time) from the grid and the codec list
    layout: ChunkLayout = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "layout", lower_layout(self))

    def __eq__(self, other: object) -> bool:
        """Field-wise, with fill values compared bit for bit (NaN == NaN of the same payload)."""
        if not isinstance(other, ArrayMeta):
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in _ARRAY_EQ_FIELDS) and \
            _fill_key(self.fill_value) == _fill_key(other.fill_value)

    __hash__ = None  # type: ignore[assignment]   # holds dicts

    def __repr__(self) -> str:
        """The dataclass's text, with a fill value numpy cannot show (a unit-less datetime64
        holding an integer other than NaT, as zarr-python writes it) as that integer."""
        parts = ", ".join(f"{f.name}={safe_repr(getattr(self, f.name))}" for f in fields(self)
                          if f.repr)
        return f"ArrayMeta({parts})"

    node_type = "array"

    def to_dict(self) -> dict[str, Any]:
        """The node's metadata document, as zarr-python's ``to_dict()`` gives it (see
        :func:`node_dict`)."""
        return node_dict(self)

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

    # -- zarr-python's names of what the fields above hold (its ArrayV2Metadata and
    # ArrayV3Metadata have them); the v2-only ones are AttributeErrors for a v3 array there too
    @property
    def chunks(self) -> tuple[int, ...]:
        """The chunk shape (the inner chunk's when sharded), as :attr:`chunk_shape`."""
        return self.chunk_shape

    @property
    def shards(self) -> tuple[int, ...] | None:
        """The shard shape (the chunk grid's) when sharded, else None."""
        if not self.shard_levels or not isinstance(self.chunk_grid, RegularGrid):
            return None
        return self.chunk_grid.chunk_shape

    @property
    def dtype(self) -> np.dtype:
        """The numpy dtype of what reads return, as ``Array.dtype``: :attr:`data_type`'s, and
        numpy 2's ``StringDType`` for variable-length strings (zarr-python's is its data type
        object, whose ``to_native_dtype()`` gives the same)."""
        return _MEMORY_DTYPES[0](self.data_type) if _MEMORY_DTYPES else self.data_type.numpy

    @property
    def chunk_key_encoding(self) -> KeyEncoding:
        return self.key_encoding

    @property
    def order(self) -> str:
        """A Zarr v2 array's ``order`` field: ``"F"`` or ``"C"``."""
        self._v2_only("order")
        return "F" if self.codecs and self.codecs[0].name == "transpose" else "C"

    @property
    def dimension_separator(self) -> str:
        """A Zarr v2 array's ``dimension_separator``: ``"."`` or ``"/"``."""
        self._v2_only("dimension_separator")
        return self.key_encoding.separator

    @property
    def compressor(self) -> dict[str, Any] | None:
        """A Zarr v2 array's ``compressor`` as its ``.zarray`` holds it (a numcodecs JSON
        object, a copy), or None."""
        self._v2_only("compressor")
        return node_dict(self)["compressor"]

    @property
    def filters(self) -> tuple[dict[str, Any], ...] | None:
        """A Zarr v2 array's ``filters`` as its ``.zarray`` holds them (numcodecs JSON
        objects, copies), or None."""
        self._v2_only("filters")
        filters = node_dict(self)["filters"]
        return None if filters is None else tuple(filters)

    def _v2_only(self, name: str) -> None:
        if self.zarr_format != 2:
            raise AttributeError(f"'{name}' is a field of Zarr v2 array metadata; this array "
                                 f"is Zarr v3 (its codecs are in 'codecs')")


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
    # path -> meta, when present: read from a store, a LazyEntries (each entry parsed when it is
    # first looked up, see zarrx.metadata.lazy_entries)
    consolidated: MutableMapping[str, ArrayMeta | GroupMeta] | None = None
    # v3: the paths a writer listed in consolidated_metadata as pending (entries maybe stale)
    consolidated_pending: tuple[str, ...] = field(default=(), compare=False, repr=False)
    extra: dict[str, Any] = field(default_factory=dict)
    json: Any = field(default=None, compare=False, repr=False)  # the document as read (layout only)

    node_type = "group"

    def to_dict(self) -> dict[str, Any]:
        """The node's metadata document, as zarr-python's ``to_dict()`` gives it (see
        :func:`node_dict`)."""
        return node_dict(self)

    @property
    def consolidated_metadata(self) -> Any:
        """zarr-python's view of the consolidated entries below this group (a
        :class:`~zarrx.metadata.consolidated_view.ConsolidatedMetadata`), or None."""
        from zarrx.metadata.consolidated_view import ConsolidatedMetadata
        return None if self.consolidated is None else ConsolidatedMetadata(self.consolidated)


#: the dtype reads hand out for a data type (registered by
#: :mod:`zarrx.metadata.dtype_input`, which the package imports with this module)
_MEMORY_DTYPES: list[Callable[[DataType], np.dtype]] = []


def register_memory_dtype(of: Callable[[DataType], np.dtype]) -> None:
    """Make ``of(data_type)`` the ``ArrayMeta.dtype`` of arrays of ``data_type``."""
    _MEMORY_DTYPES[:] = [of]


#: how each Zarr format's module writes a node's ``to_dict()`` document (registered by
#: :mod:`zarrx.metadata.v2` and :mod:`zarrx.metadata.v3`, which the package imports with this
#: module, as they import this one)
_NODE_DICTS: dict[int, Callable[[Any], dict[str, Any]]] = {}


def register_node_dict(zarr_format: int, write: Callable[[Any], dict[str, Any]]) -> None:
    """Make ``write`` the ``to_dict()`` of the nodes of ``zarr_format``."""
    _NODE_DICTS[zarr_format] = write


def node_dict(meta: ArrayMeta | GroupMeta) -> dict[str, Any]:
    """What zarr-python's metadata ``to_dict()`` gives, as zarrx would write it: a Zarr v3
    node's ``zarr.json``; a Zarr v2 array's ``.zarray`` with its ``attributes``, a v2 group's
    ``attributes``, ``zarr_format`` and ``node_type``. A copy: changing it changes nothing of
    ``meta``. (``create_hierarchy`` takes it back.)"""
    return copy.deepcopy(_NODE_DICTS[meta.zarr_format](meta))


def with_attributes(meta: ArrayMeta | GroupMeta, attributes: dict[str, Any]
                    ) -> ArrayMeta | GroupMeta:
    """A copy of ``meta`` holding ``attributes``, every other field (the derived layout
    included) shared: ``dataclasses.replace`` without validating and deriving again what
    ``meta`` already holds."""
    new = object.__new__(type(meta))
    for name in type(meta).__slots__:
        object.__setattr__(new, name, getattr(meta, name))
    object.__setattr__(new, "attributes", attributes)
    return new


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


def lower_layout(meta: ArrayMeta) -> ChunkLayout:
    """The layout of ``meta`` (ShardError for a sharding the layout cannot hold)."""
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
    codecs = tuple(meta.chunk_codecs)
    if perms[-1] is not None:
        codecs = (CodecSpec("transpose", {"order": list(perms[-1])}),) + codecs
    # a shard length of 0 (zarr-python's, along an axis of length 0, which has no shards)
    # counts as one read unit per shard there, so that nothing divides by it
    object_ratio = tuple(s // r or 1 for s, r in zip(grid.chunk_shape, read))
    return ChunkLayout(read, codecs, tuple(geoms), object_ratio)
