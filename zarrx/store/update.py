"""Read-modify-write of one stored object, without lost updates.

Threads of this process take turns per object (:func:`~zarrx.store.locks.with_object_lock`). Other
processes and machines are detected through the store's generations: the object is read with
its generation and written back only if that generation still holds (``set_if``/``delete_if``);
when another writer got there first, the object is read again, the change is merged again and
the write retried, with backoff, a bounded number of times.

``zarrx.config.consistency = "none"`` (or a store without conditional writes) keeps the
in-process turn-taking but writes unconditionally: updates from other processes can then be lost.
"""
from __future__ import annotations

import random
import time
from collections.abc import Callable, Hashable

from zarrx import config
from zarrx.errors import ConflictError
from zarrx.store.base import ABSENT, ByteRange, Store
from zarrx.store.locks import with_object_lock

__all__ = ["PARTIAL", "update_object", "MAX_ATTEMPTS", "read_versioned_many",
           "write_conditional_many"]

MAX_ATTEMPTS = 64
_BACKOFF_START = 0.001
_BACKOFF_MAX = 0.05


class _Partial:
    """The value of a chunk whose new bytes depend on its current ones."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "PARTIAL"


PARTIAL = _Partial()


def conditional(store: Store) -> bool:
    """Whether updates of ``store`` are conditioned on generations."""
    return store.supports_conditional_writes and config.get("consistency") == "strict"


def update_object(store: Store, key: str,
                  modify: Callable[..., bytes | memoryview | None],
                  name: str, *, read: bool = True, byte_range: ByteRange | None = None,
                  with_generation: bool = False) -> Hashable | None:
    """Replace the object at ``key`` by ``modify(current bytes or None)`` (None: delete it).
    ``read=False``: the new value does not depend on the old one (``modify(None)`` is called
    once and written unconditionally). Returns the new generation when the store reported
    one. ``name`` names the object in a ConflictError. ``byte_range``: the bytes of the
    object ``modify`` is given (a metadata document is read up to one byte past the largest
    a reader takes; ``modify`` refuses a longer one rather than write it back).
    ``with_generation``: ``modify(old, generation)`` is called instead, with the generation
    ``old`` was read at (None when writes are not conditional), so that it may read more of
    that very version (a ConflictError it raises, the object having changed since, retries the
    update as a failed conditional write does)."""
    if with_generation:
        call = modify
    else:
        def call(old: bytes | memoryview | None, gen: Hashable | None) -> object:
            return modify(old)
    # (the object's lock held as with_object_lock holds it: fewer calls than a with block)
    return with_object_lock(store, key, _update, store, key, call, name, read, byte_range,
                            with_generation)


def _update(store: Store, key: str, call: Callable[..., object], name: str, read: bool,
            byte_range: ByteRange | None, with_generation: bool) -> Hashable | None:
    """:func:`update_object`, the object's lock held."""
    if not read:
        new = call(None, None)
        if new is None:
            store.delete(key)
            return None
        # a replace regardless of the old value is linearisable: the store orders it with
        # conditional writers (LocalStore: under their flock; object stores: If-Match is
        # evaluated atomically), so no read-modify-write in flight writes the old one back
        store.set(key, new)
        return None
    if not conditional(store):
        old = store.get(key, byte_range)
        new = call(old, None)
        if new is None:
            if old is not None:
                store.delete(key)
        else:
            store.set(key, new)
        return None
    delay = _BACKOFF_START
    for _ in range(MAX_ATTEMPTS):
        got = store.get_versioned(key, byte_range)
        old, gen = (None, ABSENT) if got is None else got
        try:
            new = call(old, None if got is None else gen)
        except ConflictError:
            if not with_generation:     # only its reads of that version may find it changed
                raise
        else:
            try:
                if new is None:
                    if old is not None:
                        store.delete_if(key, gen)
                    return None
                return store.set_if(key, new, gen)
            except ConflictError:
                pass
        time.sleep(delay * (0.5 + random.random()))
        delay = min(delay * 2, _BACKOFF_MAX)
    raise ConflictError(f"{name}: gave up after {MAX_ATTEMPTS} attempts to update it: "
                        f"another writer changed it every time")


def batched_as_single(store: object, many: str, *singles: str) -> bool:
    """Whether ``store``'s method ``many`` (a batch of calls) does what its methods ``singles``
    do one at a time: it is defined by the class that defines them, or by a subclass of it (a
    subclass extending ``set`` alone, say, to count or change what it is asked, would see a
    batch of the base class bypass it); False when it has no method ``many``. A ``many`` of the
    base :class:`Store` calls the single methods, so it always does."""
    mro = type(store).__mro__
    owner = next((c for c in mro if many in c.__dict__), None)
    if owner is None:
        return False
    return owner is Store or all(
        issubclass(owner, next(c for c in mro if name in c.__dict__)) for name in singles)


def read_versioned_many(store: Store, keys: list[str], byte_range: ByteRange | None
                        ) -> list[tuple[object, Hashable] | None]:
    """``store.get_versioned`` of each of ``keys`` (the bytes and the generation they were read
    at, None for a missing key): one call for a store offering ``get_versioned_many`` (a
    :class:`~zarrx.store.memory.MemoryStore`, a :class:`~zarrx.store.local.LocalStore`) that
    reads as its ``get_versioned`` does, else one per key."""
    if batched_as_single(store, "get_versioned_many", "get_versioned"):
        return store.get_versioned_many(keys, byte_range)  # type: ignore[attr-defined]
    return [store.get_versioned(k, byte_range) for k in keys]


def write_conditional_many(store: Store, items: list[tuple[str, object, Hashable | None]]
                           ) -> list[int]:
    """Write each ``(key, new bytes or None, generation read)`` of ``items`` only if the key
    still holds that generation (``ABSENT`` when it was missing): ``set_if`` the new bytes, or
    ``delete_if`` when None (nothing, when it was missing). The positions in ``items`` of the
    writes refused because another writer changed the object meanwhile (they are to be read,
    merged and written again); one call for a store offering ``set_if_many`` that writes as its
    ``set_if`` and ``delete_if`` do."""
    if batched_as_single(store, "set_if_many", "set_if", "delete_if"):
        return store.set_if_many(items)  # type: ignore[attr-defined]
    failed = []
    for i, (key, new, gen) in enumerate(items):
        try:
            if new is not None:
                store.set_if(key, new, gen)             # type: ignore[arg-type]
            elif gen is not ABSENT:
                store.delete_if(key, gen)
        except ConflictError:
            failed.append(i)
    return failed
