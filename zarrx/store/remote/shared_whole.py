"""One GET serving every part of a read from a server that ignores ranges.

A read of one object in several requests (the parts of a large range, the coalesced spans of
a snapshot's inner chunks, the lead and rest of a whole object) registers the stretch of the
object it covers. A request of that read answered with the whole object (HTTP 200 to a
range) then starts one GET of the stretch, cut as it streams by, and every other request of the
read takes its bytes from that one answer rather than sending a GET of its own (each would
stream the object from its start again). Once the store knows its server ignores ranges, the
requests of a registered stretch are not sent at all.

The registrations live in a context variable: the tasks of one read see them, and the reads
of other threads or calls do not."""
from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from zarrx.store.remote.common import Got

__all__ = ["reading", "stretch_of", "cut_from"]


class Stretch:
    """Bytes ``[lo, hi)`` of ``key`` read together, and the one whole-object GET serving them
    once a request of the read met a server that ignores ranges."""

    __slots__ = ("lo", "hi", "whole")

    def __init__(self, lo: int, hi: int) -> None:
        self.lo, self.hi = lo, hi
        self.whole: asyncio.Future | None = None

    def started(self) -> bool:
        return self.whole is not None

    async def got(self, read: Callable[[int, int], Awaitable[Got | None]]) -> Got | None:
        """The answer of the stretch's one GET (``read(lo, hi)``), sent by the first caller."""
        if self.whole is None:
            self.whole = asyncio.ensure_future(read(self.lo, self.hi))
            # retrieved even when every part that waited on it was dropped
            self.whole.add_done_callback(lambda f: f.cancelled() or f.exception())
        return await asyncio.shield(self.whole)


_STRETCHES: ContextVar[dict[str, list[Stretch]] | None] = ContextVar("zarrx_read_stretches",
                                                                     default=None)


@contextmanager
def reading(stretches: dict[str, list[tuple[int, int]]]) -> Iterator[None]:
    """Within the block, the tasks created read the ``stretches`` of each key together (those
    registered by an enclosing read are kept)."""
    outer = _STRETCHES.get()
    mine = {k: list(v) for k, v in (outer or {}).items()}
    for key, spans in stretches.items():
        mine.setdefault(key, []).extend(Stretch(lo, hi) for lo, hi in spans)
    token = _STRETCHES.set(mine)
    try:
        yield
    finally:
        _STRETCHES.reset(token)


def stretch_of(key: str, start: int, stop: int) -> Stretch | None:
    """The registered stretch of ``key`` holding ``[start, stop)`` (None: none)."""
    for s in (_STRETCHES.get() or {}).get(key, ()):
        if s.lo <= start and stop <= s.hi:
            return s
    return None


def cut_from(whole: Got, start: int, stop: int) -> Got:
    """Bytes ``[start, stop)`` (clipped at the object's end) of ``whole``, the answer of a
    stretch holding them."""
    size = whole.size if whole.size is not None else whole.start + len(whole.data)
    a = min(start, size)
    b = max(min(stop, size), a)
    view = memoryview(whole.data)
    return Got(view[a - whole.start:b - whole.start], whole.etag, whole.size, a)
