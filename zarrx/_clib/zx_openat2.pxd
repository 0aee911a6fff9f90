# Declarations of csrc/zx_openat2.h (openat2 with link resolution restricted).
from libc.stdint cimport uint64_t

cdef extern from "zx_openat2.h" nogil:
    int zx_openat2(const char* path, uint64_t flags, uint64_t resolve)
    int zx_openat2_at(int dirfd, const char* path, uint64_t flags, uint64_t resolve)
