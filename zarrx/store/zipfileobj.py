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

__all__ = ["is_file_object", "open_file_archive", "positional", "unreadable"]


def is_file_object(obj: object) -> bool:
    """Whether ``obj`` is a file object to read an archive from: not a path, and has callable
    ``read``, ``seek`` and ``tell``."""
    if isinstance(obj, (str, bytes, os.PathLike)):
        return False
    return all(callable(getattr(obj, name, None)) for name in ("read", "seek", "tell"))


def unreadable(obj: Any) -> str | None:
    """Why ``obj`` (a file object) cannot hold an archive to read, or None: a file opened in
    text mode (its ``read`` gives ``str``), or one that cannot seek (an archive is read from
    its end)."""
    if isinstance(obj, io.TextIOBase):
        return (f"the file is open in text mode ({type(obj).__name__}); expected a binary "
                f"file: open it with mode 'rb'")
    if not isinstance(obj, io.IOBase):
        try:
            probe = obj.read(0)
        except Exception:               # a reader that takes no empty read: found out later
            probe = b""
        if isinstance(probe, str):
            return (f"its read returns str; expected a binary file, whose read returns "
                    f"bytes: open it with mode 'rb'")
    seekable = getattr(obj, "seekable", None)
    try:
        can_seek = seekable() if callable(seekable) else True
    except Exception:                   # closed, or broken: found out when opened
        can_seek = True
    if not can_seek:
        return ("the file cannot seek (seekable() is False); a zip archive is read from its "
                "end: give a seekable file, or read the archive into io.BytesIO")
    return None


class _Reads:
    """A reader that is not an ``io`` object (an obstore reader: its ``read`` returns a
    buffer, not ``bytes``, and may refuse to read past the end), or a raw ``io`` reader that
    is not a disk file (whose ``read`` may return fewer bytes than asked), seen as one that
    zipfile and the store's reader take: ``read(n)`` gives ``n`` bytes, or all that are left
    when fewer are, as ``bytes``."""

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
        parts, got = [], 0
        while got < n:                  # a reader may give fewer bytes than asked
            part = self._raw.read(n - got)
            if not part:
                break
            parts.append(bytes(part))
            got += len(parts[-1])
        return b"".join(parts)

    def seekable(self) -> bool:
        return True

    def flush(self) -> None:
        pass


def open_file_archive(fileobj: Any) -> zipfile.ZipFile:
    """The archive in ``fileobj`` opened for reading, its end record checked first (as
    :func:`~zarrx.store.zipread.open_archive` checks an archive at a path); zipfile's errors
    otherwise, with the central directory entry it could not read named when that can be
    told."""
    whole = isinstance(fileobj, io.IOBase) and (not isinstance(fileobj, io.RawIOBase)
                                                or isinstance(fileobj, io.FileIO))
    fp: BinaryIO = fileobj if whole else _Reads(fileobj)  # type: ignore
    check_end_record(fp, repr(fileobj))
    try:
        return zipfile.ZipFile(fp, "r")
    except zipfile.BadZipFile:
        check_entries(fp)
        raise


def positional(fp: BinaryIO) -> BinaryIO:
    """``fp`` read at explicit offsets (``pread``) where the system has them: the descriptor's
    file offset, which processes forked with the archive open share, is neither used nor moved,
    so what one process reads never disturbs another's read. Bytes ``fp`` buffered for writing
    are flushed first. A file object without a descriptor (``io.BytesIO``, an fsspec file) is
    read as it is, with ``seek`` and ``read``."""
    if not hasattr(os, "pread"):
        return fp
    try:
        fd = fp.fileno()
    except (AttributeError, OSError, ValueError):   # a file object without a descriptor
        return fp                                   # (read under the store's lock)
    fp.flush()
    return _Positional(fd)  # type: ignore[return-value]


class _Positional:
    """The ``seek``/``read`` a :class:`Reader` uses, over ``pread`` at a position of its own."""

    __slots__ = ("_fd", "_pos")

    def __init__(self, fd: int) -> None:
        self._fd, self._pos = fd, 0

    def seek(self, pos: int) -> int:
        self._pos = pos
        return pos

    def read(self, n: int) -> bytes:
        data = os.pread(self._fd, n, self._pos)
        self._pos += len(data)
        return data
