# zarrx-libs: LZ4
"""LZ4 in numcodecs' framing: a 4-byte little-endian decoded size, then one LZ4 block."""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.stdint cimport uint8_t, uint32_t
from libc.stdlib cimport free, malloc

from zarrx._clib.lz4 cimport (
    LZ4_MAX_INPUT_SIZE, LZ4_compress_fast, LZ4_compressBound,
    LZ4_decompress_safe,
)

from zarrx.errors import CodecError

cdef uint8_t _EMPTY[1]
cdef size_t _HEADER = 4
cdef int _ACCELERATION_MAX = 65537     # liblz4 clamps anything larger to this


cdef inline uint32_t _load_le32(const uint8_t* p) noexcept nogil:
    return p[0] | (<uint32_t>p[1] << 8) | (<uint32_t>p[2] << 16) | (<uint32_t>p[3] << 24)


def compress(const uint8_t[::1] src, int acceleration=1):
    """Header + LZ4 block of ``src``; larger ``acceleration`` is faster and compresses less."""
    if acceleration < 1 or acceleration > _ACCELERATION_MAX:
        raise CodecError(f"lz4: acceleration {acceleration} is out of range, expected "
                         f"1..{_ACCELERATION_MAX}")
    cdef size_t n = <size_t>src.shape[0]
    if n > <size_t>LZ4_MAX_INPUT_SIZE:
        raise CodecError(f"lz4: input of {n} bytes is larger than the LZ4 block limit of "
                         f"{LZ4_MAX_INPUT_SIZE} bytes")
    cdef const uint8_t* sp = &src[0] if n else _EMPTY
    cdef int bound = LZ4_compressBound(<int>n)
    cdef uint8_t* buf = <uint8_t*>malloc(_HEADER + <size_t>bound)
    cdef int rc
    if buf is NULL:
        raise MemoryError(f"lz4: cannot allocate {bound + 4} bytes for the compressed block")
    try:
        buf[0] = n & 0xFF
        buf[1] = (n >> 8) & 0xFF
        buf[2] = (n >> 16) & 0xFF
        buf[3] = (n >> 24) & 0xFF
        with nogil:
            rc = LZ4_compress_fast(<const char*>sp, <char*>(buf + _HEADER), <int>n, bound,
                                   acceleration)
        if rc <= 0:
            raise CodecError(f"lz4: compressing {n} bytes failed (status {rc})")
        return PyBytes_FromStringAndSize(<char*>buf, <Py_ssize_t>(_HEADER + <size_t>rc))
    finally:
        free(buf)


cdef int _decode(const uint8_t* sp, size_t n, uint8_t* dp, size_t m) except -1:
    if n < _HEADER:
        raise CodecError(f"lz4: input of {n} bytes is shorter than the 4-byte size header")
    cdef uint32_t declared = _load_le32(sp)
    if declared != m:
        raise CodecError(f"lz4: header declares {declared} decoded bytes, expected {m}")
    if m > <size_t>LZ4_MAX_INPUT_SIZE or n - _HEADER > <size_t>LZ4_MAX_INPUT_SIZE:
        raise CodecError(f"lz4: block of {n - _HEADER} bytes decoding to {m} bytes exceeds the "
                         f"LZ4 block limit of {LZ4_MAX_INPUT_SIZE} bytes")
    cdef int rc
    with nogil:
        rc = LZ4_decompress_safe(<const char*>(sp + _HEADER), <char*>dp, <int>(n - _HEADER),
                                 <int>m)
    if rc < 0:
        raise CodecError(f"lz4: corrupt block ({n - _HEADER} bytes, expected to decode to {m} "
                         f"bytes; liblz4 status {rc})")
    if <size_t>rc != m:
        raise CodecError(f"lz4: block decodes to {rc} bytes, expected {m}")
    return 0


def decompress_into(const uint8_t[::1] src, uint8_t[::1] dst):
    """Decode ``src`` into ``dst``; its header and block must both say ``len(dst)`` bytes."""
    cdef size_t n = <size_t>src.shape[0], m = <size_t>dst.shape[0]
    _decode(&src[0] if n else _EMPTY, n, &dst[0] if m else _EMPTY, m)


def decompress(const uint8_t[::1] src, Py_ssize_t expected):
    """Decode ``src`` into a new ``bytes`` of exactly ``expected`` bytes."""
    if expected < 0:
        raise CodecError(f"lz4: expected decoded size must be >= 0, found {expected}")
    cdef size_t n = <size_t>src.shape[0]
    if n >= _HEADER and _load_le32(&src[0]) != <size_t>expected:
        raise CodecError(f"lz4: header declares {_load_le32(&src[0])} decoded bytes, "
                         f"expected {expected}")
    out = PyBytes_FromStringAndSize(NULL, expected)
    _decode(&src[0] if n else _EMPTY, n, <uint8_t*>PyBytes_AS_STRING(out), <size_t>expected)
    return out


def header_size(const uint8_t[::1] src):
    """The decoded size recorded in the 4-byte header."""
    if src.shape[0] < <Py_ssize_t>_HEADER:
        raise CodecError(f"lz4: input of {src.shape[0]} bytes is shorter than the 4-byte size "
                         f"header")
    return _load_le32(&src[0])
