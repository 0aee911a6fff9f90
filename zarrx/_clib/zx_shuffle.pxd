# Declarations only, mirroring csrc/zx_shuffle.h (zarrx's byte shuffle of 4-byte items).
from libc.stdint cimport uint8_t

cdef extern from "zx_shuffle.h" nogil:
    int zx_shuffle4_available()
    void zx_shuffle4_blocks(const uint8_t* src, uint8_t* dst, size_t n, size_t blocksize)
    int zx_shuffle4_run(const uint8_t* src, size_t count, uint8_t* dst, size_t stream,
                        size_t at, const uint8_t* fill)
