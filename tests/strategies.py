"""Hypothesis strategies for array shapes, chunk grids and selections of every kind, and for
whole Zarr arrays (format, data type, codecs, fill value) with region writes.

Reused by the indexing, gather, array property and random interop tests. Sizes stay small so
that many examples run in seconds; every strategy also produces the edge cases (zero-length
axes, border chunks, negative steps, duplicates, empty selections).
"""
from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st

from zarrx.indexing import ChunkGridIndex

MAX_SIDE = 12
STEPS = [None, 1, 1, 2, 3, 5, -1, -2, -3]


def shapes(min_dims: int = 0, max_dims: int = 4, max_side: int = MAX_SIDE,
           min_side: int = 0) -> st.SearchStrategy[tuple[int, ...]]:
    """Array shapes; axes of length 0 appear now and then."""
    side = st.one_of(st.integers(max(min_side, 1), max_side), st.integers(min_side, max_side))
    return st.lists(side, min_size=min_dims, max_size=max_dims).map(tuple)


def chunk_shapes(shape: tuple[int, ...]) -> st.SearchStrategy[tuple[int, ...]]:
    """Regular chunk shapes for ``shape``: from 1 to a bit more than the axis (border chunks)."""
    return st.tuples(*(st.integers(1, max(1, n + 2)) for n in shape))


@st.composite
def _edges(draw: Any, n: int) -> tuple[int, ...]:
    edges: list[int] = []
    while sum(edges) < n or not edges:
        edges.append(draw(st.integers(1, max(1, min(n, 5)))))
    if draw(st.booleans()) and draw(st.booleans()):
        edges.append(draw(st.integers(1, 3)))       # extra edge past the end: grid outgrows shape
    return tuple(edges)


def rectilinear_grids(shape: tuple[int, ...]) -> st.SearchStrategy[tuple[tuple[int, ...], ...]]:
    """Per-axis explicit chunk edge lengths covering each axis."""
    return st.tuples(*(_edges(n) for n in shape))


def grids(shape: tuple[int, ...]) -> st.SearchStrategy[Any]:
    """A regular chunk shape or a rectilinear grid."""
    return st.one_of(chunk_shapes(shape), rectilinear_grids(shape))


def _bound(n: int) -> st.SearchStrategy[int | None]:
    return st.one_of(st.none(), st.integers(-n - 3, n + 3))


def slices(n: int) -> st.SearchStrategy[slice]:
    """Slices with any start/stop (out of range too) and steps including negative ones."""
    return st.builds(slice, _bound(n), _bound(n), st.sampled_from(STEPS))


def ints(n: int) -> st.SearchStrategy[int]:
    """In-range integer indices, negative ones included (requires n >= 1)."""
    return st.integers(-n, n - 1)


@st.composite
def basic_selections(draw: Any, shape: tuple[int, ...]) -> Any:
    """ints, slices, Ellipsis, None (newaxis); sometimes fewer indices than dimensions, and a
    bare (non-tuple) index for the first axis."""
    per_axis = [draw(st.one_of(slices(n), ints(n)) if n else slices(n)) for n in shape]
    if draw(st.booleans()):         # prefix ... suffix
        head = draw(st.integers(0, len(shape)))
        tail = draw(st.integers(0, len(shape) - head))
        sel: list[Any] = per_axis[:head] + [Ellipsis] + per_axis[len(shape) - tail:]
    else:                           # the first k axes only
        sel = per_axis[: draw(st.integers(0, len(shape)))]
    for _ in range(draw(st.integers(0, 2))):
        sel.insert(draw(st.integers(0, len(sel))), None)
    if len(sel) == 1 and draw(st.booleans()):
        return sel[0]
    return tuple(sel)


@st.composite
def int_arrays(draw: Any, n: int, max_len: int = 8) -> np.ndarray:
    """1-d index arrays over an axis of length n: any order, duplicates, negatives; empty too."""
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    vals = draw(st.lists(st.integers(-n, n - 1), min_size=0, max_size=max_len))
    kind = draw(st.sampled_from(["any", "sorted", "unique"]))
    if kind == "sorted":
        vals = sorted(v % n for v in vals)
    elif kind == "unique":
        vals = sorted({v % n for v in vals})
    return np.array(vals, dtype=draw(st.sampled_from([np.int64, np.int32, np.intp])))


@st.composite
def bool_arrays(draw: Any, n: int) -> np.ndarray:
    return np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)


@st.composite
def orthogonal_selections(draw: Any, shape: tuple[int, ...]) -> tuple:
    """Per axis an int, a slice, an int array or a bool array of the axis length."""
    sel = []
    for n in shape:
        options = [slices(n), int_arrays(n), bool_arrays(n)] + ([ints(n)] if n else [])
        sel.append(draw(st.one_of(*options)))
    return tuple(sel)


@st.composite
def coordinate_selections(draw: Any, shape: tuple[int, ...]) -> tuple:
    """One int array (or scalar) per axis, broadcasting to a common shape of rank 0..2."""
    if not shape:
        return ()
    bshape = draw(st.lists(st.integers(0, 4), min_size=0, max_size=2).map(tuple))
    if any(n == 0 for n in shape) and 0 not in bshape:
        bshape = (0,) + bshape
    sel: list[Any] = []
    for n in shape:
        size = int(np.prod(bshape))
        if n and draw(st.integers(0, 5)) == 0:
            sel.append(draw(ints(n)))            # a scalar broadcasts
            continue
        bs = bshape
        if n and bs and draw(st.booleans()):      # a broadcastable, smaller shape
            bs = tuple(1 if draw(st.booleans()) else d for d in bs)
            size = int(np.prod(bs))
        vals = draw(st.lists(st.integers(-n, n - 1), min_size=size, max_size=size)) if n else []
        sel.append(np.array(vals, dtype=np.int64).reshape(bs))
    return tuple(sel)


@st.composite
def mask_selections(draw: Any, shape: tuple[int, ...]) -> np.ndarray:
    """A boolean array of the full shape (sparse, dense, all False or all True)."""
    size = int(np.prod(shape))
    density = draw(st.sampled_from([0.0, 0.2, 0.7, 1.0]))
    seed = draw(st.integers(0, 2**32 - 1))
    return np.random.default_rng(seed).random(size).reshape(shape) < density


@st.composite
def block_selections(draw: Any, shape: tuple[int, ...], chunks: Any) -> tuple:
    """Per axis an int (negative too) or a step-1 slice over chunk indices."""
    grid = ChunkGridIndex(shape, chunks)
    sel: list[Any] = []
    for nch in grid.nchunks:
        options: list[Any] = [st.builds(slice, _bound(nch), _bound(nch), st.sampled_from([None, 1]))]
        if nch:
            options.append(st.integers(-nch, nch - 1))
        sel.append(draw(st.one_of(*options)))
    return tuple(sel[: draw(st.integers(0, len(sel)))]) if draw(st.booleans()) else tuple(sel)


# ---------------------------------------------------------------- whole Zarr arrays (interop)
# Used by tests/test_interop_random.py: a spec of every creation choice, region writes and
# random values of every bit pattern.

NUMERIC = ["i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f2", "f4", "f8", "c8", "c16"]
UNITS = ["Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "10s", "5ms"]
SHUFFLES = ["noshuffle", "shuffle", "bitshuffle", "auto"]     # auto: numcodecs' -1 (v2)



@st.composite
def zarr_dtypes(draw: Any, fmt: int) -> np.dtype:
    kind = draw(st.sampled_from(["bool", "num", "num", "num", "S", "U", "M", "m"]))
    order = draw(st.sampled_from("<>")) if fmt == 2 else "<"   # v3: order lives in `bytes`
    if kind == "bool":
        return np.dtype(bool)
    if kind == "num":
        return np.dtype(order + draw(st.sampled_from(NUMERIC)))
    if kind in "SU":
        return np.dtype(f"{order if kind == 'U' else '|'}{kind}{draw(st.integers(1, 6))}")
    return np.dtype(f"{order}{kind}8[{draw(st.sampled_from(UNITS))}]")


def fill_values(dt: np.dtype) -> st.SearchStrategy[Any]:
    rand = st.integers(0, 2**32 - 1).map(
        lambda s: random_values(dt, (), np.random.default_rng(s))[()])
    options: list[Any] = [st.just(None), st.just(0) if dt.kind not in "SUMm" else rand, rand]
    if dt.kind in "fc":
        options.append(st.sampled_from([float("nan"), float("inf"), float("-inf")]))
    return st.one_of(*options)


@st.composite
def array_specs(draw: Any, fmt: int | None = None) -> dict:
    fmt = fmt or draw(st.sampled_from([2, 3]))
    dt = draw(zarr_dtypes(fmt))
    shape = draw(shapes(0, 4, max_side=9))
    chunks = draw(chunk_shapes(shape))
    spec: dict[str, Any] = dict(fmt=fmt, dtype=dt, shape=shape, chunks=chunks, shards=None,
                                endian=None, transpose=None, order="C")
    spec["compressor"] = draw(st.sampled_from(["none", "gzip", "zstd", "blosc"]))
    spec["shuffle"] = draw(st.sampled_from(SHUFFLES))
    if fmt == 3:
        # "dtype": a big-endian numpy type and the serializer left to the library
        spec["endian"] = draw(st.sampled_from(["little", "big", "dtype"]))
        spec["crc32c"] = draw(st.booleans())
        if shape and draw(st.booleans()):
            spec["transpose"] = tuple(draw(st.permutations(range(len(shape)))))
        if shape and draw(st.booleans()):
            spec["shards"] = {"shape": tuple(c * draw(st.integers(1, 3)) for c in chunks),
                              "index_location": draw(st.sampled_from(["start", "end"]))}
        spec["key"] = {"name": draw(st.sampled_from(["default", "v2"])),
                       "separator": draw(st.sampled_from(["/", "."]))}
    else:
        spec["crc32c"] = False
        spec["order"] = draw(st.sampled_from("CF"))
        spec["key"] = {"name": "v2", "separator": draw(st.sampled_from(["/", "."]))}
    spec["fill"] = draw(fill_values(dt))
    spec["write_empty_chunks"] = draw(st.booleans())
    spec["creator"] = draw(st.sampled_from(["zarrx", "zarr"]))
    return spec


@st.composite
def region_selections(draw: Any, shape: tuple[int, ...]) -> tuple:
    sel: list[Any] = []
    for n in shape:
        if n and draw(st.integers(0, 3)) == 0:
            sel.append(draw(st.integers(-n, n - 1)))
            continue
        start = draw(st.integers(0, n))
        stop = draw(st.integers(start, n))
        sel.append(slice(start, stop, draw(st.sampled_from([None, 1, 2, 3]))))
    form = draw(st.sampled_from(["full", "full", "prefix", "ellipsis"]))
    if form == "prefix":                        # fewer indices than dimensions
        return tuple(sel[:draw(st.integers(0, len(sel)))])
    if form == "ellipsis":
        at = draw(st.integers(0, len(sel)))
        return tuple(sel[:at] + [Ellipsis] + sel[at + draw(st.integers(0, len(sel) - at)):])
    return tuple(sel)


def per_axis(sel: tuple, ndim: int) -> tuple:
    """``sel`` with an entry for every axis (no Ellipsis)."""
    if Ellipsis in sel:
        at = sel.index(Ellipsis)
        rest = sel[at + 1:]
        return sel[:at] + (slice(None),) * (ndim - at - len(rest)) + rest
    return sel + (slice(None),) * (ndim - len(sel))


@st.composite
def region_writes(draw: Any, shape: tuple[int, ...]) -> list:
    """(selection, kind, seed): kind "array", "scalar" (random), "special" (the fill value,
    -0.0, NaN with a payload..., written as a scalar), "broadcast" (an array with axes of
    length 1, or fewer axes) or "wide" (the values as a wider type, or a list)."""
    out = []
    for _ in range(draw(st.integers(1, 4))):
        kinds = ["array", "scalar", "special", "broadcast", "wide"]
        out.append((draw(region_selections(shape)), draw(st.sampled_from(kinds)),
                    draw(st.integers(0, 2**32 - 1))))
    return out


def random_values(dt: np.dtype, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Random values of every bit pattern (NaN payloads, infinities, NaT, -0.0 included)."""
    n = int(np.prod(shape))
    if dt.kind == "b":
        return rng.integers(0, 2, n).astype(bool).reshape(shape)
    if dt.kind == "U":
        cps = rng.integers(1, 0xD7FF, n * (dt.itemsize // 4)).astype("<u4")
        x = cps.view(f"<U{dt.itemsize // 4}").reshape(shape)
        return x.astype(dt)
    raw = rng.integers(0, 256, n * dt.itemsize, dtype=np.uint8)
    if dt.kind == "S":
        raw[raw == 0] = 1
    x = raw.view(dt.newbyteorder("=") if dt.kind != "S" else dt).reshape(shape).copy()
    if dt.kind in "fc" and n and rng.integers(0, 2):           # some plain numbers as well
        flat = x.reshape(-1)
        flat[rng.integers(0, 2, n).astype(bool)] = 1.5
    return x.astype(dt)


def value_shape(shape: tuple[int, ...], kind: str, rng: np.random.Generator) -> tuple[int, ...]:
    if kind != "broadcast":
        return shape
    shape = shape[int(rng.integers(0, len(shape) + 1)):]       # fewer leading axes
    return tuple(1 if rng.integers(0, 2) else n for n in shape)


def wider(value: np.ndarray) -> Any:
    """The same values as a type that holds them all, as a user may pass them."""
    dt = value.dtype
    if dt.kind in "iu":
        return value.astype("i8" if dt.kind == "i" or dt.itemsize < 8 else "u8")
    if dt.kind == "f":
        return value.astype("f8")
    if dt.kind == "c":
        return value.astype("c16")
    if dt.kind in "SUb":        # (an empty nested list loses its shape: numpy refuses it)
        return value.tolist() if value.size else value
    return value.astype(dt.newbyteorder("<" if dt.byteorder == ">" else ">"))

