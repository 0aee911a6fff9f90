"""Consolidating a hierarchy: :func:`consolidate` writes a group's consolidated metadata (v2
``.zmetadata``; v3 inline ``consolidated_metadata`` in the group's ``zarr.json``) from a walk
of the nodes below it (importable from :mod:`zarrx.metadata.nodes` too)."""
from __future__ import annotations

import dataclasses

from zarrx.errors import ContainsArrayError, GroupNotFoundError, MetadataError, ZarrError
from zarrx.metadata import dumps, parse_v3, serialize_v3, serialize_zmetadata
from zarrx.metadata.consolidated import parse_zmetadata_pending
from zarrx.metadata.consolidated_edit import V3_KEY, ZMETADATA
from zarrx.metadata.json import document_range, json_document, max_document_bytes
from zarrx.metadata.model import ArrayMeta, GroupMeta
from zarrx.metadata.node_read import join, load_node, walked_entries
from zarrx.metadata.parse_cache import cached_parse as _cached_parse
from zarrx.store.base import Store
from zarrx.store.update import update_object

__all__ = ["consolidate"]


def consolidate(store: Store, path: str = "", zarr_format: int | None = None) -> GroupMeta:
    """Consolidate the hierarchy under the group at ``path`` (of ``zarr_format`` when given:
    a store may hold a Zarr v2 and a v3 group there); returns its new metadata."""
    root = load_node(store, path, zarr_format, consolidated=False)   # (what it replaces)
    if isinstance(root, ArrayMeta):       # the node in the way, as open_consolidated says
        raise ContainsArrayError(f"consolidate_metadata: the node at {path or '/'!r} in "
                                 f"{store!r} is an array, not a group")
    if not isinstance(root, GroupMeta):
        raise GroupNotFoundError(f"consolidate_metadata: no group at {path or '/'!r} in {store!r}")
    root = dataclasses.replace(root, consolidated=None)
    v3 = root.zarr_format == 3
    # read the consolidated document (and its generation) before walking the hierarchy, write
    # it only if it is still that version: a node written meanwhile has changed it (its path
    # pending, then its entry), so the walk is redone; paths still pending stay pending (their
    # writers may not have finished)
    key = join(path, V3_KEY if v3 else ZMETADATA)
    done: list[GroupMeta] = []

    def modify(raw: bytes | memoryview | None) -> bytes:
        if v3:
            # the group's document as stored now (its attributes, its pending paths)
            current = None if raw is None else _cached_parse(parse_v3, bytes(json_document(store, key, raw)), key)
            if not isinstance(current, GroupMeta):
                raise GroupNotFoundError(f"consolidate_metadata: the group at {path or '/'!r} "
                                        f"in {store!r} was deleted or replaced by an array")
        entries = dict(walked_entries(store, path, "", root.zarr_format))
        if v3:
            new = dataclasses.replace(current, consolidated=entries)
            done[:] = [new]
            return _fits(dumps(serialize_v3(new)), path, key)
        pending = [] if raw is None else _pending_of(bytes(raw), key)
        done[:] = [dataclasses.replace(root, consolidated=entries)]
        return _fits(dumps(serialize_zmetadata({"": root, **entries}, pending)), path, key)

    update_object(store, key, modify, key, byte_range=document_range())
    return done[0]


def _fits(doc: bytes, path: str, key: str) -> bytes:
    """``doc``, the consolidated document of the group at ``path`` to be written at ``key``,
    unless it is larger than a reader takes (then no reader, zarrx included, could open the
    group, a v3 one even without its consolidated metadata): a MetadataError, before anything
    is written."""
    limit = max_document_bytes()
    if len(doc) > limit:
        raise MetadataError(f"consolidate_metadata: the consolidated metadata of the group at "
                            f"{path or '/'!r} would take {len(doc)} bytes at {key!r}, more "
                            f"than the {limit} bytes a reader takes "
                            f"(zarrx.config max_metadata_bytes); nothing was written "
                            f"(consolidate the groups below it, path=..., instead, or raise "
                            f"the setting here and for every reader)")
    return doc


def _pending_of(raw: bytes, key: str) -> list[str]:
    """The pending paths of a ``.zmetadata`` document; none when it does not parse (it is
    being replaced)."""
    try:
        return sorted(parse_zmetadata_pending(raw, key)[1])
    except ZarrError:
        return []
