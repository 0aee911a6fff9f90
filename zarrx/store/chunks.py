"""Chunk objects addressed by grid coordinates instead of string keys.

:class:`ChunkSource` is what chunk I/O reads and writes through: batches of
``(coords, byte range)`` requests in, bytes (or ``None`` for a missing chunk) out. A plain array
is a :class:`KeyedChunks` (a :class:`~zarrx.store.base.Store`, the array's prefix and its chunk
key encoding); a sharded array wraps that in one :class:`~zarrx.store.shard.ShardStore` per
level, which addresses its inner chunks by coordinates without formatting or parsing a key.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence

from zarrx.errors import ShardError, StoreError
from zarrx.metadata.model import ArrayMeta, CodecSpec, KeyEncoding, RegularGrid
from zarrx.store.base import ByteRange, Store, as_bytes

__all__ = ["ChunkSource", "KeyedChunks", "ChunkRequest", "parse_chunk_key", "make_chunk_source"]

Coords = tuple[int, ...]
ChunkRequest = tuple[Coords, "ByteRange | None"]


class ChunkSource:
    """Abstract: stored chunk objects of one chunk grid, addressed by coordinates."""

    read_only: bool = False

    def get_chunks(self, requests: Sequence[ChunkRequest]) -> list[bytes | None]:
        """The bytes of each requested chunk (or the requested range of it), in request order;
        ``None`` for a missing chunk. A result may be a read-only ``memoryview`` into a larger
        stored object rather than ``bytes`` (no copy is made of byte ranges)."""
        raise NotImplementedError

    def get_chunks_sized(self, requests: Sequence[ChunkRequest]
                         ) -> list[tuple[bytes, int | None] | None]:
        """As :meth:`get_chunks`, each result paired with the chunk object's total size in bytes
        when the source knows it without another request (else ``None``)."""
        return [None if r is None else (r, None) for r in self.get_chunks(requests)]

    def set_chunks(self, items: Sequence[tuple[Coords, bytes | None]]) -> None:
        """Store each chunk's bytes; ``None`` deletes the chunk."""
        raise NotImplementedError

    def reserve(self, coords: Coords, nbytes: int) -> memoryview | None:
        """Optionally, a writable buffer where the encoded bytes of chunk ``coords`` (exactly
        ``nbytes``) may be written in place, then passed to :meth:`set_chunks`; None when the
        source cannot place them directly (the default)."""
        return None

    def flush(self) -> None:
        """Write out anything buffered; called at the end of every write operation."""

    def list_chunks(self) -> Iterator[Coords]:
        """Coordinates of every stored chunk, in no particular order."""
        raise NotImplementedError

    def exists_any(self) -> bool:
        """Whether at least one chunk is stored."""
        return next(iter(self.list_chunks()), None) is not None

    def outer(self) -> ChunkSource:
        """The source of the stored objects themselves (the outermost grid: shards, when
        sharded)."""
        return self

    def chunk_name(self, coords: Coords) -> str:
        """How messages name the chunk at ``coords``."""
        return f"chunk {coords}"


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
        if not p.isascii() or not p.isdigit() or (len(p) > 1 and p[0] == "0"):
            return None
    return tuple(int(p) for p in parts)


class KeyedChunks(ChunkSource):
    """The chunks of an array stored as one object per chunk: key ``prefix + encode(coords)``.

    ``prefix`` is ``""`` or the array's path ending in ``/``; ``ndim``, when given, lets
    :meth:`list_chunks` skip keys with another number of coordinates (and tells a 0-d array's
    ``0`` key from a 1-d chunk's under the ``v2`` encoding).
    """

    def __init__(self, store: Store, prefix: str, key_encoding: KeyEncoding, *,
                 ndim: int | None = None) -> None:
        if prefix and not prefix.endswith("/"):
            raise StoreError(f"KeyedChunks prefix {prefix!r}: expected '' or a path ending in '/'")
        self.store = store
        self.prefix = prefix
        self.key_encoding = key_encoding
        self.ndim = ndim
        self._encode = key_encoding.encode

    @property
    def read_only(self) -> bool:  # type: ignore[override]
        return self.store.read_only

    def key(self, coords: Coords) -> str:
        return self.prefix + self._encode(coords)

    def chunk_name(self, coords: Coords) -> str:
        return repr(self.prefix + self._encode(coords))

    def get_chunks(self, requests: Sequence[ChunkRequest]) -> list[bytes | None]:
        p, enc = self.prefix, self._encode
        keyed = []
        last: object = None
        key = ""
        for c, rng in requests:
            if c is not last:       # runs of ranges into one shard share one coords object
                key, last = p + enc(c), c
            keyed.append((key, rng))
        return self.store.get_many_buffers(keyed)

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


def _outer_perm(meta: ArrayMeta) -> tuple[int, ...] | None:
    """The axis order of the transposes applied before the (outermost) sharding codec, or None.

    A transpose before sharding commutes with cutting the shard into inner chunks, so zarrx
    pushes it down into every inner chunk: the array machinery sees inner chunks in array
    space (decoded by a chain that starts with the same transpose), and only the shard index
    slot of an inner chunk is computed in the transposed space (``ShardStore(perm=...)``).
    """
    perm: tuple[int, ...] | None = None
    for i, level in enumerate(meta.shard_levels):
        for spec in level.outer_codecs:
            if spec.name != "transpose":
                raise ShardError(f"array codecs: {spec.name!r} before sharding_indexed is not "
                                 f"supported: only a transpose can be applied to a whole shard, "
                                 f"since inner chunks must stay independently decodable")
            if i > 0:
                raise ShardError("array codecs: a transpose inside a nested sharding_indexed codec "
                                 "is not supported")
            order = tuple(int(o) for o in spec.configuration["order"])
            perm = order if perm is None else tuple(perm[o] for o in order)
    return perm


def to_array_space(shape: Sequence[int], perm: Sequence[int] | None) -> tuple[int, ...]:
    """A shape seen after a transpose with ``perm``, back in array axis order."""
    if perm is None:
        return tuple(shape)
    out = [0] * len(perm)
    for i, o in enumerate(perm):
        out[o] = shape[i]
    return tuple(out)


def shard_shapes(meta: ArrayMeta) -> list[tuple[int, ...]]:
    """Shapes in array space, outermost first: the shard of each level, then the read unit."""
    perm = _outer_perm(meta)
    return [meta.chunk_grid.chunk_shape] + [to_array_space(lv.chunk_shape, perm)   # type: ignore[attr-defined]
                                            for lv in meta.shard_levels]


def read_unit(meta: ArrayMeta) -> tuple[tuple[int, ...], tuple[CodecSpec, ...]]:
    """``(chunk_shape, codecs)`` of the array's read unit in array space: the (innermost) chunk
    shape and the codec chain that decodes one such chunk (a transpose before sharding is
    pushed down into it)."""
    if not meta.shard_levels:
        return meta.chunk_shape, meta.chunk_codecs
    perm = _outer_perm(meta)
    inner = meta.shard_levels[-1].chunk_shape
    if perm is None:
        return inner, meta.chunk_codecs
    return to_array_space(inner, perm), (CodecSpec("transpose", {"order": list(perm)}),) + tuple(meta.chunk_codecs)


def make_chunk_source(store: Store, prefix: str, meta: ArrayMeta) -> ChunkSource:
    """The chunk source of the array at ``prefix`` (``""`` or ending in ``/``): its stored
    objects, wrapped in one ShardStore per sharding level, outermost first.

    Level 0's shards have the grid's chunk shape, level i's the inner chunk shape of level i-1,
    each as its sharding codec sees it (after the array->array codecs before it)."""
    from zarrx.store.shard import ShardStore   # shard.py builds on this module

    source: ChunkSource = KeyedChunks(store, prefix, meta.key_encoding, ndim=meta.ndim)
    if not meta.shard_levels:
        return source
    grid = meta.chunk_grid
    if not isinstance(grid, RegularGrid):
        raise ShardError(f"array {prefix.rstrip('/')!r}: sharding_indexed needs a regular chunk "
                         f"grid, found {type(grid).__name__}")
    perm = _outer_perm(meta)
    shape = grid.chunk_shape
    if perm is not None:
        shape = tuple(shape[o] for o in perm)
    for level in meta.shard_levels:
        source = ShardStore(source, level, shape, key=prefix.rstrip("/"), perm=perm)
        shape = level.chunk_shape
    return source
