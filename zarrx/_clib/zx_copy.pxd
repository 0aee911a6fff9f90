# Declarations of csrc/zx_copy.h (n-d strided boxes: one walker for copy, fill, compare).
from libc.stddef cimport ptrdiff_t

cdef extern from "zx_copy.h" nogil:
    enum: ZX_MAX_NDIM

    ctypedef struct zx_box:
        int ndim
        size_t itemsize
        ptrdiff_t count[ZX_MAX_NDIM]
        ptrdiff_t stride[2][ZX_MAX_NDIM]

    int zx_box_init(zx_box* b, int ndim, size_t itemsize, const ptrdiff_t* shape)
    void zx_box_strides(zx_box* b, int k, const ptrdiff_t* strides, const ptrdiff_t* step)
    ptrdiff_t zx_box_offset(int ndim, const ptrdiff_t* strides, const ptrdiff_t* start)
    int zx_copy_box(const zx_box* b, const char* src, char* dst)
    int zx_box_all_equal(const zx_box* b, const char* buf, const char* value)
    int zx_is_all(const char* buf, size_t nbytes, const char* value, size_t itemsize)
