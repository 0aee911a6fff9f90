"""Chunk grids: ``regular`` and the ``rectilinear`` extension (parse, validate, serialise), the
chunk key encodings, and the size checks every array shape goes through.

A rectilinear axis is given as an integer (a regular step), or a list of edge lengths and
``[length, count]`` run-length pairs; the edges must cover the axis (overshoot is allowed). The
model holds the edges fully expanded (at most ``MAX_RECTILINEAR_CHUNKS`` per axis) plus the JSON
as read, which is written back when it still expands to the same edges.
"""
from __future__ import annotations

import math
from typing import Any

from zarrx.metadata._util import INT64_MAX, UINT64_MAX, Loc
from zarrx.metadata.model import ChunkGrid, KeyEncoding, RectilinearGrid, RegularGrid

__all__ = ["parse_shape", "parse_grid_v3", "grid_json", "chunk_edges", "grid_shape",
           "parse_key_encoding_v3", "key_encoding_json", "check_grid", "MAX_RECTILINEAR_CHUNKS"]

MAX_RECTILINEAR_CHUNKS = 1 << 20
MAX_NDIM = 64


def parse_shape(value: Any, loc: Loc) -> tuple[int, ...]:
    dims = loc.list(value, "an array of non-negative integers")
    if len(dims) > MAX_NDIM:
        raise loc.found(f"at most {MAX_NDIM} dimensions", f"{len(dims)} dimensions")
    shape = tuple((loc / i).int(d, 0, INT64_MAX)
                  for i, d in enumerate(dims))
    if math.prod(shape) > INT64_MAX:
        raise loc.error("a shape whose product fits in 64 bits (at most 2**63-1 elements)",
                        list(shape))
    return shape


def parse_chunk_shape(value: Any, shape: tuple[int, ...], loc: Loc) -> tuple[int, ...]:
    dims = loc.list(value, "an array of positive integers")
    if len(dims) != len(shape):
        raise loc.error(f"{len(shape)} chunk sizes (one per dimension of shape "
                        f"{list(shape)})", list(dims) if len(dims) <= 20 else dims)
    return tuple((loc / i).int(d, 1, INT64_MAX) for i, d in enumerate(dims))


def check_grid(grid: ChunkGrid, shape: tuple[int, ...], itemsize: int, loc: Loc) -> None:
    """The number of chunks and the bytes of one chunk fit in 64 bits."""
    n = math.prod(grid_shape(grid, shape))
    if n > UINT64_MAX:
        raise loc.found("at most 2**64-1 chunks", f"{n} chunks")
    if isinstance(grid, RegularGrid):
        nbytes = math.prod(grid.chunk_shape) * max(itemsize, 1)
        if nbytes > INT64_MAX:
            raise loc.found("a chunk of at most 2**63-1 bytes", f"{nbytes} bytes")


def _expand_axis(value: Any, length: int, loc: Loc) -> tuple[int, ...]:
    if isinstance(value, int) and not isinstance(value, bool):
        step = loc.int(value, 1, INT64_MAX)
        count = -(-length // step)
        if count > MAX_RECTILINEAR_CHUNKS:
            raise loc.found(f"at most {MAX_RECTILINEAR_CHUNKS} chunks along an axis",
                            f"{count} chunks")
        return (step,) * count
    items = loc.list(value, "an integer or an array of edge lengths and [length, count] pairs")
    out: list[int] = []
    for i, item in enumerate(items):
        il = loc / i
        if isinstance(item, list):
            if len(item) != 2:
                raise il.error("a [length, count] pair", item)
            size = (il / 0).int(item[0], 1, INT64_MAX)
            count = (il / 1).int(item[1], 1, INT64_MAX)
            if len(out) + count > MAX_RECTILINEAR_CHUNKS:
                raise il.found(f"at most {MAX_RECTILINEAR_CHUNKS} chunks along an axis",
                               f"{len(out) + count} chunks")
            out.extend((size,) * count)
        else:
            out.append(il.int(item, 1, INT64_MAX, "a positive edge length or a "
                                                  "[length, count] pair"))
            if len(out) > MAX_RECTILINEAR_CHUNKS:
                raise il.found(f"at most {MAX_RECTILINEAR_CHUNKS} chunks along an axis", "more")
    total = sum(out)
    if total < length:
        raise loc.found(f"edge lengths summing to at least the axis length {length}",
                        f"a sum of {total}")
    return tuple(out)


def parse_grid_v3(value: Any, shape: tuple[int, ...], loc: Loc) -> ChunkGrid:
    if isinstance(value, str):
        raise loc.error("a chunk grid object with a configuration", value)
    obj = loc.obj(value)
    loc.keys(obj, ("name",), ("configuration", "must_understand"))
    name = (loc / "name").str(obj["name"])
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
        sizes = tuple(_expand_axis(a, n, sl / i) for i, (a, n) in enumerate(zip(axes, shape)))
        return RectilinearGrid(sizes, json=conf)
    raise (loc / "name").error("a known chunk grid ('regular' or 'rectilinear')", name)


def _compress(edges: tuple[int, ...]) -> list[Any]:
    out: list[Any] = []
    i = 0
    while i < len(edges):
        j = i
        while j < len(edges) and edges[j] == edges[i]:
            j += 1
        out.append([edges[i], j - i] if j - i > 1 else edges[i])
        i = j
    return out


def grid_json(grid: ChunkGrid, shape: tuple[int, ...]) -> dict[str, Any]:
    if isinstance(grid, RegularGrid):
        return {"name": "regular", "configuration": {"chunk_shape": list(grid.chunk_shape)}}
    assert isinstance(grid, RectilinearGrid)
    conf = grid.json
    if isinstance(conf, dict):
        try:
            again = parse_grid_v3({"name": "rectilinear", "configuration": conf}, shape,
                                  Loc("chunk_grid"))
            if again == grid:
                return {"name": "rectilinear", "configuration": conf}
        except ValueError:
            pass
    return {"name": "rectilinear", "configuration": {
        "kind": "inline", "chunk_shapes": [_compress(e) for e in grid.chunk_sizes]}}


def grid_shape(grid: ChunkGrid, shape: tuple[int, ...]) -> tuple[int, ...]:
    """Number of chunks along each axis that hold array elements."""
    return tuple(len(chunk_edges(grid, shape, a)) if isinstance(grid, RectilinearGrid)
                 else -(-n // c) for a, (n, c) in enumerate(
                     zip(shape, grid.chunk_shape if isinstance(grid, RegularGrid)
                         else [1] * len(shape))))


def chunk_edges(grid: ChunkGrid, shape: tuple[int, ...], axis: int) -> tuple[int, ...]:
    """Nominal edge lengths of the chunks along ``axis`` that intersect ``[0, shape[axis])``."""
    n = shape[axis]
    if isinstance(grid, RegularGrid):
        c = grid.chunk_shape[axis]
        return (c,) * (-(-n // c))
    assert isinstance(grid, RectilinearGrid)
    out, total = [], 0
    for e in grid.chunk_sizes[axis]:
        if total >= n:
            break
        out.append(e)
        total += e
    return tuple(out)


# -- chunk key encodings ----------------------------------------------------------------------
def parse_key_encoding_v3(value: Any, loc: Loc) -> KeyEncoding:
    if isinstance(value, str):
        name, conf = value, {}
    else:
        obj = loc.obj(value)
        loc.keys(obj, ("name",), ("configuration", "must_understand"))
        name = (loc / "name").str(obj["name"])
        conf = (loc / "configuration").obj(obj.get("configuration", {}))
    if name not in ("default", "v2"):
        raise (loc / "name").error("'default' or 'v2'", name)
    cl = loc / "configuration"
    cl.keys(conf, (), ("separator",))
    sep = conf.get("separator", "/" if name == "default" else ".")
    if sep not in ("/", "."):
        raise (cl / "separator").error("'/' or '.'", sep)
    return KeyEncoding(name, sep)


def key_encoding_json(enc: KeyEncoding) -> dict[str, Any]:
    return {"name": enc.name, "configuration": {"separator": enc.separator}}
