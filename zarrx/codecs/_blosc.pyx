# zarrx-libs: BLOSC
# zarrx-sources: csrc/zx_shuffle.c
"""c-blosc 1.x buffers through the context API only (blosc_compress_ctx/_decompress_ctx).

zarrx never calls blosc's global functions, never sets global state and always runs blosc with
one internal thread: parallelism belongs to the caller's threads, with the GIL released.

Byte-shuffled 4-byte items (float32, int32) are shuffled by zarrx where the CPU has AVX2
(csrc/zx_shuffle.c; blosc's own shuffle, as distributions build it, may use SSE2 only) and handed
to blosc unshuffled, its header then marked shuffled: the buffer is the one blosc makes (see
:func:`compress`).

Decoding requires the header's ``cbytes`` to equal ``len(src)`` exactly (numcodecs and blosc
write exactly that), its ``nbytes`` to equal ``len(dst)`` and to be within :data:`MAX_RATIO`
of ``cbytes``, and its ``blocksize`` not to exceed ``nbytes`` (c-blosc never writes a larger
one, and sizes its scratch buffers from it): a hostile header makes zarrx allocate nothing.

Failures raise ``KernelStatus(code, *values)`` with the codes below; :mod:`zarrx.codecs.blosc`
words the message.
"""
import threading

from cpython.mem cimport PyMem_RawFree, PyMem_RawMalloc
from cpython.ref cimport PyObject, Py_XDECREF
from libc.stdint cimport uint8_t
from libc.string cimport memcpy

from zarrx._clib.blosc cimport (
    BLOSC_DOBITSHUFFLE, BLOSC_DOSHUFFLE, BLOSC_MAX_BUFFERSIZE, BLOSC_MAX_OVERHEAD,
    BLOSC_MEMCPYED, BLOSC_MIN_HEADER_LENGTH, BLOSC_VERSION_FORMAT, BLOSC_VERSION_STRING,
    blosc_compname_to_compcode,
    blosc_compress_ctx, blosc_cbuffer_complib, blosc_cbuffer_metainfo,
    blosc_cbuffer_validate, blosc_cbuffer_versions, blosc_decompress_ctx,
)

from zarrx._clib.zx_shuffle cimport (
    zx_shuffle4_available, zx_shuffle4_blocks, zx_shuffle4_run,
)

from zarrx.codecs._common cimport (
    ZX_NOMEM_DECODED, ZX_NOMEM_ENCODED, check_ratio, decoded_size, export_common,
    finish_bytes, new_bytes,
)
from zarrx.codecs.status import KernelStatus

# Every block's data is a split size (4 bytes) plus what one of blosc's compressors made of it;
# zstd expands most, at most 32768-fold (see zarrx.codecs._zstd).
cdef size_t _MAX_RATIO = 32768
MAX_RATIO = _MAX_RATIO

# Status codes (exported below); the values each carries are listed with it.
cdef enum:
    ZX_CNAME = 16            # (cname): not one of CNAMES
    ZX_NOT_BUILT = 17        # (cname): a compressor this c-blosc was built without
    ZX_TYPESIZE = 18         # (typesize): below 1 or past 2**31 - 1
    ZX_CLEVEL = 19           # (clevel): not in 0..9
    ZX_SHUFFLE = 20          # (shuffle): not in -1..2
    ZX_BLOCKSIZE = 21        # (blocksize): negative or past 2**63 - 1
    ZX_TOO_LARGE = 22        # (n, limit): input beyond blosc's buffer limit
    ZX_COMPRESS_FAILED = 23  # (n, cname, blosc status)
    ZX_SHORT = 24            # (n, header length): input shorter than the header
    ZX_CBYTES = 25           # (cbytes, n): the header's cbytes is not the input's length
    ZX_NBYTES = 26           # (nbytes, m): the header's nbytes is not the expected size
    ZX_BIG_BLOCKS = 27       # (blocksize, nbytes): blocks larger than the data
    ZX_INVALID = 28          # (version, flags, nbytes, cbytes, blocksize): blosc refuses it
    ZX_MEMCPY_SIZE = 29      # (nbytes, held): an uncompressed buffer holding another size
    ZX_GEOMETRY = 30         # (blocksize, typesize, nbytes): a zero block or type size
    ZX_CORRUPT = 31          # (n, blosc status, m)

export_common(globals())
CNAME = ZX_CNAME
NOT_BUILT = ZX_NOT_BUILT
TYPESIZE = ZX_TYPESIZE
CLEVEL = ZX_CLEVEL
SHUFFLE = ZX_SHUFFLE
BLOCKSIZE = ZX_BLOCKSIZE
TOO_LARGE = ZX_TOO_LARGE
COMPRESS_FAILED = ZX_COMPRESS_FAILED
SHORT = ZX_SHORT
CBYTES = ZX_CBYTES
NBYTES = ZX_NBYTES
BIG_BLOCKS = ZX_BIG_BLOCKS
INVALID = ZX_INVALID
MEMCPY_SIZE = ZX_MEMCPY_SIZE
GEOMETRY = ZX_GEOMETRY
CORRUPT = ZX_CORRUPT

CNAMES = ("lz4", "lz4hc", "blosclz", "snappy", "zstd", "zlib")
SHUFFLES = {-1: "auto", 0: "none", 1: "byte", 2: "bit"}
# Compressor format codes stored in bits 5-7 of the header flags (lz4 and lz4hc share one).
cdef tuple _FORMATS = ("blosclz", "lz4", "snappy", "zlib", "zstd")
cdef uint8_t _EMPTY[1]
cdef object _INT_MAX = 2**31 - 1
cdef object _SSIZE_MAX = 2**63 - 1


def built(str cname):
    """Whether this c-blosc has the compressor ``cname`` (one of CNAMES; snappy is optional)."""
    return cname in CNAMES and blosc_compname_to_compcode(cname.encode("ascii")) >= 0


# What c-blosc 1.x does with a buffer, as far as the shuffle zarrx does in its place needs it
# (each result is checked against the header blosc then writes).
cdef Py_ssize_t _MIN_BUFFERSIZE = 128       # smaller buffers are stored as they are
cdef Py_ssize_t _MAX_SPLITS = 16            # larger items are never split into byte streams
cdef Py_ssize_t _L1 = 32 * 1024
cdef Py_ssize_t _MAX_BLOCKSIZE = (2**31 - 1 - 255 * 4) // 3
cdef Py_ssize_t _SCRATCH_KEPT = 16 << 20    # a thread keeps a shuffle buffer up to this size
cdef object _local = threading.local()      # one _Scratch per thread


cdef bint _splits(int code, Py_ssize_t typesize, Py_ssize_t blocksize) noexcept nogil:
    """Whether blosc compresses each byte stream of a block apart (its default split mode):
    not for zstd, and only for items of at most 16 bytes with 128 or more to a block."""
    return code != 5 and typesize <= _MAX_SPLITS and blocksize // typesize >= _MIN_BUFFERSIZE


cdef Py_ssize_t _blocksize(int code, int clevel, Py_ssize_t typesize, Py_ssize_t n,
                           Py_ssize_t forced) noexcept nogil:
    """The block size blosc picks for ``n`` bytes (``forced``: the caller's, 0 for none)."""
    if n < typesize:
        return 1
    cdef Py_ssize_t bs = n
    cdef bint slow = code == 2 or code == 4 or code == 5    # lz4hc, zlib, zstd: larger blocks
    if forced:
        bs = min(max(forced, _MIN_BUFFERSIZE), _MAX_BLOCKSIZE)
    elif n >= _L1:
        bs = _L1 * (2 if slow else 1)
        if clevel == 0:
            bs //= 4
        elif clevel == 1:
            bs //= 2
        elif clevel == 3:
            bs *= 2
        elif clevel == 4 or clevel == 5:
            bs *= 4
        elif clevel >= 6:
            bs *= 16 if clevel == 9 and slow else 8
    if clevel > 0 and _splits(code, typesize, bs):
        bs = min(max(min(bs, 1 << 18) * typesize, 1 << 16), 1 << 20)
    if bs > n:
        bs = n
    if bs > typesize:
        bs = bs // typesize * typesize
    return bs


cdef class _Scratch:
    """A thread's buffer for shuffled bytes, grown as needed (up to _SCRATCH_KEPT kept)."""
    cdef uint8_t* ptr
    cdef Py_ssize_t size

    def __dealloc__(self):
        PyMem_RawFree(self.ptr)


cdef uint8_t* _scratch(Py_ssize_t n, uint8_t** owned) except NULL:
    """``n`` bytes to shuffle into: the thread's buffer, or (past _SCRATCH_KEPT) a new one the
    caller frees (``owned[0]``)."""
    cdef _Scratch s
    cdef uint8_t* p
    if n > _SCRATCH_KEPT:
        p = <uint8_t*>PyMem_RawMalloc(<size_t>n)
        if p == NULL:
            raise KernelStatus(ZX_NOMEM_ENCODED, n)
        owned[0] = p
        return p
    s = getattr(_local, "scratch", None)
    if s is None:
        s = _Scratch()
        _local.scratch = s
    if s.size < n:
        p = <uint8_t*>PyMem_RawMalloc(<size_t>n)
        if p == NULL:
            raise KernelStatus(ZX_NOMEM_ENCODED, n)
        PyMem_RawFree(s.ptr)
        s.ptr = p
        s.size = n
    return s.ptr


cdef int _own_shuffle(int code, int level, const uint8_t* sp, size_t n, char* buf, size_t cap,
                      const char* cn, Py_ssize_t forced) except -1:
    """Compress ``n`` bytes of byte-shuffled 4-byte items as blosc does, shuffled here: the
    length written into ``buf``, or 0 when blosc's own call is to make it instead (no AVX2,
    or blosc picked blocks of another size than :func:`_blocksize`)."""
    cdef Py_ssize_t bs = _blocksize(code, level, 4, <Py_ssize_t>n, forced)
    cdef uint8_t* owned = NULL
    cdef uint8_t* tmp = _scratch(<Py_ssize_t>n, &owned)
    cdef const uint8_t* out = <const uint8_t*>buf
    cdef int rc
    try:
        with nogil:
            zx_shuffle4_blocks(sp, tmp, n, <size_t>bs)
            rc = blosc_compress_ctx(level, 0, 4, n, tmp, buf, cap, cn, <size_t>forced, 1)
    finally:
        PyMem_RawFree(owned)
    if rc < BLOSC_MIN_HEADER_LENGTH or _le32(out + 8) != <size_t>bs:
        return 0
    if out[2] & BLOSC_MEMCPYED:             # stored as it is: the items, not their shuffle
        if <size_t>rc != n + <size_t>BLOSC_MAX_OVERHEAD:
            return 0
        memcpy(buf + BLOSC_MAX_OVERHEAD, sp, n)
    buf[2] = <char>(out[2] | BLOSC_DOSHUFFLE)
    return rc


def compress(const uint8_t[::1] src, typesize, clevel=5, shuffle=1, str cname="lz4",
             blocksize=0, bint own_shuffle=True):
    """One blosc buffer holding ``src``.

    ``shuffle``: 0 none, 1 byte, 2 bit, -1 auto (bit for 1-byte items, else byte).
    ``blocksize`` 0 lets blosc choose. blosc ignores shuffling for ``typesize`` > 255.
    ``own_shuffle``: byte-shuffled 4-byte items are shuffled by zarrx where it can (the same
    bytes; False leaves it to blosc).
    """
    if cname not in CNAMES:
        raise KernelStatus(ZX_CNAME, cname)
    cdef bytes cname_b = cname.encode("ascii")
    cdef int code = blosc_compname_to_compcode(cname_b)
    if code < 0:
        raise KernelStatus(ZX_NOT_BUILT, cname)
    # any ints: checked before they become C ints and sizes
    if typesize < 1 or typesize > _INT_MAX:
        raise KernelStatus(ZX_TYPESIZE, typesize)
    if clevel < 0 or clevel > 9:
        raise KernelStatus(ZX_CLEVEL, clevel)
    if shuffle not in SHUFFLES:
        raise KernelStatus(ZX_SHUFFLE, shuffle)
    if shuffle == -1:
        shuffle = 2 if typesize == 1 else 1
    if blocksize < 0 or blocksize > _SSIZE_MAX:
        raise KernelStatus(ZX_BLOCKSIZE, blocksize)
    cdef int ts = typesize, level = clevel, doshuffle = shuffle
    cdef Py_ssize_t bs = blocksize
    cdef size_t n = <size_t>src.shape[0]
    if n > <size_t>BLOSC_MAX_BUFFERSIZE:
        raise KernelStatus(ZX_TOO_LARGE, n, BLOSC_MAX_BUFFERSIZE)
    cdef const uint8_t* sp = &src[0] if n else _EMPTY
    cdef size_t cap = n + <size_t>BLOSC_MAX_OVERHEAD
    cdef const char* cn = cname_b
    cdef int rc = 0
    cdef PyObject* out = NULL
    cdef char* buf = new_bytes(&out, <Py_ssize_t>cap, ZX_NOMEM_ENCODED)
    try:
        if own_shuffle and doshuffle == 1 and ts == 4 and level > 0 \
                and n >= <size_t>_MIN_BUFFERSIZE and bs <= _INT_MAX and zx_shuffle4_available():
            rc = _own_shuffle(code, level, sp, n, buf, cap, cn, bs)
        if rc == 0:
            with nogil:
                rc = blosc_compress_ctx(level, doshuffle, <size_t>ts, n, sp, buf, cap, cn,
                                        <size_t>bs, 1)
        if rc <= 0:
            raise KernelStatus(ZX_COMPRESS_FAILED, n, cname, rc)
        return finish_bytes(&out, rc)
    finally:
        Py_XDECREF(out)


def compress_rows(const uint8_t[:, :] rows, const uint8_t[::1] fill, clevel, str cname,
                  blocksize=0):
    """``compress(rows, 4, clevel, 1, cname, blocksize)`` of the rows (each a run of 4-byte
    items; the rows may lie anywhere apart, as those of a chunk in a larger array do), shuffled
    as they are read, with no gathered copy: the same bytes. With ``fill`` (one item's 4 bytes),
    None when every item is that item. NotImplemented where this cannot be done so (no AVX2,
    the buffer would be blosc blocks of another size than the whole, or stored as it is): the
    caller then gathers the rows and calls :func:`compress`."""
    if cname not in CNAMES or clevel < 1 or clevel > 9 or blocksize < 0 \
            or blocksize > _INT_MAX or not zx_shuffle4_available():
        return NotImplemented
    if fill is not None and fill.shape[0] != 4:
        raise ValueError(f"compress_rows: a fill item of {fill.shape[0]} bytes, expected 4")
    cdef bytes cname_b = cname.encode("ascii")
    cdef int code = blosc_compname_to_compcode(cname_b)
    cdef Py_ssize_t k = rows.shape[0], w = rows.shape[1], r
    if code < 0 or w % 4 or k == 0 or w == 0 or rows.strides[1] != 1 \
            or k > (<Py_ssize_t>BLOSC_MAX_BUFFERSIZE) // w:
        return NotImplemented
    cdef Py_ssize_t n = k * w, forced = blocksize, per = w // 4, count = n // 4
    cdef int level = clevel
    if n < _MIN_BUFFERSIZE or _blocksize(code, level, 4, n, forced) != n:
        return NotImplemented
    cdef uint8_t* owned = NULL
    cdef uint8_t* tmp = _scratch(n, &owned)
    cdef const uint8_t* fp = &fill[0] if fill is not None else NULL
    cdef int differs = 0, rc = 0
    cdef size_t cap = <size_t>n + <size_t>BLOSC_MAX_OVERHEAD
    cdef const char* cn = cname_b
    cdef PyObject* out = NULL
    cdef char* buf
    try:
        with nogil:
            for r in range(k):
                differs |= zx_shuffle4_run(&rows[r, 0], <size_t>per, tmp, <size_t>count,
                                           <size_t>(r * per), fp)
        if fp != NULL and not differs:
            return None
        buf = new_bytes(&out, <Py_ssize_t>cap, ZX_NOMEM_ENCODED)
        with nogil:
            rc = blosc_compress_ctx(level, 0, 4, <size_t>n, tmp, buf, cap, cn, <size_t>forced,
                                    1)
        if rc < BLOSC_MIN_HEADER_LENGTH or _le32(<const uint8_t*>buf + 8) != <size_t>n \
                or buf[2] & BLOSC_MEMCPYED:
            return NotImplemented
        buf[2] = <char>(buf[2] | BLOSC_DOSHUFFLE)
        return finish_bytes(&out, rc)
    finally:
        PyMem_RawFree(owned)
        Py_XDECREF(out)


cdef inline size_t _le32(const uint8_t* p) noexcept nogil:
    return <size_t>p[0] | (<size_t>p[1] << 8) | (<size_t>p[2] << 16) | (<size_t>p[3] << 24)


cdef int _check_header(const uint8_t* sp, size_t n, size_t m) except -1:
    if n < <size_t>BLOSC_MIN_HEADER_LENGTH:
        raise KernelStatus(ZX_SHORT, n, BLOSC_MIN_HEADER_LENGTH)
    cdef size_t nbytes = 0, cbytes = 0, blocksize = 0, typesize = 0, valid_nbytes = 0
    cdef int flags = sp[2]
    # the sizes as stored (unsigned 32-bit little-endian), whatever the version: blosc's own
    # accessors report 0 for a version they do not know and sign-extend values of 2**31 and up
    nbytes = _le32(sp + 4)
    blocksize = _le32(sp + 8)
    cbytes = _le32(sp + 12)
    typesize = sp[3]
    if sp[0] == 0 or sp[0] > BLOSC_VERSION_FORMAT:
        raise KernelStatus(ZX_INVALID, sp[0], flags, nbytes, cbytes, blocksize)
    if cbytes != n:
        raise KernelStatus(ZX_CBYTES, cbytes, n)
    if nbytes != m:
        raise KernelStatus(ZX_NBYTES, nbytes, m)
    check_ratio(m, n, _MAX_RATIO)
    if blocksize > nbytes and blocksize > 1:
        raise KernelStatus(ZX_BIG_BLOCKS, blocksize, nbytes)
    if blosc_cbuffer_validate(sp, n, &valid_nbytes) != 0 or valid_nbytes != m:
        raise KernelStatus(ZX_INVALID, sp[0], flags, nbytes, cbytes, blocksize)
    if flags & BLOSC_MEMCPYED:
        if cbytes != nbytes + <size_t>BLOSC_MAX_OVERHEAD:
            raise KernelStatus(ZX_MEMCPY_SIZE, nbytes, cbytes - <size_t>BLOSC_MAX_OVERHEAD)
    elif nbytes and (blocksize == 0 or typesize == 0):
        raise KernelStatus(ZX_GEOMETRY, blocksize, typesize, nbytes)
    return 0


cdef int _decode(const uint8_t* sp, size_t n, uint8_t* dp, size_t m) except -1:
    _check_header(sp, n, m)
    if m == 0:
        return 0
    cdef int rc
    with nogil:
        rc = blosc_decompress_ctx(sp, dp, m, 1)
    if rc < 0 or <size_t>rc != m:
        raise KernelStatus(ZX_CORRUPT, n, rc, m)
    return 0


def decompress_into(const uint8_t[::1] src, uint8_t[::1] dst):
    """Decode the blosc buffer ``src`` into ``dst`` of exactly its ``nbytes``."""
    cdef size_t n = <size_t>src.shape[0], m = <size_t>dst.shape[0]
    _decode(&src[0] if n else _EMPTY, n, &dst[0] if m else _EMPTY, m)


def decompress(const uint8_t[::1] src, expected):
    """Decode ``src`` into a new ``bytes`` of exactly ``expected`` bytes, allocated only once the
    header has been checked."""
    cdef Py_ssize_t m = decoded_size(expected)
    cdef size_t n = <size_t>src.shape[0]
    _check_header(&src[0] if n else _EMPTY, n, <size_t>m)
    cdef PyObject* out = NULL
    cdef char* dp = new_bytes(&out, m, ZX_NOMEM_DECODED)
    try:
        _decode(&src[0], n, <uint8_t*>dp, <size_t>m)
        return finish_bytes(&out, m)
    finally:
        Py_XDECREF(out)


def check(const uint8_t[::1] src, expected):
    """Everything :func:`decompress` checks of ``src`` decoding to ``expected`` bytes before it
    allocates or decodes anything (the header against the input's length and ``expected``),
    for a caller that allocates the output itself; nothing is allocated."""
    cdef Py_ssize_t m = decoded_size(expected)
    cdef size_t n = <size_t>src.shape[0]
    _check_header(&src[0] if n else _EMPTY, n, <size_t>m)


def header(const uint8_t[::1] src):
    """The 16-byte header as a dict: nbytes, cbytes, blocksize, typesize, shuffle ("none",
    "byte", "bit"), cname (lz4hc reads as "lz4": they share one format), complib (both
    ``"unknown(<code>)"`` for a format code c-blosc does not know), version, versionlz,
    memcpyed."""
    cdef size_t n = <size_t>src.shape[0]
    if n < <size_t>BLOSC_MIN_HEADER_LENGTH:
        raise KernelStatus(ZX_SHORT, n, BLOSC_MIN_HEADER_LENGTH)
    cdef const uint8_t* sp = &src[0]
    cdef size_t typesize = 0
    cdef int flags = 0, version = 0, versionlz = 0
    # the sizes as stored, as _check_header reads them (blosc_cbuffer_sizes sign-extends)
    cdef size_t nbytes = _le32(sp + 4), blocksize = _le32(sp + 8), cbytes = _le32(sp + 12)
    blosc_cbuffer_metainfo(sp, &typesize, &flags)
    blosc_cbuffer_versions(sp, &version, &versionlz)
    cdef int fmt = (sp[2] >> 5) & 0x7
    # NULL for a format code c-blosc does not know (a hostile or corrupt header)
    cdef const char* complib = blosc_cbuffer_complib(sp)
    if flags & BLOSC_DOBITSHUFFLE and not flags & BLOSC_DOSHUFFLE:
        shuffle = "bit"
    elif flags & BLOSC_DOSHUFFLE and not flags & BLOSC_DOBITSHUFFLE:
        shuffle = "byte"
    else:
        shuffle = "none"
    return {
        "nbytes": nbytes,
        "cbytes": cbytes,
        "blocksize": blocksize,
        "typesize": typesize,
        "shuffle": shuffle,
        "cname": _FORMATS[fmt] if fmt < len(_FORMATS) else f"unknown({fmt})",
        "complib": (complib.decode("ascii", "replace") if complib != NULL
                    else f"unknown({fmt})"),
        "version": version,
        "versionlz": versionlz,
        "memcpyed": bool(flags & BLOSC_MEMCPYED),
    }


def version() -> str:
    """Version of the c-blosc zarrx was built against."""
    return BLOSC_VERSION_STRING.decode("ascii")


def shuffle_backend() -> str:
    """Who byte-shuffles 4-byte items before blosc compresses them: "avx2" (zarrx, see
    :func:`compress`) or "blosc" (no AVX2, or ZARRX_SHUFFLE=blosc in the environment)."""
    return "avx2" if zx_shuffle4_available() else "blosc"
