"""The stored bytes of many inner chunks of one shard, described by arrays.

:func:`read_slots` serves reads that want a large part of a shard (see
:mod:`zarrx.shard_read`): given the slots wanted as an int64 array, it returns one buffer and
two int64 arrays (where each inner chunk starts in the buffer, -1 when it is missing, and its
length), with no Python object per inner chunk. As in
:meth:`~zarrx.store.sharded.ShardedChunks.get_chunks`, the index and the inner chunks come from
one snapshot of the shard (one version of it), every index entry is checked against the
shard's size before use, and an inner chunk longer than an inner chunk may be is refused
unread.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from zarrx.store.base import ByteRange, HeldSnapshot, ObjectSnapshot, address_fields

if TYPE_CHECKING:
    from zarrx.store.sharded import ShardedChunks

__all__ = ["read_slots", "GAP_BYTES", "RANGE_BATCH"]

#: the inner chunks wanted are read as one range when it holds at most twice their bytes
#: plus this many more; else as a range each, ``RANGE_BATCH`` ranges at a time
GAP_BYTES = 1 << 20
RANGE_BATCH = 4096


def read_slots(src: ShardedChunks, obj: tuple[int, ...], slots: np.ndarray
               ) -> tuple[Any, np.ndarray, np.ndarray] | None:
    """``(buffer, starts, lengths)`` of the inner chunks in ``slots`` (int64 slot numbers) of
    the shard ``obj`` of a one-level sharded array: inner chunk ``i`` is
    ``buffer[starts[i]:starts[i] + lengths[i]]``, or missing when ``starts[i]`` is -1. None
    when the shard is not stored. A shard replaced while it is read is read again."""
    return src.at_one_version(obj, lambda snap: _read(src, snap, obj, slots))  # type: ignore


def _read(src: ShardedChunks, snap: ObjectSnapshot, obj: tuple[int, ...],
          slots: np.ndarray) -> tuple[Any, np.ndarray, np.ndarray]:
    from zarrx.store.sharded import WHOLE_READ_MAX
    fmt = src.formats[0]
    held = False
    if snap.whole_reads and snap.size is not None and snap.size <= WHOLE_READ_MAX and \
            2 * len(slots) >= fmt.n and \
            int(slots.min()) + (fmt.n - 1 - int(slots.max())) <= fmt.n // 16 and \
            src._cache.get((obj,), snap.generation) is None:
        # as ShardedChunks._whole: one read of the object where the index and the chunks
        # would take two, and span nearly all of it
        snap = HeldSnapshot(snap.key, snap.read([None])[0], snap.generation)
        held = True
    entries = src._index(snap, (obj,), 0, 0, snap.size)
    # a missing chunk's offset, 2**64-1, is -1 as int64: the offsets are the starts as they are
    starts = entries[slots, 0].view(np.int64)
    lengths = entries[slots, 1].view(np.int64)
    present = starts >= 0
    if not present.any():
        return b"", starts, np.zeros(len(slots), dtype=np.int64)
    lengths[~present] = 0
    lim = None if src._unit_limit is None else src._unit_limit()
    if lim is not None and int(lengths.max()) > lim.nbytes:     # refused unread
        i = int(np.argmax(lengths > lim.nbytes))
        raise lim.error(int(lengths[i])).at(
            array=src.name, **src.location(_coords(src, obj, int(slots[i]))),
            **address_fields(src.store, src.objects.key(obj)))
    lo = int(starts.min(where=present, initial=np.iinfo(np.int64).max))
    hi = _end(starts, lengths, present, 0)
    total = int(lengths.sum())
    if held or hi - lo <= 2 * total + GAP_BYTES:
        data = snap.read([ByteRange.trusted(lo, hi - lo)])[0]
        got = memoryview(data).nbytes
        if got != hi - lo:                  # only when the shard's size was unknown
            i = int(np.argmax(present & (starts + lengths - lo > got)))
            _short(src, obj, slots, i, entries, lo, hi, got)
        np.subtract(starts, lo, out=starts, where=present)
        return data, starts, lengths
    buf = np.empty(total, dtype=np.uint8)
    idx = np.flatnonzero(present)
    at = np.cumsum(lengths) - lengths
    for b in range(0, idx.size, RANGE_BATCH):
        part = idx[b:b + RANGE_BATCH]
        ranges = [ByteRange.trusted(o, n) for o, n in zip(starts[part].tolist(),
                                                          lengths[part].tolist())]
        for i, data in zip(part.tolist(), snap.read(ranges)):
            view = np.frombuffer(data, dtype=np.uint8)
            s, n = int(starts[i]), int(lengths[i])
            if view.size != n:              # only when the shard's size was unknown
                _short(src, obj, slots, i, entries, s, s + n, view.size)
            buf[int(at[i]):int(at[i]) + n] = view
    np.copyto(starts, at, where=present)
    return buf, starts, lengths


def _end(starts: np.ndarray, lengths: np.ndarray, present: np.ndarray, step: int) -> int:
    """The end of the last byte of the chunks ``present`` (summed a block at a time, so that no
    array of every end is made)."""
    step = step or 1 << 16
    return max(int(np.add(starts[b:b + step], lengths[b:b + step])
                   .max(where=present[b:b + step], initial=0))
               for b in range(0, len(starts), step))


def _coords(src: ShardedChunks, obj: tuple[int, ...], slot: int) -> tuple[int, ...]:
    base = np.asarray(obj, dtype=np.int64) * np.asarray(src.object_ratio, dtype=np.int64)
    return src._coords_of(base, (slot,))


def _short(src: ShardedChunks, obj: tuple[int, ...], slots: np.ndarray, i: int,
           entries: np.ndarray, start: int, stop: int, got: int) -> None:
    """Raise the error for inner chunk ``i``, past the end of a read that came back short."""
    slot = int(slots[i])
    off, nb = entries[slot].tolist()
    raise src.formats[0].entry_error(slot, off, nb, 0, None,
                                     read=(start, stop, got)).at(**src._level_loc(obj, ()))
