"""A selection of an array as text or as a ``.npy`` array (``zarrx cat``).

Text streams: the values are read and printed a bounded block at a time, so the whole
selection is never in memory. Values print as numpy prints them, with the shortest text that
reads back as the same value of the array's type (``0.7`` for a float32 0.7, not the digits of
its float64 widening). One dimension prints one value per line, two one row per line; more
dimensions print with numpy's brackets (each block of rows aligned on its own).
"""
from __future__ import annotations

import math
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np

from zarrx.array import Array
from zarrx.errors import ZarrError
from zarrx.selection import parse_basic

__all__ = ["text_pieces", "npy_ready", "BLOCK_ELEMENTS"]

#: values read (and printed) at a time
BLOCK_ELEMENTS = 1 << 20


class _Region:
    """A basic selection of ``array`` (ints and slices) read piece by piece: ``shape`` is the
    selection's; ``read(fixed, a, b)`` reads the cells at the output indices ``fixed`` along
    the first axes, ``a:b`` along the next, and everything along the rest."""

    def __init__(self, array: Array, selection: Any) -> None:
        self.array = array
        _, self.items = parse_basic(selection, array.shape)
        self.shape = tuple(it[2] for it in self.items if it[0] == "slice")

    def read(self, fixed: tuple[int, ...], a: int, b: int) -> np.ndarray:
        sel: list[Any] = []
        j = 0
        for item in self.items:
            if item[0] == "int":
                sel.append(item[1])
                continue
            _, start, n, step = item
            if j < len(fixed):
                sel.append(start + fixed[j] * step)
            else:
                lo, hi = (a, min(b, n)) if j == len(fixed) else (0, n)
                stop = start + hi * step
                sel.append(slice(start + lo * step, None if stop < 0 else stop, step))
            j += 1
        return np.asarray(self.array[tuple(sel)])


def _cells(block: np.ndarray) -> Any:
    """``block`` as (nested lists of) values whose ``str`` is numpy's text of each."""
    if block.dtype.kind in "biufcmM":       # numpy's casts: the shortest round-trip text
        return block.astype(str).tolist()
    return block.tolist()


def _nested(block: np.ndarray, depth: int) -> str:
    """numpy's bracketed text of ``block``, its continuation lines indented as at ``depth``."""
    if block.dtype.kind in "mM":
        block = block.astype(str)
    return np.array2string(block, max_line_width=sys.maxsize, threshold=sys.maxsize,
                           floatmode="unique", prefix=" " * depth)


def text_pieces(array: Array, selection: Any,
                block_elements: int | None = None) -> Iterator[str]:
    """The text of ``array[selection]`` (a basic selection of ints, slices and ``...``) in
    pieces, each made from at most ``block_elements`` values read at a time (default:
    :data:`BLOCK_ELEMENTS`); joined, the pieces end in a newline."""
    region = _Region(array, selection)
    shape = region.shape
    budget = max(1, BLOCK_ELEMENTS if block_elements is None else block_elements)
    ndim = len(shape)
    if ndim == 0:
        yield f"{_cells(region.read((), 0, 0))}\n"
    elif ndim <= 2 and shape[0] == 0:
        yield "\n"
    elif ndim == 1:
        for a in range(0, shape[0], budget):
            yield "\n".join(map(str, _cells(region.read((), a, a + budget)))) + "\n"
    elif ndim == 2 and shape[1] <= budget:
        per = max(1, budget // max(shape[1], 1))
        for a in range(0, shape[0], per):
            rows = _cells(region.read((), a, a + per))
            yield "".join(" ".join(map(str, row)) + "\n" for row in rows)
    elif ndim == 2:                         # rows longer than a block: a row at a time
        for i in range(shape[0]):
            for a in range(0, shape[1], budget):
                yield (" " if a else "") + " ".join(map(str, _cells(region.read((i,), a,
                                                                                 a + budget))))
            yield "\n"
    elif math.prod(shape) <= budget:
        yield _nested(region.read((), 0, shape[0]), 0) + "\n"
    else:
        yield from _bracketed(region, (), budget)
        yield "\n"


def _bracketed(region: _Region, fixed: tuple[int, ...], budget: int) -> Iterator[str]:
    """numpy's bracketed text of the sub-array at output indices ``fixed``."""
    depth = len(fixed)
    rest = region.shape[depth:]
    if math.prod(rest) <= budget:
        yield _nested(region.read(fixed, 0, rest[0]), depth)
        return
    sep = " " if len(rest) == 1 else "\n" * (len(rest) - 1) + " " * (depth + 1)
    row = math.prod(rest[1:])
    yield "["
    if row <= budget:                       # blocks of whole rows, brackets stripped
        per = max(1, budget // max(row, 1))
        for a in range(0, rest[0], per):
            text = _nested(region.read(fixed, a, a + per), depth)
            yield (sep if a else "") + text[1:-1]
    else:                                   # rows larger than a block: each on its own
        for i in range(rest[0]):
            if i:
                yield sep
            yield from _bracketed(region, fixed + (i,), budget)
    yield "]"


def npy_ready(data: np.ndarray, name: str) -> np.ndarray:
    """``data`` in a type a ``.npy`` file holds without pickling: variable-length strings as
    fixed-width unicode (``U``), variable-length bytes as fixed-width bytes (``S``)."""
    if data.dtype.kind == "T":
        width = int(np.strings.str_len(data).max()) if data.size else 0
        return data.astype(f"U{max(width, 1)}")
    if not data.dtype.hasobject:
        return data
    flat = data.reshape(-1)
    if all(isinstance(v, str) for v in flat):
        return data.astype(str) if data.size else data.astype("U1")
    if all(isinstance(v, bytes) for v in flat):
        return data.astype(bytes)
    raise ZarrError(f"cat: {name}: its values are Python objects of type "
                    f"{next(type(v).__name__ for v in flat if not isinstance(v, (str, bytes)))}, "
                    f"which a .npy file holds only pickled; print them as text instead "
                    f"(without --npy)")
