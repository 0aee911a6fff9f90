"""The record of a node that a conversion is writing.

A conversion writes a node's metadata documents last, after its chunks, so that a node being
written does not open: an interrupted conversion leaves nothing that reads as complete (its
missing chunks as the fill value). Meanwhile the documents the node will have are kept in one
object inside it, :data:`RECORD` (``<node>/.zarrx-pending``), so that a resumed conversion can
check that it writes the same node, and a new one can tell an interrupted conversion from an
empty place. A zip archive needs no record: a conversion into one that fails leaves the archive
as it was.
"""
from __future__ import annotations

import json

from zarrx.errors import ZarrError
from zarrx.metadata import nodes
from zarrx.metadata.model import ArrayMeta, GroupMeta
from zarrx.store import MemoryStore, Store, ZipStore

__all__ = ["RECORD", "recorded", "read_record", "record", "finish"]

RECORD = ".zarrx-pending"


def _key(path: str) -> str:
    return nodes.join(path, RECORD)


def _keeps_records(store: Store) -> bool:
    return not isinstance(store, ZipStore)


def recorded(store: Store, path: str) -> bool:
    """Whether an interrupted conversion left a node unfinished at ``path``."""
    return _keeps_records(store) and store.exists(_key(path))


def read_record(store: Store, path: str) -> ArrayMeta | GroupMeta | None:
    """The metadata the unfinished node at ``path`` is to have (None: no record)."""
    raw = store.get(_key(path)) if _keeps_records(store) else None
    if raw is None:
        return None
    try:
        docs = json.loads(raw)
        held = MemoryStore()
        for name, text in docs.items():
            held.set(name, text.encode("utf-8"))
    except (ValueError, AttributeError, TypeError):
        raise ZarrError(f"{_key(path)!r}: the record of an interrupted conversion does not "
                        f"parse; remove it (zarrx check --repair), or convert again with "
                        f"--overwrite") from None
    return nodes.load_node(held, "")


def _documents(meta: ArrayMeta | GroupMeta) -> dict[str, bytes]:
    """The metadata documents of a node holding ``meta``, by name, checked to parse back."""
    held = MemoryStore()
    nodes.save_node(held, "", meta)
    # (the attributes before the document making the node, which is written last)
    return {key: held.get(key) for key in sorted(  # type: ignore[misc]
        held.list_prefix(""), key=lambda k: (k in nodes.NODE_KEYS, k))}


def record(store: Store, path: str, meta: ArrayMeta | GroupMeta) -> None:
    """Keep ``meta`` as what the node at ``path``, about to be written, is to have."""
    if not _keeps_records(store):
        return
    docs = {name: doc.decode("utf-8") for name, doc in _documents(meta).items()}
    store.set(_key(path), json.dumps(docs).encode("utf-8"))


def finish_many(store: Store, items: list[tuple[str, ArrayMeta | GroupMeta]]) -> None:
    """:func:`finish` of each ``(path, metadata)`` of ``items`` (nodes whose data is all
    written), in that order, with one edit of each consolidated document above them, then drop
    their records."""
    if not _keeps_records(store):
        store.set_many([(nodes.join(path, name), doc) for path, meta in items
                        for name, doc in _documents(meta).items()])
        return
    nodes.save_nodes(store, [(path, meta, None) for path, meta in items])
    store.delete_many([_key(path) for path, _ in items])


def finish(store: Store, path: str, meta: ArrayMeta | GroupMeta) -> None:
    """Write the documents of the node at ``path``, whose data is all written, then drop its
    record. A zip archive gets the documents alone: it cannot replace the consolidated
    metadata of the groups above (as for ``zarrx copy``, run ``zarrx consolidate`` on a copy)."""
    if not _keeps_records(store):
        store.set_many([(nodes.join(path, name), doc) for name, doc in _documents(meta).items()])
        return
    nodes.save_node(store, path, meta)
    store.delete(_key(path))

