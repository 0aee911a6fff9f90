"""Whole-file writes and exact reads of open file descriptors for
:class:`~zarrx.store.local.LocalStore` (re-exported by :mod:`zarrx.store.localfs`)."""
from __future__ import annotations

import os

from zarrx.store.pieces import Pieces

WRITE_PIECE = 1 << 20     # bytes per write call, as in _localwrite.pyx (see there why)


def write_all(fd: int, data: memoryview | Pieces) -> None:
    """Write ``data`` at the file's position, at most :data:`WRITE_PIECE` bytes per call;
    the small parts of :class:`Pieces` are gathered into one ``writev`` call each."""
    if type(data) is not Pieces:
        _write_view(fd, data)
        return
    batch: list[memoryview] = []
    size = 0
    for part in data.parts:
        if len(batch) == _IOV_MAX or (batch and size + part.nbytes > WRITE_PIECE):
            _writev_all(fd, batch, size)
            batch, size = [], 0
        if part.nbytes >= WRITE_PIECE:
            _write_view(fd, part)
        elif part.nbytes:
            batch.append(part)
            size += part.nbytes
    if batch:
        _writev_all(fd, batch, size)


_IOV_MAX = 1024


def _write_view(fd: int, view: memoryview) -> None:
    while len(view):
        n = os.write(fd, view[:WRITE_PIECE])
        view = view[n:]


def _writev_all(fd: int, batch: list[memoryview], size: int) -> None:
    n = os.writev(fd, batch)
    if n == size:
        return
    for part in batch:                  # a short write: the rest, part by part
        if n >= part.nbytes:
            n -= part.nbytes
            continue
        _write_view(fd, part[n:])
        n = 0


def read_exact(fd: int, start: int, n: int) -> bytes | bytearray:
    """``n`` bytes at ``start`` (fewer only if the file ends first), reading nothing else."""
    if n <= 0:
        return b""
    first = os.pread(fd, n, start)
    if len(first) == n or not first:
        return first
    buf = bytearray(first)
    while len(buf) < n:
        part = os.pread(fd, n - len(buf), start + len(buf))
        if not part:
            break
        buf += part
    return buf
