/* zx_dirlist: the names in one open directory, read with getdents64 and looked up by hash.
 *
 * The local-store read kernels use it to learn from one listing which chunk files of a folder
 * exist, instead of one failed open per absent chunk (the rule and its guarantees: the
 * kernels' docstrings and docs/RELIABILITY.md). A listing is taken only whole and only of a
 * folder that did not change while it was read: its ctime and mtime (and inode) are the same
 * before the first getdents64 and after the last, so the names are those of one moment.
 *
 * Equal timestamps prove that only when a change during the listing would have had a later
 * one. A file system stamps a change with the coarse realtime clock (truncated to its
 * granularity; kernels with multigrain timestamps may stamp later, never earlier), so a change
 * made after that clock read `now` gets a stamp at or after `now` less the granularity. A folder
 * whose ctime or mtime is not strictly older than that (it changed within the current tick of
 * the clock, or its stamps lie in the future) is not listed: ZX_NAMES_RECENT, and the caller
 * opens its keys as it does when a listing is given up (the "racy timestamp" rule).
 *
 * None of these functions touches Python objects; they may run without the GIL.
 */
#ifndef ZX_DIRLIST_H
#define ZX_DIRLIST_H

#include <stddef.h>

typedef struct zx_names {
    char *text;         /* the names, each NUL-terminated, back to back */
    size_t used;        /* bytes of text in use */
    size_t room;        /* bytes of text allocated */
    size_t *slot;       /* open addressing: 1 + the offset of a name in text; 0 is free */
    size_t nslot;       /* a power of two, at least twice count (0: no table yet) */
    size_t count;       /* names held */
} zx_names;

enum {
    ZX_NAMES_OK = 0,        /* the names of the folder at one moment */
    ZX_NAMES_TOO_MANY = 1,  /* the folder holds more than `most` entries: nothing kept */
    ZX_NAMES_CHANGED = 2,   /* the folder changed while it was read: nothing kept */
    ZX_NAMES_RECENT = 3,    /* the folder changed too recently for its timestamps to prove
                             * that it did not change while read: not read */
    ZX_NAMES_FAILED = -1    /* a system call or an allocation failed (errno set) */
};

/* An empty set of names (no memory held). */
void zx_names_init(zx_names *ns);

/* Replace the names held by those of the open directory `dirfd` (read from its start; the
 * descriptor's offset is moved), when it holds at most `most` entries besides "." and "..".
 * Returns one of the ZX_NAMES_* codes; on any code but ZX_NAMES_OK no name is held. */
int zx_names_list(zx_names *ns, int dirfd, size_t most);

/* Whether the name of `n` bytes at `name` (no NUL needed) is held. */
int zx_names_has(const zx_names *ns, const char *name, size_t n);

/* The granularity of a file system's timestamps, in nanoseconds, that a stamp's nanoseconds
 * suggest: 2 s for 0 (whole seconds; FAT's mtime steps by 2 s), else the largest power of ten
 * dividing them (a stamp of a file system truncating to 10 ms ends in 7 zeros). */
long long zx_stamp_grain(long nsec);

/* Whether a folder whose ctime and mtime are those given changed too recently, at the clock
 * reading `now`, for its timestamps to show a later change: whether either is not strictly
 * older than `now` less the granularity (the largest of zx_stamp_grain of each stamp and of
 * zx_dirlist_min_grain). */
int zx_stamps_recent(long long now_s, long now_ns, long long c_s, long c_ns,
                     long long m_s, long m_ns);

/* The least granularity assumed for every folder's timestamps, in nanoseconds (0 at start:
 * what the stamps suggest); setting it (>= 0) makes file systems with coarser stamps testable.
 * Each returns the value before. Per extension module that links this file. */
long long zx_dirlist_min_grain(long long set);

/* How many listings were refused as ZX_NAMES_RECENT since the process started. */
size_t zx_dirlist_recent_count(void);

/* Forget the names held (memory is kept for the next listing). */
void zx_names_clear(zx_names *ns);

/* Free the memory held; the set is empty afterwards. */
void zx_names_free(zx_names *ns);

#endif
