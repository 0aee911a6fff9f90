# zarrx-sources: csrc/zx_copy.c
"""The cells of a slab of decoded chunks copied into the box of an output they lie in, each
chunk's part by the n-d walker of csrc/zx_copy.c, all in one GIL-free section: what a shard
read does with each slab of inner chunks (:mod:`zarrx.shard_read`), with no Python call per
chunk. Every argument is checked with the GIL held, so that each copy stays inside both arrays.
"""
from cpython.pyport cimport PY_SSIZE_T_MAX
from libc.stddef cimport ptrdiff_t

cimport numpy as cnp
import numpy as np

from zarrx._clib.zx_copy cimport ZX_MAX_NDIM, zx_box, zx_copy_box
from zarrx.errors import IndexingError

cnp.import_array()

if sizeof(cnp.npy_intp) != sizeof(ptrdiff_t):      # numpy's dims and strides are read as C's
    raise ImportError("zarrx._scatter: npy_intp and ptrdiff_t differ in size on this platform")


def scatter_chunks(cnp.ndarray dec, tuple counts, cnp.ndarray dst, tuple skip) -> None:
    """Copy the cells of the chunks ``dec`` (C-contiguous, ``(k, *chunk)``: the slab of
    ``counts`` chunks per axis, ``k`` their product, in C order) that lie in ``dst`` into it:
    ``dst`` (any strides, of ``dec``'s dtype) is the part of the slab's cells from ``skip``
    (per axis, the cells of its first chunk before ``dst``) onwards, and ends inside its
    last chunk on every axis."""
    cdef int nd = cnp.PyArray_NDIM(dst), d
    if nd > ZX_MAX_NDIM or cnp.PyArray_NDIM(dec) != nd + 1 or len(counts) != nd \
            or len(skip) != nd or not dec.flags.c_contiguous or dec.dtype != dst.dtype \
            or dec.dtype.hasobject or not dst.flags.writeable:
        raise IndexingError(f"scatter_chunks: expected a C-contiguous (k, *chunk) slab of "
                            f"{dst.dtype} for a writeable {nd}-d box, found "
                            f"{dec.dtype} {(<object>dec).shape} and {(<object>dst).shape}")
    cdef ptrdiff_t cnt[ZX_MAX_NDIM]
    cdef ptrdiff_t sk[ZX_MAX_NDIM]
    cdef ptrdiff_t ch[ZX_MAX_NDIM]
    cdef ptrdiff_t ext[ZX_MAX_NDIM]
    cdef ptrdiff_t q[ZX_MAX_NDIM]
    cdef ptrdiff_t k = 1
    cdef size_t span
    cdef const ptrdiff_t* sdim = <const ptrdiff_t*>cnp.PyArray_DIMS(dec)
    cdef const ptrdiff_t* ddim = <const ptrdiff_t*>cnp.PyArray_DIMS(dst)
    for d in range(nd):
        cnt[d], sk[d], ch[d], ext[d] = counts[d], skip[d], sdim[d + 1], ddim[d]
        # the box starts in the first chunk and ends in the last one: its cells and the
        # skipped ones fill ceil((sk + ext) / ch) chunks, counted without an overflow
        # (a product of huge counts could wrap onto a small one)
        span = <size_t>ext[d] + <size_t>sk[d]
        if cnt[d] <= 0 or sk[d] < 0 or sk[d] >= ch[d] or \
                <size_t>cnt[d] != span // <size_t>ch[d] + (span % <size_t>ch[d] != 0):
            raise IndexingError(f"scatter_chunks: axis {d}: {cnt[d]} chunks of {ch[d]} from "
                                f"cell {sk[d]} do not end in a box of {ext[d]} cells")
        if cnt[d] > PY_SSIZE_T_MAX // k:
            raise IndexingError(f"scatter_chunks: more than {PY_SSIZE_T_MAX} chunks in "
                                f"counts {counts}")
        k *= cnt[d]
    if sdim[0] != k:
        raise IndexingError(f"scatter_chunks: {sdim[0]} chunks, expected {k}")
    if k == 0:
        return
    cdef zx_box box
    box.ndim = nd
    box.itemsize = <size_t>cnp.PyArray_ITEMSIZE(dec)
    cdef const ptrdiff_t* ss = <const ptrdiff_t*>cnp.PyArray_STRIDES(dec)
    cdef const ptrdiff_t* ds = <const ptrdiff_t*>cnp.PyArray_STRIDES(dst)
    cdef const char* sp = <const char*>cnp.PyArray_DATA(dec)
    cdef char* dp = <char*>cnp.PyArray_DATA(dst)
    cdef ptrdiff_t j, lo, hi, soff, doff
    for d in range(nd):
        box.stride[0][d] = ss[d + 1]
        box.stride[1][d] = ds[d]
        q[d] = 0
    with nogil:
        for j in range(k):
            soff = j * ss[0]
            doff = 0
            for d in range(nd):
                lo = sk[d] if q[d] == 0 else 0
                hi = ext[d] + sk[d] - q[d] * ch[d]
                if hi > ch[d]:
                    hi = ch[d]
                box.count[d] = hi - lo
                soff += lo * ss[d + 1]
                doff += (q[d] * ch[d] + lo - sk[d]) * ds[d]
            zx_copy_box(&box, sp + soff, dp + doff)
            d = nd - 1                      # the next chunk in C order
            while d >= 0:
                q[d] += 1
                if q[d] < cnt[d]:
                    break
                q[d] = 0
                d -= 1
