"""Stores: the key -> bytes layer every format operation reads and writes through.

``make_store(obj, mode, storage_options)`` turns what a user passes (a path, a ``.zip`` path, a
URL, a foreign store object, or a store) into a :class:`Store`. Remote stores live in
:mod:`zarrx.store.remote` and import their backends (obstore, fsspec) only when used.
"""
from __future__ import annotations

import os
from collections.abc import Mapping

from zarrx.errors import (ConflictError, ReadOnlyError, StoreArgumentError, StoreError,
                          StoreNotFoundError)
from zarrx.store.base import ABSENT, ByteRange, ObjectSnapshot, Store
from zarrx.store.call_stores import opened
from zarrx.store.counting import CountingStore
from zarrx.store.inputs import file_url_path, local_chain, one_slash_url
from zarrx.store.local import LocalStore
from zarrx.store.memory import MemoryStore
from zarrx.store.zarrpy import is_zarr_store, wrap_zarr_store
from zarrx.store.zip import ZipStore

__all__ = ["ByteRange", "Store", "MemoryStore", "LocalStore", "ZipStore", "CountingStore",
           "make_store", "check_storage_options", "ABSENT", "ObjectSnapshot", "ConflictError",
           "ObjectStore",
           "FsspecStore", "RemoteOptions"]


def __getattr__(name: str) -> object:
    if name in ("ObjectStore", "FsspecStore", "RemoteOptions"):
        from zarrx.store import remote
        return getattr(remote, name)
    raise AttributeError(name)

OPEN_MODES = ("r", "r+", "a", "w", "w-")
_ZIP_MODES = {"r": "r", "r+": "a", "a": "a", "w": "w", "w-": "x"}


def _writable(store: Store, mode: str, what: str) -> Store:
    # HTTP(S) stores are read-only; mode "a" opens existing nodes there
    if store.read_only and mode not in ("r", "a"):
        why = f": {store.read_only_reason}" if store.read_only_reason else ""
        raise ReadOnlyError(f"{what}: {store!r} is read-only, cannot open it with mode "
                            f"{mode!r}{why}")
    return store


def check_storage_options(storage_options: object, store: object = None) -> None:
    """Refuse ``storage_options`` that are not a mapping (of options for a URL's filesystem)
    with a :class:`~zarrx.errors.StoreArgumentError` (a ``TypeError``), before their truth or
    their keys are asked for. The message names the store URL (``store``, credentials
    removed) and the type found, never the value, which may hold a secret."""
    if storage_options is None or isinstance(storage_options, Mapping):
        return
    where = ""
    if isinstance(store, str):
        from zarrx.store.remote.urls import redact
        where = f"{redact(store)!r}: "
    raise StoreArgumentError(f"{where}storage_options: expected a dict, found "
                             f"{type(storage_options).__name__}")


#: the classes (exactly these) of the store objects opened with mode "r" through a read-only
#: view of themselves (by name: the remote ones are imported only when used)
_VIEWED = frozenset([("zarrx.store.local", "LocalStore"), ("zarrx.store.memory", "MemoryStore"),
                     ("zarrx.store.zip", "ZipStore"),
                     ("zarrx.store.remote.objectstore", "ObjectStore"),
                     ("zarrx.store.remote.fsspecstore", "FsspecStore")])


def make_store(obj: object, mode: str = "a", storage_options: dict | None = None, *,
               _what: str = "make_store") -> Store:
    """The store for ``obj`` opened for ``mode`` (``r``, ``r+``, ``a``, ``w``, ``w-``).

    - a :class:`Store` is returned as it is (a read-only store with a writing mode raises
      :class:`~zarrx.errors.ReadOnlyError`), or for mode ``r`` a read-only view of it
      (``with_read_only(True)``: the same objects, through the same open archive, client or
      filesystem) when it is a :class:`LocalStore`, :class:`MemoryStore`, :class:`ZipStore`,
      :class:`~zarrx.store.remote.ObjectStore` or :class:`~zarrx.store.remote.FsspecStore`
      (not a subclass, which is used as given);
    - a URL (``s3://``, ``gs://``, ``az://``, ``http(s)://``, ``memory://``, any fsspec
      protocol) opens a remote store with ``storage_options`` (see
      :func:`zarrx.store.remote.open_url` for which backend a scheme gets); ``file://`` is a
      local path (fsspec's local filesystem when given ``storage_options``);
    - an fsspec mapper or filesystem, an obstore store, or zarr-python's FsspecStore /
      ObjectStore is wrapped in a remote store; zarr-python's LocalStore becomes a
      :class:`LocalStore` on its directory, and any other zarr-python store is driven through
      its own API (:class:`zarrx.store.zarrpy.ZarrPythonStore`);
    - a path (``str`` or ``os.PathLike``) ending in ``.zip`` opens a :class:`ZipStore`;
    - any other path is a directory: a :class:`LocalStore`, read-only for mode ``r``.

    (``_what``: the function errors name, for the functions that open their store here.)
    """
    if mode not in OPEN_MODES:
        raise StoreError(f"{_what}: mode: expected one of {', '.join(OPEN_MODES)}, "
                         f"found {mode!r}")
    check_storage_options(storage_options, obj)
    if isinstance(obj, Store):
        if storage_options:
            raise StoreArgumentError(f"{_what}: storage_options apply to URLs, not to the "
                                     f"store {obj!r}")
        if obj.read_only and mode != "r":
            why = f": {obj.read_only_reason}" if obj.read_only_reason else ""
            raise ReadOnlyError(f"{_what}: {obj!r} is read-only, cannot open it with mode "
                                f"{mode!r}{why}")
        if mode == "r" and not obj.read_only and \
                (type(obj).__module__, type(obj).__qualname__) in _VIEWED:
            # a read-only view of the same objects, as zarr-python opens; a subclass (one that
            # counts or changes what it is asked, say) is used as given
            return obj.with_read_only(True)
        return obj
    if isinstance(obj, (str, os.PathLike)):
        path = os.fspath(obj)
        if not isinstance(path, str):
            raise StoreError(f"{_what}: expected a str path, found bytes {path!r}")
        if (why := one_slash_url(path)) is not None:
            raise StoreError(f"{_what}: {why}")
        path = local_chain(path) or path      # zip::/data/a.zip: zip::file:///data/a.zip
        local = file_url_path(path)
        if local is not None and not storage_options:
            path = local            # as fsspec's local filesystem reads it (file://~/a: home)
        elif "://" in path:
            # a file:// URL with storage_options is fsspec's local filesystem, as zarr-python
            # opens it
            from zarrx.store.remote import open_url
            return _writable(open_url(path, read_only=mode == "r",
                                      storage_options=storage_options), mode, _what)
        if storage_options:
            raise StoreArgumentError(f"{_what}: {path!r}: storage_options apply to URLs, "
                                     "not to local paths")
        if not path or "\x00" in path:       # never the current directory by mistake
            found = "a path holding a NUL character" if path else \
                "an empty path (use '.' for the current directory)"
            raise StoreError(f"{_what}: store: expected a path, found {found}")
        if path.lower().endswith(".zip") and not os.path.isdir(path):   # zarr-python: a folder
            if mode == "r+" and not os.path.isfile(path):
                raise StoreNotFoundError(f"{_what}: {path!r}: mode 'r+' needs an existing "
                                         "archive")
            zip_mode = _ZIP_MODES[mode]
            if zip_mode == "r":
                return ZipStore(path, zip_mode)
            # opened for the call running: discarded (leaving the path as it was) if it fails
            return opened(ZipStore(path, zip_mode))
        _refuse_inside_archive(path, _what)
        return LocalStore(path, mode=mode)
    if storage_options and not isinstance(obj, (bytes, int, float, list, tuple)):
        raise StoreArgumentError(f"{_what}: storage_options apply to URLs, not to the "
                                 f"store {type(obj).__name__} {_shown(obj)}")
    if not isinstance(obj, (bytes, dict, int, float, list, tuple)):
        from zarrx.store.remote import wrap_foreign
        wrapped = wrap_foreign(obj, read_only=mode == "r")
        if wrapped is None and is_zarr_store(obj):
            wrapped = wrap_zarr_store(obj, read_only=mode == "r")
        if wrapped is not None:
            if getattr(obj, "read_only", None) is True and mode != "r":
                # a store object opened read-only (zarr-python's): as a zarrx Store above
                raise ReadOnlyError(f"{_what}: {wrapped!r} is read-only, cannot open it "
                                    f"with mode {mode!r}")
            return _writable(wrapped, mode, _what)
    from zarrx.errors import ArgumentTypeError
    if type(obj).__name__ == "StorePath" and (type(obj).__module__ or "").startswith("zarr."):
        raise ArgumentTypeError(f"store: a zarr-python StorePath is not taken; pass its store "
                                f"and its path instead (store=..., path={obj.path!r})")
    raise ArgumentTypeError(f"store: expected a path or URL, a zarrx Store, a dict, an fsspec "
                            f"mapper, an obstore store or a zarr-python store, found "
                            f"{type(obj).__name__} {_shown(obj)}")


def _shown(obj: object) -> str:
    """The ``repr`` of another library's object as messages show it: without the user names,
    passwords and web queries of the URLs it quotes (as obstore's ``HTTPStore`` quotes
    ``http://user:password@host/``)."""
    from zarrx.store.remote.urls import redact_urls
    return redact_urls(repr(obj))


def _refuse_inside_archive(path: str, what: str) -> None:
    """Refuse a path that names something inside a zip archive (``data.zip/group/array``): it
    is no directory, and the archive's nodes open through the archive and ``path=``."""
    parts = path.replace(os.sep, "/").split("/")
    for i, part in enumerate(parts[:-1]):
        if part.lower().endswith(".zip"):
            archive = "/".join(parts[:i + 1])
            if os.path.isfile(archive):
                inner = "/".join(p for p in parts[i + 1:] if p)
                raise StoreError(f"{what}: {path!r} is inside the zip archive {archive!r}: "
                                 f"open the archive and the node in it, as "
                                 f"zarrx.open({archive!r}, path={inner!r})")
