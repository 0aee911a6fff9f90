"""Conditional writes of many keys of a :class:`~zarrx.store.local.LocalStore` in one call
(``LocalStore.set_if_many``, through :mod:`zarrx.store.localbatch`): the protocol of
:mod:`zarrx.store.localcond`, step for step, ``GROUP`` items per GIL-free section.

- **Replace-if-generation** and **delete-if-generation** open the file (read-write, else
  read-only), take an exclusive ``flock``, and check that the path still names the locked
  inode and holds the expected generation (a locked version replaced since by the expected one
  is locked in turn); then a temporary file (stamped later than the file it replaces,
  ``fsync``-ed with ``sync``) is renamed over it, or it is unlinked and the folders that
  leaves empty are removed. The lock is released after the rename and the folder's ``fsync``.
- **Create-if-absent** links a temporary file to the key, which fails when the key exists.
- A delete of a missing key (``None`` of an ``ABSENT`` generation) is a conflict when a file
  is there now, and nothing otherwise.

A key the kernel does not take (not plain, see :func:`zarrx.store._localread.plain_key`), a
value that is not a contiguous ``bytes``, ``bytearray`` or ``memoryview``, a generation that
is not five integers, and any system call failing otherwise than the protocol expects (a
folder to make, a link, a full disk, ...) stops the call there, nothing done for that item:
the caller makes that item's single call (which makes folders, retries or words the error)
and calls again from the next one. So a batch does what the single calls do one after the
other; a blocking ``flock`` never waits holding the GIL.
"""
from libc.stdint cimport uint64_t, int64_t
from libc.string cimport memcpy, strlen
from libc.errno cimport errno, ENOENT, EEXIST, EINTR, EACCES, EPERM
from posix.unistd cimport close, fsync
from posix.fcntl cimport openat, O_RDONLY, O_RDWR
from posix.stat cimport struct_stat, fstat, fstatat, S_ISREG, S_ISLNK
from cpython.bytes cimport PyBytes_AS_STRING
from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_SIMPLE

from zarrx._clib.zx_openat2 cimport zx_openat2
from zarrx.store._localversions cimport _path_of
from zarrx.store._localwrite cimport _stage

cdef extern from "<fcntl.h>" nogil:
    int O_DIRECTORY, O_NOFOLLOW, O_CLOEXEC, O_NONBLOCK, O_PATH
    int AT_SYMLINK_NOFOLLOW, AT_REMOVEDIR

cdef extern from "<unistd.h>" nogil:
    int unlinkat(int dirfd, const char* path, int flags)
    int linkat(int olddirfd, const char* oldpath, int newdirfd, const char* newpath, int flags)

cdef extern from "<stdio.h>" nogil:
    int renameat(int olddirfd, const char* oldpath, int newdirfd, const char* newpath)

cdef extern from "<sys/file.h>" nogil:
    int flock(int fd, int op)
    int LOCK_EX, LOCK_UN

cdef enum:
    PATH_MAX = 4096
    TMP_MAX = 160
    GROUP = 64              # items per GIL-free section
    LOCK_TRIES = 100        # as localcond's _lock_current
    OP_CREATE = 0
    OP_REPLACE = 1
    OP_DELETE = 2
    OP_DELETE_ABSENT = 3
    W_OK = 0
    W_CONFLICT = 1
    W_SLOW = 2              # nothing done: the Python path makes the single call
    W_SYNC = 3              # written, but the fsync of its folder failed (errno kept)

cdef long long SEC_MAX = 9223372035     # seconds whose nanoseconds (plus < 1 s) fit 64 bits

cdef int DIR_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC


cdef struct WItem:
    const char* path        # root/key, NUL-terminated
    Py_ssize_t plen, rn     # its length, the root's
    int op
    const unsigned char* data
    Py_ssize_t size
    uint64_t dev, ino       # the expected generation (replace, delete)
    int64_t fsize, m_s, c_s
    long m_ns, c_ns


cdef int _split_ns(object ns, int64_t* sec, long* nsec) except -1:
    """Nanoseconds since 1970 as (seconds, nanoseconds), as ``struct stat`` holds them."""
    cdef int64_t v
    try:
        v = ns
    except OverflowError:               # past 64 bits (stamps after 2262)
        q, r = divmod(ns, 1000000000)
        sec[0] = q                      # (an OverflowError past 64-bit seconds)
        nsec[0] = r
        return 0
    sec[0] = v // 1000000000
    nsec[0] = <long>(v % 1000000000)
    if nsec[0] < 0:                     # (C's division truncates)
        sec[0] -= 1
        nsec[0] += 1000000000
    return 0


cdef bint _expected(WItem* w, object gen):
    """Take the expected generation ``gen``: False when it is not one the kernel compares (not
    five integers), for the Python path to compare."""
    if not isinstance(gen, tuple) or len(gen) != 5:
        return False
    for v in gen:
        if type(v) is not int:
            return False
    try:
        w.dev = gen[0]
        w.ino = gen[1]
        w.fsize = gen[2]
        _split_ns(gen[3], &w.m_s, &w.m_ns)
        _split_ns(gen[4], &w.c_s, &w.c_ns)
    except OverflowError:
        return False
    return True


cdef bint _holds(const struct_stat* st, const WItem* w) noexcept nogil:
    """Whether ``st`` is of the expected generation (``generation_of(st) == expected``)."""
    return (st.st_dev == w.dev and st.st_ino == w.ino and st.st_size == w.fsize
            and st.st_mtim.tv_sec == w.m_s and st.st_mtim.tv_nsec == w.m_ns
            and st.st_ctim.tv_sec == w.c_s and st.st_ctim.tv_nsec == w.c_ns)


cdef inline void _unlock(int fd) noexcept nogil:
    """Release the ``flock`` on ``fd``, then close it (see ``localfs.unlock``)."""
    flock(fd, LOCK_UN)
    close(fd)


cdef int _lock_current(int dfd, const char* name, const WItem* w, int* out) noexcept nogil:
    """``localcond``'s ``_lock_current``: an fd of ``name`` in ``out``, exclusively locked,
    whose inode the path still names, at the expected generation (W_OK); W_CONFLICT, or
    W_SLOW with nothing held."""
    cdef int fd, err, tries
    cdef struct_stat held, now
    for tries in range(LOCK_TRIES):
        fd = openat(dfd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        if fd < 0 and (errno == EACCES or errno == EPERM):
            fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        if fd < 0:
            return W_CONFLICT if errno == ENOENT else W_SLOW
        while flock(fd, LOCK_EX) != 0:
            if errno != EINTR:
                close(fd)
                return W_SLOW
        if fstat(fd, &held) != 0:
            _unlock(fd)
            return W_SLOW
        if fstatat(dfd, name, &now, AT_SYMLINK_NOFOLLOW) != 0:
            err = errno
            _unlock(fd)
            return W_CONFLICT if err == ENOENT else W_SLOW
        if not _holds(&now, w):
            _unlock(fd)
            return W_CONFLICT
        if now.st_dev == held.st_dev and now.st_ino == held.st_ino:
            out[0] = fd
            return W_OK
        _unlock(fd)         # locked a version replaced since by the expected one: lock that
    return W_SLOW


cdef int _create(int dfd, const char* name, const WItem* w, bint sync,
                 int* err) noexcept nogil:
    """Create-if-absent: a temporary file linked to ``name``."""
    cdef char tmp[TMP_MAX]
    cdef int64_t stamped = 0
    cdef struct_stat st
    cdef int e
    if _stage(dfd, tmp, name, strlen(name), w.data, w.size, sync, 0, &stamped) != 0:
        return W_SLOW
    if linkat(dfd, tmp, dfd, name, 0) != 0:
        e = errno
        unlinkat(dfd, tmp, 0)
        if e == EEXIST and fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 \
                and S_ISREG(st.st_mode):
            return W_CONFLICT
        return W_SLOW       # a link or something not a file there (the Python path words
    unlinkat(dfd, tmp, 0)   # it), or it vanished again
    if sync and fsync(dfd) != 0:
        err[0] = errno
        return W_SYNC
    return W_OK


cdef int _replace(int dfd, const char* name, const WItem* w, bint sync,
                  int* err) noexcept nogil:
    """Replace-if-generation (or, for OP_DELETE, delete-if-generation) under the lock."""
    cdef char tmp[TMP_MAX]
    cdef int64_t stamped = 0, after
    cdef struct_stat old
    cdef int held, e, st
    st = _lock_current(dfd, name, w, &held)
    if st != W_OK:
        return st
    if w.op == OP_DELETE:
        st = W_OK if unlinkat(dfd, name, 0) == 0 else W_SLOW
        _unlock(held)
        return st
    if fstat(held, &old) != 0 or not (-SEC_MAX <= old.st_mtim.tv_sec <= SEC_MAX):
        _unlock(held)       # (a stamp past 2262: the Python path stamps later than it)
        return W_SLOW
    after = <int64_t>old.st_mtim.tv_sec * 1000000000 + old.st_mtim.tv_nsec
    e = _stage(dfd, tmp, name, strlen(name), w.data, w.size, sync, after, &stamped)
    if e != 0:
        _unlock(held)       # ENOENT: the key and its folder were deleted meanwhile
        return W_CONFLICT if e == ENOENT else W_SLOW
    if renameat(dfd, tmp, dfd, name) != 0:
        e = errno
        unlinkat(dfd, tmp, 0)
        _unlock(held)       # ENOENT: swept by a concurrent delete of the node
        return W_CONFLICT if e == ENOENT else W_SLOW
    if sync and fsync(dfd) != 0:
        err[0] = errno
        _unlock(held)
        return W_SYNC
    _unlock(held)           # after the rename
    return W_OK


cdef void _prune(const WItem* w, uint64_t resolve) noexcept nogil:
    """Remove the folders of the key a delete left empty, deepest first, never the root
    (``LocalStore._prune``): stop at the first that cannot be removed."""
    cdef char buf[PATH_MAX]
    cdef Py_ssize_t end = w.plen - 1, p
    cdef int pfd, r
    memcpy(buf, w.path, w.plen + 1)
    while buf[end] != 47:
        end -= 1
    while end > w.rn:                   # the folder buf[:end], in the folder buf[:p]
        p = end - 1
        while buf[p] != 47:
            p -= 1
        buf[end] = 0
        buf[p] = 0
        pfd = zx_openat2(buf, DIR_FLAGS, resolve)
        buf[p] = 47
        if pfd < 0:
            return
        r = unlinkat(pfd, buf + p + 1, AT_REMOVEDIR)
        close(pfd)
        if r != 0:
            return
        end = p


cdef int _absent_now(const WItem* w, uint64_t resolve) noexcept nogil:
    """Delete-if-absent: a conflict when a file is at the key now, nothing otherwise."""
    cdef struct_stat st
    cdef int fd = zx_openat2(w.path, O_PATH | O_NOFOLLOW | O_CLOEXEC, resolve), r
    if fd < 0:
        return W_OK if errno == ENOENT else W_SLOW
    r = fstat(fd, &st)
    close(fd)
    if r != 0 or S_ISLNK(st.st_mode):
        return W_SLOW       # (a link: the Python path refuses it)
    return W_CONFLICT if S_ISREG(st.st_mode) else W_OK


cdef int _write_one(const WItem* w, uint64_t resolve, bint sync, int* err) noexcept nogil:
    """One item, as ``set_if`` / ``delete_if`` would do it: a W_* code."""
    cdef char dirpath[PATH_MAX]
    cdef Py_ssize_t cut = w.plen - 1
    cdef int dfd, st
    if w.op == OP_DELETE_ABSENT:
        return _absent_now(w, resolve)
    while w.path[cut] != 47:
        cut -= 1
    memcpy(dirpath, w.path, cut)
    dirpath[cut] = 0
    dfd = zx_openat2(dirpath, DIR_FLAGS, resolve)
    if dfd < 0:             # (a folder to make, a link, ...: the Python path)
        return W_CONFLICT if w.op != OP_CREATE and errno == ENOENT else W_SLOW
    if w.op == OP_CREATE:
        st = _create(dfd, w.path + cut + 1, w, sync, err)
    else:
        st = _replace(dfd, w.path + cut + 1, w, sync, err)
    close(dfd)
    if st == W_OK and w.op == OP_DELETE:
        _prune(w, resolve)
    return st


cdef bint _take(WItem* w, Py_buffer* view, bint* viewed, object item, bytes root,
                object absent, list keep):
    """Fill ``w`` for ``item`` (``(key, new value or None, generation)``): False when the
    Python path must write it."""
    if type(item) is not tuple or len(item) != 3:
        return False
    key, new, gen = item
    path = _path_of(key, root)
    if path is None:
        return False
    unconditional = gen is None or gen is absent
    if new is None:
        w.op = OP_DELETE_ABSENT if unconditional else OP_DELETE
    else:
        t = type(new)
        if t is not bytes and t is not bytearray and t is not memoryview:
            return False
        w.op = OP_CREATE if unconditional else OP_REPLACE
    if not unconditional and not _expected(w, gen):
        return False
    if new is not None:
        try:
            PyObject_GetBuffer(new, view, PyBUF_SIMPLE)    # C-contiguous, or it refuses
        except Exception:
            return False
        viewed[0] = True
        w.data = <const unsigned char*>view.buf
        w.size = view.len
    keep.append(path)
    w.path = PyBytes_AS_STRING(path)
    w.plen = len(path)
    w.rn = len(root)
    return True


def write_conditional(bytes root, list items, Py_ssize_t start, uint64_t resolve, bint sync,
                      object absent, list failed):
    """Write ``items[start:]`` (``(key, new value or None, generation)``) as ``set_if`` (or
    ``delete_if`` for None) would, one after the other, appending the positions of those
    refused by a conflict to ``failed``, until an item the Python path must write. Returns
    ``(i, err)``: ``i`` the position of that item (``len(items)`` when none is left), ``err``
    0, or the errno of a failed ``fsync`` of its folder after item ``i`` was written (the
    single call raises it)."""
    cdef Py_ssize_t n = len(items), i = start, m, j, done
    cdef WItem w[GROUP]
    cdef Py_buffer views[GROUP]
    cdef bint viewed[GROUP]
    cdef int codes[GROUP]
    cdef int err = 0
    cdef list keep
    if len(root) == 0 or len(root) >= PATH_MAX - 2:
        return start, 0
    while i < n:
        keep = []
        m = done = 0
        for j in range(GROUP):
            viewed[j] = False
        try:
            while i + m < n and m < GROUP and _take(&w[m], &views[m], &viewed[m],
                                                    items[i + m], root, absent, keep):
                m += 1
            with nogil:
                while done < m:
                    codes[done] = _write_one(&w[done], resolve, sync, &err)
                    if codes[done] == W_SLOW or codes[done] == W_SYNC:
                        break
                    done += 1
        finally:
            for j in range(GROUP):
                if viewed[j]:
                    PyBuffer_Release(&views[j])
        for j in range(done):
            if codes[j] == W_CONFLICT:
                failed.append(i + j)
        if done < m:                    # left to the Python path (or written, fsync failed)
            return i + done, (err if codes[done] == W_SYNC else 0)
        i += m
        if m < GROUP:                   # items[i]: the kernel does not take it
            return i, 0
    return n, 0
