"""A value to store given as consecutive buffers, written without joining them first.

A shard rewritten to change some of its inner chunks is mostly the stored shard's own bytes:
the unchanged chunks are views of the shard just read (one per run of chunks lying back to back
in it, not one per chunk). :class:`Pieces` keeps them as views, so
a store that writes a sequence of buffers (:attr:`Store.writes_pieces`: a file is written piece
by piece) needs no new copy of the shard, and :func:`for_store` assembles them once, into the
buffer a store keeps (a pooled :class:`~zarrx.store._values.Value` for a store that keeps values),
for every other store.
"""
from __future__ import annotations

from collections.abc import Iterable

from zarrx.store._values import MIN_SIZE, Value
from zarrx.store.base import Store

__all__ = ["Pieces", "for_store"]


class Pieces:
    """The bytes of ``parts`` (bytes-like, contiguous), one after another. ``len()`` is their
    total size; the parts are referenced, not copied."""

    __slots__ = ("parts", "nbytes")

    def __init__(self, parts: Iterable[object]) -> None:
        parts = list(parts)
        if Pieces not in set(map(type, parts)):        # no nested shard: no call per part
            views = [v if v.format == "B" and v.ndim == 1 else v.cast("B")
                     for v in map(memoryview, parts)]   # type: ignore[arg-type]
            self.parts = views
            self.nbytes = sum([v.nbytes for v in views])
            return
        views = []
        for p in parts:
            if type(p) is Pieces:
                views.extend(p.parts)              # a nested shard: its own pieces, flattened
                continue
            v = memoryview(p)  # type: ignore[arg-type]
            views.append(v if v.format == "B" and v.ndim == 1 else v.cast("B"))
        self.parts: list[memoryview] = views
        self.nbytes = sum([v.nbytes for v in views])

    def __len__(self) -> int:
        return self.nbytes

    def into(self, buf: object) -> None:
        """Copy the parts into ``buf`` (writable, at least :attr:`nbytes` long)."""
        out = memoryview(buf)  # type: ignore[arg-type]
        pos = 0
        for v in self.parts:
            n = v.nbytes
            out[pos:pos + n] = v
            pos += n

    def tobytes(self) -> bytes:
        return b"".join(self.parts)


def for_store(value: object, store: Store) -> object:
    """``value`` as ``store`` takes it: :class:`Pieces` are passed on to a store that writes
    them, and assembled once for any other (into a :class:`Value` the store keeps as it is,
    when it keeps values)."""
    if type(value) is not Pieces or store.writes_pieces:
        return value
    n = value.nbytes
    if store.keeps_values and n >= MIN_SIZE:
        buf = Value.empty(n)
        value.into(buf)
        return buf
    return value.tobytes()
