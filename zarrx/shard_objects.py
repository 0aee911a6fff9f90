"""Shards encoded as a whole: the stored objects of a sharded array whose codec list has
bytes->bytes codecs after ``sharding_indexed`` (zarr-python writes ``zstd`` there by default
when given a sharding serializer).

:class:`EncodedObjects` is a view of the array's store in which every object reads and writes
as the shard it encodes: a read fetches the whole stored object and decodes it (then cuts the
byte range the shard layer asked for), a write encodes the assembled shard. The shard layer
above it is unchanged; the price is that a shard can only be read and written whole, as the
codecs require. Generations are the stored objects' own, so conditional writes and snapshots
keep their meaning. The last decoded shards are kept (four, or 64 MiB beyond the newest), by
key and generation, so the index and the inner chunks of one shard cost one read and one
decode.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Iterator

from zarrx.codecs.base import BytesToBytesCodec
from zarrx.codecs.registry import get_codec_class
from zarrx.errors import CodecError, ZarrError
from zarrx.metadata.model import ArrayMeta
from zarrx.store.base import ByteRange, Store, Versioned, as_buffer
from zarrx.size_limits import decoded_shard_limit, encoded_limit

__all__ = ["EncodedObjects", "encoded_objects"]

_KEEP = 4                    # decoded shards kept per view, at most
_KEEP_BYTES = 64 << 20       # ... and at most this many bytes of them beyond the newest


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
        self._kept: OrderedDict[tuple[str, Hashable], bytes] = OrderedDict()
        self._lock = threading.Lock()

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

    def _remember(self, key: str, gen: Hashable, data: bytes) -> None:
        with self._lock:
            self._kept[(key, gen)] = data
            self._kept.move_to_end((key, gen))
            while len(self._kept) > _KEEP or (
                    len(self._kept) > 1
                    and sum(map(len, self._kept.values())) > _KEEP_BYTES + len(data)):
                self._kept.popitem(last=False)

    def _forget(self, key: str) -> None:
        with self._lock:
            for k in [k for k in self._kept if k[0] == key]:
                del self._kept[k]

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
        with self._lock:
            data = self._kept.get((key, gen))
        if data is None:
            data = self._decode(raw, key)
            self._remember(key, gen, data)
        return (data if byte_range is None else byte_range.apply(data)), gen

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
        with self._lock:
            self._kept.clear()
        self.inner.delete_prefix(prefix)

