"""An Array's shape changes: ``resize``, ``append`` and growing, each a conditional
read-modify-write of the array's document, and the clearing of what a shrink leaves outside the
new shape."""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from zarrx import chunk_io, layout
from zarrx.errors import ArgumentError, ArgumentTypeError
from zarrx.metadata import nodes
from zarrx.metadata.model import ArrayMeta, RectilinearGrid

__all__ = ["Reshaping", "check_zero_chunks"]


def _chunk_end(n: int, step: int) -> int:
    """The end of the last chunk of an axis of length ``n`` and chunks of ``step``, at most
    2**63-1: no shape reaches further, so nothing is stored beyond it."""
    return min(-(-n // step) * step, 2**63 - 1) if step else n


def check_zero_chunks(meta: ArrayMeta, new: tuple[int, ...], name: str) -> None:
    """An ArgumentError when ``new`` gives a length to an axis whose chunk length is 0 (as
    zarr-python writes for an axis of length 0): no chunk could hold its elements. zarr-python
    writes such a shape and cannot read the array afterwards."""
    grid = meta.chunk_grid
    for i, (c, n) in enumerate(zip(getattr(grid, "chunk_shape", ()), new)):
        if c == 0 and n > 0:
            unit = "shard" if meta.layout.sharded else "chunk"
            raise ArgumentError(f"{name}: cannot grow axis {i} to length {n}: its {unit} "
                                f"length is 0, which holds an axis of length 0 only (create "
                                f"the array with a positive chunk length there to grow it)")


class Reshaping:
    """Changing the shape of an :class:`zarrx.Array` (mixed into it)."""

    __slots__ = ()

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
        self._check_regular_grid("change the shape of")
        with self._reshaping:
            return self._change_shape_now(shape_of)

    def _check_regular_grid(self, what: str) -> None:
        """An ArgumentError, before anything is changed, for an array whose chunk grid is
        rectilinear: its edges are fixed by its document, and the shape changes (clearing
        outside a smaller shape, writing appended rows through the object at the end) work
        on a regular grid."""
        if isinstance(self._meta.chunk_grid, RectilinearGrid):
            raise ArgumentError(f"{self.name}: cannot {what} an array with a rectilinear chunk "
                                f"grid (its chunk edges are fixed); copy it into an array "
                                f"with a regular grid to resize or append to it")

    def _change_shape_now(self, shape_of: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
        shapes: list[tuple[int, ...]] = []

        def change(current: ArrayMeta) -> ArrayMeta:
            new = tuple(shape_of(current.shape))
            check_zero_chunks(current, new, self.name)
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
        view = self._reaching_object_ends(meta)
        fill = chunk_io.fill_scalar(meta)

        def clear(box: tuple) -> None:      # slices, or index arrays of the cells to clear
            if any(isinstance(b, np.ndarray) for b in box):
                view.oindex[box] = fill
            else:
                view[box] = fill

        layout.empty_outside(view._io.source, meta, clear)

    def _reaching_object_ends(self, meta: ArrayMeta) -> Any:
        """This array with ``meta``, its shape reaching the end of the stored objects holding
        its last elements on every axis: the parts of those objects outside ``meta.shape`` are
        read and written through it (a chunk it leaves all fill is deleted)."""
        step = meta.chunk_grid.chunk_shape            # type: ignore[attr-defined]
        whole = tuple(_chunk_end(n, s) for n, s in zip(meta.shape, step))
        return type(self)(self._store, self._path, dataclasses.replace(meta, shape=whole),
                          read_only=self._read_only, write_empty_chunks=False)

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
        elif not shape:             # resize(): Python's missing argument, as in zarr-python
            raise ArgumentTypeError(f"{self.name}: resize() missing the new shape: pass it as "
                                    f"resize({self.shape!r}) or resize(new_shape=...)")
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
        self._check_regular_grid("resize")
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
        if self._bytes_only:
            chunk_io.check_bytes_items(data, self.name)
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
        self._check_regular_grid("append to")

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

        # writes through this handle wait until the claimed rows are written
        with self._meta_lock, self._reshaping:
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

    def _growing_view(self, axis: int) -> Any:
        """This array with its extent along ``axis`` reaching the end of the stored object
        holding its last element there: rows claimed by growing are written through it, so
        the object at the end is updated (read, merged, written conditionally), never
        replaced as if the claimed rows were all of it, which would wipe rows another writer
        claimed after them."""
        meta = self._meta
        step = meta.chunk_grid.chunk_shape[axis]      # type: ignore[attr-defined]
        end = _chunk_end(meta.shape[axis], step)
        shape = tuple(end if i == axis else n for i, n in enumerate(meta.shape))
        return type(self)(self._store, self._path, dataclasses.replace(meta, shape=shape),
                     read_only=self._read_only, write_empty_chunks=self._write_empty,
                     order=self._memory_order)
