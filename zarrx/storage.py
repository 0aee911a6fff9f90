"""zarr-python's name for the store module: ``zarrx.storage.LocalStore`` is
:class:`zarrx.store.LocalStore`, and so on (``FsspecStore`` and ``ObjectStore`` are the remote
stores, with zarr-python's ``FsspecStore.from_url``); plus :class:`DictStore`, what a ``dict``
passed as a store becomes."""
from __future__ import annotations

import threading
import weakref
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


class _DictState:
    """The generations and lock of the stores over one dict."""

    __slots__ = ("gens", "lock", "__weakref__")

    def __init__(self, gens: dict, lock: threading.Lock) -> None:
        self.gens, self.lock = gens, lock


#: id of a dict -> the state its stores share, while one of them lives (and so the dict)
_STATES: weakref.WeakValueDictionary[int, _DictState] = weakref.WeakValueDictionary()
_STATES_LOCK = threading.Lock()


class DictStore(MemoryStore):
    """A :class:`MemoryStore` whose keys and values live in a ``dict`` the caller owns, as
    zarr-python's ``zarr.open({})`` does: writes appear in the dict, so opening the same dict
    again sees them. Keys are ``str`` and values ``bytes``; a dict holding anything else is
    refused with a :class:`~zarrx.errors.StoreError` naming the first such entry. The stores
    over one dict share its generations and locks, so handles opened on it one after another
    (``zarrx.open(d)`` twice) update it as one store does."""

    def __init__(self, data: dict, *, read_only: bool = False) -> None:
        for key, value in data.items():
            if not isinstance(key, str) or not isinstance(value, bytes):
                raise StoreError(f"DictStore: expected str keys and bytes values, found "
                                 f"{type(key).__name__} key {key!r} with "
                                 f"{type(value).__name__} value")
        super().__init__(data, read_only=read_only)
        self._data = data           # the caller's dict itself, not a copy
        with _STATES_LOCK:
            state = _STATES.get(id(data))
            if state is None:
                state = _STATES[id(data)] = _DictState(self._gens, self._lock)
        with state.lock:            # keys written or deleted in the dict by others since
            for key in [k for k in state.gens if k not in data]:
                del state.gens[key]
            for key in data:
                state.gens.setdefault(key, self._gens[key])
        self._state = state
        self._gens, self._lock = state.gens, state.lock

    def __eq__(self, other: object) -> bool:
        """Stores of the same dict (and read-only state) are equal, so the nodes opened from
        one dict twice compare equal."""
        return isinstance(other, DictStore) and other._data is self._data \
            and other.read_only == self.read_only

    def __hash__(self) -> int:
        return hash((DictStore, id(self._data), self.read_only))

    def __repr__(self) -> str:
        return f"DictStore(<{len(self._data)} keys>)"
