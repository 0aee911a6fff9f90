# Shared with the other local-store kernels.
from libc.stdint cimport int64_t

cdef int _itoa(int64_t v, char* dst) noexcept nogil
