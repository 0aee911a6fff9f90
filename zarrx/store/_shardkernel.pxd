# The store-independent part of the one-call shard reads (zarrx.store._localshard: files,
# zarrx.store._memshard: values kept in memory).
from libc.stdint cimport int64_t, uint8_t, uint64_t

cdef class ShardKernel:
    cdef Py_ssize_t n
    cdef int64_t idx_len, limit, index_max
    cdef int n_crc
    cdef bint at_end, big
    cdef object word_src, word_at
    cdef object fallback

    cdef int _setup(self, str what, Py_ssize_t n_chunks, int n_crc, bint at_end,
                    bint big_endian, object word_at, int64_t limit, int64_t index_max,
                    object fallback) except -1
    cdef int _wanted(self, const int64_t[::1] sv, int64_t* smin, int64_t* smax) except -1
    cdef bint _via_cache(self, Py_ssize_t m)
    cdef object _words(self)
    cdef int _entries(self, const uint8_t* ip, uint64_t* e, int64_t size) except -1
    cdef Py_ssize_t _spans(self, const int64_t[::1] sv, const uint64_t* e, int64_t* st,
                           int64_t* ln, int64_t* lo, int64_t* hi, int64_t* total,
                           bint* capped) noexcept nogil
