# zarrx-sources: csrc/zx_crc32c.c
"""CRC-32C (Castagnoli) over any C-contiguous buffer, computed by csrc/zx_crc32c.c.

The value continues a running checksum the way ``zlib.crc32`` does: ``crc32c(b, crc32c(a))``
equals ``crc32c(a + b)``.
"""
from libc.stdint cimport uint8_t, uint32_t

from zarrx._clib.zx_crc32c cimport zx_crc32c, zx_crc32c_backend


def crc32c(const uint8_t[::1] src, uint32_t value=0):
    """CRC-32C of ``src``, continuing from ``value`` (0 to start)."""
    cdef size_t n = <size_t>src.shape[0]
    cdef uint32_t crc = value
    if n:
        with nogil:
            crc = zx_crc32c(crc, &src[0], n)
    return crc


def backend():
    """``"sse4.2"`` when this CPU runs the hardware path, else ``"table"`` (also forced by
    ``ZARRX_CRC32C_BACKEND=table`` in the environment before the first checksum)."""
    return zx_crc32c_backend().decode("ascii")
