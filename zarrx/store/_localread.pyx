# zarrx-sources: csrc/zx_dirlist.c
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

**Absent keys in bulk.** A sparse array read whole asks for many keys of which few exist; one
failed open per absent key is most of such a read's cost. So consecutive keys of one folder (a
*run*: a read asks for chunks in C order, so the chunks of a row share their folder) of at least
``HOLD_MIN`` keys share one open of the folder, and a folder that is not there (no chunk of that
row stored) reads the whole run as absent for one failed open. Once ``MISS_MIN`` keys of a run
were absent and ``LIST_MIN`` or more are left, the folder is listed once (``getdents64``; see
``csrc/zx_dirlist.h``), and each key left that the listing lacks reads as absent without an
open. A listing is dropped, and the keys left are opened one by one as before, when the folder
holds more than ``LIST_RATIO`` entries per key left (plus ``LIST_SLACK``; a folder whose size
says so is not read at all), changed while it was read, or changed too recently for its
timestamps to show that (within the current tick of the clock file systems stamp with, or of
the file system's granularity: ``csrc/zx_dirlist.h``). The bound comes from what each
costs in CPU time on ext4: a listed entry about 0.37 µs, a failed open 1.3-1.8 µs (4.4-7 µs
for a name never looked up before), so a listing within the bound costs at most about the
opens it replaces, and one given up at most doubles them. Dense reads miss nothing and never
list; a few keys of a folder (fewer than ``LIST_MIN`` left) are never worth a listing. Why
this keeps reads whole per chunk: docs/RELIABILITY.md ("Sparse reads from a LocalStore").
"""
from libc.stdint cimport uint64_t
from libc.string cimport memcmp, memcpy
from libc.errno cimport errno, ENOENT, ENOTDIR, EINTR
from posix.unistd cimport close, pread
from posix.stat cimport struct_stat, fstat, S_ISREG
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.pyport cimport PY_SSIZE_T_MAX
import numpy as np
cimport numpy as cnp

cnp.import_array()

from zarrx._clib.zx_dirlist cimport (zx_names, zx_names_clear, zx_names_free, zx_names_has,
                                     zx_names_init, zx_names_list, ZX_NAMES_OK,
                                     zx_dirlist_min_grain, zx_dirlist_recent_count,
                                     zx_stamps_recent)
from zarrx._clib.zx_openat2 cimport zx_openat2, zx_openat2_at

cdef extern from "<fcntl.h>" nogil:
    int O_RDONLY, O_DIRECTORY, O_CLOEXEC, AT_FDCWD

cdef enum:
    PATH_MAX = 4096
    NAME_MAX = 255
    MARK_LEN = 11            # len(".zarrx-tmp-")
    NOGIL_MIN = 65536        # files this large are read without the GIL
    # absent keys in bulk (see the module docstring; the figures: docs/performance.md)
    HOLD_MIN = 4             # a run of this many keys opens its folder once
    MISS_MIN = 2             # absent keys of a run before its folder is listed ...
    LIST_MIN = 16            # ... when at least this many keys of it are left
    LIST_RATIO = 4           # a listing read at most this many entries per key left ...
    LIST_SLACK = 64          # ... plus this many (metadata documents, temporary files)
cdef const char* MARK = b".zarrx-tmp-"

# what the reads opened and listed (lookups())
cdef Py_ssize_t _file_opens = 0, _folder_opens = 0, _listings = 0


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


cdef object _read_one(int at, const char* path, uint64_t flags, uint64_t resolve,
                      object fallback, Arena arena, Py_ssize_t limit, bint* absent):
    """The file at ``path`` (relative to the folder ``at``, or absolute with ``AT_FDCWD``; its
    first ``limit`` bytes when ``limit`` >= 0): ``bytes`` of its size, or (with ``arena``) a
    view into the arena; None when absent (``absent`` set) or not a regular file; ``fallback``
    on anything else."""
    cdef int fd, err
    cdef struct_stat st
    cdef Py_ssize_t size, done = 0, start = 0
    cdef char* dst
    global _file_opens
    # open and fstat keep the GIL (a few microseconds): releasing it for them would hand it to
    # another thread that then holds it for up to the interpreter's switch interval
    _file_opens += 1
    fd = zx_openat2_at(at, path, flags, resolve)
    err = errno
    if fd >= 0 and fstat(fd, &st) != 0:
        err = errno
        close(fd)
        fd = -2
    if fd < 0:
        if fd == -1 and err == ENOENT:
            absent[0] = True
            return None
        return fallback
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


cdef Py_ssize_t _folder_len(bytes kb):
    """Where the folder of the key ``kb`` ends (its last '/'); -1 for a key at the root."""
    cdef const char* p = PyBytes_AS_STRING(kb)
    cdef Py_ssize_t i = len(kb) - 1
    while i >= 0 and p[i] != 47:
        i -= 1
    return i


def read_whole(bytes root, list keys, uint64_t flags, uint64_t resolve, object fallback,
               Arena arena=None, list limits=None):
    """``[bytes | None | fallback]``, one per key of ``keys`` (``str``, or ``None`` for an item
    the caller handles itself, which yields ``fallback``): the whole file ``<root>/<key>``, or
    its first ``limits[i]`` bytes where ``limits`` gives a non-negative one. With ``arena``,
    files are views into it, laid out after what it holds since its last :meth:`Arena.reset`
    (the caller resets it per batch), instead of ``bytes``.

    Consecutive keys in one folder (a run; a read asks for chunks in C order, so a row's keys
    are one) share one open of the folder when there are at least ``HOLD_MIN`` of them: a
    folder that is not there reads all of them as absent at the cost of one failed open. In a
    held folder, once ``MISS_MIN`` keys of the run were absent and at least ``LIST_MIN`` keys
    of it are left, the folder is listed (see the module docstring) and the keys left that the
    listing lacks read as absent without an open."""
    cdef Py_ssize_t rn = len(root), i, j, n = len(keys), limit = -1, fl
    if limits is not None and len(limits) != n:
        raise ValueError("read_whole: one limit per key")
    cdef list out = [fallback] * n
    cdef list kbs
    if rn == 0 or rn >= PATH_MAX - 2:
        return out
    kbs = _kernel_keys(keys, rn)
    cdef Reader rd = Reader(root, flags, resolve, fallback, arena)
    try:
        i = _next_run(kbs, 0, &j, &fl)
        while i < n:
            rd.run(kbs, limits, out, i, j, fl)
            i = _next_run(kbs, j, &j, &fl)
    finally:
        rd.release()
    return out


cdef list _kernel_keys(list keys, Py_ssize_t rn):
    """The UTF-8 bytes of each key the kernels read (``str``, plain, short enough beside a
    root of ``rn`` bytes), None for the others (read by the Python path)."""
    cdef Py_ssize_t i, n = len(keys), kn
    cdef list kbs = [None] * n
    cdef bytes kb
    cdef const unsigned char* kp
    for i in range(n):
        key = keys[i]
        if type(key) is str:
            kb = (<str>key).encode("utf-8", "surrogatepass")
            kn = len(kb)
            kp = <const unsigned char*>PyBytes_AS_STRING(kb)
            if rn + 1 + kn < PATH_MAX and _plain_key(kp, kn):
                kbs[i] = kb
    return kbs


cdef Py_ssize_t _next_run(list kbs, Py_ssize_t i, Py_ssize_t* end, Py_ssize_t* fl) except -1:
    """The start of the next run of keys from ``i`` (the keys the kernels read, consecutive,
    in one folder: ``kbs[start:end[0]]``, whose folder name is ``fl[0]`` bytes long), or
    ``len(kbs)`` when none is left."""
    cdef Py_ssize_t n = len(kbs), j
    while i < n and kbs[i] is None:
        i += 1
    if i == n:
        return n
    cdef bytes kb = kbs[i]
    fl[0] = _folder_len(kb)
    j = i + 1
    while j < n and kbs[j] is not None and _same_folder(kbs[j], kb, fl[0]):
        j += 1
    end[0] = j
    return i


cdef bint _same_folder(bytes a, bytes b, Py_ssize_t fl):
    """Whether key ``a`` lies in the folder of ``b`` (which ends at ``fl``)."""
    cdef const char* p = PyBytes_AS_STRING(a)
    cdef Py_ssize_t n = len(a), k
    if n <= fl + 1 or (fl >= 0 and (p[fl] != 47 or memcmp(p, PyBytes_AS_STRING(b), fl) != 0)):
        return False
    for k in range(fl + 1, n):
        if p[k] == 47:
            return False
    return True


cdef Py_ssize_t _limit_at(list limits, Py_ssize_t i) except -2:
    if limits is None:
        return -1
    lim = limits[i]
    # past the largest file there is (2**63 - 1 bytes), a limit is the whole file
    return -1 if lim < 0 or lim > PY_SSIZE_T_MAX else <Py_ssize_t>lim


cdef class Reader:
    """The state of one :func:`read_whole` call: the path buffer, the folder held and its
    listing."""
    cdef char path[PATH_MAX]
    cdef Py_ssize_t rn
    cdef uint64_t flags, resolve
    cdef object fallback
    cdef Arena arena
    cdef zx_names names

    def __cinit__(self, bytes root, uint64_t flags, uint64_t resolve, object fallback,
                  Arena arena):
        self.rn = len(root)
        memcpy(self.path, PyBytes_AS_STRING(root), self.rn)
        self.path[self.rn] = 47
        self.flags, self.resolve, self.fallback, self.arena = flags, resolve, fallback, arena
        zx_names_init(&self.names)

    cdef void release(self) noexcept:
        zx_names_free(&self.names)

    def __dealloc__(self):
        zx_names_free(&self.names)

    cdef object one(self, bytes kb, Py_ssize_t limit, bint* absent):
        """The key ``kb`` read by its whole path."""
        cdef Py_ssize_t kn = len(kb)
        memcpy(self.path + self.rn + 1, PyBytes_AS_STRING(kb), kn)
        self.path[self.rn + 1 + kn] = 0
        return _read_one(AT_FDCWD, self.path, self.flags, self.resolve, self.fallback,
                         self.arena, limit, absent)

    cdef int open_folder(self, bytes kb, Py_ssize_t fl) noexcept:
        """A descriptor of the folder of the key ``kb`` (ending at ``fl``; -1: the root), or
        -1 with ``errno`` set."""
        cdef int at
        if fl < 0:                          # keys at the root: the root is the folder
            self.path[self.rn] = 0
        else:
            memcpy(self.path + self.rn + 1, PyBytes_AS_STRING(kb), fl)
            self.path[self.rn + 1 + fl] = 0
        at = zx_openat2(self.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, self.resolve)
        self.path[self.rn] = 47             # (errno is left as the open set it)
        return at

    cdef int run(self, list kbs, list limits, list out, Py_ssize_t i, Py_ssize_t j,
                 Py_ssize_t fl) except -1:
        """Read the keys ``i`` to ``j`` of ``kbs``, all in the folder ending at ``fl``."""
        cdef bint absent = False, listed = False, tried = False
        cdef const char* name
        cdef Py_ssize_t k, misses = 0, left
        cdef int at, err, got
        cdef bytes kb
        global _folder_opens, _listings
        if j - i < HOLD_MIN:                # a few keys: each by its whole path
            for k in range(i, j):
                out[k] = self.one(kbs[k], _limit_at(limits, k), &absent)
            return 0
        _folder_opens += 1
        at = self.open_folder(kbs[i], fl)
        if at < 0:
            err = errno
            for k in range(i, j):
                if err == ENOENT or err == ENOTDIR:     # no folder there: no key in it
                    out[k] = None
                else:                   # anything else: by whole paths, as a lone key reads
                    out[k] = self.one(kbs[k], _limit_at(limits, k), &absent)
            return 0
        try:
            for k in range(i, j):
                kb = kbs[k]
                name = PyBytes_AS_STRING(kb) + fl + 1
                if listed and not zx_names_has(&self.names, name, len(kb) - fl - 1):
                    out[k] = None
                    continue
                absent = False
                out[k] = _read_one(at, name, self.flags, self.resolve, self.fallback,
                                   self.arena, _limit_at(limits, k), &absent)
                if not absent:
                    continue
                misses += 1
                left = j - k - 1
                if not tried and misses >= MISS_MIN and left >= LIST_MIN:
                    tried = True
                    _listings += 1
                    got = zx_names_list(&self.names, at, LIST_RATIO * <size_t>left + LIST_SLACK)
                    listed = got == ZX_NAMES_OK
        finally:
            close(at)
            zx_names_clear(&self.names)
        return 0


def absent_keys(bytes root, list keys, uint64_t resolve):
    """``[bool]``, one per key of ``keys`` (``str``): True for a key known not to be there
    (False: not known) from one look at its folder, taken where at least ``LIST_MIN``
    consecutive keys share the folder: its open failing with ``ENOENT`` (no key in it), else
    its listing (under the bounds of :func:`read_whole`'s). For reads of objects too large for
    the adaptive rule to matter (shards), which then skip those known absent."""
    cdef Py_ssize_t rn = len(root), i, j, k, n = len(keys), fl
    cdef list out = [False] * n
    cdef list kbs
    cdef int at, got
    global _folder_opens, _listings
    if rn == 0 or rn >= PATH_MAX - 2:
        return out
    kbs = _kernel_keys(keys, rn)
    cdef Reader rd = Reader(root, 0, resolve, None, None)
    try:
        i = _next_run(kbs, 0, &j, &fl)
        while i < n:
            kb = kbs[i]
            if j - i >= LIST_MIN:
                _folder_opens += 1
                at = rd.open_folder(kb, fl)
                if at < 0:
                    if errno == ENOENT or errno == ENOTDIR:
                        for k in range(i, j):
                            out[k] = True
                else:
                    _listings += 1
                    got = zx_names_list(&rd.names, at, LIST_RATIO * <size_t>(j - i) + LIST_SLACK)
                    close(at)
                    if got == ZX_NAMES_OK:
                        for k in range(i, j):
                            kb = kbs[k]
                            out[k] = not zx_names_has(&rd.names, PyBytes_AS_STRING(kb) + fl + 1,
                                                      len(kb) - fl - 1)
            i = _next_run(kbs, j, &j, &fl)
    finally:
        rd.release()
    return out


def lookups():
    """How many files and folders the reads of this module opened, and how many folders they
    listed, since the process started (for tests counting system calls)."""
    return {"file_opens": _file_opens, "folder_opens": _folder_opens, "listings": _listings}


def listings_too_recent():
    """How many listings of this module were refused since the process started because the
    folder had changed too recently for its timestamps to show a change while it was read."""
    return zx_dirlist_recent_count()


def min_timestamp_grain(long long ns=-1):
    """The least granularity, in nanoseconds, assumed of every folder's timestamps (0: what
    they suggest), set to ``ns`` when given (>= 0); returns the value before. For tests of file
    systems with coarse timestamps; :mod:`zarrx.store._localbox` holds its own."""
    return zx_dirlist_min_grain(ns)


cdef bint _stamps_recent(long long now_s, long now_ns, long long c_s, long c_ns,
                         long long m_s, long m_ns) noexcept nogil:
    return zx_stamps_recent(now_s, now_ns, c_s, c_ns, m_s, m_ns) != 0


def stamps_recent(now, ctime, mtime):
    """Whether a folder with these ``(seconds, nanoseconds)`` timestamps is too recent, at the
    clock reading ``now``, for its listing to be trusted (the rule of ``csrc/zx_dirlist.h``)."""
    return bool(zx_stamps_recent(now[0], now[1], ctime[0], ctime[1], mtime[0], mtime[1]))


def stamps_recent_ns(long long now, long long ctime, long long mtime):
    """:func:`stamps_recent` of nanoseconds since the epoch (an ``OverflowError`` past 64
    bits), for a caller that makes one per file it opens."""
    return bool(zx_stamps_recent(_secs(now), _nsecs(now), _secs(ctime), _nsecs(ctime),
                                 _secs(mtime), _nsecs(mtime)))


cdef inline long long _secs(long long ns) noexcept:
    return ns // 1000000000 if ns >= 0 else -((-(ns + 1)) // 1000000000) - 1


cdef inline long _nsecs(long long ns) noexcept:
    cdef long long r = ns % 1000000000        # (C's: the sign of ns)
    return <long>(r + 1000000000 if r < 0 else r)


def plain_key(str key):
    """Whether the kernels read ``key`` without the Python path's checks (see the module
    docstring for what a plain key is)."""
    kb = key.encode("utf-8", "surrogatepass")
    return _plain_key(<const unsigned char*>PyBytes_AS_STRING(kb), len(kb))
