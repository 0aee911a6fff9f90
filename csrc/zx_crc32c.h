/* CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), as used by the Zarr v3 crc32c codec
 * and iSCSI. `crc` is a previous result (0 to start), so calls chain like zlib's crc32(). */
#ifndef ZX_CRC32C_H
#define ZX_CRC32C_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Fastest implementation this CPU supports (SSE4.2 instructions on x86-64, else tables;
 * ZARRX_CRC32C_BACKEND=table in the environment forces the tables). */
uint32_t zx_crc32c(uint32_t crc, const void *buf, size_t len);

/* "sse4.2" or "table": the implementation zx_crc32c() uses on this machine. */
const char *zx_crc32c_backend(void);

#ifdef __cplusplus
}
#endif

#endif /* ZX_CRC32C_H */
