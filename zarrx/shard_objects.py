"""Shards encoded as a whole: the stored objects of a sharded array whose codec list has
bytes->bytes codecs after ``sharding_indexed`` (zarr-python writes ``zstd`` there by default
when given a sharding serializer).

:class:`EncodedObjects` is a view of the array's store in which every object reads and writes
as the shard it encodes: a read fetches the whole stored object and decodes it (then cuts the
byte range the shard layer asked for), a write encodes the assembled shard. The shard layer
above it is unchanged; the price is that a shard can only be read and written whole, as the
codecs require. Generations are the stored objects' own, so conditional writes and snapshots
keep their meaning. A read of a shard through one snapshot (the index, then its inner chunks)
fetches and decodes it once and holds the decoded bytes until the snapshot closes. Across reads
the last decoded shards are kept, by key and generation: at most four, and at most
``zarrx.config.decoded_shard_cache_bytes`` of them (64 MiB by default); a decoded shard larger
than that is used by the read that decoded it and not kept.
"""
from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator, Sequence

from zarrx import config
from zarrx.codecs.base import BytesToBytesCodec
from zarrx.codecs.registry import get_codec_class
from zarrx.errors import CodecError, ZarrError
from zarrx.metadata.model import ArrayMeta
from zarrx.store.base import ByteRange, Store, Versioned, as_buffer
from zarrx.store.generations import conflict
from zarrx.store.shard_index import IndexCache
from zarrx.store.snapshots import HeldSnapshot, ObjectSnapshot, VersionedSnapshot
from zarrx.size_limits import decoded_shard_limit, encoded_limit

__all__ = ["EncodedObjects", "encoded_objects"]

_KEEP = 4            # decoded shards kept per view, at most (and decoded_shard_cache_bytes)


def encoded_objects(store: Store, meta: ArrayMeta, name: str) -> Store:
    """``store`` itself, or an :class:`EncodedObjects` view when the array's shards are
    encoded as a whole."""
    levels = meta.shard_levels
    if not levels or not levels[0].object_codecs:
        return store
    where = f"{name or '/'}"
    dt = meta.data_type.numpy
    codecs = []
    for i, spec in enumerate(levels[0].object_codecs):
        codec = get_codec_class(spec.name, key=where).from_spec(
            spec, dt, (), where=f"{where} shard codecs[{i}]")
        assert isinstance(codec, BytesToBytesCodec)
        codecs.append(codec.bind(dt))
    return EncodedObjects(store, tuple(codecs), decoded_shard_limit(meta, name), name)


class EncodedObjects(Store):
    """A view of ``inner`` whose objects are decoded by ``codecs`` (last applied first) when
    read and encoded when written; decoded objects larger than ``limit`` are refused. Errors
    of the codecs name the array ``name`` and the shard's key. A stored object longer than the
    codecs' bound of ``limit`` is refused unread."""

    copies_values = True

    def __init__(self, inner: Store, codecs: tuple[BytesToBytesCodec, ...], limit: int,
                 name: str = "") -> None:
        self.inner = inner
        self.name = name
        self.codecs = codecs
        self.limit = limit
        self.stored = encoded_limit(codecs, limit)
        self.read_only = inner.read_only
        self.latency_bound = inner.latency_bound
        self.parallel_writes = inner.parallel_writes
        self._kept = IndexCache(_KEEP, _configured_budget)    # key -> (generation, bytes)

    @property
    def supports_conditional_writes(self) -> bool:  # type: ignore[override]
        return self.inner.supports_conditional_writes

    def __repr__(self) -> str:
        names = ", ".join(c.name for c in self.codecs)
        return f"{self.inner!r} (shards encoded by {names})"

    # -- the codecs -------------------------------------------------------------------------
    def _decode(self, data: bytes | bytearray | memoryview, key: str) -> bytes:
        buf = data
        try:
            for codec in reversed(self.codecs):
                buf = codec.decode(buf, None, self.limit)
        except ZarrError as exc:
            raise self._located(exc, key)
        return bytes(buf) if not isinstance(buf, bytes) else buf

    def _encode(self, value: bytes | bytearray | memoryview, key: str) -> bytes:
        buf: object = as_buffer(value, key)
        try:
            n = memoryview(buf).nbytes               # type: ignore[arg-type]
            if n > self.limit:          # readers would refuse it: never stored
                raise CodecError(f"a shard of {n} bytes, more than the {self.limit} bytes a "
                                 f"shard of this array may decode to (its inner chunks' size "
                                 f"depends on their values): use smaller shards")
            for codec in self.codecs:
                buf = codec.encode(buf)          # type: ignore[arg-type]
        except ZarrError as exc:
            raise self._located(exc, key)
        return bytes(buf) if not isinstance(buf, bytes) else buf  # type: ignore[arg-type]

    def _located(self, exc: ZarrError, key: str) -> ZarrError:
        """``exc`` located at the shard ``key`` of the array (the stored object is a shard)."""
        if exc.key is None:
            exc.key_noun = "shard"
        return exc.at(array=self.name, key=key)

    def _forget(self, key: str) -> None:
        self._kept.pop_where(lambda k: k == key)

    # -- reads ------------------------------------------------------------------------------
    def get_versioned(self, key: str, byte_range: ByteRange | None = None, *,
                      if_generation: Hashable | None = None) -> Versioned | None:
        got = self.inner.get_versioned(key, self.stored.head, if_generation=if_generation)
        if got is None:
            return None
        raw, gen = got
        if len(raw) > self.stored.nbytes:
            size = self.inner.getsize(key)
            raise self.stored.error(size if size is not None and size > self.stored.nbytes
                                    else None).at(array=self.name, key=key)
        kept = self._kept.get(key, gen)
        if kept is not None:
            data = kept[0]
        else:
            data = self._decode(raw, key)
            self._kept.put(key, gen, data, None)    # not kept when over the budget
        return (data if byte_range is None else byte_range.apply(data)), gen

    def snapshot(self, key: str) -> ObjectSnapshot | None:
        """A snapshot whose first read fetches and decodes the shard (or takes it from the
        cache) and whose later reads are served from those decoded bytes, so the inner chunks
        of one read cost no more decodes, whether or not the shard is kept after it."""
        gen = self.inner.generation(key)
        return None if gen is None else DecodedSnapshot(self, key, gen)

    def get(self, key: str, byte_range: ByteRange | None = None) -> bytes | None:
        got = self.get_versioned(key, byte_range)
        return None if got is None else bytes(got[0])

    def getsize(self, key: str) -> int | None:
        got = self.get_versioned(key)
        return None if got is None else len(got[0])

    def exists(self, key: str) -> bool:
        return self.inner.exists(key)

    def generation(self, key: str) -> Hashable | None:
        return self.inner.generation(key)

    def list_prefix(self, prefix: str) -> Iterator[str]:
        return self.inner.list_prefix(prefix)

    def list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        return self.inner.list_dir(prefix)

    # -- writes -----------------------------------------------------------------------------
    def set(self, key: str, value: bytes | bytearray | memoryview) -> None:
        self._forget(key)
        self.inner.set(key, self._encode(value, key))

    def set_if(self, key: str, value: bytes | bytearray | memoryview,
               if_generation: Hashable | None) -> Hashable:
        self._forget(key)
        return self.inner.set_if(key, self._encode(value, key), if_generation)

    def delete(self, key: str) -> None:
        self._forget(key)
        self.inner.delete(key)

    def delete_many(self, keys: Iterable[str]) -> None:
        keys = list(keys)
        for key in keys:
            self._forget(key)
        self.inner.delete_many(keys)

    def delete_if(self, key: str, if_generation: Hashable | None) -> None:
        self._forget(key)
        self.inner.delete_if(key, if_generation)

    def delete_prefix(self, prefix: str) -> None:
        self._kept.clear()
        self.inner.delete_prefix(prefix)


class DecodedSnapshot(VersionedSnapshot):
    """A snapshot of one shard of an :class:`EncodedObjects` view at generation ``generation``:
    its first read decodes the whole shard (through the view, so from its cache when kept
    there), and every read until it closes cuts its ranges from those decoded bytes."""

    store: EncodedObjects

    def __init__(self, store: EncodedObjects, key: str, generation: Hashable) -> None:
        super().__init__(store, key, generation)
        self._held: HeldSnapshot | None = None

    def read(self, ranges: Sequence[ByteRange | None]) -> list[bytes | bytearray | memoryview]:
        if self._held is None:
            got = self.store.get_versioned(self.key, None, if_generation=self.generation)
            if got is None:
                raise conflict(self.store, self.key, "read a snapshot of", "an object", None)
            self._held = HeldSnapshot(self.key, got[0], got[1])
            self.generation, self.size = got[1], len(got[0])
        return self._held.read(ranges)

    def close(self) -> None:
        self._held = None


def _configured_budget() -> int:
    return config.get("decoded_shard_cache_bytes")  # type: ignore[return-value]

