"""Snapshots: consistent views of one version of a stored object for several ranged reads
(what :meth:`zarrx.store.base.Store.snapshot` returns)."""
from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING

from zarrx.errors import StoreError
from zarrx.store.generations import conflict

if TYPE_CHECKING:
    from zarrx.store.base import ByteRange, Store

__all__ = ["ObjectSnapshot", "HeldSnapshot", "VersionedSnapshot"]


class ObjectSnapshot:
    """A consistent view of one stored object for several ranged reads (a context manager).

    ``generation`` is the version every read comes from (``None`` until the first read for
    stores that learn it lazily); ``size`` is the object's size when known without another
    request. :meth:`read` returns the bytes of each range (clipped as by ``Store.get``), all from
    that one version, or raises :class:`~zarrx.errors.ConflictError` when the object has changed
    since (stores whose snapshots pin the version, like a file held open, never raise it).
    """

    key: str = ""
    generation: Hashable | None = None
    size: int | None = None
    #: whether reading the whole object costs no more requests than reading one range of it
    #: (a file held open: one ``pread``); a reader that wants most of the object then reads it
    #: in one go rather than its parts one after the other
    whole_reads: bool = False

    def read(self, ranges: Sequence[ByteRange | None]) -> list[bytes | bytearray | memoryview]:
        raise NotImplementedError

    def close(self) -> None:
        pass

    def __enter__(self) -> ObjectSnapshot:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class HeldSnapshot(ObjectSnapshot):
    """A snapshot holding the bytes of one version of the object (immutable: never written
    after they are handed over), so it never conflicts."""

    def __init__(self, key: str, value: bytes | bytearray | memoryview, generation: Hashable | None) -> None:
        self.key = key
        self.generation = generation
        self.size = len(value)
        self._view = memoryview(value)
        self._value: bytes | memoryview | None = value if type(value) is bytes else self._view

    def read(self, ranges: Sequence[ByteRange | None]) -> list[bytes | bytearray | memoryview]:
        """Ranges are zero-copy views of the immutable value."""
        value = self._value
        if value is None:
            raise StoreError(f"snapshot of {self.key!r}: read after close")
        view, size, out = self._view, len(value), []
        for r in ranges:
            if r is None or r.is_full:
                out.append(value)
            else:
                start, stop = r.resolve(size)
                out.append(view[start:stop])
        return out

    def close(self) -> None:
        self._value = None


class VersionedSnapshot(ObjectSnapshot):
    """The generic snapshot: every read is a ``get_versioned`` conditioned on the generation the
    snapshot was opened at (or, when opened without one, on the generation of its first read)."""

    def __init__(self, store: Store, key: str, generation: Hashable | None = None,
                 size: int | None = None) -> None:
        self.store = store
        self.key = key
        self.generation = generation
        self.size = size

    def read(self, ranges: Sequence[ByteRange | None]) -> list[bytes | bytearray | memoryview]:
        out: list[bytes | bytearray | memoryview] = []
        for rng in ranges:
            got = self.store.get_versioned(self.key, rng, if_generation=self.generation)
            if got is None:                 # opened lazily, and the object is gone
                raise conflict(self.store, self.key, "read a snapshot of", "an object", None)
            value, self.generation = got
            if rng is None or rng.is_full:
                self.size = len(value)
            out.append(value)
        return out

    def __repr__(self) -> str:
        return f"<snapshot of {self.key!r} in {self.store!r} at {self.generation!r}>"
