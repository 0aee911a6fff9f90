# zarrx-libs: LZ4
"""LZ4 in numcodecs' framing: a 4-byte little-endian decoded size, then one LZ4 block.

The header must state the expected size, and that size must be within :data:`MAX_RATIO` of the
block's length, before anything is allocated or decoded.

Failures raise ``KernelStatus(code, *values)`` with the codes below; :mod:`zarrx.codecs.lz4`
words the message.
"""
from cpython.ref cimport PyObject, Py_XDECREF
from libc.stdint cimport uint8_t, uint32_t

from zarrx._clib.lz4 cimport (
    LZ4_MAX_INPUT_SIZE, LZ4_compress_fast, LZ4_compressBound,
    LZ4_decompress_safe,
)

from zarrx._clib.zx_endian cimport zx_load_le32, zx_store_le32
from zarrx.codecs._common cimport (
    ZX_NOMEM_DECODED, ZX_NOMEM_ENCODED, check_ratio, decoded_size, export_common,
    finish_bytes, new_bytes,
)
from zarrx.codecs.status import KernelStatus

# An LZ4 sequence lengthens its match by at most 255 bytes per input byte (each extra length
# byte adds up to 255): no block expands more than 255-fold.
cdef size_t _MAX_RATIO = 255
MAX_RATIO = _MAX_RATIO

# Status codes (exported below); the values each carries are listed with it.
cdef enum:
    ZX_ACCELERATION = 16     # (acceleration, max): out of range
    ZX_TOO_LARGE = 17        # (n, limit): input beyond the LZ4 block limit
    ZX_COMPRESS_FAILED = 18  # (n, liblz4 status)
    ZX_SHORT = 19            # (n): input shorter than the 4-byte size header
    ZX_DECLARED = 20         # (declared, m): the header's size is not the expected one
    ZX_BLOCK_LIMIT = 21      # (block, m, limit): block or decoded size beyond the block limit
    ZX_CORRUPT = 22          # (block, m, liblz4 status)
    ZX_SIZE = 23             # (got, m): the block decodes to got bytes, m expected

export_common(globals())
ACCELERATION = ZX_ACCELERATION
TOO_LARGE = ZX_TOO_LARGE
COMPRESS_FAILED = ZX_COMPRESS_FAILED
SHORT = ZX_SHORT
DECLARED = ZX_DECLARED
BLOCK_LIMIT = ZX_BLOCK_LIMIT
CORRUPT = ZX_CORRUPT
SIZE = ZX_SIZE

cdef uint8_t _EMPTY[1]
cdef size_t _HEADER = 4
cdef int _ACCELERATION_MAX = 65537     # liblz4 clamps anything larger to this


def compress(const uint8_t[::1] src, acceleration=1):
    """Header + LZ4 block of ``src``; larger ``acceleration`` is faster and compresses less."""
    if acceleration < 1 or acceleration > _ACCELERATION_MAX:    # any int, before a C int
        raise KernelStatus(ZX_ACCELERATION, acceleration, _ACCELERATION_MAX)
    cdef int acc = acceleration
    cdef size_t n = <size_t>src.shape[0]
    if n > <size_t>LZ4_MAX_INPUT_SIZE:
        raise KernelStatus(ZX_TOO_LARGE, n, LZ4_MAX_INPUT_SIZE)
    cdef const uint8_t* sp = &src[0] if n else _EMPTY
    cdef int bound = LZ4_compressBound(<int>n)
    cdef int rc
    cdef PyObject* out = NULL
    cdef uint8_t* buf = <uint8_t*>new_bytes(&out, <Py_ssize_t>(_HEADER + <size_t>bound),
                                            ZX_NOMEM_ENCODED)
    try:
        zx_store_le32(buf, <uint32_t>n)
        with nogil:
            rc = LZ4_compress_fast(<const char*>sp, <char*>(buf + _HEADER), <int>n, bound, acc)
        if rc <= 0:
            raise KernelStatus(ZX_COMPRESS_FAILED, n, rc)
        return finish_bytes(&out, <Py_ssize_t>(_HEADER + <size_t>rc))
    finally:
        Py_XDECREF(out)


cdef int _check(const uint8_t* sp, size_t n, size_t m) except -1:
    if n < _HEADER:
        raise KernelStatus(ZX_SHORT, n)
    cdef uint32_t declared = zx_load_le32(sp)
    if declared != m:
        raise KernelStatus(ZX_DECLARED, declared, m)
    if m > <size_t>LZ4_MAX_INPUT_SIZE or n - _HEADER > <size_t>LZ4_MAX_INPUT_SIZE:
        raise KernelStatus(ZX_BLOCK_LIMIT, n - _HEADER, m, LZ4_MAX_INPUT_SIZE)
    check_ratio(m, n - _HEADER, _MAX_RATIO)
    return 0


cdef int _decode(const uint8_t* sp, size_t n, uint8_t* dp, size_t m) except -1:
    _check(sp, n, m)
    cdef int rc
    with nogil:
        rc = LZ4_decompress_safe(<const char*>(sp + _HEADER), <char*>dp, <int>(n - _HEADER),
                                 <int>m)
    if rc < 0:
        raise KernelStatus(ZX_CORRUPT, n - _HEADER, m, rc)
    if <size_t>rc != m:
        raise KernelStatus(ZX_SIZE, rc, m)
    return 0


def decompress_into(const uint8_t[::1] src, uint8_t[::1] dst):
    """Decode ``src`` into ``dst``; its header and block must both say ``len(dst)`` bytes."""
    cdef size_t n = <size_t>src.shape[0], m = <size_t>dst.shape[0]
    _decode(&src[0] if n else _EMPTY, n, &dst[0] if m else _EMPTY, m)


def check(const uint8_t[::1] src, expected):
    """Everything :func:`decompress` checks of ``src`` decoding to ``expected`` bytes before it
    allocates or decodes anything (the header, :data:`MAX_RATIO`), for a caller that allocates
    the output itself; nothing is allocated."""
    cdef Py_ssize_t m = decoded_size(expected)
    cdef size_t n = <size_t>src.shape[0]
    _check(&src[0] if n else _EMPTY, n, <size_t>m)


def decompress(const uint8_t[::1] src, expected):
    """Decode ``src`` into a new ``bytes`` of exactly ``expected`` bytes, allocated only once the
    header and :data:`MAX_RATIO` allow that size."""
    cdef Py_ssize_t m = decoded_size(expected)
    cdef size_t n = <size_t>src.shape[0]
    cdef const uint8_t* sp = &src[0] if n else _EMPTY
    _check(sp, n, <size_t>m)
    cdef PyObject* out = NULL
    cdef char* dp = new_bytes(&out, m, ZX_NOMEM_DECODED)
    try:
        _decode(sp, n, <uint8_t*>dp, <size_t>m)
        return finish_bytes(&out, m)
    finally:
        Py_XDECREF(out)
