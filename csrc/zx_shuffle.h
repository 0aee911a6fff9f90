/* Byte shuffle of 4-byte items with AVX2, for blosc buffers zarrx compresses itself.
 *
 * blosc's byte shuffle of a block of n bytes of `typesize`-byte items stores byte b of item i
 * at b * (n / typesize) + i, and the n % typesize bytes past the last whole item unchanged at
 * the end. zx_shuffle4_blocks does that for every block of `blocksize` bytes of a buffer (the
 * last block may be shorter) with typesize 4, the item size of float32 and int32. It runs only
 * where the CPU has AVX2: zx_shuffle4_available() says whether it does (ZARRX_SHUFFLE=blosc in
 * the environment, read once, makes it say no, leaving the shuffle to blosc).
 *
 * The caller checks that src and dst each hold n bytes and do not overlap; nothing here
 * touches Python objects, so it runs with the GIL released.
 */
#ifndef ZX_SHUFFLE_H
#define ZX_SHUFFLE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

int zx_shuffle4_available(void);
void zx_shuffle4_blocks(const uint8_t *src, uint8_t *dst, size_t n, size_t blocksize);

/* One run of `count` items at src into a block being shuffled whose byte streams are `stream`
 * bytes long, at item `at` of each: byte b of item i goes to dst[b * stream + at + i]. With
 * `fill` (one item's 4 bytes), nonzero when some item of the run is not that item; without,
 * 0. The caller checks that at + count <= stream and dst holds 4 * stream bytes. */
int zx_shuffle4_run(const uint8_t *src, size_t count, uint8_t *dst, size_t stream, size_t at,
                    const uint8_t *fill);

#ifdef __cplusplus
}
#endif

#endif /* ZX_SHUFFLE_H */
