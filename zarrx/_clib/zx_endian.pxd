# Declarations of csrc/zx_endian.h: fixed-width integers in a stated byte order, any alignment.
from libc.stdint cimport uint32_t, uint64_t

cdef extern from "zx_endian.h" nogil:
    uint32_t zx_load_le32(const void* p)
    void zx_store_le32(void* p, uint32_t v)
    uint64_t zx_load_le64(const void* p)
    void zx_store_le64(void* p, uint64_t v)
    uint64_t zx_load_be64(const void* p)
    void zx_store_be64(void* p, uint64_t v)
