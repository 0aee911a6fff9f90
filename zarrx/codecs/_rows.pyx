"""Raw chunks of one buffer copied into the rows of an array: the ``bytes`` codec of many
chunks at once (:func:`zarrx.codecs.plan_many.decode_many`), with no Python call per chunk."""
from libc.stdint cimport int64_t, uint8_t, uint64_t
from libc.string cimport memcpy


def copy_spans(const uint8_t[::1] src, const int64_t[::1] starts, const int64_t[::1] lengths,
               uint8_t[:, ::1] rows):
    """``rows[i] = src[starts[i]:starts[i] + lengths[i]]`` for every ``i`` whose start is not
    negative, in one GIL-free section (chunks lying back to back in ``src``, as writers
    pack a shard, in one copy), when every such span is a row's length and lies inside
    ``src``: then -1. Otherwise the first chunk that is not so, with nothing copied."""
    cdef Py_ssize_t k = starts.shape[0], i
    cdef size_t n = <size_t>src.shape[0], nb = <size_t>rows.shape[1]
    if lengths.shape[0] != k or rows.shape[0] != k:
        raise ValueError(f"copy_spans: {k} starts, {lengths.shape[0]} lengths and "
                         f"{rows.shape[0]} rows")
    cdef int64_t s
    cdef Py_ssize_t present = 0
    for i in range(k):
        s = starts[i]
        if s >= 0:
            if <uint64_t>lengths[i] != nb or <uint64_t>s > n or nb > n - <size_t>s:
                return i
            present += 1
    if not nb or not present:
        return -1
    cdef const uint8_t* base = &src[0]
    cdef uint8_t* out = &rows[0, 0]
    cdef Py_ssize_t j
    with nogil:
        i = 0
        while i < k:
            s = starts[i]
            if s < 0:
                i += 1
                continue
            # a run of chunks lying back to back in src (as writers pack a shard): one copy
            j = i + 1
            while j < k and starts[j] == s + <int64_t>((j - i) * nb):
                j += 1
            memcpy(out + <size_t>i * nb, base + s, <size_t>(j - i) * nb)
            i = j
    return -1
