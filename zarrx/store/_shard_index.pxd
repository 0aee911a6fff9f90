# Shared with the local store's shard reads (zarrx.store._localshard).
from libc.stdint cimport int64_t, uint8_t, uint64_t

# ``word_at`` checked to hold 2 * n_chunks positions below 2 * n_chunks (None: C order).
cdef int _check_word_at(object word_at, Py_ssize_t n_chunks) except -1
# The entries of an index of ``16 * n_chunks + 4 * n_crc`` bytes at ``p`` into ``e``, its
# checksums verified: ZX_OK (0) or ZX_BAD_CRC (3). ``word_at``: NULL, or positions checked.
cdef int _decode_entries(const uint8_t* p, Py_ssize_t n_chunks, int n_crc, bint big_endian,
                         const int64_t* word_at, uint64_t* e) noexcept nogil
# Every entry validated against the shard's size (-1: unknown): a status, ``bad`` the entry.
cdef int _check_entries(const uint64_t* e, Py_ssize_t n, int64_t shard_size, bint at_end,
                        uint64_t idx_len, Py_ssize_t* bad) noexcept nogil
