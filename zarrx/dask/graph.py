"""Dask graphs over one zarrx array: read blocks into a dask array, write a dask array's blocks.

The graph holds the array handle once (under its own key); a handle pickles as its store's spec
plus the array path (a ``LocalStore`` is its root directory), so tasks sent to processes or
``dask.distributed`` workers carry no data and no live client: a worker reopens the array from
the spec and reads or writes through zarrx. Each task names its block by slices.

Writes never let two tasks touch one stored object (shard, or chunk when unsharded): blocks
that do not align with stored objects are regrouped at object boundaries first, so no lock is
needed. A write that covers part of an object (at the edges of a region) merges into it with
a conditional write, as every zarrx write does.
"""
from __future__ import annotations

import itertools
import math
import os
import pickle
import threading
import uuid
import weakref
from typing import Any

import numpy as np

from zarrx import _pool
from zarrx.dask.chunks import (MAX_BLOCKS, aligned_chunks, check_blocks, check_chunks,
                               default_chunks, is_aligned, least_blocks, object_edges,
                               object_shape, region_edges, region_extent, region_offset)
from zarrx.errors import (ArgumentError, ReadOnlyError, SchedulerError, SelectionSizeError,
                          ZarrError)
from zarrx.store.memory import MemoryStore

__all__ = ["array_to_dask", "store_blocks", "store_token", "in_memory", "memory_url",
           "scheduler_kind", "WriteGate"]


#: id of an in-memory store -> its token, dropped when the store is collected
_memory_tokens: dict[int, str] = {}


def _memory_token(store: Any) -> str:
    """A random token for an in-memory store, the same for as long as the store object lives
    (a collected store's id may be reused by another store, which gets a token of its own)."""
    key = id(store)
    token = _memory_tokens.get(key)
    if token is None:
        token = uuid.uuid4().hex
        try:
            weakref.finalize(store, _memory_tokens.pop, key, None)
        except TypeError:       # not weakly referenceable: a token per graph
            return token
        token = _memory_tokens.setdefault(key, token)
    return token


def store_token(store: Any) -> Any:
    """What identifies ``store`` in a dask key: its pickled spec when that is small (a local
    directory, a remote URL), else a fresh random token. An in-memory store is identified by
    the store object, never by its contents: two memory stores holding equal keys are two
    stores (a write into one is not a write into the other), and the data is not pickled to
    name it."""
    if in_memory(store):
        return _memory_token(store)
    from zarrx.store.remote.probe_findings import not_carried
    try:
        with not_carried():      # what a condition probe found is no part of the store's name
            spec = pickle.dumps(store, protocol=5)
    except Exception:   # noqa: BLE001 - an unpicklable store is identified per handle
        spec = None
    if spec is not None and len(spec) <= 4096:
        return spec
    return uuid.uuid4().hex


def _tokenize(*parts: Any) -> str:
    from dask.base import tokenize
    return tokenize(*parts)


class BlockReader:
    """What ``dask.array.from_array`` holds: the array handle, read by the selections dask's
    getter makes (a block's slices, with any later slicing of the block folded in, as for
    ``dask.array.from_zarr``, so a slice reads only the chunks it covers). (The handle itself
    is not passed: dask asks it for ``chunks``, which a rectilinear grid lacks.)

    A reader of a ``memory://`` store refuses to read in another process, where the store is
    that process's own, empty one (a ``MemoryStore`` pickles its data and reads anywhere)."""

    __slots__ = ("array", "shape", "dtype", "ndim", "origin")

    def __init__(self, array: Any, origin: int | None = None) -> None:
        self.array = array
        self.shape, self.dtype, self.ndim = array.shape, array.dtype, array.ndim
        self.origin = origin

    def __getitem__(self, selection: Any) -> Any:
        if self.origin is not None and self.origin != os.getpid():
            raise ZarrError(f"from_zarrx({self.array.name}): cannot read an in-memory array "
                            f"(memory://) in another process: there its store is empty; use "
                            f"the threaded or synchronous scheduler, or a store on disk")
        return self.array[selection]

    def __reduce__(self) -> tuple:
        origin = self.origin
        if origin is None and memory_url(self.array.store):
            origin = os.getpid()
        return (BlockReader, (self.array, origin))

    def __repr__(self) -> str:
        return f"BlockReader({self.array!r})"


def array_to_dask(arr: Any, chunks: Any = None, *, name: str | None = None,
                  inline_array: bool = False, where: str = "from_zarrx") -> Any:
    """A dask array reading ``arr`` (a :class:`zarrx.Array`) block by block.

    ``chunks=None`` aligns blocks with the stored objects, merged up to about 128 MiB
    (:func:`zarrx.dask.chunks.default_chunks`); any other value is what
    ``dask.array.from_array`` accepts (``"auto"`` keeps block boundaries on multiples of the
    stored objects where it can)."""
    import dask.array as da
    from dask.array.core import normalize_chunks

    meta = arr.metadata
    head = f"{where}: array {arr.path or '/'!r}"
    if chunks is None:
        try:
            blocks = default_chunks(meta)
        except ZarrError as exc:
            raise exc.at(array=arr.path) from None
    else:
        check_chunks(chunks, arr.shape, where)
        # before dask lists them: 2^40 block sizes would not fit in memory
        check_blocks(least_blocks(chunks, arr.shape), f"{head}, chunks={chunks!r}")
        unit = object_shape(meta)
        try:
            blocks = normalize_chunks(chunks, arr.shape, dtype=arr.dtype, previous_chunks=unit)
        except (ValueError, TypeError, ArithmeticError) as exc:
            raise ArgumentError(f"{where}: chunks={chunks!r}: {exc}") from exc
        except MemoryError:         # dask's text sizes: their blocks are listed to count them
            raise SelectionSizeError(f"{head}, chunks={chunks!r}: the dask array would have "
                                     f"more blocks than fit in memory; at most {MAX_BLOCKS} "
                                     f"are made: ask for larger blocks") from None
    check_blocks(math.prod(len(b) for b in blocks),
                 head if chunks is None else f"{head}, chunks={chunks!r}")
    if name is None:
        name = "from-zarrx-" + _tokenize(store_token(arr.store), arr.path, repr(meta), blocks)
    empty = np.empty((0,) * arr.ndim, dtype=arr.dtype)
    return da.from_array(BlockReader(arr), chunks=blocks, name=name, lock=False, asarray=True,
                         inline_array=inline_array, meta=empty)


def in_memory(store: Any) -> bool:
    """Whether ``store`` (or the store it wraps) keeps its data in this process: a zarrx or
    zarr-python ``MemoryStore`` (or a subclass), or a ``memory://`` remote store (obstore's or
    fsspec's memory, one per process), whose pickled copy in another process does not share
    the data. Wrappers are looked through: zarrx's (``inner``, ``store``) and zarr-python's
    (``LoggingStore``, any ``WrapperStore``: ``_store``)."""
    return _find_memory(store, urls_only=False)


def memory_url(store: Any) -> bool:
    """Whether ``store`` (or the store it wraps) is a ``memory://`` remote store (obstore's or
    fsspec's): unlike a ``MemoryStore``, its pickled copy holds no data, so another process
    reopens an empty store of its own."""
    return _find_memory(store, urls_only=True)


def _find_memory(store: Any, urls_only: bool) -> bool:
    for _ in range(8):
        if not urls_only and (isinstance(store, MemoryStore) or any(
                c.__name__ == "MemoryStore" and c.__module__.split(".")[0] == "zarr"
                for c in type(store).__mro__)):
            return True
        if getattr(store, "kind", None) == "memory" or \
                type(getattr(store, "fs", None)).__name__ == "MemoryFileSystem":
            return True
        inner = getattr(store, "inner", None) or getattr(store, "store", None) or \
            getattr(store, "_store", None)
        if inner is None or inner is store:
            return False
        store = inner
    return False


def _memory_refusal(where: str, scheduler: str) -> SchedulerError:
    return SchedulerError(f"{where}: cannot store into an in-memory array (MemoryStore) using the "
                     f"{scheduler} scheduler: the workers would write to copies of its data; "
                     f"use the threaded or synchronous scheduler, or a store on disk")


def scheduler_kind(scheduler: Any = None) -> str:
    """``"distributed"``, ``"processes"`` or ``"threads"`` (threads, synchronous and anything
    else that runs tasks in this process): what ``compute(scheduler=scheduler)`` would use."""
    from dask.base import get_scheduler
    try:
        get = get_scheduler(scheduler=scheduler)
    except Exception:   # noqa: BLE001 - an unusable scheduler argument is dask's to report
        return "threads"
    owner = getattr(get, "__self__", None)
    if owner is not None and type(owner).__module__.split(".")[0] == "distributed":
        return "distributed"
    import dask.multiprocessing
    return "processes" if get is dask.multiprocessing.get else "threads"


class _InProcessTarget:
    """The graph's handle on an in-memory array: it works where the graph was built, and a
    copy sent to another process (a process pool, a distributed worker) refuses to write."""

    __slots__ = ("array",)

    def __init__(self, array: Any) -> None:
        self.array = array

    def __reduce__(self) -> tuple:
        return (_CopiedTarget, (self.array.name,))


class _CopiedTarget:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


class WriteGate:
    """Lets block writes through until :meth:`close`: a write started before waits to finish,
    none starts after. A failed dask compute raises while tasks of the same graph may still be
    running on the scheduler's threads; closing the gate first means none of them writes after
    the caller has started undoing the write (shrinking arrays it grew). A copy sent to another
    process (a process pool, a distributed worker) is a gate of its own, never closed: ``sent``
    says that one was made (the graph's writes may still run elsewhere)."""

    __slots__ = ("_cond", "_active", "_closed", "sent")

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._active = 0
        self._closed = False
        self.sent = False

    def enter(self) -> bool:
        """Whether a write may start (then :meth:`leave` must follow it)."""
        with self._cond:
            if self._closed:
                return False
            self._active += 1
            return True

    def leave(self) -> None:
        with self._cond:
            self._active -= 1
            self._cond.notify_all()

    def stop(self) -> None:
        """Let no write start (those under way go on: :meth:`close` waits for them)."""
        with self._cond:
            self._closed = True

    def close(self) -> None:
        """Let no write start, and wait for those under way."""
        with self._cond:
            self._closed = True
            while self._active:
                self._cond.wait()

    def __reduce__(self) -> tuple:
        self.sent = True        # pickled for another process, whose writes close() cannot stop
        return (WriteGate, ())


def _write_block(target: Any, block: np.ndarray, selection: tuple[slice, ...],
                 gate: WriteGate | None = None) -> int:
    """One task: write ``block`` at ``selection`` of ``target``; returns the elements written.
    dask already runs one task per core, so the block's chunks are encoded on the task's own
    thread (zarrx's pool on top of dask's threads only made them take turns: about 20 % slower
    for zstd writes with the threaded scheduler on two cores)."""
    if isinstance(target, _CopiedTarget):
        raise _memory_refusal(f"to_zarrx({target.name})", "distributed or process")
    if isinstance(target, _InProcessTarget):
        target = target.array
    if gate is not None and not gate.enter():
        return 0                        # (the write failed elsewhere and is being undone)
    try:
        with _pool.inline():
            target[selection] = block
    finally:
        if gate is not None:
            gate.leave()
    return int(np.size(block))


def _block_slice(start: int, count: int, step: int) -> slice:
    """The slice of ``count`` elements from ``start``, every ``step``-th."""
    if step == 1 or not count:
        return slice(start, start + count)
    return slice(start, start + (count - 1) * step + 1, step)


def _written(*counts: int) -> None:
    return None


def store_blocks(x: Any, arr: Any, region: Any = None, *, compute: bool = True,
                 name: str | None = None, gate: WriteGate | None = None,
                 **compute_kwargs: Any) -> Any:
    """Write the dask array ``x`` into ``arr[region]`` (a :class:`zarrx.Array`), one task per
    block, after regrouping blocks at stored-object boundaries. Returns ``None`` once written,
    or a ``dask.delayed.Delayed`` when ``compute=False``. ``gate``: a :class:`WriteGate` each
    block's write passes through (in this process)."""
    from dask.delayed import Delayed
    from dask.highlevelgraph import HighLevelGraph

    where = f"to_zarrx({arr.name})"
    if arr.read_only:
        raise ReadOnlyError(f"{where}: the array is open read-only")
    if any(isinstance(c, float) and np.isnan(c) for c in x.shape):
        raise ArgumentError(f"{where}: the dask array has unknown chunk sizes; call "
                            f"compute_chunk_sizes() first")
    offset, slices = region_offset(region, arr.shape, where)
    extent = region_extent(slices)
    steps = tuple(s.step for s in slices)
    if x.ndim != arr.ndim or tuple(x.shape) != extent:
        raise ArgumentError(f"{where}: the dask array's shape {tuple(x.shape)} does not match the "
                            f"region's shape {extent}")
    try:
        edges = object_edges(arr.metadata)
    except ZarrError as exc:
        raise exc.at(array=arr.path) from None
    # the boundaries in the region's positions (a region with a step selects every step-th
    # element), where blocks may be cut without two of them writing one stored object
    edges = region_edges(edges, slices)
    origin = (0,) * len(offset)
    if not is_aligned(x.chunks, edges, origin):
        x = x.rechunk(aligned_chunks(x.chunks, edges, origin))
    token = _tokenize(x.name, store_token(arr.store), arr.path, offset, steps)
    name = name or f"to-zarrx-{token}"
    target = f"zarrx-target-{token}"
    memory = in_memory(arr.store)
    if memory and compute:
        kind = scheduler_kind(compute_kwargs.get("scheduler"))
        if kind != "threads":
            raise _memory_refusal(where, kind)
    dsk: dict[Any, Any] = {target: _InProcessTarget(arr) if memory else arr}
    starts = [np.concatenate(([0], np.cumsum(c)))[:-1].tolist() for c in x.chunks]
    keys = []
    for idx in itertools.product(*(range(n) for n in x.numblocks)):
        sel = tuple(_block_slice(o + starts[a][i] * st, x.chunks[a][i], st)
                    for a, (o, i, st) in enumerate(zip(offset, idx, steps)))
        key = (name, *idx)
        dsk[key] = (_write_block, target, (x.name, *idx), sel, gate) if gate is not None \
            else (_write_block, target, (x.name, *idx), sel)
        keys.append(key)
    done = f"{name}-done"
    dsk[done] = (_written, *keys)
    graph = HighLevelGraph.from_collections(done, dsk, dependencies=[x])
    result = Delayed(done, graph)
    if compute:
        result.compute(**compute_kwargs)
        return None
    return result
