/* zx_dirlist: see zx_dirlist.h. */
#include "zx_dirlist.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef __linux__
#include <sys/syscall.h>
#endif

#define ZX_LIST_BUF_MAX 32768   /* bytes of entries one getdents64 call may return ... */
#define ZX_LIST_BUF_MIN 4096    /* ... at least (an entry takes up to 280 bytes) */
#define ZX_ENTRY_GUESS 32       /* bytes of a typical entry (a short name): a call's buffer
                                 * holds about as many entries as the listing may take, so the
                                 * kernel does not read far past a folder given up */
#define ZX_SIZE_PER_ENTRY 64    /* a folder's st_size per entry, at most, where it tells (ext4,
                                 * XFS, Btrfs and tmpfs count 12 to 40 bytes per short name) */

#define ZX_SECOND 1000000000LL

static long long zx_min_grain = 0;     /* zx_dirlist_min_grain (atomic: any thread lists) */
static size_t zx_recent = 0;           /* zx_dirlist_recent_count */

long long zx_dirlist_min_grain(long long set)
{
    if (set < 0)
        return __atomic_load_n(&zx_min_grain, __ATOMIC_RELAXED);
    return __atomic_exchange_n(&zx_min_grain, set, __ATOMIC_RELAXED);
}

size_t zx_dirlist_recent_count(void)
{
    return __atomic_load_n(&zx_recent, __ATOMIC_RELAXED);
}

long long zx_stamp_grain(long nsec)
{
    long long g = 1;
    if (nsec <= 0 || nsec >= ZX_SECOND)
        return 2 * ZX_SECOND;
    while (g < ZX_SECOND / 10 && nsec % (g * 10) == 0)
        g *= 10;
    return g;
}

/* Whether the stamp (s, ns) is at or after the moment (ls, lns). */
static int zx_not_before(long long s, long ns, long long ls, long long lns)
{
    return s > ls || (s == ls && ns >= lns);
}

int zx_stamps_recent(long long now_s, long now_ns, long long c_s, long c_ns,
                     long long m_s, long m_ns)
{
    long long grain = zx_dirlist_min_grain(-1), g;
    g = zx_stamp_grain(c_ns);
    if (g > grain)
        grain = g;
    g = zx_stamp_grain(m_ns);
    if (g > grain)
        grain = g;
    /* the limit: now less the granularity, as (seconds, nanoseconds in [0, 1 s)) */
    long long ls = now_s - grain / ZX_SECOND, lns = (long long)now_ns - grain % ZX_SECOND;
    if (lns < 0) {
        lns += ZX_SECOND;
        ls -= 1;
    }
    return zx_not_before(c_s, c_ns, ls, lns) || zx_not_before(m_s, m_ns, ls, lns);
}

void zx_names_init(zx_names *ns)
{
    memset(ns, 0, sizeof *ns);
}

void zx_names_clear(zx_names *ns)
{
    if (ns->slot != NULL && ns->count)
        memset(ns->slot, 0, ns->nslot * sizeof *ns->slot);
    ns->used = 0;
    ns->count = 0;
}

void zx_names_free(zx_names *ns)
{
    free(ns->text);
    free(ns->slot);
    zx_names_init(ns);
}

static uint64_t zx_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL;       /* FNV-1a */
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h ^ (h >> 29);
}

/* Append the name of `n` bytes to the text (not yet hashed). */
static int zx_names_append(zx_names *ns, const char *name, size_t n)
{
    if (n + 1 > ns->room - ns->used) {
        size_t room = ns->room ? 2 * ns->room : 4096;
        while (n + 1 > room - ns->used)
            room *= 2;
        char *text = realloc(ns->text, room);
        if (text == NULL)
            return -1;
        ns->text = text;
        ns->room = room;
    }
    memcpy(ns->text + ns->used, name, n);
    ns->text[ns->used + n] = 0;
    ns->used += n + 1;
    ns->count++;
    return 0;
}

/* Hash every name of the text into a table at least twice as large as the count. */
static int zx_names_index(zx_names *ns)
{
    size_t want = 16;
    while (want < 2 * ns->count)
        want *= 2;
    if (want > ns->nslot) {
        size_t *slot = realloc(ns->slot, want * sizeof *slot);
        if (slot == NULL)
            return -1;
        ns->slot = slot;
        ns->nslot = want;
    }
    memset(ns->slot, 0, ns->nslot * sizeof *ns->slot);
    size_t mask = ns->nslot - 1;
    for (size_t at = 0; at < ns->used;) {
        size_t n = strlen(ns->text + at);
        size_t i = (size_t)zx_hash(ns->text + at, n) & mask;
        while (ns->slot[i])
            i = (i + 1) & mask;
        ns->slot[i] = at + 1;
        at += n + 1;
    }
    return 0;
}

/* Whether the NUL-terminated name `held` is the `n` bytes at `name`; no byte of `held` past
 * its end is read (a name asked for may be longer than any held, and the last name held ends
 * where the text's memory may end). */
static int zx_same_name(const char *held, const char *name, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (held[i] == 0 || held[i] != name[i])
            return 0;
    return held[n] == 0;
}

int zx_names_has(const zx_names *ns, const char *name, size_t n)
{
    if (!ns->count)
        return 0;
    size_t mask = ns->nslot - 1;
    size_t i = (size_t)zx_hash(name, n) & mask;
    while (ns->slot[i]) {
        const char *held = ns->text + ns->slot[i] - 1;
        if (zx_same_name(held, name, n))
            return 1;
        i = (i + 1) & mask;
    }
    return 0;
}

#ifdef __linux__
/* Whether two stats of one directory show it unchanged in between. */
static int zx_same_dir(const struct stat *a, const struct stat *b)
{
    return a->st_ino == b->st_ino && a->st_dev == b->st_dev
        && a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec
        && a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}
#endif

int zx_names_list(zx_names *ns, int dirfd, size_t most)
{
    zx_names_clear(ns);
#ifdef __linux__
    struct stat before, after;
    struct timespec now;
    char *buf;
    size_t size = ZX_LIST_BUF_MAX;
    int res = ZX_NAMES_OK;
    /* the clock file systems stamp changes with, read before the first stat: a change after
     * the stat gets a stamp at or after it (less the granularity; see zx_dirlist.h) */
    if (clock_gettime(CLOCK_REALTIME_COARSE, &now) != 0)
        return ZX_NAMES_FAILED;
    if (fstat(dirfd, &before) != 0)
        return ZX_NAMES_FAILED;
    if (zx_stamps_recent(now.tv_sec, now.tv_nsec, before.st_ctim.tv_sec, before.st_ctim.tv_nsec,
                         before.st_mtim.tv_sec, before.st_mtim.tv_nsec)) {
        __atomic_fetch_add(&zx_recent, 1, __ATOMIC_RELAXED);
        return ZX_NAMES_RECENT;
    }
    /* a folder whose size says it holds more entries than that is not read at all */
    if (before.st_size > 0 && (uint64_t)before.st_size / ZX_SIZE_PER_ENTRY > most)
        return ZX_NAMES_TOO_MANY;
    if (most < ZX_LIST_BUF_MAX / ZX_ENTRY_GUESS)
        size = most * ZX_ENTRY_GUESS < ZX_LIST_BUF_MIN ? ZX_LIST_BUF_MIN : most * ZX_ENTRY_GUESS;
    if (lseek(dirfd, 0, SEEK_SET) < 0)
        return ZX_NAMES_FAILED;
    buf = malloc(size);
    if (buf == NULL)
        return ZX_NAMES_FAILED;
    for (;;) {
        long got = syscall(SYS_getdents64, dirfd, buf, size);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            res = ZX_NAMES_FAILED;
            break;
        }
        if (got == 0)
            break;
        /* struct linux_dirent64: u64 ino, s64 off, u16 reclen, u8 type, name (NUL-ended) */
        for (long at = 0; at < got;) {
            unsigned short reclen;
            memcpy(&reclen, buf + at + 16, sizeof reclen);
            if (reclen < 20 || reclen > got - at) {     /* never from a sane kernel */
                errno = EIO;
                res = ZX_NAMES_FAILED;
                break;
            }
            const char *name = buf + at + 19;
            size_t n = strnlen(name, (size_t)reclen - 19);
            at += reclen;
            if ((n == 1 && name[0] == '.') || (n == 2 && name[0] == '.' && name[1] == '.'))
                continue;
            if (ns->count >= most) {
                res = ZX_NAMES_TOO_MANY;
                break;
            }
            if (zx_names_append(ns, name, n) != 0) {
                res = ZX_NAMES_FAILED;
                break;
            }
        }
        if (res != ZX_NAMES_OK)
            break;
    }
    free(buf);
    if (res == ZX_NAMES_OK && fstat(dirfd, &after) != 0)
        res = ZX_NAMES_FAILED;
    if (res == ZX_NAMES_OK && !zx_same_dir(&before, &after))
        res = ZX_NAMES_CHANGED;
    if (res == ZX_NAMES_OK && zx_names_index(ns) != 0)
        res = ZX_NAMES_FAILED;
    if (res != ZX_NAMES_OK)
        zx_names_clear(ns);
    return res;
#else
    (void)dirfd;
    (void)most;
    errno = ENOSYS;
    return ZX_NAMES_FAILED;
#endif
}
