# zarrx-sources: csrc/zx_crc32c.c
"""CRC-32C (Castagnoli) over any C-contiguous buffer, computed by csrc/zx_crc32c.c.

The value continues a running checksum the way ``zlib.crc32`` does: ``crc32c(b, crc32c(a))``
equals ``crc32c(a + b)``.
"""
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t

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


def crc32c_many(const uint8_t[::1] src, const int64_t[::1] starts, const int64_t[::1] lengths,
                uint32_t[::1] out):
    """``out[i] = crc32c(src[starts[i]:starts[i] + lengths[i]])`` for every ``i`` whose start
    is not negative (``out[i]`` is left alone for the others), in one GIL-free section. A span
    outside ``src`` raises ValueError before any is summed."""
    cdef Py_ssize_t k = starts.shape[0], i
    cdef size_t n = <size_t>src.shape[0]
    if lengths.shape[0] != k or out.shape[0] != k:
        raise ValueError(f"crc32c_many: {k} starts, {lengths.shape[0]} lengths and "
                         f"{out.shape[0]} outputs")
    cdef int64_t s, ln
    for i in range(k):
        s, ln = starts[i], lengths[i]
        if s >= 0 and (ln < 0 or <uint64_t>s > n or <uint64_t>ln > n - <size_t>s):
            # the end as a Python int: s + ln may pass 2**63 - 1
            raise ValueError(f"crc32c_many: span [{s}, {(<object>s) + ln}) of chunk {i} lies "
                             f"outside the {n} bytes given")
    cdef const uint8_t* base = &src[0] if n else NULL
    with nogil:
        for i in range(k):
            s, ln = starts[i], lengths[i]
            if s >= 0:
                out[i] = zx_crc32c(0, base + s, <size_t>ln) if ln else 0
