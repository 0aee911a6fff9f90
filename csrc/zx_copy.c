/* n-d strided box copy / fill / uniformity check; see zx_copy.h. */
#include "zx_copy.h"

#include <string.h>

/* Drop axes of length 1 and merge an axis into its inner neighbour when both sides are
 * contiguous across the pair. Writes the reduced geometry into the out arrays, innermost last,
 * and returns the new rank (0 means a single item). `nstr` is the number of stride arrays. */
static int collapse(int ndim, const ptrdiff_t *count, int nstr,
                    const ptrdiff_t *const *strides_in,
                    ptrdiff_t *cnt, ptrdiff_t (*str)[ZX_MAX_NDIM])
{
    int n = 0;
    for (int d = 0; d < ndim; d++) {
        if (count[d] == 1)
            continue;
        if (n > 0) {
            int merge = 1;
            for (int s = 0; s < nstr; s++)
                if (str[s][n - 1] != strides_in[s][d] * count[d]) { merge = 0; break; }
            if (merge) {
                cnt[n - 1] *= count[d];
                for (int s = 0; s < nstr; s++)
                    str[s][n - 1] = strides_in[s][d];
                continue;
            }
        }
        cnt[n] = count[d];
        for (int s = 0; s < nstr; s++)
            str[s][n] = strides_in[s][d];
        n++;
    }
    return n;
}

static void copy_items(char *dst, ptrdiff_t ds, const char *src, ptrdiff_t ss,
                       ptrdiff_t n, size_t itemsize)
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

int zx_copy_box(int ndim, const ptrdiff_t *count, size_t itemsize,
                const char *src, const ptrdiff_t *src_strides,
                char *dst, const ptrdiff_t *dst_strides)
{
    ptrdiff_t cnt[ZX_MAX_NDIM], str[2][ZX_MAX_NDIM], idx[ZX_MAX_NDIM];
    const ptrdiff_t *in[2] = {src_strides, dst_strides};
    if (ndim < 0 || ndim > ZX_MAX_NDIM)
        return -1;
    for (int d = 0; d < ndim; d++)
        if (count[d] <= 0)
            return 0;
    if (itemsize == 0)
        return 0;
    int n = collapse(ndim, count, 2, in, cnt, str);
    if (n == 0) {
        memcpy(dst, src, itemsize);
        return 0;
    }
    /* innermost run: one memcpy when both sides are contiguous along it */
    ptrdiff_t run = cnt[n - 1], ss = str[0][n - 1], ds = str[1][n - 1];
    int contiguous = (ss == (ptrdiff_t)itemsize && ds == (ptrdiff_t)itemsize);
    size_t run_bytes = (size_t)run * itemsize;
    int outer = n - 1;
    for (int d = 0; d < outer; d++)
        idx[d] = 0;
    for (;;) {
        if (contiguous)
            memcpy(dst, src, run_bytes);
        else
            copy_items(dst, ds, src, ss, run, itemsize);
        /* odometer over the outer axes, moving the two pointers incrementally */
        int d = outer - 1;
        for (; d >= 0; d--) {
            src += str[0][d];
            dst += str[1][d];
            if (++idx[d] < cnt[d])
                break;
            src -= str[0][d] * cnt[d];
            dst -= str[1][d] * cnt[d];
            idx[d] = 0;
        }
        if (d < 0)
            break;
    }
    return 0;
}

/* Fill `n` contiguous items by doubling: each memcpy copies what is already written. */
static void fill_run(char *dst, ptrdiff_t n, const char *value, size_t itemsize)
{
    size_t total = (size_t)n * itemsize, done = itemsize;
    memcpy(dst, value, itemsize);
    while (done < total) {
        size_t chunk = done < total - done ? done : total - done;
        memcpy(dst + done, dst, chunk);
        done += chunk;
    }
}

int zx_fill_box(int ndim, const ptrdiff_t *count, size_t itemsize,
                char *dst, const ptrdiff_t *dst_strides, const char *value)
{
    ptrdiff_t cnt[ZX_MAX_NDIM], str[1][ZX_MAX_NDIM], idx[ZX_MAX_NDIM];
    const ptrdiff_t *in[1] = {dst_strides};
    if (ndim < 0 || ndim > ZX_MAX_NDIM)
        return -1;
    for (int d = 0; d < ndim; d++)
        if (count[d] <= 0)
            return 0;
    if (itemsize == 0)
        return 0;
    int n = collapse(ndim, count, 1, in, cnt, str);
    if (n == 0) {
        memcpy(dst, value, itemsize);
        return 0;
    }
    ptrdiff_t run = cnt[n - 1], ds = str[0][n - 1];
    int contiguous = (ds == (ptrdiff_t)itemsize);
    int outer = n - 1;
    for (int d = 0; d < outer; d++)
        idx[d] = 0;
    for (;;) {
        if (contiguous) {
            fill_run(dst, run, value, itemsize);
        } else {
            char *p = dst;
            for (ptrdiff_t i = 0; i < run; i++, p += ds)
                memcpy(p, value, itemsize);
        }
        int d = outer - 1;
        for (; d >= 0; d--) {
            dst += str[0][d];
            if (++idx[d] < cnt[d])
                break;
            dst -= str[0][d] * cnt[d];
            idx[d] = 0;
        }
        if (d < 0)
            break;
    }
    return 0;
}

int zx_is_all(const char *buf, size_t nbytes, const char *value, size_t itemsize)
{
    if (nbytes == 0)
        return 1;
    if (itemsize == 0 || nbytes < itemsize)
        return 0;
    if (memcmp(buf, value, itemsize) != 0)
        return 0;
    /* buf is periodic with period itemsize iff it equals itself shifted by one item */
    return memcmp(buf, buf + itemsize, nbytes - itemsize) == 0;
}
