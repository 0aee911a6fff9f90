"""How many bytes :func:`zarrx.copy` reads of each object it copies.

A copy reads each object whole, so an object longer than anything its array could have written
would cost what it is long: a chunk entry of a zip archive of 1.6 KB of bzip2 inflates to
1.6 GB. Each object is therefore bounded as readers bound it (:mod:`zarrx.size_limits`): a
chunk by the largest size its array's codecs can produce, a shard encoded as a whole likewise,
a metadata document by ``max_metadata_bytes``. One whose size the store gives as larger is
refused unread; one whose size the store cannot tell is read up to one byte past the bound and
refused when longer. A shard of inner chunks has no bound below its length (it may hold unused
bytes between them, which readers skip by its index) and is copied whole as it is, as is an
object of an array whose codecs zarrx cannot resolve (or whose metadata it cannot read), and an
object that belongs to no array.
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
from zarrx.size_limits import unit_limit
from zarrx.store import Store
from zarrx.store.base import address_fields
from zarrx.store.chunks import SizeLimit

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
        if isinstance(node, Array):
            self._arrays[node.path] = _array_limit(store, node.metadata, node.path)
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
                    self._arrays[path] = _array_limit(store, meta, path)

    def limit(self, key: str) -> SizeLimit | None:
        """The bound of the object at ``key``; None when it has none."""
        path, _, name = key.rpartition("/")
        if name in DOCUMENTS:
            return self._docs
        while True:                 # the deepest array above the key
            if path in self._arrays:
                return self._arrays[path]
            if not path:
                return None
            path = path.rpartition("/")[0]

    def error(self, key: str, size: int | None) -> ZarrError:
        """The error refusing the object at ``key`` of ``size`` bytes (None: more than its
        bound, the store cannot tell how much)."""
        lim = self.limit(key)
        assert lim is not None
        if size is not None and size <= lim.nbytes:
            size = None
        if lim is self._docs:
            return too_large(key, size, lim.nbytes)
        path = key.rpartition("/")[0]
        while path not in self._arrays:
            path = path.rpartition("/")[0]
        return lim.error(size).at(array=path, key=key, **address_fields(self.store, key))


def _array_limit(store: Store, meta: ArrayMeta, path: str) -> SizeLimit | None:
    """The bound of one stored object (a chunk, or a shard as it is stored) of the array at
    ``path``; None when its codecs cannot be resolved."""
    try:
        if not meta.layout.sharded:
            return unit_limit(meta, path)
        objects = encoded_objects(store, meta, path)
        if isinstance(objects, EncodedObjects):     # shards encoded as a whole
            return objects.stored
        # a shard may hold unused bytes between its inner chunks (what writers updating it in
        # place leave), which readers skip by its index: it has no bound below its length
        return None
    except ZarrError:
        return None
