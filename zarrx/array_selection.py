"""An Array's selection front-ends: ``z[...]``, the ``get_*_selection``/``set_*_selection``
methods, ``oindex``/``vindex``/``blocks`` and the checks of ``out=`` and ``prototype=``.

Each turns a user call into a plan of :mod:`zarrx.indexing` run by :mod:`zarrx.box_read` /
:mod:`zarrx.chunk_read` (reads) or :mod:`zarrx.box_write` / :mod:`zarrx.chunk_write` (writes).
"""
from __future__ import annotations

import math
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

import numpy as np

from zarrx import _outputs, _pool, box_read, box_write, chunk_io, chunk_read, chunk_write, indexing
from zarrx import batch_merge, batch_points, batch_read, batch_write, shard_read
from zarrx import text_items
from zarrx.errors import (ArgumentError, ArgumentTypeError, IndexingTypeError, IndexingValueError,
                          ZarrError)
from zarrx.fields import check_fields, pop_fields, take_fields
from zarrx.selection import check_basic, numpy_layout, plan_layout

if TYPE_CHECKING:
    from zarrx.array import Array

__all__ = ["Selecting", "bools_as_bytes"]


class Selecting:
    """Reading and writing selections of an :class:`zarrx.Array` (mixed into it)."""

    __slots__ = ()

    # -- reading ------------------------------------------------------------------------------
    def _read(self, selection: Any, kind: str, out: np.ndarray | None,
              fields: Any = None) -> Any:
        """The selection read (into ``out``), or ``fields`` of it taken (with ``out`` None)."""
        plan = indexing.plan_selection(selection, self.shape, self._grid, kind=kind,
                                       shard_shape=self._order)
        if plan.view is not None and out is not None:    # read as planned, then laid out
            _check_out(out, plan.shape, self.dtype, self.name)[...] = \
                self._read(selection, kind, None, fields)
            return out
        # refused before the output is made: numpy fills an array of objects as it allocates
        # it (16 GiB, and minutes, for 2**31 items the read would refuse)
        chunk_io.check_count(self._io, plan.nchunks)
        result = self._out(plan.out_shape, out)
        # the readers reshape views of the output: an out= of a subclass (np.matrix, which
        # takes 2 axes only) is read into as the plain ndarray of its memory
        into = result if type(result) is np.ndarray else result.view(np.ndarray)
        if not shard_read.read_shards(self._io, plan, into) and \
                not box_read.read_box(self._io, plan, into) and \
                not batch_read.read_batches(self._io, plan, into):
            chunk_read.read_into(self._io, plan.chunks, into, flat=plan.flat)
        if fields is not None:
            result = take_fields(result, fields)
        if self._text:              # the text handed out only: another field may hold any bytes
            text_items.check_text(self._io, plan, result)
        if result.dtype == np.bool_:
            bools_as_bytes(result, result)
        if self._bytes_as_text:
            text_items.text_as_bytes(result)
        if self._strings is not None:
            result = text_items.as_strings(self._io, plan, result, self._strings,
                                           self._utf8_only)
        elif self._object_strings:
            text_items.bytes_as_text(self._io, plan, result)
        if plan.view is not None:
            result = numpy_layout(result, plan.view)
        if out is None and result.ndim == 0:
            return result[()]
        return result

    def _out(self, shape: tuple[int, ...], out: np.ndarray | None) -> np.ndarray:
        if out is None:
            dt = self._io.dtype         # (a struct's: the handle's own, see Array._io)
            try:
                return _outputs.empty(shape, dt)
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
        selection = _plain(selection)
        if fields is None and self._strings is None:
            if isinstance(out, np.ndarray) and out.dtype != self.dtype and \
                    np.can_cast(self.dtype, out.dtype, "safe"):
                # zarr-python casts into an out= of another dtype; zarrx when no value changes
                value = np.asarray(self._read(selection, kind, None))
                _check_out(out, value.shape, out.dtype, self.name)[...] = value
                return out
            return self._laid_out(self._read(selection, kind, out), out)
        if fields is not None:
            fields = check_fields(fields, self._meta.data_type.numpy, self.name)
        value = self._read(selection, kind, None, fields)
        if out is None:
            return self._laid_out(value, None)
        # a 0-d read hands out a str: as StringDType, not numpy's fixed-length text
        value = np.asarray(value, dtype=self.dtype if fields is None else None)
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
        selection = _plain(selection)        # an array-like is refused as a numpy array is
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
        selection = _plain(selection)
        fields, selection = pop_fields(selection) if self._structured else (None, selection)
        return self._get(selection, indexing.kind_of(selection, self.shape), out, fields)

    def __getitem__(self, selection: Any) -> Any:
        if type(selection) is tuple and self._point_ok and len(selection) == len(self._meta.shape):
            value = chunk_read.read_point(self._io, selection)
            if value is not chunk_read.NOT_A_POINT:
                return value
        selection = _plain(selection)
        fields, selection = pop_fields(selection) if self._structured else (None, selection)
        return self._get(selection, indexing.kind_of(selection, self.shape), None, fields)

    # -- writing ------------------------------------------------------------------------------
    def _write(self, selection: Any, value: Any, kind: str, fields: Any = None) -> None:
        self._check_writable("write")
        selection = _plain(selection)
        # planned and written with one shape: a write planned with the shape before an append
        # through this handle would take the object at the old edge for all of it, and replace
        # the appended values beyond that edge with the fill value
        with self._writing:
            self._write_planned(selection, value, kind, fields)

    def _write_planned(self, selection: Any, value: Any, kind: str, fields: Any) -> None:
        plan = indexing.plan_selection(selection, self.shape, self._grid, kind=kind,
                                       shard_shape=self._order)
        # a write of a few small chunks stays on this thread
        with _pool.inline() if chunk_write.small_write(self._io, plan.nchunks) else nullcontext():
            self._write_plan(plan, value, fields)

    def _write_plan(self, plan: Any, value: Any, fields: Any) -> None:
        dtype = self._meta.data_type.numpy
        if fields is not None:       # the fields set in each stored chunk as it is updated
            fields = check_fields(fields, dtype, self.name)
            records = np.zeros(plan.shape, dtype=dtype)
            try:
                records[fields] = value
            except (TypeError, ValueError, OverflowError, RuntimeError) as exc:
                raise chunk_io.conversion_error(exc, f"{self.name}: cannot set fields "
                                                     f"{fields!r} to {type(value).__name__} "
                                                     f"value: {exc}") from exc
            if plan.view is not None:
                records = plan_layout(records, plan.view)
            chunk_write.write_from(self._io, plan.chunks, records, flat=plan.flat, fields=fields)
            return
        arr = chunk_io.check_value(self._as_strings(value), plan.shape, dtype, self.name)
        if self._bytes_only:
            chunk_io.check_bytes_items(arr, self.name)
        if arr.dtype == np.bool_:
            arr = bools_as_bytes(arr)
        if plan.view is not None:
            arr = plan_layout(arr, plan.view)
        if not batch_merge.write_merged(self._io, plan, arr) and \
                not batch_points.write_points(self._io, plan, arr) and \
                not batch_write.write_batches(self._io, plan, arr) and \
                not box_write.write_box(self._io, plan, arr):
            chunk_write.write_from(self._io, plan.chunks, arr, flat=plan.flat)

    def _as_strings(self, value: Any) -> Any:
        """``value`` of a variable-length string array converted by numpy to strings, as
        zarr-python converts it (5 -> "5", b"x" -> "x"; the chunks hold them as objects);
        other values as they are."""
        if self._strings is not None and not (isinstance(value, np.ndarray)
                                              and value.dtype == self._strings):
            return chunk_io.check_value(value, None, self._strings, self.name)
        return value

    def _as_stored(self, value: Any) -> np.ndarray:
        """``value`` converted as a write of all cells converts it (an ``ArgumentError`` when
        it cannot be), so that a caller can refuse it before it stores anything."""
        value = self._as_strings(value)
        if self._strings is not None:       # strings: stored as the objects they convert to
            return value
        value = chunk_io.check_value(value, None, self._meta.data_type.numpy, self.name)
        return chunk_io.check_bytes_items(value, self.name) if self._bytes_only else value

    def set_basic_selection(self, selection: Any, value: Any, *, fields: Any = None,
                            prototype: Any = None) -> None:
        _numpy_out(None, prototype, self.name)
        selection = _plain(selection)
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
        selection = _plain(selection)
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


_PLAIN = frozenset((int, slice, type(Ellipsis), type(None), str, bytes, float, bool, list,
                    np.ndarray))


def _foreign(item: Any) -> bool:
    """An array-like that is no numpy array (a zarrx or zarr-python ``Array``, a dask array):
    an index array given through ``__array__``, as zarr-python takes it."""
    return type(item) not in _PLAIN and not isinstance(item, (np.ndarray, np.generic)) \
        and hasattr(item, "__array__") and hasattr(item, "shape") and hasattr(item, "dtype")


def _plain(selection: Any) -> Any:
    """``selection`` with its array-likes read into numpy arrays. A selection of ints, slices,
    lists and numpy arrays (the common case) is returned as it is without a call."""
    if selection.__class__ is tuple:
        for s in selection:
            if s.__class__ not in _PLAIN:
                break
        else:
            return selection
        return tuple(_read_index(s, f"index item {i}") if _foreign(s) else s
                     for i, s in enumerate(selection))
    if selection.__class__ in _PLAIN:
        return selection
    return _read_index(selection, "selection") if _foreign(selection) else selection


def _read_index(item: Any, where: str) -> np.ndarray:
    """``np.asarray(item)``; numpy's ``ValueError`` / ``TypeError`` (an ``__array__`` that
    returns no array, or refuses) as :class:`IndexingValueError` / :class:`IndexingTypeError`
    naming the item. Any other error of ``__array__`` (the item's own, or a ``ZarrError`` of a
    zarrx ``Array`` being read: a corrupt chunk's ``CodecError``) propagates."""
    try:
        return np.asarray(item)
    except ZarrError:
        raise
    except (ValueError, TypeError) as exc:
        cls = IndexingValueError if isinstance(exc, ValueError) else IndexingTypeError
        raise cls(f"{where}: the array-like {type(item).__name__} could not be read into a "
                  f"numpy index array: {exc}") from exc


def bools_as_bytes(values: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``values`` (bool) with every item the byte 0 or 1, as Zarr stores bool: numpy holds
    any nonzero byte as true (a chunk another writer stored with 2 or 255, a view of other
    bytes as bool) and compares it as true, but passes it through to raw bytes, hashes and
    writes (tensorstore refuses such a chunk). Into ``out`` when given, else ``values`` itself
    when it holds no other byte, else a new array. One pass over the items."""
    items = values.view(np.uint8)
    # a broadcast value (a scalar written to a region) is looked at once, not per cell
    core = items[tuple(slice(0, 1) if s == 0 else slice(None) for s in items.strides)]
    if not core.size or int(core.max()) <= 1:
        return values
    if out is None:
        return np.broadcast_to(np.minimum(core, np.uint8(1)).view(np.bool_), values.shape)
    # (np.uint8: numpy 1's value-based casting makes a 0-d uint8 and a Python 1 an int64)
    np.minimum(items, np.uint8(1), out=out.view(np.uint8))
    return out


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
        raise ArgumentError(f"{name}: out= expected shape {tuple(shape)} and dtype {dtype} (or "
                            f"one it casts to safely), found shape {out.shape} and dtype "
                            f"{out.dtype}")
    if not out.flags.writeable:
        raise ArgumentError(f"{name}: out= array is read-only")
    return out
