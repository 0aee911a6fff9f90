"""``sharding_indexed``: the inner chunks of an array, stored inside shard objects.

:class:`ShardedChunks` is the chunk source of a sharded array. It addresses read units (the
innermost chunks) by grid coordinates and maps them through one index per sharding level onto
byte ranges of the outermost shard objects (held by a :class:`KeyedChunks`).

Reads: one snapshot of the shard object serves the index (or indexes, when nested) and the
inner chunks, so they come from one version of the object even while another writer replaces
it; a cached index is used only for the generation it was read from. When nearly all of a
shard is wanted, its index is not cached, the snapshot reads a whole object as cheaply as a
range (a local file) and the object is at most ``WHOLE_READ_MAX`` bytes, it is read at once
and the index and the chunks are taken from those bytes (:meth:`ShardedChunks._whole`).

Writes: :meth:`ShardedChunks.commit` merges the new inner chunks of one shard into the stored
shard (read-modify-write, unless the write covers the whole shard) and stores it conditionally
(:func:`~zarrx.store.update.update_object`). All of that state lives in the call.
"""
from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
import threading
from itertools import repeat
from math import prod
from operator import is_not

import numpy as np

from zarrx import _behind
from zarrx.errors import CodecError, ConflictError, StoreError
from zarrx.metadata.model import ChunkLayout
from zarrx.metadata.model import KeyEncoding
from zarrx.store import _shard_index as _k
from zarrx.store._values import MIN_SIZE, Value
from zarrx.store.base import ByteRange, HeldSnapshot, ObjectSnapshot, address_fields
from zarrx.store.snapshots import VersionedSnapshot
from zarrx.store.chunks import ChunkRequest, ChunkSource, Coords, KeyedChunks, SizeLimit
from zarrx.store.chunks import Slab as SlabBase
from zarrx.store.pieces import for_store
from zarrx.store.shard_index import MISSING, IndexCache, IndexFormat
from zarrx.store.shard_write import ShardSlab, merge_shard
from zarrx.store.update import MAX_ATTEMPTS, PARTIAL, update_object

__all__ = ["ShardedChunks"]

_INNER_KEYS = KeyEncoding("default", "/")
_LIST_BATCH = 64
REUSED_SLAB_MAX = 64 << 20   # a writing thread keeps its shard slab up to this size
#: the largest shard object read whole (``ShardedChunks._whole``): its size is all a reader knows
#: before the index, and bytes no index entry points at (a gap a writer left, bytes after an
#: index at the start) are read too, so a larger object is read as its index, then its chunks
#: (for such an object the read of the index costs little beside that of its chunks)
WHOLE_READ_MAX = 16 << 20
#: a read of this many shards first asks the store which are not stored (``known_absent``)
ABSENT_MIN = 16


class ShardedChunks(ChunkSource):
    """The read units of a sharded array, inside the shard objects of ``objects``."""

    def __init__(self, objects: KeyedChunks, layout: ChunkLayout, name: str = "",
                 unit_limit: Callable[[], SizeLimit | None] | None = None) -> None:
        if not layout.shards or layout.read_shape is None or layout.object_ratio is None:
            raise StoreError("ShardedChunks needs a sharded layout").at(array=name)
        self.objects = objects
        self.store = objects.store
        self.name = name
        self.levels = layout.shards
        self.formats = [IndexFormat(g) for g in self.levels]
        self.ndim = len(layout.read_shape)
        self.object_ratio = layout.object_ratio
        self.units_per_object = prod(layout.object_ratio)
        # each level's axis order (its transposes and those of the levels around it)
        self._perms = [None if g.perm is None else np.asarray(g.perm, dtype=np.intp)
                       for g in self.levels]
        self._perm = self._perms[0]
        self._inv = None if self._perm is None else np.argsort(self._perm)
        self._ratio = [np.asarray(g.ratio, dtype=np.int64) for g in self.levels]
        self._unit_ratio = [all(r == 1 for r in g.ratio) for g in self.levels]
        self._per = [np.asarray(g.per_shard, dtype=np.int64) for g in self.levels]
        # inner chunks per shard along each array axis, per level
        self._per_a = [p if q is None else p[np.argsort(q)]
                       for p, q in zip(self._per, self._perms)]
        self._cache = IndexCache()
        self._unit_limit = unit_limit       # the limit of one inner chunk, when asked (kept)
        self._thread = threading.local()      # per writing thread: reused shard slabs

    @property
    def read_only(self) -> bool:  # type: ignore[override]
        return self.objects.read_only

    # -- coordinates -------------------------------------------------------------------------
    def _locate(self, coords: Sequence[Coords]) -> tuple[np.ndarray, np.ndarray, list[int]]:
        """``(shard coords (m, ndim), slots (m, levels), run starts + [m])`` of read units."""
        m = len(coords)
        try:
            arr = (np.zeros((m, 0), dtype=np.int64) if self.ndim == 0
                   else np.array(coords, dtype=np.int64).reshape(m, -1))
        except (ValueError, TypeError, OverflowError) as exc:
            raise StoreError(f"chunk coordinates: expected {self.ndim} non-negative int64 "
                             f"values each, found {list(coords)[:4]!r}"
                             ).at(array=self.name) from exc
        if arr.shape[1] != self.ndim:
            raise StoreError(f"chunk coordinates: expected {self.ndim} values each, found "
                             f"{arr.shape[1]}").at(array=self.name)
        slots = np.empty((m, len(self.levels)), dtype=np.int64)
        shards0 = runs0 = None
        for i, ratio in enumerate(self._ratio):
            units = arr if self._unit_ratio[i] else arr // ratio
            if self._perms[i] is not None:
                units = units[:, self._perms[i]]
            shards, sl, runs, status, bad = _k.locate(np.ascontiguousarray(units), self._per[i])
            if status != _k.OK:
                raise StoreError(f"chunk {tuple(coords[bad])}: expected non-negative "
                                 f"coordinates").at(array=self.name)
            slots[:, i] = sl
            if i == 0:
                shards0 = shards if self._inv is None else shards[:, self._inv]
                runs0 = runs
        return shards0, slots, [*runs0.tolist(), m]    # type: ignore[union-attr]

    def chunk_name(self, coords: Coords) -> str:
        shard = tuple(c // r for c, r in zip(coords, self.object_ratio))
        return f"shard {self.objects.chunk_name(shard)} inner chunk {self.inner_key(coords)!r}"

    def location(self, coords: Coords) -> dict[str, str]:
        shard = tuple(c // r for c, r in zip(coords, self.object_ratio))
        return {"key": self.objects.key(shard), "inner": self.inner_key(coords)}

    def inner_key(self, coords: Coords) -> str:
        """The read unit's key relative to its shard (``default`` encoding, array axes)."""
        return _INNER_KEYS.encode(tuple(c % r for c, r in zip(coords, self.object_ratio)))

    def _level_loc(self, obj: Coords, path: tuple[int, ...]) -> dict[str, str | None]:
        """The location fields of errors about the shard at ``path`` (slots of the outer
        levels) in ``obj``: the array, the stored shard's key and, for a nested shard, its key
        inside the stored one (in units of its level)."""
        inner = None
        if path:
            coords = [0] * self.ndim
            for level, slot in enumerate(path):
                local = self.formats[level].slot_coords(slot)
                coords = [c * int(p) + loc for c, p, loc in zip(coords, self._per_a[level], local)]
            inner = _INNER_KEYS.encode(tuple(coords))
        key = self.objects.key(obj)
        return {"array": self.name, "key": key, "inner": inner,
                **address_fields(self.store, key)}

    # -- reads -------------------------------------------------------------------------------
    def get_chunks(self, requests: Sequence[ChunkRequest], arena: object | None = None,
                   sizes: list | None = None) -> list[bytes | None]:
        m = len(requests)
        out: list = [None] * m
        if not m:
            return out
        if arena is not None:
            arena.reset()                 # type: ignore[attr-defined]
        shards, slots, bounds = self._locate([c for c, _ in requests])
        objs = [tuple(shards[a].tolist()) for a in bounds[:-1]]
        # many shards: those the store tells cheaply are not stored are not opened
        absent = self.objects.known_absent(objs) if len(objs) >= ABSENT_MIN else None
        for r, obj in enumerate(objs):
            if absent is None or not absent[r]:
                self._read_object(obj, requests, slots, bounds[r], bounds[r + 1], out, arena,
                                  sizes)
        return out

    def new_arena(self) -> object | None:
        return self.objects.new_arena()

    def _read_object(self, obj: Coords, requests: Sequence[ChunkRequest], slots: np.ndarray,
                     a: int, b: int, out: list, arena: object | None = None,
                     sizes: list | None = None) -> None:
        self.at_one_version(obj, lambda snap: self._read_snapshot(
            snap, obj, requests, slots, a, b, out, arena, sizes))

    def at_one_version(self, obj: Coords, read: Callable[[ObjectSnapshot], object]) -> object:
        """``read(snapshot)`` of the shard ``obj``, every byte of it from one version of the
        shard: read again when the shard is replaced meanwhile. None when it is not stored."""
        for _ in range(MAX_ATTEMPTS):
            snap = self.objects.snapshot(obj)
            if snap is None:
                return None
            try:
                with snap:
                    return read(snap)
            except ConflictError:
                self._cache.pop_object(obj)     # the object changed: retry
        key = self.objects.key(obj)
        at = self.store.address(key)
        raise ConflictError(f"{self.store!r}: cannot read shard {key!r}"
                            f"{f' ({at})' if at else ''}: it changed during each of "
                            f"{MAX_ATTEMPTS} reads")

    def _index(self, snap: ObjectSnapshot, cache_key: tuple, level: int, start: int,
               size: int | None, buf: bytes | memoryview | None = None) -> np.ndarray:
        """The entries of the index of the level-``level`` shard at byte ``start`` of the
        object (``size`` bytes; None: unknown), from the cache or read through ``snap``.
        ``cache_key`` is ``(obj, *path)``: the stored object and the slots leading to it."""
        got = self._cache.get(cache_key, snap.generation)
        if got is not None:
            return got[0]
        fmt = self.formats[level]
        if buf is None:
            buf = snap.read([fmt.range])[0]
            size = snap.size if size is None else size
        entries = fmt.decode(buf, size, lambda: self._level_loc(cache_key[0], cache_key[1:]))
        self._cache.put(cache_key, snap.generation, entries, size)
        return entries

    def _read_snapshot(self, snap: ObjectSnapshot, obj: Coords, requests: Sequence[ChunkRequest],
                       slots: np.ndarray, a: int, b: int, out: list,
                       arena: object | None = None, sizes: list | None = None) -> None:
        held = self._whole(snap, obj, requests, slots, a, b, arena)
        if held is not None:
            snap, arena = held, None
        entries = self._index(snap, (obj,), 0, 0, snap.size)
        spans: dict[int, tuple[int, int]] = {}        # request -> (offset in object, nbytes)
        for i in range(a, b):
            off, nb = entries[slots[i, 0]].tolist()
            if off != MISSING:
                spans[i] = (off, nb)
        for level in range(1, len(self.levels)):
            spans = self._descend(snap, obj, level, slots, spans)
        data_reqs: list[ByteRange] = []
        pending: list[tuple[int, int, int, int, int]] = []
        lim = None if self._unit_limit is None else self._unit_limit()
        for i, (off, nb) in spans.items():
            rng = requests[i][1]
            if rng is None:
                if lim is not None and nb > lim.nbytes:     # refused unread
                    raise lim.error(nb).at(array=self.name, **self.location(requests[i][0]),
                                           **address_fields(self.store, self.objects.key(obj)))
                start, length = off, nb
            else:
                s, e = rng.resolve(nb)
                start, length = off + s, e - s
                if sizes is not None:           # the index entry gives the chunk's size
                    sizes[i] = nb
            if length == 0:
                out[i] = b""
                continue
            data_reqs.append(ByteRange.trusted(start, length))     # checked at decode
            pending.append((i, off, nb, start, length))
        if not data_reqs:
            return
        got = snap.read(data_reqs) if arena is None else \
            snap.read(data_reqs, arena=arena)  # type: ignore[call-arg]
        for (i, off, nb, start, length), data in zip(pending, got):
            if len(data) != length:            # only when the shard's size was unknown
                slot = int(slots[i, -1])
                raise self.formats[-1].entry_error(
                    slot, off, nb, 0, None, read=(start, start + length, len(data))
                ).at(**self._level_loc(obj, tuple(slots[i, :-1].tolist())))
            out[i] = data

    def _whole(self, snap: ObjectSnapshot, obj: Coords, requests: Sequence[ChunkRequest],
               slots: np.ndarray, a: int, b: int, arena: object | None) -> HeldSnapshot | None:
        """The whole object of ``snap`` read at once (into ``arena`` when given), as a snapshot
        of those bytes at the same generation, when that costs about what reading the index
        and then the chunks would (on a local file, one ``pread`` where those take two); None
        otherwise. That is: ``snap`` reads a whole object as cheaply as a range, its size is
        known and at most ``WHOLE_READ_MAX``, its index is not cached, requests ``a`` to ``b``
        want at least half of its read units, all whole, and (inner chunks lying in slot order,
        as writers store them) what they leave out before the first wanted slot and after the
        last is at most a sixteenth of the slots: the chunks' coalesced read would span nearly
        all of the object anyway.
        The index and the chunks are then taken from the bytes read, with the same checks
        against the object's size."""
        units = self.units_per_object
        if not snap.whole_reads or snap.size is None or snap.size > WHOLE_READ_MAX or \
                2 * (b - a) < units:
            return None
        if any(requests[i][1] is not None for i in range(a, b)):
            return None
        top = slots[a:b, 0]
        n = self.formats[0].n
        if int(top.min()) + (n - 1 - int(top.max())) > n // 16:
            return None
        if 2 * len(set(map(tuple, slots[a:b].tolist()))) < units:
            return None
        if self._cache.get((obj,), snap.generation) is not None:
            return None
        data = snap.read([None]) if arena is None else \
            snap.read([None], arena=arena)  # type: ignore[call-arg]
        return HeldSnapshot(snap.key, data[0], snap.generation)

    def _descend(self, snap: ObjectSnapshot, obj: Coords, level: int, slots: np.ndarray,
                 spans: dict[int, tuple[int, int]]) -> dict[int, tuple[int, int]]:
        """Spans of the level-``level`` inner chunks, from the spans of the shards holding
        them; their indexes are read in one batch through ``snap`` (those not cached)."""
        fmt = self.formats[level]
        parents: dict[tuple[int, ...], tuple[int, int]] = {}
        for i, span in spans.items():
            parents.setdefault(tuple(slots[i, :level].tolist()), span)
        indexes: dict[tuple[int, ...], np.ndarray] = {}
        todo: list[tuple[tuple[int, ...], int, int]] = []
        for path, (off, nb) in parents.items():
            got = self._cache.get((obj, *path), snap.generation)
            if got is not None:
                indexes[path] = got[0]
            else:
                todo.append((path, off, nb))
        if todo:
            L = fmt.nbytes
            ranges = [ByteRange.trusted(off, nb) if nb < L else
                      ByteRange.trusted(off + nb - L if fmt.at_end else off, L)
                      for _, off, nb in todo]
            for (path, off, nb), buf in zip(todo, snap.read(ranges)):
                indexes[path] = self._index(snap, (obj, *path), level, off, nb, buf)
        out: dict[int, tuple[int, int]] = {}
        for i, (base, _) in spans.items():
            off, nb = indexes[tuple(slots[i, :level].tolist())][slots[i, level]].tolist()
            if off != MISSING:
                out[i] = (base + off, nb)
        return out

    # -- writes ------------------------------------------------------------------------------
    def slab(self, obj: Coords, nbytes: int) -> ShardSlab | None:
        if len(self.levels) != 1 or nbytes <= 0:
            return None
        origin = tuple(o * r for o, r in zip(obj, self.object_ratio))
        fmt = self.formats[0]
        buf = None
        size = ShardSlab.size_for(fmt, nbytes)
        if self.store.copies_values and size <= REUSED_SLAB_MAX:
            # the store copies each shard out before commit returns: this thread assembles
            # every shard it writes in one slab, whose pages are faulted in once
            # (one per lane when the write hands shards on to an I/O thread: zarrx._behind)
            slabs = getattr(self._thread, "slabs", None)
            if slabs is None:
                slabs = self._thread.slabs = {}
            kept = slabs.get(at := _behind.lane())
            if kept is None or kept[0] != size:
                kept = slabs[at] = (size, _k.Slab(size))
            buf = kept[1]
        elif self.store.keeps_values and size >= MIN_SIZE:
            buf = Value.empty(size)     # the store keeps this very memory (pooled, reused)
        return ShardSlab(fmt, self.levels[0], origin, nbytes, buf)

    def commit(self, obj: Coords, items: Sequence[tuple[Coords, object]],
               finish: Callable[[int, bytes | memoryview | None], bytes | None],
               slab: SlabBase | None = None) -> None:
        _, slots, _ = self._locate([c for c, _ in items])
        whole = len(items) == self.units_per_object and all(
            map(is_not, [v for _, v in items], repeat(PARTIAL)))
        done: dict[str, object] = {}

        def modify(old: bytes | memoryview | None) -> object:
            blob, entries = merge_shard(self.formats, 0, old, list(range(len(items))), items,
                                        slots, finish, lambda path: self._level_loc(obj, path),
                                        (), slab)
            done["entries"], done["size"] = entries, None if blob is None else len(blob)
            return for_store(blob, self.store)

        key = self.objects.key(obj)
        lim = self.objects.size_limit()

        def bounded(old: bytes | memoryview | None, at: Hashable | None) -> object:
            if old is not None and lim is not None and len(old) > lim.nbytes:
                # longer than any compact shard (unused bytes between its inner chunks): its
                # index and the inner chunks kept are read as ranges, and it is written compact
                old = self.compact(obj, at, self._replaced(items, slots))
            return modify(old)

        try:
            gen = update_object(self.store, key, bounded, f"shard {key!r}", read=not whole,
                                byte_range=None if lim is None else lim.head,
                                with_generation=True)
        finally:
            self._cache.pop_object(obj)
        if gen is not None and done.get("entries") is not None and len(self.levels) == 1:
            self._cache.put((obj,), gen, done["entries"], done["size"])  # type: ignore[arg-type]

    def _replaced(self, items: Sequence[tuple[Coords, object]], slots: np.ndarray) -> set[int]:
        """The slots of a stored shard whose inner chunks ``items`` replace whole (given new
        bytes or deleted; the last item of a slot decides): none when nested."""
        last: dict[int, object] = {}
        for j, (_, value) in enumerate(items):
            last[int(slots[j, 0])] = value
        return set() if len(self.levels) > 1 else {s for s, v in last.items() if v is not PARTIAL}

    def compact(self, obj: Coords, at: Hashable | None = None,
                replaced: set[int] | frozenset[int] = frozenset()) -> bytes | None:
        """The stored shard ``obj`` (at generation ``at``; None: whatever is stored) packed
        without gaps: its index and the inner chunks not in the slots ``replaced``, read as
        ranges (each entry checked against the slot's limit first) and packed in slot order
        (None when there is none, or no shard). For a shard longer than any shard packed so
        (unused bytes between its inner chunks): what this costs is bounded by the index and
        those chunks, never by the stored object's length."""
        fmt = self.formats[0]
        key = self.objects.key(obj)
        snap = self.store.snapshot(key) if at is None else VersionedSnapshot(self.store, key, at)
        if snap is None:
            return None
        where = lambda: self._level_loc(obj, ())          # noqa: E731
        with snap:
            # (a size asked for apart is that of the version read: if the object changed since,
            # the reads conditioned on that version fail)
            size = snap.size if snap.size is not None else self.store.getsize(key)
            entries = fmt.decode(snap.read([fmt.range])[0], size, where)
            present = np.flatnonzero(entries[:, 0] != np.uint64(MISSING)).tolist()
            wanted = [s for s in present if s not in replaced]
            most = self._slot_limit()
            for slot in wanted:
                nb = int(entries[slot, 1])
                if most is not None and nb > most.nbytes:
                    coords = self._coords_of(np.asarray(obj, dtype=np.int64) * np.asarray(
                        self.object_ratio, dtype=np.int64), (slot,))
                    raise most.error(nb).at(**{**where(), "inner": self.inner_key(coords)})
            got = snap.read([ByteRange.trusted(*entries[s].tolist()) for s in wanted])
        values: dict[int, object] = {}
        for slot, data in zip(wanted, got):
            off, nb = entries[slot].tolist()
            if len(data) != nb:                # only when the shard's size was unknown
                raise fmt.entry_error(slot, off, nb, 0, None,
                                      read=(off, off + nb, len(data))).at(**where())
            values[slot] = data
        if not values:
            return None
        return fmt.pack(values)[0].tobytes()

    def _slot_limit(self) -> SizeLimit | None:
        """The limit of what one slot of a stored shard holds: an inner chunk's, or with
        nested sharding an inner shard's (its index and its slots' limits)."""
        unit = None if self._unit_limit is None else self._unit_limit()
        if unit is None or len(self.levels) == 1:
            return unit
        size = unit.nbytes
        for fmt in reversed(self.formats[1:]):
            size = fmt.nbytes + fmt.n * size
        return SizeLimit(size, lambda found: CodecError(
            f"{found} bytes stored in a slot, more than the {size} bytes an inner shard "
            f"can take"))

    # -- listing -----------------------------------------------------------------------------
    def list_chunks(self) -> Iterator[Coords]:
        """Read units present in the stored shards."""
        for obj in self.objects.list_chunks():
            snap = self.objects.snapshot(obj)
            if snap is None:
                continue
            with snap:
                yield from self._present(snap, obj)

    def present_in(self, obj: Coords) -> list[Coords]:
        """Read units present in the stored shard ``obj`` (none when it is not stored), found
        from its index alone."""
        snap = self.objects.snapshot(obj)
        if snap is None:
            return []
        with snap:
            return list(self._present(snap, obj))

    def _present(self, snap: ObjectSnapshot, obj: Coords) -> Iterator[Coords]:
        entries = self._index(snap, (obj,), 0, 0, snap.size)
        base = np.asarray(obj, dtype=np.int64) * np.asarray(self.object_ratio, dtype=np.int64)
        frontier: list[tuple[tuple[int, ...], int, np.ndarray]] = [((), 0, entries)]
        for level in range(len(self.levels)):
            nxt = []
            for path, start, e in frontier:
                present = np.flatnonzero(~((e[:, 0] == MISSING) & (e[:, 1] == MISSING)))
                if level == len(self.levels) - 1:
                    for slot in present.tolist():
                        yield self._coords_of(base, (*path, slot))
                    continue
                fmt = self.formats[level + 1]
                for slot in present.tolist():
                    off, nb = e[slot].tolist()
                    L = fmt.nbytes
                    # an inner shard shorter than its index is read whole (its decoding says
                    # it is truncated), never from before its start
                    rng = ByteRange.trusted(start + off + nb - L if fmt.at_end and nb >= L
                                            else start + off, min(L, nb))
                    buf = snap.read([rng])[0]
                    sub = self._index(snap, (obj, *path, slot), level + 1, start + off, nb, buf)
                    nxt.append(((*path, slot), start + off, sub))
            frontier = nxt

    def _coords_of(self, base: np.ndarray, path: tuple[int, ...]) -> Coords:
        coords = base.copy()
        for level, slot in enumerate(path):
            local = self.formats[level].slot_coords(slot)
            coords += np.asarray(local, dtype=np.int64) * self._ratio[level]
        return tuple(coords.tolist())

    def __repr__(self) -> str:
        return f"ShardedChunks({self.objects!r}, levels={len(self.levels)})"
