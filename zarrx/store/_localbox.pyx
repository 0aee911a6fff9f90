# zarrx-sources: csrc/zx_copy.c csrc/zx_dirlist.c
"""Read a box of an array stored one raw chunk per file below a local directory, straight
into the output, with no Python object per chunk.

The caller (:meth:`zarrx.store.local.LocalStore.box_reader`) hands over the path every chunk
key starts with, the key separator, the output (a C-contiguous array holding exactly the box),
the box's first cell, the chunk shape, the fill value's bytes and a range of chunks. Each chunk
of the range, in C order over the chunks the box touches, is opened with one ``openat2``
(``RESOLVE_NO_SYMLINKS``) and read without the GIL:

- a chunk whose cells are one run in the output (and in the file) is read straight into the
  output with one ``pread``: the whole file, with a one-byte probe after it that tells a file
  longer than a chunk (no ``fstat``), or the run inside the box, after an ``fstat`` for the size;
- any other chunk: the bytes from the first cell of its part to the last (the whole file, with
  the probe, or a range of it, after an ``fstat`` for the size) go into the reading thread's
  scratch buffer, and the C walker copies the part inside the box into the output. Reading
  the rows of a chunk straight to their places with ``preadv`` was slower here: 2.0 against
  2.5 GB/s for 256×256 float32 chunks of an 8192×8192 array, in interleaved runs;
- a missing file (``ENOENT``), or a directory at the chunk's path, is filled with the fill
  value, as a missing chunk reads everywhere else; so is every chunk of a folder that is not
  there (one failed open of the folder, which the call holds while it reads the folder's
  chunks);
- once ``MISS_MIN`` chunks of a folder were missing and at least ``LIST_MIN`` of the range's
  chunks in that folder are left, the folder is listed once (``csrc/zx_dirlist.h``: at most
  ``LIST_RATIO`` entries per chunk left, plus ``LIST_SLACK``, and only while it does not change
  and did not change too recently for its timestamps to show that)
  and the chunks left that the listing lacks are filled without an open: a sparse array costs
  a listing per folder rather than a failed open per chunk (the rule and why reads stay atomic
  per chunk: :mod:`zarrx.store._localread`, docs/RELIABILITY.md).

Anything else (another open error, a file whose size is not the chunk's, a short read) is left
to the caller: the chunk's index in the range comes back in the returned list, and the general
read path (which words the error) reads it. Every size and offset is checked before a byte is
touched.
"""
from libc.stddef cimport ptrdiff_t
from libc.stdint cimport int64_t, uint64_t
from libc.stdlib cimport malloc, free
from libc.string cimport memcmp, memcpy
from libc.errno cimport errno, ENOENT, EINTR, EISDIR
from posix.unistd cimport close
from posix.uio cimport iovec
from posix.stat cimport struct_stat, fstat, S_ISREG
from cpython.bytes cimport PyBytes_AS_STRING
cimport numpy as cnp

cdef extern from "<sys/uio.h>" nogil:
    Py_ssize_t preadv(int fd, const iovec* iov, int iovcnt, long offset)

from zarrx._clib.zx_copy cimport ZX_MAX_NDIM, zx_box, zx_copy_box
from zarrx._clib.zx_openat2 cimport zx_openat2, zx_openat2_at
from zarrx._clib.zx_dirlist cimport (zx_names, zx_names_clear, zx_names_free, zx_names_has,
                                     zx_names_init, zx_names_list, ZX_NAMES_OK,
                                     zx_dirlist_min_grain, zx_dirlist_recent_count)

cdef extern from "<fcntl.h>" nogil:
    int O_RDONLY, O_DIRECTORY, O_CLOEXEC

cnp.import_array()

cdef enum:
    PATH_MAX = 4096
    DIGITS = 20                 # an int64 in decimal
    # a folder's listing (the same rule as zarrx.store._localread's)
    MISS_MIN = 2                # missing chunks of a folder before it is listed ...
    LIST_MIN = 16               # ... when at least this many of its chunks are left
    LIST_RATIO = 4              # a listing reads at most this many entries per chunk left ...
    LIST_SLACK = 64             # ... plus this many

# what the calls opened and listed (lookups())
cdef Py_ssize_t _file_opens = 0, _folder_opens = 0, _listings = 0

cdef int64_t INT64_MAX = 0x7FFFFFFFFFFFFFFF    # no axis, box or chunk reaches further

cdef enum Outcome:
    DONE = 0
    FILL = 1
    FALLBACK = 2
    ABSENT = 3                  # no file (ENOENT): filled, and counted towards a listing


cdef struct Geometry:
    int ndim
    size_t itemsize
    int64_t start[ZX_MAX_NDIM]      # the box's first cell
    int64_t extent[ZX_MAX_NDIM]     # the box's shape (= the output's)
    int64_t chunk[ZX_MAX_NDIM]      # the chunk shape
    int64_t first[ZX_MAX_NDIM]      # the first chunk the box touches, per axis
    int64_t count[ZX_MAX_NDIM]      # chunks the box touches, per axis
    ptrdiff_t cstride[ZX_MAX_NDIM]  # bytes per step in a chunk file (C order)
    ptrdiff_t ostride[ZX_MAX_NDIM]  # bytes per step in the output (C order)
    size_t nbytes                   # a chunk file's size


cdef int _itoa(int64_t v, char* dst) noexcept nogil:
    """Write ``v`` (>= 0) in decimal at ``dst``; return the number of digits."""
    cdef char tmp[DIGITS]
    cdef int n = 0, i
    while True:
        tmp[n] = <char>(48 + v % 10)
        n += 1
        v //= 10
        if v == 0:
            break
    for i in range(n):
        dst[i] = tmp[n - 1 - i]
    return n


cdef void _chunk_at(Py_ssize_t i, int ndim, const int64_t* first, const int64_t* count,
                    int64_t* k) noexcept nogil:
    """The grid coordinates ``k`` of the ``i``-th chunk, in C order, of the block of chunks
    starting at ``first`` with ``count`` chunks per axis."""
    cdef int d
    for d in range(ndim - 1, -1, -1):
        k[d] = first[d] + i % count[d]
        i //= count[d]


cdef char* _key_path(char* pp, int ndim, const int64_t* k, char sep) noexcept nogil:
    """Write the coordinates ``k`` joined by ``sep`` at ``pp``, then a NUL; return where the
    NUL is (the caller has room for DIGITS + 1 bytes per axis)."""
    cdef int d
    for d in range(ndim):
        if d:
            pp[0] = sep
            pp += 1
        pp += _itoa(k[d], pp)
    pp[0] = 0
    return pp


cdef Py_ssize_t _hold_folder(HeldDir* h, char* path, Py_ssize_t end,
                             uint64_t resolve) noexcept nogil:
    """Hold the folder of the absolute ``path`` (``end`` bytes long, NUL-terminated): unless
    it is the folder ``h`` holds already, close that and open this one (``h.fd``, or -1 with
    ``h.err`` set). Returns where the folder's path ends (the last '/'); the name follows."""
    cdef Py_ssize_t cut = end
    while path[cut] != 47:                  # an absolute path: a '/' is there
        cut -= 1
    if cut == h.len and memcmp(path, h.path, <size_t>cut) == 0:
        return cut
    _release_folder(h)
    path[cut] = 0
    h.fd = zx_openat2(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, resolve)
    h.err = errno if h.fd < 0 else 0
    path[cut] = 47
    memcpy(h.path, path, <size_t>cut)
    h.len = cut
    return cut


cdef void _release_folder(HeldDir* h) noexcept nogil:
    """Close the folder ``h`` holds (if any) and forget it."""
    if h.fd >= 0:
        close(h.fd)
    h.fd = -1
    h.len = -1


cdef void _part(const Geometry* g, const int64_t* k, zx_box* box, ptrdiff_t* src_off,
                ptrdiff_t* dst_off) noexcept nogil:
    """The part of chunk ``k`` inside the box, as ``box`` (counts; operand 0 the chunk file's
    strides, operand 1 the output's) and the byte offsets of its first cell in the file
    (``src_off``) and in the output (``dst_off``)."""
    cdef int d
    cdef int64_t lo, hi, end
    box.ndim = g.ndim
    box.itemsize = g.itemsize
    src_off[0] = dst_off[0] = 0
    for d in range(g.ndim):
        lo = k[d] * g.chunk[d]                  # the chunk starts inside the box: lo < end
        end = g.start[d] + g.extent[d]          # fits: read_box checked it
        # the chunk's end, clipped to the box's; never lo + chunk, which passes 2**63 - 1 for
        # the last chunk of an axis that long
        hi = lo + g.chunk[d] if g.chunk[d] < end - lo else end
        if lo < g.start[d]:
            lo = g.start[d]
        box.count[d] = hi - lo
        src_off[0] += (lo - k[d] * g.chunk[d]) * g.cstride[d]
        dst_off[0] += (lo - g.start[d]) * g.ostride[d]
        box.stride[0][d] = g.cstride[d]
        box.stride[1][d] = g.ostride[d]


cdef Outcome _failed(int err) noexcept nogil:
    """What a failed read means: a directory at the chunk's path reads as a missing chunk."""
    return FILL if err == EISDIR else FALLBACK


cdef Outcome _read_exact(int fd, iovec* iov, int n, size_t want, int64_t offset,
                         bint last, char* probe) noexcept nogil:
    """Read ``want`` bytes at ``offset`` into the ``n`` buffers of ``iov``; with ``last``, a
    one-byte probe after them makes a file longer than ``offset + want`` a failure too."""
    cdef Py_ssize_t got
    cdef size_t done = 0
    cdef int i = 0
    if last:
        iov[n].iov_base = probe
        iov[n].iov_len = 1
        n += 1
    while True:
        got = preadv(fd, iov + i, n - i, offset + <int64_t>done)
        if got < 0:
            if errno == EINTR:
                continue
            return _failed(errno)
        done += <size_t>got
        if got == 0 or done >= want:
            break
        while got > 0 and <size_t>got >= iov[i].iov_len:      # a short read: go on after it
            got -= iov[i].iov_len
            i += 1
        iov[i].iov_base = <char*>iov[i].iov_base + got
        iov[i].iov_len -= got
    return DONE if done == want else FALLBACK


cdef Outcome _read_chunk(const Geometry* g, const HeldDir* folder, const char* name,
                         uint64_t flags, uint64_t resolve, char* out, char* buf,
                         const int64_t* k) noexcept nogil:
    """Read chunk ``k`` (grid coordinates), the file ``name`` in ``folder``, into its part of
    the output."""
    cdef int d, fd, first_long = -1
    cdef ptrdiff_t src_off, dst_off
    cdef size_t span
    cdef bint one_run = True
    cdef struct_stat st
    cdef zx_box box
    cdef iovec iov[2]
    cdef char probe
    cdef Outcome res
    _part(g, k, &box, &src_off, &dst_off)
    for d in range(g.ndim):
        # one run: past the first axis with more than one cell, every axis is whole in both
        if first_long >= 0:
            if box.count[d] != g.chunk[d] or box.count[d] != g.extent[d]:
                one_run = False
        elif box.count[d] > 1:
            first_long = d
    if folder.fd < 0:               # a missing folder holds no chunk
        return FILL if folder.err == ENOENT else FALLBACK
    fd = zx_openat2_at(folder.fd, name, flags, resolve)
    if fd < 0:
        return ABSENT if errno == ENOENT else FALLBACK
    # the bytes from the part's first cell to its last: straight into the output when they
    # are one run there, else into the scratch buffer for a strided copy
    span = g.itemsize
    for d in range(g.ndim):
        span += <size_t>((box.count[d] - 1) * g.cstride[d])
    iov[0].iov_base = (out + dst_off) if one_run else buf
    iov[0].iov_len = span
    if span == g.nbytes:            # the whole file: the probe byte tells a longer one
        res = _read_exact(fd, iov, 1, span, 0, True, &probe)
    elif fstat(fd, &st) != 0:       # a range of it: the size from a stat
        res = FALLBACK
    elif not S_ISREG(st.st_mode):
        res = FILL
    elif <size_t>st.st_size != g.nbytes:
        res = FALLBACK
    else:
        res = _read_exact(fd, iov, 1, span, src_off, False, &probe)
    if res == DONE and not one_run:
        zx_copy_box(&box, buf, out + dst_off)
    close(fd)
    return res


cdef void _fill_chunk(const Geometry* g, const char* fill, char* out,
                      const int64_t* k) noexcept nogil:
    """Fill chunk ``k``'s part of the output with the item at ``fill``."""
    cdef int d
    cdef ptrdiff_t src_off, dst_off
    cdef zx_box box
    _part(g, k, &box, &src_off, &dst_off)
    for d in range(g.ndim):
        box.stride[0][d] = 0                # the fill item, broadcast
    zx_copy_box(&box, fill, out + dst_off)


cdef int _check_box_call(str what, int ndim, cnp.ndarray scratch, tuple start, tuple chunk,
                         str sep, bytes base) except -1:
    """The checks the box kernels (:func:`read_box`, and ``write_box`` of
    :mod:`zarrx.store._localboxwrite`) share: a ``ValueError`` naming ``what`` and the first
    bad argument."""
    cdef Py_ssize_t bn = len(base)
    if ndim < 1 or ndim > ZX_MAX_NDIM:
        raise ValueError(f"{what}: expected 1 to {ZX_MAX_NDIM} dimensions, found {ndim}")
    if not (cnp.PyArray_IS_C_CONTIGUOUS(scratch) and cnp.PyArray_ISWRITEABLE(scratch)):
        raise ValueError(f"{what}: expected a writable C-contiguous scratch array")
    if len(start) != ndim or len(chunk) != ndim:
        raise ValueError(f"{what}: expected {ndim} start and chunk entries, found "
                         f"{len(start)} and {len(chunk)}")
    if len(sep) != 1 or sep not in "/.":
        raise ValueError(f"{what}: expected separator '/' or '.', found {sep!r}")
    if bn == 0 or PyBytes_AS_STRING(base)[0] != 47:
        raise ValueError(f"{what}: expected an absolute base path")
    # the longest path: base, then per axis up to DIGITS digits and a separator, then a NUL
    if bn + ndim * (DIGITS + 1) + 1 > PATH_MAX:
        raise ValueError(f"{what}: a chunk path would exceed {PATH_MAX} bytes")
    return 0


def read_box(bytes base, str sep, cnp.ndarray out, tuple start, tuple chunk, bytes fill,
             cnp.ndarray scratch, uint64_t flags, uint64_t resolve, Py_ssize_t lo,
             Py_ssize_t hi):
    """Read chunks ``lo`` to ``hi`` (C order over the chunks the box touches) into ``out``;
    return the indices (in that order) of the chunks the caller must read itself.

    ``base``: the path of the array's chunk keys up to the first coordinate (for example
    ``b"/data/a/c/"``); ``sep``: the separator between coordinates; ``out``: a C-contiguous,
    writable array of the box's shape, of fixed-size items; ``start``: the box's first cell;
    ``chunk``: the chunk shape (a file holds a whole chunk, C order, items of ``out``'s size);
    ``fill``: one item; ``scratch``: a writable C-contiguous array the call may overwrite (the
    reading thread's, reused from call to call) of at least the bytes the part of a chunk inside
    the box can span in its file (``itemsize`` plus, per axis, ``min(chunk, extent) - 1`` times
    the chunk's stride), which is no more than a chunk's bytes."""
    cdef Geometry g
    cdef int d, ndim = cnp.PyArray_NDIM(out)
    cdef Py_ssize_t bn = len(base), i, end, cut
    cdef int64_t k[ZX_MAX_NDIM]
    cdef char path[PATH_MAX]
    cdef char held[PATH_MAX]
    cdef HeldDir folder
    cdef char* buf
    cdef char* dst = <char*>cnp.PyArray_DATA(out)
    cdef const char* fillp
    cdef char csep
    cdef Outcome res
    cdef list fallback = []
    cdef unsigned char* marks
    cdef zx_names names
    cdef Py_ssize_t row, held_row = -1, row_end = 0, left, misses = 0
    cdef Py_ssize_t file_opens = 0, folder_opens = 0, listings = 0
    cdef bint tried = False, listed = False
    cdef bint rows = sep == "/" and ndim > 1
    global _file_opens, _folder_opens, _listings
    zx_names_init(&names)
    if not (cnp.PyArray_IS_C_CONTIGUOUS(out) and cnp.PyArray_ISWRITEABLE(out)) \
            or out.dtype.hasobject:
        raise ValueError("read_box: expected a writable C-contiguous output of fixed-size items")
    _check_box_call("read_box", ndim, scratch, start, chunk, sep, base)
    folder.fd, folder.len, folder.path = -1, -1, held
    g.itemsize = <size_t>cnp.PyArray_ITEMSIZE(out)
    if g.itemsize == 0 or len(fill) != <Py_ssize_t>g.itemsize:
        raise ValueError(f"read_box: expected a fill value of {g.itemsize} bytes, found "
                         f"{len(fill)}")
    g.ndim = ndim
    g.nbytes = g.itemsize
    cdef Py_ssize_t nchunks = 1
    for d in range(ndim):
        g.start[d] = start[d]
        g.extent[d] = cnp.PyArray_DIMS(out)[d]
        g.chunk[d] = chunk[d]
        if g.chunk[d] <= 0 or g.extent[d] <= 0 or g.start[d] < 0:
            raise ValueError(f"read_box: expected chunk > 0, extent > 0 and start >= 0 on axis "
                             f"{d}, found {g.chunk[d]}, {g.extent[d]} and {g.start[d]}")
        if g.chunk[d] > INT64_MAX // <int64_t>g.nbytes:
            raise ValueError("read_box: the chunk size overflows")
        if g.start[d] > INT64_MAX - g.extent[d]:
            raise ValueError(f"read_box: the box on axis {d} (start {g.start[d]}, extent "
                             f"{g.extent[d]}) ends past 2**63 - 1")
        g.nbytes *= <size_t>g.chunk[d]
        g.first[d] = g.start[d] // g.chunk[d]
        g.count[d] = (g.start[d] + g.extent[d] - 1) // g.chunk[d] - g.first[d] + 1
        nchunks *= g.count[d]
    g.cstride[ndim - 1] = g.ostride[ndim - 1] = <ptrdiff_t>g.itemsize
    for d in range(ndim - 2, -1, -1):
        g.cstride[d] = g.cstride[d + 1] * g.chunk[d + 1]
        g.ostride[d] = g.ostride[d + 1] * g.extent[d + 1]
    # a chunk's part inside the box spans at most min(chunk, extent) cells per axis in its file
    cdef size_t need = g.itemsize
    for d in range(ndim):
        need += <size_t>((min(g.chunk[d], g.extent[d]) - 1) * g.cstride[d])
    if <size_t>cnp.PyArray_NBYTES(scratch) < need:
        raise ValueError(f"read_box: expected a scratch array of at least {need} bytes, "
                         f"found {cnp.PyArray_NBYTES(scratch)}")
    buf = <char*>cnp.PyArray_DATA(scratch)
    if lo < 0 or hi > nchunks or lo > hi:
        raise ValueError(f"read_box: chunk range {lo}..{hi} is outside 0..{nchunks}")
    marks = <unsigned char*>malloc(<size_t>(hi - lo) + 1)
    if marks == NULL:
        raise MemoryError()
    memcpy(path, PyBytes_AS_STRING(base), bn)
    csep = ord(sep)
    fillp = PyBytes_AS_STRING(fill)
    try:
        with nogil:
            for i in range(lo, hi):
                _chunk_at(i, ndim, g.first, g.count, k)
                end = _key_path(path + bn, ndim, k, csep) - path
                # with '/' between coordinates, each row of chunks (all coordinates but the
                # last) is a folder of its own; with '.', all of them share one
                row = i // g.count[ndim - 1] if rows else 0
                if row != held_row:
                    held_row, misses, tried, listed = row, 0, False, False
                    row_end = min(hi, (row + 1) * g.count[ndim - 1]) if rows else hi
                    folder_opens += 1
                cut = _hold_folder(&folder, path, end, resolve)
                if listed and not zx_names_has(&names, path + cut + 1, end - cut - 1):
                    res = FILL          # not in the folder's listing: no open
                else:
                    file_opens += folder.fd >= 0
                    res = _read_chunk(&g, &folder, path + cut + 1, flags, resolve, dst, buf, k)
                    if res == ABSENT:
                        misses += 1
                        left = row_end - i - 1
                        if not tried and misses >= MISS_MIN and left >= LIST_MIN:
                            tried = True
                            listings += 1
                            listed = zx_names_list(&names, folder.fd, LIST_RATIO * <size_t>left
                                                   + LIST_SLACK) == ZX_NAMES_OK
                        res = FILL
                if res == FILL:
                    _fill_chunk(&g, fillp, dst, k)
                marks[i - lo] = res == FALLBACK
            _release_folder(&folder)
        for i in range(lo, hi):
            if marks[i - lo]:
                fallback.append(i)
    finally:
        free(marks)
        zx_names_free(&names)
        _file_opens += file_opens
        _folder_opens += folder_opens
        _listings += listings
    return fallback


def lookups():
    """How many chunk files and folders the calls opened, and how many folders they listed,
    since the process started (for tests counting system calls)."""
    return {"file_opens": _file_opens, "folder_opens": _folder_opens, "listings": _listings}


def listings_too_recent():
    """How many listings of this module were refused because the folder had changed too
    recently (see :func:`zarrx.store._localread.listings_too_recent`)."""
    return zx_dirlist_recent_count()


def min_timestamp_grain(long long ns=-1):
    """This module's :func:`zarrx.store._localread.min_timestamp_grain`."""
    return zx_dirlist_min_grain(ns)
