# Shared with the box writer (zarrx.store._localboxwrite).
from libc.stdint cimport int64_t

cdef int _commit(int dfd, const char* name, Py_ssize_t name_len, const unsigned char* data,
                 Py_ssize_t size, bint sync, int64_t after, bint lock_always) noexcept nogil
cdef int _stage(int dfd, char* tmp, const char* name, Py_ssize_t name_len,
                const unsigned char* data, Py_ssize_t size, bint sync, int64_t after,
                int64_t* stamped) noexcept nogil
