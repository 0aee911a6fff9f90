# Declarations only, mirroring csrc/zx_crc32c.h (zarrx's own CRC-32C).
from libc.stdint cimport uint32_t

cdef extern from "zx_crc32c.h" nogil:
    uint32_t zx_crc32c(uint32_t crc, const void* buf, size_t len)
    const char* zx_crc32c_backend()
