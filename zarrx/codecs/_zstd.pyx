# zarrx-libs: ZSTD
"""Zstandard frames in and out of caller-sized buffers, GIL released around every libzstd call.

Decoding never trusts a size read from the data: the caller states the decoded size, frames
that declare another size are refused before any decoding, a size no input of that length can
reach (:data:`MAX_RATIO`) is refused before anything is allocated (:func:`check` runs these
checks alone, for callers that allocate the destination), and frames with or without a
content-size field are decoded in one pass into the fixed destination, which serves as their
window (no window buffer), the excess refused, not written. :func:`decompress_bounded` serves data whose decoded size is not known in advance: its
output grows geometrically up to a limit.

Failures raise ``KernelStatus(code, *numbers)`` with the codes below; :mod:`zarrx.codecs.zstd`
words the message (:func:`error_name` gives libzstd's name of an error code).
"""
import threading

from cpython.ref cimport PyObject, Py_XDECREF
from libc.stdint cimport int64_t, uint64_t, uint8_t

from zarrx._clib.zstd cimport (
    ZSTD_CCtx, ZSTD_CCtx_reset, ZSTD_CCtx_setParameter, ZSTD_CLEVEL_DEFAULT,
    ZSTD_CONTENTSIZE_ERROR, ZSTD_CONTENTSIZE_UNKNOWN, ZSTD_DCtx, ZSTD_DCtx_reset,
    ZSTD_c_checksumFlag, ZSTD_c_compressionLevel, ZSTD_c_contentSizeFlag, ZSTD_compress2,
    ZSTD_compressBound, ZSTD_createCCtx, ZSTD_createDCtx, ZSTD_decompressDCtx,
    ZSTD_decompressStream, ZSTD_findFrameCompressedSize, ZSTD_freeCCtx, ZSTD_freeDCtx,
    ZSTD_getErrorName, ZSTD_getFrameContentSize, ZSTD_inBuffer, ZSTD_isError, ZSTD_maxCLevel,
    ZSTD_minCLevel, ZSTD_outBuffer, ZSTD_reset_session_and_parameters, ZSTD_reset_session_only,
    ZSTD_error_dstSize_tooSmall, ZSTD_error_frameParameter_windowTooLarge, ZSTD_getErrorCode,
    ZSTD_versionNumber,
)

from zarrx.codecs._common cimport (
    ZX_NOMEM_DECODED, ZX_NOMEM_ENCODED, check_ratio, decoded_size, export_common,
    finish_bytes, new_bytes, resize_bytes, size_limit,
)
from zarrx.codecs.status import KernelStatus

# A zstd block takes at least 4 bytes (3 of header, 1 of content: an RLE block) and decodes to
# at most 128 KiB (Block_Maximum_Size): no input expands more than 32768-fold.
cdef size_t _MAX_RATIO = 32768
MAX_RATIO = _MAX_RATIO
# The largest window a frame may need: libzstd's default for its decoder
# (ZSTD_WINDOWLOG_LIMIT_DEFAULT, 2**27), which zarrx keeps.
cdef unsigned long long _MAX_WINDOW = 1 << 27
MAX_WINDOW = _MAX_WINDOW

# Status codes, consecutive (exported below in this order), each with the values it carries.
cdef enum:
    ZX_NO_DCTX = 16          # (): no decompression context could be allocated
    ZX_NO_CCTX = 17          # (): no compression context could be allocated
    ZX_LEVEL = 18            # (level, min, max, default)
    ZX_TOO_LARGE = 19        # (n): the input is too large to compress
    ZX_COMPRESS_FAILED = 20  # (n, level, rc)
    ZX_EMPTY = 21            # (m): empty input where m decoded bytes were expected
    ZX_NOT_A_FRAME = 22      # (n, rc): the input does not start with a complete frame
    ZX_TRAILING = 23         # (rest, offset, rc): rest bytes after the frame ending at offset
    ZX_BAD_HEADER = 24       # (offset): a frame header that cannot be read
    ZX_DECLARED = 25         # (offset, size, before, m): a frame declares more than is left of m
    ZX_SIZE = 26             # (got, m, frames): the frames decode to got bytes, m expected
    ZX_CORRUPT = 27          # (n, m or None, rc): libzstd refused the data
    ZX_EXCESS = 28           # (m): the frames decode to more than m bytes
    ZX_TRUNCATED = 29        # (n, produced, m or None): the input ends inside a frame
    ZX_NO_HEADER = 30        # (): empty input where a frame header was expected
    ZX_BAD_FIRST_HEADER = 31 # (n): the input does not start with a valid frame header
    ZX_LIMIT_DECLARED = 32   # (size, limit): frame headers declare more than the limit
    ZX_LIMIT_EXCEEDED = 33   # (limit): the frames decode to more than the limit
    ZX_WINDOW = 34           # (offset, window, limit): a frame needs a window over the limit
    ZX_SPAN = 35             # (start, length, n): a chunk's bytes lie outside the n bytes given

export_common(globals())
(NO_DCTX, NO_CCTX, LEVEL, TOO_LARGE, COMPRESS_FAILED, EMPTY, NOT_A_FRAME, TRAILING, BAD_HEADER,
 DECLARED, SIZE, CORRUPT, EXCESS, TRUNCATED, NO_HEADER, BAD_FIRST_HEADER, LIMIT_DECLARED,
 LIMIT_EXCEEDED, WINDOW, SPAN) = range(ZX_NO_DCTX, ZX_SPAN + 1)

cdef uint8_t _EMPTY[1]
cdef object _local = threading.local()   # one ZSTD_CCtx and one ZSTD_DCtx per thread


cdef class _DCtx:
    cdef ZSTD_DCtx* ptr

    def __cinit__(self):
        self.ptr = ZSTD_createDCtx()
        if self.ptr is NULL:
            raise KernelStatus(ZX_NO_DCTX)

    def __dealloc__(self):
        if self.ptr is not NULL:
            ZSTD_freeDCtx(self.ptr)


cdef class _CCtx:
    def __cinit__(self):
        self.ptr = ZSTD_createCCtx()
        if self.ptr is NULL:
            raise KernelStatus(ZX_NO_CCTX)

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


def error_name(size_t rc):
    """libzstd's name of the error code ``rc`` (a value of a status)."""
    return ZSTD_getErrorName(rc).decode("utf-8", "replace")


def compress(const uint8_t[::1] src, level=0, bint checksum=False):
    """One zstd frame holding ``src``; it always records the content size.

    ``level`` 0 is zstd's default; negative levels trade ratio for speed.
    """
    cdef int lo = ZSTD_minCLevel(), hi = ZSTD_maxCLevel()
    if level < lo or level > hi:            # any int: checked before it becomes a C int
        raise KernelStatus(ZX_LEVEL, level, lo, hi, ZSTD_CLEVEL_DEFAULT)
    cdef int lvl = level
    cdef size_t n = <size_t>src.shape[0]
    cdef const uint8_t* sp = &src[0] if n else _EMPTY
    cdef size_t bound = ZSTD_compressBound(n)
    if ZSTD_isError(bound):
        raise KernelStatus(ZX_TOO_LARGE, n)
    cdef _CCtx ctx = _thread_cctx()
    cdef PyObject* out = NULL
    cdef char* buf = new_bytes(&out, <Py_ssize_t>bound, ZX_NOMEM_ENCODED)
    cdef ZSTD_CCtx* cctx = ctx.ptr
    cdef size_t rc = 0
    try:
        with nogil:
            rc = set_params(cctx, lvl, checksum)
            if not ZSTD_isError(rc):
                rc = ZSTD_compress2(cctx, buf, bound, sp, n)
        if ZSTD_isError(rc):
            raise KernelStatus(ZX_COMPRESS_FAILED, n, lvl, rc)
        return finish_bytes(&out, <Py_ssize_t>rc)
    finally:
        Py_XDECREF(out)


cdef size_t _frame_at(const uint8_t* sp, size_t n, size_t off,
                      unsigned long long* cs) except? 0:
    """The compressed size of the frame at ``off`` (and its declared content size in ``cs``);
    refuses an incomplete frame or an unreadable header."""
    cdef size_t fsize = ZSTD_findFrameCompressedSize(sp + off, n - off)
    if ZSTD_isError(fsize):
        if off == 0:
            raise KernelStatus(ZX_NOT_A_FRAME, n, fsize)
        raise KernelStatus(ZX_TRAILING, n - off, off, fsize)
    cs[0] = ZSTD_getFrameContentSize(sp + off, n - off)
    if cs[0] == ZSTD_CONTENTSIZE_ERROR:
        raise KernelStatus(ZX_BAD_HEADER, off)
    return fsize


cdef int _check_frames(const uint8_t* sp, size_t n, size_t m, bint* unknown) except -1:
    """Walk every frame header; refuse declared sizes that cannot add up to ``m`` bytes."""
    cdef size_t off = 0, fsize
    cdef unsigned long long cs, total = 0
    cdef int nframes = 0
    unknown[0] = False
    if n == 0:
        raise KernelStatus(ZX_EMPTY, m)
    while off < n:
        fsize = _frame_at(sp, n, off, &cs)
        if cs == ZSTD_CONTENTSIZE_UNKNOWN:
            unknown[0] = True
        elif cs > m - total:
            if off == 0 and off + fsize == n:
                raise KernelStatus(ZX_SIZE, cs, m, 1)
            raise KernelStatus(ZX_DECLARED, off, cs, total, m)
        else:
            total += cs
        off += fsize
        nframes += 1
    if not unknown[0] and total != m:
        raise KernelStatus(ZX_SIZE, total, m, nframes)
    return 0


cdef int _scan_frames(const uint8_t* sp, size_t n, size_t limit, size_t* total,
                      bint* unknown) except -1:
    """Walk every frame header of data whose decoded size is not known: the sum of the declared
    sizes in ``total`` (``unknown``: some frame declares none); refuses a sum over ``limit``."""
    cdef size_t off = 0
    cdef unsigned long long cs
    unknown[0] = False
    total[0] = 0
    if n == 0:
        raise KernelStatus(ZX_NO_HEADER)
    while off < n:
        off += _frame_at(sp, n, off, &cs)
        if cs == ZSTD_CONTENTSIZE_UNKNOWN:
            unknown[0] = True
        elif cs > limit - total[0]:
            raise KernelStatus(ZX_LIMIT_DECLARED, (<object>total[0]) + cs, limit)
        else:
            total[0] += <size_t>cs
    return 0


cdef unsigned long long _window(const uint8_t* p, size_t n):
    """The window size a zstd frame's header declares (its content size when the frame is a
    single segment); 0 for a skippable frame or a header too short to say."""
    if n < 6 or p[0] != 0x28 or p[1] != 0xB5 or p[2] != 0x2F or p[3] != 0xFD:
        return 0
    cdef unsigned long long cs
    if p[4] & 0x20:                             # single segment: the window is the content
        cs = ZSTD_getFrameContentSize(p, n)
        if cs == ZSTD_CONTENTSIZE_UNKNOWN or cs == ZSTD_CONTENTSIZE_ERROR:
            return 0
        return cs
    cdef unsigned long long base = 1ULL << (10 + (p[5] >> 3))
    return base + (base >> 3) * (p[5] & 7)


cdef object _refused(const uint8_t* sp, size_t n, object m, size_t rc):
    """The status for libzstd refusing the frames of ``sp``: a frame whose window is over
    :data:`MAX_WINDOW` is refused for memory, anything else as corrupt."""
    cdef size_t off = 0, fsize
    cdef unsigned long long window
    if ZSTD_getErrorCode(rc) == ZSTD_error_frameParameter_windowTooLarge:
        while off < n:
            fsize = ZSTD_findFrameCompressedSize(sp + off, n - off)
            window = _window(sp + off, n - off)
            if window > _MAX_WINDOW:
                return KernelStatus(ZX_WINDOW, off, window, _MAX_WINDOW)
            if ZSTD_isError(fsize) or fsize == 0:
                break
            off += fsize
    return KernelStatus(ZX_CORRUPT, n, m, rc)


# Outcomes of the streaming decode.
cdef enum:
    _DONE = 0
    _FAILED = 1
    _EXCESS = 2
    _TRUNCATED = 3
    _FULL = 4


cdef int _stream(ZSTD_DCtx* dctx, ZSTD_inBuffer* inb, ZSTD_outBuffer* outb, bint probe_excess,
                 size_t* err) noexcept nogil:
    """Continue decoding ``inb`` into ``outb``. Once ``outb`` is full: with ``probe_excess``, a
    1-byte probe buffer detects output beyond it (_EXCESS, nothing written past ``outb``);
    without, _FULL (the caller gives ``outb`` more room and calls again)."""
    cdef uint8_t probe_byte[1]
    cdef ZSTD_outBuffer probe
    cdef ZSTD_outBuffer* cur
    cdef size_t rc, in_before, out_before
    while True:
        if outb.pos < outb.size:
            cur = outb
        elif not probe_excess:
            return _FULL
        else:
            probe.dst = probe_byte; probe.size = 1; probe.pos = 0
            cur = &probe
        in_before = inb.pos
        out_before = cur.pos
        rc = ZSTD_decompressStream(dctx, cur, inb)
        if ZSTD_isError(rc):
            err[0] = rc
            return _FAILED
        if cur == &probe and probe.pos:
            return _EXCESS
        if rc == 0 and inb.pos == inb.size:
            return _DONE
        if inb.pos == in_before and cur.pos == out_before and inb.pos == inb.size:
            return _TRUNCATED


cdef int _check(const uint8_t* sp, size_t n, size_t m, bint* unknown) except -1:
    """Everything that can be said of ``n`` input bytes decoding to ``m`` before decoding."""
    _check_frames(sp, n, m, unknown)
    check_ratio(m, n, _MAX_RATIO)
    return 0


cdef int _decode(const uint8_t* sp, size_t n, uint8_t* dp, size_t m, bint unknown) except -1:
    """Decode the (checked, complete) frames of ``sp`` into exactly ``m`` bytes at ``dp`` in one
    pass: the destination is the window, so a frame without a content size costs no window
    buffer whatever window its header declares (streaming would allocate that, up to
    :data:`MAX_WINDOW`, for a few stored bytes), and output past ``m`` is refused by libzstd
    (dstSize_tooSmall) without being written."""
    cdef _DCtx ctx = _thread_dctx()
    cdef size_t rc = 0
    with nogil:
        ZSTD_DCtx_reset(ctx.ptr, ZSTD_reset_session_only)
        rc = ZSTD_decompressDCtx(ctx.ptr, dp, m, sp, n)
    if ZSTD_isError(rc):
        if unknown and ZSTD_getErrorCode(rc) == ZSTD_error_dstSize_tooSmall:
            raise KernelStatus(ZX_EXCESS, m)
        raise _refused(sp, n, m, rc)
    if rc != m:
        raise KernelStatus(ZX_SIZE, rc, m, 1)
    return 0


def decompress_into(const uint8_t[::1] src, uint8_t[::1] dst):
    """Decode the frame(s) in ``src`` into ``dst``; they must fill it exactly."""
    cdef size_t n = <size_t>src.shape[0], m = <size_t>dst.shape[0]
    cdef const uint8_t* sp = &src[0] if n else _EMPTY
    cdef bint unknown
    _check(sp, n, m, &unknown)
    _decode(sp, n, &dst[0] if m else _EMPTY, m, unknown)


def check(const uint8_t[::1] src, expected):
    """Everything :func:`decompress` checks of ``src`` decoding to ``expected`` bytes before it
    allocates or decodes anything (every frame header, :data:`MAX_RATIO`), for a caller that
    allocates the output itself; nothing is allocated."""
    cdef Py_ssize_t m = decoded_size(expected)
    cdef size_t n = <size_t>src.shape[0]
    cdef bint unknown
    _check(&src[0] if n else _EMPTY, n, <size_t>m, &unknown)


cdef Py_ssize_t _decode_run(ZSTD_DCtx* dctx, const uint8_t* base, size_t n, const int64_t* starts,
                            const int64_t* lengths, uint8_t* out, size_t m, Py_ssize_t i,
                            Py_ssize_t k) noexcept nogil:
    """Decode chunks ``i``, ``i + 1``... while each is one frame declaring ``m`` bytes that
    decodes to them (skipping those whose start is negative); the index of the first chunk
    that is not so (``k`` when none): the caller takes it up with the GIL."""
    cdef int64_t s, ln
    cdef size_t fsize, rc
    while i < k:
        s = starts[i]
        if s < 0:
            i += 1
            continue
        ln = lengths[i]
        if ln <= 0 or <uint64_t>s > n or <uint64_t>ln > n - <size_t>s:
            return i
        fsize = ZSTD_findFrameCompressedSize(base + s, <size_t>ln)
        if ZSTD_isError(fsize) or fsize != <size_t>ln:
            return i
        if ZSTD_getFrameContentSize(base + s, <size_t>ln) != m:
            return i
        if m / _MAX_RATIO > <size_t>ln:           # the ratio bound of _check
            return i
        ZSTD_DCtx_reset(dctx, ZSTD_reset_session_only)
        rc = ZSTD_decompressDCtx(dctx, out + <size_t>i * m, m, base + s, <size_t>ln)
        if ZSTD_isError(rc) or rc != m:
            return i
        i += 1
    return k


def decompress_many(const uint8_t[::1] src, const int64_t[::1] starts,
                    const int64_t[::1] lengths, uint8_t[:, ::1] dst):
    """Decode chunk ``i``, the frame(s) at ``src[starts[i]:starts[i] + lengths[i]]``, into row
    ``i`` of ``dst``, which it must fill exactly, for every ``i`` whose start is not negative.
    None once every chunk is decoded; else ``(i, KernelStatus)`` for the first that is not (the
    rows before it are decoded). Chunks of one frame that declares its size are decoded
    without the GIL, many in one section; any other is checked and decoded as
    :func:`decompress_into` does, its failure worded by the same status."""
    cdef Py_ssize_t k = starts.shape[0], i = 0
    cdef size_t n = <size_t>src.shape[0], m = <size_t>dst.shape[1]
    if lengths.shape[0] != k or dst.shape[0] != k:
        raise ValueError(f"decompress_many: {k} starts, {lengths.shape[0]} lengths and "
                         f"{dst.shape[0]} rows")
    if k == 0:
        return None
    cdef const uint8_t* base = &src[0] if n else _EMPTY
    cdef uint8_t* out = &dst[0, 0] if m else _EMPTY
    cdef const int64_t* sp = &starts[0]
    cdef const int64_t* lp = &lengths[0]
    cdef _DCtx ctx = _thread_dctx()
    cdef bint unknown
    cdef int64_t s, ln
    while True:
        with nogil:
            i = _decode_run(ctx.ptr, base, n, sp, lp, out, m, i, k)
        if i >= k:
            return None
        s, ln = sp[i], lp[i]
        if ln < 0 or <uint64_t>s > n or <uint64_t>ln > n - <size_t>s:
            return i, KernelStatus(ZX_SPAN, s, ln, n)
        try:
            _check(base + s, <size_t>ln, m, &unknown)
            _decode(base + s, <size_t>ln, out + <size_t>i * m, m, unknown)
        except KernelStatus as st:
            return i, st
        i += 1


def decompress(const uint8_t[::1] src, expected):
    """Decode ``src`` into a new ``bytes`` of exactly ``expected`` bytes, allocated only once
    the frame headers and :data:`MAX_RATIO` allow that size."""
    cdef Py_ssize_t m = decoded_size(expected)
    cdef size_t n = <size_t>src.shape[0]
    cdef const uint8_t* sp = &src[0] if n else _EMPTY
    cdef bint unknown
    _check(sp, n, <size_t>m, &unknown)
    cdef PyObject* out = NULL
    cdef char* dp = new_bytes(&out, m, ZX_NOMEM_DECODED)
    try:
        _decode(sp, n, <uint8_t*>dp, <size_t>m, unknown)
        return finish_bytes(&out, m)
    finally:
        Py_XDECREF(out)


def decompress_bounded(const uint8_t[::1] src, limit):
    """Decode every frame of ``src`` into a new ``bytes`` of at most ``limit`` bytes, for data
    whose decoded size is not known in advance. Frames that all declare their size are decoded
    at that size (refused before anything is allocated when it exceeds ``limit``); otherwise the
    output starts small and grows fourfold, never beyond ``limit`` nor what ``len(src)`` bytes
    can decode to (:data:`MAX_RATIO`)."""
    cdef Py_ssize_t lim = size_limit(limit)
    cdef size_t n = <size_t>src.shape[0], total = 0, rc = 0
    cdef const uint8_t* sp = &src[0] if n else _EMPTY
    cdef bint unknown
    _scan_frames(sp, n, <size_t>lim, &total, &unknown)
    cdef PyObject* out = NULL
    cdef char* dp
    if not unknown:
        check_ratio(total, n, _MAX_RATIO)
        dp = new_bytes(&out, <Py_ssize_t>total, ZX_NOMEM_DECODED)
        try:
            _decode(sp, n, <uint8_t*>dp, total, False)
            return finish_bytes(&out, <Py_ssize_t>total)
        finally:
            Py_XDECREF(out)
    cdef size_t cap = <size_t>lim
    if n <= cap / _MAX_RATIO:
        cap = n * _MAX_RATIO                    # no input decodes to more
    cdef size_t size = n * 4 if n <= cap / 4 else cap
    if size < (1 << 16):
        size = cap if cap < (1 << 16) else (1 << 16)
    cdef _DCtx ctx = _thread_dctx()
    cdef ZSTD_inBuffer inb
    cdef ZSTD_outBuffer outb
    cdef int status
    dp = new_bytes(&out, <Py_ssize_t>size, ZX_NOMEM_DECODED)
    try:
        inb.src = sp; inb.size = n; inb.pos = 0
        outb.dst = dp; outb.size = size; outb.pos = 0
        with nogil:
            ZSTD_DCtx_reset(ctx.ptr, ZSTD_reset_session_only)
        while True:
            with nogil:
                status = _stream(ctx.ptr, &inb, &outb, size == cap, &rc)
            if status != _FULL:
                break
            size = size * 4 if size <= cap / 4 else cap
            outb.dst = resize_bytes(&out, <Py_ssize_t>size, ZX_NOMEM_DECODED)
            outb.size = size
        if status == _FAILED:
            raise _refused(sp, n, None, rc)
        if status == _EXCESS:
            raise KernelStatus(ZX_LIMIT_EXCEEDED, cap)
        if status == _TRUNCATED:
            raise KernelStatus(ZX_TRUNCATED, n, outb.pos, None)
        return finish_bytes(&out, <Py_ssize_t>outb.pos)
    finally:
        Py_XDECREF(out)


def content_size(const uint8_t[::1] src):
    """Content size declared by the first frame's header, or None when it has none."""
    cdef size_t n = <size_t>src.shape[0]
    if n == 0:
        raise KernelStatus(ZX_NO_HEADER)
    cdef unsigned long long cs = ZSTD_getFrameContentSize(&src[0], n)
    if cs == ZSTD_CONTENTSIZE_ERROR:
        raise KernelStatus(ZX_BAD_FIRST_HEADER, n)
    if cs == ZSTD_CONTENTSIZE_UNKNOWN:
        return None
    return cs


def version() -> str:
    """Version of the libzstd zarrx runs against, e.g. "1.5.4"."""
    cdef unsigned v = ZSTD_versionNumber()
    return f"{v // 10000}.{v // 100 % 100}.{v % 100}"
