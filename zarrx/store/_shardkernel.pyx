"""What the one-call shard reads share, wherever the shard is kept: :class:`ShardKernel`
holds the index's format (its entries, checksums, place and byte order, the positions of its
words), the most bytes an inner chunk may hold and the Python path to hand a shard to; it
checks the slots a read wants, decodes an index and validates every entry against the shard's
size (``_shard_index``'s own decoder and check), and works out where the wanted inner chunks
lie. :class:`zarrx.store._localshard.ShardFiles` reads shards that are files,
:class:`zarrx.store._memshard.ShardValues` shards a memory store keeps.
"""
from libc.stdint cimport int64_t, uint8_t, uint64_t

import numpy as np
cimport numpy as cnp

from zarrx.store._shard_index cimport _check_entries, _check_word_at, _decode_entries
from zarrx.errors import ShardError

cnp.import_array()

cdef enum:
    NOGIL_MIN = 65536          # indexes of this many bytes are decoded without the GIL
    ZX_OK = 0                  # (_shard_index's status)

cdef uint64_t MISSING = 0xFFFFFFFFFFFFFFFF
cdef int64_t MAX_OBJECT = 0x7FFFFFFFFFFFFFFF
cdef Py_ssize_t MAX_ENTRIES = <Py_ssize_t>1 << 58


cdef class ShardKernel:
    """The index of ``n_chunks`` entries, ``n_crc`` checksums, at the end or the start
    (``at_end``), in either byte order, its words in C order (``word_at`` None) or where
    ``word_at()`` says (an int64 array of positions, asked for at the first index decoded: for
    a large index it is large); ``limit``: the most bytes of an inner chunk (-1: none);
    ``index_max``: an index larger than this of which a read wants fewer than a sixteenth of
    the entries goes to ``fallback(i, slots)``, the Python path, which keeps it cached."""

    cdef int _setup(self, str what, Py_ssize_t n_chunks, int n_crc, bint at_end,
                    bint big_endian, object word_at, int64_t limit, int64_t index_max,
                    object fallback) except -1:
        if n_chunks < 1 or n_chunks > MAX_ENTRIES:
            raise ShardError(f"{what}: expected 1 to 2^58 index entries, found {n_chunks}")
        if n_crc < 0 or n_crc > 64:
            raise ShardError(f"{what}: expected 0 to 64 crc32c checksums, found {n_crc}")
        if index_max < 0:
            raise ShardError(f"{what}: expected sizes >= 0")
        self.n, self.n_crc, self.at_end, self.big = n_chunks, n_crc, at_end, big_endian
        self.idx_len = 16 * <int64_t>n_chunks + 4 * n_crc          # at most 2^62 + 256
        self.limit, self.index_max = limit, index_max
        self.fallback = fallback
        self.word_src, self.word_at = word_at, None
        return 0

    cdef int _wanted(self, const int64_t[::1] sv, int64_t* smin, int64_t* smax) except -1:
        """Refuse a slot outside the index; the lowest and the highest wanted."""
        cdef Py_ssize_t k
        cdef int64_t s
        smin[0], smax[0] = self.n, -1
        for k in range(sv.shape[0]):
            s = sv[k]
            if s < 0 or s >= self.n:
                raise ShardError(f"shard index: slot {s} out of range for {self.n} entries")
            if s < smin[0]:
                smin[0] = s
            if s > smax[0]:
                smax[0] = s
        return 0

    cdef bint _via_cache(self, Py_ssize_t m):
        """Whether a read of ``m`` inner chunks goes to the Python path, for its index cache."""
        return self.idx_len > self.index_max and 16 * <int64_t>m < self.n

    cdef object _words(self):
        """The positions of the index's words (an int64 array, checked), asked for at the
        first index decoded; None: C order."""
        wa = self.word_at
        if wa is None and self.word_src is not None:
            wa = np.ascontiguousarray(self.word_src(), dtype=np.int64)
            _check_word_at(wa, self.n)         # 2 * n positions, each below 2 * n
            self.word_at = wa
        return wa

    cdef int _entries(self, const uint8_t* ip, uint64_t* e, int64_t size) except -1:
        """Decode the index at ``ip`` (``idx_len`` bytes) into ``e`` (``2 * n`` words) and
        validate every entry against the shard's ``size``: a status of ``_shard_index``."""
        cdef cnp.ndarray wa = self._words()     # (held by this call: w points into it)
        cdef const int64_t* w = NULL
        cdef int status
        cdef Py_ssize_t bad = -1
        if wa is not None:
            w = <const int64_t*>cnp.PyArray_DATA(wa)
        if self.idx_len >= NOGIL_MIN:
            with nogil:
                status = _decode_entries(ip, self.n, self.n_crc, self.big, w, e)
                if status == ZX_OK:
                    status = _check_entries(e, self.n, size, self.at_end,
                                            <uint64_t>self.idx_len, &bad)
        else:
            status = _decode_entries(ip, self.n, self.n_crc, self.big, w, e)
            if status == ZX_OK:
                status = _check_entries(e, self.n, size, self.at_end, <uint64_t>self.idx_len,
                                        &bad)
        return status

    cdef Py_ssize_t _spans(self, const int64_t[::1] sv, const uint64_t* e, int64_t* st,
                           int64_t* ln, int64_t* lo, int64_t* hi, int64_t* total,
                           bint* capped) noexcept nogil:
        """Each wanted chunk's offset in the shard (``st``, -1: missing) and length (``ln``),
        from the validated entries ``e``; ``[lo, hi)`` the bytes spanning them, ``total`` the
        sum of their lengths (``capped``: at 2^63 - 1). The number present, or -1 when one is
        longer than ``limit`` (to be refused unread, by the Python path) or a slot is outside
        the index (``sv`` is the caller's: code the read ran since :meth:`_wanted`, or another
        thread while the GIL was released, may have changed it; the Python path words it)."""
        cdef Py_ssize_t m = sv.shape[0], k, present = 0
        cdef int64_t s, off, nb
        lo[0], hi[0], total[0], capped[0] = MAX_OBJECT, 0, 0, False
        for k in range(m):
            s = sv[k]                    # read once, checked before it indexes e
            if s < 0 or s >= self.n:
                return -1
            if e[2 * s] == MISSING and e[2 * s + 1] == MISSING:
                st[k] = -1
                ln[k] = 0
                continue
            # validated against the shard's size: off + nb <= size <= 2^63 - 1
            off = <int64_t>e[2 * s]
            nb = <int64_t>e[2 * s + 1]
            if self.limit >= 0 and nb > self.limit:
                return -1
            st[k] = off
            ln[k] = nb
            present += 1
            if total[0] <= MAX_OBJECT - nb:
                total[0] += nb
            else:
                total[0], capped[0] = MAX_OBJECT, True
            if off < lo[0]:
                lo[0] = off
            if off + nb > hi[0]:
                hi[0] = off + nb
        return present
