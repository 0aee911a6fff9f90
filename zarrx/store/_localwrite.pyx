"""Whole-file writes of keys below a :class:`~zarrx.store.local.LocalStore` root, without
the GIL: ``openat2`` of the key's directory (``RESOLVE_NO_SYMLINKS``, as every local-store
open), then the data in a file of its own, a nanosecond mtime stamp and an optional ``fsync``,
before the file gets the key's name:

- **an unnamed file** (``O_TMPFILE``) where the file system makes them, linked in with
  ``linkat``, which fails when the name exists. A new key is then written with one change to
  the directory, and a writer killed before the link leaves nothing behind;
- else **a temporary file** (``O_CREAT | O_EXCL | O_NOFOLLOW``, named as
  :func:`zarrx.store.localfs.temp_name` names them) renamed with
  ``renameat2(RENAME_NOREPLACE)``;
- **a key that exists** is replaced by a ``renameat`` of a temporary file (an unnamed one gets
  a temporary name first) while holding an exclusive ``flock`` on the file it replaces, as
  conditional writers do, so that a concurrent read-modify-write never writes back over it.
  Something other than a regular file there (a named pipe, a device, a directory) is never
  replaced: the call fails, and the Python path words the refusal.

Then an optional ``fsync`` of the directory. Nothing is visible at the key until the link or
the rename. ``linkat`` names an unnamed file by its descriptor (``AT_EMPTY_PATH``: Linux 6.10
and later allow it for a file the process opened itself, earlier ones only with
``CAP_DAC_READ_SEARCH``), else by its ``/proc/thread-self/fd`` path (the calling thread's
table of descriptors: ``/proc/self`` shows the main thread's, another file where a thread has
a table of its own); a process where neither works writes temporary files.

:func:`put` is the fast path of :meth:`LocalStore.set`. A key it is not sure about (see
:func:`zarrx.store._localread.plain_key`) is not attempted, and any failing system call (a
missing directory, a link, a full disk, ...) removes the temporary file and reports the errno:
the caller then takes the Python path, which makes directories, validates the key fully and
words the error. The box writer (:mod:`zarrx.store._localboxwrite`) writes chunks through
:func:`_commit`.
"""
from libc.stdint cimport uint64_t, int64_t
from libc.string cimport memcpy
from libc.errno cimport errno, EEXIST, EINTR, EINVAL, ENOENT, EAGAIN, ENOSYS, EPERM
from libc.stdio cimport snprintf
from posix.unistd cimport close, write, fsync, getpid
from posix.fcntl cimport openat, O_WRONLY, O_CREAT, O_EXCL, O_RDONLY
from posix.stat cimport S_ISREG, futimens, fstat, fstatat, struct_stat
from posix.time cimport timespec, clock_gettime, CLOCK_REALTIME
from cpython.bytes cimport PyBytes_AS_STRING

from zarrx._clib.zx_openat2 cimport zx_openat2
from zarrx.store._localread cimport _plain_key

cdef extern from "<fcntl.h>" nogil:
    int O_DIRECTORY, O_NOFOLLOW, O_CLOEXEC

cdef extern from "<stdio.h>" nogil:
    int renameat(int olddirfd, const char* oldpath, int newdirfd, const char* newpath)
    int renameat2(int olddirfd, const char* oldpath, int newdirfd, const char* newpath,
                  unsigned int flags)

cdef extern from "<sys/stat.h>" nogil:
    int utimensat(int dirfd, const char* path, const timespec* times, int flags)

cdef extern from "<unistd.h>" nogil:
    int unlinkat(int dirfd, const char* path, int flags)
    int linkat(int olddirfd, const char* oldpath, int newdirfd, const char* newpath, int flags)

cdef extern from "<fcntl.h>" nogil:
    int O_TMPFILE, AT_EMPTY_PATH, AT_SYMLINK_FOLLOW, AT_FDCWD

cdef extern from "<sys/file.h>" nogil:
    int flock(int fd, int op)
    int LOCK_EX, LOCK_UN

cdef extern from "<sys/vfs.h>" nogil:
    struct statfs_t "statfs":
        long f_type
    int statfs(const char* path, statfs_t* buf)

cdef extern from "<fcntl.h>" nogil:
    int O_NONBLOCK, AT_SYMLINK_NOFOLLOW

cdef extern from "<sys/random.h>" nogil:
    ssize_t getrandom(void* buf, size_t n, unsigned int flags)

cdef enum:
    PATH_MAX = 4096
    DIGITS = 20              # an int64 in decimal
    ZX_RENAME_NOREPLACE = 1  # renameat2: fail with EEXIST when the new name exists
    NAME_CUT = 100           # temporary names keep this many bytes of the key's name
    TMP_MAX = 160
    TRIES = 8                # fresh temporary names tried when one exists already
cdef const char* MARK = b".zarrx-tmp-"
cdef const char* HEX = b"0123456789abcdef"


cdef Py_ssize_t _temp_name(char* out, const char* name, Py_ssize_t n, long pid) noexcept nogil:
    """``.<name cut to NAME_CUT bytes>.zarrx-tmp-<pid>-<16 random hex digits>`` into ``out``
    (TMP_MAX bytes), NUL-terminated; its length, or -1 without random bytes."""
    cdef Py_ssize_t i, pos = 0, cut = n if n < NAME_CUT else NAME_CUT
    cdef unsigned char rnd[8]
    cdef char digits[24]
    cdef int nd = 0
    if getrandom(rnd, 8, 0) != 8:
        return -1
    out[pos] = 46
    pos += 1
    memcpy(out + pos, name, cut)
    pos += cut
    memcpy(out + pos, MARK, 11)
    pos += 11
    if pid <= 0:
        digits[nd] = 48
        nd += 1
    while pid > 0:
        digits[nd] = <char>(48 + pid % 10)
        pid //= 10
        nd += 1
    for i in range(nd):
        out[pos + i] = digits[nd - 1 - i]
    pos += nd
    out[pos] = 45
    pos += 1
    for i in range(8):
        out[pos] = HEX[rnd[i] >> 4]
        out[pos + 1] = HEX[rnd[i] & 15]
        pos += 2
    out[pos] = 0
    return pos


# Bytes per ``write`` call. A large file written by one call leaves its pages in the page cache
# in large folios, and the next large allocation of huge pages in the process (numpy's output
# of a read, say) then waits for the kernel to compact memory: 0.5-0.9 GB/s instead of 8-10 GB/s
# right after writing 1 GiB in 4 MiB files on Linux 6.18/ext4 (docs/performance.md). Pieces of
# 1 MiB cost nothing measurable and avoid it.
cdef enum:
    WRITE_PIECE = 1 << 20


cdef int _write_all(int fd, const unsigned char* p, Py_ssize_t n) noexcept nogil:
    """0, or the errno of the failing ``write``."""
    cdef Py_ssize_t done = 0, got, step
    while done < n:
        step = n - done if n - done < WRITE_PIECE else WRITE_PIECE
        got = write(fd, p + done, <size_t>step)
        if got < 0:
            if errno == EINTR:
                continue
            return errno
        if got == 0:
            return EINVAL
        done += got
    return 0


cdef int _fill(int fd, const unsigned char* data, Py_ssize_t size, bint sync, int64_t after,
               int64_t* stamped) noexcept nogil:
    """Write ``data`` into the new file ``fd``, stamp it later than ``after`` (the stamp into
    ``stamped``) and, with ``sync``, ``fsync`` it: 0, or an errno."""
    cdef timespec now
    cdef timespec stamp[2]
    cdef int64_t ns
    cdef int err = _write_all(fd, data, size)
    if err != 0:
        return err
    clock_gettime(CLOCK_REALTIME, &now)
    ns = <int64_t>now.tv_sec * 1000000000 + now.tv_nsec
    if ns <= after:
        ns = after + 1
    stamped[0] = ns
    stamp[0].tv_sec = ns // 1000000000
    stamp[0].tv_nsec = ns % 1000000000
    stamp[1] = stamp[0]
    futimens(fd, stamp)                  # a file system without it keeps its own stamp
    if sync and fsync(fd) != 0:
        return errno
    return 0


cdef int _stage(int dfd, char* tmp, const char* name, Py_ssize_t name_len,
                const unsigned char* data, Py_ssize_t size, bint sync, int64_t after,
                int64_t* stamped) noexcept nogil:
    """A new temporary file in ``dfd`` for ``name`` (its name into ``tmp``) holding ``data``,
    stamped later than ``after`` (the stamp into ``stamped``): 0, or an errno with nothing
    left behind."""
    cdef int fd = -1, err = 0, tries
    cdef long pid = getpid()
    for tries in range(TRIES):
        if _temp_name(tmp, name, name_len, pid) < 0:
            err = errno
            break
        fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o666)
        if fd >= 0 or errno != EEXIST:
            break
    if fd < 0:
        return err or errno
    err = _fill(fd, data, size, sync, after, stamped)
    if close(fd) != 0 and err == 0:
        err = errno
    if err != 0:
        unlinkat(dfd, tmp, 0)
    return err


# How an unnamed file gets its name: by its descriptor (``AT_EMPTY_PATH``), by its
# /proc/thread-self/fd path, or not at all (temporary files only). A way is given up only when
# the next one then works in the same directory.
cdef enum:
    LINK_BY_FD = 0
    LINK_BY_PROC = 1
    LINK_NONE = 2
cdef int _link_how = LINK_BY_FD
cdef const char* LINK_NAMES[3]
LINK_NAMES[:] = [b"fd", b"proc", b"none"]


cdef int _link(int fd, int dfd, const char* name) noexcept nogil:
    """Link the unnamed file ``fd`` in as ``name`` in ``dfd``: 0, or an errno (EEXIST: the
    name is taken)."""
    global _link_how
    cdef char proc[48]
    cdef int err
    if _link_how == LINK_BY_FD:
        if linkat(fd, b"", dfd, name, AT_EMPTY_PATH) == 0:
            return 0
        err = errno
        if err != ENOENT and err != EPERM:
            return err
    snprintf(proc, sizeof(proc), b"/proc/thread-self/fd/%d", fd)
    if linkat(AT_FDCWD, proc, dfd, name, AT_SYMLINK_FOLLOW) != 0:
        return errno
    if _link_how == LINK_BY_FD:
        _link_how = LINK_BY_PROC
    return 0


cdef int _link_temp(int fd, int dfd, char* tmp, const char* name,
                    Py_ssize_t name_len) noexcept nogil:
    """Give the unnamed file ``fd`` a temporary name for ``name`` (into ``tmp``): 0, or an
    errno."""
    cdef int err = EEXIST, tries
    cdef long pid = getpid()
    for tries in range(TRIES):
        if _temp_name(tmp, name, name_len, pid) < 0:
            return errno
        err = _link(fd, dfd, tmp)
        if err != EEXIST:
            break
    return err


cdef inline int _sync_dir(int dfd, bint sync) noexcept nogil:
    if sync and fsync(dfd) != 0:
        return errno
    return 0


cdef int _swap(int dfd, const char* tmp, const char* name, int64_t stamped,
               bint sync) noexcept nogil:
    """Rename the temporary file ``tmp`` over ``name`` under the lock (see
    :func:`_locked_rename`): 0, or an errno with ``tmp`` removed."""
    cdef int err = _locked_rename(dfd, tmp, name, stamped)
    if err != 0:
        unlinkat(dfd, tmp, 0)
        return err
    return _sync_dir(dfd, sync)


cdef int _commit(int dfd, const char* name, Py_ssize_t name_len, const unsigned char* data,
                 Py_ssize_t size, bint sync, int64_t after, bint lock_always) noexcept nogil:
    """Write ``data`` as ``name`` in the directory ``dfd``, stamped later than ``after``, as
    the module's docstring describes: 0, or an errno with nothing left behind. Where
    ``RENAME_NOREPLACE`` is not supported (EINVAL, ENOSYS), a temporary file replaces the key
    under the lock with ``lock_always``, else the errno goes back (the caller's Python path
    orders itself the same way). So does a lock that cannot be taken."""
    global _link_how
    cdef char tmp[TMP_MAX]
    cdef int64_t stamped = 0
    cdef int fd = -1, err, link_err = 0
    if _link_how != LINK_NONE:
        fd = openat(dfd, b".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0o666)
    if fd >= 0:                          # else no unnamed files here: a temporary file
        err = _fill(fd, data, size, sync, after, &stamped)
        if err == 0:
            err = _link(fd, dfd, name)
            if err == EEXIST:            # the key exists: name the file, replace under lock
                err = _link_temp(fd, dfd, tmp, name, name_len)
                close(fd)
                if err == 0:
                    return _swap(dfd, tmp, name, stamped, sync)
            else:
                close(fd)
                if err == 0:
                    return _sync_dir(dfd, sync)
        else:
            close(fd)                    # the write failed: the file goes with its descriptor
            return err
        link_err = err
    err = _stage(dfd, tmp, name, name_len, data, size, sync, after, &stamped)
    if err != 0:
        return err
    if link_err == ENOENT or link_err == EPERM:
        _link_how = LINK_NONE            # no way to link unnamed files where names work
    if renameat2(dfd, tmp, dfd, name, ZX_RENAME_NOREPLACE) != 0:
        err = errno
        if err == EEXIST or (lock_always and (err == EINVAL or err == ENOSYS)):
            return _swap(dfd, tmp, name, stamped, sync)
        unlinkat(dfd, tmp, 0)
        return err
    return _sync_dir(dfd, sync)


cdef int _put(const char* dirpath, const char* name, Py_ssize_t name_len,
              const unsigned char* data, Py_ssize_t size, uint64_t resolve, bint sync,
              int64_t after) noexcept nogil:
    """Write ``data`` as ``<dirpath>/<name>`` (see :func:`_commit`): 0, or an errno."""
    cdef int dfd, err
    dfd = zx_openat2(dirpath, O_RDONLY | O_DIRECTORY | O_CLOEXEC, resolve)
    if dfd < 0:
        return errno
    err = _commit(dfd, name, name_len, data, size, sync, after, False)
    close(dfd)
    return err


def put(bytes root, str key, const unsigned char[::1] data, uint64_t resolve, bint sync,
        int64_t after=0):
    """Write ``data`` at ``<root>/<key>``: 0 when written, -1 when the key is not a plain key
    (nothing tried), else the errno of the system call that failed (nothing written, unless
    only the final ``fsync`` of the directory failed)."""
    cdef Py_ssize_t rn = len(root), kn, cut = -1, i
    cdef char path[PATH_MAX]
    cdef const unsigned char* kp
    cdef const char* name
    cdef Py_ssize_t name_len
    cdef int err
    kb = key.encode("utf-8", "surrogatepass")
    kn = len(kb)
    kp = <const unsigned char*>PyBytes_AS_STRING(kb)
    if rn == 0 or rn + 1 + kn >= PATH_MAX or not _plain_key(kp, kn):
        return -1
    for i in range(kn - 1, -1, -1):
        if kp[i] == 47:
            cut = i
            break
    memcpy(path, PyBytes_AS_STRING(root), rn)
    if cut >= 0:
        path[rn] = 47
        memcpy(path + rn + 1, kp, cut)
        path[rn + 1 + cut] = 0
    else:
        path[rn] = 0
    name = <const char*>kp + cut + 1
    name_len = kn - cut - 1
    with nogil:
        err = _put(path, name, name_len, &data[0] if data.shape[0] else NULL, data.shape[0],
                   resolve, sync, after)
    return err


def link_method():
    """How this process names unnamed files: ``"fd"``, ``"proc"`` or ``"none"`` (see the
    module's docstring)."""
    return LINK_NAMES[_link_how].decode()


def set_link_method(str how):
    """Use ``how`` (as :func:`link_method` names them) from now on: for tests of each way."""
    global _link_how
    names = [LINK_NAMES[i].decode() for i in range(3)]
    if how not in names:
        raise ValueError(f"set_link_method: expected one of {names}, found {how!r}")
    _link_how = names.index(how)


def temp_name(str name):
    """A temporary name as :func:`put` makes them, for a plain key segment ``name``."""
    cdef char out[TMP_MAX]
    nb = name.encode("utf-8", "surrogatepass")
    if not _plain_key(<const unsigned char*>PyBytes_AS_STRING(nb), len(nb)) or b"/" in nb:
        raise ValueError(f"temp_name: expected a plain key segment, found {name!r}")
    if _temp_name(out, PyBytes_AS_STRING(nb), len(nb), getpid()) < 0:
        raise OSError(errno, "getrandom failed")
    return out.decode("ascii")


cdef inline void _unlock(int fd) noexcept nogil:
    """Release the ``flock`` on ``fd`` and close it. Closing alone would keep the lock for as
    long as a process forked meanwhile holds its copy of the descriptor."""
    flock(fd, LOCK_UN)
    close(fd)


cdef int _locked_rename(int dfd, const char* tmp, const char* name,
                        int64_t stamped) noexcept nogil:
    """Rename ``tmp`` over ``name`` while holding an exclusive ``flock`` on the file ``name``
    holds (as conditional writers do), re-stamping ``tmp`` later than that file when it is
    not already: 0, or an errno (``tmp`` is left for the caller)."""
    cdef int fd, err, tries
    cdef struct_stat held, now
    cdef int64_t sec
    cdef timespec stamp[2]
    for tries in range(100):
        fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        if fd < 0:
            if errno != ENOENT:
                return errno
            if renameat2(dfd, tmp, dfd, name, ZX_RENAME_NOREPLACE) == 0:
                return 0                # removed meanwhile: ours is the first version
            if errno == EEXIST:
                continue                # and made again: lock that one
            return errno
        if flock(fd, LOCK_EX) != 0 or fstat(fd, &held) != 0:
            err = errno
            _unlock(fd)
            return err
        if not S_ISREG(held.st_mode):
            _unlock(fd)                 # not a file (a pipe, a device, a directory): never
            return EEXIST               # replaced; the Python path words the refusal
        if fstatat(dfd, name, &now, AT_SYMLINK_NOFOLLOW) != 0:
            err = errno
            _unlock(fd)
            if err == ENOENT:           # removed while we waited: start again
                continue
            return err
        if now.st_dev == held.st_dev and now.st_ino == held.st_ino:
            # (a stamp past 2262 holds more nanoseconds than 64 bits: later than any clock's)
            sec = held.st_mtim.tv_sec
            if sec > 9223372035LL or (sec >= -9223372035LL and
                                    sec * 1000000000 + held.st_mtim.tv_nsec >= stamped):
                stamp[0].tv_sec = sec               # one nanosecond later than that file
                stamp[0].tv_nsec = held.st_mtim.tv_nsec + 1
                if stamp[0].tv_nsec == 1000000000:
                    stamp[0].tv_sec = sec + 1
                    stamp[0].tv_nsec = 0
                stamp[1] = stamp[0]
                utimensat(dfd, tmp, stamp, AT_SYMLINK_NOFOLLOW)
            err = 0 if renameat(dfd, tmp, dfd, name) == 0 else errno
            _unlock(fd)                 # after the rename
            return err
        _unlock(fd)                     # replaced while we waited: lock the new version
    return EAGAIN


#: file systems whose ``flock`` excludes every other open file description, threads of one
#: process included (network file systems may emulate it with per-process locks)
cdef long LOCAL_FS[12]
LOCAL_FS[:] = [0xEF53, 0x58465342, 0x9123683E, 0x01021994, 0xF2F52010, 0x2FC12FC1,
               0x794C7630, 0x3153464A, 0x52654973, 0xCA451A4E, 0x3434, 0x858458F6]


def flock_orders_threads(bytes path):
    """Whether ``flock`` on the file system holding ``path`` orders every open file
    description, threads of one process included: ext2/3/4, XFS, Btrfs, tmpfs, F2FS, ZFS,
    overlayfs, JFS, ReiserFS, bcachefs, NILFS, ramfs. False for any other (or on failure)."""
    cdef statfs_t st
    cdef int i
    if statfs(PyBytes_AS_STRING(path), &st) != 0:
        return False
    for i in range(12):
        if <unsigned long>st.f_type & 0xFFFFFFFF == <unsigned long>LOCAL_FS[i]:
            return True
    return False
