# zarrx-sources: csrc/zx_crc32c.c
"""Shard index kernels: decode + validate a ``sharding_indexed`` index, encode one, and map a
batch of inner-chunk coordinates onto (shard coordinates, index slot).

Kernels return status codes; :mod:`zarrx.store.shard_index` turns a code into a ShardError naming the
shard, the entry and the numbers involved. Every length and offset is checked before memory is
touched, with overflow-safe arithmetic (never ``a + b > c`` on uint64 when ``a + b`` could wrap).
"""
cimport cython
import numpy as np
cimport numpy as cnp
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcpy
from cpython.buffer cimport PyBuffer_FillInfo
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize

from zarrx._clib.zx_crc32c cimport zx_crc32c
from zarrx._clib.zx_hugepage cimport zx_advise_huge
from zarrx._clib.zx_endian cimport zx_load_be64, zx_load_le32, zx_load_le64, zx_store_le32
from zarrx.errors import ShardError

cnp.import_array()

# Status codes of decode_index / locate (exported below for the Python caller).
cdef enum:
    HUGE_MIN = 4 << 20       # slabs this large ask for transparent huge pages

cdef enum:
    ZX_OK = 0
    ZX_BAD_LENGTH = 1        # index buffer is not exactly 16*n (+4 per checksum) bytes
    ZX_SHARD_TOO_SMALL = 2   # known shard size is smaller than the index
    ZX_BAD_CRC = 3           # a stored crc32c differs from the computed one
    ZX_HALF_SENTINEL = 4     # exactly one word of an entry is 2^64-1
    ZX_OVERFLOW = 5          # offset + nbytes (+ index length) does not fit in uint64
    ZX_PAST_END = 6          # offset + nbytes > shard size
    ZX_OVERLAP_INDEX = 7     # entry bytes overlap the index region
    ZX_NEGATIVE_COORD = 8    # locate(): a coordinate is negative
    ZX_TOO_LARGE = 9         # the entry (with a trailing index) reaches past 2^63-1 bytes

OK = ZX_OK
BAD_LENGTH = ZX_BAD_LENGTH
SHARD_TOO_SMALL = ZX_SHARD_TOO_SMALL
BAD_CRC = ZX_BAD_CRC
HALF_SENTINEL = ZX_HALF_SENTINEL
OVERFLOW = ZX_OVERFLOW
PAST_END = ZX_PAST_END
OVERLAP_INDEX = ZX_OVERLAP_INDEX
NEGATIVE_COORD = ZX_NEGATIVE_COORD
TOO_LARGE = ZX_TOO_LARGE

cdef uint64_t MISSING = 0xFFFFFFFFFFFFFFFF
cdef uint64_t MAX_OBJECT = 0x7FFFFFFFFFFFFFFF    # no store object (off_t) is larger


def index_nbytes(Py_ssize_t n_chunks, int n_crc):
    """Encoded size of an index of ``n_chunks`` entries followed by ``n_crc`` crc32c
    checksums: ``16 * n + 4 * n_crc``."""
    if n_chunks < 0 or n_chunks > (<Py_ssize_t>1 << 58):
        raise ShardError(f"shard index: expected 0 <= n_chunks <= 2^58, found {n_chunks}")
    if n_crc < 0 or n_crc > 64:
        raise ShardError(f"shard index: expected 0 to 64 crc32c checksums, found {n_crc}")
    return 16 * n_chunks + 4 * n_crc


cdef int _check_word_at(object word_at, Py_ssize_t n_chunks) except -1:
    """``word_at`` (None, or where each word of the entries in C order lies in the stored
    index, in words) checked to be a permutation's worth of in-range positions."""
    if word_at is None:
        return 0
    cdef const int64_t[::1] w = word_at
    cdef Py_ssize_t k
    if w.shape[0] != 2 * n_chunks:
        raise ShardError(f"shard index: expected {2 * n_chunks} word positions, found "
                         f"{w.shape[0]}")
    for k in range(w.shape[0]):
        if w[k] < 0 or w[k] >= 2 * n_chunks:
            raise ShardError(f"shard index: word position {w[k]} out of range")
    return 0


cdef int _check_entries(const uint64_t* e, Py_ssize_t n, int64_t shard_size, bint at_end,
                        uint64_t idx_len, Py_ssize_t* bad) noexcept nogil:
    """Validate every entry; on failure store its number in ``bad`` and return the status."""
    cdef Py_ssize_t i
    cdef uint64_t off, nb, size, data_lo, data_hi
    cdef bint known = shard_size >= 0
    size = <uint64_t>shard_size if known else 0
    # the data region: [idx_len, size) for "start", [0, size - idx_len) for "end"
    data_lo = 0 if at_end else idx_len
    data_hi = (size - idx_len) if at_end else size
    for i in range(n):
        off = e[2 * i]
        nb = e[2 * i + 1]
        if off == MISSING and nb == MISSING:
            continue
        bad[0] = i
        if off == MISSING or nb == MISSING:
            return ZX_HALF_SENTINEL
        if off > MISSING - nb:
            return ZX_OVERFLOW
        if at_end and off + nb > MISSING - idx_len:
            return ZX_OVERFLOW     # no shard can hold these bytes and the trailing index
        if off + nb > MAX_OBJECT - (idx_len if at_end else 0):
            return ZX_TOO_LARGE
        if known:
            if off + nb > size:
                return ZX_PAST_END
            if nb > 0 and (off + nb > data_hi or off < data_lo):
                return ZX_OVERLAP_INDEX
        elif nb > 0 and off < data_lo:
            return ZX_OVERLAP_INDEX
    bad[0] = -1
    return ZX_OK


cdef int _decode_entries(const uint8_t* p, Py_ssize_t n_chunks, int n_crc, bint big_endian,
                         const int64_t* w, uint64_t* e) noexcept nogil:
    """The ``2 * n_chunks`` words of the index at ``p`` (C order, or each at the position
    ``w`` gives) into ``e``, then its ``n_crc`` checksums verified, the outermost first (as
    codecs decode): ZX_OK or ZX_BAD_CRC. The caller checked that ``p`` holds
    ``16 * n_chunks + 4 * n_crc`` bytes and ``w`` (when not NULL) positions below
    ``2 * n_chunks``."""
    cdef Py_ssize_t i
    cdef int j
    if w == NULL:
        if big_endian:
            for i in range(2 * n_chunks):
                e[i] = zx_load_be64(p + 8 * i)
        else:
            for i in range(2 * n_chunks):
                e[i] = zx_load_le64(p + 8 * i)
    else:
        for i in range(2 * n_chunks):
            e[i] = zx_load_be64(p + 8 * w[i]) if big_endian else zx_load_le64(p + 8 * w[i])
    for j in range(n_crc - 1, -1, -1):
        if zx_load_le32(p + 16 * n_chunks + 4 * j) != \
                zx_crc32c(0, p, <size_t>(16 * n_chunks + 4 * j)):
            return ZX_BAD_CRC
    return ZX_OK


def decode_index(const uint8_t[::1] buf, Py_ssize_t n_chunks, long long shard_size,
                 bint at_end, int n_crc, bint big_endian=False, word_at=None):
    """Decode and validate a shard index.

    ``buf`` must be the index bytes exactly (``16 * n_chunks`` plus 4 per crc32c checksum:
    ``n_crc`` of them, each over all the bytes before it);
    ``word_at`` (an int64 array, or None for C order) gives, for each word of the entries in C
    order, its position (in words) in the stored index (a ``transpose`` among the index codecs);
    ``shard_size`` is the shard object's size in bytes, or -1 when unknown (then entries are
    checked for overflow and, with the index at the start, for overlap with it); ``at_end``
    says where the index lies in the shard, ``big_endian`` the byte order of its words.
    Returns ``(entries, status, bad_entry)``: entries an ``(n, 2)`` uint64 array of
    ``[offset, nbytes]`` (2^64-1 pairs for missing chunks), status one of the module's codes,
    bad_entry the failing entry's number (-1 when the failure is not about one entry).
    """
    cdef uint64_t idx_len = <uint64_t>index_nbytes(n_chunks, n_crc)
    cdef Py_ssize_t blen = buf.shape[0], i, j, bad = -1
    cdef const int64_t[::1] w
    cdef const int64_t* wp = NULL
    _check_word_at(word_at, n_chunks)
    cdef cnp.ndarray entries
    if <uint64_t>blen != idx_len:
        return np.empty((0, 2), dtype=np.uint64), ZX_BAD_LENGTH, -1
    try:
        entries = np.empty((n_chunks, 2), dtype=np.uint64)
    except MemoryError:
        raise ShardError(f"shard index: cannot allocate {n_chunks} entries") from None
    cdef uint64_t* e = <uint64_t*>cnp.PyArray_DATA(entries)
    cdef const uint8_t* p
    cdef int status
    if shard_size >= 0 and <uint64_t>shard_size < idx_len:
        return entries, ZX_SHARD_TOO_SMALL, -1
    if n_chunks == 0 and not n_crc:
        return entries, ZX_OK, -1
    p = &buf[0]
    if word_at is not None and n_chunks:
        w = word_at                       # positions checked by _check_word_at
        wp = &w[0]
    with nogil:
        status = _decode_entries(p, n_chunks, n_crc, big_endian, wp, e)
    if status != ZX_OK:
        return entries, status, -1
    with nogil:
        status = _check_entries(e, n_chunks, shard_size, at_end, idx_len, &bad)
    return entries, status, bad


def stored_crc(const uint8_t[::1] buf, bint has_crc):
    """``(stored, computed)`` crc32c of an index buffer (for error messages)."""
    cdef Py_ssize_t n = buf.shape[0]
    if not has_crc or n < 4:
        return 0, 0
    cdef uint32_t stored = zx_load_le32(&buf[n - 4])
    cdef uint32_t computed
    with nogil:
        computed = zx_crc32c(0, &buf[0], <size_t>(n - 4))
    return stored, computed


def encode_index(entries, int n_crc, bint big_endian=False, word_at=None):
    """The index bytes of an ``(n, 2)`` array of ``[offset, nbytes]``: uint64 pairs in C order
    (little-endian, or big-endian with ``big_endian``), or with each word at the position
    ``word_at`` gives (see :func:`decode_index`), followed by ``n_crc`` crc32c checksums (LE),
    each over all the bytes before it."""
    cdef cnp.ndarray arr = np.ascontiguousarray(entries, dtype=">u8" if big_endian else "<u8")
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ShardError(f"shard index: expected an (n, 2) array of entries, "
                         f"found shape {(<object>arr).shape}")
    cdef Py_ssize_t body = arr.shape[0] * 16, k, j
    cdef bytearray out = bytearray(index_nbytes(arr.shape[0], n_crc))
    cdef uint8_t[::1] dst = out
    cdef const uint8_t* src = <const uint8_t*>cnp.PyArray_DATA(arr)
    cdef const int64_t[::1] w
    cdef uint32_t crc
    _check_word_at(word_at, arr.shape[0])
    if body and word_at is None:
        memcpy(&dst[0], src, <size_t>body)
    elif body:
        w = word_at
        for k in range(2 * arr.shape[0]):
            memcpy(&dst[8 * w[k]], src + 8 * k, 8)
    for j in range(n_crc):
        with nogil:
            crc = zx_crc32c(0, &dst[0], <size_t>(body + 4 * j))
        zx_store_le32(&dst[body + 4 * j], crc)
    return bytes(out)



def pack_entries(Py_ssize_t n, dict values, kept_entries, kept_bytes, uint64_t base):
    """The entries and the parts of a shard of ``n`` slots packed in slot order from
    ``values`` (slot -> bytes-like of the new inner chunk, or None: none) and, when
    ``kept_entries`` (``(n, 2)`` decoded entries, validated) is not None, the stored chunks of
    the slots not in ``values``, cut from ``kept_bytes`` (the stored shard). Returns
    ``(entries, parts, present)``: the ``(n, 2)`` uint64 entries (offsets from ``base``, the
    first chunk's place; 2^64-1 pairs for missing chunks), the bytes of the present chunks one
    after another (a new value as it is; kept chunks lying back to back in the stored shard
    as one slice of ``kept_bytes`` per run), and the number of present chunks."""
    cdef cnp.ndarray entries_a = np.empty((n, 2), dtype=np.uint64)
    cdef uint64_t[:, ::1] e = entries_a
    cdef cnp.ndarray state_a = np.zeros(n, dtype=np.uint8)
    cdef uint8_t[::1] state = state_a      # 0: missing, 1: kept, 2: a new value, 3: deleted
    cdef const uint64_t[:, :] old
    cdef Py_ssize_t i, s, present = 0
    cdef uint64_t pos = base, run_at = 0, run_end = 0, off
    cdef bint run = False
    if kept_entries is not None:
        old = kept_entries
        if old.shape[0] != n or old.shape[1] != 2:
            raise ShardError(f"shard index: expected ({n}, 2) entries, found "
                             f"({old.shape[0]}, {old.shape[1]})")
        for i in range(n):
            if old[i, 0] != MISSING:
                state[i] = 1
                e[i, 1] = old[i, 1]
    for key, value in values.items():
        s = key
        if s < 0 or s >= n:
            raise ShardError(f"shard index: slot {s} out of range for {n} entries")
        if value is None:
            state[s] = 3
        else:
            state[s] = 2
            e[s, 1] = <uint64_t>len(value)
    parts = []
    for i in range(n):
        if state[i] == 1 or state[i] == 2:
            e[i, 0] = pos
            pos += e[i, 1]
            present += 1
        else:
            e[i, 0] = MISSING
            e[i, 1] = MISSING
        if state[i] == 1:
            off = old[i, 0]
            if run and run_end == off:
                run_end += e[i, 1]
                continue
            if run:
                parts.append(kept_bytes[run_at:run_end])
            run, run_at, run_end = True, off, off + e[i, 1]
        elif state[i] == 2:
            if run:
                parts.append(kept_bytes[run_at:run_end])
                run = False
            parts.append(values[i])
    if run:
        parts.append(kept_bytes[run_at:run_end])
    return entries_a, parts, present

def slot_spans(const uint64_t[:, ::1] entries, const int64_t[::1] slots, int64_t limit):
    """Where the inner chunks at ``slots`` (int64 slot numbers) lie, from a decoded and
    validated index ``entries`` (every present entry lies below 2^63): ``(starts, lengths,
    present, lo, hi, total, over)``, where ``starts[i]`` is chunk ``i``'s offset less ``lo``
    (-1 when it is missing, its length then 0), ``present`` the number of chunks not missing,
    ``[lo, hi)`` the bytes spanning them, ``total`` the sum of their lengths (at most 2^63-1) and ``over`` the
    first chunk longer than ``limit`` (-1: none; ``limit`` < 0: no limit). ``lo`` and ``hi``
    are 0 when no chunk is present. One pass over the slots, without the GIL. An entry that
    validation refuses (half missing, or ending past 2^63-1) is refused here too, so that no
    sum overflows."""
    cdef Py_ssize_t m = slots.shape[0], n = entries.shape[0], i, bad = -1, over = -1
    cdef bint invalid = False
    if entries.shape[1] != 2:
        raise ShardError(f"shard index: expected (n, 2) entries, found {entries.shape[1]} "
                         f"words each")
    cdef cnp.ndarray starts_a = np.empty(m, dtype=np.int64)
    cdef cnp.ndarray lengths_a = np.empty(m, dtype=np.int64)
    cdef int64_t* st = <int64_t*>cnp.PyArray_DATA(starts_a)
    cdef int64_t* ln = <int64_t*>cnp.PyArray_DATA(lengths_a)
    cdef int64_t s, off, nb, lo = 0x7FFFFFFFFFFFFFFF, hi = 0, total = 0
    cdef Py_ssize_t present = 0
    with nogil:
        for i in range(m):
            s = slots[i]
            if s < 0 or s >= n:
                bad = i
                break
            if entries[s, 0] == MISSING and entries[s, 1] == MISSING:
                st[i] = -1
                ln[i] = 0
                continue
            if entries[s, 0] > MAX_OBJECT or entries[s, 1] > MAX_OBJECT - entries[s, 0]:
                bad = i
                invalid = True
                break
            off = <int64_t>entries[s, 0]
            nb = <int64_t>entries[s, 1]
            st[i] = off
            ln[i] = nb
            present += 1
            total = total + nb if total <= <int64_t>MAX_OBJECT - nb else <int64_t>MAX_OBJECT
            if off < lo:
                lo = off
            if off + nb > hi:
                hi = off + nb
            if over < 0 and limit >= 0 and nb > limit:
                over = i
        if bad < 0 and present:
            for i in range(m):
                if st[i] >= 0:
                    st[i] -= lo
    if invalid:
        raise ShardError(f"shard index: entry {slots[bad]}: offset {entries[slots[bad], 0]} "
                         f"and {entries[slots[bad], 1]} bytes, expected both missing or an end "
                         f"at most {MAX_OBJECT}")
    if bad >= 0:
        raise ShardError(f"shard index: slot {slots[bad]} out of range for {n} entries")
    if not present:
        lo = 0
    return starts_a, lengths_a, present, lo, hi, total, over


@cython.boundscheck(False)  # safe: loops run over i < m, d < nd of arrays shaped (m, nd) / (nd,)
def locate(const int64_t[:, ::1] coords, const int64_t[::1] per_shard):
    """Map inner-chunk coordinates (one row each) onto shards.

    ``per_shard[d]`` is the number of inner chunks per shard along axis d. Returns
    ``(shards, slots, runs, status, bad_row)``: ``shards`` the (m, ndim) shard coordinates,
    ``slots`` the C-order slot of each chunk in its shard's index, ``runs`` the row numbers where
    a new run of equal shard coordinates starts (always starting with 0 when m > 0).
    """
    cdef Py_ssize_t m = coords.shape[0], nd = coords.shape[1], i, d
    if per_shard.shape[0] != nd:
        raise ShardError(f"locate: coordinates have {nd} dimensions, the shard grid "
                         f"{per_shard.shape[0]}")
    for d in range(nd):
        if per_shard[d] <= 0:
            raise ShardError(f"locate: inner chunks per shard along axis {d}: expected > 0, "
                             f"found {per_shard[d]}")
    cdef cnp.ndarray shards_a = np.empty((m, nd), dtype=np.int64)
    cdef cnp.ndarray slots_a = np.empty(m, dtype=np.int64)
    cdef cnp.ndarray runs_a = np.empty(m, dtype=np.int64)
    cdef int64_t[:, ::1] shards = shards_a
    cdef int64_t[::1] slots = slots_a
    cdef int64_t[::1] runs = runs_a
    cdef int64_t c, q, slot
    cdef Py_ssize_t nruns = 0, bad = -1
    cdef bint same
    with nogil:
        for i in range(m):
            slot = 0
            same = i > 0
            for d in range(nd):
                c = coords[i, d]
                if c < 0:
                    bad = i
                    break
                q = c // per_shard[d]
                shards[i, d] = q
                slot = slot * per_shard[d] + (c - q * per_shard[d])
                if same and shards[i - 1, d] != q:
                    same = False
            if bad >= 0:
                break
            slots[i] = slot
            if not same:
                runs[nruns] = i
                nruns += 1
    if bad >= 0:
        return shards_a, slots_a, runs_a[:0], ZX_NEGATIVE_COORD, bad
    return shards_a, slots_a, runs_a[:nruns], ZX_OK, -1


cdef class Slab:
    """A shard being assembled in place: a ``bytes`` object of ``size`` bytes, written through
    writable memoryviews of this exporter before anyone else sees it (``data``). Memoryviews
    taken from the slab keep it, and so the bytes, alive."""

    cdef readonly bytes data
    cdef Py_ssize_t _size

    def __cinit__(self, Py_ssize_t size):
        if size < 0:
            raise ShardError(f"shard slab: expected a size >= 0, found {size}")
        self.data = PyBytes_FromStringAndSize(NULL, size)
        self._size = size
        if size >= HUGE_MIN:        # fresh memory: fault it in 2 MiB at a time where aligned
            zx_advise_huge(PyBytes_AS_STRING(self.data), <size_t>size)

    def __getbuffer__(self, Py_buffer *view, int flags):
        PyBuffer_FillInfo(view, self, PyBytes_AS_STRING(self.data), self._size, 0, flags)

    def __releasebuffer__(self, Py_buffer *view):
        pass
