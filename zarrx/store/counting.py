"""A store wrapper that counts the requests reaching the store it wraps.

Tests pin I/O behaviour with it (one index read per shard, one write per shard, ...). What is
counted, in ``counts`` (a :class:`collections.Counter`; missing kinds read as 0):

- ``"get"``: every single-object read request, whether made by ``get`` or inside ``get_many``
  (a ``get_many`` of n requests adds n). Missing keys count too.
- ``"get_range"``: those of the ``"get"`` requests whose byte range is not the full object.
- ``"get_many"``: calls of ``get_many``; ``"get_many_requests"``: the requests inside them.
- ``"set"``: values written, by ``set`` or inside ``set_many`` (one per key).
- ``"delete"``: keys deleted, by ``delete`` or inside ``delete_many`` (missing keys count too);
  ``"delete_prefix"``: calls of ``delete_prefix`` (forwarded whole, so its keys are not counted
  under ``"delete"``).
- ``"list"``: calls of ``list_prefix`` or ``list_dir``; ``"exists"``: calls of ``exists``.
- ``"snapshot"``: snapshots opened; each range read through a snapshot counts as a ``"get"``
  (a batch of them as one ``"get_many"``), and opening a snapshot of a missing object counts
  as one ``"get"`` (the request that found it missing).
- ``get_versioned`` counts as ``"get"``, ``set_if`` as ``"set"``, ``delete_if`` as ``"delete"``;
  ``"generation"``: calls of ``generation``.

``bytes_read`` sums the lengths of the values returned, ``bytes_written`` those of the values
written; ``gets_by_key`` and ``sets_by_key`` count requests per key. Every call is forwarded to
the wrapped store's own method, so its batching (``get_many``) still takes effect. Calls that
raise are not counted.
"""
from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable, Iterator

from collections.abc import Hashable, Sequence

from zarrx.store.base import (ByteRange, ObjectSnapshot, Request, Store, Versioned, as_buffer,
                              sequence_of)

__all__ = ["CountingStore"]


class CountingStore(Store):
    """``CountingStore(inner)``: forwards everything to ``inner`` and counts it."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        """Zero every counter."""
        with self._lock:
            self.counts: Counter[str] = Counter()
            self.gets_by_key: Counter[str] = Counter()
            self.sets_by_key: Counter[str] = Counter()
            self.bytes_read = 0
            self.bytes_written = 0

    @property
    def read_only(self) -> bool:  # type: ignore[override]
        return self.inner.read_only

    @property
    def supports_conditional_writes(self) -> bool:  # type: ignore[override]
        return self.inner.supports_conditional_writes

    def _count_reads(self, requests: Iterable[Request], results: Iterable[bytes | None]) -> None:
        with self._lock:
            for (key, rng), value in zip(requests, results):
                self.counts["get"] += 1
                self.gets_by_key[key] += 1
                if rng is not None and not rng.is_full:
                    self.counts["get_range"] += 1
                if value is not None:
                    self.bytes_read += len(value)

    # -- reads -------------------------------------------------------------------------------
    def get(self, key: str, byte_range: ByteRange | None = None) -> bytes | None:
        value = self.inner.get(key, byte_range)
        self._count_reads([(key, byte_range)], [value])
        return value

    def get_many(self, requests: Iterable[Request]) -> list[bytes | None]:
        reqs = sequence_of(requests)
        values = self.inner.get_many(reqs)
        with self._lock:
            self.counts["get_many"] += 1
            self.counts["get_many_requests"] += len(reqs)
        self._count_reads(reqs, values)
        return values

    def get_many_buffers(self, requests: Iterable[Request]) -> list:
        reqs = sequence_of(requests)
        values = self.inner.get_many_buffers(reqs)
        with self._lock:
            self.counts["get_many"] += 1
            self.counts["get_many_requests"] += len(reqs)
        self._count_reads(reqs, values)
        return values

    def snapshot(self, key: str) -> ObjectSnapshot | None:
        snap = self.inner.snapshot(key)
        with self._lock:
            self.counts["snapshot"] += 1
        if snap is None:
            self._count_reads([(key, None)], [None])
            return None
        return _CountingSnapshot(self, snap)

    def get_versioned(self, key: str, byte_range: ByteRange | None = None, *,
                      if_generation: Hashable | None = None) -> Versioned | None:
        got = self.inner.get_versioned(key, byte_range, if_generation=if_generation)
        self._count_reads([(key, byte_range)], [None if got is None else got[0]])
        return got

    def generation(self, key: str) -> Hashable | None:
        with self._lock:
            self.counts["generation"] += 1
        return self.inner.generation(key)

    def getsize(self, key: str) -> int | None:
        with self._lock:
            self.counts["getsize"] += 1
        return self.inner.getsize(key)

    def exists(self, key: str) -> bool:
        with self._lock:
            self.counts["exists"] += 1
        return self.inner.exists(key)

    def list_prefix(self, prefix: str) -> Iterator[str]:
        with self._lock:
            self.counts["list"] += 1
        return self.inner.list_prefix(prefix)

    def list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        with self._lock:
            self.counts["list"] += 1
        return self.inner.list_dir(prefix)

    # -- writes ------------------------------------------------------------------------------
    def _count_set(self, key: str, value: object) -> None:
        n = as_buffer(value, key).nbytes
        with self._lock:
            self.counts["set"] += 1
            self.sets_by_key[key] += 1
            self.bytes_written += n

    def set(self, key: str, value: bytes | bytearray | memoryview) -> None:
        self.inner.set(key, value)
        self._count_set(key, value)

    def set_many(self, items: Iterable[tuple[str, bytes | bytearray | memoryview]]) -> None:
        items = list(items)
        self.inner.set_many(items)
        for key, value in items:
            self._count_set(key, value)

    def set_if(self, key: str, value: bytes | bytearray | memoryview,
               if_generation: Hashable) -> Hashable:
        gen = self.inner.set_if(key, value, if_generation)
        self._count_set(key, value)
        return gen

    def delete(self, key: str) -> None:
        self.inner.delete(key)
        with self._lock:
            self.counts["delete"] += 1

    def delete_if(self, key: str, if_generation: Hashable) -> None:
        self.inner.delete_if(key, if_generation)
        with self._lock:
            self.counts["delete"] += 1

    def delete_many(self, keys: Iterable[str]) -> None:
        keys = list(keys)
        self.inner.delete_many(keys)
        with self._lock:
            self.counts["delete"] += len(keys)

    def delete_prefix(self, prefix: str) -> None:
        self.inner.delete_prefix(prefix)
        with self._lock:
            self.counts["delete_prefix"] += 1

    # -- plumbing ----------------------------------------------------------------------------
    def close(self) -> None:
        self.inner.close()

    def __getstate__(self) -> dict:
        return {"inner": self.inner}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["inner"])

    def __repr__(self) -> str:
        return f"CountingStore({self.inner!r})"


class _CountingSnapshot(ObjectSnapshot):
    """A snapshot of the wrapped store whose reads are counted like a ``get_many``."""

    def __init__(self, owner: CountingStore, snap: ObjectSnapshot) -> None:
        self._owner, self._snap = owner, snap
        self.key = snap.key

    @property
    def generation(self) -> Hashable | None:  # type: ignore[override]
        return self._snap.generation

    @property
    def size(self) -> int | None:  # type: ignore[override]
        return self._snap.size

    def read(self, ranges: Sequence[ByteRange | None]) -> list:
        values = self._snap.read(ranges)
        owner = self._owner
        with owner._lock:
            owner.counts["get_many"] += 1
            owner.counts["get_many_requests"] += len(ranges)
        owner._count_reads([(self.key, r) for r in ranges], values)
        return values

    def close(self) -> None:
        self._snap.close()
