"""An in-memory, thread-safe store with generations and conditional writes."""
from __future__ import annotations

import itertools
import threading
from collections.abc import Hashable, Iterable, Iterator, Sequence

from zarrx.errors import StoreError
from zarrx.store.base import (ABSENT, ByteRange, ObjectSnapshot, Request, Store, Versioned,
                              as_bytes, check_generation, check_key, conflict, is_absent)

__all__ = ["MemoryStore"]

# Generations of every MemoryStore come from one process-wide counter, so a number is never
# reused, not even by another store or after a delete. (next() on a count is atomic under the GIL.)
_COUNTER = itertools.count(1)


class MemoryStore(Store):
    """Keys and values in a dict guarded by a lock; ``read_only=True`` refuses writes.

    A value's generation is an integer drawn from a process-wide counter on every write.
    Conditional writes check and write under the store's lock.
    """

    supports_conditional_writes = True
    latency_bound = False                # a request is a dict lookup
    parallel_writes = False              # a write is a dict update under the GIL

    def __init__(self, data: dict[str, bytes] | None = None, *, read_only: bool = False) -> None:
        self._data: dict[str, bytes] = dict(data or {})
        self._gens: dict[str, int] = {k: next(_COUNTER) for k in self._data}
        self._lock = threading.Lock()
        self.read_only = read_only

    def get(self, key: str, byte_range: ByteRange | None = None) -> bytes | None:
        value = self._data.get(check_key(key))   # dict reads are atomic under the GIL
        if value is None or byte_range is None:
            return value
        return byte_range.apply(value)

    def get_many(self, requests: Iterable[Request]) -> list[bytes | None]:
        data = self._data
        out: list[bytes | None] = []
        for key, rng in requests:
            value = data.get(key)
            out.append(value if value is None or rng is None else rng.apply(value))
        return out

    def get_many_buffers(self, requests: Iterable[Request]) -> list[bytes | memoryview | None]:
        data = self._data
        out: list[bytes | memoryview | None] = []
        for key, rng in requests:
            value = data.get(key)
            if value is None or rng is None or rng.is_full:
                out.append(value)
            else:
                start, stop = rng.resolve(len(value))
                out.append(memoryview(value)[start:stop])     # no copy of the range
        return out

    def getsize(self, key: str) -> int | None:
        value = self._data.get(check_key(key))
        return None if value is None else len(value)

    # -- generations -------------------------------------------------------------------------
    def _current(self, key: str) -> tuple[bytes | None, int | None]:
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
        return (value if byte_range is None else byte_range.apply(value)), gen

    def snapshot(self, key: str) -> ObjectSnapshot | None:
        value, gen = self._current(check_key(key))
        return None if value is None else _Snapshot(key, value, gen)

    def set_if(self, key: str, value: bytes | bytearray | memoryview,
               if_generation: Hashable | None) -> Hashable:
        check_key(key)
        self._check_writable(key)
        value = as_bytes(value, key)
        expected = ABSENT if is_absent(if_generation) else if_generation
        with self._lock:
            check_generation(self, key, expected, self._gens.get(key), "conditionally write")
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

    # -- writes ------------------------------------------------------------------------------
    def set(self, key: str, value: bytes | bytearray | memoryview) -> None:
        check_key(key)
        self._check_writable(key)
        value = as_bytes(value, key)
        with self._lock:
            self._data[key] = value
            self._gens[key] = next(_COUNTER)

    def set_many(self, items: Iterable[tuple[str, bytes | bytearray | memoryview]]) -> None:
        checked = []
        for key, value in items:
            check_key(key)
            self._check_writable(key)
            checked.append((key, value if type(value) is bytes else as_bytes(value, key)))
        with self._lock:
            self._data.update(checked)
            self._gens.update((key, next(_COUNTER)) for key, _ in checked)

    def delete_many(self, keys: Iterable[str]) -> None:
        keys = [check_key(k) for k in keys]
        for k in keys[:1]:
            self._check_writable(k)
        with self._lock:
            for k in keys:
                self._data.pop(k, None)
                self._gens.pop(k, None)

    def delete(self, key: str) -> None:
        check_key(key)
        self._check_writable(key)
        with self._lock:
            self._data.pop(key, None)
            self._gens.pop(key, None)

    def list_prefix(self, prefix: str) -> Iterator[str]:
        with self._lock:
            keys = list(self._data)
        return (k for k in keys if k.startswith(prefix))

    def __len__(self) -> int:
        return len(self._data)

    def __getstate__(self) -> dict:
        return {"data": dict(self._data), "read_only": self.read_only}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["data"], read_only=state["read_only"])

    def __repr__(self) -> str:
        return f"MemoryStore(<{len(self._data)} keys>)"


class _Snapshot(ObjectSnapshot):
    """A value is immutable bytes: holding it is the snapshot (it never conflicts)."""

    def __init__(self, key: str, value: bytes, generation: int | None) -> None:
        self.key = key
        self.generation = generation
        self.size = len(value)
        self._value: bytes | None = value
        self._view = memoryview(value)

    def read(self, ranges: Sequence[ByteRange | None]) -> list[bytes | bytearray | memoryview]:
        """Ranges are zero-copy views of the immutable value."""
        value = self._value
        if value is None:
            raise StoreError(f"snapshot of {self.key!r}: read after close")
        view, size, out = self._view, len(value), []
        for r in ranges:
            if r is None or r.is_full:
                out.append(value)
            else:
                start, stop = r.resolve(size)
                out.append(view[start:stop])
        return out

    def close(self) -> None:
        self._value = None
