# The compression context of zarrx.codecs._zstd, one per thread, shared with the modules that
# compress through it (zarrx.codecs._zstd_many): every call sets its parameters afresh.
from zarrx._clib.zstd cimport ZSTD_CCtx


cdef class _CCtx:
    cdef ZSTD_CCtx* ptr


cdef _CCtx _thread_cctx()
