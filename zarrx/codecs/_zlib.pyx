# zarrx-libs: ZLIB DEFLATE
# zarrx-sources: csrc/zx_deflate.c
"""DEFLATE in its three wrappers (zlib, gzip, raw) in and out of caller-sized buffers.

One-shot work goes through libdeflate when zarrx was built with it (see :func:`backend`),
otherwise through zlib; both write standard streams. Decoding fills a destination of the
expected size exactly: a stream that is corrupt, ends early, holds more than that (detected
without writing past the destination) or is followed by garbage is refused. gzip input may hold
several concatenated members. A decoded size no input of that length can reach
(:data:`MAX_RATIO`) is refused before anything is allocated or decoded.
:func:`decompress_bounded` serves streams whose decoded size is not known in advance: its output
grows geometrically up to a limit.

Failures raise ``KernelStatus(code, *values)`` with the codes below (the values are numbers;
a corrupt stream also carries zlib's own description of it); :mod:`zarrx.codecs.deflate` words
the message.
"""
from cpython.ref cimport PyObject, Py_XDECREF
from libc.stdint cimport uint8_t
from libc.string cimport memset

from zarrx._clib.zlib cimport (
    Bytef, MAX_WBITS, Z_BUF_ERROR, Z_DATA_ERROR, Z_DEFAULT_STRATEGY, Z_DEFLATED, Z_FINISH,
    Z_MEM_ERROR, Z_NEED_DICT, Z_NO_FLUSH, Z_OK, Z_STREAM_END, deflate, deflateBound,
    deflateEnd, deflateInit2, inflate, inflateEnd, inflateInit2, inflateReset, uInt, z_stream,
    zlibVersion,
)
from zarrx._clib.zx_deflate cimport (
    ZX_DEFLATE_EXCESS, ZX_DEFLATE_NOMEM, ZX_DEFLATE_OK, ZX_DEFLATE_TRAILING, ZX_WRAP_GZIP,
    ZX_WRAP_RAW, ZX_WRAP_ZLIB, zx_deflate_available, zx_deflate_bound, zx_deflate_compress,
    zx_deflate_decompress,
)

from zarrx.codecs._common cimport (
    ZX_NOMEM_DECODED, ZX_NOMEM_ENCODED, check_ratio, decoded_size, export_common,
    finish_bytes, new_bytes, resize_bytes, size_limit,
)
from zarrx.codecs.status import KernelStatus

# DEFLATE's densest code: a length-258, distance-1 match in 2 bits (1-bit literal/length and
# distance codes), so no stream expands more than 1032-fold; the zlib and gzip wrappers only
# add bytes.
cdef size_t _MAX_RATIO = 1032
MAX_RATIO = _MAX_RATIO

# Status codes (exported below); the values each carries are listed with it.
cdef enum:
    ZX_WRAPPER = 16          # (wrapper): not one of "zlib", "gzip", "raw"
    ZX_BACKEND = 17          # (backend): not one of "auto", "zlib", "libdeflate"
    ZX_NO_LIBDEFLATE = 18    # (): libdeflate requested, but not built in
    ZX_LEVEL = 19            # (level): not in -1..9
    ZX_SETUP = 20            # (level): zlib cannot set up compression at that level
    ZX_NO_COMPRESSOR = 21    # (): no libdeflate compressor could be allocated
    ZX_BOUND = 22            # (n, cap): the compressed stream did not fit the bound
    ZX_COMPRESS_FAILED = 23  # (n, zlib status)
    ZX_EMPTY = 24            # (m or None): empty input
    ZX_SIZE = 25             # (got, m): the stream decodes to got bytes, m expected
    ZX_NO_DECOMPRESSOR = 26  # (): no libdeflate decompressor could be allocated
    ZX_EXCESS = 27           # (m): the stream decodes to more than m bytes
    ZX_TRUNCATED = 28        # (n, produced, m or None): the input ends inside the stream
    ZX_TRAILING = 29         # (rest, offset): rest bytes after the stream ending at offset
    ZX_NEED_DICT = 30        # (): the stream needs a preset dictionary
    ZX_NO_INFLATE = 31       # (): no inflate state could be allocated
    ZX_CORRUPT = 32          # (offset, n, m or None, zlib's description)
    ZX_LIMIT_EXCEEDED = 33   # (limit): the stream decodes to more than the limit

export_common(globals())
WRAPPER = ZX_WRAPPER
BACKEND = ZX_BACKEND
NO_LIBDEFLATE = ZX_NO_LIBDEFLATE
LEVEL = ZX_LEVEL
SETUP = ZX_SETUP
NO_COMPRESSOR = ZX_NO_COMPRESSOR
BOUND = ZX_BOUND
COMPRESS_FAILED = ZX_COMPRESS_FAILED
EMPTY = ZX_EMPTY
SIZE = ZX_SIZE
NO_DECOMPRESSOR = ZX_NO_DECOMPRESSOR
EXCESS = ZX_EXCESS
TRUNCATED = ZX_TRUNCATED
TRAILING = ZX_TRAILING
NEED_DICT = ZX_NEED_DICT
NO_INFLATE = ZX_NO_INFLATE
CORRUPT = ZX_CORRUPT
LIMIT_EXCEEDED = ZX_LIMIT_EXCEEDED

cdef uint8_t _EMPTY[1]
cdef size_t _STEP = 1 << 30          # zlib counts in 32-bit uInt: feed it at most 1 GiB a call
cdef dict _WRAPPERS = {"zlib": ZX_WRAP_ZLIB, "gzip": ZX_WRAP_GZIP, "raw": ZX_WRAP_RAW}
cdef dict _BACKENDS = {"auto": 0, "zlib": 1, "libdeflate": 2}


def backend():
    """``"libdeflate"`` when one-shot work uses libdeflate, else ``"zlib"``."""
    return "libdeflate" if zx_deflate_available() else "zlib"


cdef int _wrapper(str wrapper) except -1:
    w = _WRAPPERS.get(wrapper)
    if w is None:
        raise KernelStatus(ZX_WRAPPER, wrapper)
    return w


cdef bint _use_libdeflate(str backend_name) except -1:
    b = _BACKENDS.get(backend_name)
    if b is None:
        raise KernelStatus(ZX_BACKEND, backend_name)
    if b == 2 and not zx_deflate_available():
        raise KernelStatus(ZX_NO_LIBDEFLATE)
    return b != 1 and zx_deflate_available()


cdef inline int _wbits(int w) noexcept nogil:
    return MAX_WBITS + 16 if w == ZX_WRAP_GZIP else (MAX_WBITS if w == ZX_WRAP_ZLIB else -MAX_WBITS)


cdef inline size_t _min(size_t a, size_t b) noexcept nogil:
    return a if a < b else b


cdef int _deflate_zlib(int level, int wbits, const uint8_t* sp, size_t n, uint8_t* dp,
                       size_t cap, size_t* out_len) noexcept nogil:
    """zlib deflate of all of src into dst; returns Z_STREAM_END on success."""
    cdef z_stream strm
    memset(&strm, 0, sizeof(strm))
    cdef int rc = deflateInit2(&strm, level, Z_DEFLATED, wbits, 8, Z_DEFAULT_STRATEGY)
    if rc != Z_OK:
        return rc
    cdef size_t pos_in = 0, pos_out = 0, give_in, give_out
    while True:
        give_in = _min(n - pos_in, _STEP)
        give_out = _min(cap - pos_out, _STEP)
        strm.next_in = <Bytef*>(sp + pos_in)
        strm.avail_in = <uInt>give_in
        strm.next_out = dp + pos_out
        strm.avail_out = <uInt>give_out
        rc = deflate(&strm, Z_FINISH if pos_in + give_in == n else Z_NO_FLUSH)
        pos_in += give_in - strm.avail_in
        pos_out += give_out - strm.avail_out
        if rc == Z_STREAM_END or (rc != Z_OK and rc != Z_BUF_ERROR):
            break
        if give_out == strm.avail_out and give_in == strm.avail_in:
            rc = Z_BUF_ERROR       # no progress: the output bound was wrong
            break
    deflateEnd(&strm)
    out_len[0] = pos_out
    return rc


cdef inline int _libdeflate_level(int level) noexcept nogil:
    """The libdeflate level that stands for zlib's ``level``: zlib's default (-1) is 6, and
    level 1 is libdeflate's 2, since libdeflate's level 1 compresses less than zlib's (stored/raw
    0.550 against 0.512 on the benchmark data; level 2 gives 0.505 at 2.3x zlib level 1's speed,
    docs/performance.md). From level 2 up, libdeflate compresses at least as well as zlib."""
    if level < 0:
        return 6
    return 2 if level == 1 else level


def compress(const uint8_t[::1] src, level=-1, str wrapper="zlib", str backend="auto"):
    """Compress ``src`` at ``level`` (-1 default, 0 stored .. 9 best) into one stream."""
    cdef int w = _wrapper(wrapper)
    if level < -1 or level > 9:             # any int: checked before it becomes a C int
        raise KernelStatus(ZX_LEVEL, level)
    cdef int lvl = level
    cdef bint fast = _use_libdeflate(backend)
    cdef size_t n = <size_t>src.shape[0]
    cdef const uint8_t* sp = &src[0] if n else _EMPTY
    cdef z_stream probe
    cdef size_t cap, got = 0
    cdef int rc
    if fast:
        cap = zx_deflate_bound(n)
    else:
        memset(&probe, 0, sizeof(probe))
        if deflateInit2(&probe, lvl, Z_DEFLATED, _wbits(w), 8, Z_DEFAULT_STRATEGY) != Z_OK:
            raise KernelStatus(ZX_SETUP, lvl)
        cap = deflateBound(&probe, n) + 32
        deflateEnd(&probe)
    cdef PyObject* out = NULL
    cdef uint8_t* buf = <uint8_t*>new_bytes(&out, <Py_ssize_t>cap, ZX_NOMEM_ENCODED)
    try:
        if fast:
            with nogil:
                rc = zx_deflate_compress(w, _libdeflate_level(lvl), sp, n, buf, cap, &got)
            if rc == ZX_DEFLATE_NOMEM:
                raise KernelStatus(ZX_NO_COMPRESSOR)
            if rc != ZX_DEFLATE_OK:
                raise KernelStatus(ZX_BOUND, n, cap)
        else:
            with nogil:
                rc = _deflate_zlib(lvl, _wbits(w), sp, n, buf, cap, &got)
            if rc != Z_STREAM_END:
                raise KernelStatus(ZX_COMPRESS_FAILED, n, rc)
        return finish_bytes(&out, <Py_ssize_t>got)
    finally:
        Py_XDECREF(out)


# Outcomes of the streaming inflate.
cdef enum:
    _DONE = 0
    _CORRUPT = 1
    _EXCESS = 2
    _TRUNCATED = 3
    _TRAILING = 4
    _NOMEM = 5
    _NEED_DICT = 6
    _FULL = 7


cdef struct _Inflate:
    z_stream strm
    int w
    const uint8_t* sp
    size_t n
    size_t consumed
    uint8_t* dp
    size_t m
    size_t produced
    const char* msg


cdef int _inflate_run(_Inflate* s, bint probe_excess) noexcept nogil:
    """Continue inflating every stream (gzip: member) of ``s.sp`` into ``s.dp[produced:m]``.
    Once that is full: with ``probe_excess`` a 1-byte probe catches excess (_EXCESS, nothing
    written past ``s.dp + m``); without, _FULL (the caller gives it more room and calls
    again)."""
    cdef uint8_t probe[1]
    cdef size_t give_in, give_out
    cdef bint probing
    cdef int rc
    while True:
        give_in = _min(s.n - s.consumed, _STEP)
        probing = s.produced == s.m
        if probing:
            if not probe_excess:
                return _FULL
            give_out = 1
            s.strm.next_out = probe
        else:
            give_out = _min(s.m - s.produced, _STEP)
            s.strm.next_out = s.dp + s.produced
        s.strm.next_in = <Bytef*>(s.sp + s.consumed)
        s.strm.avail_in = <uInt>give_in
        s.strm.avail_out = <uInt>give_out
        rc = inflate(&s.strm, Z_NO_FLUSH)
        s.consumed += give_in - s.strm.avail_in
        if probing:
            if s.strm.avail_out == 0:
                return _EXCESS
        else:
            s.produced += give_out - s.strm.avail_out
        if rc == Z_STREAM_END:
            if s.consumed == s.n:
                return _DONE
            if (s.w == ZX_WRAP_GZIP and s.n - s.consumed >= 2 and s.sp[s.consumed] == 0x1f
                    and s.sp[s.consumed + 1] == 0x8b):
                inflateReset(&s.strm)      # the next gzip member
                continue
            return _TRAILING
        if rc == Z_OK:
            continue
        s.msg = s.strm.msg
        if rc == Z_BUF_ERROR:
            return _TRUNCATED if s.consumed == s.n else _CORRUPT
        if rc == Z_NEED_DICT:
            return _NEED_DICT
        if rc == Z_MEM_ERROR:
            return _NOMEM
        return _CORRUPT


cdef int _inflate_start(_Inflate* s, int w, const uint8_t* sp, size_t n, uint8_t* dp,
                        size_t m) noexcept nogil:
    memset(s, 0, sizeof(_Inflate))
    s.w = w
    s.sp = sp
    s.n = n
    s.dp = dp
    s.m = m
    return _NOMEM if inflateInit2(&s.strm, _wbits(w)) != Z_OK else _DONE


cdef int _inflate_failed(_Inflate* s, int status, object m) except -1:
    """Raise the status of an inflate that did not end in _DONE (``m``: the expected size, or
    None when it is not known)."""
    if status == _EXCESS:
        raise KernelStatus(ZX_EXCESS, m)
    if status == _TRUNCATED:
        raise KernelStatus(ZX_TRUNCATED, s.n, s.produced, m)
    if status == _TRAILING:
        raise KernelStatus(ZX_TRAILING, s.n - s.consumed, s.consumed)
    if status == _NEED_DICT:
        raise KernelStatus(ZX_NEED_DICT)
    if status == _NOMEM:
        raise KernelStatus(ZX_NO_INFLATE)
    detail = s.msg.decode("utf-8", "replace") if s.msg is not NULL else "invalid data"
    raise KernelStatus(ZX_CORRUPT, s.consumed, s.n, m, detail)


cdef int _check(size_t n, size_t m) except -1:
    if n == 0:
        raise KernelStatus(ZX_EMPTY, m)
    check_ratio(m, n, _MAX_RATIO)
    return 0


cdef int _decode(const uint8_t* sp, size_t n, uint8_t* dp, size_t m, str wrapper,
                 str backend_name) except -1:
    cdef int w = _wrapper(wrapper)
    cdef bint fast = _use_libdeflate(backend_name)
    _check(n, m)
    cdef size_t produced = 0, consumed = 0
    cdef int status
    cdef _Inflate s
    if fast:
        with nogil:
            status = zx_deflate_decompress(w, sp, n, dp, m, &produced, &consumed)
        if status == ZX_DEFLATE_OK:
            if produced != m:
                raise KernelStatus(ZX_SIZE, produced, m)
            return 0
        if status == ZX_DEFLATE_NOMEM:
            raise KernelStatus(ZX_NO_DECOMPRESSOR)
        # Corrupt, excess or trailing data: rerun with zlib, which says precisely what is wrong.
    with nogil:
        status = _inflate_start(&s, w, sp, n, dp, m)
        if status == _DONE:
            status = _inflate_run(&s, True)
            inflateEnd(&s.strm)
    if status == _DONE:
        if s.produced != m:
            raise KernelStatus(ZX_SIZE, s.produced, m)
        return 0
    return _inflate_failed(&s, status, m)


def decompress_into(const uint8_t[::1] src, uint8_t[::1] dst, str wrapper="zlib",
                    str backend="auto"):
    """Inflate ``src`` into ``dst``; the stream(s) must fill it exactly."""
    cdef size_t n = <size_t>src.shape[0], m = <size_t>dst.shape[0]
    _decode(&src[0] if n else _EMPTY, n, &dst[0] if m else _EMPTY, m, wrapper, backend)


def check(const uint8_t[::1] src, expected, str wrapper="zlib"):
    """Everything :func:`decompress` checks of ``src`` inflating to ``expected`` bytes before it
    allocates or inflates anything (:data:`MAX_RATIO`), for a caller that allocates the output
    itself; nothing is allocated."""
    cdef Py_ssize_t m = decoded_size(expected)
    _wrapper(wrapper)
    _check(<size_t>src.shape[0], <size_t>m)


def decompress(const uint8_t[::1] src, expected, str wrapper="zlib",
               str backend="auto"):
    """Inflate ``src`` into a new ``bytes`` of exactly ``expected`` bytes, allocated only once
    :data:`MAX_RATIO` allows that size."""
    cdef Py_ssize_t m = decoded_size(expected)
    _wrapper(wrapper)
    cdef size_t n = <size_t>src.shape[0]
    _check(n, <size_t>m)
    cdef PyObject* out = NULL
    cdef char* dp = new_bytes(&out, m, ZX_NOMEM_DECODED)
    try:
        _decode(&src[0], n, <uint8_t*>dp, <size_t>m, wrapper, backend)
        return finish_bytes(&out, m)
    finally:
        Py_XDECREF(out)


def decompress_bounded(const uint8_t[::1] src, limit, str wrapper="zlib"):
    """Inflate ``src``, whose decoded size is not known in advance, into a new ``bytes`` of at
    most ``limit`` bytes. The output starts small and grows fourfold, never beyond ``limit`` nor
    what ``len(src)`` bytes can decode to (:data:`MAX_RATIO`)."""
    cdef int w = _wrapper(wrapper)
    cdef Py_ssize_t lim = size_limit(limit)
    cdef size_t n = <size_t>src.shape[0]
    if n == 0:
        raise KernelStatus(ZX_EMPTY, None)
    cdef size_t cap = <size_t>lim
    if n <= cap / _MAX_RATIO:
        cap = n * _MAX_RATIO                    # no input decodes to more
    cdef size_t size = n * 4 if n <= cap / 4 else cap
    if size < (1 << 16):
        size = cap if cap < (1 << 16) else (1 << 16)
    cdef PyObject* out = NULL
    cdef char* dp = new_bytes(&out, <Py_ssize_t>size, ZX_NOMEM_DECODED)
    cdef _Inflate s
    cdef int status
    try:
        with nogil:
            status = _inflate_start(&s, w, &src[0], n, <uint8_t*>dp, size)
        if status != _DONE:
            raise KernelStatus(ZX_NO_INFLATE)
        try:
            while True:
                with nogil:
                    status = _inflate_run(&s, size == cap)
                if status != _FULL:
                    break
                size = size * 4 if size <= cap / 4 else cap
                s.dp = <uint8_t*>resize_bytes(&out, <Py_ssize_t>size, ZX_NOMEM_DECODED)
                s.m = size
        finally:
            inflateEnd(&s.strm)
        if status == _EXCESS:
            raise KernelStatus(ZX_LIMIT_EXCEEDED, cap)
        if status != _DONE:
            _inflate_failed(&s, status, None)
        return finish_bytes(&out, <Py_ssize_t>s.produced)
    finally:
        Py_XDECREF(out)


def version() -> str:
    """Version of the zlib zarrx runs against."""
    return zlibVersion().decode("ascii")
