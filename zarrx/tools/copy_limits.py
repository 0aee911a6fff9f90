"""How many bytes :func:`zarrx.copy` reads of each object it copies.

A copy reads each object whole, so an object longer than anything its array could have written
would cost what it is long: a chunk entry of a zip archive of 1.6 KB of bzip2 inflates to
1.6 GB. Each object is therefore bounded as readers bound it (:mod:`zarrx.size_limits`): a
chunk by the largest size its array's codecs can produce, a shard encoded as a whole likewise,
a metadata document by ``max_metadata_bytes``. One whose size the store gives as larger is
refused unread; one whose size the store cannot tell is read up to one byte past the bound and
refused when longer. A shard of inner chunks is bounded by its index and its inner chunks'
bounds, as a packed shard; one longer (unused bytes between its inner chunks, which readers skip
by its index) is copied whole, byte for byte, only once it is known that readers take it
(:func:`~zarrx.tools.shards.get_shard`: a valid index whose inner chunks are within their
bounds, read as ranges; in a zip archive, an entry inflating to at most 1032 bytes per
compressed byte), so a shard entry inflating to gigabytes of garbage is refused without being
held. An object of an array whose codecs zarrx cannot resolve (or whose metadata it cannot
read), and an object that belongs to no array, is copied whole as it is.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from zarrx.array import Array
from zarrx.errors import ZarrError
from zarrx.metadata.json import max_document_bytes, too_large
from zarrx.metadata.model import ArrayMeta
from zarrx.metadata.nodes import V2_KEYS, V3_KEY, load_node, load_nodes
from zarrx.shard_objects import EncodedObjects, encoded_objects
from zarrx.size_limits import shard_limit, unit_limit
from zarrx.store import Store
from zarrx.store.base import address_fields
from zarrx.store.chunks import SizeLimit
from zarrx.tools.shards import get_shard

__all__ = ["ObjectLimits", "DOCUMENTS"]

#: the names of the metadata documents
DOCUMENTS = frozenset((V3_KEY, *V2_KEYS, ".zmetadata"))
_ARRAY_DOCS = {V3_KEY: 3, ".zarray": 2}


class ObjectLimits:
    """The bound of each object below ``node`` (at ``keys`` of ``store``): :meth:`limit` gives
    it, :meth:`error` the error refusing an object longer."""

    def __init__(self, store: Store, node: object, keys: Iterable[str]) -> None:
        self.store = store
        most = max_document_bytes()
        self._docs = SizeLimit(most, lambda found: too_large("a metadata document", found, most))
        self._arrays: dict[str, SizeLimit | None] = {}
        #: the arrays whose objects are shards of inner chunks, which may be longer than their
        #: bound (unused bytes between the inner chunks)
        self._sharded: dict[str, ArrayMeta] = {}
        if isinstance(node, Array):
            self._add(node.metadata, node.path)
            return
        found: dict[int, list[str]] = {3: [], 2: []}
        for key in keys:
            path, _, name = key.rpartition("/")
            if name in _ARRAY_DOCS:
                found[_ARRAY_DOCS[name]].append(path)
        for fmt in (3, 2):          # (v3 wins over v2, as readers have it)
            paths = [p for p in found[fmt] if p not in self._arrays]
            try:                    # the documents read together (one batch on a network)
                batch: Any = load_nodes(store, paths, fmt)
            except ZarrError:       # one of them cannot be read: each on its own
                batch = None
            for path in paths:
                try:
                    meta = load_node(store, path, fmt) if batch is None else batch[path]
                except ZarrError:   # copied as it is, as the array cannot be read
                    continue
                if isinstance(meta, ArrayMeta):
                    self._add(meta, path)

    def _add(self, meta: ArrayMeta, path: str) -> None:
        lim, sharded = _array_limit(self.store, meta, path)
        self._arrays[path] = lim
        if sharded:
            self._sharded[path] = meta

    def limit(self, key: str) -> SizeLimit | None:
        """The bound of the object at ``key``; None when it has none."""
        if key.rpartition("/")[2] in DOCUMENTS:
            return self._docs
        path = self._array_of(key)
        return None if path is None else self._arrays[path]

    def check_longer(self, key: str, size: int | None) -> None:
        """Raise the error refusing the object at ``key``, longer than its bound (``size``
        bytes; None: the store cannot tell), unless it is a shard that readers take as it is:
        one holding unused bytes between its inner chunks, whose index is valid and whose inner
        chunks are within their bounds (read as ranges: what this costs is bounded by the index
        and those chunks, never by the shard's length)."""
        path = None if self.limit(key) is self._docs else self._array_of(key)
        if path not in self._sharded:
            raise self.error(key, size)
        get_shard(self.store, self._sharded[path], path, key)   # as readers refuse it

    def _array_of(self, key: str) -> str | None:
        """The path of the deepest array above ``key``, or None."""
        path = key.rpartition("/")[0]
        while path not in self._arrays:
            if not path:
                return None
            path = path.rpartition("/")[0]
        return path

    def error(self, key: str, size: int | None) -> ZarrError:
        """The error refusing the object at ``key`` of ``size`` bytes (None: more than its
        bound, the store cannot tell how much)."""
        lim = self.limit(key)
        assert lim is not None
        if size is not None and size <= lim.nbytes:
            size = None
        if lim is self._docs:
            return too_large(key, size, lim.nbytes)
        return lim.error(size).at(array=self._array_of(key), key=key,
                                  **address_fields(self.store, key))


def _array_limit(store: Store, meta: ArrayMeta, path: str) -> tuple[SizeLimit | None, bool]:
    """The bound of one stored object (a chunk, or a shard as it is stored) of the array at
    ``path`` (None when its codecs cannot be resolved), and whether its objects are shards of
    inner chunks (whose bound is that of a packed shard: one longer may still be valid)."""
    try:
        if not meta.layout.sharded:
            return unit_limit(meta, path), False
        objects = encoded_objects(store, meta, path)
        if isinstance(objects, EncodedObjects):     # shards encoded as a whole
            return objects.stored, False
        return shard_limit(meta, path), True
    except ZarrError:
        return None, False
