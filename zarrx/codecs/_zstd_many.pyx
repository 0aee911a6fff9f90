# zarrx-libs: ZSTD
"""Many zstd frames in one call: the rows of a 2-D buffer (the gathered bytes of many small
chunks) each compressed into a frame of its own, in one GIL-free section, by one compression
context (the calling thread's, shared with :func:`zarrx.codecs._zstd.compress`) whose
parameters are set once. The frames are those :func:`zarrx.codecs._zstd.compress`
makes of each row. Failures raise ``KernelStatus`` with the codes of :mod:`zarrx.codecs._zstd`.
"""
from cpython.ref cimport PyObject, Py_XDECREF
from libc.stdint cimport uint8_t
from libc.stdlib cimport calloc, free

from zarrx._clib.zstd cimport (
    ZSTD_CCtx, ZSTD_CLEVEL_DEFAULT, ZSTD_compress2, ZSTD_compressBound, ZSTD_isError,
    ZSTD_maxCLevel, ZSTD_minCLevel,
)

from zarrx.codecs._common cimport ZX_NOMEM_ENCODED, finish_bytes, new_bytes
from zarrx.codecs._zstd cimport _thread_cctx, set_params
from zarrx.codecs._zstd import COMPRESS_FAILED, LEVEL, TOO_LARGE
from zarrx.codecs.status import KernelStatus

cdef uint8_t _EMPTY[1]


cdef class _Outputs:
    """The output ``bytes`` of one call (references owned until handed over) and the sizes
    written into them."""
    cdef PyObject** objs
    cdef char** data
    cdef size_t* sizes
    cdef Py_ssize_t n

    def __cinit__(self, Py_ssize_t n):
        self.n = n
        self.objs = <PyObject**>calloc(max(n, 1), sizeof(PyObject*))
        self.data = <char**>calloc(max(n, 1), sizeof(char*))
        self.sizes = <size_t*>calloc(max(n, 1), sizeof(size_t))
        if self.objs == NULL or self.data == NULL or self.sizes == NULL:
            raise MemoryError()

    def __dealloc__(self):
        cdef Py_ssize_t i
        if self.objs != NULL:
            for i in range(self.n):
                Py_XDECREF(self.objs[i])
        free(self.objs)
        free(self.data)
        free(self.sizes)


def compress_many(const uint8_t[:, ::1] rows, const uint8_t[::1] skip=None, level=0,
                  bint checksum=False):
    """``[compress(row, level, checksum) for row in rows]``, None for each row whose ``skip``
    byte is not 0; every frame records its content size."""
    cdef int lo = ZSTD_minCLevel(), hi = ZSTD_maxCLevel()
    if level < lo or level > hi:            # any int: checked before it becomes a C int
        raise KernelStatus(LEVEL, level, lo, hi, ZSTD_CLEVEL_DEFAULT)
    cdef int lvl = level
    cdef Py_ssize_t k = rows.shape[0], i
    cdef size_t n = <size_t>rows.shape[1]
    if skip is not None and skip.shape[0] != k:
        raise ValueError(f"compress_many: {skip.shape[0]} skip flags for {k} rows")
    cdef size_t bound = ZSTD_compressBound(n)
    if ZSTD_isError(bound):
        raise KernelStatus(TOO_LARGE, n)
    cdef _Outputs outs = _Outputs(k)
    for i in range(k):
        if skip is None or not skip[i]:
            outs.data[i] = new_bytes(&outs.objs[i], <Py_ssize_t>bound, ZX_NOMEM_ENCODED)
    cdef const uint8_t* sp = &rows[0, 0] if k and n else _EMPTY
    cdef size_t step = n if k and n else 0
    cdef ZSTD_CCtx* cctx = _thread_cctx().ptr
    cdef size_t rc = 0
    with nogil:
        rc = set_params(cctx, lvl, checksum)
        if not ZSTD_isError(rc):
            for i in range(k):
                if outs.data[i] != NULL:
                    rc = ZSTD_compress2(cctx, outs.data[i], bound, sp + <size_t>i * step, n)
                    if ZSTD_isError(rc):
                        break
                    outs.sizes[i] = rc
    if ZSTD_isError(rc):
        raise KernelStatus(COMPRESS_FAILED, n, lvl, rc)
    result = [None] * k
    for i in range(k):
        if outs.objs[i] != NULL:
            result[i] = finish_bytes(&outs.objs[i], <Py_ssize_t>outs.sizes[i])
    return result
