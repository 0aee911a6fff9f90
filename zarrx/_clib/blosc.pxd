# Declarations only, mirroring blosc.h (c-blosc 1.x >= 1.16). Only the context (_ctx) and
# buffer-inspection functions are declared: zarrx never touches blosc's global state.
cdef extern from "blosc.h" nogil:
    int BLOSC_VERSION_FORMAT
    int BLOSC_MIN_HEADER_LENGTH
    int BLOSC_MAX_OVERHEAD
    int BLOSC_MAX_BUFFERSIZE
    int BLOSC_MAX_TYPESIZE
    int BLOSC_NOSHUFFLE
    int BLOSC_SHUFFLE
    int BLOSC_BITSHUFFLE
    int BLOSC_DOSHUFFLE
    int BLOSC_MEMCPYED
    int BLOSC_DOBITSHUFFLE
    const char* BLOSC_VERSION_STRING

    int blosc_compress_ctx(int clevel, int doshuffle, size_t typesize, size_t nbytes,
                           const void* src, void* dest, size_t destsize,
                           const char* compressor, size_t blocksize, int numinternalthreads)
    int blosc_decompress_ctx(const void* src, void* dest, size_t destsize,
                             int numinternalthreads)
    int blosc_compname_to_compcode(const char* compname)
    void blosc_cbuffer_sizes(const void* cbuffer, size_t* nbytes, size_t* cbytes,
                             size_t* blocksize)
    int blosc_cbuffer_validate(const void* cbuffer, size_t cbytes, size_t* nbytes)
    void blosc_cbuffer_metainfo(const void* cbuffer, size_t* typesize, int* flags)
    void blosc_cbuffer_versions(const void* cbuffer, int* version, int* compversion)
    const char* blosc_cbuffer_complib(const void* cbuffer)
