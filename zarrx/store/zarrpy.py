"""zarr-python stores as zarrx stores.

``make_store`` hands a zarr-python store to :func:`wrap_zarr_store`:

- ``zarr.storage.LocalStore`` becomes a zarrx :class:`~zarrx.store.local.LocalStore` on the
  same directory (the same files, zarrx's own I/O);
- ``FsspecStore`` and ``ObjectStore`` become zarrx's remote stores on the same filesystem or
  obstore store (see :mod:`zarrx.store.remote.dispatch`);
- any other zarr-python store (``MemoryStore``, ``ZipStore``, ``LoggingStore``, a
  ``WrapperStore``, a third-party store) is driven through its own asynchronous API by
  :class:`ZarrPythonStore`: every call runs on zarr-python's event loop, and a batch of reads or
  writes is one call with its requests in flight together.

A wrapped store offers no conditional writes (zarr-python's stores have none), so zarrx writes
to it as to any store without them (see docs/RELIABILITY.md).
"""
from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator
from typing import Any

from zarrx.errors import StoreError
from zarrx.store.base import (ByteRange, Request, Store, as_buffer, check_key,
                              check_prefix)
from zarrx.store.remote.urls import redact_text

__all__ = ["ZarrPythonStore", "is_zarr_store", "wrap_zarr_store"]


def is_zarr_store(obj: object) -> bool:
    """True for an instance of zarr-python's ``zarr.abc.store.Store``."""
    mod = type(obj).__module__ or ""
    if "zarr" not in mod and not any("zarr" in (c.__module__ or "") for c in type(obj).__mro__):
        return False
    try:
        from zarr.abc.store import Store as ZarrStore
    except ImportError:
        return False
    return isinstance(obj, ZarrStore)


def wrap_zarr_store(obj: Any, *, read_only: bool) -> Store:
    """The zarrx store for the zarr-python store ``obj`` (see the module docstring)."""
    read_only = read_only or bool(getattr(obj, "read_only", False))
    name = type(obj).__name__
    if name == "LocalStore" and type(obj).__module__.startswith("zarr.storage"):
        from zarrx.store.local import LocalStore
        return LocalStore(str(obj.root), mode="r" if read_only else "a")
    return ZarrPythonStore(obj, read_only=read_only)


def _backing(store: Any) -> Any:
    """What the objects of the zarr-python store ``store`` live in: the innermost store below
    its wrappers (their ``_store``), or that store's dict for a memory store."""
    for _ in range(64):                         # (a wrapper cycle is not followed for ever)
        inner = getattr(store, "_store", None)
        if inner is None or inner is store or not is_zarr_store(inner):
            break
        store = inner
    held = getattr(store, "_store_dict", None)
    return store if held is None else held


def _request(rng: ByteRange | None) -> Any:
    from zarr.abc.store import OffsetByteRequest, RangeByteRequest, SuffixByteRequest
    if rng is None or rng.is_full:
        return None
    if rng.suffix is not None:
        return SuffixByteRequest(rng.suffix)
    if rng.length is None:
        return OffsetByteRequest(rng.offset)
    return RangeByteRequest(rng.offset, rng.offset + rng.length)


class ZarrPythonStore(Store):
    """A zarrx store over any zarr-python store, through zarr-python's asynchronous API."""

    latency_bound = True
    parallel_writes = True

    def __init__(self, store: Any, *, read_only: bool = False) -> None:
        if not is_zarr_store(store):
            raise StoreError(f"ZarrPythonStore: expected a zarr-python store, found "
                             f"{type(store).__name__}")
        self.store = store
        self.read_only = bool(read_only or getattr(store, "read_only", False))
        if not getattr(store, "_is_open", True):    # as zarr-python opens a store it is given
            self._run(store._open(), "open the store")

    @property
    def supports_deletes(self) -> bool:  # type: ignore[override]
        return bool(getattr(self.store, "supports_deletes", True))

    @property
    def shared_identity(self) -> tuple:  # type: ignore[override]
        """Wrappers of zarr-python stores over the same objects share locks: of one store, of
        wrappers of it (``LoggingStore``, a ``WrapperStore``), of memory stores over one dict
        (as ``MemoryStore.with_read_only`` makes them)."""
        return (type(self).__name__, id(_backing(self.store)))

    def __eq__(self, other: object) -> bool:
        """Over equal zarr-python stores (as zarr-python compares them), both read-only or
        both writable."""
        return type(other) is type(self) and self.read_only == other.read_only \
            and self.store == other.store

    def __hash__(self) -> int:
        # zarr-python's stores have no hash
        return hash((ZarrPythonStore, self.read_only))

    def __repr__(self) -> str:
        inner = redact_text(repr(self.store))
        return f"ZarrPythonStore({inner}{', read_only=True' if self.read_only else ''})"

    def __reduce__(self) -> tuple:
        return (type(self), (self.store,), {"read_only": self.read_only})

    def __setstate__(self, state: dict) -> None:
        self.read_only = state["read_only"]

    # -- running zarr-python's coroutines --------------------------------------------------
    def _run(self, coro: Any, what: str) -> Any:
        from zarr.core.sync import sync
        try:
            return sync(coro)
        except StoreError:
            raise
        except Exception as exc:  # noqa: BLE001 - a store's backend raises its own types
            # (aiohttp's ClientResponseError, botocore's errors, ...): none may escape raw
            raise StoreError(f"{self!r}: {what}: {type(exc).__name__}: "
                             f"{redact_text(str(exc))[:300]}") from exc

    async def _get(self, key: str, rng: ByteRange | None) -> bytes | None:
        from zarr.core.buffer import default_buffer_prototype
        if rng is not None and not rng.is_full and rng.suffix is None and rng.length == 0:
            # an empty slice: zarr-python's stores disagree on empty ranges; ask for existence
            return b"" if await self.store.exists(key) else None
        buf = await self.store.get(key, prototype=default_buffer_prototype(),
                                   byte_range=_request(rng))
        return None if buf is None else buf.to_bytes()

    async def _set(self, key: str, value: bytes | bytearray | memoryview) -> None:
        from zarr.core.buffer import default_buffer_prototype
        data = bytes(as_buffer(value, key))
        await self.store.set(key, default_buffer_prototype().buffer.from_bytes(data))

    async def _getsize(self, key: str) -> int | None:
        try:
            return int(await self.store.getsize(key))
        except FileNotFoundError:
            return None

    # -- the store interface ---------------------------------------------------------------
    def get(self, key: str, byte_range: ByteRange | None = None) -> bytes | None:
        return self._run(self._get(check_key(key), byte_range), f"get {key!r}")

    def get_many(self, requests: Iterable[Request]) -> list[bytes | None]:
        reqs = [(check_key(k), r) for k, r in requests]
        if len(reqs) <= 1:
            return [self.get(k, r) for k, r in reqs]

        async def all_of() -> list[bytes | None]:
            return list(await asyncio.gather(*(self._get(k, r) for k, r in reqs)))
        return self._run(all_of(), f"get {len(reqs)} keys from {reqs[0][0]!r} on")

    def set(self, key: str, value: bytes | bytearray | memoryview) -> None:
        self._check_writable(check_key(key))
        self._run(self._set(key, value), f"set {key!r}")

    def set_many(self, items: Iterable[tuple[str, bytes | bytearray | memoryview]]) -> None:
        pairs = list(items)
        for key, _ in pairs:
            self._check_writable(check_key(key))
        if not pairs:
            return

        async def all_of() -> None:
            await asyncio.gather(*(self._set(k, v) for k, v in pairs))
        self._run(all_of(), f"set {len(pairs)} keys from {pairs[0][0]!r} on")

    def delete(self, key: str) -> None:
        self._check_writable(check_key(key))
        if not self.store.supports_deletes:
            if not self.exists(key):
                return
            raise StoreError(f"{self!r}: cannot delete {key!r}: the zarr-python store does "
                             "not support deletes")
        self._run(self.store.delete(key), f"delete {key!r}")

    def list_prefix(self, prefix: str) -> Iterator[str]:
        check_prefix(prefix, self)

        async def collect() -> list[str]:
            return [k async for k in self.store.list_prefix(prefix)]
        return iter(self._run(collect(), f"list {prefix!r}"))

    def exists(self, key: str) -> bool:
        return bool(self._run(self.store.exists(check_key(key)), f"exists {key!r}"))

    def getsize(self, key: str) -> int | None:
        """zarr-python's ``getsize`` (its file, memory and object stores tell it without
        reading the value); None for a missing key."""
        return self._run(self._getsize(check_key(key)), f"getsize {key!r}")

    def close(self) -> None:
        self.store.close()
