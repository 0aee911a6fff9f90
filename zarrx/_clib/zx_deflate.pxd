# Declarations only, mirroring csrc/zx_deflate.h (libdeflate when built with it).
cdef extern from "zx_deflate.h" nogil:
    int ZX_WRAP_RAW
    int ZX_WRAP_ZLIB
    int ZX_WRAP_GZIP
    int ZX_DEFLATE_OK
    int ZX_DEFLATE_UNAVAILABLE
    int ZX_DEFLATE_NOMEM
    int ZX_DEFLATE_BAD_DATA
    int ZX_DEFLATE_EXCESS
    int ZX_DEFLATE_TRAILING
    int ZX_DEFLATE_NO_SPACE

    int zx_deflate_available()
    size_t zx_deflate_bound(size_t n)
    int zx_deflate_compress(int wrapper, int level, const void* src, size_t n, void* dst,
                            size_t cap, size_t* out_len)
    int zx_deflate_decompress(int wrapper, const void* src, size_t n, void* dst, size_t cap,
                              size_t* out_len, size_t* in_used)
