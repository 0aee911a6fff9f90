/* zx_copy: n-d strided box copies, fills and uniformity checks over raw bytes.
 *
 * Every function trusts its arguments: the caller (zarrx/_gather.pyx) has checked that each
 * element the box touches lies inside both buffers before calling. Strides are in bytes and
 * already include the per-axis step, so they may be negative. None of these functions touches
 * Python objects; they are called with the GIL released.
 */
#ifndef ZX_COPY_H
#define ZX_COPY_H

#include <stddef.h>
#include <stdint.h>

#define ZX_MAX_NDIM 32

/* Copy a box of count[0] x ... x count[ndim-1] items of `itemsize` bytes. `src` and `dst`
 * address the box's first item; the boxes must not overlap. Returns 0, or -1 if ndim is out
 * of range. */
int zx_copy_box(int ndim, const ptrdiff_t *count, size_t itemsize,
                const char *src, const ptrdiff_t *src_strides,
                char *dst, const ptrdiff_t *dst_strides);

/* Set every item of a box to the `itemsize` bytes at `value`. Returns 0, or -1 if ndim is
 * out of range. */
int zx_fill_box(int ndim, const ptrdiff_t *count, size_t itemsize,
                char *dst, const ptrdiff_t *dst_strides, const char *value);

/* 1 if the `nbytes` bytes at `buf` are whole repeats of the `itemsize` bytes at `value`
 * (nbytes a multiple of itemsize, checked by the caller), else 0. An empty buffer is uniform. */
int zx_is_all(const char *buf, size_t nbytes, const char *value, size_t itemsize);

#endif
