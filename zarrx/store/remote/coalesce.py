"""Planning the requests of a batch of byte ranges: coalescing nearby ranges of one object
into one request, and splitting large requests into parallel parts.

Pure functions over ``(start, stop)`` pairs (``stop`` exclusive); no I/O.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["Span", "coalesce", "split"]


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
    it is smaller than two)."""
    n = stop - start
    if n < 2 * part_size:
        return [(start, stop)]
    count = n // part_size
    edges = [start + (n * i) // count for i in range(count + 1)]
    return [(edges[i], edges[i + 1]) for i in range(count)]
