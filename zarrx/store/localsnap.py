"""Snapshots of :class:`~zarrx.store.local.LocalStore` objects: one open file descriptor each.

Files are only ever replaced, never changed in place, so an open descriptor keeps one version:
every read through a :class:`FileSnapshot` comes from the version it was opened at. Ranges are
read with ``preadv`` into buffers allocated once per range, or, with an arena, nearby ranges with
one read into memory the reading thread reuses.
"""
from __future__ import annotations

import os
import time
from collections.abc import Sequence

from zarrx.errors import StoreError
from zarrx.store._localread import stamps_recent, stamps_recent_ns
from zarrx.store.base import ByteRange, ObjectSnapshot
from zarrx.store.localfs import generation_of

__all__ = ["FileSnapshot", "RecentGeneration", "held_generation"]

_COARSE = getattr(time, "CLOCK_REALTIME_COARSE", 5)     # Linux's number of the clock
_S = 10**9


class RecentGeneration(tuple):
    """The generation of a file whose ctime or mtime was within the current tick of the clock
    (or its file system's timestamp granularity) when it was taken: a later file reusing its
    inode within that tick, with the same size, could have the same generation, so caches
    keyed by generations keep nothing read at one. Equal to the plain generation."""

    __slots__ = ()
    recent = True
    __repr__ = tuple.__repr__


def held_generation(st: os.stat_result) -> tuple[int, ...]:
    """The generation of a file held open, whose ``fstat`` is ``st``, as a
    :class:`RecentGeneration` when its stamps are too recent (the "racy timestamp" rule of
    ``csrc/zx_dirlist.h``). The clock is read after the ``fstat``, which is sound while the
    file is held: its inode is reused only after the descriptor is closed, so a file reusing
    it is stamped at or after this reading."""
    gen = generation_of(st)
    try:
        now = time.clock_gettime_ns(_COARSE)
    except (AttributeError, OSError):       # no such clock: every generation is recent
        return RecentGeneration(gen)
    try:
        recent = stamps_recent_ns(now, st.st_ctime_ns, st.st_mtime_ns)
    except OverflowError:                   # stamps past 2262: as (seconds, nanoseconds)
        recent = stamps_recent(divmod(now, _S), divmod(st.st_ctime_ns, _S),
                               divmod(st.st_mtime_ns, _S))
    return RecentGeneration(gen) if recent else gen


class FileSnapshot(ObjectSnapshot):
    """One open file descriptor of a LocalStore object: every read comes from that version."""

    whole_reads = True

    def __init__(self, store: object, key: str, fd: int, st: os.stat_result) -> None:
        self.key = key
        self.generation = held_generation(st)
        self.size = st.st_size
        self._where = f"{store!r}: snapshot of {key!r}"
        self._fd = fd

    def read(self, ranges: Sequence[ByteRange | None],
             arena: object | None = None) -> list[bytes | bytearray | memoryview]:
        """The bytes of each range; with ``arena`` (a LocalStore's, see ``new_arena``), ranges
        lying close together (or one range alone) are read with one ``pread`` into it and
        returned as views."""
        if self._fd < 0:
            raise StoreError(f"{self._where}: read after close")
        spans = [(0, self.size) if r is None else r.resolve(self.size) for r in ranges]
        if arena is not None and spans:
            lo, hi = min(a for a, _ in spans), max(b for _, b in spans)
            if hi - lo <= 2 * sum(b - a for a, b in spans):      # dense: one read
                view = arena.take_view(hi - lo)  # type: ignore[attr-defined]
                self._fill(view, lo)
                return [view[a - lo:b - lo] for a, b in spans]
        out: list[bytes | bytearray | memoryview] = []
        for start, stop in spans:
            try:
                buf = bytearray(stop - start)
            except MemoryError:
                raise StoreError(f"{self._where}: {stop - start} bytes do not fit in "
                                 "memory") from None
            self._fill(buf, start)
            out.append(buf)
        return out

    def _fill(self, buf: bytearray | memoryview, start: int) -> None:
        """``buf`` filled from ``start``; a StoreError when the file ends first."""
        n = len(buf)
        try:
            got = _pread_into(self._fd, buf, start)
        except OSError as exc:      # an I/O error of the disk, named with the store and key
            raise StoreError(f"{self._where}: cannot read {n} bytes at offset {start}: "
                             f"{exc.strerror or exc}") from exc
        if got != n:
            raise StoreError(f"{self._where}: expected {n} bytes at offset {start}, found {got}: "
                             "the file was truncated in place")

    def close(self) -> None:
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            os.close(fd)

    def __del__(self) -> None:
        try:
            self.close()
        except OSError:
            pass

    def __repr__(self) -> str:
        return f"<{self._where} at {self.generation!r}>"


def _pread_into(fd: int, buf: bytearray | memoryview, offset: int) -> int:
    """Fill ``buf`` from ``offset``; the number of bytes read (short only at end of file).
    OSError when the file cannot be read."""
    view = memoryview(buf)
    got = 0
    while got < len(buf):
        if hasattr(os, "preadv"):
            n = os.preadv(fd, [view[got:]], offset + got)
        else:
            part = os.pread(fd, len(buf) - got, offset + got)
            n = len(part)
            view[got:got + n] = part
        if n == 0:
            break
        got += n
    return got
