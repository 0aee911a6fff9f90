"""Test adapter: a :class:`~zarrx.store.sharded.ShardedChunks` seen as a string-key Store.

The library addresses inner chunks by coordinates only; the shard tests and the store contract
speak of keys. ``ShardStore(source, level, shard_shape)`` builds the ShardedChunks of one more
sharding level over ``source`` (a KeyedChunks, or another ShardStore for nesting) and serves
inner-chunk keys ``c/i/j`` (the ``default`` encoding, relative to the array). ``set_chunks`` /
``flush`` batch updates the way one write operation does: each shard is committed once.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import numpy as np

from zarrx.errors import ReadOnlyError, StoreError
from zarrx.metadata.model import to_array_space
from zarrx.metadata.model import ArrayMeta, CodecSpec, DataType, KeyEncoding, RegularGrid, \
    ShardLevel
from zarrx.store.base import ByteRange, Store, as_bytes, check_key
from zarrx.store.chunks import KeyedChunks, parse_chunk_key
from zarrx.store.sharded import ShardedChunks

_INNER = KeyEncoding("default", "/")


class ShardStore(Store):
    def __init__(self, source: KeyedChunks | ShardStore, level: ShardLevel,
                 shard_shape: Sequence[int], *, key: str = "",
                 perm: Sequence[int] | None = None) -> None:
        if isinstance(source, ShardStore):
            objects, levels, grid = source.objects, (*source.levels, level), source.grid
        else:
            outer = () if perm is None else (CodecSpec("transpose", {"order": list(perm)}),)
            level = ShardLevel(level.chunk_shape, level.index_location, level.index_crc32c,
                               outer, level.index_endian)
            objects, levels = source, (level,)
            grid = to_array_space(tuple(shard_shape), None if perm is None else tuple(perm))
        self.objects, self.levels, self.grid = objects, levels, grid
        self.meta = ArrayMeta(shape=tuple(g * 1000 for g in grid),
                              data_type=DataType("uint8", np.dtype("u1")),
                              chunk_grid=RegularGrid(grid), key_encoding=objects.key_encoding,
                              fill_value=0, codecs=(), shard_levels=levels)
        self.chunks = ShardedChunks(objects, self.meta.layout, name=key)
        self.ndim = len(grid)
        self._pending: list[tuple[tuple[int, ...], bytes | None]] = []

    @property
    def read_only(self) -> bool:  # type: ignore[override]
        return self.objects.read_only

    # -- coordinate API, as one write operation would use it -------------------------------------
    def get_chunks(self, requests):
        return self.chunks.get_chunks(requests)

    def list_chunks(self) -> Iterator[tuple[int, ...]]:
        return self.chunks.list_chunks()

    def set_chunks(self, items: Iterable[tuple[tuple[int, ...], bytes | None]]) -> None:
        self._pending.extend(items)

    def flush(self) -> None:
        items, self._pending = self._pending, []
        ratio = self.meta.layout.object_ratio
        runs: list[tuple[tuple[int, ...], dict]] = []
        for coords, value in items:
            obj = tuple(c // r for c, r in zip(coords, ratio))
            if not runs or runs[-1][0] != obj:
                runs.append((obj, {}))
            runs[-1][1][coords] = value
        for obj, latest in runs:
            if self.read_only:
                raise ReadOnlyError(f"{self.objects.store!r}: cannot write shard {obj}: "
                                    f"the store is read-only")
            self.chunks.commit(obj, list(latest.items()), lambda j, old: None)

    # -- string keys ------------------------------------------------------------------------------
    def _parse(self, key: object, *, writing: bool) -> tuple[int, ...] | None:
        coords = parse_chunk_key(check_key(key), _INNER, self.ndim)
        if coords is None and writing:
            example = _INNER.encode((0,) * self.ndim)
            raise StoreError(f"shard store: key {key!r}: expected an inner chunk key like "
                             f"{example!r} with {self.ndim} coordinates")
        return coords

    def get(self, key, byte_range=None):
        return self.get_many([(key, byte_range)])[0]

    def get_many(self, requests):
        parsed = [(self._parse(k, writing=False), rng) for k, rng in requests]
        found = iter(self.get_chunks([(c, rng) for c, rng in parsed if c is not None]))
        return [None if c is None else _as_bytes(next(found)) for c, _ in parsed]

    def set(self, key, value):
        self.set_many([(key, value)])

    def set_many(self, items):
        for key, value in items:
            self._check_writable(key)
            self.set_chunks([(self._parse(key, writing=True), as_bytes(value, key))])
        self.flush()

    def delete(self, key):
        self.delete_many([key])

    def delete_many(self, keys):
        for key in keys:
            self._check_writable(key)
            if (coords := self._parse(key, writing=False)) is not None:
                self.set_chunks([(coords, None)])
        self.flush()

    def exists(self, key):
        return self.get(key, ByteRange.slice(0, 0)) is not None

    def list_prefix(self, prefix: str) -> Iterator[str]:
        for coords in self.list_chunks():
            key = _INNER.encode(coords)
            if key.startswith(prefix):
                yield key


def _as_bytes(value: object) -> bytes | None:
    return value if value is None or type(value) is bytes else bytes(value)  # type: ignore[arg-type]
