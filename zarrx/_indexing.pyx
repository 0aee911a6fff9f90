"""Per-axis loops for zarrx.indexing (numbers in, numbers out): slice projection onto a chunk
grid axis, chunk ids and grouping of integer positions, wrapping of negative positions.
Selections are parsed, and errors worded, in zarrx.indexing.

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
            # the chunk's end within the axis; never cstart + chunk past the axis, which
            # passes 2**63 - 1 for the last chunk of an axis that long
            cend = cstart + chunk if chunk < size - cstart else size
        else:
            k = _bisect(offsets, p)
            cstart = offsets[k]
            cend = offsets[k + 1]
            if cend > size:
                cend = size
        if p >= cend:       # a position outside the axis or its chunks: the loop would not end
            raise IndexingError(f"position {p} lies outside the axis of size {size} or its "
                                f"chunks (chunk {k} ends at {cend})")
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


def wrap_positions(int64_t[::1] v, int64_t size):
    """Wrap the negative positions of ``v`` in place (``p + size``); returns the index of the
    first position outside ``[0, size)`` after wrapping (the rest are left unwrapped), or -1
    when all are inside."""
    cdef Py_ssize_t i, n = v.shape[0], bad = -1
    with nogil:
        for i in range(n):
            if v[i] < 0:
                v[i] += size
            if v[i] < 0 or v[i] >= size:
                bad = i
                break
    return bad


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
