"""A slice's projection onto a regular chunk grid axis, one entry per chunk computed on demand.

:func:`zarrx._indexing.project_slice` lists ``(chunk index, chunk-local slice, output slice,
full)`` for every chunk a slice touches: about 300 bytes of Python objects per chunk, held for
as long as the plan is read or written (a read of 2**20 chunks of 4 items held 300 MiB).
:class:`SliceRuns` is the same sequence over a regular axis (``chunk > 0``), each entry worked
out from its index by arithmetic: it holds a few integers, whatever the number of chunks.
:func:`product` is ``itertools.product`` without the copy of every argument it makes first.
"""
from __future__ import annotations

import itertools
import operator
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

__all__ = ["SliceRuns", "product", "LAZY_MIN"]

#: an axis listing at least this many chunks is projected lazily (fewer cost next to nothing)
LAZY_MIN = 1024


class SliceRuns(Sequence):
    """The entries :func:`~zarrx._indexing.project_slice` lists for the ``n`` positions
    ``start + i*step`` (``n > 0``, all inside ``[0, size)``) of an axis of regular chunks of
    ``chunk`` cells, each made when asked for."""

    __slots__ = ("_chunk", "_count", "_k0", "_lo", "_n", "_per_cell", "_rev", "_s", "_size")

    def __init__(self, start: int, n: int, step: int, size: int, chunk: int) -> None:
        assert n > 0 and step != 0 and chunk > 0
        self._rev = step < 0
        self._s = s = -step if self._rev else step
        self._lo = lo = start + (n - 1) * step if self._rev else start
        hi = lo + (n - 1) * s
        self._n, self._size, self._chunk = n, size, chunk
        # a step of at least a chunk puts each position in a chunk of its own; a shorter one
        # leaves no chunk between the first and the last without a position
        self._per_cell = s >= chunk
        self._k0 = lo // chunk
        self._count = n if self._per_cell else hi // chunk - self._k0 + 1

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self._entry(r) for r in range(*i.indices(self._count))]
        r = operator.index(i)
        if r < 0:
            r += self._count
        if not 0 <= r < self._count:
            raise IndexError(f"entry {i} of {self._count}")
        return self._entry(r)

    def __iter__(self) -> Iterator[tuple]:
        return map(self._entry, range(self._count))

    def chunk_ids(self) -> np.ndarray:
        """The entries' chunk indices, ascending, as an int64 array."""
        if self._per_cell:
            return (self._lo + np.arange(self._n, dtype=np.int64) * self._s) // self._chunk
        return np.arange(self._k0, self._k0 + self._count, dtype=np.int64)

    def _entry(self, r: int) -> tuple:
        s, lo, chunk, n = self._s, self._lo, self._chunk, self._n
        if self._per_cell:
            j = r
        else:                       # the first position at or after the chunk's start
            j = 0 if r == 0 else -((lo - (self._k0 + r) * chunk) // s)
        p = lo + j * s
        k = p // chunk
        cstart = k * chunk
        cend = min(cstart + chunk, self._size)
        m = min((cend - 1 - p) // s + 1, n - j)
        local = p - cstart
        csel = slice(local, local + (m - 1) * s + 1, s if s != 1 else None)
        if self._rev:
            o = n - 1 - j
            osel = slice(o, o - m if o - m >= 0 else None, -1)
        else:
            osel = slice(j, j + m)
        return (k, csel, osel, m == cend - cstart and (s == 1 or m == 1))

    def __repr__(self) -> str:
        return f"SliceRuns(<{self._count} chunks>)"


def product(seqs: Sequence[Sequence]) -> Iterator[tuple]:
    """The C-order product of ``seqs``, as ``itertools.product`` gives it, without copying a
    :class:`SliceRuns` into a tuple of all its entries first."""
    if not any(isinstance(s, SliceRuns) for s in seqs):
        return itertools.product(*seqs)
    return _nested(seqs)


def _nested(seqs: Sequence[Sequence]) -> Iterator[tuple]:
    *outer, last = seqs
    for head in product(outer):
        for e in last:
            yield (*head, e)
