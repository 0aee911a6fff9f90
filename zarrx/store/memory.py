"""An in-memory, thread-safe store with generations and conditional writes.

Values of 64 KiB and more are kept as :class:`~zarrx.store._values.Value` copies, in memory
that is reused once they are freed (see :mod:`zarrx.store._values`): a chunk written into a
memory store costs one copy into warm memory rather than fresh pages faulted in one by one.
``get`` and ``get_many`` return ``bytes`` as always; the zero-copy reads (``get_many_buffers``,
``get_versioned``, ``snapshot``) return read-only memoryviews of the kept value.

The keys are also kept sorted (:class:`~zarrx.store.keyindex.KeyIndex`, updated by every write
and delete under the store's lock), so a listing costs the keys it returns, not every key
the store holds.
"""
from __future__ import annotations

import itertools
import threading
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence

import numpy as np

from zarrx import _fork
from zarrx.errors import ConflictError
from zarrx.store._values import GATHER_BATCH, MIN_SIZE, Value, gather_kept_many
from zarrx.store.keyindex import KeyIndex
from zarrx.store.update import batched_as_single
from zarrx.store.base import (ABSENT, ByteRange, HeldSnapshot, ObjectSnapshot, Request, Store,
                              Versioned, as_buffer, check_generation, check_key, check_prefix,
                              conflict, is_absent)

__all__ = ["MemoryStore"]

# Generations of every MemoryStore come from one process-wide counter, so a number is never
# reused, not even by another store or after a delete. (next() on a count is atomic under the GIL.)
_COUNTER = itertools.count(1)


def _kept(value: object, key: str) -> bytes | Value:
    """What the store keeps for a written value: small ones as ``bytes``, large ones as a
    pooled :class:`Value` copy (a Value is immutable: kept as it is)."""
    if type(value) is Value:
        return value.seal()                             # type: ignore[union-attr]
    if type(value) is bytes and len(value) < MIN_SIZE:
        return value
    view = as_buffer(value, key)
    return Value(view) if view.nbytes >= MIN_SIZE else bytes(view)


def _out(value: bytes | Value, byte_range: ByteRange | None) -> bytes:
    """The ``bytes`` a ``get`` returns for a kept value (a copy of a Value's range)."""
    if type(value) is bytes:
        return value if byte_range is None else byte_range.apply(value)
    view = memoryview(value)
    return bytes(view if byte_range is None else byte_range.apply(view))


def _view(value: bytes | Value | None) -> bytes | memoryview | None:
    """A kept value as a zero-copy read returns it."""
    return value if value is None or type(value) is bytes else memoryview(value)


class MemoryStore(Store):
    """Keys and values in a dict guarded by a lock; ``read_only=True`` refuses writes.

    A value's generation is an integer drawn from a process-wide counter on every write.
    Conditional writes check and write under the store's lock.
    """

    supports_conditional_writes = True
    latency_bound = False                # a request is a dict lookup
    reads_are_views = True               # get_many_buffers hands out views of the values
    parallel_writes = False              # a write is a dict update under the GIL
    keeps_values = True                  # a Value written is kept, not copied

    def __init__(self, data: dict[str, bytes] | None = None, *, read_only: bool = False,
                 store_dict: dict[str, bytes] | None = None) -> None:
        """``data`` (zarr-python names it ``store_dict``, which is also taken): the keys and
        values to start from, copied."""
        if store_dict is not None:
            if data is not None:
                from zarrx.errors import ArgumentError
                raise ArgumentError("MemoryStore: pass data= or store_dict= (the same "
                                    "argument), not both")
            data = store_dict
        if data is not None and not isinstance(data, Mapping):
            from zarrx.errors import ArgumentTypeError
            raise ArgumentTypeError(f"MemoryStore: data: expected a mapping of str keys to "
                                    f"bytes, found {type(data).__name__}")
        self._data: dict[str, bytes | Value] = {   # bytes as given; other buffers copied
            check_key(k): v if type(v) is bytes else _kept(v, k) for k, v in (data or {}).items()}
        self._gens: dict[str, int] = {k: next(_COUNTER) for k in self._data}
        self._index: KeyIndex | None = KeyIndex(self._data)
        self._lock = threading.Lock()
        self.read_only = read_only
        _fork.track(self)

    def _after_fork(self) -> None:
        """In a child forked during a write on another thread, the keys, their generations and
        the listing may disagree: every value gets a new generation (no snapshot or cached
        shard index of the parent's is trusted with it) and the listing is made again."""
        if _fork.reinit(self._lock):
            self._gens.clear()
            self._gens.update((k, next(_COUNTER)) for k in list(self._data))
            if self._index is not None:
                self._index = KeyIndex(self._data)

    def get(self, key: str, byte_range: ByteRange | None = None) -> bytes | None:
        value = self._data.get(check_key(key))   # dict reads are atomic under the GIL
        return None if value is None else _out(value, byte_range)

    def get_many(self, requests: Iterable[Request]) -> list[bytes | None]:
        data = self._data
        out: list[bytes | None] = []
        for key, rng in requests:
            value = data.get(key)
            out.append(None if value is None else _out(value, rng))
        return out

    def get_many_buffers(self, requests: Iterable[Request]) -> list[bytes | memoryview | None]:
        data = self._data
        values = None
        if type(requests) is list and requests[15:]:
            # sixteen or more, looked up with no Python call per key: most reads of many
            # chunks find them missing, or kept as bytes, and read them whole
            values = list(map(data.get, [key for key, _ in requests]))
            if not any([rng is not None for _, rng in requests]) and \
                    all([type(v) is not Value for v in values]):
                return values
        out: list[bytes | memoryview | None] = []
        for i, (key, rng) in enumerate(requests):
            value = data.get(key) if values is None else values[i]
            if value is None or rng is None or rng.is_full:
                out.append(_view(value))
            else:
                start, stop = rng.resolve(len(value))
                out.append(memoryview(value)[start:stop])     # no copy of the range
        return out

    def getsize(self, key: str) -> int | None:
        value = self._data.get(check_key(key))
        return None if value is None else len(value)

    # -- generations -------------------------------------------------------------------------
    def _current(self, key: str) -> tuple[bytes | Value | None, int | None]:
        with self._lock:
            return self._data.get(key), self._gens.get(key)

    def generation(self, key: str) -> Hashable | None:
        return self._gens.get(check_key(key))

    def get_versioned(self, key: str, byte_range: ByteRange | None = None, *,
                      if_generation: Hashable | None = None) -> Versioned | None:
        value, gen = self._current(check_key(key))
        check_generation(self, key, if_generation, gen, "read")
        if value is None:
            return None
        view = _view(value)
        return (view if byte_range is None else byte_range.apply(view)), gen  # type: ignore

    def get_versioned_many(self, keys: list[str], byte_range: ByteRange | None = None
                           ) -> list[Versioned | None]:
        """``get_versioned`` of each of ``keys`` (valid keys), read under one hold of the
        lock."""
        with self._lock:
            values = list(map(self._data.get, keys))
            gens = list(map(self._gens.get, keys))
        return [None if v is None else
                ((v if type(v) is bytes else memoryview(v)) if byte_range is None
                 else byte_range.apply(_view(v)), g)        # type: ignore[arg-type]
                for v, g in zip(values, gens)]

    def set_if_many(self, items: list[tuple[str, object, Hashable | None]]) -> list[int]:
        """Each ``(key, new value or None, generation)`` of ``items`` (valid keys) written
        (deleted for None: for a key read missing, nothing while it is, a conflict once it is
        there) only if the key still holds that generation (``ABSENT``: missing), under one
        hold of the lock; the positions of those refused. A key given twice is written in turn (the second item checked against what
        the first left), as single calls do."""
        if not items:
            return []
        self._check_writable(items[0][0])
        keys = [k for k, _, _ in items]
        if len(set(keys)) < len(keys):      # a key twice: its items in turn, as single calls
            failed = []
            for i, (key, value, gen) in enumerate(items):
                try:
                    self.set_if(key, value, gen) if value is not None else \
                        self.delete_if(key, gen)
                except ConflictError:
                    failed.append(i)
            return failed
        values = [v for _, v, _ in items if v is not None]
        kept = items if not set(map(type, values)) - {bytes} and \
            max(map(len, values), default=0) < MIN_SIZE else \
            [(k, None if v is None else _kept(v, k), g) for k, v, g in items]
        failed = []
        with self._lock:
            data, gens, index = self._data, self._gens, self._index
            found = list(map(gens.get, [k for k, _, _ in kept]))
            for i, (key, value, gen) in enumerate(kept):
                was = found[i]
                if (was is not None) if gen is ABSENT or gen is None else was != gen:
                    failed.append(i)
                elif value is not None:
                    if was is None and index is not None:
                        index.add(key)
                    data[key] = value
                elif was is not None:
                    del data[key], gens[key]
                    if index is not None:
                        index.discard(key)
            # a new generation for each key written
            refused = set(failed)
            done = [k for i, (k, v, _) in enumerate(kept) if v is not None and i not in refused]
            gens.update(zip(done, _COUNTER))
        return failed

    def snapshot(self, key: str) -> ObjectSnapshot | None:
        value, gen = self._current(check_key(key))
        return None if value is None else HeldSnapshot(key, value, gen)

    def set_if(self, key: str, value: bytes | bytearray | memoryview,
               if_generation: Hashable | None) -> Hashable:
        check_key(key)
        self._check_writable(key)
        value = _kept(value, key)
        expected = ABSENT if is_absent(if_generation) else if_generation
        with self._lock:
            check_generation(self, key, expected, self._gens.get(key), "conditionally write")
            self._added(key)
            self._data[key] = value
            gen = self._gens[key] = next(_COUNTER)
        return gen

    def delete_if(self, key: str, if_generation: Hashable | None) -> None:
        check_key(key)
        self._check_writable(key)
        with self._lock:
            found = self._gens.get(key)
            if is_absent(if_generation):
                if found is not None:
                    raise conflict(self, key, "conditionally delete", ABSENT, found)
                return
            check_generation(self, key, if_generation, found, "conditionally delete")
            del self._data[key], self._gens[key]
            self._removed(key)

    # -- writes ------------------------------------------------------------------------------
    def set(self, key: str, value: bytes | bytearray | memoryview) -> None:
        check_key(key)
        self._check_writable(key)
        value = _kept(value, key)
        with self._lock:
            if self._index is not None and key not in self._data:   # _added, inline: per chunk
                self._index.add(key)
            self._data[key] = value
            self._gens[key] = next(_COUNTER)

    def set_many(self, items: Iterable[tuple[str, bytes | bytearray | memoryview]]) -> None:
        items = list(items)
        keys = [k for k, _ in items]
        values = [v for _, v in items]
        if set(map(type, keys)) - {str}:
            for key in keys:
                check_key(key)                  # raises for the first key that is no str
        for key in keys[:1]:
            self._check_writable(key)
        # small bytes are kept as they are: a call per value only for the others
        if set(map(type, values)) - {bytes} or max(map(len, values), default=0) >= MIN_SIZE:
            items = [(k, _kept(v, k)) for k, v in items]
        with self._lock:
            data, index = self._data, self._index
            if index is not None:
                for key in keys:
                    if key not in data:
                        index.add(key)
            data.update(items)
            self._gens.update(zip(keys, _COUNTER))

    def delete_many(self, keys: Iterable[str]) -> None:
        keys = [check_key(k) for k in keys]
        for k in keys[:1]:
            self._check_writable(k)
        with self._lock:
            for k in keys:
                self._data.pop(k, None)
                self._gens.pop(k, None)
                self._removed(k)

    def delete(self, key: str) -> None:
        check_key(key)
        self._check_writable(key)
        with self._lock:
            self._data.pop(key, None)
            self._gens.pop(key, None)
            self._removed(key)

    def kernel_values(self) -> dict | None:
        """The dict of kept values, for the shard kernel (:mod:`zarrx.store._memshard`): a
        shard's index and chunks read in one call. None for a subclass whose ``snapshot``,
        ``get_versioned`` or ``_current`` is its own (its reads are to go through them), or
        whose values are not kept in a dict of its own (a caller's dict, which the caller may
        change in place)."""
        data = self._data
        if type(data) is not dict or not batched_as_single(
                self, "kernel_values", "snapshot", "get_versioned", "_current"):
            return None
        return data

    def box_writer(self, head: str, sep: str) -> MemoryBoxWriter | None:
        """A writer of the raw chunks a box covers whole, each gathered from the value straight
        into the memory it is kept in (see :class:`MemoryBoxWriter`)."""
        return None if self.read_only else MemoryBoxWriter(self, head, sep)

    # -- listings (the caller holds the lock for _added and _removed) ------------------------
    def _added(self, key: str) -> None:
        if self._index is not None and key not in self._data:
            self._index.add(key)

    def _removed(self, key: str) -> None:
        if self._index is not None:
            self._index.discard(key)

    def list_prefix(self, prefix: str) -> Iterator[str]:
        """The keys starting with ``prefix``, sorted; ``O(log n + matches)``."""
        check_prefix(prefix, self)
        with self._lock:
            if self._index is not None:
                return iter(self._index.prefixed(prefix))
            keys = list(self._data)
        return (k for k in keys if k.startswith(prefix))

    def list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        """As :meth:`Store.list_dir`, visiting only the children: a child folder costs one
        bisection of the index, whatever it holds."""
        if self._index is None:
            return super().list_dir(prefix)
        check_prefix(prefix, self)
        if prefix and not prefix.endswith("/"):
            prefix += "/"
        with self._lock:
            return self._index.children(prefix)

    def __len__(self) -> int:
        return len(self._data)

    def __getstate__(self) -> dict:
        return {"data": dict(self._data), "read_only": self.read_only}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["data"], read_only=state["read_only"])

    def __eq__(self, other: object) -> bool:
        """As zarr-python's: memory stores holding the same keys and values, both read-only or
        both writable, are equal."""
        if other is self:
            return True
        if not isinstance(other, type(self)) or self.read_only != other.read_only:
            return False
        with self._lock:
            mine = dict(self._data)
        with other._lock:
            theirs = dict(other._data)
        return mine == theirs

    def __hash__(self) -> int:
        # equal stores hold equal values, which change: the hash depends on neither
        return hash((MemoryStore, self.read_only))

    @property
    def shared_identity(self) -> tuple:  # type: ignore[override]
        """Stores over one dict (this one and those of :meth:`with_read_only`) share locks."""
        return ("MemoryStore", id(self._data))

    def with_read_only(self, read_only: bool = False) -> MemoryStore:
        """A store over the same keys and values (not a copy: writes through either are seen
        by both), read-only or not, as zarr-python's ``MemoryStore.with_read_only``."""
        other = object.__new__(type(self))
        other.__dict__.update(self.__dict__)   # shares the data, generations and lock
        other.read_only = bool(read_only)
        return other

    def __repr__(self) -> str:
        return f"MemoryStore(<{len(self._data)} keys>" \
            f"{', read_only=True' if self.read_only else ''})"


#: most chunks :class:`MemoryBoxWriter` gathers in one batch
GATHER_COUNT = 4096


class MemoryBoxWriter:
    """Writes chunks ``lo`` to ``hi`` of a box (C order over the chunks it touches; see
    :meth:`zarrx.store.chunks.ChunkSource.box_writer`) into a :class:`MemoryStore`: each chunk
    the box covers whole is gathered from the value (any strides) by :func:`gather_kept_many`,
    up to ``GATHER_BATCH`` bytes (and ``GATHER_COUNT`` chunks) in one GIL-free section, and
    stored with ``set`` (which a subclass may extend). Returns the indices it left to the general path: chunks covered in
    part, and chunks all of ``fill`` (which the general path deletes)."""

    __slots__ = ("store", "head", "sep")
    #: a few Python calls per chunk (a batch write of small chunks makes none: it goes first)
    kernel = False

    def __init__(self, store: MemoryStore, head: str, sep: str) -> None:
        self.store, self.head, self.sep = store, head, sep

    def prepare(self, first: Sequence[int], count: Sequence[int]) -> None:
        """Nothing to make: a memory store has no folders."""

    def __call__(self, src: np.ndarray, start: tuple, chunk: tuple, fill: bytes | None,
                 scratch: object, lo: int, hi: int) -> list[int]:
        first = [a // c for a, c in zip(start, chunk)]
        count = [(a + n - 1) // c - f + 1 for a, n, c, f in zip(start, src.shape, chunk, first)]
        ndim = len(chunk)
        left: list[int] = []
        whole: list[tuple[int, list[int]]] = []
        parts: list[np.ndarray] = []
        store, head, sep = self.store, self.head, self.sep

        together = type(store).set is MemoryStore.set   # else each through the extended set

        def flush() -> None:
            made = gather_kept_many(parts, False, fill)
            if together:
                left.extend([i for (i, _), value in zip(whole, made) if value is None])
                store.set_many([(head + sep.join(map(str, coords)), value)
                                for (_, coords), value in zip(whole, made) if value is not None])
            else:
                for (i, coords), value in zip(whole, made):
                    if value is None:
                        left.append(i)
                    else:
                        store.set(head + sep.join(map(str, coords)), value)
            whole.clear()
            parts.clear()

        held = 0
        for i in range(lo, hi):
            coords, sel, rest = [0] * ndim, [], i
            for d in range(ndim - 1, -1, -1):
                rest, coords[d] = divmod(rest, count[d])
                coords[d] += first[d]
            for d in range(ndim):
                a = coords[d] * chunk[d] - start[d]
                if a < 0 or a + chunk[d] > src.shape[d]:
                    left.append(i)
                    break
                sel.append(slice(a, a + chunk[d]))
            else:
                whole.append((i, coords))
                parts.append(src[tuple(sel)])
                held += parts[-1].nbytes
                # an overwrite frees the old values as it goes; a batch of many small chunks
                # is cut by their number (each holds a view and its coordinates: 300 bytes)
                if held >= GATHER_BATCH or len(parts) >= GATHER_COUNT:
                    flush()
                    held = 0
        flush()
        left.sort()
        return left
