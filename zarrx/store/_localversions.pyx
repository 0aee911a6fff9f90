"""Versioned reads of many keys of a :class:`~zarrx.store.local.LocalStore` in one call
(``LocalStore.get_versioned_many``, through :mod:`zarrx.store.localbatch`), ``GROUP`` keys at a
time: without the GIL, per key one ``openat2`` (``RESOLVE_NO_SYMLINKS``, as every local-store
open) and one ``fstat``, then the coarse clock (the racy-timestamp rule of
:func:`zarrx.store.localsnap.held_generation`, read after the ``fstat`` while the file is held);
with the GIL, a ``bytes`` object of the size to read; without it again, one ``pread`` and one
``close`` per key. The descriptor is held from the ``fstat`` to the ``pread``: the bytes are
those of the generation reported.

A key the kernel does not take (not plain, see :func:`zarrx.store._localread.plain_key`), and
any failure other than "no such file" (a link, a file cut short while read, a size that does
not fit in memory, ...) reads as ``fallback``, for the Python path to read (or word the
error); absence and a key that is not a regular file read as None, as there.
"""
from libc.errno cimport errno, ENOENT, EINTR
from posix.unistd cimport close, pread
from posix.stat cimport struct_stat, fstat, S_ISREG
from posix.time cimport timespec, clock_gettime
from libc.stdint cimport uint64_t
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize

from zarrx._clib.zx_openat2 cimport zx_openat2
from zarrx.store._localread cimport _plain_key, _stamps_recent

cdef extern from "<time.h>" nogil:
    int CLOCK_REALTIME_COARSE

cdef enum:
    PATH_MAX = 4096
    GROUP = 64              # keys per GIL-free section
    R_SLOW = 0              # the Python path reads it
    R_NONE = 1              # absent, or not a regular file
    R_FILE = 2

cdef long long SEC_MAX = 9223372035     # seconds whose nanoseconds (plus < 1 s) fit 64 bits


cdef bytes _path_of(object key, bytes root):
    """``root/key`` (NUL-terminated, as every bytes object is) when the kernels take ``key``
    (a plain ``str`` short enough), else None."""
    if type(key) is not str:
        return None
    cdef bytes kb = (<str>key).encode("utf-8", "surrogatepass")
    cdef Py_ssize_t kn = len(kb)
    if len(root) + 1 + kn >= PATH_MAX or not _plain_key(
            <const unsigned char*>PyBytes_AS_STRING(kb), kn):
        return None
    return root + b"/" + kb


cdef object _stamp_ns(long long sec, long nsec):
    """A stamp in nanoseconds since 1970 as ``os.stat`` makes it (a Python int past 64 bits)."""
    if -SEC_MAX <= sec <= SEC_MAX:
        return sec * 1000000000 + nsec
    return <object>sec * 1000000000 + nsec


cdef struct RSlot:
    const char* path        # NULL: the Python path reads it
    int fd
    int state
    bint recent
    struct_stat st
    Py_ssize_t start, size
    char* dst


cdef void _open_one(RSlot* s, uint64_t flags, uint64_t resolve, int mode, Py_ssize_t a,
                    Py_ssize_t b) noexcept nogil:
    """Open and ``fstat`` the slot's file, see whether its stamps are recent, and work out the
    part of it to read (``mode``: 0 whole, 1 ``b`` bytes (-1: all) from ``a``, 2 the last
    ``b``), as ``ByteRange.resolve`` does."""
    cdef timespec now
    cdef Py_ssize_t size
    s.fd = zx_openat2(s.path, flags, resolve)
    if s.fd < 0:
        s.state = R_NONE if errno == ENOENT else R_SLOW
        return
    if fstat(s.fd, &s.st) != 0:
        close(s.fd)
        s.fd = -1
        s.state = R_SLOW
        return
    if not S_ISREG(s.st.st_mode):
        close(s.fd)
        s.fd = -1
        s.state = R_NONE
        return
    if clock_gettime(CLOCK_REALTIME_COARSE, &now) != 0:
        s.recent = True                 # no such clock: every generation is recent
    else:
        s.recent = _stamps_recent(now.tv_sec, now.tv_nsec, s.st.st_ctim.tv_sec,
                                  s.st.st_ctim.tv_nsec, s.st.st_mtim.tv_sec,
                                  s.st.st_mtim.tv_nsec)
    size = <Py_ssize_t>s.st.st_size
    if mode == 2:
        s.start = size - b if b < size else 0
    elif mode == 1:
        s.start = a if a < size else size
        if b >= 0 and b < size - s.start:
            size = s.start + b
    else:
        s.start = 0
    s.size = size - s.start
    s.state = R_FILE


cdef bint _read_one(RSlot* s) noexcept nogil:
    """Read the slot's part into ``dst`` and close the file: whether it was all there."""
    cdef Py_ssize_t done = 0, got
    while done < s.size:
        got = pread(s.fd, s.dst + done, <size_t>(s.size - done), s.start + done)
        if got < 0 and errno == EINTR:
            continue
        if got <= 0:
            break
        done += got
    close(s.fd)
    s.fd = -1
    return done == s.size


def read_versioned(bytes root, list keys, uint64_t flags, uint64_t resolve, object fallback,
                   int mode, Py_ssize_t a, Py_ssize_t b, object recent):
    """``[(bytes, generation) | None | fallback]``, one per key of ``keys``: what
    ``LocalStore.get_versioned(key, range)`` returns for the range ``mode``/``a``/``b`` (see
    :func:`_open_one`), the generation made as ``held_generation`` makes it (``recent`` of the
    tuple when its stamps are too recent); ``fallback`` where the Python path must read."""
    cdef Py_ssize_t n = len(keys), g0, g1, i
    cdef list out = [fallback] * n
    cdef list paths
    cdef RSlot slots[GROUP]
    cdef RSlot* s
    if len(root) == 0 or len(root) >= PATH_MAX - 2:
        return out
    for g0 in range(0, n, GROUP):
        g1 = min(n, g0 + GROUP)
        paths = [_path_of(keys[i], root) for i in range(g0, g1)]
        bufs = [None] * (g1 - g0)
        for i in range(g1 - g0):
            slots[i].path = NULL if paths[i] is None else PyBytes_AS_STRING(paths[i])
            slots[i].fd = -1
            slots[i].state = R_SLOW
        try:
            with nogil:
                for i in range(g1 - g0):
                    if slots[i].path != NULL:
                        _open_one(&slots[i], flags, resolve, mode, a, b)
            for i in range(g1 - g0):
                s = &slots[i]
                if s.state != R_FILE:
                    continue
                try:
                    bufs[i] = PyBytes_FromStringAndSize(NULL, s.size)
                except (MemoryError, OverflowError):    # the Python path words it
                    close(s.fd)
                    s.fd = -1
                    s.state = R_SLOW
                    continue
                s.dst = PyBytes_AS_STRING(bufs[i])
            with nogil:
                for i in range(g1 - g0):
                    if slots[i].state == R_FILE and not _read_one(&slots[i]):
                        slots[i].state = R_SLOW     # cut short: read again by the Python path
        finally:
            for i in range(g1 - g0):
                if slots[i].fd >= 0:
                    close(slots[i].fd)
                    slots[i].fd = -1
        for i in range(g1 - g0):
            s = &slots[i]
            if s.state == R_NONE:
                out[g0 + i] = None
            elif s.state == R_FILE:
                gen = (s.st.st_dev, s.st.st_ino, s.st.st_size,
                       _stamp_ns(s.st.st_mtim.tv_sec, s.st.st_mtim.tv_nsec),
                       _stamp_ns(s.st.st_ctim.tv_sec, s.st.st_ctim.tv_nsec))
                out[g0 + i] = (bufs[i], recent(gen) if s.recent else gen)
    return out


