"""Whole-file writes and exact reads of open file descriptors for
:class:`~zarrx.store.local.LocalStore` (re-exported by :mod:`zarrx.store.localfs`)."""
from __future__ import annotations

import os
from operator import attrgetter

import numpy as np

from zarrx.store.pieces import Pieces

WRITE_PIECE = 1 << 20     # bytes per write call, as in _localwrite.pyx (see there why)


def write_all(fd: int, data: memoryview | Pieces) -> None:
    """Write ``data`` at the file's position, at most :data:`WRITE_PIECE` bytes per call;
    the small parts of :class:`Pieces` are gathered into one ``writev`` call each (at most
    ``_IOV_MAX`` parts and ``WRITE_PIECE`` bytes), each large part written alone. The batches
    are found from the parts' sizes together, with no Python call per part."""
    if type(data) is not Pieces:
        _write_view(fd, data)
        return
    parts = [p for p in data.parts if p.nbytes]
    ends = np.cumsum(np.fromiter(map(_nbytes, parts), np.int64, len(parts)))
    i, n = 0, len(parts)
    while i < n:
        done = int(ends[i - 1]) if i else 0
        if int(ends[i]) - done >= WRITE_PIECE:
            _write_view(fd, parts[i])
            i += 1
            continue
        # the parts up to WRITE_PIECE bytes in all (a large one is always past that)
        j = min(n, i + _IOV_MAX, int(np.searchsorted(ends, done + WRITE_PIECE, "right")))
        _writev_all(fd, parts[i:j], int(ends[j - 1]) - done)
        i = j


_nbytes = attrgetter("nbytes")
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
