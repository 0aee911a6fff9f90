"""The order in which a node's documents are written (for :func:`zarrx.metadata.nodes.save_node`).

A Zarr v2 node is two objects: ``.zarray`` (or ``.zgroup``), whose presence makes the node, and
``.zattrs``, its attributes. A ``.zattrs`` without ``.zarray`` / ``.zgroup`` is no node, so
the attributes are written first and the document making the node last: a reader (or a writer
killed in between) never finds the node without its attributes (an xarray variable without
``_ARRAY_DIMENSIONS``, which fails to open). A node with no attributes has its ``.zattrs``
removed before the node's document is written, except when the node must be new (below).

A node that must be new, on a store with conditional writes, is created only while its
document is absent (``set_if(..., ABSENT)``). Its attributes go first there too, written only
while no ``.zattrs`` exists, or over one found with no node beside it (what a killed writer
left, or another creator's under way): when the node's document then turns out to be taken,
the ``.zattrs`` written is removed again at the generation written (what another writer stored
over it stays), and the creator that made the node checks afterwards that its ``.zattrs`` is
the one stored, writing it again otherwise. Without attributes, a stray ``.zattrs`` is removed
only once the node is claimed (removing it before could take another creator's attributes).
"""
from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from zarrx.errors import ConflictError, ZarrError
from zarrx.metadata.node_copy import NODE_KEYS
from zarrx.metadata.node_read import join
from zarrx.store.base import ABSENT, Store

__all__ = ["write_documents"]

ATTRS = ".zattrs"
#: how many times a ``.zattrs`` found without its node is taken over before giving up
TAKE_OVER_TRIES = 8


def write_documents(store: Store, path: str, docs: dict[str, bytes],
                    exists: Callable[[Any], ZarrError | None] | None,
                    load: Callable[[], Any]) -> None:
    """Write the documents ``docs`` (by name) of the node at ``path`` in the order of the
    module. ``exists``: a node that must be new (see :func:`zarrx.metadata.nodes.save_node`);
    ``load()`` reads the node stored there now (None: none)."""
    node = next(name for name in docs if name in NODE_KEYS)
    attrs = docs.get(ATTRS)
    v2 = node != "zarr.json"
    if exists is None or not store.supports_conditional_writes:
        if v2 and attrs is not None:
            store.set(join(path, ATTRS), attrs)
        elif v2:
            store.delete(join(path, ATTRS))
        store.set(join(path, node), docs[node])
        return
    owned: Hashable | None = None
    if v2 and attrs is not None:
        owned = _claim_attrs(store, path, attrs, exists, load)
        if owned is None:
            return                  # the node found is kept as it is
    try:
        store.set_if(join(path, node), docs[node], ABSENT)
    except ConflictError:
        if owned is not None:
            _drop(store, join(path, ATTRS), owned)
        _found(exists, load())
        return
    if not v2:
        return
    key = join(path, ATTRS)
    if attrs is None:
        store.delete(key)           # a stray one: the node is ours now
    elif store.generation(key) != owned:   # taken over by another creator (who lost)
        store.set(key, attrs)


def _claim_attrs(store: Store, path: str, attrs: bytes,
                 exists: Callable[[Any], ZarrError | None], load: Callable[[], Any]
                 ) -> Hashable | None:
    """Write ``.zattrs`` for a node that must be new: the generation written, or None when a
    node is found there and kept (``exists`` returned None; otherwise its error is raised)."""
    key = join(path, ATTRS)
    expect: Hashable = ABSENT
    for _ in range(TAKE_OVER_TRIES):
        try:
            return store.set_if(key, attrs, expect)
        except ConflictError:
            pass
        node = load()
        if node is not None:
            _found(exists, node)
            return None
        expect = store.generation(key)      # no node beside it: taken over
        if expect is None:
            expect = ABSENT
    raise ConflictError(f"{store!r}: cannot create the node at {path or '/'!r}: its {ATTRS!r} "
                        f"kept changing while no node was there ({TAKE_OVER_TRIES} tries); "
                        f"another writer is creating a node there")


def _found(exists: Callable[[Any], ZarrError | None], node: Any) -> None:
    """Raise ``exists(node)`` (the node found), unless it returns None (the node is kept)."""
    error = exists(node)
    if error is not None:
        raise error from None


def _drop(store: Store, key: str, generation: Hashable) -> None:
    """Remove the ``.zattrs`` written at ``generation`` (left when rewritten since)."""
    try:
        store.delete_if(key, generation)
    except ConflictError:
        pass
