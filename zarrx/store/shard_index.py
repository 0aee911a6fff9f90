"""The shard index of one sharding level: decode (validated), encode, cache, and its errors.

Index layout: ``[offset, nbytes]`` uint64 pairs, one per inner chunk in C order of the inner
chunks (in the sharding codec's axis order), encoded by ``bytes`` in either byte order (after a
``transpose`` of that ``(*per_shard, 2)`` array, when the index codecs begin with one) and
followed by any number of crc32c checksums (little-endian, each of all the bytes before it);
``2^64-1`` in both words marks a missing chunk. The index lies at the end of the shard
(``index_location: "end"``) or at its
start.

The kernels (:mod:`zarrx.store._shard_index`) return status codes and numbers; this module builds
the message once, naming the entry and the numbers involved. The shard is named by the error's
location fields (``array``, ``key``, and ``inner`` for a nested shard), which the caller gives
as a function called only when something is wrong.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from math import prod
from collections.abc import Callable, Hashable, Mapping
from typing import Any

import numpy as np

from zarrx import _fork, config
from zarrx.errors import ShardError
from zarrx.metadata.model import ShardGeometry
from zarrx.store import _shard_index as _k
from zarrx.store.base import ByteRange
from zarrx.store.pieces import Pieces

__all__ = ["IndexFormat", "IndexCache", "MISSING", "INDEX_CACHE_SIZE", "Where"]

#: the location fields of a shard's errors, worked out only when one is raised
Where = Callable[[], Mapping[str, "str | None"]]

MISSING = 2**64 - 1
#: decoded indexes an array keeps at most; their bytes are bounded by the setting
#: ``zarrx.config.shard_index_cache_bytes`` too
INDEX_CACHE_SIZE = 16


class IndexFormat:
    """Decoding and encoding of one level's index. ``slot_coords(slot)`` names an entry's inner
    chunk in messages (in array axis order)."""

    def __init__(self, geom: ShardGeometry) -> None:
        lv = geom.level
        self.n = geom.n_chunks
        self.nbytes = geom.index_nbytes
        self.crc = lv.index_crc32c
        self.big = lv.index_endian == "big"
        self.at_end = lv.index_location == "end"
        self.location = lv.index_location
        self.range = ByteRange.last(self.nbytes) if self.at_end else ByteRange.slice(0, self.nbytes)
        self._per = geom.per_shard
        self._inv = None if geom.perm is None else [int(i) for i in np.argsort(geom.perm)]
        self._order = lv.index_order
        self.transposed = lv.index_order is not None    # (the word positions: word_at)
        self._word_at: np.ndarray | None = None

    @property
    def word_at(self) -> np.ndarray | None:
        """Where each word of the entries (in C order) lies in the stored index, when the index
        codecs transpose it (None otherwise); worked out at the first index read or written,
        not when an array is opened."""
        if self._order is not None and self._word_at is None:
            self._word_at = _word_positions(self._per, self._order)
        return self._word_at

    def slot_coords(self, slot: int) -> tuple[int, ...]:
        if not self._per:
            return ()
        local = [int(i) for i in np.unravel_index(slot, self._per)]
        return tuple(local if self._inv is None else [local[i] for i in self._inv])

    # -- decoding ----------------------------------------------------------------------------
    def decode(self, buf: bytes | memoryview, size: int | None, where: Where) -> np.ndarray:
        """The ``(n, 2)`` entries of an index read from a shard of ``size`` bytes (None when
        unknown: entries are then checked for what needs no size, and a short read of an inner
        chunk is reported by the reader). ShardError located by ``where()`` if invalid."""
        entries, status, bad = _k.decode_index(buf, self.n, -1 if size is None else size,
                                               self.at_end, self.crc, self.big, self.word_at)
        if status != _k.OK:
            raise self._error(status, bad, entries, buf, size).at(**where())
        return entries

    def decode_whole(self, blob: bytes | memoryview, where: Where) -> np.ndarray:
        """The entries of a whole shard object (its size known)."""
        size, L = len(blob), self.nbytes
        if size < L:
            return self.decode(blob, None, where)            # reports the truncation
        view = memoryview(blob)
        return self.decode(view[size - L:] if self.at_end else view[:L], size, where)

    def _error(self, status: int, bad: int, entries: np.ndarray, buf: bytes | memoryview,
               size: int | None) -> ShardError:
        L, n = self.nbytes, self.n
        layout = f"{n} entries x 16 B" + ("" if not self.crc else " + 4 B crc32c"
                                           if self.crc == 1 else f" + {self.crc} x 4 B crc32c")
        if status in (_k.BAD_LENGTH, _k.SHARD_TOO_SMALL):
            # a range read clipped to a short object returns the whole object
            got = len(buf) if status == _k.BAD_LENGTH or size is None else size
            if got > L:
                return ShardError(f"the index read returned {got} bytes, expected {L}")
            if got == 0:
                return ShardError(f"empty (0 bytes); expected at least its {L}-byte index "
                                  f"({layout}) at the {self.location}")
            return ShardError(f"truncated: {got} bytes, shorter than its {L}-byte index "
                              f"({layout}) at the {self.location}")
        if status == _k.BAD_CRC:
            view = memoryview(buf)
            for j in range(self.crc - 1, -1, -1):     # the outermost first, as decoded
                stored, computed = _k.stored_crc(view[:16 * n + 4 * j + 4], True)
                if stored != computed:
                    break
            over = f"the {16 * n}-byte index" + (f" and the {j} checksum(s) after it" if j
                                                   else "")
            return ShardError(f"index checksum mismatch: stored crc32c {stored:#010x}, "
                              f"computed {computed:#010x} over {over}")
        off, nb = int(entries[bad, 0]), int(entries[bad, 1])
        return self.entry_error(bad, off, nb, status, size)

    def entry_error(self, slot: int, off: int, nb: int, status: int, size: int | None,
                    read: tuple[int, int, int] | None = None) -> ShardError:
        """The error for index entry ``slot`` (its location left to the caller). ``read``:
        ``(start, stop, got)`` of an inner chunk read that came back short (the shard's size
        was not known at decode time)."""
        L = self.nbytes
        entry = f"index entry {slot} (inner chunk {self.slot_coords(slot)})"
        of_size = "the shard" if size is None else f"the {size}-byte shard"
        if read is not None:
            start, stop, got = read
            return ShardError(f"{entry}: bytes [{off}, {off + nb}) extend past the end of the "
                              f"shard (a read of bytes [{start}, {stop}) returned {got} bytes)")
        if status == _k.HALF_SENTINEL:
            return ShardError(f"{entry}: offset {off}, nbytes {nb}: expected both words 2^64-1 "
                              f"(missing chunk) or neither")
        if status == _k.OVERFLOW:
            if off + nb > MISSING:
                return ShardError(f"{entry}: offset {off} + nbytes {nb} overflows uint64")
            return ShardError(f"{entry}: offset {off} + nbytes {nb} + the {L}-byte index "
                              f"overflows uint64")
        if status == _k.TOO_LARGE:
            with_index = f" and the {L}-byte index after them" if self.at_end else ""
            return ShardError(f"{entry}: bytes [{off}, {off + nb}){with_index} reach past "
                              f"2^63-1, the largest possible shard")
        if status == _k.PAST_END:
            return ShardError(f"{entry}: bytes [{off}, {off + nb}) extend past the end of "
                              f"{of_size}")
        if status == _k.OVERLAP_INDEX:
            lo, hi = (0, L) if not self.at_end else (size - L, size)  # type: ignore[operator]
            return ShardError(f"{entry}: bytes [{off}, {off + nb}) overlap the index at bytes "
                              f"[{lo}, {hi}) of {of_size}")
        return ShardError(f"index status {status}")  # pragma: no cover

    # -- encoding ----------------------------------------------------------------------------
    def encode(self, entries: np.ndarray) -> bytes:
        return _k.encode_index(entries, self.crc, self.big, self.word_at)

    def pack(self, values: Mapping[int, Any],
             kept: tuple[np.ndarray, memoryview] | None = None
             ) -> tuple[Pieces, np.ndarray] | tuple[None, None]:
        """The shard of ``values`` (slot -> bytes of an inner chunk; a :class:`Pieces`: a nested
        shard; None: no chunk), packed in slot order, and its index entries; ``(None, None)``
        when it holds no chunk. ``kept``: the entries and bytes of the stored shard, whose
        chunks at the slots not in ``values`` are kept; they are passed on as runs of its bytes
        (one view per run of chunks that lie back to back in it), not one object per chunk.
        The entries and the parts are found by one kernel pass over the slots."""
        entries, parts, present = _k.pack_entries(
            self.n, values if type(values) is dict else dict(values),
            None if kept is None else kept[0], None if kept is None else kept[1],
            0 if self.at_end else self.nbytes)
        if not present:
            return None, None
        index = self.encode(entries)
        # views of the parts, not a copy: the store writes them, or joins them once
        parts.insert(len(parts) if self.at_end else 0, index)
        return Pieces(parts), entries

    def fixed_entries(self, stride: int) -> np.ndarray:
        """Entries of a shard whose every inner chunk is ``stride`` bytes, in slot order."""
        n = self.n
        base = 0 if self.at_end else self.nbytes
        entries = np.empty((n, 2), dtype=np.uint64)
        entries[:, 0] = np.arange(n, dtype=np.uint64) * np.uint64(stride) + np.uint64(base)
        entries[:, 1] = stride
        return entries


def _word_positions(per_shard: tuple[int, ...], order: tuple[int, ...] | None
                    ) -> np.ndarray | None:
    """Where each word of the index entries (in C order) lies in an index encoded after a
    ``transpose`` by ``order`` of the ``(*per_shard, 2)`` array (None: no transpose)."""
    if order is None:
        return None
    shape = (*per_shard, 2)
    stored = [shape[o] for o in order]
    inverse = [int(i) for i in np.argsort(order)]
    return np.arange(2 * prod(per_shard), dtype=np.int64).reshape(stored) \
        .transpose(inverse).reshape(-1)


class IndexCache:
    """Thread-safe LRU of decoded indexes: key -> (generation, entries, size). An entry is only
    served for the generation it was read from, so it never describes another version of the
    shard. Indexes read from a store that gives no generation are not cached, nor those read
    at a generation marked ``recent`` (a ``LocalStore`` file stamped within the clock's current
    tick, which a later file reusing its inode could repeat: ``zarrx.store.localsnap``).

    It holds at most ``capacity`` indexes and at most ``budget()`` bytes of them (the setting
    ``shard_index_cache_bytes``, read at each use): the newest index is always kept when it
    fits the budget alone, older ones are dropped until the rest fits too; an index larger
    than the budget is used by the read that decoded it and not kept. ``zarrx.shard_objects``
    keeps decoded shards (bytes) in one, with a budget of its own."""

    def __init__(self, capacity: int = INDEX_CACHE_SIZE,
                 budget: Callable[[], int] | None = None) -> None:
        self._data: OrderedDict[Hashable, tuple[Hashable, np.ndarray, int | None, int]] = \
            OrderedDict()
        self._lock = threading.Lock()
        self.capacity = capacity
        self._budget = budget if budget is not None else _configured_budget
        self.nbytes = 0             # the bytes the kept indexes hold
        _fork.track(self)

    def _after_fork(self) -> None:
        """A child forked while another thread changed this cache starts with it empty."""
        if _fork.reinit(self._lock):
            self._data.clear()
            self.nbytes = 0

    def __len__(self) -> int:
        return len(self._data)

    def get(self, key: Hashable, generation: Hashable | None
            ) -> tuple[np.ndarray, int | None] | None:
        if generation is None:
            return None
        budget = self._budget()
        with self._lock:
            if self.nbytes > budget:                # lowered since: drop the oldest now
                self._trim(budget)
            got = self._data.get(key)
            if got is None or got[0] != generation:
                return None
            self._data.move_to_end(key)
            return got[1], got[2]

    def put(self, key: Hashable, generation: Hashable | None, entries: np.ndarray,
            size: int | None) -> None:
        if generation is None or getattr(generation, "recent", False):
            return                          # (recent: another version may repeat it)
        held = _held(entries)
        budget = self._budget()
        with self._lock:
            old = self._data.pop(key, None)
            if old is not None:
                self.nbytes -= old[3]
            if held > budget:
                return                      # used by this read, not kept
            self._data[key] = (generation, entries, size, held)
            self.nbytes += held
            self._trim(budget)

    def _trim(self, budget: int) -> None:
        """Drop the least recently used indexes until the rest fit (the lock held)."""
        while len(self._data) > self.capacity or self.nbytes > budget:
            self.nbytes -= self._data.popitem(last=False)[1][3]

    def pop_where(self, pred: Callable[[Hashable], bool]) -> None:
        with self._lock:
            for k in [k for k in self._data if pred(k)]:
                self.nbytes -= self._data.pop(k)[3]

    def pop_object(self, obj: Hashable) -> None:
        """Drop the indexes of the stored object ``obj``: those whose key (a tuple) starts with
        it (with no call per index kept)."""
        with self._lock:
            for k in [k for k in self._data if k[0] == obj]:
                self.nbytes -= self._data.pop(k)[3]

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self.nbytes = 0


def _configured_budget() -> int:
    return config.get("shard_index_cache_bytes")  # type: ignore[return-value]


def _held(entries: np.ndarray | bytes) -> int:
    """The bytes keeping ``entries`` keeps alive: its own, or those of the array it views (a
    bytes object, as the decoded shards of ``zarrx.shard_objects`` are, holds its length)."""
    if not isinstance(entries, np.ndarray):
        return memoryview(entries).nbytes
    if entries.base is None:                # as the index kernel returns them
        return entries.nbytes
    owner: object = entries
    while isinstance(owner, np.ndarray) and owner.base is not None:
        owner = owner.base
    if isinstance(owner, np.ndarray):
        return max(owner.nbytes, entries.nbytes)
    try:
        return max(memoryview(owner).nbytes, entries.nbytes)  # type: ignore[arg-type]
    except TypeError:
        return entries.nbytes
