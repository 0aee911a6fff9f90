"""The adapters between a :class:`~zarrx.store.local.LocalStore` and its box kernels: reading
the raw chunks of a box straight into an output (:mod:`zarrx.store._localbox`) and writing them
straight from a value (:func:`zarrx.store._localboxwrite.write_box`), with no Python object per
chunk. The store hands them out (``box_reader``, ``box_writer``) once it has checked that the
kernels may serve its keys."""
from __future__ import annotations

import itertools
import os
from collections.abc import Sequence
from typing import Any

from zarrx.store._localbox import read_box
from zarrx.store._localboxwrite import write_box
from zarrx.store.localfs import FILE_FLAGS, LinkError, open_how
from zarrx.store.update import batched_as_single

__all__ = ["BoxReader", "BoxWriter", "READ_FLAGS", "RESOLVE", "kernel_paths"]

#: how kernels open a chunk file (a FIFO planted in a store must not block) and resolve paths
READ_FLAGS = FILE_FLAGS | getattr(os, "O_NONBLOCK", 0)
RESOLVE = open_how()


class BoxReader:
    """Reads the raw chunks of a box of an array from a :class:`LocalStore` straight into an
    output (see :func:`zarrx.store._localbox.read_box`); a call returns the chunks left to the
    general path."""

    __slots__ = ("base", "sep")

    def __init__(self, base: bytes, sep: str) -> None:
        self.base, self.sep = base, sep

    @staticmethod
    def scratch_size(chunk: Sequence[int], extent: Sequence[int], itemsize: int) -> int:
        """The scratch bytes a call needs for chunks of shape ``chunk`` and a box of shape
        ``extent``: what the largest part of a chunk inside the box spans in the chunk's file,
        from its first cell to its last (C order). Never more than a chunk's bytes, and only
        the part's own bytes when it is one run (a small read of a huge chunk)."""
        need, stride = itemsize, itemsize
        for c, e in zip(reversed(chunk), reversed(extent)):
            need += (min(c, e) - 1) * stride
            stride *= c
        return need

    def __call__(self, out: object, start: tuple, chunk: tuple, fill: bytes, scratch: object,
                 lo: int, hi: int) -> list[int]:
        return read_box(self.base, self.sep, out, start, chunk, fill, scratch, READ_FLAGS,
                        RESOLVE, lo, hi)


class BoxWriter:
    """Writes the raw chunks of a box of an array to a :class:`LocalStore`: :meth:`prepare`
    makes the folders the box's chunk files go in; a call writes a range of its chunks (see
    :func:`zarrx.store._localboxwrite.write_box`) and returns those left to the general path."""

    __slots__ = ("store", "base", "head", "sep")
    #: chunks are gathered and written with no Python call per chunk
    kernel = True

    def __init__(self, store: Any, base: bytes, head: str, sep: str) -> None:
        self.store, self.base, self.head, self.sep = store, base, head, sep

    def prepare(self, first: Sequence[int], count: Sequence[int]) -> None:
        """Make the folders of the chunks ``first`` + ``range(count)`` per axis."""
        if self.sep == "/" and len(first) > 1:
            rows = itertools.product(*[range(a, a + n) for a, n in zip(first[:-1], count[:-1])])
            folders = {self.head + "/".join(map(str, row)) for row in rows}
        else:
            folders = {self.head.rpartition("/")[0]}
        for folder in folders:
            try:
                self.store._tree.dir(folder.split("/") if folder else [], create=True).close()
            except (OSError, LinkError):    # the general path meets it again and words it
                pass

    def __call__(self, src: object, start: tuple, chunk: tuple, fill: bytes | None,
                 scratch: object, lo: int, hi: int) -> list[int]:
        return write_box(self.base, self.sep, src, start, chunk, fill, scratch, RESOLVE,
                         self.store.fsync, lo, hi)


def kernel_paths(store: Any) -> tuple[bytes, int, int] | None:
    """``LocalStore.kernel_paths``: the real root and the flags the read kernels open keys
    with (a shard's index and inner chunks read in one call: :mod:`zarrx.store._localshard`).
    None where the kernels cannot open paths (no ``openat2``), or for a subclass whose
    ``snapshot`` is its own (its reads are to go through it)."""
    real = store._tree.real_root()
    if real is None or not batched_as_single(store, "kernel_paths", "snapshot", "_open"):
        return None
    return real, READ_FLAGS, RESOLVE
