"""Whole-file writes of one key below a :class:`~zarrx.store.local.LocalStore` root, without
the GIL: ``openat2`` of the key's directory (``RESOLVE_NO_SYMLINKS``, as every local-store
open), a new temporary file in it (``O_CREAT | O_EXCL | O_NOFOLLOW``, named as
:func:`zarrx.store.localfs.temp_name` names them), the data, a nanosecond mtime stamp, an
optional ``fsync``, ``renameat`` over the key, an optional ``fsync`` of the directory.

This is the fast path of :meth:`LocalStore.set` only. A key it is not sure about (see
:func:`zarrx.store._localread.plain_key`) is not attempted, and any failing system call
(a missing directory, a link, a full disk, ...) removes the temporary file and reports the
errno: the caller then takes the Python path, which makes directories, validates the key
fully and words the error. Nothing is visible at the key until the rename.
"""
from libc.stdint cimport uint64_t, int64_t
from libc.string cimport memcpy
from libc.errno cimport errno, EEXIST, EINTR, EINVAL
from posix.unistd cimport close, write, fsync, getpid
from posix.fcntl cimport openat, O_WRONLY, O_CREAT, O_EXCL, O_RDONLY
from posix.stat cimport futimens
from posix.time cimport timespec, clock_gettime, CLOCK_REALTIME
from cpython.bytes cimport PyBytes_AS_STRING

from zarrx._clib.zx_openat2 cimport zx_openat2
from zarrx.store._localread cimport _plain_key

cdef extern from "<fcntl.h>" nogil:
    int O_DIRECTORY, O_NOFOLLOW, O_CLOEXEC

cdef extern from "<stdio.h>" nogil:
    int renameat(int olddirfd, const char* oldpath, int newdirfd, const char* newpath)

cdef extern from "<unistd.h>" nogil:
    int unlinkat(int dirfd, const char* path, int flags)

cdef extern from "<sys/random.h>" nogil:
    ssize_t getrandom(void* buf, size_t n, unsigned int flags)

cdef enum:
    PATH_MAX = 4096
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


cdef int _write_all(int fd, const unsigned char* p, Py_ssize_t n) noexcept nogil:
    """0, or the errno of the failing ``write``."""
    cdef Py_ssize_t done = 0, got
    while done < n:
        got = write(fd, p + done, <size_t>(n - done))
        if got < 0:
            if errno == EINTR:
                continue
            return errno
        if got == 0:
            return EINVAL
        done += got
    return 0


cdef int _put(const char* dirpath, const char* name, Py_ssize_t name_len,
              const unsigned char* data, Py_ssize_t size, uint64_t resolve, bint sync,
              int64_t after) noexcept nogil:
    """Write ``data`` as ``<dirpath>/<name>`` through a temporary file: 0, or an errno."""
    cdef int dfd, fd = -1, err = 0, tries
    cdef char tmp[TMP_MAX]
    cdef timespec now
    cdef timespec stamp[2]
    cdef int64_t ns
    cdef long pid = getpid()
    dfd = zx_openat2(dirpath, O_RDONLY | O_DIRECTORY | O_CLOEXEC, resolve)
    if dfd < 0:
        return errno
    for tries in range(TRIES):
        if _temp_name(tmp, name, name_len, pid) < 0:
            err = errno
            break
        fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o666)
        if fd >= 0 or errno != EEXIST:
            break
    if fd < 0:
        err = err or errno
        close(dfd)
        return err
    err = _write_all(fd, data, size)
    if err == 0:
        clock_gettime(CLOCK_REALTIME, &now)
        ns = <int64_t>now.tv_sec * 1000000000 + now.tv_nsec
        if ns <= after:
            ns = after + 1
        stamp[0].tv_sec = ns // 1000000000
        stamp[0].tv_nsec = ns % 1000000000
        stamp[1] = stamp[0]
        futimens(fd, stamp)              # a file system without it keeps its own stamp
    if err == 0 and sync and fsync(fd) != 0:
        err = errno
    if close(fd) != 0 and err == 0:
        err = errno
    if err == 0 and renameat(dfd, tmp, dfd, name) != 0:
        err = errno
    if err != 0:
        unlinkat(dfd, tmp, 0)
    elif sync and fsync(dfd) != 0:
        err = errno
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


def temp_name(str name):
    """A temporary name as :func:`put` makes them, for a plain key segment ``name``."""
    cdef char out[TMP_MAX]
    nb = name.encode("utf-8", "surrogatepass")
    if not _plain_key(<const unsigned char*>PyBytes_AS_STRING(nb), len(nb)) or b"/" in nb:
        raise ValueError(f"temp_name: expected a plain key segment, found {name!r}")
    if _temp_name(out, PyBytes_AS_STRING(nb), len(nb), getpid()) < 0:
        raise OSError(errno, "getrandom failed")
    return out.decode("ascii")
