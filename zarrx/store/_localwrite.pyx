# zarrx-sources: csrc/zx_copy.c
"""Whole-file writes of keys below a :class:`~zarrx.store.local.LocalStore` root, without
the GIL: ``openat2`` of the key's directory (``RESOLVE_NO_SYMLINKS``, as every local-store
open), a new temporary file in it (``O_CREAT | O_EXCL | O_NOFOLLOW``, named as
:func:`zarrx.store.localfs.temp_name` names them), the data, a nanosecond mtime stamp, an
optional ``fsync``, then the rename: ``renameat2(RENAME_NOREPLACE)`` for a new key, else a
``renameat`` over the key while holding an exclusive ``flock`` on the file it replaces (as
conditional writers do, so that a concurrent read-modify-write never writes back over it), and
an optional ``fsync`` of the directory.

- :func:`put` is the fast path of :meth:`LocalStore.set`. A key it is not sure about (see
  :func:`zarrx.store._localread.plain_key`) is not attempted, and any failing system call (a
  missing directory, a link, a full disk, ...) removes the temporary file and reports the
  errno: the caller then takes the Python path, which makes directories, validates the key
  fully and words the error. Nothing is visible at the key until the rename.
- :func:`write_box` writes the raw chunks a box of an array covers whole, each gathered
  from the value into a scratch buffer and written as above, with no Python object per chunk
  (the mirror of :mod:`zarrx.store._localbox`). The directory of a run of chunks is opened
  once. Each replace holds an exclusive ``flock`` on the file it replaces, as conditional
  writers do, so that a read-modify-write of the same chunk by another thread or process never
  writes back over it. Chunks it does not write (covered in part, all fill, or failing) are
  handed back.
"""
from libc.stdint cimport uint64_t, int64_t
from libc.string cimport memcpy
from libc.errno cimport errno, EEXIST, EINTR, EINVAL, ENOENT, EAGAIN, ENOSYS
from posix.unistd cimport close, write, fsync, getpid
from posix.fcntl cimport openat, O_WRONLY, O_CREAT, O_EXCL, O_RDONLY
from posix.stat cimport futimens, fstat, fstatat, struct_stat
from posix.time cimport timespec, clock_gettime, CLOCK_REALTIME
from libc.stdlib cimport malloc, free
from libc.stddef cimport ptrdiff_t
from cpython.bytes cimport PyBytes_AS_STRING
cimport numpy as cnp

from zarrx._clib.zx_copy cimport ZX_MAX_NDIM, zx_box, zx_copy_box, zx_is_all
from zarrx._clib.zx_openat2 cimport zx_openat2
from zarrx.store._localbox cimport HeldDir, _chunk_at, _hold_folder, _key_path, _release_folder
from zarrx.store._localread cimport _plain_key

cnp.import_array()

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

cdef extern from "<sys/file.h>" nogil:
    int flock(int fd, int op)
    int LOCK_EX

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


cdef int _stage(int dfd, char* tmp, const char* name, Py_ssize_t name_len,
                const unsigned char* data, Py_ssize_t size, bint sync, int64_t after,
                int64_t* stamped) noexcept nogil:
    """A new temporary file in ``dfd`` for ``name`` (its name into ``tmp``) holding ``data``,
    stamped later than ``after`` (the stamp into ``stamped``): 0, or an errno with nothing
    left behind."""
    cdef int fd = -1, err = 0, tries
    cdef timespec now
    cdef timespec stamp[2]
    cdef int64_t ns
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
    err = _write_all(fd, data, size)
    if err == 0:
        clock_gettime(CLOCK_REALTIME, &now)
        ns = <int64_t>now.tv_sec * 1000000000 + now.tv_nsec
        if ns <= after:
            ns = after + 1
        stamped[0] = ns
        stamp[0].tv_sec = ns // 1000000000
        stamp[0].tv_nsec = ns % 1000000000
        stamp[1] = stamp[0]
        futimens(fd, stamp)              # a file system without it keeps its own stamp
    if err == 0 and sync and fsync(fd) != 0:
        err = errno
    if close(fd) != 0 and err == 0:
        err = errno
    if err != 0:
        unlinkat(dfd, tmp, 0)
    return err


cdef int _put_at(int dfd, const char* name, Py_ssize_t name_len, const unsigned char* data,
                 Py_ssize_t size, bint sync, int64_t after) noexcept nogil:
    """Write ``data`` as ``name`` in the directory ``dfd`` through a temporary file, ordered
    with conditional writers (``zarrx.store.localcond``): a new file is linked in only if the
    name is free (``RENAME_NOREPLACE``), an existing one is replaced only while holding an
    exclusive ``flock`` on it (see :func:`_locked_rename`). 0, or an errno: where
    ``RENAME_NOREPLACE`` is not supported (EINVAL, ENOSYS) or a lock cannot be taken, the
    caller takes the Python path, which orders itself the same way."""
    cdef char tmp[TMP_MAX]
    cdef int64_t stamped
    cdef int err = _stage(dfd, tmp, name, name_len, data, size, sync, after, &stamped)
    if err != 0:
        return err
    if renameat2(dfd, tmp, dfd, name, ZX_RENAME_NOREPLACE) != 0:
        err = errno
        if err == EEXIST:               # replace the current version under its lock
            err = _locked_rename(dfd, tmp, name, stamped)
        if err != 0:                    # EINVAL/ENOSYS (no RENAME_NOREPLACE): the Python path
            unlinkat(dfd, tmp, 0)
            return err
    if sync and fsync(dfd) != 0:
        return errno
    return 0


cdef int _put(const char* dirpath, const char* name, Py_ssize_t name_len,
              const unsigned char* data, Py_ssize_t size, uint64_t resolve, bint sync,
              int64_t after) noexcept nogil:
    """Write ``data`` as ``<dirpath>/<name>`` through a temporary file: 0, or an errno."""
    cdef int dfd, err
    dfd = zx_openat2(dirpath, O_RDONLY | O_DIRECTORY | O_CLOEXEC, resolve)
    if dfd < 0:
        return errno
    err = _put_at(dfd, name, name_len, data, size, sync, after)
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


cdef int _locked_rename(int dfd, const char* tmp, const char* name,
                        int64_t stamped) noexcept nogil:
    """Rename ``tmp`` over ``name`` while holding an exclusive ``flock`` on the file ``name``
    holds (as conditional writers do), re-stamping ``tmp`` later than that file when it is
    not already: 0, or an errno (``tmp`` is left for the caller)."""
    cdef int fd, err, tries
    cdef struct_stat held, now
    cdef int64_t old
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
            close(fd)
            return err
        if fstatat(dfd, name, &now, AT_SYMLINK_NOFOLLOW) != 0:
            err = errno
            close(fd)
            if err == ENOENT:           # removed while we waited: start again
                continue
            return err
        if now.st_dev == held.st_dev and now.st_ino == held.st_ino:
            old = <int64_t>held.st_mtim.tv_sec * 1000000000 + held.st_mtim.tv_nsec
            if old >= stamped:
                stamp[0].tv_sec = (old + 1) // 1000000000
                stamp[0].tv_nsec = (old + 1) % 1000000000
                stamp[1] = stamp[0]
                utimensat(dfd, tmp, stamp, AT_SYMLINK_NOFOLLOW)
            err = 0 if renameat(dfd, tmp, dfd, name) == 0 else errno
            close(fd)                   # releases the lock, after the rename
            return err
        close(fd)                       # replaced while we waited: lock the new version
    return EAGAIN


cdef int _replace_locked(int dfd, const char* name, Py_ssize_t name_len,
                         const unsigned char* data, Py_ssize_t size, bint sync) noexcept nogil:
    """As :func:`_put_at`, but ordered with conditional writers (``zarrx.store.localcond``):
    a new file is linked in only if the name is free (``RENAME_NOREPLACE``: no other version to
    order with); else the rename happens while holding an exclusive ``flock`` on the file it
    replaces, stamped later than it. 0, or an errno."""
    cdef char tmp[TMP_MAX]
    cdef int64_t stamped = 0
    cdef int err = _stage(dfd, tmp, name, name_len, data, size, sync, 0, &stamped)
    if err != 0:
        return err
    if renameat2(dfd, tmp, dfd, name, ZX_RENAME_NOREPLACE) != 0:
        err = errno
        if err == EEXIST or err == EINVAL or err == ENOSYS:
            err = _locked_rename(dfd, tmp, name, stamped)
        if err != 0:
            unlinkat(dfd, tmp, 0)
            return err
    if sync and fsync(dfd) != 0:
        return errno
    return 0


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


cdef struct Geometry:
    int ndim
    size_t itemsize
    int64_t start[ZX_MAX_NDIM]      # the box's first cell
    int64_t extent[ZX_MAX_NDIM]     # the box's shape (= the value's)
    int64_t chunk[ZX_MAX_NDIM]      # the chunk shape
    int64_t first[ZX_MAX_NDIM]      # the first chunk the box touches, per axis
    int64_t count[ZX_MAX_NDIM]      # chunks the box touches, per axis
    size_t nbytes                   # a chunk file's size


cdef bint _gather(const Geometry* g, const char* src, const ptrdiff_t* sstride,
                  const int64_t* k, char* buf) noexcept nogil:
    """Copy chunk ``k`` (grid coordinates) from the value into ``buf`` (C order); False, having
    copied nothing, when the box covers the chunk only in part."""
    cdef int d
    cdef int64_t lo
    cdef ptrdiff_t off = 0, step = <ptrdiff_t>g.itemsize
    cdef zx_box box
    box.ndim = g.ndim
    box.itemsize = g.itemsize
    for d in range(g.ndim):
        lo = k[d] * g.chunk[d]
        if lo < g.start[d] or lo + g.chunk[d] > g.start[d] + g.extent[d]:
            return False
        off += <ptrdiff_t>(lo - g.start[d]) * sstride[d]
        box.count[d] = <ptrdiff_t>g.chunk[d]
        box.stride[0][d] = sstride[d]
    for d in range(g.ndim - 1, -1, -1):
        box.stride[1][d] = step
        step *= <ptrdiff_t>g.chunk[d]
    zx_copy_box(&box, src + off, buf)
    return True


def write_box(bytes base, str sep, cnp.ndarray src, tuple start, tuple chunk, object fill,
              cnp.ndarray scratch, uint64_t resolve, bint sync, Py_ssize_t lo, Py_ssize_t hi):
    """Write chunks ``lo`` to ``hi`` (C order over the chunks the box touches) from ``src``;
    return the indices (in that order) of the chunks the caller must write itself: those the
    box covers only in part, those all of ``fill`` (when it is given: they are deleted, not
    written, by the general path) and those whose write failed (the general path words it).

    ``base``: the absolute path of the array's chunk keys up to the first coordinate (for
    example ``b"/data/a/c/"``), whose directories exist; ``sep``: the separator between
    coordinates; ``src``: the box's cells, of fixed-size items, any strides (0 for a broadcast
    value); ``start``: the box's first cell; ``chunk``: the chunk shape (a file holds a whole
    chunk, C order); ``fill``: one item, or None to write chunks of fill too; ``scratch``: a
    writable C-contiguous array of at least a chunk's bytes that the call may overwrite."""
    cdef Geometry g
    cdef int d, ndim = cnp.PyArray_NDIM(src)
    cdef Py_ssize_t bn = len(base), i, cut, end
    cdef HeldDir folder
    cdef int64_t k[ZX_MAX_NDIM]
    cdef ptrdiff_t sstride[ZX_MAX_NDIM]
    cdef char path[PATH_MAX]
    cdef char* buf
    cdef const char* srcp = <const char*>cnp.PyArray_DATA(src)
    cdef const char* fillp = NULL
    cdef char csep
    cdef list left = []
    cdef unsigned char* marks
    if ndim < 1 or ndim > ZX_MAX_NDIM:
        raise ValueError(f"write_box: expected 1 to {ZX_MAX_NDIM} dimensions, found {ndim}")
    if src.dtype.hasobject:
        raise ValueError("write_box: expected a value of fixed-size items")
    if not (cnp.PyArray_IS_C_CONTIGUOUS(scratch) and cnp.PyArray_ISWRITEABLE(scratch)):
        raise ValueError("write_box: expected a writable C-contiguous scratch array")
    if len(start) != ndim or len(chunk) != ndim:
        raise ValueError(f"write_box: expected {ndim} start and chunk entries, found "
                         f"{len(start)} and {len(chunk)}")
    if len(sep) != 1 or sep not in "/.":
        raise ValueError(f"write_box: expected separator '/' or '.', found {sep!r}")
    if bn == 0 or PyBytes_AS_STRING(base)[0] != 47:
        raise ValueError("write_box: expected an absolute base path")
    g.itemsize = <size_t>cnp.PyArray_ITEMSIZE(src)
    if g.itemsize == 0:
        raise ValueError("write_box: expected items of at least one byte")
    if fill is not None:
        if not isinstance(fill, bytes) or len(fill) != <Py_ssize_t>g.itemsize:
            raise ValueError(f"write_box: expected a fill value of {g.itemsize} bytes or None")
        fillp = PyBytes_AS_STRING(fill)
    # the longest path: base, then per axis up to DIGITS digits and a separator, then a NUL
    if bn + ndim * (DIGITS + 1) + 1 > PATH_MAX:
        raise ValueError(f"write_box: a chunk path would exceed {PATH_MAX} bytes")
    g.ndim = ndim
    g.nbytes = g.itemsize
    cdef Py_ssize_t nchunks = 1
    for d in range(ndim):
        g.start[d] = start[d]
        g.extent[d] = cnp.PyArray_DIMS(src)[d]
        g.chunk[d] = chunk[d]
        sstride[d] = cnp.PyArray_STRIDES(src)[d]
        if g.chunk[d] <= 0 or g.extent[d] <= 0 or g.start[d] < 0:
            raise ValueError(f"write_box: expected chunk > 0, extent > 0 and start >= 0 on "
                             f"axis {d}, found {g.chunk[d]}, {g.extent[d]} and {g.start[d]}")
        if g.chunk[d] > (<int64_t>1 << 62) // <int64_t>g.nbytes \
                or g.start[d] > (<int64_t>1 << 62) - g.extent[d]:
            raise ValueError("write_box: the chunk size or the box overflows")
        g.nbytes *= <size_t>g.chunk[d]
        g.first[d] = g.start[d] // g.chunk[d]
        g.count[d] = (g.start[d] + g.extent[d] - 1) // g.chunk[d] - g.first[d] + 1
        nchunks *= g.count[d]
    if <size_t>cnp.PyArray_NBYTES(scratch) < g.nbytes:
        raise ValueError(f"write_box: expected a scratch array of at least {g.nbytes} bytes, "
                         f"found {cnp.PyArray_NBYTES(scratch)}")
    buf = <char*>cnp.PyArray_DATA(scratch)
    if lo < 0 or hi > nchunks or lo > hi:
        raise ValueError(f"write_box: chunk range {lo}..{hi} is outside 0..{nchunks}")
    marks = <unsigned char*>malloc(<size_t>(hi - lo) + 1)
    if marks == NULL:
        raise MemoryError()
    memcpy(path, PyBytes_AS_STRING(base), bn)
    csep = ord(sep)
    cdef char held[PATH_MAX]
    folder.fd, folder.len, folder.path = -1, -1, held
    try:
        with nogil:
            for i in range(lo, hi):
                marks[i - lo] = 1
                _chunk_at(i, ndim, g.first, g.count, k)
                if not _gather(&g, srcp, sstride, k, buf):
                    continue
                if fillp != NULL and zx_is_all(buf, g.nbytes, fillp, g.itemsize):
                    continue
                end = _key_path(path + bn, ndim, k, csep) - path
                cut = _hold_folder(&folder, path, end, resolve)
                if folder.fd < 0:
                    continue
                marks[i - lo] = _replace_locked(folder.fd, path + cut + 1, end - cut - 1,
                                                <const unsigned char*>buf,
                                                <Py_ssize_t>g.nbytes, sync) != 0
            _release_folder(&folder)
        for i in range(lo, hi):
            if marks[i - lo]:
                left.append(i)
    finally:
        free(marks)
    return left
