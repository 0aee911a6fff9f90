"""Versioned reads and conditional writes of many keys of a
:class:`~zarrx.store.local.LocalStore` in one call: ``get_versioned_many`` and
``set_if_many``, what the batch merges of partial writes
(:mod:`zarrx.batch_merge`, through :func:`zarrx.store.update.read_versioned_many` and
:func:`~zarrx.store.update.write_conditional_many`) read and write a slab of chunks with.

Each does what the single calls (``get_versioned``; ``set_if``, ``delete_if``) do one after the
other — the same values, generations, conflicts, files and errors — with the system calls of
every key made by the kernel (:mod:`zarrx.store._localversions`, :mod:`zarrx.store._localcond`) without the GIL. An item the
kernel does not take (see there) is handed to the single call, in its turn. The methods are
set on ``LocalStore`` itself, so :func:`~zarrx.store.update.batched_as_single` takes them for a
``LocalStore`` and for a subclass that keeps its single-object methods, never for one
overriding them.
"""
from __future__ import annotations

import os
from collections.abc import Hashable
from typing import Any

from zarrx.errors import ConflictError
from zarrx.store._localcond import write_conditional
from zarrx.store._localversions import read_versioned
from zarrx.store.base import ABSENT, ByteRange, Versioned
from zarrx.store.localboxes import READ_FLAGS, RESOLVE
from zarrx.store.localsnap import RecentGeneration

__all__ = ["get_versioned_many", "set_if_many", "head_limit"]

_SLOW = object()            # the kernel's answer for a key the Python path must read
_BIG = 2 ** 62              # ranges reaching past this are read by the Python path


def head_limit(rng: ByteRange | None) -> int | None:
    """-1 for a whole-object request, ``n`` for the first ``n`` bytes (what the kernel's whole
    read serves too), None for any other range (read in Python)."""
    if rng is None:
        return -1
    if rng.suffix is None and rng.offset == 0:
        return -1 if rng.length is None else rng.length
    return None


def _range_args(rng: ByteRange | None) -> tuple[int, int, int] | None:
    """``(mode, a, b)`` of ``read_versioned`` for ``rng``; None when it is past what the
    kernel takes."""
    if rng is None or rng.is_full:
        return 0, 0, 0
    if rng.suffix is not None:
        return (2, 0, rng.suffix) if rng.suffix < _BIG else None
    length = -1 if rng.length is None else rng.length
    return (1, rng.offset, length) if rng.offset < _BIG and length < _BIG else None


def get_versioned_many(self: Any, keys: list[str], byte_range: ByteRange | None = None
                       ) -> list[Versioned | None]:
    """``get_versioned(key, byte_range)`` of each of ``keys``, in order."""
    args = _range_args(byte_range)
    real = self._tree.real_root()
    if args is None or real is None or not keys:
        return [self.get_versioned(k, byte_range) for k in keys]
    got = read_versioned(real, keys, READ_FLAGS, RESOLVE, _SLOW, *args, RecentGeneration)
    if _SLOW in got:
        return [self.get_versioned(k, byte_range) if g is _SLOW else g
                for g, k in zip(got, keys)]
    return got


def set_if_many(self: Any, items: list[tuple[str, object, Hashable | None]]) -> list[int]:
    """Each ``(key, new value or None, generation)`` of ``items`` written as ``set_if(key,
    new, generation)`` would (``delete_if(key, generation)`` for None: nothing for a key
    missing as expected, a conflict when one is there now), one after the other; the
    positions of those refused by a ConflictError (another writer changed the object since
    that generation). Any other error is raised as the single call raises it, the items
    before it written and those after it not. Kernel writes need ``flock`` to order the
    threads of a process (a local file system), as the box writer's do; elsewhere (and
    with ``_put`` None: every write in Python) each item is a single call."""
    items = items if type(items) is list else list(items)
    n = len(items)
    failed: list[int] = []
    real = None
    if n and self.supports_conditional_writes and not self.read_only \
            and self._put is not None:
        real = self._tree.real_root()
        if real is not None and not self._flock_orders_threads(real):
            real = None
    i = 0
    while i < n:
        if real is not None:
            i, err = write_conditional(real, items, i, RESOLVE, self.fsync, ABSENT, failed)
            if i == n:
                break
            if err:                     # written; the fsync of its folder failed
                exc = OSError(err, os.strerror(err))
                raise self._fail("conditionally write", items[i][0], exc) from exc
        key, new, gen = items[i]
        try:
            if new is not None:
                self.set_if(key, new, gen)
            else:
                self.delete_if(key, gen)
        except ConflictError:
            failed.append(i)
        i += 1
    return failed
