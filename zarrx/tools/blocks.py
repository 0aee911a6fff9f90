"""Blocks: the regions a streaming conversion reads and writes at a time, and their memory.

A block is a whole number of the destination's stored objects (shards, or chunks when not
sharded) along every axis, so that each stored object is written once, whole, by one block:
no object is ever read back and merged, and an object that exists after an interruption is
complete. Blocks grow past one object as far as the memory budget allows, preferring sizes that
are also whole numbers of the source's chunks, which are then decoded once.
"""
from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np

from zarrx.errors import ZarrError
from zarrx import indexing

__all__ = ["BlockPlan", "plan_blocks", "parse_size", "itemsize_estimate", "DEFAULT_MAX_MEMORY"]

DEFAULT_MAX_MEMORY = 1 << 30
#: bytes assumed per element of variable-length types (strings, bytes, objects)
VARIABLE_ITEMSIZE = 64
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 10**3, "kib": 1 << 10, "m": 1 << 20, "mb": 10**6,
          "mib": 1 << 20, "g": 1 << 30, "gb": 10**9, "gib": 1 << 30, "t": 1 << 40,
          "tb": 10**12, "tib": 1 << 40}


def parse_size(text: str | int) -> int:
    """``"512M"``, ``"2GiB"``, ``"1.5g"``, ``1000`` -> bytes (K/M/G/T and KiB… are powers of
    1024; kB/MB/GB/TB powers of 1000)."""
    if isinstance(text, int) and not isinstance(text, bool):
        if text <= 0:
            raise ZarrError(f"memory size: expected a positive number of bytes, found {text}")
        return text
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*", str(text))
    unit = m.group(2).lower() if m else None
    if m is None or unit not in _UNITS:
        raise ZarrError(f"memory size: expected a number with an optional unit (512M, 2GiB, "
                        f"1e9 bytes as 1000000000), found {text!r}")
    value = float(m.group(1)) * _UNITS[unit]
    if not value < 2**63:                   # inf for digits past float's range
        raise ZarrError(f"memory size: expected less than 2^63 bytes, found {text!r}")
    n = int(value)
    if n <= 0:
        raise ZarrError(f"memory size: expected a positive size, found {text!r}")
    return n


def itemsize_estimate(dtype: np.dtype) -> int:
    """Bytes per element in memory (an estimate for variable-length types)."""
    return VARIABLE_ITEMSIZE if dtype.hasobject or dtype.itemsize == 0 else dtype.itemsize


@dataclass(frozen=True)
class BlockPlan:
    """``block``: the block shape; ``unit``: the destination's stored object shape;
    ``nblocks``: how many blocks cover the array; ``block_bytes``: one block in memory."""

    shape: tuple[int, ...]
    block: tuple[int, ...]
    unit: tuple[int, ...]
    nblocks: int
    block_bytes: int

    def blocks(self) -> Iterator[tuple[slice, ...]]:
        """The blocks' selections, in C order, one at a time (``itertools.product`` would
        hold every block start of an axis at once: billions for a huge, mostly empty array)."""
        if any(s == 0 for s in self.shape):
            return
        counts = [-(-s // b) for s, b in zip(self.shape, self.block)]
        index = [0] * len(counts)
        while True:
            yield tuple(slice(i * b, min((i + 1) * b, s))
                        for i, b, s in zip(index, self.block, self.shape))
            for ax in reversed(range(len(counts))):     # the next block, last axis fastest
                index[ax] += 1
                if index[ax] < counts[ax]:
                    break
                index[ax] = 0
            else:
                return

    def meeting(self, boxes: Iterable[tuple[slice, ...]]) -> list[tuple[slice, ...]]:
        """The parts of the blocks that meet any of ``boxes`` (regions of the array) worth
        copying, each once, in C order of their blocks: in each block, the smallest box of
        whole destination objects (``unit``) holding every part of ``boxes`` in it. A sparse
        array's few stored objects name the few objects worth copying, not their whole blocks
        (a block of 1-byte chunks holds up to millions of them)."""
        found: dict[tuple[int, ...], list[list[int]]] = {}
        for box in boxes:
            ranges = [range(min(s.start, n) // b, -(-min(s.stop, n) // b))
                      for s, b, n in zip(box, self.block, self.shape)]
            for index in itertools.product(*ranges):
                lo = [max(s.start, i * b) for s, i, b in zip(box, index, self.block)]
                hi = [min(s.stop, (i + 1) * b, n)
                      for s, i, b, n in zip(box, index, self.block, self.shape)]
                if any(a >= z for a, z in zip(lo, hi)):
                    continue                    # past the array's edge: nothing to copy
                seen = found.get(index)
                if seen is None:
                    found[index] = [lo, hi]
                else:
                    seen[0] = [min(a, c) for a, c in zip(seen[0], lo)]
                    seen[1] = [max(a, c) for a, c in zip(seen[1], hi)]
        # widened to whole objects: each destination object is written whole, by one part
        return [tuple(slice(a // u * u, min(-(-z // u) * u, n))
                      for a, z, u, n in zip(*found[index], self.unit, self.shape))
                for index in sorted(found)]

    def objects(self, sel: tuple[slice, ...]) -> list[tuple[int, ...]]:
        """Grid coordinates of the destination objects in block ``sel``."""
        ranges = [range(s.start // u, -(-s.stop // u)) for s, u in zip(sel, self.unit)]
        return list(itertools.product(*ranges))

    def object_selection(self, coords: tuple[int, ...]) -> tuple[slice, ...]:
        return tuple(slice(c * u, min((c + 1) * u, s))
                     for c, u, s in zip(coords, self.unit, self.shape))


def plan_blocks(shape: tuple[int, ...], unit: tuple[int, ...], itemsize: int, budget: int,
                align: tuple[int, ...] | None = None, what: str = "",
                grids: Iterable[tuple[int, ...]] = ()) -> BlockPlan:
    """Blocks of at most ``budget`` bytes (at ``itemsize`` bytes an element) made of whole
    ``unit`` shapes; ``align`` (the source's chunk shape), when the budget allows, makes each
    block a whole number of source chunks too. A block grows past one unit only while it
    meets at most :data:`~zarrx.indexing.MAX_CHUNKS` chunks of each of ``grids`` (the chunk
    shapes it is read and written in: a read or write of more is refused), however small the
    chunks. ZarrError when one unit does not fit."""
    ndim = len(shape)
    unit = tuple(max(1, u) for u in unit)
    one = math.prod(min(u, max(s, 1)) for u, s in zip(unit, shape)) * itemsize
    if one > budget:
        raise ZarrError(f"{what}: one stored object of the destination ({unit}, "
                        f"{_human(one)} in memory) does not fit in the memory budget of "
                        f"{_human(budget)} per worker; raise --max-memory (max_memory=), use "
                        f"fewer workers, or choose smaller shards or chunks")
    base = unit
    if align is not None and len(align) == ndim:
        lcm = tuple(min(math.lcm(u, max(a, 1)), max(s, 1)) for u, a, s in zip(unit, align, shape))
        lcm = tuple(-(-m // u) * u for m, u in zip(lcm, unit))         # whole units
        if math.prod(lcm) * itemsize <= budget:
            base = lcm
    block = list(base)
    for ax in reversed(range(ndim)):
        whole = -(-max(shape[ax], 1) // base[ax])       # base units covering the axis
        rest = math.prod(block[:ax] + block[ax + 1:]) * itemsize
        fit = max(1, budget // max(rest * base[ax], 1))
        for grid in grids:
            fit = min(fit, _chunk_fit(block, base[ax], ax, grid))
        block[ax] = base[ax] * min(whole, fit)
    nblocks = math.prod(-(-s // b) for s, b in zip(shape, block)) if all(shape) else 0
    block_bytes = math.prod(min(b, max(s, 1)) for b, s in zip(block, shape)) * itemsize
    return BlockPlan(tuple(shape), tuple(block), unit, nblocks, block_bytes)


def _chunk_fit(block: list[int], base: int, ax: int, grid: tuple[int, ...]) -> int:
    """How many ``base`` lengths axis ``ax`` of ``block`` may take so that the block meets at
    most ``MAX_CHUNKS`` chunks of ``grid`` (counting a chunk more per axis, for blocks that do
    not start on a chunk boundary); at least 1."""
    if len(grid) != len(block):
        return 1 << 62
    g = [max(1, c) for c in grid]
    others = math.prod(-(-b // c) + 1 for i, (b, c) in enumerate(zip(block, g)) if i != ax)
    cells = indexing.MAX_CHUNKS // others - 1     # chunks this axis may meet, less one
    return max(1, cells * g[ax] // base)


def _human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"
