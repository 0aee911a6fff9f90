# zarrx-sources: csrc/zx_copy.c
"""Write the raw chunks a box of an array covers whole, each gathered from the value into a
scratch buffer and written through :mod:`zarrx.store._localwrite` (a new key as an unnamed file
linked in, an existing one replaced under the ``flock`` conditional writers take), with no
Python object per chunk: the mirror of :mod:`zarrx.store._localbox`. The directory of a run of
chunks is opened once. Chunks it does not write (covered in part, all fill, or failing) are
handed back."""
from libc.stdint cimport int64_t, uint64_t
from libc.string cimport memcpy
from libc.stdlib cimport malloc, free
from libc.stddef cimport ptrdiff_t
from cpython.bytes cimport PyBytes_AS_STRING
cimport numpy as cnp

from zarrx._clib.zx_copy cimport ZX_MAX_NDIM, zx_box, zx_copy_box, zx_is_all
from zarrx.store._localbox cimport (HeldDir, _check_box_call, _chunk_at, _hold_folder, _key_path,
                                    _release_folder)
from zarrx.store._localwrite cimport _commit

cnp.import_array()

cdef enum:
    PATH_MAX = 4096

cdef int64_t INT64_MAX = 0x7FFFFFFFFFFFFFFF    # no axis or box reaches further


cdef struct Geometry:
    int ndim
    size_t itemsize
    int64_t start[ZX_MAX_NDIM]      # the box's first cell
    int64_t extent[ZX_MAX_NDIM]     # the box's shape (= the value's)
    int64_t chunk[ZX_MAX_NDIM]      # the chunk shape
    int64_t first[ZX_MAX_NDIM]      # the first chunk the box touches, per axis
    int64_t count[ZX_MAX_NDIM]      # chunks the box touches, per axis
    size_t nbytes                   # a chunk file's size


cdef bint _gather(const Geometry* g, const char* src, const ptrdiff_t* sstride,
                  const int64_t* k, char* buf) noexcept nogil:
    """Copy chunk ``k`` (grid coordinates) from the value into ``buf`` (C order); False, having
    copied nothing, when the box covers the chunk only in part."""
    cdef int d
    cdef int64_t lo
    cdef ptrdiff_t off = 0, step = <ptrdiff_t>g.itemsize
    cdef zx_box box
    box.ndim = g.ndim
    box.itemsize = g.itemsize
    for d in range(g.ndim):
        lo = k[d] * g.chunk[d]                  # the chunk starts before the box's end
        # lo + chunk could pass 2**63 - 1 (the last chunk of an axis that long): compare the
        # chunk with what is left of the box instead
        if lo < g.start[d] or g.chunk[d] > g.start[d] + g.extent[d] - lo:
            return False
        off += <ptrdiff_t>(lo - g.start[d]) * sstride[d]
        box.count[d] = <ptrdiff_t>g.chunk[d]
        box.stride[0][d] = sstride[d]
    for d in range(g.ndim - 1, -1, -1):
        box.stride[1][d] = step
        step *= <ptrdiff_t>g.chunk[d]
    zx_copy_box(&box, src + off, buf)
    return True


def write_box(bytes base, str sep, cnp.ndarray src, tuple start, tuple chunk, object fill,
              cnp.ndarray scratch, uint64_t resolve, bint sync, Py_ssize_t lo, Py_ssize_t hi):
    """Write chunks ``lo`` to ``hi`` (C order over the chunks the box touches) from ``src``;
    return the indices (in that order) of the chunks the caller must write itself: those the
    box covers only in part, those all of ``fill`` (when it is given: they are deleted, not
    written, by the general path) and those whose write failed (the general path words it).

    ``base``: the absolute path of the array's chunk keys up to the first coordinate (for
    example ``b"/data/a/c/"``), whose directories exist; ``sep``: the separator between
    coordinates; ``src``: the box's cells, of fixed-size items, any strides (0 for a broadcast
    value); ``start``: the box's first cell; ``chunk``: the chunk shape (a file holds a whole
    chunk, C order); ``fill``: one item, or None to write chunks of fill too; ``scratch``: a
    writable C-contiguous array of at least a chunk's bytes that the call may overwrite."""
    cdef Geometry g
    cdef int d, ndim = cnp.PyArray_NDIM(src)
    cdef Py_ssize_t bn = len(base), i, cut, end
    cdef HeldDir folder
    cdef int64_t k[ZX_MAX_NDIM]
    cdef ptrdiff_t sstride[ZX_MAX_NDIM]
    cdef char path[PATH_MAX]
    cdef char* buf
    cdef const char* srcp = <const char*>cnp.PyArray_DATA(src)
    cdef const char* fillp = NULL
    cdef char csep
    cdef list left = []
    cdef unsigned char* marks
    if src.dtype.hasobject:
        raise ValueError("write_box: expected a value of fixed-size items")
    _check_box_call("write_box", ndim, scratch, start, chunk, sep, base)
    g.itemsize = <size_t>cnp.PyArray_ITEMSIZE(src)
    if g.itemsize == 0:
        raise ValueError("write_box: expected items of at least one byte")
    if fill is not None:
        if not isinstance(fill, bytes) or len(fill) != <Py_ssize_t>g.itemsize:
            raise ValueError(f"write_box: expected a fill value of {g.itemsize} bytes or None")
        fillp = PyBytes_AS_STRING(fill)
    g.ndim = ndim
    g.nbytes = g.itemsize
    cdef Py_ssize_t nchunks = 1
    for d in range(ndim):
        g.start[d] = start[d]
        g.extent[d] = cnp.PyArray_DIMS(src)[d]
        g.chunk[d] = chunk[d]
        sstride[d] = cnp.PyArray_STRIDES(src)[d]
        if g.chunk[d] <= 0 or g.extent[d] <= 0 or g.start[d] < 0:
            raise ValueError(f"write_box: expected chunk > 0, extent > 0 and start >= 0 on "
                             f"axis {d}, found {g.chunk[d]}, {g.extent[d]} and {g.start[d]}")
        if g.chunk[d] > (<int64_t>1 << 62) // <int64_t>g.nbytes \
                or g.start[d] > INT64_MAX - g.extent[d]:
            raise ValueError("write_box: the chunk size or the box overflows")
        g.nbytes *= <size_t>g.chunk[d]
        g.first[d] = g.start[d] // g.chunk[d]
        g.count[d] = (g.start[d] + g.extent[d] - 1) // g.chunk[d] - g.first[d] + 1
        nchunks *= g.count[d]
    if <size_t>cnp.PyArray_NBYTES(scratch) < g.nbytes:
        raise ValueError(f"write_box: expected a scratch array of at least {g.nbytes} bytes, "
                         f"found {cnp.PyArray_NBYTES(scratch)}")
    buf = <char*>cnp.PyArray_DATA(scratch)
    if lo < 0 or hi > nchunks or lo > hi:
        raise ValueError(f"write_box: chunk range {lo}..{hi} is outside 0..{nchunks}")
    marks = <unsigned char*>malloc(<size_t>(hi - lo) + 1)
    if marks == NULL:
        raise MemoryError()
    memcpy(path, PyBytes_AS_STRING(base), bn)
    csep = ord(sep)
    cdef char held[PATH_MAX]
    folder.fd, folder.len, folder.path = -1, -1, held
    try:
        with nogil:
            for i in range(lo, hi):
                marks[i - lo] = 1
                _chunk_at(i, ndim, g.first, g.count, k)
                if not _gather(&g, srcp, sstride, k, buf):
                    continue
                if fillp != NULL and zx_is_all(buf, g.nbytes, fillp, g.itemsize):
                    continue
                end = _key_path(path + bn, ndim, k, csep) - path
                cut = _hold_folder(&folder, path, end, resolve)
                if folder.fd < 0:
                    continue
                marks[i - lo] = _commit(folder.fd, path + cut + 1, end - cut - 1,
                                        <const unsigned char*>buf, <Py_ssize_t>g.nbytes,
                                        sync, 0, True) != 0
            _release_folder(&folder)
        for i in range(lo, hi):
            if marks[i - lo]:
                left.append(i)
    finally:
        free(marks)
    return left
