"""Whole-file reads of many keys below a :class:`~zarrx.store.local.LocalStore` root: per key
one ``openat2`` (``RESOLVE_NO_SYMLINKS``: the kernel refuses any link on the way, as
:mod:`zarrx.store.localfs` does), one ``fstat``, one ``pread`` into a ``bytes`` object allocated
at the file's size (no resize, no copy) and one ``close``. Files of 64 KiB or more are read
without the GIL.

This is the fast path only. A key it is not sure about (any byte outside ``[A-Za-z0-9._-]`` and
``/``, an empty, ``.`` or ``..`` segment, a segment of more than 255 bytes or holding the
temporary-file marker), a byte range, and every failure other than "no such file" come back as
``fallback``: the caller then takes the Python path, which validates the key fully and words
the error. Absence (``ENOENT``) and a key that is not a regular file read as ``None``, as there.
"""
from libc.stdint cimport uint64_t
from libc.string cimport memcpy
from libc.errno cimport errno, ENOENT, EINTR
from posix.unistd cimport close, pread
from posix.stat cimport struct_stat, fstat, S_ISREG
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize

cdef extern from *:
    """
    #include <sys/syscall.h>
    #include <unistd.h>
    #include <stdint.h>
    #ifndef SYS_openat2
    #define SYS_openat2 437
    #endif
    struct zx_open_how { uint64_t flags; uint64_t mode; uint64_t resolve; };
    static int zx_openat2(const char *path, uint64_t flags, uint64_t resolve) {
        struct zx_open_how how = {flags, 0, resolve};
        return (int)syscall(SYS_openat2, -100 /* AT_FDCWD */, path, &how, sizeof how);
    }
    """
    int zx_openat2(const char* path, uint64_t flags, uint64_t resolve) nogil

cdef enum:
    PATH_MAX = 4096
    NAME_MAX = 255
    MARK_LEN = 11            # len(".zarrx-tmp-")
    NOGIL_MIN = 65536        # files this large are read without the GIL
cdef const char* MARK = b".zarrx-tmp-"


cdef bint _plain_key(const unsigned char* k, Py_ssize_t n) noexcept nogil:
    """Whether ``k`` is '/'-separated segments of [A-Za-z0-9._-], none empty, '.', '..',
    longer than NAME_MAX or holding the temporary-file marker."""
    cdef Py_ssize_t i, start = 0, seg
    cdef unsigned char c
    if n == 0:
        return False
    for i in range(n + 1):
        c = k[i] if i < n else 47            # a final '/' closes the last segment
        if c == 47:
            seg = i - start
            if seg == 0 or seg > NAME_MAX:
                return False
            if k[start] == 46 and (seg == 1 or (seg == 2 and k[start + 1] == 46)):
                return False
            if seg >= MARK_LEN and _has_mark(k + start, seg):
                return False
            start = i + 1
        elif not ((48 <= c <= 57) or (65 <= c <= 90) or (97 <= c <= 122)
                  or c == 46 or c == 95 or c == 45):
            return False
    return True


cdef bint _has_mark(const unsigned char* s, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i, j
    for i in range(n - MARK_LEN + 1):
        for j in range(MARK_LEN):
            if s[i + j] != <unsigned char>MARK[j]:
                break
        else:
            return True
    return False


cdef object _read_one(const char* path, uint64_t flags, uint64_t resolve, object fallback):
    cdef int fd, err
    cdef struct_stat st
    cdef Py_ssize_t size, done = 0, got
    cdef char* dst
    # open and fstat keep the GIL (a few microseconds): releasing it for them would hand it to
    # another thread that then holds it for up to the interpreter's switch interval
    fd = zx_openat2(path, flags, resolve)
    err = errno
    if fd >= 0 and fstat(fd, &st) != 0:
        err = errno
        close(fd)
        fd = -2
    if fd < 0:
        return None if fd == -1 and err == ENOENT else fallback
    if not S_ISREG(st.st_mode):
        close(fd)
        return None
    size = <Py_ssize_t>st.st_size
    try:
        out = PyBytes_FromStringAndSize(NULL, size)
    except MemoryError:
        close(fd)
        return fallback                     # the Python path words it
    dst = PyBytes_AS_STRING(out)
    if size >= NOGIL_MIN:
        with nogil:
            done = _pread_all(fd, dst, size)
    else:
        done = _pread_all(fd, dst, size)
    close(fd)
    return out if done == size else fallback


cdef Py_ssize_t _pread_all(int fd, char* dst, Py_ssize_t size) noexcept nogil:
    """Bytes read into ``dst`` from offset 0, up to ``size`` or the end of the file."""
    cdef Py_ssize_t done = 0, got
    while done < size:
        got = pread(fd, dst + done, <size_t>(size - done), done)
        if got < 0 and errno == EINTR:
            continue
        if got <= 0:
            break
        done += got
    return done


def read_whole(bytes root, list keys, uint64_t flags, uint64_t resolve, object fallback):
    """``[bytes | None | fallback]``, one per key of ``keys`` (``str``, or ``None`` for an item
    the caller handles itself, which yields ``fallback``): the whole file ``<root>/<key>``."""
    cdef Py_ssize_t rn = len(root), kn
    cdef char buf[PATH_MAX]
    cdef const unsigned char* kp
    cdef list out = []
    if rn == 0 or rn >= PATH_MAX - 2:
        return [fallback] * len(keys)
    memcpy(buf, PyBytes_AS_STRING(root), rn)
    buf[rn] = 47
    for key in keys:
        if type(key) is not str:
            out.append(fallback)
            continue
        kb = (<str>key).encode("utf-8", "surrogatepass")
        kn = len(kb)
        kp = <const unsigned char*>PyBytes_AS_STRING(kb)
        if rn + 1 + kn >= PATH_MAX or not _plain_key(kp, kn):
            out.append(fallback)
            continue
        memcpy(buf + rn + 1, kp, kn)
        buf[rn + 1 + kn] = 0
        out.append(_read_one(buf, flags, resolve, fallback))
    return out
