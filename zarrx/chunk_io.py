"""What reading and writing a selection of an array share: :class:`ArrayIO` (what they need of
an array: the chunk source, the codec plans, the fill value), and the helpers both use.

Reads (:mod:`zarrx.chunk_read`) and writes (:mod:`zarrx.chunk_write`) are free functions over an
ArrayIO. They are unaware of sharding: they read and write read units by coordinates through
the array's chunk source (see :mod:`zarrx.layout`), and group a write's chunks by the stored
object that holds them.

Errors: a ZarrError raised while decoding or encoding a chunk is given its location here, in
:func:`_located` (the array's path, and the stored key and inner chunk from the chunk source),
and re-raised as the same exception; the location is worked out only then. A MemoryError there
(a chunk larger than memory) becomes a located CodecError giving the bytes the chunk needs.
"""
from __future__ import annotations

import threading
from math import prod
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from zarrx import _fork, config
from zarrx._gather import copy_selection, is_all
from zarrx.codecs.plan import CodecPipeline
from zarrx.errors import (ArgumentDecodeError, ArgumentEncodeError, ArgumentError,
                          ArgumentOverflowError, ArgumentTypeError, CodecError, ZarrError)
from zarrx.indexing import check_chunk_count
from zarrx.metadata._util import short
from zarrx.metadata.dtypes import category
from zarrx.metadata.model import ArrayMeta, RegularGrid
from zarrx.store.base import address_fields
from zarrx.size_limits import read_plan
from zarrx.store.chunks import ChunkSource

__all__ = ["ArrayIO", "codec_plan", "chunk_shape_at", "box_scratch", "read_scratch", "check_count"]

READ_WINDOW = 4          # chunks a thread fetches and decodes at a time, at least ...
WINDOW_BYTES = 1 << 20   # ... and at least this many decoded bytes: small chunks cost mostly
                         # Python time under the GIL, and a task per few of them would make the
                         # threads take turns on the GIL more often than they work
GIL_FREE_BYTES = 1 << 16 # stores read objects this large without the GIL (LocalStore does)
RANGED_RAW_BYTES = 1 << 24   # raw chunks this large are read by the bytes a selection spans
MAX_WINDOW = 1 << 14     # most chunks a read or write holds the requests and values of at a
                         # time (each costs several hundred bytes: a million 1-byte chunks
                         # in one window held about 800 MiB)
#: a read or write whose work is less than this many bytes stays on the calling thread: handing
#: it to the pool's threads costs more than doing it (a read's work: the bytes copied into its
#: output, plus those decoded from chunks that are not raw; a write's: its chunks' decoded bytes)
PARALLEL_MIN_BYTES = 1 << 18
WINDOW_STORED_BYTES = 1 << 25  # most stored bytes a read window's chunks may hold by their
                         # stored-size limit (of fixed-size chunks; gzip's allows 74 KB more for
                         # any chunk), but at least READ_WINDOW chunks


@dataclass(eq=False)
class ArrayIO:
    """What reading and writing need of one array, resolved once per array handle."""

    meta: ArrayMeta
    source: ChunkSource
    key: str                                   # the array path, for messages
    write_empty: bool | None = None            # None: zarrx.config.write_empty_chunks
    _plans: dict[tuple[int, ...], CodecPipeline] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _local: threading.local = field(default_factory=threading.local)

    def __post_init__(self) -> None:
        self.dtype = self.meta.data_type.numpy
        self.variable = self.meta.data_type.variable
        self.object_chunks = self.variable or self.dtype.hasobject
        self.any_objects = category(self.meta.data_type) == "object"
        try:        # one item: a document may state items of up to 2**31-1 bytes
            self.fill = fill_scalar(self.meta)
        except MemoryError as exc:
            raise self._no_fill_memory() from exc
        self.fill_agreed = fill_agreed(self.meta)
        self.fill_is_nan = (self.dtype.kind in "fc" and bool(np.isnan(self.fill)))
        layout = self.meta.layout
        self.regular = layout.read_shape is not None
        self.chunk_shape, self.codecs = layout.read_shape, layout.read_codecs
        self.object_ratio = layout.object_ratio
        self.units_per_object = 1 if layout.object_ratio is None else prod(layout.object_ratio)
        _fork.track(self)

    def _after_fork(self) -> None:
        _fork.reinit(self._lock)        # a plan is added whole under it

    @_fork.cached_property
    def fill_bytes(self) -> bytes | None:
        """The fill value's bytes (None for object items). One item: a document may state
        items of up to 2**31-1 bytes, so memory may not hold it (a CodecError then)."""
        if self.variable or self.dtype.hasobject:
            return None
        try:
            return np.asarray(self.fill, dtype=self.dtype).tobytes()
        except MemoryError as exc:
            raise self._no_fill_memory() from exc

    def _no_fill_memory(self) -> CodecError:
        return CodecError(f"cannot allocate {self.dtype.itemsize} bytes for the fill value of "
                          f"data type {self.dtype}").at(array=self.key)

    @property
    def gil_bound(self) -> bool:
        """Whether reading a chunk is all work under the GIL: raw chunks (no decoding) smaller
        than ``GIL_FREE_BYTES``. Threads then only take turns, so a read stays on one."""
        if self.chunk_shape is None:
            return False
        nbytes = prod(self.chunk_shape) * self.dtype.itemsize
        return nbytes < GIL_FREE_BYTES and self.plan(self.chunk_shape).raw

    @_fork.cached_property
    def object_nbytes(self) -> int | None:
        """The decoded bytes of one stored object (chunk, or shard) of a regular grid, else
        None."""
        if self.chunk_shape is None:
            return None
        return prod(self.chunk_shape) * self.dtype.itemsize * self.units_per_object

    @_fork.cached_property
    def keeps_values(self) -> bool:
        """Whether the store keeps a written :class:`Value` as it is (a memory store): a raw
        chunk is then gathered straight into the pooled memory it is kept in."""
        return self.units_per_object == 1 and self.source.objects.store.keeps_values

    @_fork.cached_property
    def box_ok(self) -> bool:
        """Whether a box of this array may be read by a chunk source's box reader: a regular
        grid of raw chunks with no checksum (the stored bytes are the chunk's C-order items)."""
        if not (self.regular and self.chunk_shape and self.fill_bytes is not None
                and self.units_per_object == 1 and not self.object_chunks):
            return False
        plan = self.plan(self.chunk_shape)       # type: ignore[arg-type]
        return bool(plan.raw and not plan.b2b)

    @property
    def read_window(self) -> int:
        """Chunks a thread reads per task: ``READ_WINDOW``, or enough for ``WINDOW_BYTES``,
        but at most ``MAX_WINDOW``, nor more than ``WINDOW_STORED_BYTES`` hold at the stored-size
        limit of chunks of fixed-size items."""
        if self.chunk_shape is None:
            return READ_WINDOW
        nbytes = max(1, prod(self.chunk_shape) * self.dtype.itemsize)
        n = min(MAX_WINDOW, -(-WINDOW_BYTES // nbytes))
        if self.units_per_object == 1 and not self.object_chunks:
            n = min(n, WINDOW_STORED_BYTES // max(1, self.plan(self.chunk_shape).stored_limit))
        return max(READ_WINDOW, n)

    @property
    def write_empty_chunks(self) -> bool:
        """Whether chunks equal to the fill value everywhere are stored (the array's setting,
        else ``zarrx.config.write_empty_chunks`` at the time of the write); always, when
        readers differ on what a chunk not stored holds (see :func:`fill_agreed`)."""
        if not self.fill_agreed:
            return True
        if self.write_empty is not None:
            return self.write_empty
        return bool(config.get("write_empty_chunks"))

    def plan(self, shape: tuple[int, ...]) -> CodecPipeline:
        plan = self._plans.get(shape)
        if plan is None:
            with self._lock:
                plan = self._plans.get(shape)
                if plan is None:
                    plan = self._plans[shape] = codec_plan(self.meta, shape, self.key)
        return plan

    def shape_of(self, coords: tuple[int, ...]) -> tuple[int, ...]:
        if self.regular:
            return self.chunk_shape  # type: ignore[return-value]
        return chunk_shape_at(self.meta.chunk_grid, coords)

    def scratch(self, shape: tuple[int, ...]) -> np.ndarray:
        """A per-thread decode buffer of ``shape`` (reused across chunks and reads, until the
        thread asks for another shape). The thread keeps one buffer, of the largest chunk it
        asked for: chunks of a rectilinear grid come in many shapes, and a buffer kept per
        shape held as much memory as the whole array decoded."""
        local = self._local
        last = getattr(local, "chunk", None)
        if last is not None and last[0] == shape:
            return last[1]
        itemsize = self.dtype.itemsize
        if self.variable or self.dtype.hasobject or not itemsize:
            buf = self.new_chunk(shape, fill=False)
        else:
            n = prod(shape) * itemsize
            flat = getattr(local, "flat", None)
            if flat is None or flat.nbytes < n:
                local.chunk = flat = local.flat = None      # the old one freed first
                try:
                    flat = local.flat = np.empty(n, dtype=np.uint8)
                except (MemoryError, ValueError) as exc:
                    raise self.no_memory(shape) from exc
            buf = flat[:n].view(self.dtype).reshape(shape)
        local.chunk = (shape, buf)
        return buf

    @_fork.cached_property
    def ranged_raw(self) -> bool:
        """Whether reads fetch only the bytes a selection spans in a chunk: the chunks are
        stored as their raw bytes alone (the ``bytes`` codec in native order, no checksum)
        and are so large that fetching a whole one for a few cells would be wasteful."""
        if not self.regular or self.object_chunks:
            return False
        plan = self.plan(self.chunk_shape)          # type: ignore[arg-type]
        return plan.raw and not plan.b2b and plan.nbytes >= RANGED_RAW_BYTES

    def byte_scratch(self, n: int) -> np.ndarray:
        """A per-thread buffer of at least ``n`` bytes, reused across reads (replaced by a
        larger one when a read needs more)."""
        buf = getattr(self._local, "raw", None)
        if buf is None or buf.nbytes < n:
            buf = self._local.raw = np.empty(n, dtype=np.uint8)
        return buf

    def work_chunk(self, shape: tuple[int, ...], *, fill: bool) -> np.ndarray:
        """A chunk buffer to assemble one chunk for encoding: the per-thread scratch buffer
        (encoders return new bytes, so it is free again once the chunk is encoded)."""
        if self.object_chunks:
            return self.new_chunk(shape, fill=True)
        buf = self.scratch(shape)
        if fill:
            buf[...] = self.fill
        return buf

    def new_chunk(self, shape: tuple[int, ...], *, fill: bool) -> np.ndarray:
        """A chunk buffer; a CodecError naming the size when it cannot be allocated (a huge
        chunk shape in metadata must not surface as a MemoryError)."""
        try:
            chunk = np.empty(shape, dtype=self.dtype)
        except (MemoryError, ValueError) as exc:
            raise self.no_memory(shape) from exc
        if fill or self.variable or self.dtype.hasobject:
            chunk[...] = self.fill
        return chunk

    def no_memory(self, shape: tuple[int, ...]) -> CodecError:
        """The error for a chunk of ``shape`` that memory cannot hold (allocating it, or a
        buffer of its size to decode or encode it, failed)."""
        n = prod(shape) * self.dtype.itemsize
        return CodecError(f"cannot allocate {n} bytes for a chunk of shape {shape} and data "
                          f"type {self.dtype}")

    def is_fill(self, chunk: np.ndarray) -> bool:
        if chunk.size and not any(chunk.strides):        # a broadcast scalar: test one item
            chunk = chunk.reshape(-1)[:1]
        elif not chunk.flags.c_contiguous:
            chunk = np.ascontiguousarray(chunk)
        if self.fill_bytes is not None:
            if self.fill_is_nan and self.dtype.kind == "f":
                return bool(np.isnan(chunk).all())
            return bool(is_all(chunk.reshape(-1).view(np.uint8), self.fill_bytes))
        if self.fill_is_nan:
            return bool(np.isnan(chunk).all())
        if self.any_objects:          # items of any kind: arrays, lists, dicts...
            fill = self.fill
            return all(type(v) is type(fill) and v == fill for v in chunk.reshape(-1).tolist())
        if chunk.dtype.kind == "T" and self.fill_unencodable:
            return not chunk.size     # numpy's StringDType holds no such text, nor compares to it
        return bool(np.all(chunk == self.fill))

    @_fork.cached_property
    def fill_unencodable(self) -> bool:
        """Whether the fill value is text UTF-8 cannot encode (a lone surrogate a document
        may state), which no item of numpy's ``StringDType`` can equal."""
        if type(self.fill) is not str:
            return False
        try:
            self.fill.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False


def fill_scalar(meta: ArrayMeta) -> Any:
    dt = meta.data_type
    if meta.fill_value is not None:
        return meta.fill_value
    if category(dt) == "object":    # Zarr v2 null of an object array: None, as zarr-python 2
        return None
    if dt.variable:
        return b"" if dt.numpy.kind == "S" or dt.name == "bytes" else ""
    if dt.numpy.kind in "mM":       # Zarr v2 null: NaT, as zarr-python reads it
        return np.array(np.iinfo(np.int64).min, np.int64).view(dt.numpy)[()]
    if dt.numpy.kind in "SU":       # empty, made without an item of zeros (up to 2 GiB)
        return np.bytes_(b"") if dt.numpy.kind == "S" else np.str_("")
    return np.zeros((), dtype=dt.numpy)[()]


def fill_agreed(meta: ArrayMeta) -> bool:
    """Whether every reader reads a chunk not stored as :func:`fill_scalar`. Not so for a Zarr
    v2 ``null`` fill value (the spec leaves those cells undefined: zarr-python 2 hands out
    uninitialised memory there, or None in object arrays, and it and tensorstore store every
    chunk written), but for arrays of any Python objects (None everywhere); nor for the ``0``
    zarr-python 2 wrote as the fill value of string and bytes arrays (read as ``""`` / ``b""``
    here, as the integer 0 by zarr-python 2, as ``"0"`` by zarr-python 3). Chunks of those
    arrays are stored even when they hold only what zarrx reads where none is."""
    if meta.fill_value is None:
        return category(meta.data_type) == "object"
    if meta.zarr_format == 2 and category(meta.data_type) in ("string", "bytes") \
            and isinstance(meta._json, dict):
        return isinstance(meta._json.get("fill_value", ""), str)
    return True


def codec_plan(meta: ArrayMeta, shape: tuple[int, ...], key: str) -> CodecPipeline:
    """The codec plan of the read units of ``shape`` of the array ``meta`` at ``key`` (named
    in messages): raises when zarrx cannot read them (a codec it lacks, a configuration it
    refuses for these chunks)."""
    return read_plan(meta, shape, key)


def chunk_shape_at(grid: Any, coords: tuple[int, ...]) -> tuple[int, ...]:
    if isinstance(grid, RegularGrid):
        return grid.chunk_shape
    return tuple(sizes[c] for sizes, c in zip(grid.chunk_sizes, coords))


def _assign(dst: np.ndarray, dst_sel: Any, src: np.ndarray, src_sel: Any) -> None:
    """``dst[dst_sel] = src[src_sel]``; basic selections copy in C without the GIL."""
    if dst.dtype.hasobject:
        dst[dst_sel] = src[src_sel]
    else:
        copy_selection(src, src_sel, dst, dst_sel)


def check_count(io: ArrayIO, n: int) -> None:
    """:func:`~zarrx.indexing.check_chunk_count`, the error naming the array."""
    try:
        check_chunk_count(n)
    except ZarrError as exc:
        exc.at(array=io.key)
        raise


def box_scratch(io: ArrayIO, plan: Any, i: int) -> np.ndarray:
    """The per-thread buffer of the regular chunk shape for a box task starting at the plan's
    chunk ``i``; an error (the chunk is larger than memory) is located at that chunk."""
    try:
        return io.scratch(io.chunk_shape)            # type: ignore[arg-type]
    except ZarrError as exc:
        raise _located(exc, io, plan.chunks[i].coords, io.chunk_shape)


def read_scratch(io: ArrayIO, plan: Any, i: int, n: int) -> np.ndarray:
    """The per-thread buffer of ``n`` bytes for a box read task starting at the plan's chunk
    ``i`` (what the chunks' parts inside the box span, at most a chunk's bytes); a buffer that
    cannot be allocated is an error located at that chunk."""
    try:
        return io.byte_scratch(n)
    except MemoryError as exc:
        err = CodecError(f"cannot allocate {n} bytes to read a part of a chunk of shape "
                         f"{io.chunk_shape} and data type {io.dtype}")
        raise err.at(array=io.key, **io.source.location(plan.chunks[i].coords)) from exc


def _located(exc: ZarrError | MemoryError, io: ArrayIO, coords: tuple[int, ...],
             shape: tuple[int, ...]) -> ZarrError:
    """The error about the chunk at ``coords`` (of ``shape``) to raise, with its location set
    (fields it has not got yet): the array's path, the stored key and, in a shard, the inner
    chunk. A MemoryError (decoding or encoding the chunk needed more memory than there is)
    becomes the error :meth:`ArrayIO.no_memory` gives. Keys are formatted only here, when
    something went wrong (formatting them costs a microsecond per chunk)."""
    if not isinstance(exc, ZarrError):
        err = io.no_memory(shape)
        err.__cause__ = exc
        exc = err
    where = io.source.location(coords)
    if isinstance(exc, CodecError) and exc.address is None and "key" in where:
        # a chunk that does not decode: on a remote store, its URL and whether it is a web page
        exc.at(**address_fields(io.source.objects.store, where["key"]))
    return exc.at(array=io.key, **where)


#: what a ``vlen-bytes`` chunk holds: bytes (``None`` is stored as ``b""``, as numcodecs does)
BYTES_ITEMS = (bytes, bytearray, memoryview, type(None))


def check_bytes_items(arr: np.ndarray, where: str) -> np.ndarray:
    """``arr``, the objects to write into an array of variable-length bytes, when each is
    bytes; else an ArgumentTypeError (zarr-python raises a ``TypeError``) naming the first
    that is not, raised before anything is stored: the chunk encoder would refuse it only
    after the chunks before its own were written."""
    for i, v in enumerate(arr.flat):
        if not isinstance(v, BYTES_ITEMS):
            raise ArgumentTypeError(f"{where}: cannot write {type(v).__name__} {short(v)} "
                                    f"(item {i} of the value) to an array of variable-length "
                                    f"bytes: expected bytes")
    return arr


def conversion_error(exc: Exception, message: str) -> ArgumentError:
    """The error for numpy's ``exc`` converting a value written, also of the builtin class
    numpy raised (``TypeError``, ``OverflowError``, ``UnicodeEncodeError``, ...)."""
    if isinstance(exc, UnicodeEncodeError):
        return ArgumentEncodeError(message, exc)
    if isinstance(exc, UnicodeDecodeError):
        return ArgumentDecodeError(message, exc)
    return (ArgumentOverflowError if isinstance(exc, OverflowError) else
            ArgumentTypeError if isinstance(exc, TypeError) else ArgumentError)(message)


def check_value(value: Any, shape: tuple[int, ...] | None, dtype: np.dtype,
                where: str) -> np.ndarray:
    """``value`` as an array of ``dtype`` broadcast to ``shape`` (no copy; ``None``: its own
    shape) after dropping leading axes of length 1 beyond ``shape``'s (of one axis or more), as
    numpy's assignment does, or an ArgumentError saying why not, also of the builtin class numpy
    raised (``TypeError``, ``OverflowError``, ``UnicodeEncodeError``, ``UnicodeDecodeError``),
    as zarr-python passes those on. numpy's
    ``RuntimeError`` (dates printed into strings too short for them) is an ArgumentError."""
    try:
        arr = value if isinstance(value, np.ndarray) and value.dtype == dtype \
            else np.asarray(value, dtype=dtype)
    except (TypeError, ValueError, OverflowError, RuntimeError) as exc:
        raise conversion_error(exc, f"{where}: cannot convert value of type "
                                    f"{type(value).__name__} to dtype {dtype}: {exc}") from exc
    if shape is None:
        return arr
    extra = arr.ndim - len(shape)
    if extra > 0 and shape and all(n == 1 for n in arr.shape[:extra]):
        # numpy drops a value's leading axes of length 1 (not for one element: numpy's
        # ``a[i, j] = [[1]]`` is refused, as in zarr-python)
        arr = arr.reshape(arr.shape[extra:])
    try:
        return np.broadcast_to(arr, shape)
    except ValueError as exc:
        try:
            fits = np.broadcast_shapes(arr.shape, shape) == shape
        except ValueError:
            fits = False
        if fits:             # numpy's views cannot span more than 2**63 bytes
            n = prod(shape) * dtype.itemsize
            raise ArgumentError(f"{where}: the selection of shape {shape} ({n} bytes of "
                                f"{dtype}) is too large to write in one call; write it in "
                                f"parts") from exc
        # one element takes a scalar only: numpy raises TypeError there for some types
        # (integers, complex numbers) and ValueError for others, and zarr-python passes on
        # what numpy raised, so this is both
        cls = ArgumentTypeError if shape == () else ArgumentError
        raise cls(f"{where}: value of shape {arr.shape} cannot be broadcast to the selection "
                  f"shape {shape}") from exc
