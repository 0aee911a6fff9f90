"""The write side of a shard: merging new inner chunks into the stored shard, and assembling
it (packed in slot order, or encoded in place into a slab).

Everything here works on values handed in by one write operation (:meth:`ShardedChunks.commit`)
and keeps no state between calls.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from operator import attrgetter

import numpy as np

from zarrx.metadata.model import ShardGeometry
from zarrx.store import _shard_index as _k
from zarrx.store.chunks import Coords, Slab
from zarrx.store.pieces import Pieces
from zarrx.store.shard_index import MISSING, IndexFormat
from zarrx.store.update import PARTIAL

__all__ = ["merge_shard", "ShardSlab"]

_obj_of = attrgetter("obj")

Finish = Callable[[int, "bytes | memoryview | None"], "bytes | None"]


def merge_shard(formats: Sequence[IndexFormat], level: int, old: bytes | memoryview | None,
                items_at: list[int], items: Sequence[tuple[Coords, object]], slots: np.ndarray,
                finish: Finish, where_of: Callable[[tuple[int, ...]], Mapping[str, str | None]],
                path: tuple[int, ...] = (), slab: Slab | None = None
                ) -> tuple[bytes | Pieces | None, np.ndarray | None]:
    """The new bytes (None: nothing left; :class:`Pieces`: views of the parts, in order) and
    index entries of the level-``level`` shard
    ``old`` (None: missing) with the items ``items_at`` (indexes into ``items``) merged in.

    ``slots[j, level]`` is item j's index slot at each level; an item's value is its new bytes,
    None (delete it), or PARTIAL (``finish(j, current bytes)`` gives the new bytes; several at
    once by ``finish.many``, when it has it: see :func:`_finish_many`). Nested
    levels merge recursively; ``where_of(path)`` gives the location fields of errors about the
    shard at ``path`` (called only when there is one)."""
    fmt = formats[level]
    # the stored inner chunks stay where they are (their entries and the shard's bytes): only
    # the slots written are held as Python objects, never one per stored chunk (a one-chunk
    # write into a shard of 2^18 stored chunks built 2^18 views, taking seconds and many MiB)
    kept: tuple[np.ndarray, memoryview] | None = None
    if old is not None and not _replaces(formats, level, items_at, items, slots):
        kept = fmt.decode_whole(old, lambda: where_of(path)), memoryview(old)
    last = level == len(formats) - 1
    values: dict[int, object] = {}        # slot -> its new bytes, or None (deleted)
    groups: dict[int, list[int]] = {}
    if last:
        # the last item of each slot (slots in the order first written), with no call per
        # chunk; those left PARTIAL (covered in part) are finished one by one, in that order
        last_of = dict(zip(slots[items_at, level].tolist(), items_at))
        values = dict(zip(last_of, [items[j][1] for j in last_of.values()]))
        if id(PARTIAL) in set(map(id, values.values())):
            todo = [(slot, j) for slot, j in last_of.items() if values[slot] is PARTIAL]
            made = _finish_many(finish, todo, kept)
            if made is not None:
                values.update(zip([slot for slot, _ in todo], made))
            else:
                for slot, j in todo:
                    values[slot] = finish(j, None if kept is None else _stored(kept, slot))
    else:
        for j in items_at:
            groups.setdefault(int(slots[j, level]), []).append(j)
    for slot, js in groups.items():                    # inner shards, merged in turn
        current = None if kept is None else _stored(kept, slot)
        values[slot] = merge_shard(formats, level + 1, current, js, items, slots,
                                   finish, where_of, (*path, slot))[0]
    if isinstance(slab, ShardSlab):       # (a write of a whole shard, assembled in place)
        if kept is not None:
            left = kept[0][:, 0] != np.uint64(MISSING)
            left[np.fromiter(values, np.int64, len(values))] = False
            if not left.any():
                kept = None               # every stored chunk was rewritten or deleted
        if kept is None and slab.holds(values):
            return slab.finish()
    # (None, None) when nothing is left: no stored chunk kept, no new one
    return fmt.pack(values, kept)


def _finish_many(finish: Finish, todo: list[tuple[int, int]],
                 kept: tuple[np.ndarray, memoryview] | None) -> list | None:
    """The new bytes of the items ``todo`` (slot, item) by ``finish.many(items, bytes,
    starts, lengths)`` (the stored shard's bytes and each chunk's span in them, start -1:
    missing), when ``finish`` has it and there are several; None: one by one."""
    many = getattr(finish, "many", None)
    if many is None or len(todo) < 2:
        return None
    k = len(todo)
    starts = np.full(k, -1, dtype=np.int64)
    lengths = np.zeros(k, dtype=np.int64)
    if kept is not None:
        entries = kept[0][np.array([slot for slot, _ in todo], dtype=np.int64)]
        there = entries[:, 0] != np.uint64(MISSING)
        starts[there] = entries[there, 0]
        lengths[there] = entries[there, 1]
    return many([j for _, j in todo], None if kept is None else kept[1], starts, lengths)


def _stored(kept: tuple[np.ndarray, memoryview], slot: int) -> memoryview | None:
    """The stored bytes of inner chunk ``slot`` (None: missing), from the decoded entries."""
    off, nb = kept[0][slot].tolist()
    return None if off == MISSING else kept[1][off:off + nb]


def _replaces(formats: Sequence[IndexFormat], level: int, items_at: list[int],
              items: Sequence[tuple[Coords, object]], slots: np.ndarray) -> bool:
    """Whether the items ``items_at`` give new bytes (or None) for every read unit of the
    level-``level`` shard holding them, so that nothing of the stored one is kept (it is then
    not decoded: a write over all of an inner shard needs nothing of it, even if it is
    corrupt)."""
    units = 1
    for fmt in formats[level:]:
        units *= fmt.n
    if len(items_at) < units or id(PARTIAL) in set(map(id, [items[j][1] for j in items_at])):
        return False
    return len({tuple(slots[j, level:].tolist()) for j in items_at}) == units


class ShardSlab(Slab):
    """A single-level shard assembled in place: every inner chunk ``nbytes`` long, encoded
    straight into its place; :meth:`finish` writes the index and returns the shard.
    ``origin`` is the shard's first read unit (array coordinates)."""

    def __init__(self, fmt: IndexFormat, geom: ShardGeometry, origin: Coords,
                 nbytes: int, buf: _k.Slab | None = None) -> None:
        """``buf``: a slab of :meth:`size_for` bytes to assemble into (one the caller reuses
        once the store has copied the shard out, or an unsealed :class:`Value` the store
        keeps), else a fresh one."""
        self.fmt, self.stride = fmt, nbytes
        self.base = 0 if fmt.at_end else fmt.nbytes
        self.buf = _k.Slab(self.size_for(fmt, nbytes)) if buf is None else buf
        self._view = memoryview(self.buf)
        self._origin = origin
        self._perm = geom.perm or tuple(range(len(origin)))
        self._per = geom.per_shard

    @staticmethod
    def size_for(fmt: IndexFormat, nbytes: int) -> int:
        """The shard's size when each of its ``fmt.n`` inner chunks is ``nbytes`` long."""
        return fmt.n * nbytes + fmt.nbytes

    def view(self, coords: Coords) -> memoryview:
        slot = 0
        for axis, per in zip(self._perm, self._per):       # C order in the codec's axis order
            slot = slot * per + coords[axis] - self._origin[axis]
        off = self.base + slot * self.stride
        return self._view[off:off + self.stride]

    def views(self, coords: Sequence[Coords]) -> list[memoryview]:
        """:meth:`view` of each of ``coords``, their places found together."""
        at = np.array(coords, dtype=np.int64).reshape(len(coords), len(self._origin))
        at -= np.array(self._origin, dtype=np.int64)
        slots = np.zeros(len(coords), dtype=np.int64)
        for axis, per in zip(self._perm, self._per):       # C order in the codec's axis order
            slots = slots * per + at[:, axis]
        view, stride = self._view, self.stride
        return [view[off:off + stride] for off in (self.base + slots * stride).tolist()]

    def holds(self, values: Mapping[int, object]) -> bool:
        """Whether every slot holds a view of this slab (every chunk was encoded in place)."""
        got = list(values.values())
        return len(got) == self.fmt.n and set(map(type, got)) == {memoryview} \
            and set(map(id, map(_obj_of, got))) == {id(self.buf)}

    def finish(self) -> tuple[bytes, np.ndarray]:
        """The slab as the shard, its index written in; and the index entries."""
        fmt, n = self.fmt, self.fmt.n
        entries = fmt.fixed_entries(self.stride)
        at = n * self.stride if fmt.at_end else 0
        self._view[at:at + fmt.nbytes] = fmt.encode(entries)
        buf = self.buf
        return (buf.data if type(buf) is _k.Slab else buf), entries
