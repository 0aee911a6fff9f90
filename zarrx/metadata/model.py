"""The one version-blind metadata model. v2 documents are lowered into it at parse time.

Only ``zarrx.metadata`` (and ``zarrx.api``) know which Zarr version a document came from;
``ArrayMeta.zarr_format`` is read only when writing metadata back.
"""
from __future__ import annotations

import copy
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal

import numpy as np

from zarrx.metadata._util import safe_repr
from zarrx.metadata.frozen import (FrozenDict, freeze_json, guard_document, refuse_assignment,
                                   thaw_json)
from zarrx.metadata.model_parts import (MAX_INDEX_BYTES, ChunkGrid, ChunkLayout, CodecSpec,
                                        DataType, KeyEncoding, RectilinearGrid, RegularGrid,
                                        ShardGeometry, ShardLevel, V2Codecs, index_size,
                                        lower_layout, to_array_space)

__all__ = ["DataType", "CodecSpec", "ChunkGrid", "RegularGrid", "RectilinearGrid", "KeyEncoding",
           "ShardLevel", "V2Codecs", "ArrayMeta", "GroupMeta", "ChunkLayout", "ShardGeometry",
           "lower_layout", "to_array_space", "with_attributes", "MAX_INDEX_BYTES",
           "index_size", "node_dict", "register_node_dict", "register_memory_dtype",
           "read_only_fill", "own_data_type", "frozen_entry"]


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
        object.__setattr__(self, "extra", freeze_json(self.extra))
        object.__setattr__(self, "fill_value", read_only_fill(self.fill_value))
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


def read_only_fill(value: Any) -> Any:
    """A fill value numpy would let a holder change in place (a struct's ``np.void``, a
    subarray's array) as a read-only copy: numpy refuses a change with a ``ValueError``
    ("assignment destination is read-only")."""
    if isinstance(value, np.void) and value.dtype.names is not None:
        held = np.array(value, dtype=value.dtype)
        held.flags.writeable = False
        return held[()]
    if isinstance(value, np.ndarray) and value.flags.writeable:
        value = value.copy()
        value.flags.writeable = False
    return value


def frozen_entry(meta: Any) -> Any:
    """A consolidated entry as a group's metadata holds it: with its attributes frozen (the
    handles opened from it each get a copy of them)."""
    attrs = getattr(meta, "attributes", None)
    if attrs and type(attrs) is not FrozenDict and isinstance(meta, (ArrayMeta, GroupMeta)):
        return with_attributes(meta, freeze_json(attrs))
    return meta


def own_data_type(meta: ArrayMeta) -> ArrayMeta:
    """``meta``, or a copy of it with a data type and fill value of its own when its numpy
    dtype is one numpy lets a holder change in place (a struct's, whose field ``names`` can be
    set): for a handle of metadata other handles share."""
    dt = meta.data_type
    if dt.numpy.names is None:
        return meta
    new = with_attributes(meta, meta.attributes)
    numpy = copy.copy(dt.numpy)
    object.__setattr__(new, "data_type", DataType(dt.name, numpy, dt.variable, json=dt._json))
    fill = meta.fill_value
    if isinstance(fill, np.void):
        held = np.array(fill, dtype=numpy)
        held.flags.writeable = False
        object.__setattr__(new, "fill_value", held[()])
    return new


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

    def __post_init__(self) -> None:
        object.__setattr__(self, "extra", freeze_json(self.extra))
        entries = self.consolidated
        if type(entries) is dict:
            object.__setattr__(self, "consolidated",
                               FrozenDict({p: frozen_entry(m) for p, m in entries.items()}))
        elif entries is not None and hasattr(entries, "seal"):
            entries.seal()      # LazyEntries: changed by zarrx only through a copy from now on

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
    return thaw_json(_NODE_DICTS[meta.zarr_format](meta))


def with_attributes(meta: ArrayMeta | GroupMeta, attributes: dict[str, Any]
                    ) -> ArrayMeta | GroupMeta:
    """A copy of ``meta`` holding ``attributes``, every other field (the derived layout
    included) shared: ``dataclasses.replace`` without validating and deriving again what
    ``meta`` already holds."""
    cls = type(meta)
    new = object.__new__(cls)
    slots, attrs = _SLOTS[cls]
    for slot in slots:
        slot.__set__(new, slot.__get__(meta, cls))
    attrs.__set__(new, attributes)
    return new


# the metadata a handle shows is shared (zarrx.metadata.frozen): read-only
refuse_assignment(ArrayMeta)
refuse_assignment(GroupMeta)
guard_document(ArrayMeta)
guard_document(GroupMeta)
#: each class's fields as held (the document's too, not its view), for :func:`with_attributes`
_SLOTS = {cls: (tuple(cls._json_slot if n == "json" else cls.__dict__[n] for n in cls.__slots__
                      if n != "attributes"), cls.__dict__["attributes"])
          for cls in (ArrayMeta, GroupMeta)}
