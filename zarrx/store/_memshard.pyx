"""Reads of the inner chunks of shards a :class:`~zarrx.store.memory.MemoryStore` keeps, one
call per shard: :meth:`ShardValues.read` looks the shard's key up in the store's dict, decodes
and validates its index in the kept value's memory and returns that value with where each
inner chunk wanted lies in it, copying nothing. A kept value (``bytes``, or a sealed
:class:`~zarrx.store._values.Value`) is never changed, only replaced: the one looked up is the
snapshot, and the index and the chunks come from it even while a writer replaces the key.

A shard the call reads returns what :func:`zarrx.store.shard_slots.read_slots` returns (its
starts are offsets in the whole value). A key not there reads as None. Everything else goes to
``fallback(i, slots)``, the Python path, which reads the shard again from the start and words
the error, naming the key, as it always has: a value shorter than its index, an index that
does not decode or validate, an inner chunk longer than ``limit``, a key that is no ``str``,
memory not to be had; also a large index (``index_max``) of which the read wants few chunks,
which the Python path keeps cached.

Every entry used is validated against the value's size before it is used
(``_shard_index._check_entries``, the decoder's own check, through
:class:`~zarrx.store._shardkernel.ShardKernel`, which the local store's shard reads share), so
every chunk handed on lies inside the value. An index of 64 KiB or more is decoded without the
GIL.
"""
from libc.stdint cimport int64_t, uint8_t, uint64_t
from libc.stdlib cimport free, malloc
from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE

import numpy as np
cimport numpy as cnp

from zarrx.store._shardkernel cimport ShardKernel
from zarrx.store._values import Value

cnp.import_array()

cdef enum:
    ZX_OK = 0                  # (_shard_index's status)

cdef object _HAND_ON = object()      # _read's answer: the Python path reads the shard
cdef Py_ssize_t _read = 0, _handed_on = 0


cdef class ShardValues(ShardKernel):
    """The shards at ``keys`` (a window of shards of one array, one level of sharding) in
    ``values`` (a memory store's dict of kept values), with the index, ``limit``,
    ``index_max`` and ``fallback`` of :class:`~zarrx.store._shardkernel.ShardKernel`."""
    cdef list keys
    cdef dict values

    def __cinit__(self, dict values, list keys, Py_ssize_t n_chunks, int n_crc, bint at_end,
                  bint big_endian, word_at, int64_t limit, int64_t index_max,
                  object fallback):
        self._setup("shard values", n_chunks, n_crc, at_end, big_endian, word_at, limit,
                    index_max, fallback)
        self.values, self.keys = values, keys

    def read(self, Py_ssize_t i, object slots):
        """``(value, starts, lengths)`` of the inner chunks at ``slots`` (an int64 array) of
        shard ``i`` (as :func:`zarrx.store.shard_slots.read_slots` returns them, the starts
        offsets in the kept value), None when its key is not there, or what
        ``fallback(i, slots)`` returns."""
        global _read, _handed_on
        cdef const int64_t[::1] sv = slots
        cdef int64_t smin, smax
        cdef Py_buffer view
        self._wanted(sv, &smin, &smax)
        if i < 0 or i >= len(self.keys):
            raise IndexError(f"shard values: shard {i} of {len(self.keys)}")
        key = self.keys[i]
        if type(key) is not str or self._via_cache(sv.shape[0]):
            _handed_on += 1
            return self.fallback(i, slots)
        value = self.values.get(key)     # (atomic under the GIL; the value is never changed)
        if value is None:
            return None
        _read += 1
        if type(value) is bytes:
            got = self._chunks(value, <const uint8_t*>PyBytes_AS_STRING(value),
                               PyBytes_GET_SIZE(value), sv)
        elif type(value) is Value:
            PyObject_GetBuffer(value, &view, PyBUF_SIMPLE)
            try:
                got = self._chunks(value, <const uint8_t*>view.buf, view.len, sv)
            finally:
                PyBuffer_Release(&view)
        else:
            got = _HAND_ON
        if got is _HAND_ON:
            _handed_on += 1
            return self.fallback(i, slots)
        return got

    cdef object _chunks(self, object value, const uint8_t* p, int64_t size,
                        const int64_t[::1] sv):
        """:meth:`read` of the kept ``value`` (``size`` bytes at ``p``): the result or
        ``_HAND_ON``."""
        cdef int64_t L = self.idx_len, lo, hi, total
        cdef Py_ssize_t m = sv.shape[0], present
        cdef bint capped
        cdef uint64_t* e
        cdef cnp.ndarray starts_a, lengths_a
        if size < L:                     # (the Python path words the truncation)
            return _HAND_ON
        e = <uint64_t*>malloc(<size_t>(16 * self.n))
        if e == NULL:
            return _HAND_ON
        try:
            if self._entries(p + (size - L if self.at_end else 0), e, size) != ZX_OK:
                return _HAND_ON
            starts_a = np.empty(m, dtype=np.int64)
            lengths_a = np.empty(m, dtype=np.int64)
            present = self._spans(sv, e, <int64_t*>cnp.PyArray_DATA(starts_a),
                                  <int64_t*>cnp.PyArray_DATA(lengths_a), &lo, &hi, &total,
                                  &capped)
        finally:
            free(e)
        if present < 0:                  # a chunk over the limit, or a slot changed: to Python
            return _HAND_ON
        return (value if present else b""), starts_a, lengths_a


def counts():
    """How many shards the reads of this module read from kept values, and how many they
    handed to the Python path, since the process started (for tests)."""
    return {"read": _read, "handed_on": _handed_on}
