"""Per-axis kernels for zarrx.indexing: slice projection onto a chunk grid axis and grouping of
integer coordinates by chunk.

An axis grid is described by ``chunk`` (> 0, a regular grid) or by ``offsets`` (the
``nchunks + 1`` chunk boundaries of a rectilinear axis, ``offsets[0] == 0``, increasing; ``chunk``
is then 0). Callers in zarrx.indexing have normalised and bounds-checked every position.
"""
cimport cython
from libc.stdint cimport int64_t

import numpy as np

from zarrx.errors import IndexingError


@cython.boundscheck(False)  # safe: callers check offsets has >= 2 entries; lo < hi <= len-1
cdef inline Py_ssize_t _bisect(const int64_t[::1] offsets, int64_t p) noexcept nogil:
    """The k with offsets[k] <= p < offsets[k+1] (offsets strictly increasing, p >= 0)."""
    cdef Py_ssize_t lo = 0, hi = offsets.shape[0] - 1, mid
    while hi - lo > 1:
        mid = (lo + hi) >> 1
        if offsets[mid] <= p:
            lo = mid
        else:
            hi = mid
    return lo


def project_slice(int64_t start, int64_t n, int64_t step, int64_t size,
                  int64_t chunk, const int64_t[::1] offsets):
    """Project the ``n`` positions ``start + i*step`` (all inside ``[0, size)``) onto the chunks
    of one axis, ascending through the chunks.

    Returns a list of ``(chunk index, chunk-local slice, output slice, full)``; for a negative
    step the output slices run backwards (step -1) so that ascending chunk reads land reversed.
    ``full`` says the run covers every in-bounds cell of the chunk along this axis.
    """
    cdef list out = []
    if n <= 0:
        return out
    if step == 0:
        raise IndexingError("slice step cannot be zero")
    cdef bint rev = step < 0
    cdef int64_t s = -step if rev else step
    cdef int64_t lo = start + (n - 1) * step if rev else start
    cdef int64_t j = 0, p, k, cstart, cend, m, local, o
    if chunk <= 0 and (offsets is None or offsets.shape[0] < 2):
        raise IndexingError("axis grid: expected a chunk length or at least two chunk offsets")
    while j < n:
        p = lo + j * s
        if chunk > 0:
            k = p // chunk
            cstart = k * chunk
            cend = cstart + chunk
        else:
            k = _bisect(offsets, p)
            cstart = offsets[k]
            cend = offsets[k + 1]
        if cend > size:
            cend = size
        m = (cend - 1 - p) // s + 1
        if m > n - j:
            m = n - j
        local = p - cstart
        csel = slice(local, local + (m - 1) * s + 1, s if s != 1 else None)
        if rev:
            o = n - 1 - j
            osel = slice(o, o - m if o - m >= 0 else None, -1)
        else:
            osel = slice(j, j + m)
        out.append((k, csel, osel, m == cend - cstart and (s == 1 or m == 1)))
        j += m
    return out


def chunk_ids(const int64_t[::1] idx, int64_t chunk, const int64_t[::1] offsets):
    """Chunk index of every (in-bounds, non-negative) position, and whether the positions are
    non-decreasing (1), strictly increasing (2) or neither (0)."""
    cdef Py_ssize_t i, n = idx.shape[0]
    ids = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] out = ids
    cdef int order = 2
    if chunk <= 0 and (offsets is None or offsets.shape[0] < 2):
        raise IndexingError("axis grid: expected a chunk length or at least two chunk offsets")
    with nogil:
        for i in range(n):
            if chunk > 0:
                out[i] = idx[i] // chunk
            else:
                out[i] = _bisect(offsets, idx[i])
            if i and order:
                if idx[i] < idx[i - 1]:
                    order = 0
                elif idx[i] == idx[i - 1]:
                    order = 1
    return ids, order


def group_bounds(const int64_t[::1] sorted_ids):
    """Start of every run of equal values in ``sorted_ids`` plus the final end, as int64."""
    cdef Py_ssize_t i, n = sorted_ids.shape[0], g = 0
    if n == 0:
        return np.zeros(1, dtype=np.int64)
    bounds = np.empty(n + 1, dtype=np.int64)
    cdef int64_t[::1] b = bounds
    with nogil:
        b[0] = 0
        g = 1
        for i in range(1, n):
            if sorted_ids[i] != sorted_ids[i - 1]:
                b[g] = i
                g += 1
        b[g] = n
    return bounds[:g + 1]


def normalize_positions(object arr, int64_t size, int axis):
    """An int64 C-contiguous copy of ``arr`` with negatives wrapped; raises IndexingError naming
    the first out-of-range value."""
    a = np.array(arr, dtype=np.int64, copy=True, order="C").reshape(-1)
    cdef int64_t[::1] v = a
    cdef Py_ssize_t i, n = v.shape[0], bad = -1
    with nogil:
        for i in range(n):
            if v[i] < 0:
                v[i] += size
            if v[i] < 0 or v[i] >= size:
                bad = i
                break
    if bad >= 0:
        raise IndexingError(f"index {np.asarray(arr).reshape(-1)[bad]} is out of bounds for "
                            f"axis {axis} with size {size}")
    return a


# ------------------------------------------------------------------------- selection parsing
#
# Parsed per-axis items: ("new",) newaxis, ("int", pos), ("slice", start, n, step) with every
# selected position inside the axis, ("array", int64 positions).

_USE = ("use z.oindex[...] for orthogonal (outer) selection or z.vindex[...] for coordinate "
        "(point-wise) selection")


cdef inline bint _is_int(object s):
    return (isinstance(s, int) or isinstance(s, np.integer)) and not isinstance(s, (bool, np.bool_))


cdef tuple _expand(object sel, Py_ssize_t ndim, bint allow_new, str what):
    """Replace Ellipsis (or pad the end) with full slices; check the index count."""
    if not isinstance(sel, tuple):
        sel = (sel,)
    cdef Py_ssize_t n_ell = 0, n_real = 0, at = -1, i
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


def parse_int(object s, Py_ssize_t size, int axis):
    i = int(s)
    if i < 0:
        i += size
    if i < 0 or i >= size:
        raise IndexingError(f"index {s} is out of bounds for axis {axis} with size {size}")
    return i


def parse_slice(object s, Py_ssize_t size, int axis):
    """``("slice", start, n, step)`` for a slice over an axis of ``size``."""
    for part, v in (("start", s.start), ("stop", s.stop), ("step", s.step)):
        if v is not None and not _is_int(v):
            raise IndexingError(f"slice {part} on axis {axis}: expected an integer or None, "
                                f"found {v!r}")
    if s.step is not None and s.step == 0:
        raise IndexingError(f"slice step cannot be zero (axis {axis})")
    r = range(*s.indices(size))
    n = len(r)
    return ("slice", r.start if n else 0, n, r.step)


def parse_index_array(object s, Py_ssize_t size, int axis, str what):
    """``("array", positions)`` for a 1-d integer or boolean index array along one axis."""
    a = np.asarray(s)
    if a.dtype == np.bool_:
        if a.ndim != 1 or a.shape[0] != size:
            raise IndexingError(f"boolean index on axis {axis}: expected a 1-d array of length "
                                f"{size}, found shape {a.shape}")
        return ("array", np.flatnonzero(a).astype(np.int64))
    if a.size == 0 and a.dtype.kind == "f":
        a = a.astype(np.int64)        # an empty list
    if a.dtype.kind not in "iu":
        raise IndexingError(f"index array on axis {axis}: expected integers or booleans, "
                            f"found dtype {a.dtype}")
    if a.ndim != 1:
        raise IndexingError(f"{what} index array on axis {axis}: expected 1 dimension, "
                            f"found shape {a.shape}")
    return ("array", normalize_positions(a, size, axis))


cdef object _parse_axis(object s, Py_ssize_t size, int axis, str what):
    if isinstance(s, slice):
        return parse_slice(s, size, axis)
    if _is_int(s):
        return ("int", parse_int(s, size, axis))
    if isinstance(s, (list, tuple, np.ndarray)):        # a nested tuple is a sequence, as in numpy
        if isinstance(s, np.ndarray) and s.ndim == 0 and s.dtype.kind in "iu":
            return ("int", parse_int(int(s), size, axis))
        return parse_index_array(s, size, axis, what)
    raise IndexingError(f"index {s!r} on axis {axis}: expected an integer, a slice, an integer or "
                        f"boolean array, None or Ellipsis; found {type(s).__name__}")


def parse_basic(object sel, tuple shape):
    """Items of a basic selection, or ``("mask", bool array)`` for a full-shape boolean mask."""
    cdef Py_ssize_t ndim = len(shape)
    if isinstance(sel, (np.ndarray, list)) and ndim > 1:
        a = np.asarray(sel)
        if a.dtype == np.bool_ and a.ndim > 1:
            if a.shape != shape:
                raise IndexingError(f"boolean mask: expected shape {shape}, found {a.shape}")
            return "mask", a
    sel = _expand(sel, ndim, True, "basic")
    items = []
    cdef int ax = 0
    for s in sel:
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
        if adv[len(adv) - 1] - adv[0] + 1 != len(adv) and out_pos != 0:
            raise IndexingError("basic selection mixes an index array with integers that are "
                                f"not adjacent (numpy would move the array's axis first); {_USE}")
    return "items", items


def parse_orthogonal(object sel, tuple shape):
    """Items of an orthogonal selection: per axis an int, slice, or 1-d int/bool array."""
    sel = _expand(sel, len(shape), False, "orthogonal")
    return [_parse_axis(s, shape[ax], ax, "orthogonal") for ax, s in enumerate(sel)]


def parse_coordinate(object sel, tuple shape):
    """``(flat int64 positions per axis, broadcast shape)`` of a coordinate selection; a single
    full-shape boolean array is a mask."""
    cdef Py_ssize_t ndim = len(shape)
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
    flat = [normalize_positions(np.broadcast_to(a, bshape), shape[ax], ax)
            for ax, a in enumerate(arrs)]
    return flat, tuple(bshape)


def parse_block(object sel, tuple shape, tuple axes):
    """Slice items (element ranges) for a block selection over chunk indices; ``axes`` are the
    grid's AxisGrid objects."""
    sel = _expand(sel, len(shape), False, "block")
    items = []
    for ax, s in enumerate(sel):
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
            _, k0, kn, _ = parse_slice(s, nch, ax)
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


def stable_order(const int64_t[::1] ids, int64_t nbins):
    """The stable sorting permutation of ``ids`` (values in ``[0, nbins)``): a counting sort,
    linear in ``len(ids) + nbins``; numpy's stable argsort when ``nbins`` is much larger."""
    cdef Py_ssize_t i, n = ids.shape[0]
    if nbins < 0 or nbins > 4 * n + 4096:
        return np.argsort(np.asarray(ids), kind="stable")
    for i in range(n):
        if ids[i] < 0 or ids[i] >= nbins:
            raise IndexingError(f"chunk id {ids[i]} outside [0, {nbins})")
    counts = np.zeros(nbins + 1, dtype=np.int64)
    perm = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] c = counts
    cdef int64_t[::1] p = perm
    cdef int64_t total = 0, t
    with nogil:
        for i in range(n):
            c[ids[i] + 1] += 1
        for i in range(nbins + 1):
            total += c[i]
            c[i] = total
        for i in range(n):
            t = ids[i]
            p[c[t]] = i
            c[t] += 1
    return perm
