"""In-process locks keyed by (store, key): threads of one process that update the same stored
object (a read-modify-write of a shard or of a partly written chunk) take turns.

One lock per object being updated, made on first use and dropped when its last user leaves, so
updates of different objects never wait for each other (a remote write can hold its object's
lock for seconds). A thread never holds two of them (a write operation holds one object's lock
at a time, and never while it waits for pool work), so they cannot deadlock. Processes and
machines are kept apart by the store's generations instead (conditional writes).
"""
from __future__ import annotations

import os
import threading
from collections.abc import Hashable

from zarrx.store.base import Store

__all__ = ["KeyedLocks", "object_lock"]


class _Held:
    """The lock of one name and how many threads hold or wait for it."""

    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.users = 0


class KeyedLocks:
    """``with locks(name):`` holds the lock of ``name`` (any hashable): one lock per name in
    use, made on first use and dropped when its last user leaves, so different names never
    wait for each other."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._table: dict[Hashable, _Held] = {}
        os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        self._guard, self._table = threading.Lock(), {}

    def __call__(self, name: Hashable) -> _Holding:
        return _Holding(self, name)

    def __len__(self) -> int:
        """How many names have a lock now (none once every holder has left)."""
        with self._guard:
            return len(self._table)


class _Holding:
    __slots__ = ("_locks", "_name", "_held")

    def __init__(self, locks: KeyedLocks, name: Hashable) -> None:
        self._locks, self._name = locks, name

    def __enter__(self) -> None:
        locks = self._locks
        with locks._guard:
            held = locks._table.get(self._name)
            if held is None:
                held = locks._table[self._name] = _Held()
            held.users += 1
        self._held = held
        try:
            held.lock.acquire()
        except BaseException:                # interrupted while waiting: not a user any more
            self._leave()
            raise

    def __exit__(self, *exc: object) -> None:
        self._held.lock.release()
        self._leave()

    def _leave(self) -> None:
        locks, held = self._locks, self._held
        with locks._guard:
            held.users -= 1
            if not held.users:
                del locks._table[self._name]


_objects = KeyedLocks()


def _identity(store: Store) -> object:
    """Stores that name the same objects share an identity (two LocalStores of one root, two
    stores over one backend object)."""
    shared = store.shared_identity
    if shared is not None:
        return shared
    root = getattr(store, "root", None)
    if isinstance(root, str):
        return (type(store).__name__, root)
    inner = getattr(store, "inner", None)
    if isinstance(inner, Store):
        return _identity(inner)
    return id(store)


def object_lock(store: Store, key: str) -> _Holding:
    """``with object_lock(store, key):`` holds the lock of that stored object."""
    return _objects((_identity(store), key))


def held_objects() -> int:
    """How many objects have a lock now (for tests: none once every update has finished)."""
    return len(_objects)
