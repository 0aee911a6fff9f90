"""``sharding_indexed`` as a store adapter: inner chunks are byte ranges of a shard object.

A :class:`ShardStore` sits on the :class:`~zarrx.store.chunks.ChunkSource` of the outer grid (a
:class:`~zarrx.store.chunks.KeyedChunks`, or another ShardStore for nested sharding) and is
itself a ChunkSource addressed by inner-chunk coordinates, and a :class:`~zarrx.store.base.Store`
addressed by inner-chunk keys (``c/3/5``, the ``default`` encoding relative to the array).

Shard layout (per level): the inner chunks' bytes, then (``index_location: "end"``) or before
them (``"start"``) an index of ``16 * n`` bytes, ``[offset, nbytes]`` uint64 LE pairs in C order
of the inner chunks, optionally followed by the crc32c (LE) of those bytes. A missing inner chunk
has both words 2^64-1.

Validation on the read path: the index is fetched with one suffix (or prefix) range request
without knowing the shard's size. Every entry is checked at decode time for what needs no size
(one sentinel word alone, uint64 overflow of ``offset + nbytes`` (plus a trailing index's
length), an end past 2^63-1 (no store object is larger), overlap with a leading index). When the source knows the
shard's size for free (a nested level: the outer index gives it), entries are also checked
against it. Otherwise the check is lazy: an inner-chunk read that comes back short is a
ShardError naming the entry. The write path reads shards whole and checks everything.
"""
from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from math import prod

import numpy as np

from zarrx.errors import ShardError, StoreError
from zarrx.metadata.model import KeyEncoding, ShardLevel
from zarrx.store import _shard_index as _k
from zarrx.store.base import ByteRange, Request, Store, as_bytes, check_key
from zarrx.store.chunks import (ChunkRequest, ChunkSource, Coords, make_chunk_source,  # noqa: F401
                                parse_chunk_key)

__all__ = ["ShardStore", "make_chunk_source", "INDEX_CACHE_SIZE"]

INDEX_CACHE_SIZE = 16
MISSING = 2**64 - 1
_LIST_BATCH = 64
_READ_RETRIES = 8
_INNER_KEYS = KeyEncoding("default", "/")


class _Index:
    """A decoded, validated shard index; ``size`` is the shard's size when known."""

    __slots__ = ("entries", "size")

    def __init__(self, entries: np.ndarray, size: int | None) -> None:
        self.entries = entries
        self.size = size


class _IndexCache:
    """Thread-safe LRU of decoded indexes keyed by shard coordinates."""

    def __init__(self, capacity: int) -> None:
        self._data: OrderedDict[Coords, _Index] = OrderedDict()
        self._lock = threading.Lock()
        self.capacity = capacity

    def get(self, key: Coords) -> _Index | None:
        with self._lock:
            value = self._data.get(key)
            if value is not None:
                self._data.move_to_end(key)
            return value

    def put(self, key: Coords, value: _Index, current: Callable[[], bool] | None = None) -> None:
        """Put unless ``current()`` is false: checked under the lock, so a slow reader never
        caches an index older than one a writer put meanwhile."""
        with self._lock:
            if current is None or current():
                self._data[key] = value
                self._data.move_to_end(key)
                while len(self._data) > self.capacity:
                    self._data.popitem(last=False)

    def pop(self, key: Coords) -> None:
        with self._lock:
            self._data.pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()


class _Assembly:
    """The shard being written: one value per slot, and which slots this write assigned.

    With a ``slab`` (see :meth:`ShardStore.reserve`), fixed-size inner chunks are encoded in
    place at ``base + slot * stride``; ``in_slab`` marks the slots whose value lives there. When
    every slot does, the slab is the finished shard: no copy is made to assemble it."""

    __slots__ = ("shard", "values", "assigned", "n_assigned", "slab", "stride", "in_slab",
                 "n_in_slab")

    def __init__(self, shard: Coords, n: int) -> None:
        self.shard = shard
        self.values: list[bytes | memoryview | None] = [None] * n
        self.assigned = bytearray(n)
        self.n_assigned = 0
        self.slab: _k.Slab | None = None
        self.stride = 0
        self.in_slab = bytearray(n)
        self.n_in_slab = 0


def _as_bytes(value: object) -> bytes | None:
    return value if value is None or type(value) is bytes else bytes(value)  # type: ignore[arg-type]


class ShardStore(Store, ChunkSource):
    """Inner chunks of one sharding level, stored inside the shard objects of ``source``.

    ``shard_shape`` is one shard's shape in elements, ``level.chunk_shape`` the inner chunk shape
    (it must divide ``shard_shape``); ``key`` names the array in messages.

    ``perm`` is the axis order of a ``transpose`` applied before this sharding level: the shard
    then holds the transposed shard array, and ``shard_shape``/``level.chunk_shape`` are in that
    transposed space, while the coordinates this store is addressed by (and the shard keys of
    ``source``) stay in array space. Only the index slot of an inner chunk depends on the order.
    """

    def __init__(self, source: ChunkSource, level: ShardLevel, shard_shape: Sequence[int], *,
                 key: str = "", perm: Sequence[int] | None = None) -> None:
        self.source = source
        self.level = level
        self.key = key
        self.shard_shape = tuple(int(s) for s in shard_shape)
        chunk_shape = tuple(int(c) for c in level.chunk_shape)
        where = f"array {key!r} sharding_indexed"
        if len(chunk_shape) != len(self.shard_shape):
            raise ShardError(f"{where}: chunk_shape {chunk_shape} has {len(chunk_shape)} "
                             f"dimensions, the shard shape {self.shard_shape} "
                             f"{len(self.shard_shape)}")
        for d, (s, c) in enumerate(zip(self.shard_shape, chunk_shape)):
            if c <= 0 or s <= 0 or s % c:
                raise ShardError(f"{where}: axis {d}: expected an inner chunk length that "
                                 f"divides the shard length {s}, found {c} (chunk_shape "
                                 f"{chunk_shape}, shard shape {self.shard_shape})")
        if level.index_location not in ("start", "end"):
            raise ShardError(f"{where}: index_location: expected 'start' or 'end', found "
                             f"{level.index_location!r}")
        self.chunk_shape = chunk_shape
        self.ndim = len(chunk_shape)
        self.chunks_per_shard = tuple(s // c for s, c in zip(self.shard_shape, chunk_shape))
        self.n_chunks = prod(self.chunks_per_shard)
        self.index_nbytes = _k.index_nbytes(self.n_chunks, level.index_crc32c)
        self._per_shard = np.array(self.chunks_per_shard, dtype=np.int64)
        identity = perm is None or list(perm) == list(range(len(chunk_shape)))
        self._perm = None if identity else np.asarray(perm, dtype=np.intp)
        self._inv = None if identity else np.argsort(self._perm)
        # inner chunks per shard along each *array* axis
        self._per_shard_a = self._per_shard if identity else self._per_shard[self._inv]
        self._at_end = level.index_location == "end"
        self._index_range = (ByteRange.last(self.index_nbytes) if self._at_end
                             else ByteRange.slice(0, self.index_nbytes))
        self._cache = _IndexCache(INDEX_CACHE_SIZE)
        self._pending: _Assembly | None = None
        self._reserved: dict[Coords, _Assembly] = {}    # slabs handed out ahead of set_chunks
        self._write_lock = threading.RLock()
        self._gen = 0      # odd while a shard is being replaced (readers retry, seqlock-style)

    @property
    def read_only(self) -> bool:  # type: ignore[override]
        return self.source.read_only

    # -- coordinates -----------------------------------------------------------------------
    def _locate(self, coords: Sequence[Coords]) -> tuple[np.ndarray, np.ndarray, list[int]]:
        """(shard coords (m, ndim), slots (m,), run starts + [m]) of a batch of inner chunks."""
        m = len(coords)
        try:
            arr = (np.zeros((m, 0), dtype=np.int64) if self.ndim == 0
                   else np.array(coords, dtype=np.int64).reshape(m, -1))
        except (ValueError, TypeError, OverflowError) as exc:
            raise StoreError(f"array {self.key!r}: inner chunk coordinates: expected {self.ndim} "
                             f"non-negative int64 values each, found {list(coords)[:4]!r}…") from exc
        if arr.shape[1] != self.ndim:
            raise StoreError(f"array {self.key!r}: inner chunk coordinates: expected {self.ndim} "
                             f"values each, found {arr.shape[1]}")
        if self._perm is not None:
            arr = np.ascontiguousarray(arr[:, self._perm])
        shards, slots, runs, status, bad = _k.locate(arr, self._per_shard)
        if status != _k.OK:
            raise StoreError(f"array {self.key!r}: inner chunk {tuple(coords[bad])}: expected "
                             f"non-negative coordinates")
        if self._perm is not None:
            shards = np.ascontiguousarray(shards[:, self._inv])
        return shards, slots, [*runs.tolist(), m]

    def _slot_coords(self, slot: int) -> tuple[int, ...]:
        if not self.ndim:
            return ()
        local = np.unravel_index(slot, self.chunks_per_shard)
        if self._inv is not None:
            local = [local[i] for i in self._inv]
        return tuple(int(i) for i in local)

    def outer(self) -> ChunkSource:
        return self.source.outer()

    def chunk_name(self, coords: Coords) -> str:
        shard = tuple(c // int(p) for c, p in zip(coords, self._per_shard_a))
        return f"{self.source.chunk_name(shard)} inner chunk {_INNER_KEYS.encode(coords)!r}"

    # -- the index -------------------------------------------------------------------------
    def _decode(self, shard: Coords, buf: bytes | memoryview, size: int | None) -> _Index:
        n, has_crc = self.n_chunks, self.level.index_crc32c
        loc = self.level.index_location
        entries, status, bad = _k.decode_index(buf, n, -1 if size is None else size, loc, has_crc)
        if status != _k.OK:
            raise self._index_error(shard, status, bad, entries, buf, size)
        return _Index(entries, size)

    def _index_error(self, shard: Coords, status: int, bad: int, entries: np.ndarray,
                     buf: bytes | memoryview, size: int | None) -> ShardError:
        name = f"shard {self.source.chunk_name(shard)}"
        L, n = self.index_nbytes, self.n_chunks
        layout = f"{n} entries x 16 B" + (" + 4 B crc32c" if self.level.index_crc32c else "")
        if status in (_k.BAD_LENGTH, _k.SHARD_TOO_SMALL):
            # a range read clipped to a short object returns the whole object
            got = len(buf) if status == _k.BAD_LENGTH or size is None else size
            if got > L:
                return ShardError(f"{name}: the index read returned {got} bytes, expected {L}")
            if got == 0:
                return ShardError(f"{name}: empty (0 bytes); expected at least its {L}-byte "
                                  f"index ({layout}) at the {self.level.index_location}")
            return ShardError(f"{name}: truncated: {got} bytes, shorter than its {L}-byte index "
                              f"({layout}) at the {self.level.index_location}")
        if status == _k.BAD_CRC:
            stored, computed = _k.stored_crc(buf, True)
            return ShardError(f"{name}: index checksum mismatch: stored crc32c {stored:#010x}, "
                              f"computed {computed:#010x} over the {16 * n}-byte index")
        off, nb = int(entries[bad, 0]), int(entries[bad, 1])
        entry = f"{name}: index entry {bad} (inner chunk {self._slot_coords(bad)})"
        of_size = "the shard" if size is None else f"the {size}-byte shard"
        if status == _k.HALF_SENTINEL:
            return ShardError(f"{entry}: offset {off}, nbytes {nb}: expected both words 2^64-1 "
                              f"(missing chunk) or neither")
        if status == _k.OVERFLOW:
            if off + nb > MISSING:
                return ShardError(f"{entry}: offset {off} + nbytes {nb} overflows uint64")
            return ShardError(f"{entry}: offset {off} + nbytes {nb} + the {L}-byte index "
                              f"overflows uint64")
        if status == _k.TOO_LARGE:
            with_index = f" and the {L}-byte index after them" if self._at_end else ""
            return ShardError(f"{entry}: bytes [{off}, {off + nb}){with_index} reach past "
                              f"2^63-1, the largest possible shard")
        if status == _k.PAST_END:
            return ShardError(f"{entry}: bytes [{off}, {off + nb}) extend past the end of "
                              f"{of_size}")
        if status == _k.OVERLAP_INDEX:
            lo, hi = (0, L) if not self._at_end else (size - L, size)  # type: ignore[operator]
            return ShardError(f"{entry}: bytes [{off}, {off + nb}) overlap the index at bytes "
                              f"[{lo}, {hi}) of {of_size}")
        return ShardError(f"{name}: index status {status}")  # pragma: no cover

    def _indexes(self, shards: Iterable[Coords]) -> dict[Coords, _Index | None]:
        """Decoded indexes of ``shards`` (None: the shard does not exist); cached ones are not
        fetched, the others are fetched in one ``source`` call."""
        out: dict[Coords, _Index | None] = {}
        misses: list[Coords] = []
        for shard in shards:
            index = self._cache.get(shard)
            if index is None:
                misses.append(shard)
            else:
                out[shard] = index
        if misses:
            gen = self._gen
            current = lambda: self._gen == gen and not gen & 1  # noqa: E731
            rng = self._index_range
            results = self.source.get_chunks_sized([(s, rng) for s in misses])
            for shard, res in zip(misses, results):
                if res is None:
                    out[shard] = None
                    continue
                buf, size = res
                index = self._decode(shard, buf, size)
                self._cache.put(shard, index, current)
                out[shard] = index
        return out

    def clear_cache(self) -> None:
        """Forget every cached index (another writer changed the shards)."""
        self._cache.clear()

    # -- ChunkSource: reads ----------------------------------------------------------------
    def get_chunks(self, requests: Sequence[ChunkRequest]) -> list[bytes | None]:
        return self._read_retrying(requests, False)

    def get_chunks_sized(self, requests: Sequence[ChunkRequest]
                         ) -> list[tuple[bytes, int | None] | None]:
        """Inner chunks (or ranges of them, relative to the inner chunk) with their sizes."""
        return self._read_retrying(requests, True)

    def _read_retrying(self, requests: Sequence[ChunkRequest], sized: bool) -> list:
        """Safe to call from several threads. A read that overlaps a shard write through this
        store (a cached index could describe the old shard) is retried, finally under the write
        lock."""
        for _ in range(_READ_RETRIES):
            gen = self._gen
            if not gen & 1:
                try:
                    out = self._read(requests, sized)
                except ShardError:
                    if self._gen == gen:
                        raise
                    continue
                if self._gen == gen:
                    return out
            time.sleep(0)
        with self._write_lock:
            return self._read(requests, sized)

    def _read(self, requests: Sequence[ChunkRequest], sized: bool = True) -> list:
        m = len(requests)
        out: list[tuple[bytes, int | None] | None] = [None] * m
        if not m:
            return out
        shards, slots, bounds = self._locate([c for c, _ in requests])
        keys = [tuple(shards[a].tolist()) for a in bounds[:-1]]
        pend = self._pending
        served: set[int] = set()
        if pend is not None:
            for r, key in enumerate(keys):
                if key == pend.shard:
                    for i in range(bounds[r], bounds[r + 1]):
                        slot = int(slots[i])
                        if pend.assigned[slot]:
                            served.add(i)
                            v = pend.values[slot]
                            if v is not None:
                                rng = requests[i][1]
                                got = v if rng is None else rng.apply(v)
                                out[i] = (got, len(v)) if sized else got
        indexes = self._indexes(dict.fromkeys(keys))
        data_reqs: list[tuple[Coords, ByteRange]] = []
        pending_reads: list[tuple[int, Coords, int, int, int, int, int]] = []
        for r, key in enumerate(keys):
            index = indexes[key]
            if index is None:
                continue
            a, b = bounds[r], bounds[r + 1]
            run_slots = slots[a:b]
            for j, (off, nb) in enumerate(index.entries[run_slots].tolist()):
                i = a + j
                if off == MISSING or i in served:
                    continue
                rng = requests[i][1]
                if rng is None:
                    start, length = off, nb
                else:
                    s, e = rng.resolve(nb)
                    start, length = off + s, e - s
                if length == 0:
                    out[i] = (b"", nb) if sized else b""
                    continue
                data_reqs.append((key, ByteRange.trusted(start, length)))   # checked by decode
                pending_reads.append((i, key, int(run_slots[j]), off, nb, start, length))
        if data_reqs:
            results = self.source.get_chunks(data_reqs)
            for (i, key, slot, off, nb, start, length), data in zip(pending_reads, results):
                if data is None or len(data) != length:
                    got = 0 if data is None else len(data)
                    raise ShardError(
                        f"shard {self.source.chunk_name(key)}: index entry {slot} (inner chunk "
                        f"{self._slot_coords(slot)}): bytes [{off}, {off + nb}) extend past the "
                        f"end of the shard (a read of bytes [{start}, {start + length}) returned "
                        f"{got} bytes)")
                out[i] = (data, nb) if sized else data
        return out

    # -- ChunkSource: writes ---------------------------------------------------------------
    def set_chunks(self, items: Sequence[tuple[Coords, bytes | None]]) -> None:
        if not items:
            return
        shards, slots, bounds = self._locate([c for c, _ in items])
        for r in range(len(bounds) - 1):
            a, b = bounds[r], bounds[r + 1]
            key = tuple(shards[a].tolist())
            if self._pending is not None and self._pending.shard != key:
                self._write_out()
            if self._pending is None:
                self._pending = self._reserved.pop(key, None) or _Assembly(key, self.n_chunks)
            pend = self._pending
            for i in range(a, b):
                slot = int(slots[i])
                coords, value = items[i]
                in_slab = (pend.slab is not None and type(value) is memoryview
                           and value.obj is pend.slab)
                if in_slab:
                    pend.values[slot] = value.toreadonly()      # type: ignore[union-attr]
                else:
                    pend.values[slot] = (None if value is None
                                         else as_bytes(value, _INNER_KEYS.encode(coords)))
                if in_slab != bool(pend.in_slab[slot]):
                    pend.in_slab[slot] = in_slab
                    pend.n_in_slab += 1 if in_slab else -1
                if not pend.assigned[slot]:
                    pend.assigned[slot] = 1
                    pend.n_assigned += 1

    def reserve(self, coords: Coords, nbytes: int) -> memoryview | None:
        """A writable buffer of ``nbytes`` at the inner chunk's place in the shard being
        assembled, for an encoder to write into before passing it back to :meth:`set_chunks`
        (no copy then assembles the shard). None when the shard already holds chunks of another
        size. Call from the writing thread, before the write's ``set_chunks``."""
        shards, slots, _ = self._locate([coords])
        key = tuple(shards[0].tolist())
        pend = self._pending if self._pending is not None and self._pending.shard == key \
            else self._reserved.get(key)
        if pend is None:
            pend = self._reserved[key] = _Assembly(key, self.n_chunks)
        if pend.slab is None:
            if pend.n_assigned or nbytes <= 0:
                return None
            pend.slab = _k.Slab(self.n_chunks * nbytes + self.index_nbytes)
            pend.stride = nbytes
        elif pend.stride != nbytes:
            return None
        off = (0 if self._at_end else self.index_nbytes) + int(slots[0]) * nbytes
        return memoryview(pend.slab)[off:off + nbytes]

    def flush(self) -> None:
        if self._pending is not None:
            self._write_out()
        while self._reserved:               # slabs handed out whose chunks never came back
            _, pend = self._reserved.popitem()
            if pend.n_assigned:
                self._pending = pend
                self._write_out()
        self.source.flush()

    def _write_out(self) -> None:
        with self._write_lock:
            self._gen += 1
            try:
                self._write_pending()
            finally:
                self._gen += 1

    def _write_pending(self) -> None:
        pend = self._pending
        assert pend is not None
        try:
            shard, values = pend.shard, pend.values
            existed = True
            if pend.n_assigned < self.n_chunks:      # seed from the stored shard
                res = self.source.get_chunks_sized([(shard, None)])[0]
                existed = res is not None
                if res is not None:
                    blob = res[0]
                    index = self._decode_whole(shard, blob)
                    for slot, (off, nb) in enumerate(index.entries.tolist()):
                        if not pend.assigned[slot] and off != MISSING:
                            values[slot] = blob[off:off + nb]
            self._cache.pop(shard)
            if pend.slab is not None and pend.n_in_slab == self.n_chunks:
                blob, entries = self._finish_slab(pend)
                self.source.set_chunks([(shard, blob)])
                self._cache.put(shard, _Index(entries, len(blob)))
                return
            if all(v is None for v in values):
                if existed:
                    self.source.set_chunks([(shard, None)])
                return
            blob, entries = self._assemble(values)
            self.source.set_chunks([(shard, blob)])
            self._cache.put(shard, _Index(entries, len(blob)))
        finally:
            self._pending = None

    def _decode_whole(self, shard: Coords, blob: bytes) -> _Index:
        size, L = len(blob), self.index_nbytes
        if size < L:
            return self._decode(shard, blob, None)     # reports the truncation
        view = memoryview(blob)
        return self._decode(shard, view[size - L:] if self._at_end else view[:L], size)

    def _finish_slab(self, pend: _Assembly) -> tuple[bytes, np.ndarray]:
        """The slab as the shard: every inner chunk in place; write the index into it."""
        n, stride, L = self.n_chunks, pend.stride, self.index_nbytes
        base = 0 if self._at_end else L
        entries = np.empty((n, 2), dtype=np.uint64)
        entries[:, 0] = np.arange(n, dtype=np.uint64) * np.uint64(stride) + np.uint64(base)
        entries[:, 1] = stride
        index = _k.encode_index(entries, self.level.index_crc32c)
        view = memoryview(pend.slab)
        at = n * stride if self._at_end else 0
        view[at:at + L] = index
        view.release()
        pend.values = []                    # drop the views before the bytes go out
        blob = pend.slab.data               # type: ignore[union-attr]
        pend.slab = None
        return blob, entries

    def _assemble(self, values: list[bytes | None]) -> tuple[bytes, np.ndarray]:
        """The shard bytes of ``values`` (packed in slot order) and its index entries."""
        n = self.n_chunks
        sizes = np.fromiter((0 if v is None else len(v) for v in values), np.uint64, n)
        present = np.fromiter((v is not None for v in values), bool, n)
        base = 0 if self._at_end else self.index_nbytes
        entries = np.empty((n, 2), dtype=np.uint64)
        entries[:, 1] = sizes
        entries[:, 0] = np.cumsum(sizes) - sizes + np.uint64(base)
        entries[~present] = np.uint64(MISSING)
        index = _k.encode_index(entries, self.level.index_crc32c)
        parts = [v for v in values if v is not None]
        blob = b"".join([*parts, index] if self._at_end else [index, *parts])
        return blob, entries

    # -- ChunkSource: listing --------------------------------------------------------------
    def list_chunks(self) -> Iterator[Coords]:
        """Inner chunks present in stored shards (a shard still being assembled is not seen
        until :meth:`flush`)."""
        batch: list[Coords] = []
        for shard in self.source.list_chunks():
            batch.append(shard)
            if len(batch) >= _LIST_BATCH:
                yield from self._present_in(batch)
                batch = []
        if batch:
            yield from self._present_in(batch)

    def _present_in(self, shards: list[Coords]) -> Iterator[Coords]:
        per = self._per_shard_a
        for shard, index in self._indexes(shards).items():
            if index is None:
                continue
            e = index.entries
            slots = np.flatnonzero(~((e[:, 0] == MISSING) & (e[:, 1] == MISSING)))
            if not len(slots):
                continue
            if self.ndim == 0:
                yield ()
                continue
            local = np.stack(np.unravel_index(slots, self.chunks_per_shard), axis=1)
            if self._inv is not None:
                local = local[:, self._inv]
            coords = local + np.array(shard, dtype=np.int64) * per
            for row in coords.tolist():
                yield tuple(row)

    def exists_any(self) -> bool:
        return next(self.list_chunks(), None) is not None

    # -- Store: string keys of inner chunks --------------------------------------------------
    def _parse(self, key: str, *, writing: bool) -> Coords | None:
        """The inner chunk ``key`` names; a key that names none reads as missing (``None``)
        and is a StoreError to write."""
        coords = parse_chunk_key(check_key(key), _INNER_KEYS, self.ndim)
        if coords is None and writing:
            example = _INNER_KEYS.encode((0,) * self.ndim)
            raise StoreError(f"array {self.key!r} shard store: key {key!r}: expected an inner "
                             f"chunk key like {example!r} with {self.ndim} coordinates")
        return coords

    def get(self, key: str, byte_range: ByteRange | None = None) -> bytes | None:
        return self.get_many([(key, byte_range)])[0]

    def get_many(self, requests: Iterable[Request]) -> list[bytes | None]:
        return [_as_bytes(v) for v in self.get_many_buffers(requests)]

    def get_many_buffers(self, requests: Iterable[Request]) -> list:
        parsed = [(self._parse(k, writing=False), rng) for k, rng in requests]
        found = [(c, rng) for c, rng in parsed if c is not None]
        results = iter(self.get_chunks(found))
        return [None if c is None else next(results) for c, _ in parsed]

    def set(self, key: str, value: bytes | bytearray | memoryview) -> None:
        self.set_many([(key, value)])

    def set_many(self, items: Iterable[tuple[str, bytes | bytearray | memoryview]]) -> None:
        parsed: list[tuple[Coords, bytes | None]] = []
        for key, value in items:
            self._check_writable(key)
            coords = self._parse(key, writing=True)
            assert coords is not None
            parsed.append((coords, as_bytes(value, key)))
        with self._write_lock:
            self.set_chunks(parsed)
            self.flush()

    def delete(self, key: str) -> None:
        self.delete_many([key])

    def delete_many(self, keys: Iterable[str]) -> None:
        parsed: list[tuple[Coords, bytes | None]] = []
        for key in keys:
            self._check_writable(key)
            if (coords := self._parse(key, writing=False)) is not None:
                parsed.append((coords, None))
        with self._write_lock:
            self.set_chunks(parsed)
            self.flush()

    def exists(self, key: str) -> bool:
        return self.get(key, ByteRange.slice(0, 0)) is not None

    def list_prefix(self, prefix: str) -> Iterator[str]:
        enc = _INNER_KEYS.encode
        for coords in self.list_chunks():
            key = enc(coords)
            if key.startswith(prefix):
                yield key

    def close(self) -> None:
        self.flush()

    def __repr__(self) -> str:
        return (f"ShardStore({self.source!r}, chunk_shape={self.chunk_shape}, "
                f"shard_shape={self.shard_shape}, index_location={self.level.index_location!r})")
