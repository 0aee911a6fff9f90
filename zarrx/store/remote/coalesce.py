"""Planning the requests of a batch of byte ranges: coalescing nearby ranges of one object
into one request, and splitting large requests (and uploads) into parallel parts.

Pure functions over ``(start, stop)`` pairs (``stop`` exclusive); no I/O.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Span", "coalesce", "split", "part_for", "upload_part_for", "UPLOAD_PARTS_IN_FLIGHT"]

#: the smallest part of a multipart upload but the last (S3, GCS and Azure accept it)
MIN_UPLOAD_PART = 5 << 20
#: the most parts of one multipart upload in flight at once (within the store's ``in_flight``)
UPLOAD_PARTS_IN_FLIGHT = 16
#: the most parts one range is split into (a tiny ``part_size`` makes larger parts, not
#: millions of requests)
MAX_PARTS = 1024


@dataclass(slots=True)
class Span:
    """One request ``[start, stop)`` of an object, serving the ranges ``members`` (indices of
    the caller's ranges)."""

    start: int
    stop: int
    members: list[int] = field(default_factory=list)


def coalesce(ranges: Sequence[tuple[int, int]], gap: int, max_request: int) -> list[Span]:
    """Spans covering ``ranges`` (all of one object): ranges whose gap is at most ``gap`` bytes
    share one span as long as it stays within ``max_request`` bytes (a single range larger than
    that keeps its own span). Spans come out sorted by start."""
    order = sorted(range(len(ranges)), key=lambda i: ranges[i])
    spans: list[Span] = []
    cur: Span | None = None
    for i in order:
        start, stop = ranges[i]
        if cur is not None and start - cur.stop <= gap \
                and max(stop, cur.stop) - cur.start <= max_request:
            cur.stop = max(cur.stop, stop)
            cur.members.append(i)
            continue
        cur = Span(start, stop, [i])
        spans.append(cur)
    return spans


def split(start: int, stop: int, part_size: int) -> list[tuple[int, int]]:
    """``[start, stop)`` as parallel parts of at least ``part_size`` bytes each (one part when
    it is smaller than two), at most :data:`MAX_PARTS` of them."""
    n = stop - start
    if n < 2 * part_size:
        return [(start, stop)]
    count = min(n // part_size, MAX_PARTS)
    edges = [start + (n * i) // count for i in range(count + 1)]
    return [(edges[i], edges[i + 1]) for i in range(count)]


def part_for(nbytes: int, slots: int, opts: Any) -> int:
    """The part size for ``nbytes`` moved with ``slots`` requests free: ``opts.part_size``, or
    smaller (down to ``opts.min_part_size``) when parts of ``part_size`` would leave slots
    idle, so that the bytes stream over every request the store may keep in flight."""
    if slots <= 0:
        return opts.part_size
    even = -(-nbytes // slots)
    return min(opts.part_size, max(opts.min_part_size, even))


def upload_part_for(nbytes: int, opts: Any) -> int:
    """The part size of a multipart upload of ``nbytes``: as :func:`part_for` over the whole
    in-flight limit, and never below the 5 MiB that object stores require."""
    return max(MIN_UPLOAD_PART, part_for(nbytes, opts.in_flight, opts))
