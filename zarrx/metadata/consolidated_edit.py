"""Editing the consolidated metadata of a group in place: a v2 ``.zmetadata`` or the inline
``consolidated_metadata`` of a v3 group's ``zarr.json`` (at the store root or below it).

:func:`edit_consolidated` is the one read-modify-write both formats go through when
:mod:`zarrx.metadata.nodes` keeps these documents in step with a node's writes (the order of
those writes, and the ``zarrx_pending`` marks, are described there); :func:`consolidated_groups`
finds, in one batched read, which groups below the store root carry such a document. The
entries are kept as stored: an edit replaces or removes them, never reads them, so only the
layout around them is checked and only the entries an edit replaced are serialized; a write
costs the size of the document, not a parse and serialization of every node in it. The
document this process last read or wrote at a key is kept with its parse and its entries'
text (:mod:`zarrx.metadata.consolidated_memo`): an edit that finds those very bytes there again
parses nothing and writes the others' text as kept.
"""
from __future__ import annotations

import dataclasses
import warnings
import weakref
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any

from zarrx.errors import ZarrUserWarning
from zarrx.metadata import dumps, serialize_v3, serialize_zmetadata
from zarrx.metadata.consolidated import node_keys
from zarrx.metadata.consolidated_memo import Remembered, recall, remember
from zarrx.metadata.json import (checked as checked_json, document_range, json_document,
                                 max_document_bytes)
from zarrx.metadata.model import ArrayMeta, GroupMeta
from zarrx.store.base import ByteRange, Store
from zarrx.store.update import update_object

__all__ = ["edit_consolidated", "consolidated_groups", "may_be_consolidated",
           "without_consolidated", "Edit", "V3_KEY", "ZMETADATA", "group_entry",
           "drop_subtree", "drop_below", "drop_subtrees", "dropping", "dropped",
           "marking_children", "inside"]

Meta = ArrayMeta | GroupMeta
V3_KEY = "zarr.json"
ZMETADATA = ".zmetadata"


class _NotConsolidated(Exception):
    """The group's ``zarr.json`` carries no consolidated metadata: nothing to edit."""


#: ``edit(entries, pending)``: entries by path relative to the group, as stored (to be replaced
#: or removed, not read)
Edit = Callable[[dict[str, Any], set[str]], None]

# a group's zarr.json is read whole (up to the largest document a reader takes:
# json.document_range()); of a .zmetadata, whether there is one is enough
_FIRST_BYTE = ByteRange.trusted(0, 1)


def _key(at: str, zarr_format: int) -> str:
    name = V3_KEY if zarr_format == 3 else ZMETADATA
    return f"{at}/{name}" if at else name


def edit_consolidated(store: Store, zarr_format: int, edit: Edit, at: str = "") -> bool:
    """Apply ``edit(entries, pending)`` to the consolidated metadata of the group at ``at``
    (default: the store root): for ``zarr_format`` 2 its ``.zmetadata``, for 3 the inline
    ``consolidated_metadata`` of its ``zarr.json`` (the rest of that document kept as stored).
    False when there is none. The read-modify-write is conditional where the store can do
    that, retried on conflict (:func:`~zarrx.store.update.update_object`; threads of one
    process take turns)."""
    key = _key(at, zarr_format)
    found = [False]
    limit = max_document_bytes()

    def modify(raw: bytes | memoryview | None) -> bytes | None:
        found[0] = False
        written[0] = None
        if raw is None:
            return None                         # nothing there: nothing written
        doc = recall(store, key, json_document(store, key, raw))
        parts = doc.parts(zarr_format, key)
        if parts is None:
            raise _NotConsolidated
        originals: dict[str, Any] = parts[0]
        pending = set(parts[1])
        found[0] = True
        entries = dict(originals)
        edit(entries, pending)
        new = _edited(zarr_format, doc, originals, entries, pending)
        out = new.raw
        dropped[0] = len(out) if len(out) > limit else 0
        if dropped[0]:      # no reader would take it: readers list the hierarchy instead
            return None if zarr_format == 2 else dumps(
                {k: v for k, v in doc.doc.items() if k != "consolidated_metadata"},
                checked=True)
        written[0] = new
        return out

    dropped = [0]
    written: list[Remembered | None] = [None]
    try:
        update_object(store, key, modify, key, byte_range=document_range())
    except _NotConsolidated:
        pass
    else:
        if written[0] is not None:          # the document written: what the next edit reads
            remember(store, key, written[0])
    if dropped[0]:
        warnings.warn(f"{store!r}: the consolidated metadata of the group at {at or '/'!r} "
                      f"would have taken {dropped[0]} bytes at {key!r}, more than the "
                      f"{limit} bytes a reader takes (zarrx.config max_metadata_bytes): it was removed, and readers "
                      f"list the hierarchy instead (consolidate the groups below it, "
                      f"consolidate_metadata(store, path=...), to have it again)",
                      ZarrUserWarning, stacklevel=2)
    return found[0]


def consolidated_groups(store: Store, candidates: Iterable[tuple[int, str]],
                        known: Mapping[str, Any] | None = None) -> list[tuple[int, str]]:
    """Of the ``(zarr_format, group path)`` pairs, those whose group may carry consolidated
    metadata of that format (v2: there is a ``.zmetadata``; v3: its ``zarr.json`` has a
    ``consolidated_metadata`` field), in the order given, from the documents in ``known``
    (key -> the document just read, None when absent) and :func:`_looked_at` for the others.
    :func:`edit_consolidated` then reads each of them for good."""
    pairs = list(candidates)
    known = known or {}
    unread = [(fmt, at) for fmt, at in pairs if _key(at, fmt) not in known]
    flags = _looked_at(store, unread) if unread else {}
    return [pair for pair in pairs if (flags[pair] if pair in flags else
                                       may_be_consolidated(pair[0], known[_key(pair[1], pair[0])]))]


class _Seen(dict):
    """What :func:`_seen` remembers of one store: key -> (generation, whether the document
    there may hold consolidated metadata) of the groups' documents as last read; ``ref`` holds
    the store weakly, and drops this from ``_SEEN`` as the store is collected (before its id
    can be another object's)."""
    __slots__ = ("ref",)


#: per store object (see :func:`_seen`), by its id while it lives. By identity: equal stores
#: (memory stores holding equal values) may number their generations alike, and comparing
#: them compares their contents
_SEEN: dict[int, _Seen] = {}
_SEEN_MAX = 1 << 16         # documents remembered per store (all forgotten past it)


def _seen(store: Store) -> dict[str, tuple[Hashable, bool]] | None:
    """What was read of groups' consolidated keys in ``store``, on a store whose generations
    cost less than a read (a file's ``stat``, a dict lookup: not a remote store, where a
    request is a wait whether it reads or not, nor one whose generations digest the whole
    object); None on others."""
    if store.latency_bound or not store.supports_conditional_writes:
        return None
    at = id(store)
    seen = _SEEN.get(at)
    if seen is None:
        seen = _Seen()
        try:
            seen.ref = weakref.ref(store, lambda _, at=at: _SEEN.pop(at, None))
        except TypeError:                   # a store not weakly referenced
            return None
        _SEEN[at] = seen
    return seen


def _looked_at(store: Store, pairs: list[tuple[int, str]]) -> dict[tuple[int, str], bool]:
    """Whether the group of each ``(zarr_format, path)`` pair may carry consolidated metadata
    of that format, from one batched read of its key (of a ``.zmetadata`` its first byte only).
    Where :func:`_seen` remembers documents, the generations of all the keys are asked for
    first, in one call, and only a ``zarr.json`` whose generation differs from the one it was
    last read at is read again (a ``.zmetadata`` is one when it has a generation): a chain of
    ``create_group`` calls one level at a time reads a few documents per call, not those of
    every group above, and a group another writer consolidated meanwhile has a new
    generation, so it is found all the same."""
    keys = [_key(at, fmt) for fmt, at in pairs]
    seen = _seen(store)
    out: dict[tuple[int, str], bool] = {}
    todo = list(range(len(pairs)))
    gens: list[Hashable | None] = []
    if seen is not None:
        gens = store.generations(keys)      # before the reads: never newer than what they read
        todo = []
        for i, (pair, key, gen) in enumerate(zip(pairs, keys, gens)):
            had = seen.get(key)
            if gen is None or pair[0] == 2:
                out[pair] = gen is not None
            elif had is not None and had[0] == gen:
                out[pair] = had[1]
            else:
                todo.append(i)
    whole = document_range()
    got = store.get_many([(keys[i], whole if pairs[i][0] == 3 else _FIRST_BYTE)
                          for i in todo]) if todo else []
    for i, raw in zip(todo, got):
        out[pairs[i]] = flag = may_be_consolidated(pairs[i][0], raw)
        if seen is not None and raw is not None:
            if len(seen) >= _SEEN_MAX:
                seen.clear()
            seen[keys[i]] = (gens[i], flag)
    return out


def may_be_consolidated(zarr_format: int, raw: Any) -> bool:
    """Whether the document ``raw`` read at a group's consolidated key (None: absent) may
    hold consolidated metadata of ``zarr_format``."""
    return raw is not None and (zarr_format == 2 or _names_consolidated(bytes(raw)))


def _names_consolidated(doc: bytes) -> bool:
    """Whether a ``zarr.json`` may have a ``consolidated_metadata`` field (or spells a name
    with escapes, which only a parse would tell)."""
    return b'"consolidated_metadata"' in doc or b"\\u" in doc


def _edited(zarr_format: int, doc: Remembered, originals: dict[str, Any],
            entries: dict[str, Any], pending: set[str]) -> Remembered:
    """The consolidated document ``doc`` (as read; not modified) whose entries were
    ``originals`` (as stored) and are now ``entries``, with ``pending`` as its pending paths:
    the entries an edit replaced (with a node's metadata) or removed are written anew, the
    others kept as stored; all in :func:`~zarrx.metadata.consolidated.entry_order`."""
    gone: set[str] = set()
    new: dict[str, Any] = {}
    # (membership and subscripts: no call per entry)
    for path in [p for p, m in originals.items() if p not in entries or entries[p] is not m]:
        gone.update([path] if zarr_format == 3 else node_keys(path))
    for path, meta in entries.items():
        if path not in originals or originals[path] is not meta:
            if zarr_format == 3:
                new[path] = checked_json(serialize_v3(without_consolidated(meta)), 3)
            else:
                new.update(checked_json(serialize_zmetadata({path: meta})["metadata"], 1))
    return doc.replaced(zarr_format, gone, new, pending)


def without_consolidated(meta: Meta) -> Meta:
    """``meta`` without consolidated metadata of its own (the form of a consolidated entry)."""
    if isinstance(meta, GroupMeta) and meta.consolidated is not None:
        return dataclasses.replace(meta, consolidated=None)
    return meta


def group_entry(entry: Any) -> bool:
    """Whether a consolidated entry (metadata, or a document as stored: a v3 ``zarr.json``,
    the v2 documents of a node by name) is a group's."""
    if isinstance(entry, dict):
        return entry.get("node_type") == "group" or (".zgroup" in entry
                                                     and ".zarray" not in entry)
    return isinstance(entry, GroupMeta)


def drop_subtree(entries: dict[str, Any], rel: str) -> None:
    """Remove the entries of the node at ``rel`` and of every node below it."""
    below = rel + "/"
    for k in [k for k in entries if k == rel or k.startswith(below)]:
        del entries[k]


def drop_subtrees(entries: dict[str, Any], rels: Iterable[str]) -> None:
    """:func:`drop_subtree` of each of ``rels``; each entry costs a walk up its own path,
    however many subtrees there are."""
    tops = set(rels)
    for k in [k for k in entries if k in tops or _under(k, tops)]:
        del entries[k]


def dropping(rels: Iterable[str]) -> Edit:
    """The edit that lists the subtrees at ``rels`` as pending (``rel/``: being deleted) and
    drops their entries."""
    rels = list(rels)

    def drop(entries: dict[str, Any], pending: set[str]) -> None:
        pending.update(r + "/" for r in rels)
        drop_subtrees(entries, rels)
    return drop


def dropped(rels: Iterable[str]) -> Edit:
    """The edit that ends :func:`dropping` once the subtrees' objects are gone: their entries
    dropped (a writer not keeping the document in step may have listed some meanwhile), and
    no longer pending."""
    rels = list(rels)

    def finish(entries: dict[str, Any], pending: set[str]) -> None:
        drop_subtrees(entries, rels)
        pending.difference_update(r + "/" for r in rels)
    return finish


def marking_children(entries: dict[str, Any], pending: set[str]) -> None:
    """The edit that lists every child a group consolidates as pending (its subtree is being
    deleted), dropping their entries."""
    pending.update(k.partition("/")[0] + "/" for k in entries if k)
    for k in [k for k in entries if k]:
        del entries[k]


def drop_below(entries: dict[str, Any], arrays: set[str]) -> None:
    """Remove the entries below each of ``arrays`` (paths of arrays, which have no children);
    each entry costs a walk up its own path, however many arrays there are."""
    if len(arrays) == 1:
        drop_subtree(entries, *arrays)
    elif arrays:
        for k in [k for k in entries if _under(k, arrays)]:
            del entries[k]


def inside(path: str, tops: set[str]) -> bool:
    """Whether ``path`` is one of ``tops`` or below one."""
    return path in tops or _under(path, tops)


def _under(path: str, tops: set[str]) -> bool:
    """Whether one of ``tops`` is above ``path``."""
    while "/" in path:
        path = path.rpartition("/")[0]
        if path in tops:
            return True
    return False
