"""Joining the answers of a read made of several requests: the buffer the parts are read
into, each part placed there, the parts joined, and the check that an answer is of the version
asked for."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from zarrx.store.remote.common import Failure, Got, joined

__all__ = ["_buffer", "_placed", "_assembled", "_of_version"]


def _buffer(n: int) -> memoryview | None:
    """A writable buffer of ``n`` bytes whose pages are taken as they are written (``n`` may
    be a size a server claims), or None when the address space has no room for it."""
    try:
        return memoryview(np.empty(n, dtype=np.uint8))
    except MemoryError:
        return None


def _placed(got: Got | None, into: memoryview | None) -> Got | None:
    """``got``, its data in ``into`` (copied there unless the backend read it into it)."""
    if got is None or into is None:
        return got
    data = got.data
    if not (isinstance(data, memoryview) and data.obj is into.obj):
        n = len(data)
        into[:n] = memoryview(data).cast("B")
        got.data = into[:n]
    return got


def _assembled(first: Got, rest: Sequence[Got | None], buf: memoryview | None,
               spans: Sequence[tuple[int, int]]) -> Got:
    """Consecutive parts, read at ``spans`` (the first ``first``'s), as one buffer: ``buf``,
    which the later parts were read into (the first is copied in), or a join of the parts when
    there is no ``buf`` or a part before the last came short (a conflict when a part is
    gone)."""
    if any(r is None for r in rest):
        raise Failure("precondition", 412)
    parts = [first, *rest]
    if buf is None or any(len(p.data) != b - a for p, (a, b) in zip(parts[:-1], spans)):
        return joined(first, rest)
    n = len(first.data)
    buf[:n] = memoryview(first.data).cast("B")
    end = spans[-1][0] - spans[0][0] + len(parts[-1].data)  # type: ignore[union-attr]
    return Got(buf[:end], first.etag, first.size, first.start)


def _of_version(got: Got, if_match: str | None) -> Got:
    """``got``, the answer to a GET sent with ``If-Match``: a server that ignores that header
    answers with another version's bytes and ETag, which must not be joined to the parts of
    the version asked for (a failed condition, as HTTP 412 is)."""
    if if_match is not None and got.etag is not None and got.etag != if_match:
        raise Failure("precondition", 412)
    return got
