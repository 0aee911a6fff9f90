"""Chunk grids: ``regular`` and the ``rectilinear`` extension (parse, validate, serialise), the
chunk key encodings, and the size checks every array shape goes through.

A rectilinear axis is given as an integer (a regular step), or a list of edge lengths and
``[length, count]`` run-length pairs; the edges must cover the axis (overshoot is allowed). The
model keeps each axis in run-length form (:class:`AxisEdges`: a sequence of edge lengths whose
memory is proportional to its runs, hence to the document, never to the number of chunks; at
most ``MAX_RECTILINEAR_CHUNKS`` chunks per axis) plus the JSON as read, which is written back when
it still describes the same edges. Edge lookups, chunk offsets and the chunk holding a position
are bisections over the run boundaries.
"""
from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from zarrx.metadata._util import INT64_MAX, UINT64_MAX, Loc, name_and_configuration
from zarrx.metadata.model import ChunkGrid, KeyEncoding, RectilinearGrid, RegularGrid

__all__ = ["parse_shape", "parse_grid_v3", "grid_json", "chunk_edges", "grid_shape", "axis_gcd",
           "AxisEdges", "parse_key_encoding_v3", "key_encoding_json", "check_grid",
           "MAX_RECTILINEAR_CHUNKS", "compress_edges"]

MAX_RECTILINEAR_CHUNKS = 1 << 20
MAX_NDIM = 64


class AxisEdges(Sequence):
    """The chunk edge lengths along one axis, held as runs of equal lengths.

    It is a sequence of ints (``len``, indexing, iteration, equality with a tuple of the same
    edges), plus what a grid needs without expanding it: :meth:`offset` (where chunk ``k``
    starts), :meth:`chunk_at` (the chunk holding a position), :meth:`head` (the first ``k``
    edges), :meth:`count_below` and :meth:`covering` (the chunks an axis of some length touches),
    :meth:`runs` and :meth:`gcd`. Lookups are bisections over the runs.
    """

    __slots__ = ("_sizes", "_ends", "_starts", "total")

    def __init__(self, runs: Iterable[tuple[int, int]] = ()) -> None:
        sizes: list[int] = []
        ends: list[int] = []                    # chunks up to the end of each run
        starts: list[int] = []                  # position where each run starts
        n = pos = 0
        for size, count in runs:
            if count <= 0:
                continue
            if sizes and sizes[-1] == size:
                ends[-1] += count
            else:
                sizes.append(size)
                ends.append(n + count)
                starts.append(pos)
            n += count
            pos += size * count
        self._sizes, self._ends, self._starts = sizes, ends, starts
        self.total = pos                        # sum of all edges

    @classmethod
    def of(cls, edges: Iterable[int]) -> AxisEdges:
        """Run-length form of explicit edges (an AxisEdges is returned as it is)."""
        if isinstance(edges, AxisEdges):
            return edges
        return cls((e, len(list(g))) for e, g in itertools.groupby(int(x) for x in edges))

    def runs(self) -> list[tuple[int, int]]:
        """``(length, count)`` of each run, adjacent equal lengths merged."""
        return [(s, e - b) for s, e, b in zip(self._sizes, self._ends, [0, *self._ends[:-1]])]

    def __len__(self) -> int:
        return self._ends[-1] if self._ends else 0

    def _run(self, k: int) -> int:
        return bisect.bisect_right(self._ends, k)

    def __getitem__(self, k):  # type: ignore[override]
        if isinstance(k, slice):
            start, stop, step = k.indices(len(self))
            if step != 1:
                return tuple(self[i] for i in range(start, stop, step))
            return self.head(stop).tail(start) if stop > start else AxisEdges()
        n = len(self)
        k = int(k)
        if k < 0:
            k += n
        if not 0 <= k < n:
            raise IndexError(f"chunk {k} of an axis of {n} chunks")
        return self._sizes[self._run(k)]

    def __iter__(self) -> Iterator[int]:
        for size, count in self.runs():
            yield from itertools.repeat(size, count)

    def offset(self, k: int) -> int:
        """Where chunk ``k`` starts (``len(self)`` gives the end of the last chunk)."""
        if k >= len(self):
            return self.total
        r = self._run(k)
        first = self._ends[r - 1] if r else 0
        return self._starts[r] + (k - first) * self._sizes[r]

    def chunk_at(self, pos: int) -> int:
        """The chunk holding position ``pos`` (``len(self)`` when past the last edge)."""
        if pos >= self.total:
            return len(self)
        r = bisect.bisect_right(self._starts, pos) - 1
        first = self._ends[r - 1] if r else 0
        return first + (pos - self._starts[r]) // self._sizes[r]

    def count_below(self, length: int) -> int:
        """How many chunks start before ``length`` (those an axis of that length touches)."""
        return 0 if length <= 0 else min(len(self), self.chunk_at(length - 1) + 1)

    def covering(self, length: int) -> AxisEdges:
        """The chunks an axis of ``length`` touches, and at least the first one."""
        return self.head(max(1, self.count_below(length)))

    def head(self, k: int) -> AxisEdges:
        """The first ``k`` edges."""
        return AxisEdges(itertools.takewhile(lambda r: r[1] > 0, _clip_runs(self.runs(), k)))

    def tail(self, k: int) -> AxisEdges:
        """The edges from chunk ``k`` on."""
        out, skip = [], k
        for size, count in self.runs():
            take = count - min(skip, count)
            skip -= count - take
            if take:
                out.append((size, take))
        return AxisEdges(out)

    def gcd(self) -> int:
        """The greatest common divisor of the edges (1 for no edges)."""
        return math.gcd(*self._sizes) if self._sizes else 1

    def __eq__(self, other: object) -> bool:
        if isinstance(other, AxisEdges):
            return self.runs() == other.runs()
        if isinstance(other, (tuple, list)):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self.runs()))

    def __repr__(self) -> str:
        return f"AxisEdges({[list(r) for r in self.runs()]})"


def _clip_runs(runs: list[tuple[int, int]], k: int) -> Iterator[tuple[int, int]]:
    for size, count in runs:
        take = min(count, k)
        yield size, take
        k -= take


def axis_gcd(edges: Sequence[int]) -> int:
    """The greatest common divisor of an axis' edge lengths (1 for none)."""
    return AxisEdges.of(edges).gcd()


def _ints(dims: list[Any], lo: int) -> bool:
    """Whether every item of ``dims`` is a plain int in ``[lo, INT64_MAX]`` (the common case,
    checked without a location per item)."""
    for d in dims:
        if type(d) is not int or d < lo or d > INT64_MAX:
            return False
    return True


def parse_shape(value: Any, loc: Loc) -> tuple[int, ...]:
    dims = loc.list(value, "an array of non-negative integers")
    if len(dims) > MAX_NDIM:
        raise loc.found(f"at most {MAX_NDIM} dimensions", f"{len(dims)} dimensions")
    shape = tuple(dims) if _ints(dims, 0) else tuple(
        (loc / i).int(d, 0, INT64_MAX) for i, d in enumerate(dims))
    if math.prod(shape) > INT64_MAX:
        raise loc.error("a shape whose product fits in 64 bits (at most 2**63-1 elements)",
                        list(shape))
    return shape


#: what a regular chunk length must be (0 is kept as written where the axis has length 0)
CHUNK_LENGTH = "a positive integer below 2**63, or 0 on an axis of length 0"


def parse_chunk_shape(value: Any, shape: tuple[int, ...], loc: Loc) -> tuple[int, ...]:
    """A regular chunk shape: positive lengths, or 0 along an axis of length 0 (zarr-python
    writes ``chunks=(0, 5)`` for ``shape=(0, 5)``; such an axis has no chunks)."""
    dims = loc.list(value, "an array of positive integers")
    if len(dims) != len(shape):
        raise loc.error(f"{len(shape)} chunk sizes (one per dimension of shape "
                        f"{list(shape)})", list(dims) if len(dims) <= 20 else dims)
    if _ints(dims, 1):
        return tuple(dims)
    return tuple((loc / i).int(d, 0 if n == 0 else 1, INT64_MAX,
                               CHUNK_LENGTH + ("" if n == 0 else f" (this one has length {n})"))
                 for i, (d, n) in enumerate(zip(dims, shape)))


def check_grid(grid: ChunkGrid, shape: tuple[int, ...], itemsize: int, loc: Loc) -> None:
    """The number of chunks and the bytes of the largest chunk fit in 64 bits."""
    n = math.prod(grid_shape(grid, shape))
    if n > UINT64_MAX:
        raise loc.found("at most 2**64-1 chunks", f"{n} chunks")
    if isinstance(grid, RegularGrid):
        largest = grid.chunk_shape
    else:           # the longest edge along each axis among the chunks holding elements
        largest = tuple(max((size for size, _ in chunk_edges(grid, shape, axis).runs()),
                            default=0) for axis in range(len(shape)))
    nbytes = math.prod(largest) * max(itemsize, 1)
    if nbytes > INT64_MAX:
        raise loc.found("a chunk of at most 2**63-1 bytes", f"{nbytes} bytes")


def _axis_edges(value: Any, length: int, loc: Loc) -> AxisEdges:
    if isinstance(value, (int, float)) and not isinstance(value, bool):   # 4.0: as in a list
        step = loc.int(value, 1, INT64_MAX)
        count = -(-length // step)
        if count > MAX_RECTILINEAR_CHUNKS:
            raise loc.found(f"at most {MAX_RECTILINEAR_CHUNKS} chunks along an axis",
                            f"{count} chunks")
        return AxisEdges([(step, count)])
    items = loc.list(value, "an integer or an array of edge lengths and [length, count] pairs")
    runs: list[tuple[int, int]] = []
    n = 0
    for i, item in enumerate(items):
        il = loc / i
        if isinstance(item, list):
            if len(item) != 2:
                raise il.error("a [length, count] pair", item)
            size = (il / 0).int(item[0], 1, INT64_MAX)
            count = (il / 1).int(item[1], 1, INT64_MAX)
        else:
            size = il.int(item, 1, INT64_MAX, "a positive edge length or a [length, count] pair")
            count = 1
        if n + count > MAX_RECTILINEAR_CHUNKS:
            raise il.found(f"at most {MAX_RECTILINEAR_CHUNKS} chunks along an axis",
                           f"{n + count} chunks")
        n += count
        runs.append((size, count))
    edges = AxisEdges(runs)
    if edges.total < length:
        raise loc.found(f"edge lengths summing to at least the axis length {length}",
                        f"a sum of {edges.total}")
    return edges


def parse_grid_v3(value: Any, shape: tuple[int, ...], loc: Loc) -> ChunkGrid:
    if isinstance(value, str):
        raise loc.error("a chunk grid object with a configuration", value)
    obj = loc.obj(value)
    loc.keys(obj, ("name",), ("configuration", "must_understand"))
    name = obj["name"]
    if not isinstance(name, str):
        (loc / "name").str(name)                        # raises
    cl = loc / "configuration"
    if name in ("regular", "rectilinear") and "configuration" not in obj:
        raise loc.fail("missing required field 'configuration'")
    if name == "regular":
        conf = cl.obj(obj.get("configuration"))
        cl.keys(conf, ("chunk_shape",))
        return RegularGrid(parse_chunk_shape(conf["chunk_shape"], shape, cl / "chunk_shape"))
    if name == "rectilinear":
        conf = cl.obj(obj.get("configuration"))
        cl.keys(conf, ("kind", "chunk_shapes"))
        if conf["kind"] != "inline":
            raise (cl / "kind").error("'inline'", conf["kind"])
        sl = cl / "chunk_shapes"
        axes = sl.list(conf["chunk_shapes"])
        if len(axes) != len(shape):
            raise sl.found(f"{len(shape)} axes (one per dimension of shape {list(shape)})",
                           f"{len(axes)} axes")
        sizes = tuple(_axis_edges(a, n, sl / i) for i, (a, n) in enumerate(zip(axes, shape)))
        # kept as written (its runs), with integral numbers written with a fraction part
        # (which the axes were read as) written back as integers
        return RectilinearGrid(sizes, json={**conf, "chunk_shapes": _whole(conf["chunk_shapes"])})
    raise (loc / "name").error("a known chunk grid ('regular' or 'rectilinear')", name)


def _whole(value: Any) -> Any:
    """``value`` (edge lengths, read) with each float made the integer it was read as."""
    if type(value) is float:
        return int(value)
    return [_whole(v) for v in value] if isinstance(value, list) else value


def compress_edges(edges: Sequence[int]) -> list[Any]:
    """Edge lengths in the run-length form of ``chunk_shapes`` (``[length, count]`` for a run
    of more than one)."""
    return [[size, count] if count > 1 else size for size, count in AxisEdges.of(edges).runs()]


def grid_json(grid: ChunkGrid, shape: tuple[int, ...]) -> dict[str, Any]:
    if isinstance(grid, RegularGrid):
        return {"name": "regular", "configuration": {"chunk_shape": list(grid.chunk_shape)}}
    assert isinstance(grid, RectilinearGrid)
    conf = grid._json
    if isinstance(conf, dict):
        try:
            again = parse_grid_v3({"name": "rectilinear", "configuration": conf}, shape,
                                  Loc("chunk_grid"))
            if again == grid:
                return {"name": "rectilinear", "configuration": conf}
        except ValueError:
            pass
    return {"name": "rectilinear", "configuration": {
        "kind": "inline", "chunk_shapes": [compress_edges(e) for e in grid.chunk_sizes]}}


def _regular_count(length: int, chunk: int) -> int:
    """Chunks of ``chunk`` elements holding an axis of ``length`` (a chunk length of 0, which
    only an axis of length 0 has, holds none)."""
    return -(-length // chunk) if chunk else 0


def grid_shape(grid: ChunkGrid, shape: tuple[int, ...]) -> tuple[int, ...]:
    """Number of chunks along each axis that hold array elements."""
    if isinstance(grid, RegularGrid):
        return tuple(_regular_count(n, c) for n, c in zip(shape, grid.chunk_shape))
    assert isinstance(grid, RectilinearGrid)
    return tuple(AxisEdges.of(e).count_below(n) for e, n in zip(grid.chunk_sizes, shape))


def chunk_edges(grid: ChunkGrid, shape: tuple[int, ...], axis: int) -> AxisEdges:
    """Nominal edge lengths of the chunks along ``axis`` that intersect ``[0, shape[axis])``."""
    n = shape[axis]
    if isinstance(grid, RegularGrid):
        c = grid.chunk_shape[axis]
        return AxisEdges([(c, _regular_count(n, c))])
    assert isinstance(grid, RectilinearGrid)
    edges = AxisEdges.of(grid.chunk_sizes[axis])
    return edges.head(edges.count_below(n))


# -- chunk key encodings ----------------------------------------------------------------------
def parse_key_encoding_v3(value: Any, loc: Loc) -> KeyEncoding:
    if isinstance(value, str):
        name, conf = value, {}
    else:
        name, conf = name_and_configuration(loc.obj(value), loc)
    if name not in ("default", "v2"):
        raise (loc / "name").error("'default' or 'v2'", name)
    cl = loc / "configuration"
    cl.keys(conf, (), ("separator",))
    sep = conf.get("separator", "/" if name == "default" else ".")
    if sep not in ("/", "."):
        raise (cl / "separator").error("'/' or '.'", sep)
    return _KEY_ENCODINGS[name, sep]


# the four encodings there are, made once (frozen: every array shares one)
_KEY_ENCODINGS = {(n, s): KeyEncoding(n, s) for n in ("default", "v2") for s in ("/", ".")}


def key_encoding_json(enc: KeyEncoding) -> dict[str, Any]:
    return {"name": enc.name, "configuration": {"separator": enc.separator}}
