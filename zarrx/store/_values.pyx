"""Values kept in memory, in blocks that are reused once freed.

A :class:`Value` is an immutable, read-only buffer holding a copy of some bytes. Its memory is a
block taken from a process-wide pool of freed blocks when one of a fitting size is there, and
handed back to the pool when the value is freed. Freshly allocated memory is faulted in page
by page on its first write, and glibc returns large freed blocks to the system; a memory store
that keeps every chunk it is given as a ``bytes`` object pays for both on every write of large
chunks. Blocks are whole pages; a block serves a value of up to 1/8 fewer pages than it has.

The pool holds at most ``zarrx.config.memory_pool`` bytes (by default an eighth of the
machine's memory, at most 1 GiB): when a freed block would take it over, the oldest blocks are
released to the system first, as they are when the setting changes. :func:`trim` releases
every pooled block. Every pool operation
runs with the GIL held (the pool's lists are only changed here).
"""
from collections import OrderedDict

from cpython.buffer cimport (PyBUF_WRITABLE, PyBuffer_FillInfo, PyBuffer_Release,
                             PyObject_GetBuffer, PyBUF_C_CONTIGUOUS)
from cpython.bytes cimport PyBytes_FromStringAndSize
from libc.stdlib cimport free, malloc
from libc.string cimport memcmp, memcpy

from zarrx import config
from zarrx._gather import gather_bytes, gather_into, gather_many

cdef enum:
    PAGE = 4096
    COPY_NOGIL = 1 << 16     # copies this large release the GIL

#: values smaller than this are better kept as ``bytes`` (the interpreter's allocator reuses
#: small blocks on its own)
MIN_SIZE = 64 << 10

#: the most bytes of chunks a writing thread gathers in one GIL-free section
#: (:func:`gather_kept_many`): bounded, so that an overwrite frees old values as it goes
GATHER_BATCH = 8 << 20

cdef dict _free = {}          # pages -> list of block addresses
cdef object _order = OrderedDict()   # address -> pages, oldest freed first
cdef Py_ssize_t _cached = 0   # bytes in pooled blocks
cdef bint _busy = False       # the pool is being changed (with the GIL held throughout)


cdef Py_ssize_t _limit():
    return config.pool_limit()


cdef inline Py_ssize_t _pages_for(Py_ssize_t size):
    return (size + PAGE - 1) // PAGE if size > 0 else 1


cdef char* _take(Py_ssize_t size, Py_ssize_t* pages_out):
    """A block for ``size`` bytes (n pages): a pooled one of n to n + n/7 pages (it is then at
    most 1/8 larger than needed), else a new one."""
    global _cached, _busy
    cdef Py_ssize_t n = _pages_for(size), best = -1, k
    cdef Py_ssize_t span = n // 7
    cdef char* p
    if _free and not _busy:
        if _free.get(n):
            best = n
        elif span > 0:
            if len(_free) <= span:
                for k in _free:
                    if n < k <= n + span and (best < 0 or k < best) and _free[k]:
                        best = k
            else:
                for k in range(n + 1, n + span + 1):
                    if _free.get(k):
                        best = k
                        break
    if best >= 0:
        _busy = True
        try:
            blocks = _free[best]
            addr = blocks.pop()
            if not blocks:
                del _free[best]
            _order.pop(addr, None)
            _cached -= best * PAGE
        finally:
            _busy = False
        pages_out[0] = best
        return <char*><size_t>addr
    p = <char*>malloc(<size_t>(n * PAGE))
    if p == NULL:
        raise MemoryError(f"stored value: cannot allocate {size} bytes")
    pages_out[0] = n
    return p


cdef void _release_oldest(Py_ssize_t keep) except *:
    """With ``_busy`` set: release the oldest pooled blocks until at most ``keep`` bytes are
    pooled."""
    global _cached
    while _cached > keep and _order:
        old, k = _order.popitem(last=False)
        _cached -= k * PAGE
        blocks = _free.get(k)
        if blocks is not None:
            if old in blocks:
                blocks.remove(old)
            if not blocks:
                del _free[k]
        free(<char*><size_t>old)


def _apply_limit() -> None:
    """Release the oldest pooled blocks until the pool holds at most ``memory_pool`` bytes:
    a change of the setting applies at once, not at the next freed value."""
    global _busy
    if _free is None or _order is None:
        return
    cdef Py_ssize_t limit = _limit()
    if _busy:             # checked after _limit(), which runs Python code: see _give_back
        return
    _busy = True
    try:
        _release_oldest(limit)
    finally:
        _busy = False


cdef void _give_back(char* p, Py_ssize_t pages) noexcept:
    """Pool a freed block, releasing the oldest pooled ones when over the limit. A block is
    released instead when the pool is being changed already (a value freed by a collection
    that the change itself set off) or anything fails: it is never left recorded and freed.

    ``_busy`` is tested after ``_limit()`` and set with no Python code in between: the
    setting is read by Python code, during which another thread may run and start a change
    (one that a collection inside it can pause, letting this thread on): a test made before
    would let two changes run at once, and the first to end would mark the pool idle while the
    other still held a block it was releasing, for a third thread to take and use after it
    is freed."""
    global _cached, _busy
    cdef Py_ssize_t nbytes = pages * PAGE, limit
    cdef size_t addr = <size_t>p
    if _free is None or _order is None:              # shutdown
        free(p)
        return
    try:
        limit = _limit()
    except BaseException:
        free(p)
        return
    if _busy or nbytes > limit:                      # called from within a change, or too big
        free(p)
        return
    _busy = True
    try:
        _release_oldest(limit - nbytes)
        blocks = _free.get(pages)
        if blocks is None:
            blocks = _free[pages] = []
        blocks.append(addr)
        try:
            _order[addr] = pages
        except BaseException:
            blocks.remove(addr)
            raise
        _cached += nbytes
    except BaseException:
        free(p)
    finally:
        _busy = False


def trim() -> int:
    """Release every pooled block to the system; returns how many bytes they held (0, and
    nothing released, when called while the pool is being changed)."""
    global _cached, _busy
    cdef Py_ssize_t was = _cached
    if _busy:
        return 0
    _busy = True
    try:
        while _order:
            addr, _ = _order.popitem(last=False)
            free(<char*><size_t>addr)
        _free.clear()
        _cached = 0
    finally:
        _busy = False
    return was


def pooled() -> int:
    """How many bytes the pool holds in freed blocks."""
    return _cached


cdef class Value:
    """An immutable copy of some bytes in pooled memory: a read-only buffer (``memoryview``,
    ``bytes()``, numpy) with ``len``, equality with any bytes-like object, and pickled as
    ``bytes``.

    ``Value(data)`` copies ``data``. :meth:`empty` makes one to be filled in place: writable
    buffers of it can be taken until :meth:`seal`, which whoever fills it calls once done and
    before anyone else sees it (a store seals what it is given)."""

    cdef char* _ptr
    cdef Py_ssize_t _size
    cdef Py_ssize_t _pages
    cdef bint _sealed

    @staticmethod
    def empty(Py_ssize_t size):
        """A writable, unsealed value of ``size`` bytes (contents undefined)."""
        if size < 0:
            raise ValueError(f"stored value: expected a size >= 0, found {size}")
        cdef Value v = Value.__new__(Value, None)
        v._ptr = _take(size, &v._pages)
        v._size = size
        return v

    def seal(self):
        """Refuse writable buffers from now on; returns the value."""
        self._sealed = True
        return self

    def __cinit__(self, data):
        cdef Py_buffer buf
        cdef Py_ssize_t pages = 0
        if data is None:            # Value.empty
            return
        self._sealed = True
        PyObject_GetBuffer(data, &buf, PyBUF_C_CONTIGUOUS)
        try:
            self._ptr = _take(buf.len, &pages)
            self._pages = pages
            self._size = buf.len
            if buf.len >= COPY_NOGIL:
                with nogil:
                    memcpy(self._ptr, buf.buf, <size_t>buf.len)
            else:
                memcpy(self._ptr, buf.buf, <size_t>buf.len)
        finally:
            PyBuffer_Release(&buf)

    def __dealloc__(self):
        if self._ptr != NULL:
            _give_back(self._ptr, self._pages)
            self._ptr = NULL

    def __getbuffer__(self, Py_buffer *view, int flags):
        if flags & PyBUF_WRITABLE and self._sealed:
            raise BufferError("a stored value is read-only")
        PyBuffer_FillInfo(view, self, self._ptr, self._size, self._sealed, flags)

    def __releasebuffer__(self, Py_buffer *view):
        pass

    def __len__(self):
        return self._size

    def __bytes__(self):
        return PyBytes_FromStringAndSize(self._ptr, self._size)

    def __eq__(self, other):
        cdef const unsigned char[::1] o
        try:
            o = memoryview(other).cast("B")
        except (TypeError, ValueError):
            return NotImplemented
        return o.shape[0] == self._size and (
            self._size == 0 or memcmp(&o[0], self._ptr, <size_t>self._size) == 0)

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = None

    def __reduce__(self):
        return bytes, (bytes(self),)

    def __repr__(self):
        return f"<zarrx stored value of {self._size} bytes>"


def gather_kept(src, bint crc32c=False, fill=None):
    """``src`` (a numpy array, any strides) gathered in C order, its CRC-32C appended when
    ``crc32c``, straight into what a store that keeps values keeps: ``bytes`` under
    :data:`MIN_SIZE`, else an unsealed :class:`Value`. None instead when ``fill`` (one item) is
    given and every item equals it."""
    cdef Py_ssize_t nbytes = src.nbytes + (4 if crc32c else 0)
    if nbytes < MIN_SIZE:
        return gather_bytes(src, crc32c, fill)
    value = Value.empty(nbytes)
    return None if gather_into(src, value, crc32c, fill) else value


def gather_kept_many(list srcs, bint crc32c=False, fill=None) -> list:
    """``[gather_kept(s, crc32c, fill) for s in srcs]``, the gathers into values of
    :data:`MIN_SIZE` and more in one GIL-free section (``zarrx._gather.gather_many``)."""
    out = [None] * len(srcs)
    big, values, at = [], [], []
    for i, src in enumerate(srcs):
        nbytes = src.nbytes + (4 if crc32c else 0)
        if nbytes < MIN_SIZE:
            out[i] = gather_bytes(src, crc32c, fill)
        else:
            big.append(src)
            values.append(Value.empty(nbytes))
            at.append(i)
    if big:
        for i, value, uniform in zip(at, values, gather_many(big, values, crc32c, fill)):
            if not uniform:
                out[i] = value
    return out


config.watch_pool(_apply_limit)
