"""Whole-file reads of many keys below a :class:`~zarrx.store.local.LocalStore` root: per key
one ``openat2`` (``RESOLVE_NO_SYMLINKS``: the kernel refuses any link on the way, as
:mod:`zarrx.store.localfs` does), one ``fstat``, one ``pread`` and one ``close``. The ``pread``
goes into a ``bytes`` object allocated at the file's size (no resize, no copy) or, given an
:class:`Arena`, into memory the reading thread reuses. Files of 64 KiB or more are read without
the GIL.

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
from cpython.pyport cimport PY_SSIZE_T_MAX
import numpy as np
cimport numpy as cnp

cnp.import_array()

from zarrx._clib.zx_openat2 cimport zx_openat2

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


cdef class Arena:
    """A buffer that one thread's reads reuse. A batch of reads starts with :meth:`reset`,
    then lays its data out from the start of ``buf`` (:func:`read_whole`, :meth:`take_view`)
    and hands out views into it, which hold until the next batch. A larger buffer replaces
    ``buf`` when the data does not fit (views into the old one keep it alive)."""
    cdef public object buf          # 1-d uint8 numpy array
    cdef Py_ssize_t used

    def __init__(self, Py_ssize_t capacity=0):
        self.buf = np.empty(capacity, np.uint8)
        self.used = 0

    def reset(self):
        """Start a new batch: later views may reuse the memory of earlier ones."""
        self.used = 0

    def take_view(self, Py_ssize_t size):
        """A writable view of ``size`` bytes after those taken since :meth:`reset`."""
        if size < 0:
            raise ValueError(f"arena: expected a size >= 0, found {size}")
        self.take(size)
        return memoryview(self.buf[self.used - size:self.used])

    cdef char* take(self, Py_ssize_t size) except NULL:
        """``size`` bytes of ``buf`` after those taken since the last reset (a MemoryError
        when they cannot be had)."""
        cdef Py_ssize_t cap = self.buf.shape[0]
        cdef cnp.ndarray arr
        if size > cap - self.used:          # never used + size: a file's size may be 2**63 - 1
            if size > PY_SSIZE_T_MAX - self.used:
                raise MemoryError(f"arena: cannot hold {size} more bytes")
            self.buf = np.empty(max(2 * cap, self.used + size, 1 << 20), np.uint8)
            self.used = 0
        arr = self.buf
        cdef char* p = <char*>cnp.PyArray_DATA(arr) + self.used
        self.used += size
        return p


cdef object _read_one(const char* path, uint64_t flags, uint64_t resolve, object fallback,
                      Arena arena, Py_ssize_t limit):
    """The file at ``path`` (its first ``limit`` bytes when ``limit`` >= 0): ``bytes`` of its
    size, or (with ``arena``) a view into the arena; None when absent or not a regular file;
    ``fallback`` on anything else."""
    cdef int fd, err
    cdef struct_stat st
    cdef Py_ssize_t size, done = 0, start = 0
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
    if 0 <= limit < size:
        size = limit
    try:
        if arena is None:
            out = PyBytes_FromStringAndSize(NULL, size)
            dst = PyBytes_AS_STRING(out)
        else:
            dst = arena.take(size)
            out = arena.buf
            start = arena.used - size
    except (MemoryError, OverflowError):   # OverflowError: more than a bytes object holds
        close(fd)
        return fallback                     # the Python path words it
    if size >= NOGIL_MIN:
        with nogil:
            done = _pread_all(fd, dst, size)
    else:
        done = _pread_all(fd, dst, size)
    close(fd)
    if done != size:
        return fallback
    if arena is None:
        return out
    return memoryview(out[start:start + size])


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


def read_whole(bytes root, list keys, uint64_t flags, uint64_t resolve, object fallback,
               Arena arena=None, list limits=None):
    """``[bytes | None | fallback]``, one per key of ``keys`` (``str``, or ``None`` for an item
    the caller handles itself, which yields ``fallback``): the whole file ``<root>/<key>``, or
    its first ``limits[i]`` bytes where ``limits`` gives a non-negative one. With ``arena``,
    files are views into it, laid out after what it holds since its last :meth:`Arena.reset`
    (the caller resets it per batch), instead of ``bytes``."""
    cdef Py_ssize_t rn = len(root), kn, i = -1, limit = -1
    if limits is not None and len(limits) != len(keys):
        raise ValueError("read_whole: one limit per key")
    cdef char buf[PATH_MAX]
    cdef const unsigned char* kp
    cdef list out = []
    if rn == 0 or rn >= PATH_MAX - 2:
        return [fallback] * len(keys)
    memcpy(buf, PyBytes_AS_STRING(root), rn)
    buf[rn] = 47
    for key in keys:
        i += 1
        if type(key) is not str:
            out.append(fallback)
            continue
        if limits is not None:
            lim = limits[i]
            # past the largest file there is (2**63 - 1 bytes), a limit is the whole file
            limit = -1 if lim < 0 or lim > PY_SSIZE_T_MAX else <Py_ssize_t>lim
        kb = (<str>key).encode("utf-8", "surrogatepass")
        kn = len(kb)
        kp = <const unsigned char*>PyBytes_AS_STRING(kb)
        if rn + 1 + kn >= PATH_MAX or not _plain_key(kp, kn):
            out.append(fallback)
            continue
        memcpy(buf + rn + 1, kp, kn)
        buf[rn + 1 + kn] = 0
        out.append(_read_one(buf, flags, resolve, fallback, arena, limit))
    return out


def plain_key(str key):
    """Whether the kernels read ``key`` without the Python path's checks (see the module
    docstring for what a plain key is)."""
    kb = key.encode("utf-8", "surrogatepass")
    return _plain_key(<const unsigned char*>PyBytes_AS_STRING(kb), len(kb))
