/* One-shot DEFLATE (raw, zlib, gzip) through libdeflate when zarrx was built with it
 * (ZARRX_HAVE_DEFLATE); otherwise every call reports ZX_DEFLATE_UNAVAILABLE and the caller
 * uses zlib. Output is standard raw DEFLATE / zlib / gzip. */
#ifndef ZX_DEFLATE_H
#define ZX_DEFLATE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum zx_deflate_wrapper { ZX_WRAP_RAW = 0, ZX_WRAP_ZLIB = 1, ZX_WRAP_GZIP = 2 };

enum zx_deflate_status {
    ZX_DEFLATE_OK = 0,
    ZX_DEFLATE_UNAVAILABLE = 1, /* built without libdeflate */
    ZX_DEFLATE_NOMEM = 2,       /* could not allocate a (de)compressor */
    ZX_DEFLATE_BAD_DATA = 3,    /* corrupt or truncated stream */
    ZX_DEFLATE_EXCESS = 4,      /* the stream holds more than the output capacity */
    ZX_DEFLATE_TRAILING = 5,    /* bytes after the (last) stream that are not another member */
    ZX_DEFLATE_NO_SPACE = 6     /* compressed output did not fit */
};

/* 1 when libdeflate is compiled in. */
int zx_deflate_available(void);

/* Upper bound of the compressed size of n bytes for any level and wrapper (0 if unavailable). */
size_t zx_deflate_bound(size_t n);

/* Compress src into dst (capacity cap) at level 0..12; *out_len receives the size. */
int zx_deflate_compress(int wrapper, int level, const void *src, size_t n, void *dst,
                        size_t cap, size_t *out_len);

/* Decompress every stream (every gzip member) in src into dst of capacity cap.
 * *out_len receives the decoded size; *in_used how much input was consumed. */
int zx_deflate_decompress(int wrapper, const void *src, size_t n, void *dst, size_t cap,
                          size_t *out_len, size_t *in_used);

#ifdef __cplusplus
}
#endif

#endif /* ZX_DEFLATE_H */
