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

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from zarrx.store import _shard_index as _k
from zarrx.store._localshard import ShardFiles
from zarrx.store._memshard import ShardValues
from zarrx.store.base import ByteRange, HeldSnapshot, ObjectSnapshot, address_fields

if TYPE_CHECKING:
    from zarrx.store.sharded import ShardedChunks

__all__ = ["read_slots", "slot_reader", "GAP_BYTES", "RANGE_BATCH", "INDEX_READ_MAX"]

#: the inner chunks wanted are read as one range when it holds at most twice their bytes
#: plus this many more; else as a range each, ``RANGE_BATCH`` ranges at a time
GAP_BYTES = 1 << 20
RANGE_BATCH = 4096
#: a store's shard kernel (``slot_reader``) reads a shard's index each time; a larger index
#: of which a read wants fewer than a sixteenth of the inner chunks is read through the
#: index cache instead (a read of one inner chunk of a shard of 2^16 would read 1 MiB)
INDEX_READ_MAX = 1 << 16


def slot_reader(src: ShardedChunks, objs: np.ndarray) -> Callable[[int, np.ndarray], Any]:
    """``reader(i, slots)``: :func:`read_slots` of the shard ``objs[i]`` (``objs``: the
    ``(k, ndim)`` int64 coordinates of shards a read visits, a window of them). Where the
    store lets a kernel open its objects (:meth:`~zarrx.store.base.Store.kernel_paths`),
    one call per shard opens its file and reads its index and the chunks
    (:class:`~zarrx.store._localshard.ShardFiles`), the shards' keys turned into paths once
    for all of them; where it lets a kernel take its kept values
    (:meth:`~zarrx.store.base.Store.kernel_values`), one call per shard looks its value up
    and finds the chunks in it (:class:`~zarrx.store._memshard.ShardValues`); a kernel hands
    a shard it does not read (an error to word, say) to :func:`read_slots`."""
    def fallback(i: int, slots: np.ndarray) -> Any:
        return read_slots(src, tuple(objs[i].tolist()), slots)

    if len(src.levels) != 1 or not len(objs):
        return fallback
    store = src.store
    paths = store.kernel_paths()
    values = None if paths is not None else store.kernel_values()
    if paths is None and values is None:
        return fallback
    fmt = src.formats[0]
    lim = None if src._unit_limit is None else src._unit_limit()
    limit = -1 if lim is None else lim.nbytes
    word_at = (lambda: fmt.word_at) if fmt.transposed else None
    if values is not None:
        return ShardValues(values, src.objects.keys_of(objs), fmt.n, int(fmt.crc), fmt.at_end,
                           fmt.big, word_at, limit, INDEX_READ_MAX, fallback).read
    from zarrx.store.sharded import WHOLE_READ_MAX
    return ShardFiles(paths[0], src.objects.keys_of(objs), paths[1], paths[2], fmt.n,
                      int(fmt.crc), fmt.at_end, fmt.big, word_at, limit, WHOLE_READ_MAX,
                      GAP_BYTES, INDEX_READ_MAX, fallback).read


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
            int(np.minimum.reduce(slots)) + (fmt.n - 1 - int(np.maximum.reduce(slots))) \
            <= fmt.n // 16 and \
            src._cache.get((obj,), snap.generation) is None:
        # as ShardedChunks._whole: one read of the object where the index and the chunks
        # would take two, and span nearly all of it
        snap = HeldSnapshot(snap.key, snap.read([None])[0], snap.generation)
        held = True
    entries = src._index(snap, (obj,), 0, 0, snap.size)
    lim = None if src._unit_limit is None else src._unit_limit()
    # one kernel pass: each chunk's start (less the lowest), its length, and the span of them
    starts, lengths, present, lo, hi, total, over = _k.slot_spans(
        entries, slots, -1 if lim is None else lim.nbytes)
    if not present:
        return b"", starts, lengths
    if over >= 0:                                                # refused unread
        raise lim.error(int(lengths[over])).at(             # type: ignore[union-attr]
            array=src.name, **src.location(_coords(src, obj, int(slots[over]))),
            **address_fields(src.store, src.objects.key(obj)))
    if held or hi - lo <= 2 * total + GAP_BYTES:
        data = snap.read([ByteRange.trusted(lo, hi - lo)])[0]
        got = memoryview(data).nbytes
        if got != hi - lo:                  # only when the shard's size was unknown
            i = int(np.argmax((starts >= 0) & (starts + lengths > got)))
            _short(src, obj, slots, i, entries, lo, hi, got)
        return data, starts, lengths
    buf = np.empty(total, dtype=np.uint8)
    present_at = starts >= 0
    np.add(starts, lo, out=starts, where=present_at)           # offsets in the shard
    idx = np.flatnonzero(present_at)
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
    np.copyto(starts, at, where=present_at)
    return buf, starts, lengths


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
