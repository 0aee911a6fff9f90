"""Copies between outer products of index arrays: ``dst[np.ix_(*d)] = src[np.ix_(*s)]``, what
an orthogonal read of index arrays does for each chunk it reads. numpy's fancy indexing took
about 25 µs per chunk there (two fancy-index operations); here the index arrays are read
where they lie, every index is checked to lie inside its axis with the GIL held, and the items
are copied in C without it.
"""
from libc.stddef cimport ptrdiff_t
from libc.stdint cimport int64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy

cimport numpy as cnp
import numpy as np

cnp.import_array()

cdef enum:
    MAX_NDIM = 64


cdef bint _axes(tuple sel, int ndim, const char** data, ptrdiff_t* step, ptrdiff_t* count):
    """Whether ``sel`` is ``ndim`` int64 arrays of the machine's byte order shaped as np.ix_
    makes them (array ``j`` spans axis ``j``, its other axes of length 1); then each one's
    first item, stride and length in ``data``, ``step``, ``count``. The items may lie at any
    address (they are read with memcpy); a swapped array's values are not read as they are."""
    cdef int j, k
    cdef cnp.ndarray a
    cdef const cnp.npy_intp* dims
    for j in range(ndim):
        x = sel[j]
        if type(x) is not np.ndarray:
            return False
        a = <cnp.ndarray>x
        if cnp.PyArray_NDIM(a) != ndim or cnp.PyArray_TYPE(a) != cnp.NPY_INT64 \
                or not cnp.PyArray_ISNOTSWAPPED(a):
            return False
        dims = cnp.PyArray_DIMS(a)
        for k in range(ndim):
            if k != j and dims[k] != 1:
                return False
        data[j] = <const char*>cnp.PyArray_DATA(a)
        step[j] = cnp.PyArray_STRIDES(a)[j]
        count[j] = dims[j]
    return True


cdef bint _offsets(const char* data, ptrdiff_t step, ptrdiff_t n, int64_t size,
                   int64_t stride, int64_t* out, int64_t* lo, int64_t* hi) noexcept nogil:
    """The byte offsets ``index * stride`` of ``n`` indices (every ``step`` bytes from
    ``data``) into ``out``, and their least and greatest; False when an index lies outside
    ``[0, size)`` (numpy wraps or refuses it: the copy is left to numpy)."""
    cdef ptrdiff_t i
    cdef int64_t v, o
    lo[0] = hi[0] = 0
    for i in range(n):
        memcpy(&v, data + i * step, sizeof(int64_t))     # unaligned items too
        if v < 0 or v >= size:
            return False
        o = v * stride
        out[i] = o
        if i == 0 or o < lo[0]:
            lo[0] = o
        if i == 0 or o > hi[0]:
            hi[0] = o
    return True


cdef void _walk(int ndim, const ptrdiff_t* count, int64_t** soff, int64_t** doff,
                const char* sp, char* dp, size_t itemsize) noexcept nogil:
    """Copy every item of the outer product, C order: the source item at ``sp`` plus the sum
    of ``soff[k][i_k]``, to ``dp`` plus the sum of ``doff[k][i_k]``."""
    cdef ptrdiff_t idx[MAX_NDIM]
    cdef int64_t sb[MAX_NDIM]
    cdef int64_t db[MAX_NDIM]
    cdef int last = ndim - 1, k
    cdef ptrdiff_t i, n = count[last]
    cdef const int64_t* sl = soff[last]
    cdef const int64_t* dl = doff[last]
    cdef const char* s
    cdef char* d
    for k in range(last):            # sb[k], db[k]: the offsets of axes 0..k summed
        idx[k] = 0
        sb[k] = (sb[k - 1] if k else 0) + soff[k][0]
        db[k] = (db[k - 1] if k else 0) + doff[k][0]
    while True:
        s = sp + sb[last - 1]
        d = dp + db[last - 1]
        for i in range(n):
            memcpy(d + dl[i], s + sl[i], itemsize)
        k = last - 1
        while k >= 0:
            idx[k] += 1
            if idx[k] < count[k]:
                break
            idx[k] = 0
            k -= 1
        if k < 0:
            return
        while k < last:
            sb[k] = (sb[k - 1] if k else 0) + soff[k][idx[k]]
            db[k] = (db[k - 1] if k else 0) + doff[k][idx[k]]
            k += 1


def copy_outer(src, tuple src_sel, dst, tuple dst_sel) -> bool:
    """``dst[dst_sel] = src[src_sel]`` when both selections are outer products of int64 index
    arrays (np.ix_ style, one per axis) over two arrays of one rank (2 or more) and dtype
    holding no Python objects, every index inside its axis and the two arrays' items apart;
    returns False, having copied nothing, otherwise (numpy's indexing then does it)."""
    if type(src) is not np.ndarray or type(dst) is not np.ndarray:
        return False
    cdef cnp.ndarray s = <cnp.ndarray>src, d = <cnp.ndarray>dst
    cdef int ndim = cnp.PyArray_NDIM(s), ax
    if ndim < 2 or ndim > MAX_NDIM or cnp.PyArray_NDIM(d) != ndim or len(src_sel) != ndim \
            or len(dst_sel) != ndim or not cnp.PyArray_ISWRITEABLE(d) \
            or s.dtype != d.dtype \
            or s.dtype.hasobject:
        return False
    cdef const char* sdata[MAX_NDIM]
    cdef const char* ddata[MAX_NDIM]
    cdef ptrdiff_t sstep[MAX_NDIM]
    cdef ptrdiff_t dstep[MAX_NDIM]
    cdef ptrdiff_t count[MAX_NDIM]
    cdef ptrdiff_t dcount[MAX_NDIM]
    if not _axes(src_sel, ndim, sdata, sstep, count) or \
            not _axes(dst_sel, ndim, ddata, dstep, dcount):
        return False
    cdef ptrdiff_t total = 0
    for ax in range(ndim):
        if count[ax] != dcount[ax]:
            return False
        if count[ax] == 0:
            return True
        total += count[ax]
    cdef int64_t* soff[MAX_NDIM]
    cdef int64_t* doff[MAX_NDIM]
    cdef int64_t lo, hi, slo = 0, shi = 0, dlo = 0, dhi = 0
    cdef const cnp.npy_intp* sdims = cnp.PyArray_DIMS(s)
    cdef const cnp.npy_intp* ddims = cnp.PyArray_DIMS(d)
    cdef const cnp.npy_intp* sstr = cnp.PyArray_STRIDES(s)
    cdef const cnp.npy_intp* dstr = cnp.PyArray_STRIDES(d)
    cdef size_t itemsize = <size_t>cnp.PyArray_ITEMSIZE(s)
    cdef const char* sp = <const char*>cnp.PyArray_DATA(s)
    cdef char* dp = <char*>cnp.PyArray_DATA(d)
    cdef int64_t* buf = <int64_t*>malloc(2 * total * sizeof(int64_t))
    cdef bint ok = True
    if buf == NULL:
        return False
    try:
        with nogil:
            total = 0
            for ax in range(ndim):
                soff[ax] = buf + total
                doff[ax] = buf + total + count[ax]
                total += 2 * count[ax]
                if not _offsets(sdata[ax], sstep[ax], count[ax], sdims[ax], sstr[ax],
                                soff[ax], &lo, &hi):
                    ok = False
                    break
                slo += lo
                shi += hi
                if not _offsets(ddata[ax], dstep[ax], count[ax], ddims[ax], dstr[ax],
                                doff[ax], &lo, &hi):
                    ok = False
                    break
                dlo += lo
                dhi += hi
            # the items read and those written must not overlap
            if ok and sp + slo < dp + dhi + <int64_t>itemsize and \
                    dp + dlo < sp + shi + <int64_t>itemsize:
                ok = False
            if ok:
                _walk(ndim, count, soff, doff, sp, dp, itemsize)
    finally:
        free(buf)
    return ok
