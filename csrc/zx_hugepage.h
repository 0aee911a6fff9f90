/* zx_advise_huge: ask for transparent huge pages on the 2 MiB-aligned part of a buffer that
 * nothing has touched yet, so that its first writes fault in 2 MiB at a time instead of 4 KiB.
 * Does nothing where madvise(MADV_HUGEPAGE) is unknown, or when the buffer holds no aligned
 * 2 MiB block. The kernel may ignore the advice (transparent huge pages set to "never"). */
#ifndef ZX_HUGEPAGE_H
#define ZX_HUGEPAGE_H

#include <stddef.h>
#include <stdint.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#define ZX_HUGE ((uintptr_t)2 << 20)

static inline void zx_advise_huge(void *p, size_t n)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    uintptr_t a = ((uintptr_t)p + ZX_HUGE - 1) & ~(ZX_HUGE - 1);
    uintptr_t b = ((uintptr_t)p + n) & ~(ZX_HUGE - 1);
    if (b > a)
        (void)madvise((void *)a, (size_t)(b - a), MADV_HUGEPAGE);
#else
    (void)p;
    (void)n;
#endif
}

#endif
