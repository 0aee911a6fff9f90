"""A zip archive read from an open binary file object: ``ZipStore(f)`` with ``f`` a file opened
with ``open(path, "rb")``, an fsspec file (a zip archive on remote storage), an obstore reader,
``io.BytesIO``..., as zarr-python's ``ZipStore`` takes one.

The store only reads such an archive (mode ``r``): zarrx writes an archive to a temporary file
next to its path and moves it in place when closed, which a file object has no path for. The
file stays the caller's: the store never closes it, and it must stay open while the store is
used. The store reads it with ``seek`` and ``read`` under its lock (with ``pread`` on its
descriptor when it has one), so the file's position is the store's while the store is used.
"""
from __future__ import annotations

import io
import os
import zipfile
from typing import Any, BinaryIO

from zarrx.store.zipcheck import check_end_record, check_entries, size_of

__all__ = ["is_file_object", "open_file_archive"]


def is_file_object(obj: object) -> bool:
    """Whether ``obj`` is a file object to read an archive from: not a path, and has callable
    ``read``, ``seek`` and ``tell``."""
    if isinstance(obj, (str, bytes, os.PathLike)):
        return False
    return all(callable(getattr(obj, name, None)) for name in ("read", "seek", "tell"))


class _Reads:
    """A reader that is not an ``io`` object (an obstore reader: its ``read`` returns a
    buffer, not ``bytes``, and may refuse to read past the end) seen as one that zipfile and
    the store's reader take: ``read(n)`` gives at most the bytes left, as ``bytes``."""

    def __init__(self, raw: Any) -> None:
        self._raw = raw
        self._size = size_of(raw)

    def seek(self, pos: int, whence: int = os.SEEK_SET) -> int:
        return self._raw.seek(pos, whence)

    def tell(self) -> int:
        return self._raw.tell()

    def read(self, n: int = -1) -> bytes:
        left = self._size - self._raw.tell()
        n = left if n is None or n < 0 else min(n, left)
        return bytes(self._raw.read(n)) if n > 0 else b""

    def seekable(self) -> bool:
        return True

    def flush(self) -> None:
        pass


def open_file_archive(fileobj: Any) -> zipfile.ZipFile:
    """The archive in ``fileobj`` opened for reading, its end record checked first (as
    :func:`~zarrx.store.zipread.open_archive` checks an archive at a path); zipfile's errors
    otherwise, with the central directory entry it could not read named when that can be
    told."""
    fp: BinaryIO = fileobj if isinstance(fileobj, io.IOBase) else _Reads(fileobj)  # type: ignore
    check_end_record(fp, repr(fileobj))
    try:
        return zipfile.ZipFile(fp, "r")
    except zipfile.BadZipFile:
        check_entries(fp)
        raise
