/* zx_copy: n-d strided boxes over raw bytes, walked by one iterator.
 *
 * A box is count[0] x ... x count[ndim-1] items of `itemsize` bytes seen through one or two
 * operands, each with its own byte strides (which already include any per-axis step, so they
 * may be negative, and may be 0 for a broadcast operand). One walker visits the box; the
 * operations differ only in what they do with each innermost run:
 *
 *   zx_copy_box       operand 0 -> operand 1: copy, gather (operand 1 packed), scatter
 *                     (operand 0 packed), fill (operand 0 broadcast: every stride 0)
 *   zx_box_all_equal  is every item of operand 0 equal to one value?
 *   zx_is_all         the same for a packed buffer given by its size
 *
 * Every function trusts its arguments: the caller (zarrx/_gather.pyx) has checked that each
 * item the box touches lies inside its buffer. None of them touches Python objects; they run
 * with the GIL released.
 */
#ifndef ZX_COPY_H
#define ZX_COPY_H

#include <stddef.h>
#include <stdint.h>

#define ZX_MAX_NDIM 64

typedef struct zx_box {
    int ndim;
    size_t itemsize;
    ptrdiff_t count[ZX_MAX_NDIM];
    ptrdiff_t stride[2][ZX_MAX_NDIM]; /* bytes per step of each axis, per operand */
} zx_box;

/* Stride marshalling: set a box's rank, item size and counts (`shape` is numpy's dims). Both
 * operands start packed in C order. Returns 0, or -1 when ndim is outside 0..ZX_MAX_NDIM. */
static inline int zx_box_init(zx_box *b, int ndim, size_t itemsize, const ptrdiff_t *shape)
{
    if (ndim < 0 || ndim > ZX_MAX_NDIM)
        return -1;
    b->ndim = ndim;
    b->itemsize = itemsize;
    ptrdiff_t packed = (ptrdiff_t)itemsize;
    for (int d = ndim - 1; d >= 0; d--) {
        b->count[d] = shape[d];
        b->stride[0][d] = b->stride[1][d] = packed;
        packed *= shape[d];
    }
    return 0;
}

/* Operand k (0 or 1) takes `strides` (numpy's, in bytes) times `step` (NULL: 1 on every axis);
 * `strides` NULL makes it a broadcast operand (every stride 0). */
static inline void zx_box_strides(zx_box *b, int k, const ptrdiff_t *strides,
                                  const ptrdiff_t *step)
{
    for (int d = 0; d < b->ndim; d++)
        b->stride[k][d] = strides == NULL ? 0 : strides[d] * (step == NULL ? 1 : step[d]);
}

/* Byte offset of the item at multi-index `start` for the given strides. */
static inline ptrdiff_t zx_box_offset(int ndim, const ptrdiff_t *strides, const ptrdiff_t *start)
{
    ptrdiff_t off = 0;
    for (int d = 0; d < ndim; d++)
        off += strides[d] * start[d];
    return off;
}

/* Copy every item of operand 0 (`src`, the box's first item) to operand 1 (`dst`). The two
 * must not overlap. Returns 0. */
int zx_copy_box(const zx_box *b, const char *src, char *dst);

/* 1 when every item of operand 0 (`buf`) equals the `itemsize` bytes at `value`, else 0. An
 * empty box is uniform. */
int zx_box_all_equal(const zx_box *b, const char *buf, const char *value);

/* 1 if the `nbytes` bytes at `buf` are whole repeats of the `itemsize` bytes at `value`
 * (nbytes a multiple of itemsize, checked by the caller), else 0. An empty buffer is uniform. */
int zx_is_all(const char *buf, size_t nbytes, const char *value, size_t itemsize);

#endif
