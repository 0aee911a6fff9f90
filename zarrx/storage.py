"""zarr-python's name for the store module: ``zarrx.storage.LocalStore`` is
:class:`zarrx.store.LocalStore`, and so on (``FsspecStore`` and ``ObjectStore`` are the remote
stores, with zarr-python's ``FsspecStore.from_url``); plus :class:`DictStore`, what a ``dict``
passed as a store becomes."""
from __future__ import annotations

from typing import TYPE_CHECKING

from zarrx.errors import StoreError
from zarrx.store import (ByteRange, CountingStore, LocalStore, MemoryStore, Store,  # noqa: F401
                         ZipStore, make_store)

__all__ = ["ByteRange", "CountingStore", "LocalStore", "MemoryStore", "Store", "ZipStore",
           "make_store", "DictStore", "FsspecStore", "ObjectStore"]

if TYPE_CHECKING:
    from zarrx.store.remote.fsspecstore import FsspecStore
    from zarrx.store.remote.objectstore import ObjectStore


def __getattr__(name: str):
    # the remote stores load their optional packages (fsspec, obstore) on first use
    if name == "FsspecStore":
        from zarrx.store.remote.fsspecstore import FsspecStore
        return FsspecStore
    if name == "ObjectStore":
        from zarrx.store.remote.objectstore import ObjectStore
        return ObjectStore
    raise AttributeError(name)


class DictStore(MemoryStore):
    """A :class:`MemoryStore` whose keys and values live in a ``dict`` the caller owns, as
    zarr-python's ``zarr.open({})`` does: writes appear in the dict, so opening the same dict
    again sees them. Keys are ``str`` and values ``bytes``; a dict holding anything else is
    refused with a :class:`~zarrx.errors.StoreError` naming the first such entry."""

    def __init__(self, data: dict, *, read_only: bool = False) -> None:
        for key, value in data.items():
            if not isinstance(key, str) or not isinstance(value, bytes):
                raise StoreError(f"DictStore: expected str keys and bytes values, found "
                                 f"{type(key).__name__} key {key!r} with "
                                 f"{type(value).__name__} value")
        super().__init__(data, read_only=read_only)
        self._data = data           # the caller's dict itself, not a copy

    def __repr__(self) -> str:
        return f"DictStore(<{len(self._data)} keys>)"
