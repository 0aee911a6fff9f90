# Inline helpers shared by the codec kernels (compiled into each module that cimports them).
#
# Output bytes: an encoder allocates the result ``bytes`` object once at the compressor's bound,
# compresses straight into it and shrinks it to the size written; a decoder allocates it at the
# exact decoded size. A failed allocation becomes a CodecError naming the size.
#
#     cdef PyObject* out = NULL
#     cdef char* dp = new_bytes(&out, cap, "zstd", "the compressed frame")
#     try:
#         ...                                  # write at most cap bytes to dp, GIL released
#         return finish_bytes(&out, written, "zstd")   # hands it over; out becomes NULL
#     finally:
#         Py_XDECREF(out)
#
# Decoded sizes: ``check_ratio`` refuses, before anything is allocated, a decoded size that no
# input of the given length can produce at the format's largest expansion ratio.
from cpython.ref cimport PyObject, Py_DECREF


cdef extern from "Python.h":
    PyObject* _zx_bytes_new "PyBytes_FromStringAndSize"(const char* v, Py_ssize_t n)
    char* _zx_bytes_data "PyBytes_AS_STRING"(PyObject* o)
    int _zx_bytes_resize "_PyBytes_Resize"(PyObject** o, Py_ssize_t n) except -1
    void _zx_err_clear "PyErr_Clear"()


cdef inline char* new_bytes(PyObject** out, Py_ssize_t n, str codec, str what) except NULL:
    """A new ``bytes`` of ``n`` bytes in ``out[0]`` (a reference the caller owns); returns its
    data. A failed allocation raises CodecError naming ``n``."""
    out[0] = _zx_bytes_new(NULL, n)
    if out[0] is NULL:
        _zx_err_clear()
        from zarrx.errors import CodecError
        raise CodecError(f"{codec}: cannot allocate {n} bytes for {what}")
    return _zx_bytes_data(out[0])


cdef inline object finish_bytes(PyObject** out, Py_ssize_t n, str codec):
    """Shrink ``out[0]`` to its first ``n`` bytes (in place when the allocator allows) and hand
    it over as a Python object; ``out[0]`` becomes NULL."""
    try:
        _zx_bytes_resize(out, n)         # on failure: frees the object, sets out[0] to NULL
    except MemoryError:
        from zarrx.errors import CodecError
        raise CodecError(f"{codec}: cannot shrink the output to {n} bytes") from None
    cdef object result = <object>out[0]
    Py_DECREF(result)                    # `result` now holds the one reference
    out[0] = NULL
    return result


cdef inline bint exceeds_ratio(size_t m, size_t n, size_t ratio) noexcept nogil:
    """True when ``m`` decoded bytes are more than ``n`` input bytes can expand to at
    ``ratio``:1 (``m > n * ratio``, without overflow)."""
    return m / ratio + (1 if m % ratio else 0) > n


cdef inline int check_ratio(size_t m, size_t n, size_t ratio, str codec) except -1:
    if exceeds_ratio(m, n, ratio):
        from zarrx.errors import CodecError
        raise CodecError(f"{codec}: {n} bytes of input cannot decode to {m} bytes ({codec} "
                         f"expands at most {ratio}-fold: {(<object>n) * ratio} bytes)")
    return 0
