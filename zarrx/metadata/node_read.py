"""Reading node metadata documents from a store (with :mod:`zarrx.metadata.nodes`, which
writes them, and ``api``, the only place that knows which Zarr version a node is stored in).

* ``load_node`` reads every candidate document of a node in one batched ``get_many`` (on a
  store whose requests are local work, ``zarr.json`` first); a group's consolidated entries
  that are pending (see :mod:`zarrx.metadata.nodes`) are taken from the nodes' own documents;
  ``load_nodes`` does the same for several nodes at once (a new node and the nodes above it),
  still in one batch, and parses each as ``load_node`` does;
* ``broken_document`` names the document that makes ``load_node`` fail;
* ``list_children`` / ``walk`` enumerate a hierarchy.
"""
from __future__ import annotations

import dataclasses
import warnings
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, MutableMapping
from typing import Any

from zarrx.errors import ZarrError, ZarrUserWarning
from zarrx.metadata import parse_array_v2, parse_group_v2
from zarrx.metadata.v3 import read_v3
from zarrx.metadata.consolidated import read_zmetadata
from zarrx.metadata.consolidated_memo import for_check, parsed as remembered_parse
from zarrx.metadata.consolidated_edit import (V3_KEY, ZMETADATA, may_be_consolidated,
                                              without_consolidated as _without_consolidated)
from zarrx.metadata.json import Loaded, document_range, json_document, load as load_json, \
    refuse_oversized
from zarrx.metadata.model import ArrayMeta, GroupMeta
from zarrx.metadata.parse_cache import cached_parse as _cached_parse
from zarrx.store.base import ByteRange, Store

__all__ = ["join", "usable_child", "load_node", "load_nodes", "NodeBatch", "broken_document", "list_children",
           "walk", "V3_KEY", "V2_KEYS", "DOCUMENT_NAMES", "Meta", "walked_entries",
           "groups_above"]


Meta = ArrayMeta | GroupMeta
V2_KEYS = (".zarray", ".zgroup", ".zattrs")
#: the names of metadata documents: no node may be named so (its documents would be keys
#: below its parent's document, a file where a directory is needed on a local store)
DOCUMENT_NAMES = frozenset(V2_KEYS + (ZMETADATA, V3_KEY))


def join(path: str, name: str) -> str:
    return f"{path}/{name}" if path else name


def load_node(store: Store, path: str, zarr_format: int | None = None, *,
              consolidated: bool | None = None) -> Meta | None:
    """The metadata of the node at ``path``, or None when there is none. v3 wins over v2.
    ``consolidated``: whether a v2 group's ``.zmetadata`` is read (default: at the store root
    only; opening a group by its path reads it there too, as zarr-python does); a v3 group's
    inline consolidated metadata is part of its ``zarr.json``.

    A store whose requests wait on a network gets every candidate document in one batch; one
    whose requests are local work (``latency_bound`` False) is asked for ``zarr.json`` first
    and for the v2 documents only when there is none (see :func:`load_nodes`)."""
    if zarr_format is None and not store.latency_bound:     # (the common case, kept short)
        refuse_oversized(store, [join(path, V3_KEY)])
        doc = store.get(join(path, V3_KEY), document_range())
        if doc is not None:
            return _v3_node(store, path, doc)
        zarr_format = 2
    return load_nodes(store, [path], zarr_format, consolidated=consolidated)[path]


def load_nodes(store: Store, paths: Iterable[str], zarr_format: int | None = None, *,
               consolidated: bool | None = None, consolidated_at: Iterable[str] = (),
               raw: Iterable[tuple[str, ByteRange]] = ()) -> NodeBatch:
    """The metadata of the nodes at ``paths`` (a node's and its parents', say), their
    documents read together: on a store whose requests wait on a network, every candidate
    document of every path in one ``get_many``; on one whose requests are local work, the
    ``zarr.json`` of each path first, then the v2 documents of the paths without one (one
    request each, batched). ``batch[path]`` is what :func:`load_node` gives for that path
    (``consolidated`` and ``zarr_format`` as there); each path's documents are parsed when
    it is first asked for, so a broken document raises where a caller looks, as it would
    with one :func:`load_node` per node. ``consolidated_at``: paths whose v2 ``.zmetadata``
    is read too (see :meth:`NodeBatch.node`); ``raw``: other ``(key, byte range)`` read in
    the same batch, unparsed (see :meth:`NodeBatch.documents`)."""
    paths = list(dict.fromkeys(paths))
    also = set(consolidated_at)
    docs: dict[str, dict[str, Any]] = {p: {} for p in paths}
    first = paths
    rng = document_range()      # up to one byte past the largest document the parser takes
    if zarr_format is None and not store.latency_bound:
        keys = [join(p, V3_KEY) for p in paths]
        refuse_oversized(store, keys)
        got = [store.get(keys[0], rng)] if len(keys) == 1 else \
            store.get_many([(k, rng) for k in keys])
        first = []
        for p, doc in zip(paths, got):
            if doc is not None:
                docs[p][V3_KEY] = doc
            else:
                first.append(p)
        zarr_format = 2
    wanted = [(p, n) for p in first
              for n in _names(p, zarr_format, True if p in also else consolidated)]
    extra = list(raw)
    got_raw: dict[str, Any] = {}
    if wanted or extra:
        refuse_oversized(store, [join(p, n) for p, n in wanted])
        got = store.get_many([(join(p, n), rng) for p, n in wanted] + extra)
        for (p, n), doc in zip(wanted, got):
            docs[p][n] = doc
        got_raw = {k: doc for (k, _), doc in zip(extra, got[len(wanted):])}
    return NodeBatch(store, docs, got_raw)


def _names(path: str, zarr_format: int | None, consolidated: bool | None) -> list[str]:
    """The documents of ``zarr_format`` (None: both) that may describe the node at ``path``:
    ``.zmetadata`` only where ``consolidated`` asks for it (default: at the store root)."""
    names: list[str] = []
    if zarr_format in (None, 3):
        names.append(V3_KEY)
    if zarr_format in (None, 2):
        names += V2_KEYS
        if consolidated or (consolidated is None and not path):
            names.append(ZMETADATA)
    return names


class NodeBatch:
    """The documents :func:`load_nodes` read; ``batch[path]`` the metadata of the node at
    ``path`` (one of the paths read), parsed on first use and kept."""

    __slots__ = ("_store", "_docs", "_metas", "_raw", "_checked")

    def __init__(self, store: Store, docs: dict[str, dict[str, Any]],
                 raw: dict[str, Any] | None = None) -> None:
        self._store = store
        self._docs = docs
        self._raw = raw or {}
        self._metas: dict[str, Meta | None] = {}
        self._checked: dict[str, Meta | None] = {}

    def __contains__(self, path: str) -> bool:
        return path in self._docs

    def __getitem__(self, path: str) -> Meta | None:
        if path in self._metas:
            return self._metas[path]
        meta = _parse_node(self._store, path, self._docs[path])
        self._metas[path] = meta
        return meta

    def checked(self, path: str) -> Meta | None:
        """``batch[path]`` for a check that hands the metadata to no caller (the nodes above a
        node being created): a consolidated document is parsed once for the check and the
        edit keeping it in step that follows (see
        :func:`~zarrx.metadata.consolidated_memo.for_check`)."""
        if path in self._checked:
            return self._checked[path]
        meta = self._checked[path] = _parse_node(self._store, path, self._docs[path], True)
        return meta

    def documents(self) -> dict[str, Any]:
        """Every document the batch read, by key (None when there was none); the ``raw``
        keys as read (a byte range of them)."""
        return {**{join(p, n): doc for p, docs in self._docs.items() for n, doc in docs.items()},
                **self._raw}

    def node(self, path: str, zarr_format: int | None = None,
             consolidated: bool | None = None) -> Meta | None:
        """What :func:`load_node` gives for ``path`` with these arguments, parsed from the
        documents of the batch it reads (read alone when the batch lacks one of them)."""
        names = _names(path, zarr_format, consolidated)
        docs = self._docs.get(path, {})
        if any(n not in docs for n in names):
            return load_node(self._store, path, zarr_format, consolidated=consolidated)
        return _parse_node(self._store, path, {n: docs[n] for n in names})


def _parse_node(store: Store, path: str, docs: dict[str, Any], check: bool = False
                ) -> Meta | None:
    """The node the documents ``docs`` (name -> bytes or None) read at ``path`` describe, or
    None: ``zarr.json`` when there is one; else each v2 document read must be JSON, and a
    ``.zarray`` (with ``.zattrs``) is an array, a ``.zgroup`` a group (with its
    ``.zmetadata`` entries when that was read). ``check``: see :meth:`NodeBatch.checked`."""
    if docs.get(V3_KEY) is not None:
        return _v3_node(store, path, docs[V3_KEY], check)
    for name, doc in docs.items():
        if doc is not None and name != V3_KEY:
            json_document(store, join(path, name), doc)
    zattrs = docs.get(".zattrs")
    if docs.get(".zarray") is not None:
        return _cached_parse(parse_array_v2, docs[".zarray"], zattrs, join(path, ".zarray"))
    if docs.get(".zgroup") is not None:
        meta = parse_group_v2(docs[".zgroup"], zattrs, join(path, ".zgroup"))
        if docs.get(ZMETADATA) is not None:
            key = join(path, ZMETADATA)
            zmetadata = json_document(store, key, docs[ZMETADATA])
            kept = remembered_parse(store, key, zmetadata)     # (as for a zarr.json)
            if kept is None and check:
                kept = for_check(store, key, zmetadata)
            entries, pending = read_zmetadata(zmetadata if kept is None else Loaded(kept), key)
            if pending:
                entries = _settled(store, entries, pending, 2, path)
            entries.pop("", None)               # the group itself: ``meta``
            meta = dataclasses.replace(meta, consolidated=entries)
        return meta
    return None


def broken_document(store: Store, path: str) -> str:
    """The key of the document that makes :func:`load_node` fail for the node at ``path``:
    ``zarr.json`` when there is one; else the first of ``.zarray`` / ``.zgroup`` (parsed
    without its attributes), ``.zattrs`` and (the root's) ``.zmetadata`` that does not parse."""
    rng = document_range()
    if store.exists(join(path, V3_KEY)):
        return join(path, V3_KEY)
    zattrs = join(path, ".zattrs")
    checks: list[tuple[str, Callable[[Any, str], Any]]] = [
        (join(path, ".zarray"), lambda doc, key: parse_array_v2(doc, None, key)),
        (join(path, ".zgroup"), lambda doc, key: parse_group_v2(doc, None, key)),
        (zattrs, load_json),
    ]
    if not path:
        checks.append((ZMETADATA, read_zmetadata))     # as load_node reads it
    for key, parse in checks:
        try:
            refuse_oversized(store, [key])
        except ZarrError:
            return key
        doc = store.get(key, rng)
        if doc is None:
            continue
        try:
            parse(doc, key)
        except ZarrError:
            return key
    return zattrs


def _v3_node(store: Store, path: str, doc: Any, check: bool = False) -> Meta:
    """The node a ``zarr.json`` read at ``path`` describes; a group's consolidated entries
    with the pending nodes settled (see :func:`_settled`). ``check`` (see
    :meth:`NodeBatch.checked`): a consolidated document not kept is parsed and kept for the
    edit that follows, the metadata made from that parse cached nowhere (it is nobody's)."""
    key = join(path, V3_KEY)
    doc = json_document(store, key, doc)
    # a consolidated document this process just wrote or read: its parse kept, not parsed again
    loaded = remembered_parse(store, key, doc)
    if loaded is None and check and isinstance(doc, (bytes, bytearray, memoryview)) and \
            may_be_consolidated(3, doc):
        meta = read_v3(Loaded(for_check(store, key, doc)), key)     # parsed for the edit too
    else:
        meta = _cached_parse(read_v3, doc, key, loaded=loaded)
    if type(meta) is GroupMeta and meta.consolidated_pending:
        entries = _settled(store, (meta.consolidated or {}).copy(), meta.consolidated_pending,
                           3, path)
        meta = dataclasses.replace(meta, consolidated=entries, consolidated_pending=())
    return meta


def _settled(store: Store, entries: MutableMapping[str, Meta], pending: Iterable[str],
             zarr_format: int, at: str = "") -> MutableMapping[str, Meta]:
    """``entries`` (paths relative to the group at ``at``; changed in place) with the pending
    nodes (and subtrees) taken from their own documents. Each pending path is read once, and
    none inside a pending subtree (whose walk reads it anyway): a document repeating pending
    paths, or listing every level of a deep subtree, costs one walk of each outermost
    subtree, not one per path listed."""
    tops = _outermost(pending)
    metas = {p: load_node(store, join(at, p.rstrip("/")), zarr_format, consolidated=False)
             for p in tops}
    keys = sorted(entries)              # the entries of each subtree dropped: a sorted run
    for p, meta in metas.items():
        base = p.rstrip("/")
        if meta is None or p.endswith("/"):
            entries.pop(base, None)
            lo = bisect_left(keys, base + "/")
            for k in keys[lo:bisect_left(keys, base + _PAST_SLASH, lo)]:
                entries.pop(k, None)
    for p, meta in metas.items():
        base = p.rstrip("/")
        if meta is not None:
            entries[base] = _without_consolidated(meta)
            if p.endswith("/"):
                entries.update(walked_entries(store, join(at, base), base, zarr_format))
    return entries


#: the character right after "/": paths ``p + "/" + ...`` all sort before ``p + _PAST_SLASH``
_PAST_SLASH = chr(ord("/") + 1)


def _outermost(pending: Iterable[str]) -> list[str]:
    """The pending paths (``p``: a node, ``p/``: a subtree) once each, sorted, without those a
    pending subtree covers (the paths below it, and its own node); the group itself (``""``,
    ``"/"``) left out: it is read from its own documents anyway."""
    marks = sorted({(p.rstrip("/") + "/", not p.endswith("/")) for p in pending
                    if p.rstrip("/")})
    out: list[str] = []
    top = None
    for key, node in marks:       # the paths below a subtree follow it, in one sorted run
        if top is not None and key.startswith(top):
            continue
        out.append(key[:-1] if node else key)
        if not node:
            top = key
    return out


def walked_entries(store: Store, path: str, rel: str, zarr_format: int
                   ) -> Iterator[tuple[str, Meta]]:
    """The consolidated entries of the nodes of ``zarr_format`` below ``path``, keyed
    ``rel/...``."""
    return ((join(rel, sub), _without_consolidated(m))
            for sub, m in walk(store, path, zarr_format))


def list_children(store: Store, path: str, zarr_format: int | None = None
                  ) -> list[tuple[str, Meta]]:
    """``(name, meta)`` of each child node of the group at ``path``, sorted by name; one batched
    read for all candidate documents. With ``zarr_format`` (the group's), only children of that
    format: a v3 group's children have a ``zarr.json``, a v2 group's a ``.zarray`` or
    ``.zgroup``, as zarr-python lists them."""
    _, dirs = store.list_dir(f"{path}/" if path else "")
    # a key with an empty, "." or ".." segment (a store that does not refuse them: an object
    # store's "a//zarr.json", a mapping's "/x") names no child: "" would be the group itself,
    # and walking it again would never end
    dirs = [d for d in dirs if d not in ("", ".", "..") and usable_child(store, join(path, d))]
    if not dirs:
        return []
    names = [V3_KEY] if zarr_format == 3 else list(V2_KEYS) if zarr_format == 2 \
        else [V3_KEY, *V2_KEYS]
    rng = document_range()      # up to one byte past the largest document the parser takes
    reqs = [(join(join(path, d), n), rng) for d in dirs for n in names]
    refuse_oversized(store, [k for k, _ in reqs])
    vals = store.get_many(reqs)
    out = []
    for i, d in enumerate(dirs):
        docs = dict(zip(names, vals[i * len(names):(i + 1) * len(names)]))
        child = join(path, d)
        for n, doc in docs.items():
            if doc is not None:
                json_document(store, join(child, n), doc)
        if docs.get(V3_KEY) is not None:
            out.append((d, read_v3(docs[V3_KEY], join(child, V3_KEY))))
        elif docs.get(".zarray") is not None:
            out.append((d, parse_array_v2(docs[".zarray"], docs[".zattrs"], join(child, ".zarray"))))
        elif docs.get(".zgroup") is not None:
            out.append((d, parse_group_v2(docs[".zgroup"], docs[".zattrs"], join(child, ".zgroup"))))
    return out


def usable_child(store: Store, child: str) -> bool:
    """Whether ``store`` takes the key of the child ``child`` a listing gave; one it refuses
    (named by another tool against the store's key rules: a control character in a local
    folder's name, ...) is left out with a warning, so that its siblings are still listed."""
    problem = store.key_problem(child)
    if problem is None:
        return True
    warnings.warn(f"{store!r}: skipping the child {child!r}: {problem}", ZarrUserWarning,
                  stacklevel=4)
    return False


def walk(store: Store, path: str, zarr_format: int | None = None
         ) -> Iterator[tuple[str, Meta]]:
    """Every node below ``path`` as ``(path relative to it, meta)``, parents before children
    (with ``zarr_format``, only the nodes of that format, see :func:`list_children`). Depth
    first with a stack of its own, so that a hierarchy of any depth is walked."""
    stack = [("", iter(list_children(store, path, zarr_format)))]
    while stack:
        rel, children = stack[-1]
        for name, meta in children:
            sub = f"{rel}/{name}" if rel else name
            yield sub, meta
            if isinstance(meta, GroupMeta):
                stack.append((sub, iter(list_children(store, join(path, sub), zarr_format))))
                break
        else:
            stack.pop()


def groups_above(docs: list[str], top: str) -> set[str]:
    """The paths from ``top`` down to the parent of each document's node (``top`` or a node
    below it). Each path is reached once, walking up until a path already found, so a chain
    of ``n`` nested groups costs ``n`` steps, not ``n**2`` joined paths."""
    found: set[str] = set()
    for doc in docs:
        node = doc.rpartition("/")[0]
        while node != top:
            node = node.rpartition("/")[0]
            if node in found:
                break
            found.add(node)
    return found
