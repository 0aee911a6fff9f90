/* n-d strided boxes: one walker, and what copy and compare do with each run; see zx_copy.h. */
#include "zx_copy.h"

#include <string.h>

struct zx_op {
    size_t itemsize;
    const char *value; /* compare: the item every item must equal */
};

/* What an operation does with one innermost run of `n` items: operand a at stride sa, operand
 * b at stride sb. A non-zero return stops the walk and is returned by it. */
typedef int (*zx_run_fn)(const char *a, ptrdiff_t sa, char *b, ptrdiff_t sb, ptrdiff_t n,
                         const struct zx_op *op);

/* Drop axes of length 1 and merge an axis into its inner neighbour when every operand is
 * contiguous across the pair. Writes the reduced geometry (innermost last) and returns the new
 * rank (0 means a single item). */
static int collapse(const zx_box *box, int nops, ptrdiff_t *cnt, ptrdiff_t (*str)[ZX_MAX_NDIM])
{
    int n = 0;
    for (int d = 0; d < box->ndim; d++) {
        ptrdiff_t c = box->count[d];
        if (c == 1)
            continue;
        if (n > 0) {
            int merge = 1;
            for (int s = 0; s < nops; s++)
                if (str[s][n - 1] != box->stride[s][d] * c) { merge = 0; break; }
            if (merge) {
                cnt[n - 1] *= c;
                for (int s = 0; s < nops; s++)
                    str[s][n - 1] = box->stride[s][d];
                continue;
            }
        }
        cnt[n] = c;
        for (int s = 0; s < 2; s++)
            str[s][n] = s < nops ? box->stride[s][d] : 0;
        n++;
    }
    return n;
}

/* The walker: calls `run` once per innermost run of the (collapsed) box, moving the operand
 * pointers incrementally with an odometer over the outer axes. With one operand, `b` is `a`
 * and never moves. */
static inline int walk(const zx_box *box, int nops, const char *a, char *b, zx_run_fn run,
                       const struct zx_op *op)
{
    ptrdiff_t cnt[ZX_MAX_NDIM], str[2][ZX_MAX_NDIM], idx[ZX_MAX_NDIM];
    for (int d = 0; d < box->ndim; d++)
        if (box->count[d] <= 0)
            return 0;
    if (box->itemsize == 0)
        return 0;
    int n = collapse(box, nops, cnt, str);
    ptrdiff_t isz = (ptrdiff_t)box->itemsize;
    if (n == 0)
        return run(a, isz, b, isz, 1, op);
    ptrdiff_t len = cnt[n - 1], sa = str[0][n - 1], sb = str[1][n - 1];
    int outer = n - 1;
    for (int d = 0; d < outer; d++)
        idx[d] = 0;
    for (;;) {
        int r = run(a, sa, b, sb, len, op);
        if (r)
            return r;
        int d = outer - 1;
        for (; d >= 0; d--) {
            a += str[0][d];
            b += str[1][d];
            if (++idx[d] < cnt[d])
                break;
            a -= str[0][d] * cnt[d];
            b -= str[1][d] * cnt[d];
            idx[d] = 0;
        }
        if (d < 0)
            return 0;
    }
}

/* -- copy ------------------------------------------------------------------------------------ */

static void copy_items(char *dst, ptrdiff_t ds, const char *src, ptrdiff_t ss, ptrdiff_t n,
                       size_t itemsize)
{
    /* fixed-size memcpy calls compile to single moves */
    switch (itemsize) {
    case 1: for (ptrdiff_t i = 0; i < n; i++, dst += ds, src += ss) memcpy(dst, src, 1); break;
    case 2: for (ptrdiff_t i = 0; i < n; i++, dst += ds, src += ss) memcpy(dst, src, 2); break;
    case 4: for (ptrdiff_t i = 0; i < n; i++, dst += ds, src += ss) memcpy(dst, src, 4); break;
    case 8: for (ptrdiff_t i = 0; i < n; i++, dst += ds, src += ss) memcpy(dst, src, 8); break;
    case 16: for (ptrdiff_t i = 0; i < n; i++, dst += ds, src += ss) memcpy(dst, src, 16); break;
    default: for (ptrdiff_t i = 0; i < n; i++, dst += ds, src += ss) memcpy(dst, src, itemsize);
    }
}

/* Bytes of a fill's first block (whole items), made by doubling and then copied along. */
#define ZX_FILL_BLOCK 16384

/* Fill `n` contiguous items: the first block (at most ZX_FILL_BLOCK bytes) by doubling, each
 * memcpy copying what is already written; the rest by copies of that block, which stays in
 * cache, so a large run is written without being read back (doubling all the way read half of
 * a 512 MiB run back from memory: 2-3 times slower than numpy's fill of float32). */
static void fill_run(char *dst, ptrdiff_t n, const char *value, size_t itemsize)
{
    size_t total = (size_t)n * itemsize, done = itemsize;
    size_t block = total;
    if (block > ZX_FILL_BLOCK)
        block = itemsize > ZX_FILL_BLOCK ? itemsize : ZX_FILL_BLOCK - ZX_FILL_BLOCK % itemsize;
    memcpy(dst, value, itemsize);
    while (done < block) {
        size_t part = done < block - done ? done : block - done;
        memcpy(dst + done, dst, part);
        done += part;
    }
    while (done < total) {
        size_t part = block < total - done ? block : total - done;
        memcpy(dst + done, dst, part);
        done += part;
    }
}

static int copy_run(const char *src, ptrdiff_t ss, char *dst, ptrdiff_t ds, ptrdiff_t n,
                    const struct zx_op *op)
{
    ptrdiff_t isz = (ptrdiff_t)op->itemsize;
    if (ds == isz && ss == isz)
        memcpy(dst, src, (size_t)n * op->itemsize);
    else if (ds == isz && ss == 0)
        fill_run(dst, n, src, op->itemsize);
    else
        copy_items(dst, ds, src, ss, n, op->itemsize);
    return 0;
}

int zx_copy_box(const zx_box *b, const char *src, char *dst)
{
    struct zx_op op = {b->itemsize, NULL};
    return walk(b, 2, src, dst, copy_run, &op);
}

/* -- compare --------------------------------------------------------------------------------- */

static int differ_run(const char *buf, ptrdiff_t s, char *unused, ptrdiff_t s_unused,
                      ptrdiff_t n, const struct zx_op *op)
{
    size_t isz = op->itemsize;
    (void)unused;
    (void)s_unused;
    if (memcmp(buf, op->value, isz) != 0)
        return 1;
    if (s == (ptrdiff_t)isz) {
        /* a contiguous run is uniform iff it equals itself shifted by one item */
        return n > 1 && memcmp(buf, buf + isz, (size_t)(n - 1) * isz) != 0;
    }
    if (s == 0)
        return 0;
    for (ptrdiff_t i = 1; i < n; i++)
        if (memcmp(buf + i * s, op->value, isz) != 0)
            return 1;
    return 0;
}

int zx_box_all_equal(const zx_box *b, const char *buf, const char *value)
{
    struct zx_op op = {b->itemsize, value};
    return walk(b, 1, buf, (char *)buf, differ_run, &op) == 0;
}

int zx_is_all(const char *buf, size_t nbytes, const char *value, size_t itemsize)
{
    zx_box b;
    ptrdiff_t n;
    if (nbytes == 0)
        return 1;
    if (itemsize == 0 || nbytes < itemsize)
        return 0;
    n = (ptrdiff_t)(nbytes / itemsize);
    zx_box_init(&b, 1, itemsize, &n);
    return zx_box_all_equal(&b, buf, value);
}
