# zarrx-libs: ZLIB DEFLATE
# zarrx-sources: csrc/zx_deflate.c
"""DEFLATE in its three wrappers (zlib, gzip, raw) in and out of caller-sized buffers.

One-shot work goes through libdeflate when zarrx was built with it (see :func:`backend`),
otherwise through zlib; both write standard streams. Decoding fills a destination of the
expected size exactly: a stream that is corrupt, ends early, holds more than that (detected
without writing past the destination) or is followed by garbage raises CodecError. gzip input
may hold several concatenated members. A decoded size no input of that length can reach
(:data:`MAX_RATIO`) is refused before anything is allocated or decoded.
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

from zarrx.codecs._common cimport check_ratio, finish_bytes, new_bytes
from zarrx.errors import CodecError

# DEFLATE's densest code: a length-258, distance-1 match in 2 bits (1-bit literal/length and
# distance codes), so no stream expands more than 1032-fold; the zlib and gzip wrappers only
# add bytes.
cdef size_t _MAX_RATIO = 1032
MAX_RATIO = _MAX_RATIO

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
        raise CodecError(f"zlib: unknown wrapper {wrapper!r}, expected one of 'zlib', 'gzip', "
                         f"'raw'")
    return w


cdef bint _use_libdeflate(str backend_name) except -1:
    b = _BACKENDS.get(backend_name)
    if b is None:
        raise CodecError(f"zlib: unknown backend {backend_name!r}, expected 'auto', 'zlib' or "
                         f"'libdeflate'")
    if b == 2 and not zx_deflate_available():
        raise CodecError("zlib: backend 'libdeflate' requested, but zarrx was built without "
                         "libdeflate")
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


def compress(const uint8_t[::1] src, int level=-1, str wrapper="zlib", str backend="auto"):
    """Compress ``src`` at ``level`` (-1 default, 0 stored .. 9 best) into one stream."""
    cdef int w = _wrapper(wrapper)
    if level < -1 or level > 9:
        raise CodecError(f"zlib: compression level {level} is out of range, expected -1..9")
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
        if deflateInit2(&probe, level, Z_DEFLATED, _wbits(w), 8, Z_DEFAULT_STRATEGY) != Z_OK:
            raise CodecError(f"zlib: cannot set up compression at level {level}")
        cap = deflateBound(&probe, n) + 32
        deflateEnd(&probe)
    cdef PyObject* out = NULL
    cdef uint8_t* buf = <uint8_t*>new_bytes(&out, <Py_ssize_t>cap, wrapper,
                                            "the compressed stream")
    try:
        if fast:
            with nogil:
                rc = zx_deflate_compress(w, 6 if level < 0 else level, sp, n, buf, cap, &got)
            if rc == ZX_DEFLATE_NOMEM:
                raise CodecError(f"{wrapper}: cannot allocate a libdeflate compressor")
            if rc != ZX_DEFLATE_OK:
                raise CodecError(f"zlib: compressing {n} bytes did not fit the {cap}-byte bound")
        else:
            with nogil:
                rc = _deflate_zlib(level, _wbits(w), sp, n, buf, cap, &got)
            if rc != Z_STREAM_END:
                raise CodecError(f"zlib: compressing {n} bytes failed (zlib status {rc})")
        return finish_bytes(&out, <Py_ssize_t>got, wrapper)
    finally:
        Py_XDECREF(out)


# Outcomes of the bounded inflate.
cdef enum:
    _DONE = 0
    _CORRUPT = 1
    _EXCESS = 2
    _TRUNCATED = 3
    _TRAILING = 4
    _NOMEM = 5
    _NEED_DICT = 6


cdef int _inflate_zlib(int w, const uint8_t* sp, size_t n, uint8_t* dp, size_t m,
                       size_t* produced, size_t* consumed, const char** msg) noexcept nogil:
    """Inflate every stream (gzip: member) of src into dst; a 1-byte probe catches excess."""
    cdef z_stream strm
    cdef uint8_t probe[1]
    cdef size_t give_in, give_out
    cdef bint probing
    cdef int rc, status
    memset(&strm, 0, sizeof(strm))
    produced[0] = 0
    consumed[0] = 0
    if inflateInit2(&strm, _wbits(w)) != Z_OK:
        return _NOMEM
    while True:
        give_in = _min(n - consumed[0], _STEP)
        probing = produced[0] == m
        if probing:
            give_out = 1
            strm.next_out = probe
        else:
            give_out = _min(m - produced[0], _STEP)
            strm.next_out = dp + produced[0]
        strm.next_in = <Bytef*>(sp + consumed[0])
        strm.avail_in = <uInt>give_in
        strm.avail_out = <uInt>give_out
        rc = inflate(&strm, Z_NO_FLUSH)
        consumed[0] += give_in - strm.avail_in
        if probing:
            if strm.avail_out == 0:
                status = _EXCESS
                break
        else:
            produced[0] += give_out - strm.avail_out
        if rc == Z_STREAM_END:
            if consumed[0] == n:
                status = _DONE
                break
            if (w == ZX_WRAP_GZIP and n - consumed[0] >= 2 and sp[consumed[0]] == 0x1f
                    and sp[consumed[0] + 1] == 0x8b):
                inflateReset(&strm)      # the next gzip member
                continue
            status = _TRAILING
            break
        if rc == Z_OK:
            continue
        if rc == Z_BUF_ERROR:
            status = _TRUNCATED if consumed[0] == n else _CORRUPT
        elif rc == Z_NEED_DICT:
            status = _NEED_DICT
        elif rc == Z_MEM_ERROR:
            status = _NOMEM
        else:
            status = _CORRUPT
        break
    msg[0] = strm.msg
    inflateEnd(&strm)
    return status


cdef int _check(size_t n, size_t m, str wrapper) except -1:
    if n == 0:
        raise CodecError(f"{wrapper}: empty input, expected a {wrapper} stream decoding to "
                         f"{m} bytes")
    check_ratio(m, n, _MAX_RATIO, wrapper)
    return 0


cdef int _decode(const uint8_t* sp, size_t n, uint8_t* dp, size_t m, str wrapper,
                 str backend_name) except -1:
    cdef int w = _wrapper(wrapper)
    cdef bint fast = _use_libdeflate(backend_name)
    _check(n, m, wrapper)
    cdef size_t produced = 0, consumed = 0
    cdef const char* msg = NULL
    cdef int status
    if fast:
        with nogil:
            status = zx_deflate_decompress(w, sp, n, dp, m, &produced, &consumed)
        if status == ZX_DEFLATE_OK:
            if produced != m:
                raise CodecError(f"{wrapper}: stream decodes to {produced} bytes, expected {m}")
            return 0
        if status == ZX_DEFLATE_NOMEM:
            raise CodecError(f"{wrapper}: cannot allocate a libdeflate decompressor")
        # Corrupt, excess or trailing data: rerun with zlib, which says precisely what is wrong.
    with nogil:
        status = _inflate_zlib(w, sp, n, dp, m, &produced, &consumed, &msg)
    if status == _DONE:
        if produced != m:
            raise CodecError(f"{wrapper}: stream decodes to {produced} bytes, expected {m}")
        return 0
    detail = msg.decode("utf-8", "replace") if msg is not NULL else "invalid data"
    if status == _EXCESS:
        raise CodecError(f"{wrapper}: stream decodes to more than {m} bytes, expected {m}")
    if status == _TRUNCATED:
        raise CodecError(f"{wrapper}: input of {n} bytes ends inside the stream (truncated) "
                         f"after {produced} decoded bytes, expected {m}")
    if status == _TRAILING:
        raise CodecError(f"{wrapper}: trailing garbage: {n - consumed} more bytes after the "
                         f"stream ending at offset {consumed}")
    if status == _NEED_DICT:
        raise CodecError(f"{wrapper}: stream needs a preset dictionary, which zarrx does not "
                         f"support")
    if status == _NOMEM:
        raise CodecError(f"{wrapper}: cannot allocate an inflate state")
    raise CodecError(f"{wrapper}: corrupt stream at input offset {consumed} of {n} "
                     f"({detail}), expected {m} decoded bytes")


def decompress_into(const uint8_t[::1] src, uint8_t[::1] dst, str wrapper="zlib",
                    str backend="auto"):
    """Inflate ``src`` into ``dst``; the stream(s) must fill it exactly."""
    cdef size_t n = <size_t>src.shape[0], m = <size_t>dst.shape[0]
    _decode(&src[0] if n else _EMPTY, n, &dst[0] if m else _EMPTY, m, wrapper, backend)


def decompress(const uint8_t[::1] src, Py_ssize_t expected, str wrapper="zlib",
               str backend="auto"):
    """Inflate ``src`` into a new ``bytes`` of exactly ``expected`` bytes, allocated only once
    :data:`MAX_RATIO` allows that size."""
    if expected < 0:
        raise CodecError(f"{wrapper}: expected decoded size must be >= 0, found {expected}")
    _wrapper(wrapper)
    cdef size_t n = <size_t>src.shape[0]
    _check(n, <size_t>expected, wrapper)
    cdef PyObject* out = NULL
    cdef char* dp = new_bytes(&out, expected, wrapper, "the decoded data")
    try:
        _decode(&src[0], n, <uint8_t*>dp, <size_t>expected, wrapper, backend)
        return finish_bytes(&out, expected, wrapper)
    finally:
        Py_XDECREF(out)


def version() -> str:
    """Version of the zlib zarrx runs against."""
    return zlibVersion().decode("ascii")
