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
- generations: ``"generation"`` (calls of ``generation``, and keys asked for by
  ``generations``; ``"generations"`` counts the calls of that); ``get_versioned`` counts as a
  ``"get"`` plus ``"get_versioned"``; ``set_if`` as a ``"set"`` plus ``"set_if"``; ``delete_if``
  as a ``"delete"`` plus ``"delete_if"``; ``"conflict"`` counts the ConflictErrors they raised.
  ``"snapshot"`` counts snapshots opened (one of a missing object also counts as a ``"get"``:
  the request that found it missing); each range read through one counts as a ``"get"`` (and
  ``"get_range"`` when partial), and ``"snapshot_read"`` counts the ``read`` calls.

``bytes_read`` sums the lengths of the values returned, ``bytes_written`` those of the values
written; ``gets_by_key`` and ``sets_by_key`` count requests per key. Every call is forwarded to
the wrapped store's own method, so its batching (``get_many``) still takes effect. Calls that
raise are not counted (except under ``"conflict"``).
"""
from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Hashable, Iterable, Iterator, Sequence

from zarrx import _fork
from zarrx.errors import ConflictError
from zarrx.store.base import (ByteRange, ObjectSnapshot, Request, Store, Versioned, as_buffer,
                              sequence_of)

__all__ = ["CountingStore"]


class CountingStore(Store):
    """``CountingStore(inner)``: forwards everything to ``inner`` and counts it."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self._lock = threading.Lock()
        self.reset()
        _fork.track(self)

    def _after_fork(self) -> None:
        _fork.reinit(self._lock)

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

    @property
    def supports_deletes(self) -> bool:  # type: ignore[override]
        return self.inner.supports_deletes

    @property
    def removes_unnamable(self) -> bool:  # type: ignore[override]
        return self.inner.removes_unnamable

    @property
    def latency_bound(self) -> bool:  # type: ignore[override]
        return self.inner.latency_bound

    @property
    def parallel_writes(self) -> bool:  # type: ignore[override]
        return self.inner.parallel_writes

    @property
    def ranges_read_whole(self) -> bool:  # type: ignore[override]
        return self.inner.ranges_read_whole

    def stored_size(self, key: str) -> int | None:
        with self._lock:
            self.counts["getsize"] += 1
        return self.inner.stored_size(key)

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

    def getsize(self, key: str) -> int | None:
        with self._lock:
            self.counts["getsize"] += 1
        return self.inner.getsize(key)

    def exists(self, key: str) -> bool:
        with self._lock:
            self.counts["exists"] += 1
        return self.inner.exists(key)

    def key_problem(self, key: str) -> str | None:
        return self.inner.key_problem(key)

    def list_prefix(self, prefix: str) -> Iterator[str]:
        with self._lock:
            self.counts["list"] += 1
        return self.inner.list_prefix(prefix)

    def list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        with self._lock:
            self.counts["list"] += 1
        return self.inner.list_dir(prefix)

    # -- generations -------------------------------------------------------------------------
    def _count(self, *kinds: str) -> None:
        with self._lock:
            for kind in kinds:
                self.counts[kind] += 1

    def generation(self, key: str) -> Hashable | None:
        gen = self.inner.generation(key)
        self._count("generation")
        return gen

    def generations(self, keys: Sequence[str]) -> list[Hashable | None]:
        keys = list(keys)
        gens = self.inner.generations(keys)
        with self._lock:
            self.counts["generation"] += len(keys)
            self.counts["generations"] += 1
        return gens

    def get_versioned(self, key: str, byte_range: ByteRange | None = None, *,
                      if_generation: Hashable | None = None) -> Versioned | None:
        try:
            got = self.inner.get_versioned(key, byte_range, if_generation=if_generation)
        except ConflictError:
            self._count("conflict")
            raise
        self._count_reads([(key, byte_range)], [None if got is None else got[0]])
        self._count("get_versioned")
        return got

    def snapshot(self, key: str) -> ObjectSnapshot | None:
        snap = self.inner.snapshot(key)
        self._count("snapshot")
        if snap is None:                   # the request that found the object missing
            self._count_reads([(key, None)], [None])
            return None
        return _CountingSnapshot(self, snap)

    def set_if(self, key: str, value: bytes | bytearray | memoryview,
               if_generation: Hashable | None) -> Hashable:
        try:
            gen = self.inner.set_if(key, value, if_generation)
        except ConflictError:
            self._count("conflict")
            raise
        self._count_set(key, value)
        self._count("set_if")
        return gen

    def delete_if(self, key: str, if_generation: Hashable | None) -> None:
        try:
            self.inner.delete_if(key, if_generation)
        except ConflictError:
            self._count("conflict")
            raise
        self._count("delete", "delete_if")

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

    def delete(self, key: str) -> None:
        self.inner.delete(key)
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
    """Forwards to the wrapped store's snapshot and counts its reads."""

    def __init__(self, owner: CountingStore, inner: ObjectSnapshot) -> None:
        self._owner = owner
        self._inner = inner
        self.key = inner.key

    @property
    def generation(self) -> Hashable | None:  # type: ignore[override]
        return self._inner.generation

    @property
    def size(self) -> int | None:  # type: ignore[override]
        return self._inner.size

    @property
    def whole_reads(self) -> bool:  # type: ignore[override]
        return self._inner.whole_reads

    def read(self, ranges: Sequence[ByteRange | None]) -> list[bytes | bytearray | memoryview]:
        ranges = list(ranges)
        try:
            values = self._inner.read(ranges)
        except ConflictError:
            self._owner._count("conflict")
            raise
        self._owner._count_reads([(self.key, r) for r in ranges], values)
        self._owner._count("snapshot_read")
        return values

    def close(self) -> None:
        self._inner.close()
