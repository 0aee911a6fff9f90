# Declarations of csrc/zx_copy.h (n-d strided box copy, fill, uniformity check).
from libc.stddef cimport ptrdiff_t

cdef extern from "zx_copy.h" nogil:
    enum: ZX_MAX_NDIM
    int zx_copy_box(int ndim, const ptrdiff_t *count, size_t itemsize,
                    const char *src, const ptrdiff_t *src_strides,
                    char *dst, const ptrdiff_t *dst_strides)
    int zx_fill_box(int ndim, const ptrdiff_t *count, size_t itemsize,
                    char *dst, const ptrdiff_t *dst_strides, const char *value)
    int zx_is_all(const char *buf, size_t nbytes, const char *value, size_t itemsize)
