# zarrx-libs: ZSTD
"""Zstandard frames in and out of caller-sized buffers, GIL released around every libzstd call.

Decoding never trusts a size read from the data: the caller states the decoded size, frames
that declare another size are refused before any decoding, a size no input of that length can
reach (:data:`MAX_RATIO`) is refused before anything is allocated, and frames without a
content-size field are streamed into the fixed destination with the excess detected, not
written.
"""
import threading

from cpython.ref cimport PyObject, Py_XDECREF
from libc.stdint cimport uint8_t

from zarrx._clib.zstd cimport (
    ZSTD_CCtx, ZSTD_CCtx_reset, ZSTD_CCtx_setParameter, ZSTD_CLEVEL_DEFAULT,
    ZSTD_CONTENTSIZE_ERROR, ZSTD_CONTENTSIZE_UNKNOWN, ZSTD_DCtx, ZSTD_DCtx_reset,
    ZSTD_c_checksumFlag, ZSTD_c_compressionLevel, ZSTD_c_contentSizeFlag, ZSTD_compress2,
    ZSTD_compressBound, ZSTD_createCCtx, ZSTD_createDCtx, ZSTD_decompressDCtx,
    ZSTD_decompressStream, ZSTD_findFrameCompressedSize, ZSTD_freeCCtx, ZSTD_freeDCtx,
    ZSTD_getErrorName, ZSTD_getFrameContentSize, ZSTD_inBuffer, ZSTD_isError, ZSTD_maxCLevel,
    ZSTD_minCLevel, ZSTD_outBuffer, ZSTD_reset_session_and_parameters, ZSTD_reset_session_only,
    ZSTD_versionNumber,
)

from zarrx.codecs._common cimport check_ratio, finish_bytes, new_bytes
from zarrx.errors import CodecError

# A zstd block takes at least 4 bytes (3 of header, 1 of content: an RLE block) and decodes to
# at most 128 KiB (Block_Maximum_Size): no input expands more than 32768-fold.
cdef size_t _MAX_RATIO = 32768
MAX_RATIO = _MAX_RATIO

cdef uint8_t _EMPTY[1]
cdef object _local = threading.local()   # one ZSTD_CCtx and one ZSTD_DCtx per thread


cdef class _DCtx:
    cdef ZSTD_DCtx* ptr

    def __cinit__(self):
        self.ptr = ZSTD_createDCtx()
        if self.ptr is NULL:
            raise CodecError("zstd: cannot allocate a decompression context")

    def __dealloc__(self):
        if self.ptr is not NULL:
            ZSTD_freeDCtx(self.ptr)


cdef class _CCtx:
    cdef ZSTD_CCtx* ptr

    def __cinit__(self):
        self.ptr = ZSTD_createCCtx()
        if self.ptr is NULL:
            raise CodecError("zstd: cannot allocate a compression context")

    def __dealloc__(self):
        if self.ptr is not NULL:
            ZSTD_freeCCtx(self.ptr)


cdef _CCtx _thread_cctx():
    cdef _CCtx ctx = getattr(_local, "cctx", None)
    if ctx is None:
        ctx = _CCtx()
        _local.cctx = ctx
    return ctx


cdef _DCtx _thread_dctx():
    cdef _DCtx ctx = getattr(_local, "dctx", None)
    if ctx is None:
        ctx = _DCtx()
        _local.dctx = ctx
    return ctx


cdef str _errname(size_t rc):
    return ZSTD_getErrorName(rc).decode("utf-8", "replace")


def compress(const uint8_t[::1] src, int level=0, bint checksum=False):
    """One zstd frame holding ``src``; it always records the content size.

    ``level`` 0 is zstd's default; negative levels trade ratio for speed.
    """
    cdef int lo = ZSTD_minCLevel(), hi = ZSTD_maxCLevel()
    if level < lo or level > hi:
        raise CodecError(f"zstd: compression level {level} is out of range, expected "
                         f"{lo}..{hi} (0 means the default, {ZSTD_CLEVEL_DEFAULT})")
    cdef size_t n = <size_t>src.shape[0]
    cdef const uint8_t* sp = &src[0] if n else _EMPTY
    cdef size_t bound = ZSTD_compressBound(n)
    if ZSTD_isError(bound):
        raise CodecError(f"zstd: input of {n} bytes is too large to compress")
    cdef _CCtx ctx = _thread_cctx()
    cdef PyObject* out = NULL
    cdef char* buf = new_bytes(&out, <Py_ssize_t>bound, "zstd", "the compressed frame")
    cdef ZSTD_CCtx* cctx = ctx.ptr
    cdef size_t rc = 0
    try:
        with nogil:
            rc = ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters)
            if not ZSTD_isError(rc):
                rc = ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level)
            if not ZSTD_isError(rc):
                rc = ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1 if checksum else 0)
            if not ZSTD_isError(rc):
                rc = ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1)
            if not ZSTD_isError(rc):
                rc = ZSTD_compress2(cctx, buf, bound, sp, n)
        if ZSTD_isError(rc):
            raise CodecError(f"zstd: compressing {n} bytes at level {level} failed: "
                             f"{_errname(rc)}")
        return finish_bytes(&out, <Py_ssize_t>rc, "zstd")
    finally:
        Py_XDECREF(out)


cdef int _check_frames(const uint8_t* sp, size_t n, size_t m, bint* unknown) except -1:
    """Walk every frame header; refuse declared sizes that cannot add up to ``m`` bytes."""
    cdef size_t off = 0, fsize
    cdef unsigned long long cs, total = 0
    cdef int nframes = 0
    unknown[0] = False
    if n == 0:
        raise CodecError(f"zstd: empty input, expected a zstd frame decoding to {m} bytes")
    while off < n:
        fsize = ZSTD_findFrameCompressedSize(sp + off, n - off)
        if ZSTD_isError(fsize):
            if off == 0:
                raise CodecError(f"zstd: input of {n} bytes is not a complete zstd frame: "
                                 f"{_errname(fsize)}")
            raise CodecError(f"zstd: {n - off} bytes after the frame ending at offset {off} "
                             f"are not a complete zstd frame (trailing garbage or a truncated "
                             f"frame): {_errname(fsize)}")
        cs = ZSTD_getFrameContentSize(sp + off, n - off)
        if cs == ZSTD_CONTENTSIZE_ERROR:
            raise CodecError(f"zstd: frame at offset {off} has an unreadable header")
        if cs == ZSTD_CONTENTSIZE_UNKNOWN:
            unknown[0] = True
        elif cs > m - total:
            if off == 0 and off + fsize == n:
                raise CodecError(f"zstd: frame decodes to {cs} bytes, expected {m}")
            raise CodecError(f"zstd: frame at offset {off} declares {cs} bytes, but the frames "
                             f"before it already hold {total} of the expected {m}")
        else:
            total += cs
        off += fsize
        nframes += 1
    if not unknown[0] and total != m:
        what = "frame decodes" if nframes == 1 else f"{nframes} frames decode"
        raise CodecError(f"zstd: {what} to {total} bytes, expected {m}")
    return 0


# Outcomes of the bounded streaming decode.
cdef enum:
    _DONE = 0
    _FAILED = 1
    _EXCESS = 2
    _TRUNCATED = 3


cdef int _stream(ZSTD_DCtx* dctx, const uint8_t* sp, size_t n, uint8_t* dp, size_t m,
                 size_t* produced, size_t* err) noexcept nogil:
    """Decode all frames into dst; a 1-byte probe buffer detects output beyond ``m`` bytes."""
    cdef uint8_t probe_byte[1]
    cdef ZSTD_inBuffer inb
    cdef ZSTD_outBuffer outb, probe
    cdef ZSTD_outBuffer* cur
    cdef size_t rc, in_before, out_before
    inb.src = sp; inb.size = n; inb.pos = 0
    outb.dst = dp; outb.size = m; outb.pos = 0
    ZSTD_DCtx_reset(dctx, ZSTD_reset_session_only)
    while True:
        produced[0] = outb.pos
        if outb.pos < outb.size:
            cur = &outb
        else:
            probe.dst = probe_byte; probe.size = 1; probe.pos = 0
            cur = &probe
        in_before = inb.pos
        out_before = cur.pos
        rc = ZSTD_decompressStream(dctx, cur, &inb)
        produced[0] = outb.pos
        if ZSTD_isError(rc):
            err[0] = rc
            return _FAILED
        if cur is &probe and probe.pos:
            return _EXCESS
        if rc == 0 and inb.pos == inb.size:
            return _DONE
        if inb.pos == in_before and cur.pos == out_before and inb.pos == inb.size:
            return _TRUNCATED


cdef int _check(const uint8_t* sp, size_t n, size_t m, bint* unknown) except -1:
    """Everything that can be said of ``n`` input bytes decoding to ``m`` before decoding."""
    _check_frames(sp, n, m, unknown)
    check_ratio(m, n, _MAX_RATIO, "zstd")
    return 0


cdef int _decode(const uint8_t* sp, size_t n, uint8_t* dp, size_t m, bint unknown) except -1:
    cdef _DCtx ctx = _thread_dctx()
    cdef size_t rc = 0, produced = 0
    cdef int status
    if not unknown:
        with nogil:
            ZSTD_DCtx_reset(ctx.ptr, ZSTD_reset_session_only)
            rc = ZSTD_decompressDCtx(ctx.ptr, dp, m, sp, n)
        if ZSTD_isError(rc):
            raise CodecError(f"zstd: corrupt frame ({n} bytes, expected to decode to {m}): "
                             f"{_errname(rc)}")
        if rc != m:
            raise CodecError(f"zstd: frame decodes to {rc} bytes, expected {m}")
        return 0
    with nogil:
        status = _stream(ctx.ptr, sp, n, dp, m, &produced, &rc)
    if status == _FAILED:
        raise CodecError(f"zstd: corrupt frame ({n} bytes, expected to decode to {m}): "
                         f"{_errname(rc)}")
    if status == _EXCESS:
        raise CodecError(f"zstd: frame decodes to more than {m} bytes, expected {m}")
    if status == _TRUNCATED:
        raise CodecError(f"zstd: input of {n} bytes ends inside a frame (truncated) after "
                         f"{produced} decoded bytes, expected {m}")
    if produced != m:
        raise CodecError(f"zstd: frame decodes to {produced} bytes, expected {m}")
    return 0


def decompress_into(const uint8_t[::1] src, uint8_t[::1] dst):
    """Decode the frame(s) in ``src`` into ``dst``; they must fill it exactly."""
    cdef size_t n = <size_t>src.shape[0], m = <size_t>dst.shape[0]
    cdef const uint8_t* sp = &src[0] if n else _EMPTY
    cdef bint unknown
    _check(sp, n, m, &unknown)
    _decode(sp, n, &dst[0] if m else _EMPTY, m, unknown)


def decompress(const uint8_t[::1] src, Py_ssize_t expected):
    """Decode ``src`` into a new ``bytes`` of exactly ``expected`` bytes, allocated only once
    the frame headers and :data:`MAX_RATIO` allow that size."""
    if expected < 0:
        raise CodecError(f"zstd: expected decoded size must be >= 0, found {expected}")
    cdef size_t n = <size_t>src.shape[0]
    cdef const uint8_t* sp = &src[0] if n else _EMPTY
    cdef bint unknown
    _check(sp, n, <size_t>expected, &unknown)
    cdef PyObject* out = NULL
    cdef char* dp = new_bytes(&out, expected, "zstd", "the decoded data")
    try:
        _decode(sp, n, <uint8_t*>dp, <size_t>expected, unknown)
        return finish_bytes(&out, expected, "zstd")
    finally:
        Py_XDECREF(out)


def content_size(const uint8_t[::1] src):
    """Content size declared by the first frame's header, or None when it has none."""
    cdef size_t n = <size_t>src.shape[0]
    if n == 0:
        raise CodecError("zstd: empty input, expected a zstd frame header")
    cdef unsigned long long cs = ZSTD_getFrameContentSize(&src[0], n)
    if cs == ZSTD_CONTENTSIZE_ERROR:
        raise CodecError(f"zstd: input of {n} bytes does not start with a valid zstd frame "
                         f"header")
    if cs == ZSTD_CONTENTSIZE_UNKNOWN:
        return None
    return cs


def version() -> str:
    """Version of the libzstd zarrx runs against, e.g. "1.5.4"."""
    cdef unsigned v = ZSTD_versionNumber()
    return f"{v // 10000}.{v // 100 % 100}.{v % 100}"
