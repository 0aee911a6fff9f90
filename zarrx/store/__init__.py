"""Stores: the key -> bytes layer every format operation reads and writes through.

``make_store(obj, mode)`` turns what a user passes (a path, a ``.zip`` path, or a store) into a
:class:`Store`.
"""
from __future__ import annotations

import os

from zarrx.errors import ConflictError, ReadOnlyError, StoreError
from zarrx.store.base import ABSENT, ByteRange, ObjectSnapshot, Store
from zarrx.store.counting import CountingStore
from zarrx.store.local import LocalStore
from zarrx.store.memory import MemoryStore
from zarrx.store.zip import ZipStore

__all__ = ["ByteRange", "Store", "MemoryStore", "LocalStore", "ZipStore", "CountingStore",
           "make_store", "ABSENT", "ObjectSnapshot", "ConflictError"]

OPEN_MODES = ("r", "r+", "a", "w", "w-")
_ZIP_MODES = {"r": "r", "r+": "a", "a": "a", "w": "w", "w-": "x"}


def make_store(obj: object, mode: str = "a") -> Store:
    """The store for ``obj`` opened for ``mode`` (``r``, ``r+``, ``a``, ``w``, ``w-``).

    - a :class:`Store` is returned as it is (a read-only store with a writing mode raises
      :class:`~zarrx.errors.ReadOnlyError`);
    - a path (``str`` or ``os.PathLike``) ending in ``.zip`` opens a :class:`ZipStore`;
    - any other path is a directory: a :class:`LocalStore`, read-only for mode ``r``.
    """
    if mode not in OPEN_MODES:
        raise StoreError(f"make_store: mode: expected one of {', '.join(OPEN_MODES)}, "
                         f"found {mode!r}")
    if isinstance(obj, Store):
        if obj.read_only and mode != "r":
            raise ReadOnlyError(f"make_store: {obj!r} is read-only, cannot open it with mode "
                                f"{mode!r}")
        return obj
    if isinstance(obj, (str, os.PathLike)):
        path = os.fspath(obj)
        if not isinstance(path, str):
            raise StoreError(f"make_store: expected a str path, found bytes {path!r}")
        if path.startswith("file://"):
            path = path[len("file://"):]
        elif "://" in path:
            raise StoreError(f"make_store: {path!r}: remote URLs are not supported; expected a "
                             "local path or a Store")
        if path.lower().endswith(".zip"):
            if mode == "r+" and not os.path.isfile(path):
                raise StoreError(f"make_store: {path!r}: mode 'r+' needs an existing archive")
            return ZipStore(path, _ZIP_MODES[mode])
        return LocalStore(path, mode=mode)
    raise StoreError(f"make_store: expected a path (str or os.PathLike) or a zarrx Store, "
                     f"found {type(obj).__name__} {obj!r}")
