"""Reads of the inner chunks of shards below a :class:`~zarrx.store.local.LocalStore` root, one
call per shard: :meth:`ShardFiles.read` opens the shard's file (``openat2`` with
``RESOLVE_NO_SYMLINKS``, as :mod:`zarrx.store._localread` does), reads its index and the
inner chunks wanted with ``pread`` through that one descriptor, and closes it. Files are only
ever replaced, never changed in place, so the index and the chunks come from one version of
the shard even while a writer replaces it: the descriptor is the snapshot a
:class:`~zarrx.store.localsnap.FileSnapshot` holds.

The keys of a window of shards are turned into paths once, when a :class:`ShardFiles` is made.
A shard the call reads returns what :func:`zarrx.store.shard_slots.read_slots` returns, read by
the same rules (the file read whole when nearly all of it is wanted and it is at most
``whole_max`` bytes; else its index, then the chunks as one range when that holds at most
twice their bytes plus ``gap``, else as ranges, nearby ones joined). A missing file (``ENOENT``)
or one that is not a regular file reads as None. Everything else goes to ``fallback(i, slots)``,
the Python path, which reads the shard again from the start and words the error, naming the
key, as it always has: a key that is not plain (see :mod:`zarrx.store._localread`), an open
failing otherwise (a link refused, a folder not readable), a file shorter than its index, an
index that does not decode or validate, an inner chunk longer than ``limit``, a read coming
back short (a file truncated in place), memory not to be had; also a large index
(``index_max``) of which the read wants few chunks, which the Python path keeps cached.

Every entry used is validated against the file's size before any of its bytes are read
(``_shard_index._check_entries``, the decoder's own check), so every ``pread`` lies inside the
file and every copy inside the buffer allocated for it. Reads of ``NOGIL_MIN`` bytes or more
release the GIL. The bytes go into a buffer the calling thread keeps (up to ``KEEP_MAX``) and
reuses at its next read, so that reading shard after shard does not fault in fresh memory for
each (a reader decodes a shard's chunks before it reads another shard). It is reused only when
nothing else refers to it any more: a read made while what an earlier one returned is still
held (a read inside a read on the same thread, by a codec or a callback reading another array,
or a result a caller keeps) gets a new buffer, which the thread keeps from then on. The kept
buffer goes when its thread ends.
"""
from libc.stdint cimport int64_t, uint8_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.errno cimport errno, ENOENT, EINTR
from posix.unistd cimport close, pread
from posix.stat cimport struct_stat, fstat, S_ISREG
from cpython.bytearray cimport (PyByteArray_AS_STRING, PyByteArray_FromStringAndSize,
                                 PyByteArray_GET_SIZE)
from cpython.bytes cimport PyBytes_AS_STRING
from cpython.ref cimport Py_REFCNT
import threading

import numpy as np
cimport numpy as cnp

from zarrx._clib.zx_openat2 cimport zx_openat2
from zarrx.store._localread cimport _plain_key
from zarrx.store._shardkernel cimport ShardKernel
from zarrx.errors import ShardError

cnp.import_array()

cdef enum:
    PATH_MAX = 4096
    NOGIL_MIN = 65536          # reads of this many bytes release the GIL
    KEEP_MAX = 16 << 20        # a thread keeps a buffer this large for its next reads
    KEPT_REFS = 2              # the references to a kept buffer no one holds: _kept's, _buffer's
    ZX_OK = 0                  # (_shard_index's status)

cdef object _HAND_ON = object()      # _read's answer: the Python path reads the shard
cdef object _after_index = None      # tests: called with the path once the index is read
cdef object _trace = None            # tests: a list each read appends (offset, nbytes) to
cdef bint _failing = False          # tests: every read fails (as a disk that cannot read)
cdef Py_ssize_t _opened = 0, _handed_on = 0
cdef object _kept = threading.local()    # .buf: the calling thread's buffer (see _buffer)


cdef class ShardFiles(ShardKernel):
    """The shard files of ``keys`` (a window of shards of one array, one level of sharding)
    below ``root`` (the store's root for ``openat2``), with the index, ``limit``,
    ``index_max`` and ``fallback`` of :class:`~zarrx.store._shardkernel.ShardKernel`; see the
    module docstring for ``whole_max`` and ``gap``."""
    cdef list paths
    cdef uint64_t flags, resolve
    cdef int64_t whole_max, gap

    def __cinit__(self, bytes root, list keys, uint64_t flags, uint64_t resolve,
                  Py_ssize_t n_chunks, int n_crc, bint at_end, bint big_endian, word_at,
                  int64_t limit, int64_t whole_max, int64_t gap, int64_t index_max,
                  object fallback):
        cdef Py_ssize_t i, rn = len(root), kn
        cdef bytes kb
        self._setup("shard files", n_chunks, n_crc, at_end, big_endian, word_at, limit,
                    index_max, fallback)
        if whole_max < 0 or gap < 0:
            raise ShardError("shard files: expected sizes >= 0")
        self.flags, self.resolve = flags, resolve
        self.whole_max, self.gap = whole_max, gap
        self.paths = [None] * len(keys)
        if rn == 0 or b"\x00" in root:
            return
        for i in range(len(keys)):
            key = keys[i]
            if type(key) is not str:
                continue
            kb = (<str>key).encode("utf-8", "surrogatepass")
            kn = len(kb)
            # a plain key (no '..', '.', empty segment, link-free by openat2) below the root
            if rn + 1 + kn < PATH_MAX and _plain_key(<const unsigned char*>PyBytes_AS_STRING(kb),
                                                     kn):
                self.paths[i] = root + b"/" + kb    # (bytes end with a NUL)

    def read(self, Py_ssize_t i, object slots):
        """``(buffer, starts, lengths)`` of the inner chunks at ``slots`` (an int64 array) of
        shard ``i`` (as :func:`zarrx.store.shard_slots.read_slots` returns them; the buffer
        holds until this thread's next read), None when its file is not there, or what
        ``fallback(i, slots)`` returns."""
        global _opened, _handed_on
        cdef const int64_t[::1] sv = slots
        cdef int64_t smin, smax
        cdef int fd
        self._wanted(sv, &smin, &smax)
        if i < 0 or i >= len(self.paths):
            raise IndexError(f"shard files: shard {i} of {len(self.paths)}")
        path = self.paths[i]
        if path is None or self._via_cache(sv.shape[0]):
            _handed_on += 1
            return self.fallback(i, slots)
        # open and fstat keep the GIL, as _localread's do (a few microseconds)
        _opened += 1
        fd = zx_openat2(PyBytes_AS_STRING(path), self.flags, self.resolve)
        if fd < 0:
            if errno == ENOENT:
                return None
            _handed_on += 1
            return self.fallback(i, slots)
        try:
            got = self._read(fd, sv, smin, smax, path)
        finally:
            close(fd)
        if got is _HAND_ON:
            _handed_on += 1
            return self.fallback(i, slots)
        return got

    cdef object _read(self, int fd, const int64_t[::1] sv, int64_t smin, int64_t smax,
                      bytes path):
        """:meth:`read` of the open file ``fd``: the result, None, or ``_HAND_ON``."""
        cdef struct_stat st
        cdef int64_t size, n = self.n, L = self.idx_len
        cdef Py_ssize_t m = sv.shape[0]
        cdef bint whole
        cdef uint64_t* e = NULL
        cdef uint8_t* ibuf = NULL
        cdef const uint8_t* ip
        if fstat(fd, &st) != 0:
            return _HAND_ON
        if not S_ISREG(st.st_mode):
            return None
        size = <int64_t>st.st_size
        if size < L:                # (the Python path words the truncation)
            return _HAND_ON
        whole = size <= self.whole_max and 2 * <int64_t>m >= n and \
            smin + (n - 1 - smax) <= n // 16
        data = None
        e = <uint64_t*>malloc(<size_t>(16 * n))
        try:
            if e == NULL:
                return _HAND_ON
            if whole:
                data = _buffer(size)
                if data is None or not _fill(fd, _at(data), size, 0):
                    return _HAND_ON
                ip = <const uint8_t*>_at(data) + (size - L if self.at_end else 0)
            else:
                ibuf = <uint8_t*>malloc(<size_t>L)
                if ibuf == NULL or not _fill(fd, <char*>ibuf, L, size - L if self.at_end else 0):
                    return _HAND_ON
                ip = ibuf
            if self._entries(ip, e, size) != ZX_OK:
                return _HAND_ON
            if _after_index is not None:
                _after_index(path)
            return self._chunks(fd, sv, e, data)
        finally:
            free(e)
            free(ibuf)

    cdef object _chunks(self, int fd, const int64_t[::1] sv, const uint64_t* e, object data):
        """The chunks at ``sv`` from the validated entries ``e``: taken from ``data`` (the
        whole file) when given, else read."""
        cdef Py_ssize_t m = sv.shape[0], k, present
        cdef cnp.ndarray starts_a = np.empty(m, dtype=np.int64)
        cdef cnp.ndarray lengths_a = np.empty(m, dtype=np.int64)
        cdef int64_t* st = <int64_t*>cnp.PyArray_DATA(starts_a)
        cdef int64_t* ln = <int64_t*>cnp.PyArray_DATA(lengths_a)
        cdef int64_t lo, hi, total, span
        cdef bint capped
        present = self._spans(sv, e, st, ln, &lo, &hi, &total, &capped)
        if present < 0:
            return _HAND_ON              # a chunk over the limit, or a slot changed: to Python
        if not present:
            return b"", starts_a, lengths_a
        if data is not None:             # the whole file: the entries are its offsets
            return data, starts_a, lengths_a
        span = hi - lo                   # 0 <= lo <= hi <= size
        if span <= self.gap or (span - self.gap + 1) // 2 <= total:
            data = _buffer(span)
            if data is None or not _fill(fd, _at(data), span, lo):
                return _HAND_ON
            for k in range(m):
                if st[k] >= 0:
                    st[k] -= lo
            return data, starts_a, lengths_a
        if capped:                       # (no buffer that large can be had)
            return _HAND_ON
        data = _buffer(total)            # sparse: each chunk's range, back to back
        if data is None or not _gather(fd, _at(data), total, st, ln, m):
            return _HAND_ON
        return data, starts_a, lengths_a


cdef object _buffer(int64_t n):
    """A ``bytearray`` of at least ``n`` bytes to fill: up to ``KEEP_MAX``, the one the calling
    thread keeps for its reads (its pages faulted in already once it was used), else a new one;
    None when the memory cannot be had. What a read returns lies in it until the thread's next
    read: a reader decodes a shard's chunks before it reads another (``zarrx.shard_read``). A
    kept buffer something still refers to (a read inside a read, a result held) is left to it:
    the thread keeps a new one instead."""
    cdef object kept
    cdef Py_ssize_t had = 0
    cdef bint held = False
    try:
        if n > KEEP_MAX:
            return PyByteArray_FromStringAndSize(NULL, <Py_ssize_t>n)
        kept = getattr(_kept, "buf", None)
        if kept is not None:
            had = PyByteArray_GET_SIZE(kept)
            held = Py_REFCNT(kept) > KEPT_REFS
            if held or had < n:
                kept = None
        if kept is None:
            # (whole pages, and at least twice the last: a few sizes per thread)
            kept = PyByteArray_FromStringAndSize(NULL, <Py_ssize_t>max(
                n, min(KEEP_MAX, had if held else 2 * had)))
            _kept.buf = kept
        return kept
    except (MemoryError, OverflowError):
        return None


cdef inline char* _at(object buf):
    return PyByteArray_AS_STRING(buf)


cdef bint _gather(int fd, char* dst, int64_t total, int64_t* st, const int64_t* ln,
                  Py_ssize_t m) except -1:
    """The present chunks (``st[k]`` >= 0: their offsets in the file, ``ln[k]`` their
    lengths, summing to ``total``, which ``dst`` holds) read one after another into ``dst``,
    chunks lying back to back in the file with one read; ``st[k]`` becomes each one's place in
    ``dst``. False when a read comes back short."""
    cdef Py_ssize_t k
    cdef int64_t at = 0, run_off = -1, run_len = 0, run_at = 0
    for k in range(m):
        if st[k] < 0:
            continue
        if run_off >= 0 and st[k] == run_off + run_len:
            run_len += ln[k]
        else:
            if run_off >= 0 and not _fill(fd, dst + run_at, run_len, run_off):
                return False
            run_off, run_len, run_at = st[k], ln[k], at
        st[k] = at
        at += ln[k]
    return run_off < 0 or _fill(fd, dst + run_at, run_len, run_off)


cdef bint _fill(int fd, char* dst, int64_t n, int64_t off) except -1:
    """``n`` bytes of ``fd`` from ``off`` into ``dst`` (without the GIL when many): False
    when the file ends first or a read fails."""
    cdef int64_t got
    if n >= NOGIL_MIN:
        with nogil:
            got = _pread_full(fd, dst, n, off)
    else:
        got = _pread_full(fd, dst, n, off)
    if _trace is not None:
        _trace.append((off, n))
    return got == n


cdef int64_t _pread_full(int fd, char* dst, int64_t n, int64_t off) noexcept nogil:
    """Bytes read into ``dst`` from ``off``, up to ``n`` or the end of the file (-1 on an
    error)."""
    cdef int64_t done = 0
    cdef Py_ssize_t got
    if _failing:
        return -1
    while done < n:
        got = pread(fd, dst + done, <size_t>(n - done), off + done)
        if got < 0 and errno == EINTR:
            continue
        if got < 0:
            return -1
        if got == 0:
            break
        done += got
    return done


def counts():
    """How many shard files the reads of this module opened, and how many shards they handed
    to the Python path, since the process started (for tests)."""
    return {"opened": _opened, "handed_on": _handed_on}


def after_index(fn=None):
    """For tests: ``fn(path)`` is called by every read once the shard's index is read and
    validated, before its chunks are (None: nothing); returns what was set before."""
    global _after_index
    old, _after_index = _after_index, fn
    return old


def fail_reads(bint failing=False):
    """For tests: while set, every ``pread`` of this module fails, as on a disk that cannot
    read (the shard is handed to the Python path); returns what was set before."""
    global _failing
    old, _failing = _failing, failing
    return old


def trace(reads=None):
    """For tests: every ``pread`` of a shard's bytes appends ``(offset, nbytes)`` to the list
    ``reads`` (None: nothing is recorded); returns what was set before."""
    global _trace
    old, _trace = _trace, reads
    return old
