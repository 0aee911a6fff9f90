/* zx_openat2: openat2(2) relative to the working directory (zx_openat2) or to an open
 * directory (zx_openat2_at), as plain functions.
 *
 * The local-store read kernels open every file with RESOLVE_NO_SYMLINKS (and no magic links),
 * so that the kernel refuses any link on the way. Returns the file descriptor, or -1 with
 * errno set (ENOSYS where the kernel has no openat2).
 */
#ifndef ZX_OPENAT2_H
#define ZX_OPENAT2_H

#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

struct zx_open_how { uint64_t flags; uint64_t mode; uint64_t resolve; };

static inline int zx_openat2_at(int dirfd, const char *path, uint64_t flags, uint64_t resolve)
{
    struct zx_open_how how = {flags, 0, resolve};
    return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof how);
}

static inline int zx_openat2(const char *path, uint64_t flags, uint64_t resolve)
{
    return zx_openat2_at(-100 /* AT_FDCWD */, path, flags, resolve);
}

#endif
