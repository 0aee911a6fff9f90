"""Where a node was not found, and where it may be instead.

A zip archive made by ``zip -r data.zip data.zarr`` holds its hierarchy under one folder
(``data.zarr/zarr.json``...), so opening the archive finds no node at its root. When the root
holds no node document but exactly one of its top folders does, the error names that folder and
the ``path=`` that opens it. Finding it costs one listing of the root and one batch of document
reads for at most :data:`MAX_FOLDERS` folders, on the error path only.
"""
from __future__ import annotations

import os

from zarrx.creation import _where
from zarrx.errors import ZarrError
from zarrx.metadata import nodes
from zarrx.metadata.model import ArrayMeta
from zarrx.store import Store
from zarrx.store.local import LocalStore

__all__ = ["missing_at"]

#: a root with more top folders than this is not searched for the one holding a node
MAX_FOLDERS = 8


def missing_at(store: Store, path: str) -> str:
    """``path`` in ``store`` for an error saying no node is there, with the hint above; for a
    local store whose folder is a file (a netCDF or HDF5 file given as Zarr data) or is not
    there, the hint says so."""
    where = _where(store, path)
    if isinstance(store, LocalStore):
        root = store._root
        if os.path.isfile(root):
            return (f"{where} ({root!r} is a file, not a directory: Zarr data is a directory, "
                    f"or a zip archive whose name ends in .zip)")
        if not os.path.lexists(root):
            return f"{where} (no such directory: {root!r}{_home(root)})"
    if path:
        return where
    try:
        _, folders = store.list_dir("")
        if not folders or len(folders) > MAX_FOLDERS:
            return where
        batch = nodes.load_nodes(store, folders)
        found = []
        for folder in folders:
            meta = batch[folder]
            if meta is not None:
                found.append((folder, meta))
    except ZarrError:           # no listing, an unusable name, a broken document: no hint
        return where
    if len(found) != 1:
        return where
    folder, meta = found[0]
    kind = "array" if isinstance(meta, ArrayMeta) else "group"
    return (f"{where} (its root holds no node document, but its top folder {folder!r} holds a "
            f"Zarr v{meta.zarr_format} {kind}: open that with path={folder!r})")


def _home(root: str) -> str:
    """For a folder named by a path that began with ``~`` (``~/data.zarr``, taken as written,
    as zarr-python takes it): the folder in the home directory it may have meant, when that
    exists; ``""`` otherwise."""
    head, sep, tail = root.partition(os.sep + "~")
    meant = os.path.expanduser("~" + tail) if sep else ""
    if not meant.startswith("~") and meant and os.path.isdir(meant):
        return (f"; a path starting with '~' is taken as written, not as the home directory: "
                f"did you mean {meant!r}? (os.path.expanduser)")
    return ""
