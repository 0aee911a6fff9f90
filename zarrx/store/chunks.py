"""Chunk objects addressed by grid coordinates instead of string keys.

:class:`ChunkSource` is what chunk I/O reads and writes through: batches of
``(coords, byte range)`` requests in, bytes (or ``None`` for a missing chunk) out. A plain array
is a :class:`KeyedChunks` (a :class:`~zarrx.store.base.Store`, the array's prefix and its chunk
key encoding); a sharded array's is a :class:`~zarrx.store.sharded.ShardedChunks` over the
KeyedChunks of its shard objects, which addresses inner chunks by coordinates without formatting
or parsing a key.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from zarrx.errors import CodecError, StoreError, ZarrError
from zarrx.metadata.model import KeyEncoding
from zarrx.store.base import ByteRange, ObjectSnapshot, Store, address_fields, as_bytes
from zarrx.store.locks import with_object_lock, with_objects_lock
from zarrx.store.update import PARTIAL, update_object

__all__ = ["ChunkSource", "KeyedChunks", "ChunkRequest", "Slab", "parse_chunk_key", "PARTIAL",
           "SizeLimit"]

Coords = tuple[int, ...]
ChunkRequest = tuple[Coords, "ByteRange | None"]


class SizeLimit:
    """The most bytes a stored object may hold (any encoding of what it holds fits), and
    ``error(found)``: the error for one of ``found`` bytes (None: more than ``nbytes``, its
    size unknown). Whole objects are read as ``head``, their first ``nbytes + 1`` bytes, so a
    longer one costs no more than that to refuse."""

    __slots__ = ("nbytes", "error", "head")

    def __init__(self, nbytes: int, error: Callable[[int | None], ZarrError]) -> None:
        self.nbytes = nbytes
        self.error = error
        self.head = ByteRange.trusted(0, nbytes + 1)


class ChunkSource:
    """Abstract: the chunks (read units) of one array, addressed by grid coordinates.

    Reads are batched :meth:`get_chunks` calls. Writes go one stored object at a time through
    :meth:`commit`, which holds all the state of that update: nothing about a write is kept on
    the source, so any number of threads may read and write through one source at once.
    """

    read_only: bool = False
    objects: KeyedChunks        # the stored objects (shards, when sharded)

    def get_chunks(self, requests: Sequence[ChunkRequest], arena: object | None = None,
                   sizes: list | None = None) -> list[bytes | None]:
        """The bytes of each requested chunk (or the requested range of it), in request order;
        ``None`` for a missing chunk. A result may be a read-only ``memoryview`` into a larger
        stored object rather than ``bytes`` (no copy is made of byte ranges). ``arena``: one
        from :meth:`new_arena`, reused by this thread; results may then be views into it,
        valid until the next call with it. ``sizes``: a list as long as ``requests``, given
        to learn the stored size of each chunk read by a range (its other items are left
        alone; None where the size is unknown), so that a caller reading a part of a chunk
        can tell a chunk of the wrong size without reading it whole."""
        raise NotImplementedError

    def get_chunk_array(self, coords: Any, arena: object | None = None) -> list[bytes | None]:
        """:meth:`get_chunks` of the whole chunks at ``coords``, an ``(n, ndim)`` int64 array
        (sources may make their keys without a Python call per chunk)."""
        return self.get_chunks([(c, None) for c in map(tuple, coords.tolist())], arena)

    def new_arena(self) -> object | None:
        """A read buffer for one thread's :meth:`get_chunks` calls, or None."""
        return None

    def box_reader(self) -> Callable[..., list[int]] | None:
        """Optionally, ``reader(out, start, chunk, fill, scratch, lo, hi)``, which reads chunks
        ``lo`` to ``hi`` (C order over those the box ``start`` + ``out.shape`` touches) straight
        into ``out`` when every chunk is stored raw as an object of its own (``scratch``: a
        buffer it may overwrite, of at least ``reader.scratch_size(chunk, out.shape,
        itemsize)`` bytes), and returns the indices of those it left to the general path;
        None (the default) when there is none."""
        return None

    def box_writer(self) -> Any | None:
        """Optionally, a writer of the raw chunks a box covers whole, straight from the value
        (``prepare(first, count)``, then ``writer(src, start, chunk, fill, scratch, lo, hi)``
        returning the indices of those it left to the general path), when every chunk is
        stored raw as an object of its own; None (the default) when there is none. Its
        ``kernel`` attribute says whether it writes with no Python call per chunk (else
        a batch write, :mod:`zarrx.batch_write`, takes boxes of small chunks first)."""
        return None

    def commit(self, obj: Coords, items: Sequence[tuple[Coords, object]],
               finish: Callable[[int, bytes | memoryview | None], bytes | None],
               slab: Slab | None = None) -> None:
        """Update the chunks ``items`` of stored object ``obj``: each item is ``(coords,
        value)``, the value being the chunk's new bytes, ``None`` (delete the chunk) or
        :data:`PARTIAL`, for which ``finish(i, old)`` is called with the chunk's current bytes
        (None when missing) and returns its new bytes (or None). The update is atomic and never
        loses a concurrent update of another chunk of the object: threads of this process take
        turns per object, and other processes are detected by the store's generations (the
        read-modify-write is retried, calling ``finish`` again, when the object changed).
        ``slab``: the slab (see :meth:`slab`) some values were encoded into."""
        raise NotImplementedError

    def slab(self, obj: Coords, nbytes: int) -> Slab | None:
        """Optionally, a buffer in which every chunk of ``obj`` (each exactly ``nbytes`` once
        encoded) can be encoded in place, so that no copy assembles the stored object; None
        (the default) when the source stores chunks as objects of their own."""
        return None

    def list_chunks(self) -> Iterator[Coords]:
        """Coordinates of every stored chunk, in no particular order."""
        raise NotImplementedError

    def exists_any(self) -> bool:
        """Whether at least one chunk is stored."""
        return next(iter(self.list_chunks()), None) is not None

    def chunk_name(self, coords: Coords) -> str:
        """How messages name the chunk at ``coords``."""
        return f"chunk {coords}"

    def location(self, coords: Coords) -> dict[str, str]:
        """Where the chunk at ``coords`` is stored, as the location fields of an error about
        it (:meth:`zarrx.errors.ZarrError.at`): ``key`` (the stored object) and, inside a
        shard, ``inner`` (the chunk's key in it). Only called once something went wrong."""
        return {}


class Slab:
    """A stored object assembled in place: ``view(coords)`` is the writable place of one
    chunk's encoded bytes (see :meth:`ChunkSource.slab`)."""

    def view(self, coords: Coords) -> memoryview:
        raise NotImplementedError

    def views(self, coords: Sequence[Coords]) -> list[memoryview]:
        """``view`` of each of ``coords``, in order."""
        return [self.view(c) for c in coords]


#: digits of the largest chunk coordinate a grid can have (grids are counted in int64)
_MAX_DIGITS = len(str(2**63 - 1))


def parse_chunk_key(rest: str, encoding: KeyEncoding, ndim: int | None) -> Coords | None:
    """The coordinates a chunk key (relative to the array) encodes, or ``None`` if ``rest`` is
    not a chunk key of ``encoding`` (with ``ndim`` dimensions, when given)."""
    sep = encoding.separator
    if encoding.name == "default":
        if rest == "c":
            return () if ndim in (None, 0) else None
        if not rest.startswith("c" + sep):
            return None
        rest = rest[2:]
    elif rest == "0" and ndim == 0:
        return ()
    parts = rest.split(sep)
    if ndim is not None and len(parts) != ndim:
        return None
    for p in parts:
        if not p.isascii() or not p.isdigit() or (len(p) > 1 and p[0] == "0") \
                or len(p) > _MAX_DIGITS:
            return None
    return tuple(int(p) for p in parts)


class KeyedChunks(ChunkSource):
    """The chunks of an array stored as one object per chunk: key ``prefix + encode(coords)``.

    ``prefix`` is ``""`` or the array's path ending in ``/``; ``ndim``, when given, lets
    :meth:`list_chunks` skip keys with another number of coordinates (and tells a 0-d array's
    ``0`` key from a 1-d chunk's under the ``v2`` encoding).
    """

    def __init__(self, store: Store, prefix: str, key_encoding: KeyEncoding, *,
                 ndim: int | None = None, limit: Callable[[], SizeLimit | None] | None = None,
                 name: str | None = None) -> None:
        if prefix and not prefix.endswith("/"):
            raise StoreError(f"KeyedChunks prefix {prefix!r}: expected '' or a path ending in '/'")
        self.store = store
        self.prefix = prefix
        self.key_encoding = key_encoding
        self.ndim = ndim
        self.name = name                # the array's path, for messages
        self._encode = key_encoding.encode
        self._limit_of = limit

    def size_limit(self) -> SizeLimit | None:
        """The limit of one stored object (worked out on first use by ``limit``, given to the
        constructor, which keeps it), or None when there is none: whole objects are read as its
        :attr:`~SizeLimit.head` and refused when longer."""
        return None if self._limit_of is None else self._limit_of()

    def too_large(self, key: str, lim: SizeLimit) -> ZarrError:
        """The error for the object at ``key``, read as ``lim.head`` and found longer."""
        size = self.store.getsize(key)
        return lim.error(size if size is not None and size > lim.nbytes else None).at(
            array=self.name, key=key, **address_fields(self.store, key))

    @property
    def read_only(self) -> bool:  # type: ignore[override]
        return self.store.read_only

    def key(self, coords: Coords) -> str:
        return self.prefix + self._encode(coords)

    def chunk_name(self, coords: Coords) -> str:
        return repr(self.prefix + self._encode(coords))

    def location(self, coords: Coords) -> dict[str, str]:
        return {"key": self.prefix + self._encode(coords)}

    def new_arena(self) -> object | None:
        return self.store.new_arena()

    def box_reader(self) -> Callable[..., list[int]] | None:
        if not self.ndim:
            return None
        return self.store.box_reader(self._head, self.key_encoding.separator)

    def box_writer(self) -> Any | None:
        if not self.ndim:
            return None
        return self.store.box_writer(self._head, self.key_encoding.separator)

    @property
    def _head(self) -> str:
        """What every chunk key starts with, up to the first coordinate."""
        enc = self.key_encoding
        return self.prefix + ("c" + enc.separator if enc.name == "default" else "")

    def get_chunks(self, requests: Sequence[ChunkRequest], arena: object | None = None,
                   sizes: list | None = None) -> list[bytes | None]:
        p, enc = self.prefix, self._encode
        keyed = []
        last: object = None
        key = ""
        lim = self.size_limit()
        # (a store handing out views reads a whole object as cheaply as a range of it)
        head = None if lim is None or self.store.reads_are_views else lim.head
        for c, rng in requests:
            if c is not last:       # runs of ranges into one shard share one coords object
                key, last = p + enc(c), c
            keyed.append((key, head if rng is None else rng))
        return self._get_keyed(keyed, head, lim, arena, sizes)

    def get_chunk_array(self, coords: Any, arena: object | None = None) -> list[bytes | None]:
        lim = self.size_limit()
        head = None if lim is None or self.store.reads_are_views else lim.head
        return self._get_keyed([(k, head) for k in self.keys_of(coords)], head, lim, arena, None)

    def keys_of(self, coords: Any) -> list[str]:
        """The keys of the chunks at ``coords`` (an ``(n, ndim)`` int64 array), made column by
        column with no Python call per chunk."""
        n, ndim = coords.shape
        if not ndim:
            return [self.key(())] * n
        sep = self.key_encoding.separator
        cols = [map(str, col) for col in coords.T.tolist()]
        body = cols[0] if ndim == 1 else map(sep.join, zip(*cols))
        return list(map((self._head).__add__, body))

    def _get_keyed(self, keyed: list, head: ByteRange | None, lim: SizeLimit | None,
                   arena: object | None, sizes: list | None) -> list[bytes | None]:
        if lim is not None and self.store.ranges_read_whole:
            self._check_sizes(keyed, head, lim)
        if sizes is None:
            if arena is None:
                got = self.store.get_many_buffers(keyed)
            else:
                got = self.store.get_many_buffers(keyed, arena=arena)  # type: ignore[call-arg]
            if lim is not None:
                self._check_heads(keyed, got, head, lim)
            return got
        got, known = self.store.get_many_sized(keyed, arena)
        if lim is not None:
            self._check_heads(keyed, got, head, lim)
        ask = []                            # ranged reads whose size the read did not tell
        for i, ((key, rng), data, size) in enumerate(zip(keyed, got, known)):
            if rng is not None and data is not None:
                sizes[i] = size
                if size is None:
                    ask.append(i)
        if ask:                             # one batch (a remote store asks concurrently)
            for i, size in zip(ask, self.store.getsize_many([keyed[i][0] for i in ask])):
                sizes[i] = size
        return got

    def _check_sizes(self, keyed: list, head: ByteRange, lim: SizeLimit) -> None:
        """Refuse, before reading it, an object to be read as ``head`` whose size the store
        gives as longer than the limit (where reading any of it may cost reading all of it)."""
        keys = [key for key, rng in keyed if rng is head]
        for key, size in zip(keys, self.store.getsize_many(keys)):
            if size is not None and size > lim.nbytes:
                raise lim.error(size).at(array=self.name, key=key,
                                         **address_fields(self.store, key))

    def _check_heads(self, keyed: list, got: list, head: ByteRange, lim: SizeLimit) -> None:
        """Refuse an object read as ``head`` (``lim.head``) that is longer than the limit."""
        n = lim.nbytes
        if max(map(len, filter(None, got)), default=0) <= n:   # none longer: no call per object
            return
        for (key, rng), data in zip(keyed, got):
            if rng is head and data is not None and len(data) > n:
                raise self.too_large(key, lim)

    def set_chunks(self, items: Sequence[tuple[Coords, bytes | None]]) -> None:
        p, enc = self.prefix, self._encode
        latest: dict[str, bytes | None] = {}
        for c, value in items:
            key = p + enc(c)
            latest[key] = None if value is None else as_bytes(value, key)
        writes = [(k, v) for k, v in latest.items() if v is not None]
        deletes = [k for k, v in latest.items() if v is None]
        if writes:
            self.store.set_many(writes)
        if deletes:
            self.store.delete_many(deletes)

    def known_absent(self, coords: Sequence[Coords]) -> list[bool]:
        """For each of ``coords`` (in C order), whether the store tells cheaply that its object
        is not stored (:meth:`~zarrx.store.base.Store.known_absent`)."""
        keys = self.keys_of(np.asarray(coords, dtype=np.int64).reshape(len(coords), -1)) \
            if self.ndim else [self.key(c) for c in coords]
        return self.store.known_absent(keys)

    def snapshot(self, coords: Coords) -> ObjectSnapshot | None:
        """A consistent view of the object at ``coords`` (None when it is missing), a shard read
        as ranges; one longer than the limit is refused first where reading any of it may cost
        reading all of it and that costs too much (see :func:`check_whole_read`)."""
        key = self.prefix + self._encode(coords)
        lim = self.size_limit() if self.store.ranges_read_whole else None
        if lim is not None:
            check_whole_read(self.store, key, lim, self.name)
        return self.store.snapshot(key)

    @property
    def objects(self) -> KeyedChunks:      # type: ignore[override]
        return self

    def commit(self, obj: Coords, items: Sequence[tuple[Coords, object]],
               finish: Callable[[int, bytes | memoryview | None], bytes | None],
               slab: Slab | None = None) -> None:
        if len(items) != 1 or items[0][0] != obj:
            raise StoreError(f"{self.chunk_name(obj)}: expected one update of the chunk itself, "
                             f"found {[c for c, _ in items]}")
        key = self.key(obj)
        value = items[0][1]
        if value is not PARTIAL:
            if value is None:
                with_object_lock(self.store, key, self.store.delete, key)
            else:
                with_object_lock(self.store, key, self.store.set, key, value)
            return
        lim = self.size_limit()

        def modify(old: bytes | memoryview | None) -> bytes | None:
            if old is not None and lim is not None and len(old) > lim.nbytes:
                raise self.too_large(key, lim)
            return finish(0, old)

        update_object(self.store, key, modify, self.chunk_name(obj),
                      byte_range=None if lim is None else lim.head)

    def store_whole(self, coords: Any, values: list) -> None:
        """Store the chunks at ``coords`` (an ``(n, ndim)`` int64 array) whole: ``values[i]``
        the new bytes of chunk ``i``, or None to delete it; as :meth:`commit` of each, every
        object under its lock, but all the locks taken at once (one store call for the writes,
        one for the deletes) when no other thread of the process updates any of them."""
        keys = self.keys_of(coords)
        writes = [(k, v) for k, v in zip(keys, values) if v is not None]
        deletes = [k for k, v in zip(keys, values) if v is None]
        store = self.store

        def put() -> None:
            if writes:
                store.set_many(writes)
            if deletes:
                store.delete_many(deletes)

        if with_objects_lock(store, keys, put):
            return
        for key, value in zip(keys, values):      # some object in use: one lock at a time
            if value is None:
                with_object_lock(store, key, store.delete, key)
            else:
                with_object_lock(store, key, store.set, key, value)

    def list_chunks(self) -> Iterator[Coords]:
        enc, ndim, n = self.key_encoding, self.ndim, len(self.prefix)
        start = self.prefix + ("c" if enc.name == "default" else "")
        for key in self.store.list_prefix(start):
            coords = parse_chunk_key(key[n:], enc, ndim)
            if coords is not None:
                yield coords

    def __repr__(self) -> str:
        return (f"KeyedChunks({self.store!r}, {self.prefix!r}, {self.key_encoding.name}"
                f"{self.key_encoding.separator!r})")


#: the most a shard longer than its limit may cost per byte the store holds, where reading a
#: range of it costs reading all of it: deflate's most (a zip entry stored uncompressed costs
#: one, a deflated one at most this)
MAX_WORK_PER_BYTE = 1032


def check_whole_read(store: Store, key: str, lim: Any, array: str | None) -> None:
    """Refuse, unread, a shard longer than ``lim`` (unused bytes between its inner chunks,
    which writers updating it in place leave) on a store whose ranges cost the whole object
    (a zip entry, read whole once for its CRC-32) when that costs more than
    ``MAX_WORK_PER_BYTE`` per byte the store holds: a compressed entry declaring a size far past
    its compressed bytes (bzip2 and LZMA expand further than deflate). Otherwise reading it costs
    its own bytes (stored), or inflating them once (compressed), in bounded memory."""
    size = store.getsize(key)
    if size is None or size <= lim.nbytes:
        return
    held = store.stored_size(key)
    if held is not None and size <= MAX_WORK_PER_BYTE * held:
        return
    err = CodecError(f"{size} bytes stored in {held} compressed bytes: longer than the "
                     f"{lim.nbytes} bytes a shard packed without gaps takes, and reading any of "
                     f"it inflates all of it, more than {MAX_WORK_PER_BYTE} bytes per "
                     f"compressed byte (deflate's most)")
    err.key_noun = "shard"
    raise err.at(array=array, key=key, **address_fields(store, key))
