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

from zarrx.store.base import Store

__all__ = ["object_lock"]


class _Held:
    """The lock of one object and how many threads hold or wait for it."""

    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.users = 0


_guard = threading.Lock()
_table: dict[tuple[object, str], _Held] = {}


def _reset_after_fork() -> None:
    global _guard, _table
    _guard, _table = threading.Lock(), {}


os.register_at_fork(after_in_child=_reset_after_fork)


def _identity(store: Store) -> object:
    """Stores that name the same objects share an identity (two LocalStores of one root)."""
    root = getattr(store, "root", None)
    if isinstance(root, str):
        return (type(store).__name__, root)
    inner = getattr(store, "inner", None)
    if isinstance(inner, Store):
        return _identity(inner)
    return id(store)


class object_lock:  # noqa: N801 - used as ``with object_lock(store, key):``
    """``with object_lock(store, key):`` holds the lock of that stored object."""

    __slots__ = ("_name", "_held")

    def __init__(self, store: Store, key: str) -> None:
        self._name = (_identity(store), key)

    def __enter__(self) -> None:
        with _guard:
            held = _table.get(self._name)
            if held is None:
                held = _table[self._name] = _Held()
            held.users += 1
        self._held = held
        try:
            held.lock.acquire()
        except BaseException:                # interrupted while waiting: not a user any more
            self._leave()
            raise

    def _leave(self) -> None:
        held = self._held
        with _guard:
            held.users -= 1
            if not held.users:
                del _table[self._name]

    def __exit__(self, *exc: object) -> None:
        self._held.lock.release()
        self._leave()


def held_objects() -> int:
    """How many objects have a lock now (for tests: none once every update has finished)."""
    with _guard:
        return len(_table)
