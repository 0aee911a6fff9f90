"""The Array handle: (metadata, store, chunk source, codec plans) plus numpy-style indexing.

The work is done by free functions in :mod:`zarrx.chunk_read`, :mod:`zarrx.chunk_write` and
:mod:`zarrx.indexing`; this module only turns user calls into those and keeps the metadata
document in step.
"""
from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from zarrx import box_read, box_write, chunk_io, chunk_read, chunk_write, indexing, layout
from zarrx.errors import ArgumentError, ArgumentTypeError, ArrayNotFoundError
from zarrx.fields import check_fields, pop_fields, take_fields
from zarrx.metadata import nodes
from zarrx.node import Node
from zarrx.metadata.model import ArrayMeta, RectilinearGrid, RegularGrid
from zarrx.selection import check_basic
from zarrx.store.base import Store

__all__ = ["Array"]


def _chunk_end(n: int, step: int) -> int:
    """The end of the last chunk of an axis of length ``n`` and chunks of ``step``, at most
    2**63-1: no shape reaches further, so nothing is stored beyond it."""
    return min(-(-n // step) * step, 2**63 - 1) if step else n


class Array(Node):
    """An N-dimensional chunked array in a store. Index it like numpy."""

    _kind = "array"

    def __init__(self, store: Store, path: str, meta: ArrayMeta, *, read_only: bool = False,
                 write_empty_chunks: bool | None = None, order: str | None = None) -> None:
        super().__init__(store, path, meta, read_only=read_only)
        self._write_empty = None if write_empty_chunks is None else bool(write_empty_chunks)
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

    @functools.cached_property
    def _io(self) -> chunk_io.ArrayIO:
        return chunk_io.ArrayIO(self._meta,
                                layout.chunk_source(self._store, self._path, self._meta),
                                self._path, write_empty=self._write_empty)

    @functools.cached_property
    def _grid(self) -> indexing.ChunkGridIndex:
        return _grid_of(self._meta)

    @functools.cached_property
    def _order(self) -> Any:
        return layout.visit_order(self._meta)

    @functools.cached_property
    def _structured(self) -> bool:
        return self._meta.data_type.numpy.names is not None

    @functools.cached_property
    def _point_ok(self) -> bool:
        """Whether z[i, j, ...] of one element takes the short path (regular grid, plain
        dtype)."""
        return self._io.regular and not self._io.object_chunks and not self._structured

    @functools.cached_property
    def _strings(self) -> Any:
        """numpy 2's StringDType for variable-length strings (decoded into object arrays and
        handed out as that, as zarr-python does), else None."""
        return _string_dtype(self._meta)

    # -- pickling: store + path ---------------------------------------------------------------
    def __reduce__(self):
        return (_reopen, (self._store, self._path, self._read_only, self._write_empty,
                          self._memory_order, self._meta.zarr_format))

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
        return self._strings if self._strings is not None else self._meta.data_type.numpy

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
        return self._meta.fill_value

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
        bounds = self._grid.axes[0].boundaries().tolist()
        for start, stop in zip(bounds, bounds[1:]):
            band = self[start:stop]
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

    # -- reading ------------------------------------------------------------------------------
    def _read(self, selection: Any, kind: str, out: np.ndarray | None) -> Any:
        plan = indexing.plan_selection(selection, self.shape, self._grid, kind=kind,
                                       shard_shape=self._order)
        result = self._out(plan.out_shape, out)
        if not box_read.read_box(self._io, plan, result):
            chunk_read.read_into(self._io, plan.chunks, result, flat=plan.flat)
        if out is None and result.ndim == 0:
            return result[()]
        return result

    def _out(self, shape: tuple[int, ...], out: np.ndarray | None) -> np.ndarray:
        if out is None:
            dt = self._meta.data_type.numpy
            try:
                return np.empty(shape, dtype=dt)
            except (MemoryError, ValueError):
                n = math.prod(shape) * dt.itemsize
                raise ArgumentError(f"{self.name}: the selection of shape {shape} ({n} bytes of "
                                    f"{dt}) does not fit in memory; read it in parts, or into "
                                    f"out=") from None
        return _check_out(out, shape, self.dtype, self.name)

    def _get(self, selection: Any, kind: str, out: np.ndarray | None,
             fields: Any = None) -> Any:
        """``_read``, then the fields taken and variable-length strings handed out as
        ``StringDType``."""
        if fields is None and self._strings is None:
            return self._laid_out(self._read(selection, kind, out), out)
        if fields is not None:
            fields = check_fields(fields, self._meta.data_type.numpy, self.name)
        value = self._read(selection, kind, None)
        if fields is not None:
            value = take_fields(value, fields)
        if self._strings is not None and isinstance(value, np.ndarray):
            value = value.astype(self._strings)
        if out is None:
            return self._laid_out(value, None)
        value = np.asarray(value)
        _check_out(out, value.shape, value.dtype, self.name)[...] = value
        return out

    def _laid_out(self, value: Any, out: np.ndarray | None) -> Any:
        """``value`` in Fortran layout when :attr:`order` is ``"F"`` (zarr-python hands reads
        out in the array's order); ``out`` keeps the layout its caller gave it."""
        if out is None and isinstance(value, np.ndarray) and value.ndim > 1 \
                and not value.flags.f_contiguous and self.order == "F":
            return np.asfortranarray(value)
        return value

    def get_basic_selection(self, selection: Any = Ellipsis, *, out: Any = None,
                            fields: Any = None, prototype: Any = None) -> Any:
        out = _numpy_out(out, prototype, self.name)
        check_basic(selection, "get_basic_selection")
        return self._get(selection, "basic", out, fields)

    def get_orthogonal_selection(self, selection: Any, *, out: Any = None,
                                 fields: Any = None, prototype: Any = None) -> Any:
        out = _numpy_out(out, prototype, self.name)
        return self._get(selection, "orthogonal", out, fields)

    def get_coordinate_selection(self, selection: Any, *, out: Any = None,
                                 fields: Any = None, prototype: Any = None) -> Any:
        out = _numpy_out(out, prototype, self.name)
        return self._get(selection, "coordinate", out, fields)

    def get_mask_selection(self, mask: Any, *, out: Any = None,
                           fields: Any = None, prototype: Any = None) -> Any:
        out = _numpy_out(out, prototype, self.name)
        return self._get(mask, "mask", out, fields)

    def get_block_selection(self, selection: Any, *, out: Any = None,
                            fields: Any = None, prototype: Any = None) -> Any:
        out = _numpy_out(out, prototype, self.name)
        return self._get(selection, "block", out, fields)

    def read(self, selection: Any = Ellipsis, *, out: np.ndarray | None = None) -> Any:
        """``self[selection]``, decoded straight into ``out`` when given."""
        fields, selection = pop_fields(selection) if self._structured else (None, selection)
        return self._get(selection, indexing.kind_of(selection, self.shape), out, fields)

    def __getitem__(self, selection: Any) -> Any:
        if type(selection) is tuple and self._point_ok and len(selection) == len(self._meta.shape):
            value = chunk_read.read_point(self._io, selection)
            if value is not chunk_read.NOT_A_POINT:
                return value
        fields, selection = pop_fields(selection) if self._structured else (None, selection)
        return self._get(selection, indexing.kind_of(selection, self.shape), None, fields)

    # -- writing ------------------------------------------------------------------------------
    def _write(self, selection: Any, value: Any, kind: str, fields: Any = None) -> None:
        self._check_writable("write")
        plan = indexing.plan_selection(selection, self.shape, self._grid, kind=kind,
                                       shard_shape=self._order)
        dtype = self._meta.data_type.numpy
        if fields is not None:       # the fields set in each stored chunk as it is updated
            fields = check_fields(fields, dtype, self.name)
            records = np.zeros(plan.out_shape, dtype=dtype)
            try:
                records[fields] = value
            except (TypeError, ValueError) as exc:
                raise ArgumentError(f"{self.name}: cannot set fields {fields!r} to "
                                    f"{type(value).__name__} value: {exc}") from exc
            chunk_write.write_from(self._io, plan.chunks, records, flat=plan.flat, fields=fields)
            return
        if self._strings is not None and not (isinstance(value, np.ndarray)
                                                and value.dtype == self._strings):
            # numpy's conversion to strings, as zarr-python's (5 -> "5", b"x" -> "x"); the
            # chunks hold them as objects
            value = chunk_io.check_value(value, None, self._strings, self.name)
        arr = chunk_io.check_value(value, plan.out_shape, dtype, self.name)
        if not box_write.write_box(self._io, plan, arr):
            chunk_write.write_from(self._io, plan.chunks, arr, flat=plan.flat)

    def set_basic_selection(self, selection: Any, value: Any, *, fields: Any = None,
                            prototype: Any = None) -> None:
        _numpy_out(None, prototype, self.name)
        check_basic(selection, "set_basic_selection")
        self._write(selection, value, "basic", fields)

    def set_orthogonal_selection(self, selection: Any, value: Any, *, fields: Any = None,
                                 prototype: Any = None) -> None:
        _numpy_out(None, prototype, self.name)
        self._write(selection, value, "orthogonal", fields)

    def set_coordinate_selection(self, selection: Any, value: Any, *, fields: Any = None,
                                 prototype: Any = None) -> None:
        _numpy_out(None, prototype, self.name)
        self._write(selection, value, "coordinate", fields)

    def set_mask_selection(self, mask: Any, value: Any, *, fields: Any = None,
                           prototype: Any = None) -> None:
        _numpy_out(None, prototype, self.name)
        self._write(mask, value, "mask", fields)

    def set_block_selection(self, selection: Any, value: Any, *, fields: Any = None,
                            prototype: Any = None) -> None:
        _numpy_out(None, prototype, self.name)
        self._write(selection, value, "block", fields)

    def __setitem__(self, selection: Any, value: Any) -> None:
        fields, selection = pop_fields(selection) if self._structured else (None, selection)
        self._write(selection, value, indexing.kind_of(selection, self.shape), fields)

    @property
    def oindex(self) -> _Indexer:
        return _Indexer(self, "orthogonal")

    @property
    def vindex(self) -> _Indexer:
        return _Indexer(self, "coordinate")

    @property
    def blocks(self) -> _Indexer:
        return _Indexer(self, "block")

    # -- shape changes and metadata -----------------------------------------------------------
    def _took(self, meta: ArrayMeta) -> None:
        self._meta = meta
        self._setup()

    def _change_shape(self, shape_of: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Set the shape to ``shape_of(the shape as stored now)``: a read-modify-write of the
        array's document, conditional on the version read and retried on conflict (see
        :func:`zarrx.metadata.nodes.update_array`), so a resize or append made meanwhile by
        another handle, thread or process is built on, never undone. Call with the handle's
        lock held. Returns (the shape it replaced, the new shape).

        Shrinking leaves no data stored outside the new shape, *before* the smaller shape is
        written and again after it (what a concurrent writer put there in between): the parts
        outside it of the objects straddling its edge are set to the fill value, then the
        objects wholly outside it are deleted (:meth:`_empty_outside`). A writer killed at any
        point therefore never leaves data outside the stored shape that a later grow would
        bring back: before the metadata write the array keeps its old shape, some of what it
        is shrinking away already fill; after it, nothing outside the new shape is stored. The
        second pass clears outside the shape stored by then where that is larger (another
        handle grew the array again: the grown part is that handle's), and not at all when the
        node is no longer this array (deleted, or replaced by another)."""
        self._check_writable("change metadata")
        shapes: list[tuple[int, ...]] = []

        def change(current: ArrayMeta) -> ArrayMeta:
            new = tuple(shape_of(current.shape))
            meta = dataclasses.replace(current, shape=new)
            if any(n < o for n, o in zip(new, current.shape)):
                self._empty_outside(meta)
            shapes[:] = [current.shape, new]
            return meta

        self._took(nodes.update_array(self._store, self._path, self._meta, change))
        old, new = shapes
        if any(n < o for n, o in zip(new, old)):
            # what writers with the old shape stored outside meanwhile, but not what a grow by
            # another handle has claimed since: outside the shape stored now where larger
            mine = self._meta
            now = nodes.load_node(self._store, self._path, mine.zarr_format)
            if isinstance(now, ArrayMeta) and now.ndim == mine.ndim and dataclasses.replace(
                    now, shape=mine.shape, attributes=mine.attributes,
                    dimension_names=mine.dimension_names, extra=mine.extra) == mine:
                self._empty_outside(dataclasses.replace(mine, shape=tuple(map(max, now.shape,
                                                                              new))))
        return old, new

    def _empty_outside(self, meta: ArrayMeta) -> None:
        """Clear what is stored outside ``meta.shape`` (see :func:`zarrx.layout.empty_outside`).
        The parts outside it of the objects straddling its edge are written as the fill value
        by the ordinary write path, through a view whose shape reaches the end of those
        objects: each object is read, merged and written conditionally, so what concurrent
        writers store inside the shape meanwhile is kept; inner chunks of a shard wholly
        outside are removed from it, and a chunk left all fill is deleted (the clearing never
        stores a chunk of only fill values)."""
        step = meta.chunk_grid.chunk_shape            # type: ignore[attr-defined]
        whole = tuple(_chunk_end(n, s) for n, s in zip(meta.shape, step))
        view = Array(self._store, self._path, dataclasses.replace(meta, shape=whole),
                     read_only=self._read_only, write_empty_chunks=False)
        fill = chunk_io.fill_scalar(meta)

        def clear(box: tuple[slice, ...]) -> None:
            view[box] = fill

        layout.empty_outside(view._io.source, meta, clear)

    def update_attributes(self, new_attributes: dict[str, Any]) -> Array:
        """Merge ``new_attributes`` into the attributes (one metadata write); returns the array."""
        self.attrs.update(new_attributes)
        return self

    def resize(self, *shape: Any, new_shape: Any = None) -> None:
        """Change the shape: ``resize((8, 4))`` or ``resize(new_shape=(8, 4))`` (zarr-python's
        forms) or ``resize(8, 4)``. Data inside the new shape stays; none is kept outside it
        (chunks wholly outside are deleted, the rest of those straddling its edge set to the
        fill value), so growing again reads the fill value there, as numpy would."""
        if new_shape is not None:
            if shape:
                raise ArgumentTypeError(f"{self.name}: resize takes the shape once, found "
                                        f"{shape!r} and new_shape={new_shape!r}")
            shape = (new_shape,)
        one = len(shape) == 1 and not isinstance(shape[0], (int, np.integer))
        try:
            new = tuple(shape[0]) if one else tuple(shape)
        except TypeError:
            new = shape
        ints = isinstance(new, tuple) and all(isinstance(n, (int, np.integer)) and
                                              not isinstance(n, bool) for n in new)
        if not ints or len(new) != self.ndim or any(not 0 <= n < 2**63 for n in new):
            # not ints: a TypeError, as in zarr-python
            raise (ArgumentError if ints else ArgumentTypeError)(
                f"{self.name}: resize expected {self.ndim} non-negative ints below 2**63, "
                f"found {new!r}")
        if isinstance(self._meta.chunk_grid, RectilinearGrid):
            raise ArgumentError(f"{self.name}: resize of a rectilinear chunk grid is not "
                                f"supported")
        new = tuple(int(n) for n in new)
        if math.prod(new) >= 2**63:
            raise ArgumentError(f"{self.name}: resize expected a shape of at most 2**63-1 "
                                f"elements, found {new!r}")
        with self._meta_lock:
            self._change_shape(lambda current: new)

    def append(self, data: Any, axis: int = 0) -> tuple[int, ...]:
        """Grow along ``axis`` by ``data``'s extent there and write ``data`` into the new part.

        The extent is claimed atomically from the shape as stored (a conditional read-modify-
        write of the metadata, retried on conflict), so appends from several handles, threads
        or processes each get their own region; the data is written into it afterwards."""
        # converted as a write converts it, before the shape grows: data that cannot be
        # written is refused with the array unchanged
        data = chunk_io.check_value(data, None, self.dtype, self.name)
        if data.ndim != self.ndim:
            raise ArgumentError(f"{self.name}: append expected data with {self.ndim} dimensions, "
                                f"found {data.ndim}")
        if not isinstance(axis, (int, np.integer)) or isinstance(axis, (bool, np.bool_)):
            raise ArgumentTypeError(f"{self.name}: append axis: expected an integer, found "
                                    f"{axis!r}")
        axis = int(axis)
        if not -self.ndim <= axis < self.ndim:
            raise ArgumentError(f"{self.name}: append axis {axis} out of range for "
                                f"{self.ndim} dims")
        axis %= self.ndim

        def grown(shape: tuple[int, ...]) -> tuple[int, ...]:
            for i, (a, b) in enumerate(zip(data.shape, shape)):
                if i != axis and a != b:
                    raise ArgumentError(f"{self.name}: append: data shape {data.shape} does "
                                        f"not match array shape {shape} on axis {i}")
            new = tuple(s + data.shape[axis] if i == axis else s for i, s in enumerate(shape))
            if new[axis] >= 2**63 or math.prod(new) >= 2**63:
                raise ArgumentError(f"{self.name}: append: the array would grow to shape "
                                    f"{new}, expected at most 2**63-1 along each axis and in "
                                    f"all")
            return new

        with self._meta_lock:
            old, new = self._change_shape(grown)
            sel = tuple(slice(old[axis], new[axis]) if i == axis else slice(None)
                        for i in range(self.ndim))
            self._growing_view(axis)[sel] = data
        return new

    def _grow(self, grown: Callable[[tuple[int, ...]], tuple[int, ...]]
              ) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """``grown(stored shape)`` written as the shape (atomically, as :meth:`append` claims
        its rows); returns (the shape it replaced, the new shape)."""
        with self._meta_lock:
            return self._change_shape(grown)

    def _growing_view(self, axis: int) -> Array:
        """This array with its extent along ``axis`` reaching the end of the stored object
        holding its last element there: rows claimed by growing are written through it, so
        the object at the end is updated (read, merged, written conditionally), never
        replaced as if the claimed rows were all of it, which would wipe rows another writer
        claimed after them."""
        meta = self._meta
        step = meta.chunk_grid.chunk_shape[axis]      # type: ignore[attr-defined]
        end = _chunk_end(meta.shape[axis], step)
        shape = tuple(end if i == axis else n for i, n in enumerate(meta.shape))
        return Array(self._store, self._path, dataclasses.replace(meta, shape=shape),
                     read_only=self._read_only, write_empty_chunks=self._write_empty,
                     order=self._memory_order)

    def nbytes_stored(self) -> int:
        """Bytes of the stored chunk (or shard) objects of the array's grid (metadata
        documents and stray objects excluded)."""
        from zarrx.info import stored_bytes
        return stored_bytes(self)

    def to_dask(self, chunks: Any = None) -> Any:
        """This array as a dask array; by default its blocks are whole shards (or chunks),
        merged up to about 128 MiB. See :func:`zarrx.dask.from_zarrx`."""
        from zarrx.dask.graph import array_to_dask
        return array_to_dask(self, chunks)

    @property
    def info(self) -> str:
        from zarrx.info import array_info
        return array_info(self)

    def info_complete(self) -> str:
        """``info`` (which already counts the stored chunks and bytes), as a method, as
        zarr-python names it."""
        return self.info


class _Indexer:
    """``z.oindex``, ``z.vindex`` and ``z.blocks``: field names among the items select fields
    of a structured array (``z.oindex[[0, 2], "x"]``), as in ``z[...]`` and zarr-python."""

    __slots__ = ("_array", "_kind")

    def __init__(self, array: Array, kind: str) -> None:
        self._array, self._kind = array, kind

    def __getitem__(self, selection: Any) -> Any:
        a = self._array
        fields, selection = pop_fields(selection) if a._structured else (None, selection)
        return a._get(selection, self._kind, None, fields)

    def __setitem__(self, selection: Any, value: Any) -> None:
        a = self._array
        fields, selection = pop_fields(selection) if a._structured else (None, selection)
        a._write(selection, value, self._kind, fields)


def _string_dtype(meta: ArrayMeta) -> np.dtype | None:
    """``StringDType`` for variable-length strings with numpy 2, else None (object arrays)."""
    if not meta.data_type.variable:
        return None
    from zarrx.metadata.dtypes import category, numpy_string_dtype
    if category(meta.data_type) != "string":
        return None
    dt = numpy_string_dtype()
    return None if dt.kind == "O" else dt


def _numpy_out(out: Any, prototype: Any, name: str) -> Any:
    """``out`` as a numpy array (a zarr-python ``NDBuffer`` given as ``out=`` is unwrapped to
    the numpy array it holds), after checking zarr-python's ``prototype=``: None or its CPU
    buffer prototype, since zarrx reads into and writes from numpy arrays only."""
    if prototype is not None and getattr(getattr(prototype, "nd_buffer", None), "__module__",
                                         None) != "zarr.core.buffer.cpu":
        raise ArgumentTypeError(f"{name}: prototype: expected None or zarr-python's CPU buffer "
                                f"prototype (zarrx uses numpy arrays), found "
                                f"{type(prototype).__name__} {prototype!r:.60}")
    if out is not None and not isinstance(out, np.ndarray) and \
            type(out).__module__ == "zarr.core.buffer.cpu" and hasattr(out, "as_ndarray_like"):
        return out.as_ndarray_like()
    return out


def _check_out(out: Any, shape: tuple[int, ...], dtype: np.dtype, name: str) -> np.ndarray:
    if not isinstance(out, np.ndarray):
        raise ArgumentTypeError(f"{name}: out= expected a numpy array, found "
                                f"{type(out).__name__}")
    if out.shape != tuple(shape) or out.dtype != dtype:
        raise ArgumentError(f"{name}: out= expected shape {tuple(shape)} and dtype {dtype}, "
                            f"found shape {out.shape} and dtype {out.dtype}")
    if not out.flags.writeable:
        raise ArgumentError(f"{name}: out= array is read-only")
    return out


#: the handle's state derived from the metadata (its cached properties), forgotten by ``_setup``
_DERIVED = tuple(name for name, v in vars(Array).items()
                 if isinstance(v, functools.cached_property))


def _grid_of(meta: ArrayMeta) -> Any:
    """The indexing grid: read units (sharded arrays are indexed by their inner chunks)."""
    grid = meta.chunk_grid
    if isinstance(grid, RectilinearGrid):
        return indexing.ChunkGridIndex(meta.shape, grid.chunk_sizes)
    return indexing.ChunkGridIndex(meta.shape, meta.layout.read_shape)


def _reopen(store: Store, path: str, read_only: bool, write_empty: bool | None,
            order: str | None = None, zarr_format: int | None = None) -> Array:
    # the format the handle was opened with: a node holding both zarr.json and .zarray
    # reopens as the array it was
    meta = nodes.load_node(store, path, zarr_format)
    if not isinstance(meta, ArrayMeta):
        raise ArrayNotFoundError(f"no array at {path!r} in {store!r}")
    return Array(store, path, meta, read_only=read_only, write_empty_chunks=write_empty,
                 order=order)
