# zarrx-libs: LZ4
"""LZ4 in numcodecs' framing: a 4-byte little-endian decoded size, then one LZ4 block.

The header must state the expected size, and that size must be within :data:`MAX_RATIO` of the
block's length, before anything is allocated or decoded.
"""
from cpython.ref cimport PyObject, Py_XDECREF
from libc.stdint cimport uint8_t, uint32_t

from zarrx._clib.lz4 cimport (
    LZ4_MAX_INPUT_SIZE, LZ4_compress_fast, LZ4_compressBound,
    LZ4_decompress_safe,
)

from zarrx._clib.zx_endian cimport zx_load_le32, zx_store_le32
from zarrx.codecs._common cimport check_ratio, finish_bytes, new_bytes
from zarrx.errors import CodecError

# An LZ4 sequence lengthens its match by at most 255 bytes per input byte (each extra length
# byte adds up to 255): no block expands more than 255-fold.
cdef size_t _MAX_RATIO = 255
MAX_RATIO = _MAX_RATIO

cdef uint8_t _EMPTY[1]
cdef size_t _HEADER = 4
cdef int _ACCELERATION_MAX = 65537     # liblz4 clamps anything larger to this


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
    cdef int rc
    cdef PyObject* out = NULL
    cdef uint8_t* buf = <uint8_t*>new_bytes(&out, <Py_ssize_t>(_HEADER + <size_t>bound), "lz4",
                                            "the compressed block")
    try:
        zx_store_le32(buf, <uint32_t>n)
        with nogil:
            rc = LZ4_compress_fast(<const char*>sp, <char*>(buf + _HEADER), <int>n, bound,
                                   acceleration)
        if rc <= 0:
            raise CodecError(f"lz4: compressing {n} bytes failed (status {rc})")
        return finish_bytes(&out, <Py_ssize_t>(_HEADER + <size_t>rc), "lz4")
    finally:
        Py_XDECREF(out)


cdef int _check(const uint8_t* sp, size_t n, size_t m) except -1:
    if n < _HEADER:
        raise CodecError(f"lz4: input of {n} bytes is shorter than the 4-byte size header")
    cdef uint32_t declared = zx_load_le32(sp)
    if declared != m:
        raise CodecError(f"lz4: header declares {declared} decoded bytes, expected {m}")
    if m > <size_t>LZ4_MAX_INPUT_SIZE or n - _HEADER > <size_t>LZ4_MAX_INPUT_SIZE:
        raise CodecError(f"lz4: block of {n - _HEADER} bytes decoding to {m} bytes exceeds the "
                         f"LZ4 block limit of {LZ4_MAX_INPUT_SIZE} bytes")
    check_ratio(m, n - _HEADER, _MAX_RATIO, "lz4")
    return 0


cdef int _decode(const uint8_t* sp, size_t n, uint8_t* dp, size_t m) except -1:
    _check(sp, n, m)
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
    """Decode ``src`` into a new ``bytes`` of exactly ``expected`` bytes, allocated only once the
    header and :data:`MAX_RATIO` allow that size."""
    if expected < 0:
        raise CodecError(f"lz4: expected decoded size must be >= 0, found {expected}")
    cdef size_t n = <size_t>src.shape[0]
    cdef const uint8_t* sp = &src[0] if n else _EMPTY
    _check(sp, n, <size_t>expected)
    cdef PyObject* out = NULL
    cdef char* dp = new_bytes(&out, expected, "lz4", "the decoded data")
    try:
        _decode(sp, n, <uint8_t*>dp, <size_t>expected)
        return finish_bytes(&out, expected, "lz4")
    finally:
        Py_XDECREF(out)
