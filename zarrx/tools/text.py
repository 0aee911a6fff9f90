"""A selection of an array as text or as a ``.npy`` file (``zarrx cat``).

Both stream: the values are read and written a bounded block at a time, so the whole
selection is never in memory. Values print as numpy prints them, with the shortest text that
reads back as the same value of the array's type (``0.7`` for a float32 0.7, not the digits of
its float64 widening). One dimension prints one value per line, two one row per line; more
dimensions print with numpy's brackets (each block of rows aligned on its own).
"""
from __future__ import annotations

import io
import math
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np

from zarrx.array import Array
from zarrx.errors import ZarrError
from zarrx.info import number_texts
from zarrx.selection import parse_basic

__all__ = ["text_pieces", "npy_pieces", "BLOCK_ELEMENTS"]

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
        return number_texts(block).tolist()
    names = block.dtype.names
    if names and all(block.dtype.fields[n][0].shape == () for n in names):
        # a record as its fields' texts in parentheses, with no space: one item of its line
        return _records([_cells(block[n]) for n in names])
    cells = block.tolist()
    return _quoted(cells) if block.dtype.kind in "UTO" else cells


def _records(fields: list[Any]) -> Any:
    """Per-field (nested lists of) texts zipped into ``(a,b,...)`` texts, one per record."""
    if isinstance(fields[0], list):
        return [_records([f[i] for f in fields]) for i in range(len(fields[0]))]
    return "(" + ",".join(map(str, fields)) + ")"


def _quoted(cells: Any) -> Any:
    """Strings that would not read as one item of a line (empty, or holding a space, a
    control character or a leading quote) as Python writes them, quoted and escaped."""
    if isinstance(cells, list):
        return [_quoted(c) for c in cells]
    if isinstance(cells, str) and not (cells and cells.isprintable() and cells[0] not in "'\""
                                       and not any(c.isspace() for c in cells)):
        return repr(cells)
    return cells


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


def _blocks(region: _Region, fixed: tuple[int, ...], budget: int) -> Iterator[np.ndarray]:
    """The sub-array at output indices ``fixed`` as blocks of at most ``budget`` values (or one
    row along the last axis when a row is larger), in C order."""
    rest = region.shape[len(fixed):]
    if not rest:
        yield region.read(fixed, 0, 0)
        return
    row = math.prod(rest[1:])
    if row <= budget or len(rest) == 1:
        per = max(1, budget // max(row, 1))
        for a in range(0, rest[0], per):
            yield region.read(fixed, a, a + per)
    else:
        for i in range(rest[0]):
            yield from _blocks(region, fixed + (i,), budget)


def _npy_dtype(region: _Region, budget: int, name: str) -> np.dtype:
    """The type a ``.npy`` file holds ``region`` in without pickling: the array's own, or for
    variable-length strings fixed-width unicode (``U``) and for variable-length bytes
    fixed-width bytes (``S``), as wide as the longest value (found in a first pass)."""
    dtype = region.array.dtype
    if dtype.kind != "T" and not dtype.hasobject:
        return dtype
    kind, width = "U", 1
    kinds: set[str] = set()
    for block in _blocks(region, (), budget):
        flat = block.reshape(-1)
        if flat.dtype.kind == "T":
            kinds.add("U")
            if flat.size:
                width = max(width, int(np.strings.str_len(flat).max()))
            continue
        for v in flat:
            if isinstance(v, str):
                kinds.add("U")
            elif isinstance(v, bytes):
                kinds.add("S")
            else:
                raise ZarrError(f"cat: {name}: its values are Python objects of type "
                                f"{type(v).__name__}, which a .npy file holds only pickled; "
                                f"print them as text instead (without --npy)")
            width = max(width, len(v))
    if len(kinds) > 1:
        raise ZarrError(f"cat: {name}: its values mix str and bytes, which a .npy file holds "
                        f"only pickled; print them as text instead (without --npy)")
    if kinds == {"S"}:
        kind = "S"
    return np.dtype(f"{kind}{width}")


def npy_pieces(array: Array, selection: Any,
               block_elements: int | None = None) -> Iterator[bytes]:
    """``array[selection]`` (a basic selection) as the bytes of a ``.npy`` file, in pieces:
    the header, then the values in C order, each piece from at most ``block_elements`` values
    read at a time (default: :data:`BLOCK_ELEMENTS`). Variable-length strings become
    fixed-width unicode and variable-length bytes fixed-width bytes, never pickled."""
    region = _Region(array, selection)
    budget = max(1, BLOCK_ELEMENTS if block_elements is None else block_elements)
    dtype = _npy_dtype(region, budget, array.name)
    header = {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False,
              "shape": region.shape}
    buf = io.BytesIO()
    try:
        np.lib.format.write_array_header_1_0(buf, header)
    except ValueError:                      # a header over 64 KiB (a huge structured type)
        buf = io.BytesIO()
        np.lib.format.write_array_header_2_0(buf, header)
    yield buf.getvalue()
    for block in _blocks(region, (), budget):
        yield np.ascontiguousarray(block, dtype=dtype).tobytes()
