"""The Array handle: (metadata, store, chunk source, codec plans), its properties as
zarr-python names them, pickling and reports.

Indexing is :class:`zarrx.array_selection.Selecting` (which turns user calls into the free
functions of :mod:`zarrx.chunk_read`, :mod:`zarrx.chunk_write` and :mod:`zarrx.indexing`);
resizing and appending, which keep the metadata document in step, are
:class:`zarrx.array_shape.Reshaping`.
"""
from __future__ import annotations

import functools
import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from zarrx import _fork, chunk_io, indexing, layout, text_items
from zarrx import config as settings
from zarrx.array_config import ArrayConfig, merged_config
from zarrx.array_selection import Selecting
from zarrx.array_shape import Reshaping
from zarrx.errors import ArgumentError, ArgumentTypeError, ArrayNotFoundError
from zarrx.metadata import nodes
from zarrx.node import Node
from zarrx.metadata.model import ArrayMeta, RectilinearGrid, RegularGrid
from zarrx.store.base import Store

__all__ = ["Array"]


class Array(Selecting, Reshaping, Node):
    """An N-dimensional chunked array in a store. Index it like numpy."""

    _kind = "array"

    def __init__(self, store: Store, path: str, meta: ArrayMeta, *, read_only: bool = False,
                 write_empty_chunks: bool | None = None, order: str | None = None) -> None:
        super().__init__(store, path, meta, read_only=read_only)
        self._write_empty = None if write_empty_chunks is None else bool(write_empty_chunks)
        if order is None and meta.zarr_format == 3:
            # zarr-python's array.order: the layout of a handle made without config's order
            order = settings.get("order")
        self._memory_order = order      # zarr-python's config order, for a Zarr v3 array
        self._setup()

    def _setup(self) -> None:
        """Forget what was derived from the metadata (it changed, or the handle is new): the
        cached properties below. Each is made on first use, so opening an array costs only
        its metadata: a handle only asked for its shape or attributes never builds its I/O
        state."""
        d = self.__dict__
        for name in _DERIVED:
            d.pop(name, None)

    @_fork.cached_property
    def _io(self) -> chunk_io.ArrayIO:
        meta = self._meta
        if meta.data_type.numpy.names is not None:
            # reads hand out arrays of this dtype, whose field names numpy lets be changed in
            # place: the handle's own, not the one every handle of the array shares
            meta = self._owned_meta()
        return chunk_io.ArrayIO(meta, layout.chunk_source(self._store, self._path, meta),
                                self._path, write_empty=self._write_empty)

    @_fork.cached_property
    def _grid(self) -> indexing.ChunkGridIndex:
        return _grid_of(self._meta)

    @_fork.cached_property
    def _order(self) -> Any:
        return layout.visit_order(self._meta)

    @_fork.cached_property
    def _structured(self) -> bool:
        return self._meta.data_type.numpy.names is not None

    @_fork.cached_property
    def _point_ok(self) -> bool:
        """Whether z[i, j, ...] of one element takes the short path (regular grid, plain
        dtype; not text, whose code units a read checks before numpy makes them a str)."""
        return self._io.regular and not self._io.object_chunks and not self._structured \
            and not self._text

    @_fork.cached_property
    def _text(self) -> bool:
        """Whether items hold fixed-length text (``U``), checked as it is read."""
        return text_items.holds_text(self._meta.data_type.numpy)

    @_fork.cached_property
    def _utf8_only(self) -> bool:
        """Whether the chunks' object codec is ``vlen-utf8``, which decodes ``str`` only."""
        return any(c.name == "vlen-utf8" for c in self._meta.layout.read_codecs)

    @_fork.cached_property
    def _bytes_only(self) -> bool:
        """Whether items are variable-length bytes (the data type ``bytes``; in Zarr v2, the
        object codec ``vlen-bytes``), written as bytes only."""
        from zarrx.metadata.dtypes import category
        return self._meta.data_type.variable and category(self._meta.data_type) == "bytes"

    @_fork.cached_property
    def _bytes_as_text(self) -> bool:
        """Whether items are bytes stored as text (data type ``bytes`` with the codec
        ``vlen-utf8``): read back as the bytes of the text."""
        return self._bytes_only and self._utf8_only

    @_fork.cached_property
    def _object_strings(self) -> bool:
        """Whether items are variable-length strings handed out in object arrays (numpy 1,
        which has no StringDType) by a codec that may decode bytes (not ``vlen-utf8``)."""
        from zarrx.metadata.dtypes import category
        return self._meta.data_type.variable and self._strings is None and \
            category(self._meta.data_type) == "string" and not self._utf8_only

    @_fork.cached_property
    def _strings(self) -> Any:
        """numpy 2's StringDType for variable-length strings (decoded into object arrays and
        handed out as that, as zarr-python does), else None."""
        return _string_dtype(self._meta)

    # -- pickling: store + path + metadata ----------------------------------------------------
    def __reduce__(self):
        # the metadata goes along, as zarr-python's handles carry theirs: unpickling sends no
        # request, so a copy in a worker behaves as this handle does, and a store that cannot
        # be read there fails in the worker's first read (a multiprocessing pool then raises
        # it in the parent) rather than while the pool unpickles the task (the pool takes that
        # error for its pipe closing and loses the task)
        return (_rebuild, (self._store, self._path, self._shown_meta(), self._read_only,
                           self._write_empty, self._memory_order))

    def __dask_tokenize__(self) -> tuple:
        """What dask names this handle by (``dask.array.from_array(z)``...): its store and
        path, as for pickling, and its metadata; an array in memory is named by its store
        object, without pickling its data."""
        from zarrx.dask.graph import store_token
        return ("zarrx.Array", store_token(self._store), self._path, repr(self._meta),
                self._read_only, self._write_empty, self._memory_order)

    # -- properties as zarr-python names them -----------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self._meta.shape

    @shape.setter
    def shape(self, value: Any) -> None:
        """``z.shape = (8, 4)`` is ``z.resize((8, 4))``, as in zarr-python."""
        self.resize(value)

    @property
    def ndim(self) -> int:
        return len(self._meta.shape)

    @property
    def size(self) -> int:
        return math.prod(self._meta.shape)

    @property
    def dtype(self) -> np.dtype:
        """The numpy dtype of what reads return (``StringDType`` for variable-length strings
        with numpy 2)."""
        if self._strings is not None:
            return self._strings
        dt = self._meta.data_type.numpy
        # (a struct's numpy dtype can be changed in place: the handle's own)
        return dt if dt.names is None else self._owned_meta().data_type.numpy

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def chunks(self) -> tuple[int, ...]:
        """The read unit: the inner chunk shape when sharded, else the chunk grid's shape. A
        rectilinear grid has none: a MetadataError names ``metadata.chunk_grid.chunk_sizes``."""
        return self._meta.chunk_shape

    @property
    def shards(self) -> tuple[int, ...] | None:
        """The shape of one stored object (shard) when sharded, else None."""
        if not self._meta.layout.sharded:
            return None
        grid = self._meta.chunk_grid
        return grid.chunk_shape if isinstance(grid, RegularGrid) else None

    @property
    def fill_value(self) -> Any:
        """The fill value; a struct's (an ``np.void``, as zarr-python's) is a copy of the
        handle's own to change freely: what the array reads and writes keeps the stored one."""
        fill = self._meta.fill_value
        if isinstance(fill, np.void):
            own = self._owned_meta().fill_value
            return np.array(own, dtype=own.dtype)[()]
        return fill.copy() if isinstance(fill, np.ndarray) else fill

    @property
    def dimension_names(self) -> tuple[str | None, ...] | None:
        return self._meta.dimension_names

    @property
    def order(self) -> str:
        """The memory layout of what reads return, as zarr-python has it: for a Zarr v2 array
        the order its chunks are stored in (its ``order`` field, which zarrx reads as a
        leading ``transpose``); for a Zarr v3 array the ``order`` of the ``config`` it was
        created with (v3 stores no order), else ``"C"``."""
        m = self._meta
        if m.zarr_format == 2:
            return "F" if m.codecs and m.codecs[0].name == "transpose" else "C"
        return self._memory_order or "C"

    @property
    def cdata_shape(self) -> tuple[int, ...]:
        return self._grid.nchunks

    @property
    def nchunks(self) -> int:
        return math.prod(self.cdata_shape)

    @property
    def nchunks_initialized(self) -> int:
        """How many chunks are stored, counted as zarr-python counts them: a stored shard counts
        all of its inner chunks (``nshards_initialized`` times the chunks per shard)."""
        ratio = self._meta.layout.object_ratio
        return self.nshards_initialized * (math.prod(ratio) if ratio else 1)

    @property
    def nshards_initialized(self) -> int:
        """How many stored objects exist: shards when sharded, else chunks; as zarr-python
        counts them, only those of the array's grid (not objects left outside it by a shrink,
        nor stray keys)."""
        return sum(1 for _ in self._initialized_objects())

    @property
    def _shard_grid_shape(self) -> tuple[int, ...]:
        """Stored objects per axis: shards when sharded, else chunks (zarr-python's name)."""
        ratio = self._meta.layout.object_ratio
        if not ratio:
            return self.cdata_shape
        return tuple(-(-n // r) for n, r in zip(self.cdata_shape, ratio))

    def _initialized_objects(self) -> Iterator[tuple[int, ...]]:
        """Grid coordinates of the stored objects (shards, or chunks) inside the grid."""
        grid = self._shard_grid_shape
        for coords in layout.stored_objects(self._io.source):
            if all(c < n for c, n in zip(coords, grid)):
                yield coords

    # -- codecs, as zarr-python reports them ---------------------------------------------------
    @property
    def filters(self) -> tuple[Any, ...]:
        """The array->array codecs of a chunk (the inner chunk when sharded); a Zarr v2 array's
        ``.zarray`` filters."""
        return self._codecs()["filters"]

    @property
    def serializer(self) -> Any:
        """The array->bytes codec of a chunk (the inner chunk when sharded); None for Zarr v2."""
        return self._codecs()["serializer"]

    @property
    def compressors(self) -> tuple[Any, ...]:
        """The bytes->bytes codecs of a chunk (the inner chunk when sharded)."""
        return self._codecs()["compressors"]

    @property
    def compressor(self) -> Any:
        """A Zarr v2 array's compressor (None when uncompressed); Zarr v3 arrays have
        ``compressors`` instead."""
        if self._meta.zarr_format != 2:
            raise ArgumentTypeError(f"{self.name}: compressor is not available for Zarr format 3 "
                                    f"arrays; use compressors")
        comp = self.compressors
        return comp[0] if comp else None

    def _codecs(self) -> dict[str, Any]:
        from zarrx.codec_args import array_codecs
        return array_codecs(self._meta)

    def __len__(self) -> int:
        if not self._meta.shape:
            raise ArgumentTypeError("len() of unsized object (a 0-d array)")
        return self._meta.shape[0]

    def __iter__(self) -> Iterator[Any]:
        """The items along the first axis, as ``z[i]`` gives them, read a row of chunks at a
        time (not one read per item) and holding one such row at a time: the last item of
        each row of chunks is a copy, not a view of it. A 0-d array cannot be iterated, as in
        numpy."""
        if not self._meta.shape:
            raise ArgumentTypeError(f"{self.name}: iteration over a 0-d array")
        return self._rows()

    def _rows(self) -> Iterator[Any]:
        axis = self._grid.axes[0]
        for k in range(axis.nchunks):     # bounds made as they are reached: there may be 2**62
            start = axis.start(k)
            band = self[start:start + axis.inbound_len(k)]
            if band.ndim == 1:                # items are scalars: none holds the band
                yield from band
                continue
            yield from band[:-1]
            # the band's last row is handed out as a copy, so that the caller holding it
            # while the next band is read does not keep this one alive (one band at a time)
            last = band[-1].copy()
            del band
            yield last

    def __repr__(self) -> str:
        return f"<zarrx.Array {self.name!r} shape={self.shape} dtype={self.dtype}>"

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        """The whole array read into numpy (a 0-d array for a 0-d one). ``copy=False`` is
        refused with a ``ValueError``, as numpy's protocol asks: reading always copies."""
        if copy is False:
            raise ArgumentError(f"{self.name}: np.array(..., copy=False) cannot be "
                                f"honoured: reading a Zarr array always makes a copy")
        a = np.asarray(self[...])
        # another dtype: converted as numpy converts (an ArgumentError naming it when it cannot)
        return a if dtype is None else chunk_io.check_value(a, None, dtype, self.name)

    # -- metadata and reports -----------------------------------------------------------------
    def update_attributes(self, new_attributes: dict[str, Any]) -> Array:
        """Merge ``new_attributes`` into the attributes (one metadata write); returns the array."""
        self.attrs.update(new_attributes)
        return self

    def nbytes_stored(self) -> int:
        """Bytes of the stored chunk (or shard) objects of the array's grid (metadata
        documents and stray objects excluded)."""
        from zarrx.info import stored_bytes
        return stored_bytes(self)

    def to_dask(self, chunks: Any = None) -> Any:
        """This array as a dask array; by default its blocks are whole shards (or chunks),
        merged up to about 128 MiB. See :func:`zarrx.dask.from_zarrx`."""
        from zarrx.dask.graph import array_to_dask
        return array_to_dask(self, chunks, where="to_dask")

    @property
    def info(self) -> str:
        from zarrx.info import array_info
        return array_info(self)

    @property
    def config(self) -> ArrayConfig:
        """zarr-python's runtime configuration of this handle: ``order`` (as :attr:`order`)
        and ``write_empty_chunks`` (the handle's, else the ``write_empty_chunks`` setting)."""
        write_empty = self._write_empty
        if write_empty is None:
            write_empty = bool(settings.get("write_empty_chunks"))
        return ArrayConfig(order=self.order, write_empty_chunks=write_empty)

    def with_config(self, config: Any) -> Array:
        """Another handle on this array, with ``config`` (an :class:`ArrayConfig`,
        zarr-python's, or a mapping of ``order`` and/or ``write_empty_chunks``; what it does
        not give keeps this handle's value). A Zarr v2 array reads in the order it stores."""
        new = merged_config(self.config, config, f"array {self.name!r}: with_config")
        order = new.order if self._meta.zarr_format == 3 else None
        return Array(self._store, self._path, self._meta, read_only=self._read_only,
                     write_empty_chunks=new.write_empty_chunks, order=order)

    def info_complete(self) -> str:
        """``info`` (which already counts the stored chunks and bytes), as a method, as
        zarr-python names it."""
        return self.info


def _string_dtype(meta: ArrayMeta) -> np.dtype | None:
    """``StringDType`` for variable-length strings with numpy 2, else None (object arrays)."""
    if not meta.data_type.variable:
        return None
    from zarrx.metadata.dtype_input import numpy_string_dtype
    from zarrx.metadata.dtypes import category
    if category(meta.data_type) != "string":
        return None
    dt = numpy_string_dtype()
    return None if dt.kind == "O" else dt


#: the handle's state derived from the metadata (its cached properties), forgotten by ``_setup``
_DERIVED = tuple(name for name, v in vars(Array).items()
                 if isinstance(v, functools.cached_property))


def _grid_of(meta: ArrayMeta) -> Any:
    """The indexing grid: read units (sharded arrays are indexed by their inner chunks)."""
    grid = meta.chunk_grid
    if isinstance(grid, RectilinearGrid):
        return indexing.ChunkGridIndex(meta.shape, grid.chunk_sizes)
    return indexing.ChunkGridIndex(meta.shape, meta.layout.read_shape)


def _rebuild(store: Store, path: str, meta: ArrayMeta, read_only: bool,
             write_empty: bool | None, order: str | None) -> Array:
    return Array(store, path, meta, read_only=read_only, write_empty_chunks=write_empty,
                 order=order)


def _reopen(store: Store, path: str, read_only: bool, write_empty: bool | None,
            order: str | None = None, zarr_format: int | None = None) -> Array:
    """What arrays pickled by zarrx 0.1 unpickle through: the metadata is read again."""
    # the format the handle was opened with: a node holding both zarr.json and .zarray
    # reopens as the array it was
    meta = nodes.load_node(store, path, zarr_format)
    if not isinstance(meta, ArrayMeta):
        raise ArrayNotFoundError(f"no array at {path!r} in {store!r}")
    return Array(store, path, meta, read_only=read_only, write_empty_chunks=write_empty,
                 order=order)
