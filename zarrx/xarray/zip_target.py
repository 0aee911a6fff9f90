"""``to_zarrx`` into a zip archive (a local path ending in ``.zip``).

Zip entries cannot be replaced, and writing a dataset replaces metadata documents (a group's,
once its attributes and its consolidated metadata are written; an appended array's). So the
write runs on a copy in memory of the archive's entries, and the archive is written anew from
that copy once the write has run: with ``compute=False``, when the ``Delayed`` is computed (with
dask's threaded scheduler: the copy lives in one process). Until then, and when the write is
refused, the archive at the path stays as it was.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from zarrx.store import MemoryStore, ZipStore

__all__ = ["zip_archive", "write_zip"]


def zip_archive(store: Any, storage_options: dict | None) -> str | None:
    """The path of the zip archive ``store`` names (a local path ending in ``.zip``, as
    zarrx opens it as a :class:`~zarrx.store.ZipStore`), else None."""
    if isinstance(store, os.PathLike):
        store = os.fspath(store)
    if not isinstance(store, str) or storage_options:
        return None             # (storage_options with a local path: refused when opened)
    if store.startswith("file://"):
        store = store[len("file://"):]
    if "://" in store or not store.lower().endswith(".zip"):
        return None
    return store


def write_zip(write: Callable[..., Any], ds: Any, path: str, group: str | None,
              compute: bool, **kwargs: Any) -> Any:
    """``write(ds, store, group=group, compute=compute, **kwargs)`` (:func:`to_zarrx`) into a
    memory copy of the archive at ``path``, then the archive written anew from it. Returns the
    group as ``to_zarrx`` does (read from the archive), or a ``Delayed`` that runs the
    dask-backed writes and then writes the archive."""
    staged = MemoryStore()
    if os.path.isfile(path):
        with ZipStore(path, "r") as archive:
            keys = sorted(archive.list())
            staged.set_many(zip(keys, archive.get_many([(k, None) for k in keys])))
    written = write(ds, staged, group=group, compute=compute, **kwargs)
    if not compute:
        import dask
        return dask.delayed(_archive)(written, staged, path)
    _archive(None, staged, path)
    from zarrx.api import open_group
    return open_group(path, mode="r", path=written.path)


def _archive(_: Any, staged: MemoryStore, path: str) -> None:
    """Write the archive at ``path`` anew with the entries of ``staged``."""
    keys = sorted(staged.list())
    with ZipStore(path, "w") as archive:
        archive.set_many(zip(keys, staged.get_many([(k, None) for k in keys])))
