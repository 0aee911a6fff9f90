"""What arrays and groups share: a store, a path, metadata, attributes and read-only state."""
from __future__ import annotations

from typing import Any

from zarrx import _fork
from zarrx.attrs import Attributes
from zarrx.errors import ReadOnlyError
from zarrx.store.base import Store
from zarrx.store.locks import KeyedLocks, KeyedSharedLocks

__all__ = ["Node"]

#: each handle's lock, by the handle's id. A forked child starts with none held: a handle's
#: lock held by a thread of the parent when it forked would never be released in the child.
_HANDLE_LOCKS = KeyedLocks()
#: each handle's shape lock, by the handle's id: its writes hold it shared, its shape changes
#: exclusively, so no write through the handle plans with a shape that changes under it
_SHAPE_LOCKS = KeyedSharedLocks()
#: held while a handle makes its own copy of the metadata it shows (see Node._owned_meta)
_OWN_LOCK = _fork.lock()


class Node:
    """Base of :class:`~zarrx.Array` and :class:`~zarrx.Group`."""

    _kind = "node"

    def __init__(self, store: Store, path: str, meta: Any, *, read_only: bool = False) -> None:
        self._store = store
        self._path = path.strip("/")
        self._meta = meta
        self._own: Any = None       # (``_meta``, the handle's own copy of it): _owned_meta
        self._read_only = read_only or store.read_only

    def __eq__(self, other: object) -> bool:
        """Equal when of the same kind, at the same path of equal stores, with equal metadata
        (as zarr-python compares arrays and groups): a node opened twice is equal to itself."""
        if type(other) is not type(self):
            return NotImplemented
        return self._path == other._path and self._store == other._store \
            and self._meta == other._meta

    def __hash__(self) -> int:
        # what equal nodes share (the metadata can change)
        return hash((type(self), self._path))

    @property
    def _meta_lock(self) -> Any:
        """``with self._meta_lock:`` metadata changes through this handle take turns (each is
        also a conditional read-modify-write of the stored document, see
        zarrx.metadata.nodes)."""
        return _HANDLE_LOCKS(id(self))

    @property
    def _writing(self) -> Any:
        """``with self._writing:`` a data write through this handle: it runs with the shape it
        started with, which no shape change through the handle replaces meanwhile (writes
        run at once with each other)."""
        return _SHAPE_LOCKS.shared(id(self))

    @property
    def _reshaping(self) -> Any:
        """``with self._reshaping:`` a shape change through this handle: it waits for the
        handle's writes in progress, and writes wait for it."""
        return _SHAPE_LOCKS.exclusive(id(self))

    @property
    def store(self) -> Store:
        return self._store

    @property
    def path(self) -> str:
        return self._path

    @property
    def name(self) -> str:
        return "/" + self._path

    @property
    def basename(self) -> str:
        return self._path.rsplit("/", 1)[-1]

    @property
    def metadata(self) -> Any:
        return self._owned_meta()

    def _owned_meta(self) -> Any:
        """The handle's metadata, made its own when first shown: handles opened on the same
        stored document share its parse, which is read-only, but for the attributes (and a
        struct's numpy dtype, which numpy lets be changed), of which each handle then gets a
        copy (:func:`~zarrx.metadata.parse_cache.for_handle`). Opening costs no copy; nor
        does metadata held anew (after a change) until it is shown. ``_meta`` itself is never
        replaced here: a change another thread makes through the handle meanwhile (a resize,
        new attributes) stays held, and is copied when next shown."""
        meta = self._meta
        own = self._own
        if own is not None and own[0] is meta:
            return own[1]
        from zarrx.metadata.parse_cache import for_handle
        with _OWN_LOCK:                 # one copy per metadata held, whichever thread shows it
            own = self._own
            if own is None or own[0] is not meta:
                own = self._own = (meta, for_handle(meta))
        return own[1]

    def _shown_meta(self) -> Any:
        """The metadata as this handle shows it (its own copy, with any change made in place
        to its attributes) when it has been shown, else as held."""
        meta = self._meta
        own = self._own
        return own[1] if own is not None and own[0] is meta else meta

    @property
    def zarr_format(self) -> int:
        return self._meta.zarr_format

    @property
    def read_only(self) -> bool:
        return self._read_only

    @property
    def attrs(self) -> Attributes:
        """User attributes; every change is written to the store at once."""
        return Attributes(lambda: self._owned_meta().attributes, self._update_attrs,
                          read_only=self._read_only,
                          owner=f"{self._kind} {self.name!r}", where=self._read_only_store())

    def _update_attrs(self, edit: Any) -> dict:
        """Write ``edit(the attributes as stored now)``; returns the attributes written."""
        from zarrx.metadata import nodes
        self._check_writable("change attributes")
        with self._meta_lock:
            meta = nodes.update_attributes(self._store, self._path, self._meta, edit)
            self._took(meta)
            return meta.attributes

    def _took(self, meta: Any) -> None:
        """Hold ``meta``, the node's metadata as just written."""
        self._meta = meta

    def _check_writable(self, what: str) -> None:
        if self._read_only:
            raise ReadOnlyError(f"{self._kind} {self.name!r}: cannot {what}: the {self._kind} "
                                f"is open read-only{self._read_only_store()}")

    def _read_only_store(self) -> str:
        """``, in <store>`` when the store itself is read-only (an http(s) URL, mode 'r'), so
        that the message names where the node is; empty otherwise."""
        if not self._store.read_only:
            return ""
        why = getattr(self._store, "read_only_reason", None)
        return f", in {self._store!r}" + (f": {why}" if why else "")
