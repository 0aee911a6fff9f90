"""zarr-python's name for the store module: ``zarrx.storage.LocalStore`` is
:class:`zarrx.store.LocalStore`, and so on (``FsspecStore`` and ``ObjectStore`` are the remote
stores, with zarr-python's ``FsspecStore.from_url``); plus :class:`DictStore`, what a ``dict``
passed as a store becomes, and ``StoreLike``, the type of a store argument."""
from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from zarrx import _fork
from zarrx.errors import StoreError
from zarrx.store import (ByteRange, CountingStore, LocalStore, MemoryStore, Store,  # noqa: F401
                         ZipStore, make_store)
from zarrx.store.memory import _COUNTER

__all__ = ["ByteRange", "CountingStore", "LocalStore", "MemoryStore", "Store", "ZipStore",
           "make_store", "DictStore", "FsspecStore", "ObjectStore", "StoreLike"]

#: what the functions taking a store take (a zarr-python store object is taken too)
StoreLike = Store | str | os.PathLike | dict

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


def _is_zarr_buffer(value: object) -> bool:
    """A zarr-python ``Buffer`` (what its stores keep in a dict passed as a store)."""
    return hasattr(value, "as_numpy_array") and hasattr(value, "to_bytes")


class _CallerDict:
    """The caller's dict as the value map of a :class:`DictStore`: values are read as the
    store reads its own (``bytes``, or a read-only view of a zarr-python ``Buffer``), and
    written as the dict holds them: ``bytes``, or zarr-python ``Buffer`` objects when the dict
    held those when the store was made (so zarr-python keeps reading it)."""

    __slots__ = ("data", "buffers")

    def __init__(self, data: dict) -> None:
        self.data = data
        self.buffers = any(_is_zarr_buffer(v) for v in data.values())

    @staticmethod
    def _read(value: object) -> object:
        if value is None or type(value) is bytes:
            return value
        if _is_zarr_buffer(value):
            view = value.as_numpy_array().view("u1").reshape(-1)    # type: ignore[attr-defined]
            view.flags.writeable = False
            return view
        return bytes(value)                                         # type: ignore[call-overload]

    def _written(self, value: object) -> object:
        if self.buffers:
            from zarr.core.buffer import default_buffer_prototype
            return default_buffer_prototype().buffer.from_bytes(memoryview(value))  # type: ignore[arg-type]
        return value if type(value) is bytes else bytes(memoryview(value))  # type: ignore[arg-type]

    def get(self, key: str, default: object = None) -> object:
        value = self.data.get(key)
        return default if value is None else self._read(value)

    def __getitem__(self, key: str) -> bytes:
        """A copy, as ``bytes`` (for comparing and pickling; reads use :meth:`get`)."""
        value = self.data[key]
        return value if type(value) is bytes else bytes(memoryview(self._read(value)))  # type: ignore[arg-type]

    def __setitem__(self, key: str, value: object) -> None:
        self.data[key] = self._written(value)

    def update(self, items: Iterable[tuple[str, object]]) -> None:
        self.data.update((k, self._written(v)) for k, v in items)

    def pop(self, key: str, default: object = None) -> object:
        return self.data.pop(key, default)

    def __delitem__(self, key: str) -> None:
        del self.data[key]

    def __contains__(self, key: object) -> bool:
        return key in self.data

    def __iter__(self) -> Iterator[str]:
        return iter(list(self.data))

    def keys(self) -> list[str]:
        return list(self.data)

    def __len__(self) -> int:
        return len(self.data)


class _DictState:
    """The generations and lock of the stores over one dict."""

    __slots__ = ("gens", "lock", "__weakref__")

    def __init__(self, gens: dict, lock: threading.Lock) -> None:
        self.gens, self.lock = gens, lock


#: id of a dict -> the state its stores share, while one of them lives (and so the dict)
_STATES: weakref.WeakValueDictionary[int, _DictState] = weakref.WeakValueDictionary()
_STATES_LOCK = _fork.lock()


class DictStore(MemoryStore):
    """A :class:`MemoryStore` whose keys and values live in a ``dict`` the caller owns, as
    zarr-python's ``zarr.open({})`` does: writes appear in the dict, so opening the same dict
    again sees them. Keys are ``str``; values are ``bytes`` (or bytes-like), or the ``Buffer``
    objects zarr-python keeps in a dict it wrote, which zarrx then also writes. A dict holding
    anything else is refused with a :class:`~zarrx.errors.StoreError` naming the first such
    entry. The stores over one dict share its generations and locks, so handles opened on it
    one after another (``zarrx.open(d)`` twice) update it as one store does."""

    def __init__(self, data: dict, *, read_only: bool = False) -> None:
        for key, value in data.items():
            if not isinstance(key, str) or not (isinstance(value, (bytes, bytearray, memoryview))
                                                or _is_zarr_buffer(value)):
                raise StoreError(f"DictStore: expected str keys and bytes values, found "
                                 f"{type(key).__name__} key {key!r} with "
                                 f"{type(value).__name__} value")
        super().__init__(None, read_only=read_only)
        self._data = _CallerDict(data)          # type: ignore[assignment]
        self._index = None      # listed by a scan: the caller may change the dict directly
        self._dict = data                       # the caller's dict itself, not a copy
        with _STATES_LOCK:
            state = _STATES.get(id(data))
            if state is None:
                state = _STATES[id(data)] = _DictState({}, self._lock)
        with state.lock:            # keys written or deleted in the dict by others since
            for key in [k for k in state.gens if k not in data]:
                del state.gens[key]
            for key in data:
                if key not in state.gens:
                    state.gens[key] = next(_COUNTER)
        self._state = state
        self._gens, self._lock = state.gens, state.lock

    @property
    def shared_identity(self) -> tuple:  # type: ignore[override]
        """Stores over one dict share locks."""
        return ("MemoryStore", id(self._dict))

    def __getstate__(self) -> dict:
        """Pickled as a copy of the keys and values (``bytes``), as a ``MemoryStore``."""
        return {"data": dict(self._data), "read_only": self.read_only}  # type: ignore[call-overload]

    def __repr__(self) -> str:
        return f"DictStore(<{len(self._dict)} keys>)"
