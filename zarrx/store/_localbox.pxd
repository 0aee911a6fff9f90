# Shared with the other local-store kernels.
from libc.stdint cimport int64_t

cdef void _chunk_at(Py_ssize_t i, int ndim, const int64_t* first, const int64_t* count,
                    int64_t* k) noexcept nogil
cdef char* _key_path(char* pp, int ndim, const int64_t* k, char sep) noexcept nogil
