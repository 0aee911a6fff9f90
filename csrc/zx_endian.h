/* Fixed-width integers read from and written to bytes in a stated byte order, at any alignment
 * and on any host byte order. The byte-by-byte forms are recognised by GCC and Clang and
 * compile to one (possibly byte-swapping) load or store.
 *
 * The one place zarrx spells out byte order: the crc32c trailer and the vlen and lz4 headers
 * (little-endian), the shard index (uint64 pairs, little- or big-endian).
 */
#ifndef ZX_ENDIAN_H
#define ZX_ENDIAN_H

#include <stdint.h>

static inline uint32_t zx_load_le32(const void *p)
{
    const unsigned char *b = (const unsigned char *)p;
    return (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) |
           ((uint32_t)b[3] << 24);
}

static inline void zx_store_le32(void *p, uint32_t v)
{
    unsigned char *b = (unsigned char *)p;
    b[0] = (unsigned char)v;
    b[1] = (unsigned char)(v >> 8);
    b[2] = (unsigned char)(v >> 16);
    b[3] = (unsigned char)(v >> 24);
}

static inline uint64_t zx_load_le64(const void *p)
{
    const unsigned char *b = (const unsigned char *)p;
    return (uint64_t)b[0] | ((uint64_t)b[1] << 8) | ((uint64_t)b[2] << 16) |
           ((uint64_t)b[3] << 24) | ((uint64_t)b[4] << 32) | ((uint64_t)b[5] << 40) |
           ((uint64_t)b[6] << 48) | ((uint64_t)b[7] << 56);
}

static inline void zx_store_le64(void *p, uint64_t v)
{
    unsigned char *b = (unsigned char *)p;
    for (int k = 0; k < 8; k++)
        b[k] = (unsigned char)(v >> (8 * k));
}

static inline uint64_t zx_load_be64(const void *p)
{
    const unsigned char *b = (const unsigned char *)p;
    return ((uint64_t)b[0] << 56) | ((uint64_t)b[1] << 48) | ((uint64_t)b[2] << 40) |
           ((uint64_t)b[3] << 32) | ((uint64_t)b[4] << 24) | ((uint64_t)b[5] << 16) |
           ((uint64_t)b[6] << 8) | (uint64_t)b[7];
}

static inline void zx_store_be64(void *p, uint64_t v)
{
    unsigned char *b = (unsigned char *)p;
    for (int k = 0; k < 8; k++)
        b[k] = (unsigned char)(v >> (56 - 8 * k));
}

#endif /* ZX_ENDIAN_H */
