/* CRC-32C for zarrx: SSE4.2 `crc32` instructions chosen at run time, slicing-by-8 otherwise.
 *
 * The raw register update (no pre/post inversion) is linear over GF(2):
 *     raw(s, A || B) = shift_|B|(raw(s, A)) ^ raw(0, B)
 * where shift_n(s) = raw(s, n zero bytes). The hardware path runs three independent streams
 * over adjacent blocks (the instruction has a 3-cycle latency and 1-cycle throughput) and joins
 * them with shift_n, applied through four 256-entry tables built once per block size.
 *
 * All tables are filled once, under pthread_once, before any use. The environment variable
 * ZARRX_CRC32C_BACKEND=table, read at that moment, forces the portable table implementation
 * (to compare the two, or to rule the hardware path out).
 */
#include "zx_crc32c.h"
#include "zx_endian.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define ZX_POLY 0x82F63B78u

#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
#define ZX_HAVE_X86_CRC 1
#include <nmmintrin.h>
#endif

/* Block sizes for the three-stream hardware path; each needs its own shift tables. */
#define ZX_LONG 8192
#define ZX_SHORT 256

static uint32_t zx_table[8][256];      /* slicing-by-8: table[k][b] = crc of b then k zeros */
static uint32_t zx_shift_long[4][256]; /* shift by ZX_LONG zero bytes, one table per byte */
static uint32_t zx_shift_short[4][256];/* shift by ZX_SHORT zero bytes */
static int zx_use_sse42 = 0;
static pthread_once_t zx_once = PTHREAD_ONCE_INIT;

/* raw(s, n zero bytes) using the one-byte table. */
static uint32_t zx_zeros_raw(uint32_t s, size_t n)
{
    while (n--)
        s = (s >> 8) ^ zx_table[0][s & 0xFF];
    return s;
}

static void zx_build_shift(uint32_t out[4][256], size_t nbytes)
{
    uint32_t col[32];
    for (int bit = 0; bit < 32; bit++)
        col[bit] = zx_zeros_raw(1u << bit, nbytes);
    for (int k = 0; k < 4; k++) {
        for (int b = 0; b < 256; b++) {
            uint32_t v = 0;
            for (int j = 0; j < 8; j++)
                if (b & (1 << j))
                    v ^= col[8 * k + j];
            out[k][b] = v;
        }
    }
}

static inline uint32_t zx_shift(uint32_t t[4][256], uint32_t s)
{
    return t[0][s & 0xFF] ^ t[1][(s >> 8) & 0xFF] ^ t[2][(s >> 16) & 0xFF] ^ t[3][s >> 24];
}

static void zx_init(void)
{
    for (uint32_t b = 0; b < 256; b++) {
        uint32_t c = b;
        for (int i = 0; i < 8; i++)
            c = (c & 1) ? (c >> 1) ^ ZX_POLY : c >> 1;
        zx_table[0][b] = c;
    }
    for (int k = 1; k < 8; k++)
        for (int b = 0; b < 256; b++)
            zx_table[k][b] = (zx_table[k - 1][b] >> 8) ^ zx_table[0][zx_table[k - 1][b] & 0xFF];
    zx_build_shift(zx_shift_long, ZX_LONG);
    zx_build_shift(zx_shift_short, ZX_SHORT);
#ifdef ZX_HAVE_X86_CRC
    const char *force = getenv("ZARRX_CRC32C_BACKEND");
    __builtin_cpu_init();
    zx_use_sse42 = __builtin_cpu_supports("sse4.2") ? 1 : 0;
    if (force != NULL && strcmp(force, "table") == 0)
        zx_use_sse42 = 0;
#endif
}

static inline void zx_ready(void)
{
    pthread_once(&zx_once, zx_init);
}

static uint32_t zx_raw_table(uint32_t s, const unsigned char *p, size_t len)
{
    while (len && ((uintptr_t)p & 7)) {
        s = (s >> 8) ^ zx_table[0][(s ^ *p++) & 0xFF];
        len--;
    }
    while (len >= 8) {
        uint64_t w = zx_load_le64(p) ^ s;
        s = zx_table[7][w & 0xFF] ^ zx_table[6][(w >> 8) & 0xFF] ^
            zx_table[5][(w >> 16) & 0xFF] ^ zx_table[4][(w >> 24) & 0xFF] ^
            zx_table[3][(w >> 32) & 0xFF] ^ zx_table[2][(w >> 40) & 0xFF] ^
            zx_table[1][(w >> 48) & 0xFF] ^ zx_table[0][w >> 56];
        p += 8;
        len -= 8;
    }
    while (len--)
        s = (s >> 8) ^ zx_table[0][(s ^ *p++) & 0xFF];
    return s;
}

#ifdef ZX_HAVE_X86_CRC
__attribute__((target("sse4.2")))
static uint32_t zx_raw_sse42(uint32_t s32, const unsigned char *p, size_t len)
{
    uint64_t s = s32;
    while (len && ((uintptr_t)p & 7)) {
        s = _mm_crc32_u8((uint32_t)s, *p++);
        len--;
    }
    /* Three streams over adjacent blocks of ZX_LONG, then of ZX_SHORT bytes. */
    while (len >= 3 * ZX_LONG) {
        uint64_t s1 = 0, s2 = 0;
        const unsigned char *end = p + ZX_LONG;
        do {
            uint64_t w0, w1, w2;
            memcpy(&w0, p, 8);
            memcpy(&w1, p + ZX_LONG, 8);
            memcpy(&w2, p + 2 * ZX_LONG, 8);
            s = _mm_crc32_u64(s, w0);
            s1 = _mm_crc32_u64(s1, w1);
            s2 = _mm_crc32_u64(s2, w2);
            p += 8;
        } while (p < end);
        s = zx_shift(zx_shift_long, (uint32_t)s) ^ s1;
        s = zx_shift(zx_shift_long, (uint32_t)s) ^ s2;
        p += 2 * ZX_LONG;
        len -= 3 * ZX_LONG;
    }
    while (len >= 3 * ZX_SHORT) {
        uint64_t s1 = 0, s2 = 0;
        const unsigned char *end = p + ZX_SHORT;
        do {
            uint64_t w0, w1, w2;
            memcpy(&w0, p, 8);
            memcpy(&w1, p + ZX_SHORT, 8);
            memcpy(&w2, p + 2 * ZX_SHORT, 8);
            s = _mm_crc32_u64(s, w0);
            s1 = _mm_crc32_u64(s1, w1);
            s2 = _mm_crc32_u64(s2, w2);
            p += 8;
        } while (p < end);
        s = zx_shift(zx_shift_short, (uint32_t)s) ^ s1;
        s = zx_shift(zx_shift_short, (uint32_t)s) ^ s2;
        p += 2 * ZX_SHORT;
        len -= 3 * ZX_SHORT;
    }
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        s = _mm_crc32_u64(s, w);
        p += 8;
        len -= 8;
    }
    while (len--)
        s = _mm_crc32_u8((uint32_t)s, *p++);
    return (uint32_t)s;
}
#endif

uint32_t zx_crc32c(uint32_t crc, const void *buf, size_t len)
{
    zx_ready();
#ifdef ZX_HAVE_X86_CRC
    if (zx_use_sse42)
        return ~zx_raw_sse42(~crc, (const unsigned char *)buf, len);
#endif
    return ~zx_raw_table(~crc, (const unsigned char *)buf, len);
}

const char *zx_crc32c_backend(void)
{
    zx_ready();
    return zx_use_sse42 ? "sse4.2" : "table";
}
