/* zx_outpool: a numpy memory handler (NEP 49) whose freed blocks are kept for reuse.
 *
 * A large array a read returns is allocated through this handler: its data is a block of
 * whole pages taken from a pool of blocks freed before when one of a fitting size is there
 * (n to n + n/7 pages for n pages needed), else fresh memory. Unlike numpy's own allocator,
 * a fresh block does not ask for transparent huge pages: where they are slow to fault in (a
 * virtual machine's first touch of a huge page), the first read into it paid 1.3-5x for
 * them, and a block in reuse is faulted in already either way. When numpy frees the array,
 * the block goes back to the pool; when the pool would then hold more than its limit, the
 * oldest blocks are released to the system first. Reused memory is already faulted in: a
 * read into it copies at memory speed instead of paying one page fault per page of a fresh
 * output.
 *
 * Every function may be called from any thread, with or without the GIL: the pool is guarded
 * by a mutex (taken again in a child process after fork). */
#ifndef ZX_OUTPOOL_H
#define ZX_OUTPOOL_H

#include <stddef.h>

/* the handler: a PyDataMem_Handler (numpy/ndarraytypes.h), to put in a "mem_handler" capsule */
void *zx_outpool_handler(void);
/* the most bytes the pool keeps (data and header pages); blocks over it are released, oldest
 * first */
void zx_outpool_set_limit(size_t limit);
/* bytes held in pooled blocks, and how many blocks */
size_t zx_outpool_cached(size_t *blocks);
/* releases every pooled block; returns the bytes they held */
size_t zx_outpool_trim(void);
/* blocks handed out by the handler that are not freed yet */
size_t zx_outpool_live(void);

#endif
