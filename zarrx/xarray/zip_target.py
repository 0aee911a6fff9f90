"""``to_zarrx`` into a zip archive (a local path ending in ``.zip``, or a writable
:class:`~zarrx.store.ZipStore`).

Zip entries cannot be replaced, and writing a dataset replaces metadata documents (a group's,
once its attributes and its consolidated metadata are written; an appended array's). So the
write runs on a copy in memory of the archive's entries, and the archive is written anew from
that copy once the write has run: with ``compute=False``, when the ``Delayed`` is computed (with
dask's threaded scheduler: the copy lives in one process). Until then, and when the write is
refused, the archive at the path stays as it was. A ``ZipStore`` handed over must hold no entry
yet (mode ``w`` or ``x``): the entries are added to it, and it is put in place when its owner
closes it.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from zarrx.errors import ArgumentError
from zarrx.store import MemoryStore, ZipStore
from zarrx.store.inputs import file_url_path

__all__ = ["zip_archive", "write_zip"]


def zip_archive(store: Any, storage_options: dict | None) -> str | ZipStore | None:
    """The zip archive ``store`` names: the path of a local path ending in ``.zip`` (as zarrx
    opens it as a :class:`~zarrx.store.ZipStore`), or a writable ``ZipStore``; else None."""
    if isinstance(store, ZipStore):
        return None if store.read_only else store
    if isinstance(store, os.PathLike):
        store = os.fspath(store)
    if not isinstance(store, str) or storage_options:
        return None             # (storage_options with a local path: refused when opened)
    local = file_url_path(store)
    store = store if local is None else local
    if "://" in store or not store.lower().endswith(".zip"):
        return None
    return store


def write_zip(write: Callable[..., Any], ds: Any, archive: str | ZipStore, group: str | None,
              compute: bool, **kwargs: Any) -> Any:
    """``write(ds, store, group=group, compute=compute, **kwargs)`` (:func:`to_zarrx`) into a
    memory copy of ``archive``, then the archive written anew from it (a ``ZipStore``: its
    entries added). Returns the group as ``to_zarrx`` does (read from the archive), or a
    ``Delayed`` that runs the dask-backed writes and then writes the archive."""
    staged = MemoryStore()
    if isinstance(archive, ZipStore):
        held = next(iter(archive.list()), None)
        if held is not None:
            raise ArgumentError(f"to_zarrx: {archive!r} holds entries ({held!r}...), which a "
                                f"write cannot replace; pass the archive's path instead, "
                                f"which is written anew")
    elif os.path.isfile(archive):
        with ZipStore(archive, "r") as stored:
            _copy(stored, staged)
    if compute:     # (the copy lives in this process: a distributed Client's workers miss it)
        kwargs["chunkmanager_store_kwargs"] = {"scheduler": "threads",
                                               **(kwargs.get("chunkmanager_store_kwargs") or {})}
    written = write(ds, staged, group=group, compute=compute, **kwargs)
    if not compute:
        import dask
        return dask.delayed(_archive)(written, staged, archive)
    _archive(None, staged, archive)
    from zarrx.api import open_group
    return open_group(archive if isinstance(archive, ZipStore) else ZipStore(archive, "r"),
                      mode="r", path=written.path)


def _archive(_: Any, staged: MemoryStore, archive: str | ZipStore) -> None:
    """Write the archive at ``archive`` anew (a ``ZipStore``: add to it) with the entries of
    ``staged``."""
    if isinstance(archive, ZipStore):
        _copy(staged, archive)
        return
    target = ZipStore(archive, "w")
    try:
        _copy(staged, target)
    except BaseException:
        target.discard()        # an interrupted copy: the archive stays as it was
        raise
    target.close()


def _copy(source: Any, target: Any) -> None:
    keys = sorted(source.list())
    target.set_many(zip(keys, source.get_many([(k, None) for k in keys])))
