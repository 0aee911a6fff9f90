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
from zarrx.store._dictversion import version as dict_version
from zarrx.store.base import check_prefix
from zarrx.store.keyindex import KeyIndex
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

    __slots__ = ("data", "buffers", "state")

    def __init__(self, data: dict, state: _DictState) -> None:
        self.data = data
        self.buffers = any(_is_zarr_buffer(v) for v in data.values())
        self.state = state

    def _changed(self, before: int | None) -> None:
        """After a write through the stores (under their lock): when the dict was as their
        key index last saw it, it is now as the index has it (the stores keep it in step with
        their own writes); a change by anyone else leaves the versions apart, and the index
        is made again at the next listing."""
        state = self.state
        if before is not None and before == state.seen:
            state.seen = dict_version(self.data)

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
        value = self._written(value)
        before = dict_version(self.data)
        self.data[key] = value
        self._changed(before)

    def update(self, items: Iterable[tuple[str, object]]) -> None:
        written = [(k, self._written(v)) for k, v in items]
        before = dict_version(self.data)
        self.data.update(written)
        self._changed(before)

    def pop(self, key: str, default: object = None) -> object:
        before = dict_version(self.data)
        value = self.data.pop(key, default)
        self._changed(before)
        return value

    def __delitem__(self, key: str) -> None:
        before = dict_version(self.data)
        del self.data[key]
        self._changed(before)

    def __contains__(self, key: object) -> bool:
        return key in self.data

    def __iter__(self) -> Iterator[str]:
        return iter(list(self.data))

    def keys(self) -> list[str]:
        return list(self.data)

    def __len__(self) -> int:
        return len(self.data)


class _DictState:
    """The generations, lock and key index of the stores over one dict. ``index``: the
    dict's keys sorted (:class:`~zarrx.store.keyindex.KeyIndex`), right while the dict's
    version is ``seen`` (None: not made yet, or no versions on this interpreter)."""

    __slots__ = ("gens", "lock", "index", "seen", "__weakref__")

    def __init__(self, gens: dict, lock: threading.Lock) -> None:
        self.gens, self.lock = gens, lock
        self.index: KeyIndex | None = None
        self.seen: int | None = None


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
        self._dict = data                       # the caller's dict itself, not a copy
        with _STATES_LOCK:
            state = _STATES.get(id(data))
            if state is None:
                state = _STATES[id(data)] = _DictState({}, self._lock)
        self._data = _CallerDict(data, state)   # type: ignore[assignment]
        with state.lock:            # keys written or deleted in the dict by others since
            for key in [k for k in state.gens if k not in data]:
                del state.gens[key]
            for key in data:
                if key not in state.gens:
                    state.gens[key] = next(_COUNTER)
        self._state = state
        self._gens, self._lock = state.gens, state.lock

    # -- listings: the caller may change the dict directly, which its version tells ----------
    @property                                   # type: ignore[override]
    def _index(self) -> KeyIndex | None:
        """The key index the writes keep in step (the stores' over this dict)."""
        state = self.__dict__.get("_state")
        return None if state is None else state.index

    @_index.setter
    def _index(self, value: KeyIndex | None) -> None:
        state = self.__dict__.get("_state")
        if state is not None:                   # (after a fork: made again when next listed)
            state.index = state.seen = None

    def _fresh_index(self) -> KeyIndex | None:
        """The key index, made again when the dict changed other than through these stores
        (the caller holds the lock); None where the interpreter keeps no dict versions."""
        state = self._state
        now = dict_version(self._dict)
        if now is None:
            return None
        if state.index is None or now != state.seen:
            state.index, state.seen = KeyIndex(self._dict), now
        return state.index

    def list_prefix(self, prefix: str) -> Iterator[str]:
        """As :meth:`MemoryStore.list_prefix`: a bisection plus the matches, while the dict's
        version says no one else changed it since the index was made (else a scan makes it
        again); a scan of every key where the interpreter keeps no dict versions."""
        check_prefix(prefix, self)
        with self._lock:
            index = self._fresh_index()
            if index is not None:
                return iter(index.prefixed(prefix))
            keys = list(self._dict)
        return (k for k in keys if k.startswith(prefix))

    def list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        check_prefix(prefix, self)
        with self._lock:
            index = self._fresh_index()
            if index is not None:
                return index.children(prefix if not prefix or prefix.endswith("/")
                                      else prefix + "/")
        return Store.list_dir(self, prefix)

    @property
    def shared_identity(self) -> tuple:  # type: ignore[override]
        """Stores over one dict share locks."""
        return ("MemoryStore", id(self._dict))

    def __getstate__(self) -> dict:
        """Pickled as a copy of the keys and values (``bytes``), as a ``MemoryStore``."""
        return {"data": dict(self._data), "read_only": self.read_only}  # type: ignore[call-overload]

    def __repr__(self) -> str:
        return f"DictStore(<{len(self._dict)} keys>)"
