# Shared with the other local-store kernels.
from libc.stdint cimport int64_t, uint64_t
cimport numpy as cnp

cdef void _chunk_at(Py_ssize_t i, int ndim, const int64_t* first, const int64_t* count,
                    int64_t* k) noexcept nogil
cdef char* _key_path(char* pp, int ndim, const int64_t* k, char sep) noexcept nogil

cdef struct HeldDir:
    int fd              # the folder's descriptor (-1: none held, or its open failed)
    int err             # the errno of a failed open
    Py_ssize_t len      # the length of the held folder's path (-1: none held)
    char* path          # a PATH_MAX buffer for that path (the caller's)

cdef Py_ssize_t _hold_folder(HeldDir* h, char* path, Py_ssize_t end,
                             uint64_t resolve) noexcept nogil
cdef void _release_folder(HeldDir* h) noexcept nogil
cdef int _check_box_call(str what, int ndim, cnp.ndarray scratch, tuple start, tuple chunk,
                         str sep, bytes base) except -1
