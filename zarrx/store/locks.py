"""In-process locks keyed by (store, key): threads of one process that update the same stored
object (a read-modify-write of a shard or of a partly written chunk) take turns.

A fixed table of striped locks: no registry to grow or clean up, and a thread never holds two of
them (a write operation holds one object's lock at a time, and never while it waits for pool
work), so striping cannot deadlock. Processes and machines are kept apart by the store's
generations instead (conditional writes).
"""
from __future__ import annotations

import os
import threading

from zarrx.store.base import Store

__all__ = ["object_lock"]

_STRIPES = 1024
_locks = [threading.Lock() for _ in range(_STRIPES)]


def _reset_after_fork() -> None:
    global _locks
    _locks = [threading.Lock() for _ in range(_STRIPES)]


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


def object_lock(store: Store, key: str) -> threading.Lock:
    return _locks[hash((_identity(store), key)) % _STRIPES]
