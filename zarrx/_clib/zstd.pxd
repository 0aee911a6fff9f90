# Declarations only, mirroring zstd.h (libzstd >= 1.4).
cdef extern from "zstd.h" nogil:
    ctypedef struct ZSTD_CCtx:
        pass
    ctypedef struct ZSTD_DCtx:
        pass

    ctypedef struct ZSTD_inBuffer:
        const void* src
        size_t size
        size_t pos

    ctypedef struct ZSTD_outBuffer:
        void* dst
        size_t size
        size_t pos

    ctypedef enum ZSTD_cParameter:
        ZSTD_c_compressionLevel
        ZSTD_c_checksumFlag
        ZSTD_c_contentSizeFlag

    ctypedef enum ZSTD_ResetDirective:
        ZSTD_reset_session_only
        ZSTD_reset_parameters
        ZSTD_reset_session_and_parameters

    unsigned long long ZSTD_CONTENTSIZE_UNKNOWN
    unsigned long long ZSTD_CONTENTSIZE_ERROR
    int ZSTD_CLEVEL_DEFAULT

    unsigned ZSTD_isError(size_t code)
    const char* ZSTD_getErrorName(size_t code)
    int ZSTD_minCLevel()
    int ZSTD_maxCLevel()
    size_t ZSTD_compressBound(size_t srcSize)

    ZSTD_CCtx* ZSTD_createCCtx()
    size_t ZSTD_freeCCtx(ZSTD_CCtx* cctx)
    size_t ZSTD_CCtx_reset(ZSTD_CCtx* cctx, ZSTD_ResetDirective reset)
    size_t ZSTD_CCtx_setParameter(ZSTD_CCtx* cctx, ZSTD_cParameter param, int value)
    size_t ZSTD_CCtx_setPledgedSrcSize(ZSTD_CCtx* cctx, unsigned long long pledgedSrcSize)
    size_t ZSTD_compress2(ZSTD_CCtx* cctx, void* dst, size_t dstCapacity,
                          const void* src, size_t srcSize)

    ZSTD_DCtx* ZSTD_createDCtx()
    size_t ZSTD_freeDCtx(ZSTD_DCtx* dctx)
    size_t ZSTD_DCtx_reset(ZSTD_DCtx* dctx, ZSTD_ResetDirective reset)
    size_t ZSTD_decompressDCtx(ZSTD_DCtx* dctx, void* dst, size_t dstCapacity,
                               const void* src, size_t srcSize)
    size_t ZSTD_decompressStream(ZSTD_DCtx* zds, ZSTD_outBuffer* output, ZSTD_inBuffer* input)

    unsigned long long ZSTD_getFrameContentSize(const void* src, size_t srcSize)
    size_t ZSTD_findFrameCompressedSize(const void* src, size_t srcSize)
    unsigned ZSTD_isFrame(const void* buffer, size_t size)
    unsigned ZSTD_versionNumber()


cdef extern from "zstd_errors.h" nogil:
    ctypedef enum ZSTD_ErrorCode:
        ZSTD_error_frameParameter_windowTooLarge
        ZSTD_error_dstSize_tooSmall

    ZSTD_ErrorCode ZSTD_getErrorCode(size_t functionResult)
