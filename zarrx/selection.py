"""User selections (numpy semantics) parsed into per-axis items, before any chunk is involved.

Parsed per-axis items: ``("new",)`` newaxis, ``("int", pos)``, ``("slice", start, n, step)``
with every selected position inside the axis, ``("array", int64 positions)`` (in a basic
selection, with an index array of several axes: ``("array", flat positions, its shape)``).
Coordinate and mask selections parse into flat int64 positions per axis and the result shape.
Every problem is an :class:`~zarrx.errors.IndexingError` that names the axis and what was found.
:mod:`zarrx.indexing` projects the parsed items onto a chunk grid.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from zarrx import _indexing, config
from zarrx.errors import (BoundsCheckError, IndexingError, IndexingTypeError,
                          IndexingValueError, SelectionSizeError, VindexInvalidSelectionError)
from zarrx.metadata._util import short
from zarrx.metadata.grid import MAX_NDIM

__all__ = ["kind_of", "parse_basic", "check_basic", "parse_orthogonal", "parse_coordinate",
           "parse_block", "parse_mask", "is_int", "positions", "numpy_layout", "plan_layout"]

_USE = ("use z.oindex[...] for orthogonal (outer) selection or z.vindex[...] for coordinate "
        "(point-wise) selection")


def is_int(s: Any) -> bool:
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


def positions(arr: Any, size: int, axis: int) -> np.ndarray:
    """An int64 C-contiguous copy of ``arr`` with negatives wrapped; raises IndexingError naming
    the first out-of-range value. Costs the copy: nothing else is as large as ``arr``'s
    positions (a broadcast view of few stored values may stand for many)."""
    src = np.asarray(arr)
    try:
        a = np.array(src, dtype=np.int64, copy=True, order="C").reshape(-1)
    except (MemoryError, ValueError):      # numpy: ValueError when past 2**63-1 bytes
        raise SelectionSizeError(f"index array on axis {axis}: {src.size} positions "
                                 f"({src.size * 8} bytes as int64) do not fit in memory; "
                                 f"select less at a time") from None
    if src.dtype.kind == "u" and src.dtype.itemsize >= 8 and a.size:
        wrapped = np.flatnonzero(a < 0)     # past 2**63-1: wrapped to negatives by the copy
        if wrapped.size:
            raise BoundsCheckError(f"index {_item(src, int(wrapped[0]))} is out of bounds for "
                                   f"axis {axis} with size {size}")
    bad = _indexing.wrap_positions(a, size)
    if bad >= 0:
        raise BoundsCheckError(f"index {_item(src, bad)} is out of bounds for axis {axis} "
                               f"with size {size}")
    return a


def _item(a: np.ndarray, flat: int) -> Any:
    """Item ``flat`` (C order) of ``a``, without a flattened copy of ``a``."""
    return a[np.unravel_index(flat, a.shape)] if a.ndim else a[()]


def _parse_int(s: Any, size: int, axis: int) -> int:
    i = int(s)
    if i < 0:
        i += size
    if i < 0 or i >= size:
        raise BoundsCheckError(f"index {s} is out of bounds for axis {axis} with size {size}")
    return i


def _parse_slice(s: slice, size: int, axis: int) -> tuple:
    """``("slice", start, n, step)`` for a slice over an axis of ``size``."""
    start, stop, step = s.start, s.stop, s.step
    if not ((start is None or type(start) is int) and (stop is None or type(stop) is int)
            and (step is None or type(step) is int)):
        for part, v in (("start", start), ("stop", stop), ("step", step)):
            if v is not None and not is_int(v):
                raise IndexingTypeError(f"slice {part} on axis {axis}: expected an integer "
                                        f"or None, found {short(v)}")
    if step is not None and step == 0:
        raise IndexingValueError(f"slice step cannot be zero (axis {axis})")
    start, stop, step = s.indices(size)
    n = len(range(start, stop, step))
    if abs(step) > size:            # selects at most one element: keep the step in int64
        step = max(size, 1) if step > 0 else -max(size, 1)
    return ("slice", start if n else 0, n, step)


def _index_array(s: Any, where: str, error: type[IndexingError] = IndexingError) -> np.ndarray:
    """``s`` (a list or array given as an index) as an array; ragged lists and lists nested
    deeper than numpy's 64 dimensions are an ``error`` naming ``where``."""
    try:
        return np.asarray(s)
    except (ValueError, TypeError):
        raise error(f"{where}: expected a list or array of integers or booleans of one shape, "
                    f"found {type(s).__name__} {short(s)}") from None


def _empty_list(s: Any, a: np.ndarray) -> bool:
    """Is ``a`` the float array numpy makes of an empty list (``[]``, ``[[], []]``), which
    numpy takes as an empty integer index? A float array given as such is refused even when
    empty, as numpy refuses it."""
    return a.size == 0 and a.dtype.kind == "f" and not isinstance(s, np.ndarray)


def _parse_index_array(s: Any, size: int, axis: int, what: str) -> tuple:
    """``("array", positions)`` for a 1-d integer or boolean index array along one axis."""
    a = _index_array(s, f"index array on axis {axis}")
    kind = a.dtype.kind
    if kind == "b":
        if a.ndim != 1 or a.shape[0] != size:
            found = f"length {a.shape[0]}" if a.ndim == 1 else f"shape {a.shape}"
            # z[mask]: zarr-python takes a boolean array there for a vindex mask selection
            error = VindexInvalidSelectionError if what == "basic" else IndexingError
            raise error(f"boolean index on axis {axis}: expected a 1-d array of length {size}, "
                        f"found {found}")
        return ("array", true_positions(a, f"boolean index on axis {axis}")[0])
    if _empty_list(s, a):
        a = a.astype(np.int64)
        kind = "i"
    if kind not in "iu":
        raise IndexingError(f"index array on axis {axis}: expected integers or booleans, "
                            f"found dtype {a.dtype}")
    if a.ndim != 1:
        if what == "basic":         # numpy: the axis becomes the index array's axes
            return ("array", positions(a, size, axis), a.shape)
        raise IndexingError(f"{what} index array on axis {axis}: expected 1 dimension, "
                            f"found shape {a.shape}")
    return ("array", positions(a, size, axis))


def _parse_axis(s: Any, size: int, axis: int, what: str) -> tuple:
    if type(s) is slice:
        return _parse_slice(s, size, axis)
    if is_int(s):
        return ("int", _parse_int(s, size, axis))
    if isinstance(s, np.bool_):     # numpy's 0-d boolean array, refused as np.array(True) is
        s = np.asarray(s)
    if isinstance(s, (list, tuple, np.ndarray)):        # a nested tuple is a sequence, as in numpy
        if isinstance(s, np.ndarray) and s.ndim == 0 and s.dtype.kind in "iu":
            return ("int", _parse_int(int(s), size, axis))
        return _parse_index_array(s, size, axis, what)
    raise IndexingError(f"index {short(s)} on axis {axis}: expected an integer, a slice, an "
                        f"integer or boolean array, None or Ellipsis; found {type(s).__name__}")


def parse_basic(sel: Any, shape: tuple[int, ...]) -> tuple[str, Any]:
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
        a = _index_array(sel, "selection")
        if a.dtype == np.bool_ and a.ndim > 1:
            if a.shape != shape:
                raise VindexInvalidSelectionError(f"boolean mask: expected shape {shape}, "
                                                  f"found {a.shape}")
            return "mask", a
    elif ndim == 1 and isinstance(sel, np.ndarray) and sel.dtype == np.bool_ \
            and sel.shape != shape:
        # a mask of the wrong shape, refused as zarr-python refuses it (a vindex error)
        raise VindexInvalidSelectionError(f"boolean mask: expected shape {shape}, "
                                          f"found {sel.shape}")
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
    out_ndim = sum(len(it[2]) if it[0] == "array" and len(it) > 2 else 1
                   for it in items if it[0] != "int")
    if out_ndim > MAX_NDIM:
        raise IndexingError(f"basic selection: the result would have {out_ndim} dimensions, "
                            f"more than numpy's {MAX_NDIM}")
    arrays = [i for i, it in enumerate(items) if it[0] == "array"]
    if len(arrays) > 1:
        raise IndexingError(f"basic selection with {len(arrays)} index arrays is ambiguous; {_USE}")
    if arrays:
        # numpy moves the array's axis to the front when integers and the array are not
        # adjacent; the orthogonal result agrees only when that axis comes first anyway
        # (adjacency as written: an Ellipsis separates them even where it stands for no axis).
        # zarr-python gives the orthogonal result there: refused, rather than differ silently
        written = sel if isinstance(sel, tuple) else (sel,)
        adv = [i for i, s in enumerate(written)
               if s is not None and s is not Ellipsis and not isinstance(s, slice)]
        out_pos = sum(1 for it in items[:arrays[0]] if it[0] in ("new", "slice"))
        if adv[-1] - adv[0] + 1 != len(adv) and out_pos != 0:
            raise IndexingError("basic selection mixes an index array with integers that are "
                                f"not adjacent (numpy would move the array's axis first); {_USE}")
    return "items", items


def numpy_layout(arr: np.ndarray, view: tuple[int, tuple[int, ...]]) -> np.ndarray:
    """``arr`` as numpy lays out a basic selection with an index array of several axes:
    the plan's axis ``view[0]``, holding the array's positions flattened, split into the
    array's shape ``view[1]`` (a view of a C-contiguous ``arr``)."""
    at, ishape = view
    return arr.reshape(arr.shape[:at] + ishape + arr.shape[at + 1:])


def plan_layout(arr: np.ndarray, view: tuple[int, tuple[int, ...]]) -> np.ndarray:
    """The inverse of :func:`numpy_layout`: ``arr`` in numpy's layout as the plan lays it out
    (a view where numpy can make one, else a copy)."""
    at, ishape = view
    return arr.reshape(arr.shape[:at] + (math.prod(ishape),) + arr.shape[at + len(ishape):])


def check_basic(sel: Any, what: str) -> None:
    """Refuse the index arrays and lists of a selection given as a basic one
    (``get_basic_selection``, ``set_basic_selection``): only ints, slices, ``Ellipsis`` and
    ``None``, as in zarr-python (which refuses ``None`` too)."""
    for i, s in enumerate(sel if isinstance(sel, tuple) else (sel,)):
        if isinstance(s, (list, tuple)) or (isinstance(s, np.ndarray) and s.ndim > 0):
            raise IndexingError(f"{what}: selection item {i}: expected an int, a slice, "
                                f"Ellipsis or None, found {type(s).__name__} {short(s, 40)}; "
                                f"{_USE}")


def parse_orthogonal(sel: Any, shape: tuple[int, ...]) -> list[tuple]:
    """Items of an orthogonal selection: per axis an int, slice, or 1-d int/bool array."""
    sel = _expand(sel, len(shape), False, "orthogonal")
    return [_parse_axis(s, shape[ax], ax, "orthogonal") for ax, s in enumerate(sel)]


def parse_coordinate(sel: Any, shape: tuple[int, ...]) -> tuple[list[np.ndarray], tuple[int, ...]]:
    """``(flat int64 positions per axis, broadcast shape)`` of a coordinate selection; a single
    full-shape boolean array is a mask."""
    ndim = len(shape)
    if not isinstance(sel, tuple):
        sel = (sel,)
    if len(sel) == 1 and isinstance(sel[0], (np.ndarray, list, np.bool_)):
        a = _index_array(sel[0], "coordinate selection", VindexInvalidSelectionError)
        if a.dtype == np.bool_:
            if a.shape != shape:
                raise VindexInvalidSelectionError(f"boolean mask: expected shape {shape}, "
                                                  f"found {a.shape}")
            return parse_mask(a, shape)
    if ndim == 0:           # the one cell, its axes none
        if all(s is Ellipsis for s in sel) and len(sel) <= 1:
            return [], ()
        raise VindexInvalidSelectionError(f"coordinate selection of a 0-d array: expected (), "
                                          f"... or a 0-d boolean mask, found {short(sel)}")
    if len(sel) != ndim:
        raise VindexInvalidSelectionError(f"coordinate selection: expected {ndim} index arrays "
                                          f"(one per axis), found {len(sel)}")
    arrs = []
    for ax, s in enumerate(sel):
        if is_int(s):
            arrs.append(np.asarray(_parse_int(s, shape[ax], ax), dtype=np.int64))
            continue
        if not isinstance(s, (list, tuple, np.ndarray)):
            raise VindexInvalidSelectionError(
                f"coordinate selection on axis {ax}: expected an integer array, found "
                f"{type(s).__name__} {short(s)}; use z.oindex for slices")
        a = _index_array(s, f"coordinate selection on axis {ax}", VindexInvalidSelectionError)
        if _empty_list(s, a):
            a = a.astype(np.int64)
        if a.dtype.kind not in "iu":
            raise VindexInvalidSelectionError(f"coordinate selection on axis {ax}: expected an "
                                              f"integer array, found dtype {a.dtype}")
        arrs.append(a)
    try:
        bshape = np.broadcast_shapes(*(a.shape for a in arrs))
    except ValueError:
        raise IndexingValueError("coordinate selection: index arrays could not be broadcast "
                                 f"together, found shapes {[a.shape for a in arrs]}") from None
    flat = [positions(np.broadcast_to(a, bshape), shape[ax], ax) for ax, a in enumerate(arrs)]
    return flat, tuple(bshape)


def parse_block(sel: Any, shape: tuple[int, ...], axes: Sequence[Any]) -> list[tuple]:
    """(``axes``: the grid's :class:`~zarrx.indexing.AxisGrid` per axis.)"""
    """Slice items (element ranges) for a block selection over chunk indices."""
    items = []
    for ax, s in enumerate(_expand(sel, len(shape), False, "block")):
        a = axes[ax]
        nch = a.nchunks
        if is_int(s):
            s = int(s)      # a numpy integer (np.uint8(5)) would wrap in the arithmetic below
            k = s + nch if s < 0 else s
            if not 0 <= k < nch:
                raise BoundsCheckError(f"block index {s} is out of bounds for axis {ax} with "
                                       f"{nch} chunks")
            k0, k1 = k, k + 1
        elif isinstance(s, slice):
            if s.step is not None and (not is_int(s.step) or s.step != 1):
                raise IndexingError(f"block selection on axis {ax}: expected a slice with step 1, "
                                    f"found step {short(s.step)}")
            _, k0, kn, _ = _parse_slice(s, nch, ax)
            k1 = k0 + kn
        else:
            raise IndexingError(f"block selection on axis {ax}: expected an integer or a slice, "
                                f"found {type(s).__name__} {short(s)}")
        if k1 <= k0:
            items.append(("slice", 0, 0, 1))
        else:
            lo = a.start(k0)
            hi = a.start(k1 - 1) + a.inbound_len(k1 - 1)
            items.append(("slice", lo, hi - lo, 1))
    return items


def kind_of(selection: Any, shape: Sequence[int]) -> str:
    """The kind ``z[selection]`` means, as in numpy (and zarr-python): ``"mask"`` for a boolean
    array of the array's full shape (rank >= 1); ``"coordinate"`` for pure fancy indexing, one
    integer or integer array per axis with at least one array (``z[[1, 3], [2, 4]]`` reads two
    points; on a 1-d array, any integer array); ``"orthogonal"`` for one 1-d index array per
    axis with a boolean one among them (``z[row_mask, col_mask]``, as in zarr-python); else
    ``"basic"`` (which also accepts one index array along one axis)."""
    ndim = len(shape)
    # a mask in a 1-tuple (``z[mask,]``) is a mask as well, as in numpy and zarr-python; so is
    # a 0-d boolean array of a 0-d array (numpy's ``a[np.array(True)]``)
    alone = selection[0] if type(selection) is tuple and len(selection) == 1 else selection
    if isinstance(alone, (np.ndarray, np.bool_)) if ndim == 0 else \
            isinstance(alone, (np.ndarray, list)):
        a = _as_index_array(alone)
        if a is not None and a.dtype == np.bool_ and a.shape == tuple(shape):
            return "mask"
    if isinstance(selection, (np.ndarray, list)) and ndim >= 1:
        a = _as_index_array(selection)
        if ndim == 1 and a is not None and a.dtype.kind in "iu" and a.ndim > 1:
            return "coordinate"
    if isinstance(selection, tuple) and len(selection) == ndim and ndim >= 1:
        if ndim > 1 and isinstance(selection[0], (np.ndarray, list)) and \
                _boolean_outer(selection):
            return "orthogonal"
        arrays = 0
        for s in selection:
            if is_int(s):
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


_BOOLS = frozenset((bool, np.bool_))
_ARRAYISH = frozenset((np.ndarray, list))


def _boolean_outer(selection: tuple) -> bool:
    """One 1-d index array per axis, a boolean one among them (``z[rows, cols]`` of two
    masks): zarr-python selects their outer product there, as ``np.ix_`` does (numpy would
    pair the masks' positions up), and zarrx follows it."""
    for s in selection:       # first the kinds of the items (z[idx, 3] stops here, cheaply)
        if s.__class__ not in _ARRAYISH and not isinstance(s, np.ndarray):
            return False
    found = False
    for s in selection:
        a = _as_index_array(s)
        if a is None or a.ndim != 1 or a.dtype.kind not in "iub":
            return False
        if a.dtype != np.bool_ and isinstance(s, list) and \
                not _BOOLS.isdisjoint(map(type, s)):
            return False    # bools among integers: an integer list, which zarr-python refuses
        found = found or a.dtype == np.bool_
    return found


def _as_index_array(sel: np.ndarray | list) -> np.ndarray | None:
    if isinstance(sel, np.ndarray):
        return sel
    try:
        return np.asarray(sel)
    except (ValueError, TypeError):       # ragged lists: the planner says what is wrong
        return None


def parse_mask(mask: Any, shape: tuple[int, ...]) -> tuple[list[np.ndarray], tuple[int, ...]]:
    if isinstance(mask, tuple) and len(mask) == 1:
        mask = mask[0]
    m = _as_index_array(mask)
    if m is None:
        raise IndexingError(f"boolean mask: expected a boolean array, found a "
                            f"{type(mask).__name__} whose items are not one array")
    if m.dtype != np.bool_:
        raise IndexingError(f"boolean mask: expected a boolean array, found dtype {m.dtype}")
    if m.shape != tuple(shape):
        raise IndexingError(f"boolean mask: expected shape {tuple(shape)}, found {m.shape}")
    if m.ndim == 0:
        return [], (int(m.any()),)
    pts = true_positions(m, "boolean mask")
    return pts, (int(pts[0].shape[0]),)


def true_positions(m: np.ndarray, what: str) -> list[np.ndarray]:
    """The positions (int64, one array per axis, C order) of the true cells of the boolean
    array ``m`` (at least 1-d), as ``np.nonzero`` gives them, in time bounded by the cells
    ``m`` stores plus the true cells: an axis ``m`` repeats (stride 0, as ``np.broadcast_to``
    makes) is looked at once, not once per position (``np.nonzero`` of a broadcast mask of
    2**62 cells never ends)."""
    rep = [ax for ax in range(m.ndim) if m.strides[ax] == 0 and m.shape[ax] > 1]
    if not rep:
        return [p.astype(np.int64) for p in np.nonzero(m)]
    core = m[tuple(slice(0, 1) if ax in rep else slice(None) for ax in range(m.ndim))]
    found = np.nonzero(core)
    n = int(found[0].shape[0]) * math.prod(m.shape[ax] for ax in rep)
    if n == 0:
        return [np.zeros(0, dtype=np.int64) for _ in range(m.ndim)]
    need = n * 8 * (m.ndim + 2)             # the positions, their flat positions and order
    try:
        if need > (config.machine_memory() or need):
            raise MemoryError
        # every true cell of the core at every position of the repeated axes: (core cell,
        # repeated axes...) laid out flat, then sorted into C order
        grid = (int(found[0].shape[0]), *(m.shape[ax] for ax in rep))
        pts = []
        for ax in range(m.ndim):
            if ax in rep:
                j = 1 + rep.index(ax)
                v = np.arange(m.shape[ax], dtype=np.int64).reshape(
                    [m.shape[ax] if i == j else 1 for i in range(len(grid))])
            else:
                v = found[ax].astype(np.int64).reshape((-1,) + (1,) * len(rep))
            pts.append(np.broadcast_to(v, grid).reshape(-1))
        order = np.argsort(ravel(pts, m.shape), kind="stable")
        return [p[order] for p in pts]
    except (MemoryError, ValueError):
        raise SelectionSizeError(f"{what}: {n} true cells ({need} bytes of int64 positions "
                                 f"to list them) do not fit in memory; select less at a time"
                                 ) from None


def ravel(index: Sequence[np.ndarray], dims: Sequence[int]) -> np.ndarray:
    """The C-order flat positions (int64) of the in-range multi-index ``index`` in an array of
    shape ``dims``: ``np.ravel_multi_index``, which takes at most 32 arrays (arrays may have 64
    axes)."""
    lin = np.zeros(len(index[0]) if index else 0, dtype=np.int64)
    for i, n in zip(index, dims):
        lin *= n
        lin += i
    return lin
