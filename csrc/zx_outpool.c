/* zx_outpool: see zx_outpool.h. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/ndarraytypes.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zx_outpool.h"

#define ZX_PAGE ((size_t)4096)
#define ZX_SLOTS 512                  /* pooled blocks at most */

#define ZX_MAGIC ((uintptr_t)0x7a78b10c4b5e7d21ULL)

/* The page before a block's data records it; `check` ties the record to the block, so that a
 * header written over (by code writing before an array's data) is caught before its size is
 * trusted, instead of pooling the block with a size it does not have. */
typedef struct {
    size_t pages;    /* of data, after this header page */
    uintptr_t check; /* pages ^ the data's address ^ ZX_MAGIC */
} zx_head;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static char *slot_data[ZX_SLOTS]; /* pooled blocks (their data), oldest freed first */
static size_t slot_pages[ZX_SLOTS];
static size_t nslots = 0;
static size_t cached = 0; /* bytes of data in pooled blocks */
static size_t limit = 0;   /* on the memory pooled blocks hold: data and header pages */
static size_t live = 0;

static void lock_for_fork(void) { pthread_mutex_lock(&mu); }
static void unlock_after_fork(void) { pthread_mutex_unlock(&mu); }
static void register_fork(void)
{
    (void)pthread_atfork(lock_for_fork, unlock_after_fork, unlock_after_fork);
}

static void lock(void)
{
    (void)pthread_once(&once, register_fork);
    pthread_mutex_lock(&mu);
}

static zx_head *head_of(char *data) { return (zx_head *)(data - ZX_PAGE); }

static void release(char *data) { free(data - ZX_PAGE); }

static void set_pages(char *data, size_t pages)
{
    head_of(data)->pages = pages;
    head_of(data)->check = pages ^ (uintptr_t)data ^ ZX_MAGIC;
}

/* the pages of a block handed out; aborts (as the C library does on a corrupted heap) when
 * its header is not intact: going on would pool or copy a size the block does not have */
static size_t pages_of(char *data)
{
    const zx_head *h = head_of(data);
    if ((h->pages ^ (uintptr_t)data ^ ZX_MAGIC) != h->check || h->pages == 0 ||
        h->pages > SIZE_MAX / 2 / ZX_PAGE) {
        fprintf(stderr, "zarrx: the header of read-output block %p was overwritten (memory "
                        "corruption before an array's data); aborting\n", (void *)data);
        abort();
    }
    return h->pages;
}

/* pages for `size` bytes (at least one); 0 when the size cannot be a block */
static size_t pages_for(size_t size)
{
    if (size > (SIZE_MAX / 2))
        return 0;
    return size ? (size + ZX_PAGE - 1) / ZX_PAGE : 1;
}

static void drop_slot(size_t i)
{
    memmove(&slot_data[i], &slot_data[i + 1], (nslots - i - 1) * sizeof(slot_data[0]));
    memmove(&slot_pages[i], &slot_pages[i + 1], (nslots - i - 1) * sizeof(slot_pages[0]));
    nslots--;
}

/* with the lock held: release the oldest blocks until `extra` more bytes fit in the limit
 * (the memory pooled blocks hold counts their header pages) */
static void shrink_to(size_t extra, char **out, size_t *nout)
{
    while (nslots && (cached + nslots * ZX_PAGE + extra > limit || nslots == ZX_SLOTS)) {
        out[(*nout)++] = slot_data[0];
        cached -= slot_pages[0] * ZX_PAGE;
        drop_slot(0);
    }
}

static void *take(size_t size)
{
    size_t n = pages_for(size), best = ZX_SLOTS, i;
    char *data = NULL;
    void *base = NULL;
    if (n == 0)
        return NULL;
    lock();
    for (i = 0; i < nslots; i++) {
        size_t k = slot_pages[i];
        if (k >= n && k - n <= n / 7 && (best == ZX_SLOTS || k < slot_pages[best])) {
            best = i;
            if (k == n)
                break;
        }
    }
    if (best != ZX_SLOTS) {
        data = slot_data[best];
        cached -= slot_pages[best] * ZX_PAGE;
        drop_slot(best);
    }
    live++; /* counted now; taken back below if no memory can be had */
    pthread_mutex_unlock(&mu);
    if (data != NULL)
        return data;
    if (posix_memalign(&base, ZX_PAGE, (n + 1) * ZX_PAGE) != 0) {
        lock();
        live--;
        pthread_mutex_unlock(&mu);
        return NULL;
    }
    data = (char *)base + ZX_PAGE;
    set_pages(data, n);
    return data;
}

static void give_back(char *data)
{
    char *gone[ZX_SLOTS + 1];
    size_t pages = pages_of(data), ngone = 0, i, bytes = pages * ZX_PAGE;
    lock();
    live--;
    if (bytes + ZX_PAGE > limit) { /* with its header page */
        gone[ngone++] = data;
    } else {
        shrink_to(bytes + ZX_PAGE, gone, &ngone);
        slot_data[nslots] = data;
        slot_pages[nslots] = pages;
        nslots++;
        cached += bytes;
    }
    pthread_mutex_unlock(&mu);
    for (i = 0; i < ngone; i++) /* released outside the lock */
        release(gone[i]);
}

static void *h_malloc(void *ctx, size_t size)
{
    (void)ctx;
    return take(size);
}

static void *h_calloc(void *ctx, size_t nelem, size_t elsize)
{
    void *p;
    (void)ctx;
    if (elsize && nelem > SIZE_MAX / elsize)
        return NULL;
    p = take(nelem * elsize);
    if (p != NULL)
        memset(p, 0, nelem * elsize);
    return p;
}

static void h_free(void *ctx, void *ptr, size_t size)
{
    (void)ctx;
    (void)size;
    if (ptr != NULL)
        give_back((char *)ptr);
}

static void *h_realloc(void *ctx, void *ptr, size_t new_size)
{
    size_t have;
    void *p;
    if (ptr == NULL)
        return h_malloc(ctx, new_size);
    have = pages_of((char *)ptr) * ZX_PAGE;
    if (new_size <= have && pages_for(new_size) != 0 && have - new_size <= have / 2)
        return ptr;
    p = take(new_size);
    if (p == NULL)
        return NULL;
    memcpy(p, ptr, new_size < have ? new_size : have);
    give_back((char *)ptr);
    return p;
}

static PyDataMem_Handler handler = {
    "zarrx_outpool",
    1,
    {NULL, h_malloc, h_calloc, h_realloc, h_free},
};

void *zx_outpool_handler(void) { return &handler; }

void zx_outpool_set_limit(size_t new_limit)
{
    char *gone[ZX_SLOTS + 1];
    size_t ngone = 0, i;
    lock();
    limit = new_limit;
    shrink_to(0, gone, &ngone);
    pthread_mutex_unlock(&mu);
    for (i = 0; i < ngone; i++)
        release(gone[i]);
}

size_t zx_outpool_cached(size_t *blocks)
{
    size_t c;
    lock();
    c = cached;
    if (blocks != NULL)
        *blocks = nslots;
    pthread_mutex_unlock(&mu);
    return c;
}

size_t zx_outpool_trim(void)
{
    char *gone[ZX_SLOTS];
    size_t ngone = 0, was, i;
    lock();
    was = cached;
    while (nslots) {
        gone[ngone++] = slot_data[nslots - 1];
        nslots--;
    }
    cached = 0;
    pthread_mutex_unlock(&mu);
    for (i = 0; i < ngone; i++)
        release(gone[i]);
    return was;
}

size_t zx_outpool_live(void)
{
    size_t n;
    lock();
    n = live;
    pthread_mutex_unlock(&mu);
    return n;
}
