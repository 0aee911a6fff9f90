"""Writing node metadata documents to a store (with :mod:`zarrx.metadata.node_read`, which
reads them and whose names are importable from here too, and ``api``: the only places that know
which Zarr version a node is stored in).

* ``save_node`` writes a node's documents and keeps the consolidated metadata that lists the
  node in step (see "Keeping consolidated metadata in step" below);
* ``update_attributes`` / ``update_array`` change a node, ``delete_node`` / ``move_node`` /
  ``write_subtree`` remove or rewrite a subtree;
* ``consolidate`` writes consolidated metadata (v2 ``.zmetadata``; v3 inline
  ``consolidated_metadata`` in the group's ``zarr.json``).

Keeping consolidated metadata in step. A node is listed by the consolidated metadata of the
store root and of any group above it that carries its own (a v2 ``.zmetadata``; a v3 group's
inline ``consolidated_metadata``, whose entries are flat paths relative to that group as
``consolidate`` writes them; a v2 group's ``.zmetadata`` lists the group itself too). These
documents and the node's are separate objects, so a writer killed between them would leave an
entry stale. Writes are therefore ordered: (1) each of these documents is rewritten listing the
node's path under ``zarrx_pending`` (v3: inside ``consolidated_metadata``, where zarr-python
ignores it), (2) the node's documents are written, (3) each is rewritten with the node's new
entry and without the path. A reader that finds pending paths takes those nodes from their own
documents (``p/`` marks a subtree being deleted or written: it is listed from the store), so a
kill at any point never serves stale metadata (a delete drops the subtree's entries in (1), so
zarr-python, ignoring the list, never finds a removed node). Each rewrite is a read-modify-write
made conditional (``set_if``) where the store supports it, so concurrent writers of different nodes
lose no update. A path stays pending until its node is written again (consolidating keeps it
pending: its writer may still be at work). A v3 group's own writes rewrite its consolidated
document itself and keep its entries and pending paths. The store root's documents are read by
the rewrite itself; those of the groups between the root and the node are looked for in one
batched read (none for a child of the root; where generations cost no request, a document read
before is only looked at by its generation, see
:func:`~zarrx.metadata.consolidated_edit.consolidated_groups`), and only those found are
rewritten. The rewrites
themselves are :func:`zarrx.metadata.consolidated_edit.edit_consolidated`.

Changing a node. ``update_attributes`` and ``update_array`` change an existing node by a
read-modify-write of its stored document (v3 ``zarr.json``; v2 ``.zattrs`` for attributes and
``.zarray`` for the rest), conditional on the generation read and retried on conflict
(:func:`~zarrx.store.update.update_object`), so concurrent changes of one node from other
handles, threads or processes are built on, never undone; the consolidated entry is then
written from the node as stored. ``consolidate`` writes the consolidated document conditionally
on the version it read before walking the hierarchy, and walks again when a node was written
meanwhile.
"""
from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

from zarrx.errors import NodeNotFoundError, ZarrError
from zarrx.metadata import dumps, parse_array_v2, parse_group_v2, parse_v3, serialize_v2, serialize_v3
from zarrx.metadata.json import document_range, json_document
from zarrx.metadata.consolidated_edit import (V3_KEY, ZMETADATA, Edit, consolidated_groups,
                                              drop_below, drop_subtree, dropped, dropping,
                                              group_entry, inside, marking_children,
                                              may_be_consolidated,
                                              edit_consolidated as _edit_consolidated,
                                              without_consolidated as _without_consolidated)
from zarrx.metadata.consolidate import consolidate
from zarrx.metadata.in_step_held import held as together
from zarrx.metadata.model import ArrayMeta, GroupMeta, with_attributes
from zarrx.metadata.node_copy import NODE_KEYS, copy_below
from zarrx.metadata.node_write import write_documents
from zarrx.metadata.node_read import (DOCUMENT_NAMES, V2_KEYS, Meta, NodeBatch,
                                      broken_document, groups_above, join, list_children,
                                      load_node, load_nodes, walk, walked_entries)
from zarrx.metadata.parse_cache import cached_parse as _cached_parse
from zarrx.store.base import Store, refuse_unnamable
from zarrx.store.update import update_object

__all__ = ["join", "load_node", "load_nodes", "NodeBatch", "broken_document", "save_node",
           "delete_node", "delete_nodes", "move_node", "list_children", "walk", "consolidate",
           "V3_KEY", "V2_KEYS", "write_subtree", "update_attributes", "update_array",
           "DOCUMENT_NAMES", "NODE_KEYS", "save_nodes"]


def save_node(store: Store, path: str, meta: Meta,
              exists: Callable[[Meta | None], ZarrError | None] | None = None,
              known: Mapping[str, Any] | None = None) -> None:
    """Write ``meta`` as the node at ``path`` (keeping the consolidated metadata that lists it
    in step, see :func:`_in_step`). Nothing is written unless the documents parse back (see
    :func:`_readable`). ``known``: documents just read (see :func:`_covering`).

    With ``exists`` (a node that must be new), the node's first document (``zarr.json``,
    ``.zarray`` or ``.zgroup``) is created only while it is absent, on a store with conditional
    writes: when another writer made it since the caller looked, nothing is written and
    ``exists(the node found)`` is raised, or, when it returns None, that node is kept as it
    is. Two creators of one node therefore never both succeed."""
    save_nodes(store, [(path, meta, exists)], known)


#: a node to write: its path, metadata and ``exists`` (see :func:`save_node`)
NewNode = tuple[str, Meta, "Callable[[Meta | None], ZarrError | None] | None"]


#: subtrees being replaced: their paths, and the consolidated documents listing them pending
Replaced = tuple[Sequence[str], Sequence[tuple[int, str]]]


def save_nodes(store: Store, items: Sequence[NewNode], known: Mapping[str, Any] | None = None,
               replaced: Replaced | None = None) -> None:
    """:func:`save_node` of each ``(path, meta, exists)`` of ``items`` (nodes of one Zarr
    format, parents before children: the groups above a new node, say), in that order, with
    one edit of each consolidated document listing them before the writes and one after, so
    that writing ``n`` nodes costs the store reads of one (and ``n`` writes), not ``n`` times
    those of one. ``known``: documents just read (see :func:`_covering`). ``replaced``: what
    ``delete_nodes(..., settle=False)`` left pending, settled by the edits after the writes."""
    if not items:
        return
    fmt = items[0][1].zarr_format
    docs = [_readable(path, {V3_KEY: serialize_v3(meta)} if fmt == 3 else serialize_v2(meta))
            for path, meta, _ in items]

    def write() -> None:
        for (path, meta, exists), written in zip(items, docs):
            _write_node(store, path, meta, exists, written)

    _in_step(store, [p for p, _, _ in items], fmt, write,
             own={p for p, m, _ in items if isinstance(m, GroupMeta)}, known=known,
             replaced=replaced)


def _write_node(store: Store, path: str, meta: Meta,
                exists: Callable[[Meta | None], ZarrError | None] | None,
                docs: dict[str, bytes]) -> None:
    """Write the documents ``docs`` of the node at ``path`` (see :func:`save_node`), the one
    making the node last (:mod:`zarrx.metadata.node_write`)."""
    write_documents(store, path, docs, exists,
                    lambda: load_node(store, path, consolidated=False))


def _readable(path: str, docs: dict[str, Any]) -> dict[str, bytes]:
    """The documents of a node as JSON bytes, once they parse back as a reader parses them
    (every limit a reader enforces: a shape past 2**63 - 1, ...); the parser's MetadataError
    otherwise, before anything is written. The parse is the one a later open reuses."""
    out = {name: dumps(doc) for name, doc in docs.items()}
    if V3_KEY in out:
        _cached_parse(parse_v3, out[V3_KEY], join(path, V3_KEY))
    elif ".zarray" in out:
        _cached_parse(parse_array_v2, out[".zarray"], out.get(".zattrs"), join(path, ".zarray"))
    else:
        parse_group_v2(out[".zgroup"], out.get(".zattrs"), join(path, ".zgroup"))
    return out


#: a consolidated document: (zarr_format, path of the group holding it)
Doc = tuple[int, str]


def _relative(path: str, group: str) -> str:
    """``path`` as a consolidated document of the group at ``group`` (above it, or the node
    itself: ``""``) keys it."""
    return path[len(group) + 1:] if group else path


def _covering(store: Store, paths: Sequence[str], formats: tuple[int, ...],
              own: Collection[str] = (), known: Mapping[str, Any] | None = None) -> list[Doc]:
    """The consolidated documents that may list the nodes at ``paths``: the store root's of
    each of ``formats`` (each edit reads it anyway, and leaves it alone when it has none), then
    those of the groups between the root and each path (and of each path in ``own`` itself:
    a v2 group's ``.zmetadata`` lists the group) that carry one, parents first, found with one
    batched read, made only when there are such groups. ``known``: documents just read (key ->
    document, None when absent); those that hold no consolidated metadata are not read again."""
    groups: set[str] = set()
    for path in paths:              # each group above is reached once, however many below it
        node = path
        while node:
            node = node.rpartition("/")[0]
            if not node or node in groups:
                break
            groups.add(node)
    groups.update(p for p in own if p)
    known = known or {}
    roots = [(f, "") for f in formats
             if (V3_KEY if f == 3 else ZMETADATA) not in known
             or may_be_consolidated(f, known[V3_KEY if f == 3 else ZMETADATA])]
    ordered = sorted(groups, key=lambda g: (len(g), g))
    return roots + consolidated_groups(store, [(f, g) for g in ordered for f in formats], known)


def _listed(paths: Sequence[str], group: str, zarr_format: int, own: Collection[str]
            ) -> list[str]:
    """Those of ``paths`` the consolidated document of ``zarr_format`` of the group at
    ``group`` lists: the nodes below it (and the group itself in its v2 ``.zmetadata``)."""
    below = group + "/"
    return [p for p in paths if p.startswith(below) or (p != group and not group)
            or (p == group and p in own and zarr_format == 2)]


def _edit_all(store: Store, docs: Iterable[Doc], edit: Callable[[str], Edit]) -> list[Doc]:
    """:func:`_edit_consolidated` of each of ``docs`` with ``edit(its group's path)``; the
    documents that were there."""
    return [(f, g) for f, g in docs if _edit_consolidated(store, f, edit(g), at=g)]


def _marking(rel: str) -> Edit:
    """The edit that lists ``rel`` as pending."""
    return lambda entries, pending: pending.add(rel)


def _in_step(store: Store, paths: Sequence[str], zarr_format: int, write: Callable[[], Any],
             own: Collection[str] = (), known: Mapping[str, Any] | None = None,
             replaced: Replaced | None = None) -> Any:
    """``write()`` (which writes documents of the nodes at ``paths`` and may return their new
    metadata), keeping each consolidated document of ``zarr_format`` that lists the nodes in
    step (the store root's and those of the groups above them, see :func:`_covering`; ``own``:
    those of the nodes that are groups, whose v2 ``.zmetadata`` lists them too): the nodes are listed as
    pending in each first, then written, then their entries are written and they are no
    longer pending. The entries written last are the nodes as stored then (read again), so
    concurrent writers of one node leave the entry of the last of them. A v3 group's
    ``zarr.json`` is its consolidated document itself: the group's own writes keep its
    entries. ``known``: documents just read (see :func:`_covering`). ``replaced``: subtrees
    pending in the documents given (:func:`delete_nodes`), settled with the nodes' entries."""
    if together(store, paths):      # (kept in step by an enclosing in_step_together)
        return write()
    tops, held = replaced or ((), ())
    top_set = set(tops)
    if zarr_format == 3 and not any(paths) and not held:
        return write()
    own = own if zarr_format == 2 else ()
    marked = [(f, g, listed) for f, g in _covering(store, paths, (zarr_format,), own, known)
              if (listed := _listed(paths, g, f, own))]
    for f, g, listed in marked:
        if (f, g) in held and all(inside(p, top_set) for p in listed):
            continue                        # pending already, with the subtrees
        rels = [_relative(p, g) for p in listed]
        if not _edit_consolidated(store, f, lambda entries, pending, r=rels: pending.update(r),
                                  at=g):
            listed.clear()                  # no document there: nothing to finish

    def finishing(group: str, listed: list[str]) -> Edit:
        def finish(entries: dict[str, Any], pending: set[str]) -> None:
            if held:    # (from edits after the objects went: what was there is not listed)
                dropped(subtrees(group))(entries, pending)
            stored = load_nodes(store, listed, zarr_format, consolidated=False)
            rels = [_relative(p, group) for p in listed]
            arrays = {r for p, r in zip(listed, rels) if isinstance(stored[p], ArrayMeta)}
            drop_below(entries, arrays)     # an array has no children: entries below it are
            checked: set[str] = set()       # stale (zarr-python's)
            for p, rel in zip(listed, rels):
                meta = stored[p]
                if meta is not None:
                    entries[rel] = _without_consolidated(meta)
                    _list_parents(store, group, rel, zarr_format, entries, checked)
                else:
                    entries.pop(rel, None)
                pending.discard(rel)
        return finish

    def subtrees(group: str) -> list[str]:
        return [_relative(p, group) for p in _listed(tops, group, 3, ())]

    def settle() -> None:
        for f, g, listed in marked:
            if listed:
                _edit_consolidated(store, f, finishing(g, listed), at=g)
        done = {(f, g) for f, g, listed in marked if listed}
        _edit_all(store, [d for d in held if d not in done], lambda g: dropped(subtrees(g)))

    try:
        new = write()
    except ZarrError:                   # refused (a change that does not apply): settle anyway
        settle()
        raise
    settle()
    return new


def _list_parents(store: Store, group: str, rel: str, zarr_format: int,
                  entries: dict[str, Any], checked: set[str]) -> None:
    """Add to ``entries`` (of the consolidated document of the group at ``group``) the groups
    between that group and its node ``rel`` which it does not list as groups: groups made
    (over an array, maybe) after it was written by a writer that does not keep it in step
    (zarr-python). A document listing a node without a group above it is broken for
    zarr-python, which then cannot open the group at all. ``checked``: paths already looked
    at (with every path above them), not looked at again."""
    todo = []
    above = rel.rpartition("/")[0]
    while above and above not in checked:
        todo.append(above)
        above = above.rpartition("/")[0]
    for above in reversed(todo):
        if not group_entry(entries.get(above)):
            meta = load_node(store, join(group, above), zarr_format, consolidated=False)
            if isinstance(meta, GroupMeta):
                entries[above] = _without_consolidated(meta)
        checked.add(above)


def _gone(store: Store, path: str) -> NodeNotFoundError:
    return NodeNotFoundError(f"no node at {path or '/'!r} in {store!r}: it was deleted")


def update_attributes(store: Store, path: str, meta: Meta,
                      edit: Callable[[dict[str, Any]], dict[str, Any]]) -> Meta:
    """Change the attributes of the node at ``path`` (whose metadata the caller holds as
    ``meta``) to ``edit(the attributes as stored now)``: a read-modify-write of the stored
    document, conditional on the generation read and retried on conflict (plain, and only
    ordered between threads of this process, on a store without conditional writes). Only
    the attributes are taken from the caller: a v2 node's ``.zattrs`` alone is rewritten,
    a v3 node's ``zarr.json`` is read again, so a stale shape is never written back. Returns
    the node's new metadata (v3: as stored; v2: ``meta`` with the new attributes). A node
    deleted meanwhile, or replaced by a node of the other kind (a group for an array), raises
    NodeNotFoundError (v2: when its ``.zarray`` or ``.zgroup`` is gone, so no ``.zattrs`` is
    left without its node)."""
    if meta.zarr_format == 3:
        key = join(path, V3_KEY)
        out: list[Meta] = []

        def modify3(raw: bytes | memoryview | None) -> bytes:
            if raw is None:
                raise _gone(store, path)
            # the rest of the document as stored (a root group's consolidated metadata too)
            current = _cached_parse(parse_v3, _doc(store, key, raw), key)
            if isinstance(current, ArrayMeta) != isinstance(meta, ArrayMeta):
                raise _gone(store, path)        # replaced by a node of the other kind
            new = with_attributes(current, edit(dict(current.attributes)))
            out[:] = [new]
            return _readable(path, {V3_KEY: serialize_v3(new)})[V3_KEY]

        def write3() -> Meta:
            update_object(store, key, modify3, key, byte_range=document_range())
            return out[0]

        return _in_step(store, [path], 3, write3)   # (a v3 group's zarr.json is its own document)
    key = join(path, ".zattrs")
    node_key = join(path, ".zgroup" if isinstance(meta, GroupMeta) else ".zarray")
    attrs: list[dict[str, Any]] = []

    def modify2(raw: bytes | memoryview | None) -> bytes | None:
        if not store.exists(node_key):          # never a .zattrs without its node
            raise _gone(store, path)
        current = {} if raw is None else _attrs_v2(_doc(store, key, raw), key)
        new = edit(current)
        attrs[:] = [new]
        if not new:                             # no attributes: no .zattrs
            return None
        out = dumps(new)
        _attrs_v2(out, key)     # parses back as a reader parses it (its size limit), or raises
        return out

    def write() -> Meta:
        update_object(store, key, modify2, key, byte_range=document_range())
        return with_attributes(meta, attrs[0])

    return _in_step(store, [path], 2, write, own=[path] if isinstance(meta, GroupMeta) else ())


def update_array(store: Store, path: str, meta: ArrayMeta,
                 change: Callable[[ArrayMeta], ArrayMeta]) -> ArrayMeta:
    """Change the array at ``path`` to ``change(its metadata as stored now)`` (a read-modify-
    write of ``zarr.json`` or ``.zarray``, conditional and retried as in
    :func:`update_attributes`; ``change`` may be called more than once and sees the stored
    attributes only for v3). Returns the new metadata; for v2 with ``meta``'s attributes."""
    v3 = meta.zarr_format == 3
    key = join(path, V3_KEY if v3 else ".zarray")
    out: list[ArrayMeta] = []

    def modify(raw: bytes | memoryview | None) -> bytes:
        if raw is None:
            raise _gone(store, path)
        if v3:
            current = _cached_parse(parse_v3, _doc(store, key, raw), key)
        else:
            current = _cached_parse(parse_array_v2, _doc(store, key, raw), None, key)
        if not isinstance(current, ArrayMeta):
            raise _gone(store, path)
        new = change(current)
        out[:] = [new]
        if v3:
            return _readable(path, {V3_KEY: serialize_v3(new)})[V3_KEY]
        return _readable(path, {".zarray": serialize_v2(new)[".zarray"]})[".zarray"]

    def write() -> ArrayMeta:
        update_object(store, key, modify, key, byte_range=document_range())
        return out[0] if v3 else with_attributes(out[0], meta.attributes)

    return _in_step(store, [path], meta.zarr_format, write)


def _doc(store: Store, key: str, raw: bytes | memoryview) -> bytes:
    """A document a read-modify-write read at ``key`` (up to one byte past the largest a
    reader takes): a MetadataError naming its size when it is larger, or not JSON."""
    return bytes(json_document(store, key, raw))


def _attrs_v2(raw: bytes, key: str) -> dict[str, Any]:
    from zarrx.metadata import json as mjson
    return dict(mjson.load(raw, key, allow_nonfinite=True))


def delete_node(store: Store, path: str, known: Mapping[str, Any] | None = None) -> None:
    """Remove the node at ``path`` and everything below it. ``known``: documents the caller
    has just read (key -> document, None when absent; see :func:`_covering`)."""
    delete_nodes(store, [path], known)


def delete_nodes(store: Store, paths: Sequence[str], known: Mapping[str, Any] | None = None,
                 settle: bool = True, below: Mapping[str, list[str]] | None = None) -> Replaced:
    """:func:`delete_node` of each of ``paths`` (none below another), editing each consolidated
    document listing them once before any object goes and once after (unless not ``settle``:
    then by :func:`save_nodes` given what this returns, as nodes are written there next).
    ``below``: the keys below each path, as the caller listed them (else each is listed)."""
    named = [p for p in paths if p]

    def rels(group: str) -> list[str]:
        return [_relative(p, group) for p in _listed(named, group, 3, ())]
    # the subtrees' entries are dropped as they are listed as pending, before any object goes:
    # a reader ignoring the pending list (zarr-python) never reads a removed array as fill values
    marked = _edit_all(store, _covering(store, named, (3, 2), known=known),
                       lambda group: dropping(rels(group))) if named else []
    listed = {path: list(store.list_prefix(path + "/" if path else "")) if below is None
              else list(below[path]) for path in paths}
    # objects named against the store's key rules by another tool (a control character, bytes
    # that are not UTF-8) are no node's: only the prefix delete at the end may name them, on
    # a store whose prefix deletes remove them; on another, nothing is deleted (the entries
    # dropped above are listed again)
    try:
        for path, keys in listed.items():
            refuse_unnamable(store, path + "/" if path else "", keys)
    except ZarrError:
        for fmt, group in marked:
            _edit_consolidated(store, fmt, _relisting(store, {
                p: load_node(store, p, fmt, consolidated=False)
                for p in _listed(named, group, fmt, ())}, group, fmt), at=group)
        raise
    for path, keys in listed.items():
        _delete_objects(store, path, keys, known)
    if settle:
        _edit_all(store, marked, lambda group: dropped(rels(group)))
    return named, marked


def _delete_objects(store: Store, path: str, keys: list[str],
                    known: Mapping[str, Any] | None) -> None:
    """Delete ``keys``, the objects listed under the node at ``path``, and what is there."""
    named = [k for k in keys if store.key_problem(k) is None]
    docs = sorted((k for k in named if k.rpartition("/")[2] in NODE_KEYS),
                  key=lambda k: (-k.count("/"), k))
    # every node document goes before any other object, deepest first (the node's own
    # last): a delete stopped part way (a kill, a failing store) leaves whole nodes under
    # their groups, so deleting again finishes it, and objects no node claims (removed by
    # the next array created there: see zarrx.metadata.leftovers), never a node reading
    # removed objects as the fill value. The consolidated metadata of the groups of the
    # subtree goes before them (v2 .zmetadata), or lists their nodes as pending (v3,
    # inline), so none lists a node whose document is gone
    inner = groups_above(docs, path)
    doc_set = set(docs)
    zmetadata = [k for k in named if k.rpartition("/")[2] == ZMETADATA]
    _edit_all(store, consolidated_groups(store, [(3, g) for g in sorted(inner)
                                                 if join(g, V3_KEY) in doc_set], known),
              lambda group: marking_children)
    store.delete_many(zmetadata + docs)
    store.delete_many([k for k in named if k.rpartition("/")[2] not in NODE_KEYS
                       and k.rpartition("/")[2] != ZMETADATA])
    if keys:                            # what was written meanwhile (and temporary files)
        store.delete_prefix(path + "/" if path else "")


def _relisting(store: Store, metas: Mapping[str, Meta | None], group: str, fmt: int) -> Edit:
    """The edit that lists the subtree at each path of ``metas`` (its top node, None when
    there is none) as stored, no longer pending."""
    def relist(entries: dict[str, Any], pending: set[str]) -> None:
        for path, meta in metas.items():
            rel = _relative(path, group)
            drop_subtree(entries, rel)
            if meta is not None:
                entries[rel] = _without_consolidated(meta)
                entries.update(walked_entries(store, path, rel, fmt))
                _list_parents(store, group, rel, fmt, entries, set())
            pending.discard(rel + "/")
    return relist


def move_node(store: Store, src: str, dst: str) -> None:
    """Move the node at ``src`` and everything below it to ``dst`` (which must be free, its
    parents made): every object is copied (see :func:`zarrx.metadata.node_copy.copy_below`:
    created only while absent where the store can, so two moves into one place never mix),
    then the source deleted. The consolidated metadata that lists ``dst`` lists it as pending
    while it is copied, then its new entries."""
    write_subtree(store, dst, lambda: copy_below(store, src, dst))
    delete_node(store, src)


def write_subtree(store: Store, path: str, write: Callable[[], None]) -> None:
    """Call ``write()``, which writes the node at ``path`` and everything below it object by
    object (a move, a copy), keeping the consolidated metadata (v2 or v3) that lists ``path``
    in step (the store root's and those of the groups above it): each lists ``path`` as
    pending while ``write`` runs, then the subtree's new entries."""
    subtree = path + "/"
    marked = _edit_all(store, _covering(store, [path], (3, 2)),
                       lambda group: _marking(_relative(subtree, group)))
    write()
    metas = {fmt: load_node(store, path, fmt, consolidated=False)
             for fmt in {f for f, _ in marked}}
    for fmt, group in marked:
        _edit_consolidated(store, fmt, _relisting(store, {path: metas[fmt]}, group, fmt),
                           at=group)
