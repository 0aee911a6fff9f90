/* libdeflate behind a status-code interface; see zx_deflate.h. */
#include "zx_deflate.h"

#ifdef ZARRX_HAVE_DEFLATE
#include <libdeflate.h>

int zx_deflate_available(void) { return 1; }

size_t zx_deflate_bound(size_t n)
{
    /* gzip has the largest wrapper (18 bytes) of the three. */
    return libdeflate_gzip_compress_bound(NULL, n);
}

int zx_deflate_compress(int wrapper, int level, const void *src, size_t n, void *dst,
                        size_t cap, size_t *out_len)
{
    struct libdeflate_compressor *c = libdeflate_alloc_compressor(level);
    size_t got;
    if (c == NULL)
        return ZX_DEFLATE_NOMEM;
    if (wrapper == ZX_WRAP_GZIP)
        got = libdeflate_gzip_compress(c, src, n, dst, cap);
    else if (wrapper == ZX_WRAP_ZLIB)
        got = libdeflate_zlib_compress(c, src, n, dst, cap);
    else
        got = libdeflate_deflate_compress(c, src, n, dst, cap);
    libdeflate_free_compressor(c);
    *out_len = got;
    return got ? ZX_DEFLATE_OK : ZX_DEFLATE_NO_SPACE;
}

static int zx_status(enum libdeflate_result r)
{
    if (r == LIBDEFLATE_INSUFFICIENT_SPACE)
        return ZX_DEFLATE_EXCESS;
    return r == LIBDEFLATE_SUCCESS ? ZX_DEFLATE_OK : ZX_DEFLATE_BAD_DATA;
}

int zx_deflate_decompress(int wrapper, const void *src, size_t n, void *dst, size_t cap,
                          size_t *out_len, size_t *in_used)
{
    const unsigned char *in = (const unsigned char *)src;
    unsigned char *out = (unsigned char *)dst;
    size_t pos = 0, produced = 0, used_in = 0, used_out = 0;
    int status = ZX_DEFLATE_OK;
    struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
    if (d == NULL)
        return ZX_DEFLATE_NOMEM;
    for (;;) {
        enum libdeflate_result r;
        if (wrapper == ZX_WRAP_GZIP)
            r = libdeflate_gzip_decompress_ex(d, in + pos, n - pos, out + produced,
                                              cap - produced, &used_in, &used_out);
        else if (wrapper == ZX_WRAP_ZLIB)
            r = libdeflate_zlib_decompress_ex(d, in + pos, n - pos, out + produced,
                                              cap - produced, &used_in, &used_out);
        else
            r = libdeflate_deflate_decompress_ex(d, in + pos, n - pos, out + produced,
                                                 cap - produced, &used_in, &used_out);
        status = zx_status(r);
        if (status != ZX_DEFLATE_OK)
            break;
        pos += used_in;
        produced += used_out;
        if (pos == n)
            break;
        /* Only gzip may hold several members; anything else after the stream is garbage. */
        if (wrapper != ZX_WRAP_GZIP || n - pos < 2 || in[pos] != 0x1f || in[pos + 1] != 0x8b) {
            status = ZX_DEFLATE_TRAILING;
            break;
        }
    }
    libdeflate_free_decompressor(d);
    *out_len = produced;
    *in_used = pos;
    return status;
}

#else /* !ZARRX_HAVE_DEFLATE: zlib does all the work */

int zx_deflate_available(void) { return 0; }

size_t zx_deflate_bound(size_t n)
{
    (void)n;
    return 0;
}

int zx_deflate_compress(int wrapper, int level, const void *src, size_t n, void *dst,
                        size_t cap, size_t *out_len)
{
    (void)wrapper; (void)level; (void)src; (void)n; (void)dst; (void)cap;
    *out_len = 0;
    return ZX_DEFLATE_UNAVAILABLE;
}

int zx_deflate_decompress(int wrapper, const void *src, size_t n, void *dst, size_t cap,
                          size_t *out_len, size_t *in_used)
{
    (void)wrapper; (void)src; (void)n; (void)dst; (void)cap;
    *out_len = 0;
    *in_used = 0;
    return ZX_DEFLATE_UNAVAILABLE;
}

#endif
