"""User selections -> per-chunk projections over a chunk grid.

``plan_selection(selection, shape, grid, kind)`` parses a selection with numpy semantics and
returns a :class:`SelectionPlan`: the result shape and, for every chunk the selection touches,
a :class:`ChunkProjection` saying which cells of the chunk array (``chunk_sel``) go where in the
output (``out_sel``), and whether the selection covers the chunk entirely (``full``).

- ``basic`` / ``orthogonal`` / ``block``: ``out[out_sel] = chunk[chunk_sel]`` (reads) and
  ``chunk[chunk_sel] = values[out_sel]`` (writes) are correct numpy statements. The chunk array
  has the chunk's stored shape (a regular grid's full chunk shape, even at the border).
- ``coordinate`` / ``mask``: ``out_sel`` is ``(positions,)`` into the *flattened* output:
  ``out.reshape(-1)[out_sel[0]] = chunk[chunk_sel]``.

Chunks are listed in C order of their coordinates, or shard-major when ``shard_shape`` is given.
Per-axis projections are computed once and combined lazily: planning a small read costs a few
microseconds, and a large plan holds no Python object per chunk until it is iterated.
"""
from __future__ import annotations

import bisect
import itertools
import math
import operator
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np

from zarrx import _indexing
from zarrx.errors import IndexingError

__all__ = [
    "KINDS",
    "AxisGrid",
    "ChunkGridIndex",
    "ChunkProjection",
    "Grid",
    "SelectionPlan",
    "is_view",
    "kind_of",
    "plan_selection",
    "shard_major",
]

KINDS = ("basic", "orthogonal", "coordinate", "mask", "block")
#: a regular chunk shape, or the explicit chunk edge lengths of every axis (rectilinear)
Grid = Sequence[int] | Sequence[Sequence[int]]


class ChunkProjection(NamedTuple):
    coords: tuple[int, ...]      # chunk grid coordinates
    chunk_sel: tuple             # selection inside the chunk array
    out_sel: tuple               # selection inside the output (flat positions for coordinate/mask)
    full: bool                   # the selection covers every in-bounds cell of the chunk


# ---------------------------------------------------------------------------------- the grid

class AxisGrid:
    """Chunk boundaries along one axis of length ``size``: regular (``chunk`` > 0) or explicit
    edge lengths (``edges``, rectilinear)."""

    __slots__ = ("chunk", "nchunks", "offsets", "size")

    def __init__(self, size: int, chunk: int | None = None, edges: Sequence[int] | None = None,
                 axis: int = 0) -> None:
        self.size = size
        if edges is None:
            if not isinstance(chunk, (int, np.integer)) or isinstance(chunk, bool) or chunk < 1:
                raise IndexingError(f"chunk shape[{axis}]: expected an integer >= 1, found {chunk!r}")
            self.chunk = int(chunk)
            self.offsets = None
            self.nchunks = -(-size // self.chunk)
        else:
            if hasattr(edges, "covering"):        # run-length edges: only those the axis touches
                edges = edges.covering(size)
            lens = [int(e) for e in edges]
            if any(e < 1 for e in lens):
                raise IndexingError(f"chunk edges of axis {axis}: expected lengths >= 1, found {edges!r}")
            offs = np.concatenate([[0], np.cumsum(lens, dtype=np.int64)]).astype(np.int64)
            if offs[-1] < size:
                raise IndexingError(f"chunk edges of axis {axis}: expected lengths summing to at "
                                    f"least the axis size {size}, found sum {int(offs[-1])}")
            self.chunk = 0
            self.nchunks = int(np.searchsorted(offs, size, side="left")) if size else 0
            self.offsets = offs[: max(self.nchunks, 1) + 1].copy()

    def start(self, k: int) -> int:
        return k * self.chunk if self.chunk else int(self.offsets[k])

    def stored_len(self, k: int) -> int:
        """Length of chunk ``k``'s array along this axis."""
        return self.chunk if self.chunk else int(self.offsets[k + 1] - self.offsets[k])

    def inbound_len(self, k: int) -> int:
        """Cells of chunk ``k`` inside the array along this axis."""
        s = self.start(k)
        return min(s + self.stored_len(k), self.size) - s

    def boundaries(self) -> np.ndarray:
        """The ``nchunks + 1`` chunk boundaries along this axis, the last clipped to the size."""
        if self.chunk:
            b = np.arange(self.nchunks + 1, dtype=np.int64) * self.chunk
        else:
            b = self.offsets[: self.nchunks + 1].copy()  # type: ignore[index]
        if self.nchunks:
            b[-1] = self.size
        return b

    def sizes(self) -> np.ndarray:
        """Stored chunk lengths along this axis (a regular grid's border chunk is full size)."""
        if self.chunk:
            return np.full(self.nchunks, self.chunk, dtype=np.int64)
        return np.diff(self.offsets)[: self.nchunks]  # type: ignore[arg-type]

    def chunk_of(self, pos: int) -> int:
        if self.chunk:
            return pos // self.chunk
        return bisect.bisect_right(self.offsets, pos) - 1  # type: ignore[arg-type]


class ChunkGridIndex:
    """The chunk grid of an array: per-axis boundaries, chunk counts, chunk shapes and regions.

    ``grid`` is a regular chunk shape ``(c0, c1, ...)`` or rectilinear edge lengths
    ``((e00, e01, ...), (e10, ...), ...)``; model objects with ``chunk_shape`` (regular) or
    ``chunk_sizes`` (rectilinear) are accepted too."""

    __slots__ = ("axes", "nchunks", "regular", "shape")

    def __init__(self, shape: Sequence[int], grid: Any) -> None:
        if type(grid) is tuple:                   # the common case: no attribute lookups
            pass
        elif hasattr(grid, "chunk_sizes"):        # model RectilinearGrid
            grid = grid.chunk_sizes
        elif hasattr(grid, "chunk_shape"):        # model RegularGrid
            grid = grid.chunk_shape
        if type(shape) is tuple and all(type(s) is int and s >= 0 for s in shape):
            self.shape = shape
        else:
            self.shape = tuple(_as_size(s, f"shape[{i}]") for i, s in enumerate(shape))
        try:
            grid = tuple(grid)
        except TypeError:
            raise IndexingError(f"chunk grid: expected a chunk shape or per-axis edge lengths, "
                                f"found {grid!r}") from None
        if len(grid) != len(self.shape):
            raise IndexingError(f"chunk grid has {len(grid)} axes but the array shape "
                                f"{self.shape} has {len(self.shape)}")
        self.regular = all(type(g) is int for g in grid) or \
            all(not isinstance(g, (Sequence, np.ndarray)) for g in grid)
        self.axes = tuple(AxisGrid(n, g, None, i) if self.regular or not isinstance(g, (Sequence, np.ndarray))
                          else AxisGrid(n, None, g, i) for i, (n, g) in enumerate(zip(self.shape, grid)))
        self.nchunks = tuple(a.nchunks for a in self.axes)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def chunk_shape(self, coords: Sequence[int]) -> tuple[int, ...]:
        """Shape of the stored chunk array at ``coords``."""
        return tuple(a.stored_len(k) for a, k in zip(self.axes, coords))

    def chunk_region(self, coords: Sequence[int]) -> tuple[slice, ...]:
        """The array region (in-bounds cells) covered by the chunk at ``coords``."""
        return tuple(slice(a.start(k), a.start(k) + a.inbound_len(k)) for a, k in zip(self.axes, coords))

    def chunk_of(self, position: Sequence[int]) -> tuple[int, ...]:
        return tuple(a.chunk_of(p) for a, p in zip(self.axes, position))

    def all_coords(self) -> Iterator[tuple[int, ...]]:
        return itertools.product(*(range(n) for n in self.nchunks))


def _as_size(v: Any, where: str) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
        raise IndexingError(f"{where}: expected an integer >= 0, found {v!r}")
    return int(v)


# ------------------------------------------------------------------------- selection parsing
#
# Parsed per-axis items: ("new",) newaxis, ("int", pos), ("slice", start, n, step) with every
# selected position inside the axis, ("array", int64 positions).

_USE = ("use z.oindex[...] for orthogonal (outer) selection or z.vindex[...] for coordinate "
        "(point-wise) selection")


def _is_int(s: Any) -> bool:
    return isinstance(s, (int, np.integer)) and not isinstance(s, (bool, np.bool_))


def _expand(sel: Any, ndim: int, allow_new: bool, what: str) -> tuple:
    """Replace Ellipsis (or pad the end) with full slices; check the index count."""
    if not isinstance(sel, tuple):
        sel = (sel,)
    n_ell = n_real = 0
    at = -1
    for i, s in enumerate(sel):
        if s is Ellipsis:
            n_ell += 1
            at = i
        elif s is None:
            if not allow_new:
                raise IndexingError(f"{what} selection: newaxis (None) is only supported in "
                                    f"basic selections, found it at position {i}")
        else:
            n_real += 1
    if n_ell > 1:
        raise IndexingError(f"an index can only have a single ellipsis ('...'), found {n_ell}")
    if n_real > ndim:
        raise IndexingError(f"too many indices for array: array is {ndim}-dimensional, "
                            f"but {n_real} were indexed")
    fill = (slice(None),) * (ndim - n_real)
    if n_ell:
        return sel[:at] + fill + sel[at + 1:]
    return sel + fill


def _positions(arr: Any, size: int, axis: int) -> np.ndarray:
    """An int64 C-contiguous copy of ``arr`` with negatives wrapped; raises IndexingError naming
    the first out-of-range value."""
    a = np.array(arr, dtype=np.int64, copy=True, order="C").reshape(-1)
    bad = _indexing.wrap_positions(a, size)
    if bad >= 0:
        raise IndexingError(f"index {np.asarray(arr).reshape(-1)[bad]} is out of bounds for "
                            f"axis {axis} with size {size}")
    return a


def _parse_int(s: Any, size: int, axis: int) -> int:
    i = int(s)
    if i < 0:
        i += size
    if i < 0 or i >= size:
        raise IndexingError(f"index {s} is out of bounds for axis {axis} with size {size}")
    return i


def _parse_slice(s: slice, size: int, axis: int) -> tuple:
    """``("slice", start, n, step)`` for a slice over an axis of ``size``."""
    start, stop, step = s.start, s.stop, s.step
    if not ((start is None or type(start) is int) and (stop is None or type(stop) is int)
            and (step is None or type(step) is int)):
        for part, v in (("start", start), ("stop", stop), ("step", step)):
            if v is not None and not _is_int(v):
                raise IndexingError(f"slice {part} on axis {axis}: expected an integer or "
                                    f"None, found {v!r}")
    if step is not None and step == 0:
        raise IndexingError(f"slice step cannot be zero (axis {axis})")
    start, stop, step = s.indices(size)
    n = len(range(start, stop, step))
    return ("slice", start if n else 0, n, step)


def _parse_index_array(s: Any, size: int, axis: int, what: str) -> tuple:
    """``("array", positions)`` for a 1-d integer or boolean index array along one axis."""
    a = np.asarray(s)
    kind = a.dtype.kind
    if kind == "b":
        if a.ndim != 1 or a.shape[0] != size:
            raise IndexingError(f"boolean index on axis {axis}: expected a 1-d array of length "
                                f"{size}, found shape {a.shape}")
        return ("array", np.flatnonzero(a).astype(np.int64))
    if kind == "f" and a.size == 0:
        a = a.astype(np.int64)        # an empty list
        kind = "i"
    if kind not in "iu":
        raise IndexingError(f"index array on axis {axis}: expected integers or booleans, "
                            f"found dtype {a.dtype}")
    if a.ndim != 1:
        raise IndexingError(f"{what} index array on axis {axis}: expected 1 dimension, "
                            f"found shape {a.shape}")
    return ("array", _positions(a, size, axis))


def _parse_axis(s: Any, size: int, axis: int, what: str) -> tuple:
    if type(s) is slice:
        return _parse_slice(s, size, axis)
    if _is_int(s):
        return ("int", _parse_int(s, size, axis))
    if isinstance(s, (list, tuple, np.ndarray)):        # a nested tuple is a sequence, as in numpy
        if isinstance(s, np.ndarray) and s.ndim == 0 and s.dtype.kind in "iu":
            return ("int", _parse_int(int(s), size, axis))
        return _parse_index_array(s, size, axis, what)
    raise IndexingError(f"index {s!r} on axis {axis}: expected an integer, a slice, an integer or "
                        f"boolean array, None or Ellipsis; found {type(s).__name__}")


def _parse_basic(sel: Any, shape: tuple[int, ...]) -> tuple[str, Any]:
    """Items of a basic selection, or ``("mask", bool array)`` for a full-shape boolean mask."""
    ndim = len(shape)
    if type(sel) is tuple and len(sel) == ndim:      # the common case: one int or slice per axis
        items = []
        for ax, s in enumerate(sel):
            if type(s) is slice:
                items.append(_parse_slice(s, shape[ax], ax))
            elif type(s) is int:
                items.append(("int", _parse_int(s, shape[ax], ax)))
            else:
                break
        else:
            return "items", items
    if isinstance(sel, (np.ndarray, list)) and ndim > 1:
        a = np.asarray(sel)
        if a.dtype == np.bool_ and a.ndim > 1:
            if a.shape != shape:
                raise IndexingError(f"boolean mask: expected shape {shape}, found {a.shape}")
            return "mask", a
    items = []
    ax = 0
    for s in _expand(sel, ndim, True, "basic"):
        if s is None:
            items.append(("new",))
            continue
        if isinstance(s, np.ndarray) and s.dtype == np.bool_ and s.ndim > 1:
            raise IndexingError(f"boolean mask of shape {s.shape} at axis {ax}: a mask must "
                                f"have the array's full shape {shape} and stand alone")
        items.append(_parse_axis(s, shape[ax], ax, "basic"))
        ax += 1
    arrays = [i for i, it in enumerate(items) if it[0] == "array"]
    if len(arrays) > 1:
        raise IndexingError(f"basic selection with {len(arrays)} index arrays is ambiguous; {_USE}")
    if arrays:
        # numpy moves the array's axis to the front when integers and the array are not
        # adjacent; the orthogonal result agrees only when that axis comes first anyway
        adv = [i for i, it in enumerate(items) if it[0] in ("int", "array")]
        out_pos = sum(1 for it in items[:arrays[0]] if it[0] in ("new", "slice"))
        if adv[-1] - adv[0] + 1 != len(adv) and out_pos != 0:
            raise IndexingError("basic selection mixes an index array with integers that are "
                                f"not adjacent (numpy would move the array's axis first); {_USE}")
    return "items", items


def _parse_orthogonal(sel: Any, shape: tuple[int, ...]) -> list[tuple]:
    """Items of an orthogonal selection: per axis an int, slice, or 1-d int/bool array."""
    sel = _expand(sel, len(shape), False, "orthogonal")
    return [_parse_axis(s, shape[ax], ax, "orthogonal") for ax, s in enumerate(sel)]


def _parse_coordinate(sel: Any, shape: tuple[int, ...]) -> tuple[list[np.ndarray], tuple[int, ...]]:
    """``(flat int64 positions per axis, broadcast shape)`` of a coordinate selection; a single
    full-shape boolean array is a mask."""
    ndim = len(shape)
    if not isinstance(sel, tuple):
        sel = (sel,)
    if len(sel) == 1 and isinstance(sel[0], (np.ndarray, list)):
        a = np.asarray(sel[0])
        if a.dtype == np.bool_:
            if a.shape != shape:
                raise IndexingError(f"boolean mask: expected shape {shape}, found {a.shape}")
            return [p.astype(np.int64) for p in np.nonzero(a)], (int(a.sum()),)
    if len(sel) != ndim:
        raise IndexingError(f"coordinate selection: expected {ndim} index arrays (one per "
                            f"axis), found {len(sel)}")
    arrs = []
    for ax, s in enumerate(sel):
        if _is_int(s):
            arrs.append(np.asarray(s, dtype=np.int64))
            continue
        if not isinstance(s, (list, tuple, np.ndarray)):
            raise IndexingError(f"coordinate selection on axis {ax}: expected an integer array, "
                                f"found {type(s).__name__} {s!r}; use z.oindex for slices")
        a = np.asarray(s)
        if a.size == 0 and a.dtype.kind == "f":
            a = a.astype(np.int64)
        if a.dtype.kind not in "iu":
            raise IndexingError(f"coordinate selection on axis {ax}: expected an integer "
                                f"array, found dtype {a.dtype}")
        arrs.append(a)
    try:
        bshape = np.broadcast_shapes(*(a.shape for a in arrs))
    except ValueError:
        raise IndexingError("coordinate selection: index arrays could not be broadcast "
                            f"together, found shapes {[a.shape for a in arrs]}") from None
    flat = [_positions(np.broadcast_to(a, bshape), shape[ax], ax) for ax, a in enumerate(arrs)]
    return flat, tuple(bshape)


def _parse_block(sel: Any, shape: tuple[int, ...], axes: tuple[AxisGrid, ...]) -> list[tuple]:
    """Slice items (element ranges) for a block selection over chunk indices."""
    items = []
    for ax, s in enumerate(_expand(sel, len(shape), False, "block")):
        a = axes[ax]
        nch = a.nchunks
        if _is_int(s):
            k = s + nch if s < 0 else s
            if not 0 <= k < nch:
                raise IndexingError(f"block index {s} is out of bounds for axis {ax} with "
                                    f"{nch} chunks")
            k0, k1 = k, k + 1
        elif isinstance(s, slice):
            if s.step is not None and (not _is_int(s.step) or s.step != 1):
                raise IndexingError(f"block selection on axis {ax}: expected a slice with step 1, "
                                    f"found step {s.step!r}")
            _, k0, kn, _ = _parse_slice(s, nch, ax)
            k1 = k0 + kn
        else:
            raise IndexingError(f"block selection on axis {ax}: expected an integer or a slice, "
                                f"found {type(s).__name__} {s!r}")
        if k1 <= k0:
            items.append(("slice", 0, 0, 1))
        else:
            lo = a.start(k0)
            hi = a.start(k1 - 1) + a.inbound_len(k1 - 1)
            items.append(("slice", lo, hi - lo, 1))
    return items


# ------------------------------------------------------------------------- shard-major order

def shard_major(coords: np.ndarray, levels: Sequence[int] | Sequence[Sequence[int]]) -> np.ndarray:
    """The permutation listing chunk ``coords`` (an ``(n, ndim)`` int array) shard-major.

    ``levels`` is one shard shape or a list of them, outermost first, each in chunks per shard
    along every axis (in units of the chunks being listed). Chunks are grouped by outer shard
    (shards in C order), then by the next level's shard inside it, and so on; leaves in C order.
    """
    c = np.asarray(coords, dtype=np.int64)
    if c.ndim != 2:
        raise IndexingError(f"shard_major: expected an (n, ndim) coordinate array, found shape {c.shape}")
    if levels and not isinstance(levels[0], (tuple, list, np.ndarray)):
        levels = [levels]  # type: ignore[list-item]
    keys: list[np.ndarray] = []
    for li, lev in enumerate(levels):
        lev = tuple(int(x) for x in lev)  # type: ignore[union-attr]
        if len(lev) != c.shape[1] or any(x < 1 for x in lev):
            raise IndexingError(f"shard shape level {li}: expected {c.shape[1]} integers >= 1, found {lev}")
        keys += [c[:, ax] // lev[ax] for ax in range(c.shape[1])]
    keys += [c[:, ax] for ax in range(c.shape[1])]
    if not keys:
        return np.arange(c.shape[0], dtype=np.int64)
    return np.lexsort(keys[::-1]).astype(np.int64)


# ------------------------------------------------------------------------------------- plans

class ChunkList(Sequence):
    """The chunk projections of a plan as a lazy sequence: ``len()``, iteration, indexing and
    slicing build :class:`ChunkProjection` objects on demand, never all at once."""

    __slots__ = ("_it", "_plan", "_pos")

    def __init__(self, plan: SelectionPlan) -> None:
        self._plan = plan
        self._it: Iterator[ChunkProjection] | None = None   # consecutive slices continue it
        self._pos = 0

    def __len__(self) -> int:
        return self._plan.nchunks

    def __iter__(self) -> Iterator[ChunkProjection]:
        return self._plan._iter(self._plan._order)

    def __getitem__(self, i: Any) -> Any:
        n = self._plan.nchunks
        if isinstance(i, slice):
            start, stop, step = i.indices(n)
            if step != 1 or stop <= start or (start != self._pos and start != 0):
                return [self[k] for k in range(start, stop, step)]
            if start == 0 or self._it is None:
                self._it, self._pos = iter(self), 0
            out = list(itertools.islice(self._it, stop - start))
            self._pos = start + len(out)
            return out
        k = operator.index(i)
        if k < 0:
            k += n
        if not 0 <= k < n:
            raise IndexError(f"chunk {i} of a plan listing {n} chunks")
        order = self._plan._order
        return self._plan._at(k if order is None else int(order[k]))

    def coords(self) -> np.ndarray:
        """The listed chunks' coordinates, in listing order, as an ``(n, ndim)`` array."""
        return self._plan.chunk_coords()

    def __repr__(self) -> str:
        return f"ChunkList(<{len(self)} chunk projections>)"


class SelectionPlan:
    """Result shape plus the chunk projections of one selection (``plan.chunks``)."""

    __slots__ = ("_at", "_coords", "_iter", "_order", "kind", "nchunks", "out_shape")

    def __init__(self, kind: str, out_shape: tuple[int, ...], nchunks: int, it: Any, at: Any,
                 coords: Any) -> None:
        self.kind = kind
        self.out_shape = out_shape
        self.nchunks = nchunks
        self._iter = it            # callable(order or None) -> iterator of ChunkProjection
        self._at = at              # callable(C-order index) -> ChunkProjection
        self._coords = coords      # callable() -> (nchunks, ndim) int64 array, C order
        self._order: np.ndarray | None = None

    @property
    def flat(self) -> bool:
        """True when ``out_sel`` indexes the flattened output (coordinate and mask plans)."""
        return self.kind in ("coordinate", "mask")

    @property
    def chunks(self) -> ChunkList:
        return ChunkList(self)

    def __iter__(self) -> Iterator[ChunkProjection]:
        return self._iter(self._order)

    def __len__(self) -> int:
        return self.nchunks

    def chunk_coords(self) -> np.ndarray:
        """Coordinates of the listed chunks, in listing order, as an ``(nchunks, ndim)`` array."""
        c = self._coords()
        return c if self._order is None else c[self._order]

    def reorder_shard_major(self, shard_shape: Any) -> None:
        self._order = shard_major(self._coords(), shard_shape) if self.nchunks > 1 else None

    def __repr__(self) -> str:
        return f"SelectionPlan(kind={self.kind!r}, out_shape={self.out_shape}, nchunks={self.nchunks})"


def kind_of(selection: Any, shape: Sequence[int]) -> str:
    """The kind ``z[selection]`` means, as in numpy (and zarr-python): ``"mask"`` for a boolean
    array of the array's full shape (rank >= 1); ``"coordinate"`` for pure fancy indexing, one
    integer or integer array per axis with at least one array (``z[[1, 3], [2, 4]]`` reads two
    points; on a 1-d array, any integer array); else ``"basic"`` (which also accepts one index
    array along one axis)."""
    ndim = len(shape)
    if isinstance(selection, (np.ndarray, list)) and ndim >= 1:
        a = _as_index_array(selection)
        if a is not None and a.dtype == np.bool_ and a.shape == tuple(shape):
            return "mask"
        if ndim == 1 and a is not None and a.dtype.kind in "iu" and a.ndim > 1:
            return "coordinate"
    if isinstance(selection, tuple) and len(selection) == ndim and ndim >= 1:
        arrays = 0
        for s in selection:
            if _is_int(s):
                continue
            if not isinstance(s, (np.ndarray, list)):
                return "basic"
            a = _as_index_array(s)
            if a is None or a.dtype.kind not in "iu" or (a.size == 0 and isinstance(s, list)):
                return "basic"
            arrays += 1
        if arrays:
            return "coordinate"
    return "basic"


def _as_index_array(sel: np.ndarray | list) -> np.ndarray | None:
    if isinstance(sel, np.ndarray):
        return sel
    try:
        return np.asarray(sel)
    except (ValueError, TypeError):       # ragged lists: the planner says what is wrong
        return None


def plan_selection(selection: Any, shape: Sequence[int], grid: Any, kind: str = "basic",
                   shard_shape: Any = None) -> SelectionPlan:
    """Plan ``selection`` (numpy semantics of ``kind``) over an array of ``shape`` chunked by
    ``grid`` (a chunk shape, rectilinear edge lengths, or a :class:`ChunkGridIndex`).

    ``shard_shape`` (chunks per shard per axis, or a list of levels outermost first) lists the
    chunks shard-major instead of in C order."""
    g = grid if isinstance(grid, ChunkGridIndex) else ChunkGridIndex(shape, grid)
    if tuple(shape) != g.shape:
        raise IndexingError(f"plan_selection: shape {tuple(shape)} differs from the grid's {g.shape}")
    if kind == "basic":
        parsed, data = _parse_basic(selection, g.shape)
        plan = _plan_points(*_mask_points(data, g.shape), g, "mask") if parsed == "mask" \
            else _plan_outer(data, g, "basic")
    elif kind == "orthogonal":
        plan = _plan_outer(_parse_orthogonal(selection, g.shape), g, kind)
    elif kind == "coordinate":
        if g.ndim == 0:
            _parse_orthogonal(selection, g.shape)     # () or ...: the one cell
            plan = _plan_points([], (), g, kind)
        else:
            plan = _plan_points(*_parse_coordinate(selection, g.shape), g, kind)
    elif kind == "mask":
        plan = _plan_points(*_mask_points(selection, g.shape), g, kind)
    elif kind == "block":
        plan = _plan_outer(_parse_block(selection, g.shape, g.axes), g, kind)
    else:
        raise IndexingError(f"selection kind: expected one of {', '.join(KINDS)}, found {kind!r}")
    if shard_shape is not None:
        plan.reorder_shard_major(shard_shape)
    return plan


# ----------------------------------------------------------- basic / orthogonal / block plans

def _project_array(pos: np.ndarray, a: AxisGrid) -> list[tuple[int, Any, Any, bool]]:
    """Group the positions of an index array by chunk: ``(k, chunk-local positions or slice,
    output positions or slice, full)`` per chunk, chunks ascending."""
    ids, order_flag = _indexing.chunk_ids(pos, a.chunk, a.offsets)
    perm = None if order_flag else _indexing.stable_order(ids, a.nchunks)
    sids = ids if perm is None else ids[perm]
    bounds = _indexing.group_bounds(sids).tolist()
    entries = []
    for b0, b1 in itertools.pairwise(bounds):
        k = int(sids[b0])
        start, inb, m = a.start(k), a.inbound_len(k), b1 - b0
        if perm is None:
            local = pos[b0:b1] - start
            osel: Any = slice(b0, b1)
            if order_flag == 2:
                full = m == inb
                csel: Any = slice(int(local[0]), int(local[-1]) + 1) \
                    if local[-1] - local[0] == m - 1 else local
            else:
                csel = local
                full = _covers(local, m, inb)
        else:
            osel = perm[b0:b1]
            csel = pos[osel] - start
            full = _covers(csel, m, inb)
        if full and m == inb and not isinstance(csel, slice):
            # each cell once, in some order: list the cells in chunk order instead
            osel = (np.arange(b0, b1) if isinstance(osel, slice) else osel)[np.argsort(csel)]
            csel = slice(0, inb)
        entries.append((k, csel, osel, bool(full)))
    return entries


def _covers(local: np.ndarray, m: int, inb: int) -> bool:
    """Do the ``m`` chunk-local positions ``local`` hit every one of the ``inb`` in-bounds cells?"""
    return m >= inb and int(np.count_nonzero(np.bincount(local, minlength=inb)[:inb])) == inb


def is_view(sel: tuple) -> bool:
    """True when ``sel`` holds only ints, slices, None and Ellipsis, so ``a[sel]`` is a view of
    ``a`` (a decode may write into it); index arrays make ``a[sel]`` a copy."""
    return all(s is None or s is Ellipsis or isinstance(s, (int, slice)) for s in sel)


def _as_ix(sel: Any, n: int, j: int, m: int) -> np.ndarray:
    """An index (slice or 1-d array) over ``n`` cells as an int array shaped for output axis
    ``j`` of ``m`` (np.ix_ style), so several arrays select an outer product."""
    a = np.arange(*sel.indices(n)) if isinstance(sel, slice) else np.asarray(sel)
    shape = [1] * m
    shape[j] = a.shape[0]
    return a.reshape(shape)


def _plan_outer(items: list, g: ChunkGridIndex, kind: str) -> SelectionPlan:
    lists: list[list] = []       # per array axis: (k, chunk_sel, out_sel, full)
    out_shape: list[int] = []
    outmap: list[int] = []       # per output axis: array axis feeding it, -1 for newaxis
    n_int = n_new = n_arr = 0
    for it in items:
        tag = it[0]
        if tag == "new":
            out_shape.append(1)
            outmap.append(-1)
            n_new += 1
            continue
        ax = len(lists)
        a = g.axes[ax]
        if tag == "int":
            p = it[1]
            k = a.chunk_of(p)
            lists.append([(k, p - a.start(k), None, a.inbound_len(k) == 1)])
            n_int += 1
            continue
        if tag == "slice":
            lists.append(_indexing.project_slice(it[1], it[2], it[3], a.size, a.chunk, a.offsets))
            out_shape.append(it[2])
        else:
            lists.append(_project_array(it[1], a))
            out_shape.append(it[1].shape[0])
            n_arr += 1
        outmap.append(ax)
    if n_arr > 1 or (n_arr and (n_int or n_new)):
        # numpy would broadcast several arrays (or an array and ints) together: make every
        # output axis an np.ix_-shaped array so the selection stays an outer product
        real = [ax for ax in outmap if ax >= 0]
        for j, ax in enumerate(real):
            n_chunk = g.axes[ax]
            lists[ax] = [(k, _as_ix(cs, n_chunk.stored_len(k), j, len(real)),
                          _as_ix(os, out_shape[outmap.index(ax)], j, len(real)), f)
                         for k, cs, os, f in lists[ax]]
    simple_out = not n_int and not n_new
    lens = [len(entries) for entries in lists]
    nchunks = math.prod(lens)

    def combos(order: np.ndarray | None) -> Iterator[tuple]:
        if order is None:
            return itertools.product(*lists)
        pos = [p.tolist() for p in np.unravel_index(order, lens)]
        return (tuple([ls[i] for ls, i in zip(lists, ii)]) for ii in zip(*pos))

    # a selection of one cell gets a trailing Ellipsis on both sides, so that both
    # out[out_sel] and chunk[chunk_sel] are 0-d views rather than scalar copies
    tail = (Ellipsis,) if not any(ax >= 0 for ax in outmap) else ()

    def build(combo: tuple) -> ChunkProjection:
        if simple_out:
            out_sel = tuple([e[2] for e in combo]) + tail
        else:
            out_sel = tuple([combo[i][2] if i >= 0 else 0 for i in outmap]) + tail
        return ChunkProjection(tuple([e[0] for e in combo]), tuple([e[1] for e in combo]) + tail,
                               out_sel, all([e[3] for e in combo]))

    def it(order: np.ndarray | None) -> Iterator[ChunkProjection]:
        return map(build, combos(order))

    def at(i: int) -> ChunkProjection:
        combo = []
        for entries, n in zip(reversed(lists), reversed(lens)):
            i, r = divmod(i, n)
            combo.append(entries[r])
        return build(tuple(combo[::-1]))

    def coords() -> np.ndarray:
        ks = [np.array([e[0] for e in entries], dtype=np.int64) for entries in lists]
        if not ks:
            return np.zeros((nchunks, 0), dtype=np.int64)
        mesh = np.meshgrid(*ks, indexing="ij")
        return np.stack([m.reshape(-1) for m in mesh], axis=1)

    return SelectionPlan(kind, tuple(out_shape), nchunks, it, at, coords)


# ------------------------------------------------------------------- coordinate / mask plans

def _mask_points(mask: Any, shape: tuple[int, ...]) -> tuple[list[np.ndarray], tuple[int, ...]]:
    m = np.asarray(mask)
    if isinstance(mask, tuple) and len(mask) == 1:
        m = np.asarray(mask[0])
    if m.dtype != np.bool_:
        raise IndexingError(f"boolean mask: expected a boolean array, found dtype {m.dtype}")
    if m.shape != tuple(shape):
        raise IndexingError(f"boolean mask: expected shape {tuple(shape)}, found {m.shape}")
    if m.ndim == 0:
        return [], (int(m.any()),)
    pts = [p.astype(np.int64) for p in np.nonzero(m)]
    return pts, (int(pts[0].shape[0]),)


def _plan_points(points: list[np.ndarray], bshape: tuple[int, ...], g: ChunkGridIndex,
                 kind: str) -> SelectionPlan:
    """Group flat point coordinates by chunk; ``out_sel`` holds flat output positions."""
    if g.ndim == 0:   # the one cell (or, for a false 0-d mask, nothing)
        n = 0 if bshape == (0,) else 1
        one = ChunkProjection((), (), (0,), True)
        return SelectionPlan(kind, tuple(bshape), n, lambda order: iter([one][:n]), lambda i: one,
                             lambda: np.zeros((n, 0), dtype=np.int64))
    npts = int(points[0].shape[0])
    ids = [_indexing.chunk_ids(p, a.chunk, a.offsets)[0] for p, a in zip(points, g.axes)]
    lin = np.ravel_multi_index(ids, g.nchunks) if npts else np.zeros(0, dtype=np.int64)
    lin = np.asarray(lin, dtype=np.int64)
    perm = None if npts < 2 or bool(np.all(lin[1:] >= lin[:-1])) else \
        _indexing.stable_order(lin, math.prod(g.nchunks))
    slin = lin if perm is None else lin[perm]
    bounds = _indexing.group_bounds(slin)
    nchunks = len(bounds) - 1
    first = slin[bounds[:-1]]

    bl = bounds.tolist()

    def at(gi: int) -> ChunkProjection:
        b0, b1 = bl[gi], bl[gi + 1]
        positions = np.arange(b0, b1, dtype=np.int64) if perm is None else perm[b0:b1]
        coords = tuple(int(c) for c in np.unravel_index(int(first[gi]), g.nchunks))
        local = tuple(p[positions] - a.start(k) for p, a, k in zip(points, g.axes, coords))
        inb = tuple(a.inbound_len(k) for a, k in zip(g.axes, coords))
        region = math.prod(inb)
        full = b1 - b0 >= region and _covers(np.ravel_multi_index(local, inb), b1 - b0, region)
        return ChunkProjection(coords, local, (positions,), bool(full))

    def it(order: np.ndarray | None) -> Iterator[ChunkProjection]:
        return map(at, range(nchunks) if order is None else order.tolist())

    def coords() -> np.ndarray:
        return np.stack(np.unravel_index(first, g.nchunks), axis=1).astype(np.int64) \
            if nchunks else np.zeros((0, g.ndim), dtype=np.int64)

    return SelectionPlan(kind, tuple(bshape), nchunks, it, at, coords)
