/* Byte shuffle of 4-byte items, AVX2 (see zx_shuffle.h).
 *
 * 32 items (128 bytes) per step: within each 16-byte lane, vpshufb groups the four items'
 * bytes by byte position; vpermd puts the two lanes' groups of one byte position next to each
 * other (8 bytes per position per register); 64-bit unpacks and 128-bit permutes then gather
 * the 32 bytes of each position from the four registers. Items past the last whole step go
 * one by one, and the bytes past the last whole item are copied as they are.
 */
#include "zx_shuffle.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
#define ZX_HAVE_X86_AVX2 1
#include <immintrin.h>
#endif

static int zx_avx2 = 0;
static pthread_once_t zx_once = PTHREAD_ONCE_INIT;

static void zx_init(void)
{
#ifdef ZX_HAVE_X86_AVX2
    const char *force = getenv("ZARRX_SHUFFLE");
    __builtin_cpu_init();
    zx_avx2 = __builtin_cpu_supports("avx2") ? 1 : 0;
    if (force != NULL && strcmp(force, "blosc") == 0)
        zx_avx2 = 0;
#endif
}

int zx_shuffle4_available(void)
{
    pthread_once(&zx_once, zx_init);
    return zx_avx2;
}

/* Items [from, count) of a run, one by one; nonzero when one of them is not `fill`. */
static int zx_shuffle4_tail(const uint8_t *src, size_t from, size_t count, uint8_t *dst,
                            size_t stream, const uint8_t *fill)
{
    int differs = 0;
    for (size_t i = from; i < count; i++) {
        const uint8_t *s = src + 4 * i;
        dst[i] = s[0];
        dst[stream + i] = s[1];
        dst[2 * stream + i] = s[2];
        dst[3 * stream + i] = s[3];
        if (fill != NULL && memcmp(s, fill, 4) != 0)
            differs = 1;
    }
    return differs;
}

#ifdef ZX_HAVE_X86_AVX2
__attribute__((target("avx2")))
static int zx_shuffle4_run_avx2(const uint8_t *src, size_t count, uint8_t *dst, size_t stream,
                                const uint8_t *fill)
{
    size_t i = 0;
    const __m256i group = _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15,
                                           0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    const __m256i pair = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    uint32_t item = 0;
    if (fill != NULL)
        memcpy(&item, fill, 4);
    const __m256i want = _mm256_set1_epi32((int)item);
    __m256i diff = _mm256_setzero_si256();
    for (; i + 32 <= count; i += 32) {
        const uint8_t *s = src + 4 * i;
        __m256i r0 = _mm256_loadu_si256((const __m256i *)s);
        __m256i r1 = _mm256_loadu_si256((const __m256i *)(s + 32));
        __m256i r2 = _mm256_loadu_si256((const __m256i *)(s + 64));
        __m256i r3 = _mm256_loadu_si256((const __m256i *)(s + 96));
        diff = _mm256_or_si256(diff, _mm256_or_si256(
            _mm256_or_si256(_mm256_xor_si256(r0, want), _mm256_xor_si256(r1, want)),
            _mm256_or_si256(_mm256_xor_si256(r2, want), _mm256_xor_si256(r3, want))));
        /* each register: 8 bytes of position 0, then of 1, 2 and 3, for its 8 items */
        r0 = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(r0, group), pair);
        r1 = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(r1, group), pair);
        r2 = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(r2, group), pair);
        r3 = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(r3, group), pair);
        __m256i lo01 = _mm256_unpacklo_epi64(r0, r1);   /* p0 of r0, r1 | p2 of r0, r1 */
        __m256i hi01 = _mm256_unpackhi_epi64(r0, r1);   /* p1 of r0, r1 | p3 of r0, r1 */
        __m256i lo23 = _mm256_unpacklo_epi64(r2, r3);
        __m256i hi23 = _mm256_unpackhi_epi64(r2, r3);
        _mm256_storeu_si256((__m256i *)(dst + i), _mm256_permute2x128_si256(lo01, lo23, 0x20));
        _mm256_storeu_si256((__m256i *)(dst + stream + i),
                            _mm256_permute2x128_si256(hi01, hi23, 0x20));
        _mm256_storeu_si256((__m256i *)(dst + 2 * stream + i),
                            _mm256_permute2x128_si256(lo01, lo23, 0x31));
        _mm256_storeu_si256((__m256i *)(dst + 3 * stream + i),
                            _mm256_permute2x128_si256(hi01, hi23, 0x31));
    }
    int differs = fill != NULL && !_mm256_testz_si256(diff, diff);
    return zx_shuffle4_tail(src, i, count, dst, stream, fill) | differs;
}
#endif

int zx_shuffle4_run(const uint8_t *src, size_t count, uint8_t *dst, size_t stream, size_t at,
                    const uint8_t *fill)
{
#ifdef ZX_HAVE_X86_AVX2
    if (zx_shuffle4_available())
        return zx_shuffle4_run_avx2(src, count, dst + at, stream, fill);
#endif
    return zx_shuffle4_tail(src, 0, count, dst + at, stream, fill);
}

static void zx_shuffle4_block(const uint8_t *src, uint8_t *dst, size_t n)
{
    size_t count = n / 4;
    zx_shuffle4_run(src, count, dst, count, 0, NULL);
    memcpy(dst + 4 * count, src + 4 * count, n - 4 * count);
}

void zx_shuffle4_blocks(const uint8_t *src, uint8_t *dst, size_t n, size_t blocksize)
{
    if (blocksize == 0)
        blocksize = n;
    for (size_t off = 0; off < n; off += blocksize) {
        size_t len = n - off < blocksize ? n - off : blocksize;
        zx_shuffle4_block(src + off, dst + off, len);
    }
}
