# zarrx-libs:
"""Kernels for the vlen-utf8 / vlen-bytes wire format.

Format: uint32 LE item count, then per item a uint32 LE byte length and the bytes. The decoder
checks every length against the bytes that remain before reading them and returns a status
tuple (a tag and numbers, which :mod:`zarrx.codecs.vlen` words as the codec's error) instead
of raising; the encoder raises ``KernelStatus`` likewise.
"""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport uint8_t, uint32_t
from libc.string cimport memcpy

from zarrx._clib.zx_endian cimport zx_load_le32, zx_store_le32
from zarrx.codecs.status import KernelStatus


cdef object _layout(const uint8_t* p, Py_ssize_t n, Py_ssize_t count):
    """None when ``p[:n]`` holds the count ``count`` and every length fits with no trailing
    bytes, else the status tuple of the first thing wrong. Allocates nothing."""
    cdef Py_ssize_t pos = 4, i
    cdef uint32_t ln
    if n < 4:
        return ("header", n)
    ln = zx_load_le32(p)
    if <Py_ssize_t>ln != count:
        return ("count", ln)
    for i in range(count):
        if n - pos < 4:
            return ("length", i, pos)
        ln = zx_load_le32(p + pos)
        pos += 4
        if <Py_ssize_t>ln > n - pos:
            return ("item", i, pos, ln)
        pos += ln
    if pos != n:
        return ("trailing", pos)
    return None


def vlen_check(const uint8_t[::1] src, Py_ssize_t count):
    """The layout check of :func:`vlen_decode` alone, for a chunk of ``count`` items: None, or
    its status tuple. Allocates nothing, so a caller may run it before making the output."""
    return _layout(&src[0] if src.shape[0] else NULL, src.shape[0], count)


def vlen_decode(const uint8_t[::1] src, object[::1] out, bint utf8):
    """Fill ``out`` (one object per item) from ``src``; None on success, else a status tuple:
    ("header", n) | ("count", found) | ("length", i, pos) | ("item", i, pos, length) |
    ("utf8", i, pos, length) | ("trailing", pos).

    The layout (the count, every length, no trailing bytes) is checked in a first pass that
    allocates nothing, so a chunk that does not hold its items costs no item built from it."""
    cdef Py_ssize_t n = src.shape[0], count = out.shape[0], pos = 4, i
    cdef uint32_t ln
    cdef const uint8_t* p = &src[0] if n else NULL
    status = _layout(p, n, count)
    if status is not None:
        return status
    for i in range(count):
        ln = zx_load_le32(p + pos)
        pos += 4
        if utf8:
            try:
                item = PyUnicode_DecodeUTF8(<const char*>(p + pos), ln, NULL)
            except UnicodeDecodeError:
                return ("utf8", i, pos, ln)
        else:
            item = PyBytes_FromStringAndSize(<const char*>(p + pos), ln)
        out[i] = item
        pos += ln
    return None


def vlen_encode(list items):
    """The vlen encoding of ``items`` (a list of ``bytes``); ``KernelStatus("count", count,
    limit)`` or ``KernelStatus("item", i, length, limit)`` beyond the format's 32-bit sizes."""
    cdef Py_ssize_t count = len(items), total = 4, ln, pos = 4, i
    cdef bytes b
    cdef uint8_t* dp
    if count > 0xFFFFFFFF:
        raise KernelStatus("count", count, 0xFFFFFFFF)
    for i in range(count):
        b = <bytes?>items[i]
        ln = PyBytes_GET_SIZE(b)
        if ln > 0xFFFFFFFF:
            raise KernelStatus("item", i, ln, 0xFFFFFFFF)
        total += 4 + ln
    out = PyBytes_FromStringAndSize(NULL, total)
    dp = <uint8_t*>PyBytes_AS_STRING(out)
    zx_store_le32(dp, <uint32_t>count)
    for i in range(count):
        b = <bytes>items[i]
        ln = PyBytes_GET_SIZE(b)
        zx_store_le32(dp + pos, <uint32_t>ln)
        pos += 4
        if ln:
            memcpy(dp + pos, PyBytes_AS_STRING(b), ln)
        pos += ln
    return out
