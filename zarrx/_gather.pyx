# zarrx-sources: csrc/zx_copy.c csrc/zx_crc32c.c
"""Gather/scatter between chunk arrays and caller arrays: n-d strided boxes in C.

Every argument is checked here, with the GIL held, so that each element a box touches lies
inside both arrays; only then does the C walker (csrc/zx_copy.c) run without the GIL. A box's
geometry goes to C through :c:type:`zx_box` (``_array_box`` below marshals numpy's shape and
strides into it).
"""
from libc.stddef cimport ptrdiff_t
from libc.stdlib cimport free, malloc
from libc.string cimport memset
from cpython.buffer cimport PyBUF_C_CONTIGUOUS, PyBUF_WRITABLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize

cimport numpy as cnp
import numpy as np

from zarrx._clib.zx_copy cimport (
    ZX_MAX_NDIM, zx_box, zx_box_all_equal, zx_box_init, zx_box_offset, zx_box_strides,
    zx_copy_box, zx_is_all,
)
from zarrx._clib.zx_crc32c cimport zx_crc32c
from zarrx._clib.zx_endian cimport zx_store_le32
from zarrx._outer_copy import copy_outer
from zarrx.errors import IndexingError

cnp.import_array()

if sizeof(cnp.npy_intp) != sizeof(ptrdiff_t):      # numpy's dims and strides are read as C's
    raise ImportError("zarrx._gather: npy_intp and ptrdiff_t differ in size on this platform")

MAX_NDIM = ZX_MAX_NDIM

cdef char _NO_BYTES[1]      # the item of a 0-byte fill value (where a pointer must be given)


cdef inline int _array_box(zx_box* box, cnp.ndarray a, int k) except -1:
    """Marshal ``a``'s rank, item size, shape and strides into ``box`` (as operand ``k``)."""
    if zx_box_init(box, cnp.PyArray_NDIM(a), <size_t>cnp.PyArray_ITEMSIZE(a),
                   <const ptrdiff_t*>cnp.PyArray_DIMS(a)) < 0:
        raise IndexingError(f"rank {cnp.PyArray_NDIM(a)} exceeds the maximum of {ZX_MAX_NDIM}")
    zx_box_strides(box, k, <const ptrdiff_t*>cnp.PyArray_STRIDES(a), NULL)
    return 0


cdef object _as_tuple(object value, int ndim, str name, object default):
    if value is None:
        if default is None:
            raise IndexingError(f"{name}: expected a tuple of {ndim} integers, found None")
        return (default,) * ndim
    try:
        t = tuple(int(v) for v in value)
    except (TypeError, ValueError) as exc:
        raise IndexingError(f"{name}: expected a tuple of {ndim} integers, found {value!r}") from exc
    if len(t) != ndim:
        raise IndexingError(f"{name}: expected {ndim} entries (one per axis), found {len(t)}: {value!r}")
    return t


cdef _check_array(object arr, str name):
    if not isinstance(arr, np.ndarray):
        raise IndexingError(f"{name}: expected a numpy array, found {type(arr).__name__}")
    if arr.dtype.hasobject:
        raise IndexingError(f"{name}: dtype {arr.dtype} holds Python objects; "
                            f"expected a fixed-size dtype")
    if arr.ndim > ZX_MAX_NDIM:
        raise IndexingError(f"{name}: rank {arr.ndim} exceeds the maximum of {ZX_MAX_NDIM}")


cdef _check_box(tuple shape, tuple start, tuple count, tuple step, str name):
    """Every element start + i*step (0 <= i < count) must lie in [0, shape) on each axis."""
    cdef Py_ssize_t ax
    for ax in range(len(shape)):
        n, s, st, c = shape[ax], start[ax], step[ax], count[ax]
        if c < 0:
            raise IndexingError(f"count[{ax}] is {c}; expected a count >= 0")
        if st == 0:
            raise IndexingError(f"{name}_step[{ax}] is 0; expected a non-zero step")
    if any(c == 0 for c in count):
        for ax in range(len(shape)):
            if not 0 <= start[ax] <= shape[ax]:
                raise IndexingError(f"{name}_start[{ax}] = {start[ax]} is outside {name} axis "
                                    f"{ax} of size {shape[ax]}")
        return
    for ax in range(len(shape)):
        n, s, st, c = shape[ax], start[ax], step[ax], count[ax]
        last = s + (c - 1) * st
        if not (0 <= s < n and 0 <= last < n):
            raise IndexingError(
                f"{name} box on axis {ax}: start {s}, count {c}, step {st} touches elements "
                f"{min(s, last)}..{max(s, last)}, outside the axis of size {n}")


def copy_box(src, src_start, dst, dst_start, count,
             src_step=None, dst_step=None) -> None:
    """Copy the box ``src[src_start + i*src_step]`` to ``dst[dst_start + i*dst_step]`` for every
    multi-index ``0 <= i < count``. Both arrays share one dtype; any strides; rank 0..32."""
    _check_array(src, "src")
    _check_array(dst, "dst")
    cdef int ndim = src.ndim
    if dst.ndim != ndim:
        raise IndexingError(f"copy_box: src has rank {ndim} but dst has rank {dst.ndim}; "
                            f"expected equal ranks")
    if src.dtype != dst.dtype:
        raise IndexingError(f"copy_box: src dtype {src.dtype} differs from dst dtype {dst.dtype}")
    if not dst.flags.writeable:
        raise IndexingError("copy_box: dst is read-only; expected a writeable array")
    cnt = _as_tuple(count, ndim, "count", None)
    s0 = _as_tuple(src_start, ndim, "src_start", None)
    d0 = _as_tuple(dst_start, ndim, "dst_start", None)
    ss = _as_tuple(src_step, ndim, "src_step", 1)
    ds = _as_tuple(dst_step, ndim, "dst_step", 1)
    _check_box(src.shape, s0, cnt, ss, "src")
    _check_box(dst.shape, d0, cnt, ds, "dst")
    if any(c == 0 for c in cnt) or src.itemsize == 0:
        return
    # an axis of one element never steps: its step (any size) does not go to C
    ss = tuple([1 if c == 1 else s for s, c in zip(ss, cnt)])
    ds = tuple([1 if c == 1 else s for s, c in zip(ds, cnt)])
    if np.may_share_memory(src, dst):
        # the kernel needs disjoint boxes: stage the source box through a private copy
        src = np.array(src[tuple(map(_box_slice, s0, cnt, ss))], order="C", copy=True)
        s0 = (0,) * ndim
        ss = (1,) * ndim
    cdef ptrdiff_t c_count[ZX_MAX_NDIM]
    cdef ptrdiff_t c_s0[ZX_MAX_NDIM]
    cdef ptrdiff_t c_d0[ZX_MAX_NDIM]
    cdef ptrdiff_t c_ss[ZX_MAX_NDIM]
    cdef ptrdiff_t c_ds[ZX_MAX_NDIM]
    cdef int ax
    for ax in range(ndim):
        c_count[ax], c_s0[ax], c_d0[ax], c_ss[ax], c_ds[ax] = cnt[ax], s0[ax], d0[ax], ss[ax], ds[ax]
    cdef zx_box box
    cdef const ptrdiff_t *sstr = <const ptrdiff_t*>cnp.PyArray_STRIDES(<cnp.ndarray>src)
    cdef const ptrdiff_t *dstr = <const ptrdiff_t*>cnp.PyArray_STRIDES(<cnp.ndarray>dst)
    zx_box_init(&box, ndim, <size_t>src.itemsize, c_count)
    zx_box_strides(&box, 0, sstr, c_ss)
    zx_box_strides(&box, 1, dstr, c_ds)
    cdef const char *sp = <const char *>cnp.PyArray_DATA(<cnp.ndarray>src) + zx_box_offset(ndim, sstr, c_s0)
    cdef char *dp = <char *>cnp.PyArray_DATA(<cnp.ndarray>dst) + zx_box_offset(ndim, dstr, c_d0)
    with nogil:
        zx_copy_box(&box, sp, dp)


def _box_slice(start, count, step):
    """The slice selecting ``count`` (>= 1) elements from ``start`` by ``step``."""
    last = start + (count - 1) * step
    if step > 0:
        return slice(start, last + 1, step)
    return slice(start, last - 1 if last >= 1 else None, step)


cdef object _value_view(object value_bytes, str where):
    """The bytes of one item as a 1-d byte memoryview (bytes, bytearray, numpy scalar/array)."""
    if isinstance(value_bytes, (np.ndarray, np.generic)):
        value_bytes = np.asarray(value_bytes).tobytes()
    try:
        return memoryview(value_bytes).cast("B")
    except TypeError as exc:
        raise IndexingError(f"{where}: value: expected the bytes of one item, found "
                            f"{type(value_bytes).__name__}") from exc


cdef object _item_bytes(object value_bytes, Py_ssize_t itemsize, str where):
    mv = _value_view(value_bytes, where)
    if mv.nbytes != itemsize:
        raise IndexingError(f"{where}: value has {mv.nbytes} bytes; expected one item of "
                            f"{itemsize} bytes")
    if itemsize == 0:
        return memoryview(b"\0").cast("B")
    return mv


cdef void _rows_all(const char *bp, size_t nrows, size_t rowbytes, const char *vp,
                    size_t itemsize, unsigned char *out) noexcept nogil:
    """``out[i]``: whether row ``i`` (the ``rowbytes`` bytes at ``bp + i * rowbytes``) is
    nothing but repeats of the ``itemsize`` bytes at ``vp`` (the caller checked that each row
    is a whole number of items, and ``itemsize > 0``)."""
    cdef size_t i
    for i in range(nrows):
        out[i] = zx_is_all(bp + i * rowbytes, rowbytes, vp, itemsize) != 0


cdef size_t _item_of(const unsigned char[::1] v, size_t nbytes, str where, str what) except 0:
    """The size of the item ``v``, checked against ``nbytes`` (``what`` names them)."""
    cdef size_t itemsize = v.shape[0]
    if itemsize == 0:
        raise IndexingError(f"{where}: value has 0 bytes; expected one item of at least 1 byte")
    if nbytes % itemsize:
        raise IndexingError(f"{where}: {what} of {nbytes} bytes is not a whole number of "
                            f"{itemsize}-byte items")
    return itemsize


def is_all(buf, value_bytes) -> bool:
    """True when ``buf`` (a numpy array of any layout, or a C-contiguous bytes-like; the
    dtype is not consulted) is nothing but repeats of the item ``value_bytes`` (byte comparison, so NaN
    payloads and -0.0 compare by bits; an empty buffer counts as uniform)."""
    if isinstance(buf, np.ndarray):
        if buf.dtype.hasobject:
            raise IndexingError(f"is_all: dtype {buf.dtype} holds Python objects")
        if not buf.flags.c_contiguous:      # views, broadcasts: walk the strides in C
            return _strided_is_all(buf, value_bytes)
        buf = buf.reshape(-1).view(np.uint8)
    try:
        data = memoryview(buf)
    except TypeError as exc:
        raise IndexingError(f"is_all: expected a buffer, found {type(buf).__name__}") from exc
    if not data.c_contiguous:
        raise IndexingError("is_all: expected a C-contiguous buffer")
    if data.nbytes == 0:
        return True
    cdef const unsigned char[::1] b = data.cast("B")
    cdef const unsigned char[::1] v = _value_view(value_bytes, "is_all")
    cdef size_t nbytes = b.shape[0]
    cdef size_t itemsize = _item_of(v, nbytes, "is_all", "buffer")
    cdef const char *bp = <const char *>&b[0]
    cdef const char *vp = <const char *>&v[0]
    cdef unsigned char r
    with nogil:
        _rows_all(bp, 1, nbytes, vp, itemsize, &r)
    return r != 0


def is_all_rows(rows, value_bytes):
    """For each row of ``rows`` (a C-contiguous 2-d uint8 array: one chunk's bytes a row),
    whether it is nothing but repeats of the item ``value_bytes``, as :func:`is_all` finds it
    (byte comparison; a row of no bytes counts as uniform): a bool array of ``len(rows)``."""
    if not (isinstance(rows, np.ndarray) and rows.ndim == 2 and rows.dtype == np.uint8
            and rows.flags.c_contiguous):
        found = (f"a {rows.ndim}-d {rows.dtype} array" + ("" if rows.flags.c_contiguous
                 else " (not C-contiguous)") if isinstance(rows, np.ndarray)
                 else type(rows).__name__)
        raise IndexingError(f"is_all_rows: rows: expected a C-contiguous 2-d uint8 array, "
                            f"found {found}")
    cdef const unsigned char[::1] v = _value_view(value_bytes, "is_all_rows")
    cdef size_t nrows = <size_t>rows.shape[0]
    cdef size_t rowbytes = <size_t>rows.shape[1]
    cdef size_t itemsize = _item_of(v, rowbytes, "is_all_rows", "row")
    out = np.empty(nrows, dtype=bool)
    if nrows == 0:
        return out
    cdef const char *bp = <const char *>cnp.PyArray_DATA(rows)
    cdef const char *vp = <const char *>&v[0]
    cdef unsigned char *op = <unsigned char *>cnp.PyArray_DATA(out)
    with nogil:
        _rows_all(bp, nrows, rowbytes, vp, itemsize, op)
    return out


cdef bint _strided_is_all(cnp.ndarray buf, object value_bytes) except -1:
    cdef const unsigned char[::1] v = _value_view(value_bytes, "is_all")
    cdef Py_ssize_t itemsize = cnp.PyArray_ITEMSIZE(buf)
    if v.shape[0] != itemsize:
        raise IndexingError(f"is_all: value has {v.shape[0]} bytes; expected one item of "
                            f"{itemsize} bytes (the array's item size)")
    if buf.size == 0 or itemsize == 0:
        return True
    cdef zx_box box
    _array_box(&box, buf, 0)
    cdef const char *bp = <const char *>cnp.PyArray_DATA(buf)
    cdef const char *vp = <const char *>&v[0]
    cdef int r
    with nogil:
        r = zx_box_all_equal(&box, bp, vp)
    return r != 0


cdef bint _is_basic(tuple sel):
    for s in sel:
        if not (isinstance(s, (int, slice)) or s is None or s is Ellipsis):
            return False
    return True


def copy_selection(src, tuple src_sel, dst, tuple dst_sel) -> None:
    """``dst[dst_sel] = src[src_sel]``. When both selections are basic (ints, slices, None) the
    copy runs through the C kernel between the two views, without the GIL; outer products of
    index arrays through :func:`zarrx._outer_copy.copy_outer`; otherwise through numpy."""
    if _is_basic(src_sel) and _is_basic(dst_sel):
        s = src[src_sel]
        d = dst[dst_sel]
        if isinstance(s, np.ndarray) and isinstance(d, np.ndarray):
            copy_view(s, d)
            return
    elif copy_outer(src, src_sel, dst, dst_sel):
        return
    dst[dst_sel] = src[src_sel]


cdef int _gather_box(const zx_box *box, const char *sp, char *dp, size_t n, const char *fp,
                     size_t fsize, bint crc32c) noexcept nogil:
    """Copy the ``n`` bytes of ``box`` at ``sp`` packed to ``dp``; with ``fp``, whether every
    item equals it (the checksum is then not computed); with ``crc32c``, the CRC-32C of the
    bytes after them, as 4 little-endian bytes."""
    cdef int uniform = 0
    if n == 0:
        uniform = fp != NULL
    else:
        zx_copy_box(box, sp, dp)
        if fp != NULL:
            uniform = zx_is_all(dp, n, fp, fsize)
    if crc32c and not uniform:
        zx_store_le32(dp + n, zx_crc32c(0, dp, n) if n else 0)   # no bytes: 0
    return uniform


cdef int _gather_packed(cnp.ndarray src, char *dp, bint crc32c, object fill, str who) except -1:
    """Copy ``src`` (any strides) packed in C order to ``dp`` (``src.nbytes`` bytes, plus 4 for
    the CRC-32C when ``crc32c``). Returns 1 when ``fill`` (one item's bytes) is given and every
    item equals it (the checksum is then not computed), else 0."""
    if src.dtype.hasobject:
        raise IndexingError(f"{who}: dtype {src.dtype} holds Python objects")
    cdef zx_box box
    if cnp.PyArray_NDIM(src) > ZX_MAX_NDIM:
        raise IndexingError(f"{who}: rank {cnp.PyArray_NDIM(src)} exceeds the maximum of "
                            f"{ZX_MAX_NDIM}")
    cdef const unsigned char[::1] fv
    cdef const char *fp = NULL
    cdef size_t fsize = 0
    cdef size_t itemsize = cnp.PyArray_ITEMSIZE(src)
    if fill is not None:
        fv = _value_view(fill, who)
        fsize = fv.shape[0]
        if fsize != itemsize:
            raise IndexingError(f"{who}: fill value of {fsize} bytes for items of "
                                f"{itemsize} bytes")
        fp = <const char *>&fv[0] if fsize else _NO_BYTES
    cdef size_t n = <size_t>src.nbytes
    cdef int uniform
    _array_box(&box, src, 0)                       # operand 1 stays packed: a gather
    cdef const char *sp = <const char *>cnp.PyArray_DATA(src)
    with nogil:
        uniform = _gather_box(&box, sp, dp, n, fp, fsize, crc32c)
    return uniform


def gather_bytes(cnp.ndarray src, bint crc32c=False, fill=None):
    """The C-order bytes of ``src`` (any strides) in a new ``bytes`` object, one copy; with
    ``crc32c``, followed by their CRC-32C as 4 little-endian bytes (the ``crc32c`` codec).

    With ``fill`` (one item's bytes), returns None instead when every item equals it: the test
    runs on the freshly copied, cache-hot bytes, inside the same GIL-free section."""
    out = PyBytes_FromStringAndSize(NULL, src.nbytes + (4 if crc32c else 0))
    # a new object nobody else holds yet: filling it in place is safe
    if _gather_packed(src, PyBytes_AS_STRING(out), crc32c, fill, "gather_bytes"):
        return None
    return out


def gather_into(cnp.ndarray src, unsigned char[::1] dst, bint crc32c=False, fill=None) -> bool:
    """As :func:`gather_bytes`, into the writable buffer ``dst`` of exactly ``src.nbytes``
    (+ 4 with ``crc32c``) bytes; returns True when every item equals ``fill``."""
    cdef Py_ssize_t need = src.nbytes + (4 if crc32c else 0)
    if dst.shape[0] != need:
        raise IndexingError(f"gather_into: destination of {dst.shape[0]} bytes, expected {need}")
    if need == 0:
        return fill is not None
    return bool(_gather_packed(src, <char *>&dst[0], crc32c, fill, "gather_into"))


def copy_view(cnp.ndarray src, cnp.ndarray dst) -> None:
    """``dst[...] = src`` for two arrays of one shape and dtype, any strides, in C without the
    GIL. Views are always inside their buffers, so only shape, dtype, writability and overlap
    need checking."""
    cdef int ndim = cnp.PyArray_NDIM(src)
    if cnp.PyArray_NDIM(dst) != ndim or src.shape != dst.shape or src.dtype != dst.dtype \
            or src.dtype.hasobject or ndim > ZX_MAX_NDIM or not dst.flags.writeable:
        dst[...] = src
        return
    if np.may_share_memory(src, dst):
        src = src.copy()
    cdef zx_box box
    _array_box(&box, src, 0)               # a broadcast source (strides 0) is a fill
    zx_box_strides(&box, 1, <const ptrdiff_t*>cnp.PyArray_STRIDES(dst), NULL)
    cdef const char *sp = <const char *>cnp.PyArray_DATA(src)
    cdef char *dp = <char *>cnp.PyArray_DATA(dst)
    with nogil:
        zx_copy_box(&box, sp, dp)


def fill_view(cnp.ndarray dst, value_bytes) -> None:
    """Set every item of ``dst`` (any strides; items holding no Python objects) to the item
    ``value_bytes`` (its bytes, exactly one item), in C without the GIL: the bytes are
    copied as they are, so a NaN's payload and the sign of a zero stay."""
    if dst.dtype.hasobject or cnp.PyArray_NDIM(dst) > ZX_MAX_NDIM:
        raise IndexingError(f"fill_view: expected items holding no Python objects in at most "
                            f"{ZX_MAX_NDIM} dimensions, found {dst.dtype} in {dst.ndim}")
    if not dst.flags.writeable:
        raise IndexingError("fill_view: dst is read-only; expected a writeable array")
    cdef Py_ssize_t itemsize = cnp.PyArray_ITEMSIZE(dst)
    cdef const unsigned char[::1] v = _item_bytes(value_bytes, itemsize, "fill_view")
    cdef zx_box box
    _array_box(&box, dst, 1)
    zx_box_strides(&box, 0, NULL, NULL)           # the one item, broadcast
    cdef const char *sp = <const char *>&v[0]
    cdef char *dp = <char *>cnp.PyArray_DATA(dst)
    with nogil:
        zx_copy_box(&box, sp, dp)


# -- many gathers in one GIL-free section ------------------------------------------------------
#
# Threads that gather chunk after chunk, taking the GIL between the gathers, wake each other at
# every GIL turn, and the kernel wakes a thread on the CPU of the one that woke it: right after
# an idle spell, two such threads were seen sharing one CPU for a whole write (1.0 core busy;
# see docs/performance.md, *Scaling*). The call below checks every operand with the GIL held,
# then gathers all of them in one GIL-free section.

cdef struct _Gather:
    zx_box box
    const char *sp
    char *dp
    Py_ssize_t n              # bytes of data, without the checksum
    int uniform


cdef class _Gathers:
    """The gathers of one batch call: their geometry, and the destination buffers held until
    the copies are done."""
    cdef _Gather *jobs
    cdef Py_buffer *bufs
    cdef Py_ssize_t n, held

    def __cinit__(self, Py_ssize_t n):
        self.n, self.held = n, 0
        self.jobs = <_Gather *>malloc(max(n, 1) * sizeof(_Gather))
        self.bufs = <Py_buffer *>malloc(max(n, 1) * sizeof(Py_buffer))
        if self.jobs == NULL or self.bufs == NULL:
            raise MemoryError()
        memset(self.jobs, 0, max(n, 1) * sizeof(_Gather))

    def __dealloc__(self):
        cdef Py_ssize_t i
        if self.bufs != NULL:
            for i in range(self.held):
                PyBuffer_Release(&self.bufs[i])
        free(self.bufs)
        free(self.jobs)


def gather_many(list srcs, list dsts, bint crc32c=False, fill=None) -> list:
    """``[gather_into(s, d, crc32c, fill) for s, d in zip(srcs, dsts)]``, every gather in one
    GIL-free section (see above). Each ``dsts[i]`` is a writable contiguous buffer of exactly
    ``srcs[i].nbytes`` bytes (+ 4 with ``crc32c``)."""
    cdef Py_ssize_t i, n = len(srcs), need
    if len(dsts) != n:
        raise IndexingError(f"gather_many: {n} sources for {len(dsts)} destinations")
    cdef const unsigned char[::1] fv
    cdef const char *fp = NULL
    cdef size_t fsize = 0
    if fill is not None:
        fv = _value_view(fill, "gather_many")
        fsize = fv.shape[0]
        fp = <const char *>&fv[0] if fsize else _NO_BYTES
    cdef _Gathers c = _Gathers(n)
    cdef _Gather *job
    cdef cnp.ndarray src
    for i in range(n):
        src = srcs[i]
        if src.dtype.hasobject:
            raise IndexingError(f"gather_many: dtype {src.dtype} holds Python objects")
        if fp != NULL and fsize != <size_t>cnp.PyArray_ITEMSIZE(src):
            raise IndexingError(f"gather_many: fill value of {fsize} bytes for items of "
                                f"{cnp.PyArray_ITEMSIZE(src)} bytes")
        PyObject_GetBuffer(dsts[i], &c.bufs[i], PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS)
        c.held += 1
        need = src.nbytes + (4 if crc32c else 0)
        if c.bufs[i].len != need:
            raise IndexingError(f"gather_many: destination {i} of {c.bufs[i].len} bytes, "
                                f"expected {need}")
        job = &c.jobs[i]
        _array_box(&job.box, src, 0)               # operand 1 stays packed: a gather
        job.sp = <const char *>cnp.PyArray_DATA(src)
        job.dp = <char *>c.bufs[i].buf
        job.n = src.nbytes
    with nogil:
        for i in range(n):
            job = &c.jobs[i]
            job.uniform = _gather_box(&job.box, job.sp, job.dp, <size_t>job.n, fp, fsize, crc32c)
    return [c.jobs[i].uniform != 0 for i in range(n)]

