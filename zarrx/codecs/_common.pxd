# Inline helpers shared by the codec kernels (compiled into each module that cimports them).
#
# Failures: a kernel raises ``KernelStatus(code, *numbers)`` (zarrx.codecs.status) and writes no
# message; the codec module that called it words the message. The codes below are shared by
# every kernel, which exports them under these names (``export_common(globals())``); a kernel's
# own codes start at 16.
#
# Output bytes: an encoder allocates the result ``bytes`` object once at the compressor's bound,
# compresses straight into it and shrinks it to the size written; a decoder allocates it at the
# exact decoded size (or, for a size not known in advance, grows it geometrically up to a limit).
#
#     cdef PyObject* out = NULL
#     cdef char* dp = new_bytes(&out, cap, ZX_NOMEM_ENCODED)
#     try:
#         ...                                  # write at most cap bytes to dp, GIL released
#         return finish_bytes(&out, written)   # hands it over; out becomes NULL
#     finally:
#         Py_XDECREF(out)
#
# Decoded sizes: ``decoded_size`` and ``size_limit`` take the expected size or the limit a caller
# gives (any Python int) as a C size; ``check_ratio`` refuses, before anything is allocated, a
# decoded size that no input of the given length can produce at the format's largest expansion
# ratio.
from cpython.ref cimport PyObject, Py_DECREF


cdef extern from "Python.h":
    PyObject* _zx_bytes_new "PyBytes_FromStringAndSize"(const char* v, Py_ssize_t n)
    char* _zx_bytes_data "PyBytes_AS_STRING"(PyObject* o)
    int _zx_bytes_resize "_PyBytes_Resize"(PyObject** o, Py_ssize_t n) except -1
    void _zx_err_clear "PyErr_Clear"()
    const Py_ssize_t _ZX_SSIZE_MAX "PY_SSIZE_T_MAX"


cdef enum:
    ZX_NOMEM_ENCODED = 1     # (n): the encoded output of n bytes cannot be allocated
    ZX_NOMEM_DECODED = 2     # (n): the decoded output of n bytes cannot be allocated
    ZX_SHRINK = 3            # (n): the output cannot be shrunk to n bytes
    ZX_RATIO = 4             # (n, m, ratio): n input bytes cannot decode to m at ratio:1
    ZX_NEGATIVE_SIZE = 5     # (size): a negative expected decoded size


cdef inline int export_common(dict ns) except -1:
    """Export the shared codes into a kernel module's namespace."""
    ns.update(NOMEM_ENCODED=ZX_NOMEM_ENCODED, NOMEM_DECODED=ZX_NOMEM_DECODED, SHRINK=ZX_SHRINK,
              RATIO=ZX_RATIO, NEGATIVE_SIZE=ZX_NEGATIVE_SIZE)
    return 0


cdef inline object status(int code, tuple values):
    """The ``KernelStatus(code, *values)`` to raise (imported only when something failed)."""
    from zarrx.codecs.status import KernelStatus
    return KernelStatus(code, *values)


cdef inline char* new_bytes(PyObject** out, Py_ssize_t n, int code) except NULL:
    """A new ``bytes`` of ``n`` bytes in ``out[0]`` (a reference the caller owns); returns its
    data. A failed allocation raises ``code`` (ZX_NOMEM_ENCODED or ZX_NOMEM_DECODED) with ``n``."""
    out[0] = _zx_bytes_new(NULL, n)
    if out[0] is NULL:
        _zx_err_clear()
        raise status(code, (n,))
    return _zx_bytes_data(out[0])


cdef inline char* resize_bytes(PyObject** out, Py_ssize_t n, int code) except NULL:
    """Resize ``out[0]`` to ``n`` bytes, keeping its contents; returns its (possibly moved)
    data. On failure ``out[0]`` becomes NULL and ``code`` is raised with ``n``."""
    try:
        _zx_bytes_resize(out, n)         # on failure: frees the object, sets out[0] to NULL
    except MemoryError:
        raise status(code, (n,)) from None
    return _zx_bytes_data(out[0])


cdef inline object finish_bytes(PyObject** out, Py_ssize_t n):
    """Shrink ``out[0]`` to its first ``n`` bytes (in place when the allocator allows) and hand
    it over as a Python object; ``out[0]`` becomes NULL."""
    resize_bytes(out, n, ZX_SHRINK)
    cdef object result = <object>out[0]
    Py_DECREF(result)                    # `result` now holds the one reference
    out[0] = NULL
    return result


cdef inline bint exceeds_ratio(size_t m, size_t n, size_t ratio) noexcept nogil:
    """True when ``m`` decoded bytes are more than ``n`` input bytes can expand to at
    ``ratio``:1 (``m > n * ratio``, without overflow)."""
    return m / ratio + (1 if m % ratio else 0) > n


cdef inline int check_ratio(size_t m, size_t n, size_t ratio) except -1:
    if exceeds_ratio(m, n, ratio):
        raise status(ZX_RATIO, (n, m, ratio))
    return 0


cdef inline Py_ssize_t decoded_size(object n) except -1:
    """An expected decoded size (a Python int) as a C size: ZX_NEGATIVE_SIZE below 0, and
    ZX_NOMEM_DECODED past 2**63 - 1 (no object is that large), not an OverflowError."""
    if n < 0:
        raise status(ZX_NEGATIVE_SIZE, (n,))
    if n > _ZX_SSIZE_MAX:
        raise status(ZX_NOMEM_DECODED, (n,))
    return n


cdef inline Py_ssize_t size_limit(object n) except -1:
    """A limit on a decoded size (a Python int) as a C size: ZX_NEGATIVE_SIZE below 0; past
    2**63 - 1, 2**63 - 1 (nothing decodes to more)."""
    if n < 0:
        raise status(ZX_NEGATIVE_SIZE, (n,))
    return n if n <= _ZX_SSIZE_MAX else _ZX_SSIZE_MAX
