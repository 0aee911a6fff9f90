# The compression context of zarrx.codecs._zstd, one per thread, shared with the modules that
# compress through it (zarrx.codecs._zstd_many): every call sets its parameters afresh, with
# set_params.
from zarrx._clib.zstd cimport (
    ZSTD_CCtx, ZSTD_CCtx_reset, ZSTD_CCtx_setParameter, ZSTD_c_checksumFlag,
    ZSTD_c_compressionLevel, ZSTD_c_contentSizeFlag, ZSTD_isError,
    ZSTD_reset_session_and_parameters,
)


cdef class _CCtx:
    cdef ZSTD_CCtx* ptr


cdef _CCtx _thread_cctx()


cdef inline size_t set_params(ZSTD_CCtx* cctx, int lvl, bint checksum) noexcept nogil:
    """Reset ``cctx`` to a frame of level ``lvl``, with a content checksum when asked and
    always its content size; a zstd error code when that fails."""
    cdef size_t rc = ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters)
    if not ZSTD_isError(rc):
        rc = ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, lvl)
    if not ZSTD_isError(rc):
        rc = ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1 if checksum else 0)
    if not ZSTD_isError(rc):
        rc = ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1)
    return rc
