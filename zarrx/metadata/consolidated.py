"""Consolidated metadata documents.

* v2 ``.zmetadata``: ``{"metadata": {"<path>/.zarray": {...}, "<path>/.zattrs": {...}, ...},
  "zarr_consolidated_format": 1}`` <-> ``{path: ArrayMeta | GroupMeta}`` (the root is path ``""``).
  zarrx may add ``"zarrx_pending": [path, ...]``: nodes whose documents a writer was rewriting
  when this ``.zmetadata`` was written (see ``zarrx.metadata.nodes``); their entries may be stale,
  so readers take those nodes from their own documents (a path ending in ``/`` stands for the
  node and everything below it). Other readers ignore the field.
* v3 inline (a convention, not yet a spec): ``GroupMeta.consolidated`` is read from and written to
  the group's ``consolidated_metadata`` by :mod:`zarrx.metadata.v3`, flat (``{"a": {...},
  "a/b": {...}}``, the paths relative to the group, entries of groups without consolidated
  metadata of their own); :func:`with_consolidated` builds such a group. zarrx may add
  ``"zarrx_pending"`` inside ``consolidated_metadata`` (``GroupMeta.consolidated_pending``),
  meaning what it means in ``.zmetadata``; zarr-python ignores the field there (it refuses
  unknown fields at the top of ``zarr.json``).
* :class:`ConsolidatedIndex` indexes the entries of a hierarchy once (each group's children), and
  :class:`ConsolidatedView` is the entries below one group as a mapping that copies nothing, so
  walking a consolidated hierarchy costs time linear in its size.
"""
from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from zarrx.errors import ContainsArrayAndGroupError
from zarrx.metadata import json as mjson
from zarrx.metadata._util import Loc
from zarrx.metadata.lazy_entries import (ARRAY, GROUP, LazyEntries, entry_is_array,
                                          parsed_entries)
from zarrx.metadata.model import ArrayMeta, GroupMeta
from zarrx.metadata.v2 import parse_array_v2, parse_group_v2, serialize_v2
from zarrx.metadata.v3 import PENDING, check_path, entry_key, path_ok, pending_paths

__all__ = ["parse_zmetadata", "parse_zmetadata_pending", "read_zmetadata", "ZmetadataEntries",
           "zmetadata_nodes",
           "serialize_zmetadata", "node_keys", "entry_order",
           "with_consolidated", "ConsolidatedIndex", "ConsolidatedView", "PENDING"]

_NAMES = (".zarray", ".zgroup", ".zattrs")


def parse_zmetadata(doc: bytes | str | dict, key: str) -> dict[str, ArrayMeta | GroupMeta]:
    """Every node in a ``.zmetadata`` document, by path (``""`` is the root group), each
    parsed: the first malformed entry raises."""
    return parse_zmetadata_pending(doc, key)[0]


def parse_zmetadata_pending(doc: bytes | str | dict, key: str
                            ) -> tuple[dict[str, ArrayMeta | GroupMeta], list[str]]:
    """``parse_zmetadata`` plus the paths listed as pending (whose entries may be stale)."""
    with mjson.gc_paused():
        entries, pending = read_zmetadata(doc, key)
        return parsed_entries(entries), pending


def read_zmetadata(doc: bytes | str | dict | mjson.Loaded, key: str
                   ) -> tuple[ZmetadataEntries, list[str]]:
    """The nodes of a ``.zmetadata`` document as :class:`ZmetadataEntries`, each parsed when
    it is first looked up, and its pending paths. The layout of the document is checked here:
    its keys, its paths, and that each node is an array or a group (not both, not attributes
    alone). The document is loaded (and, a dict, its tree checked) once: its entries are
    handed to the node parsers as :class:`~zarrx.metadata.json.Loaded`, which they take
    without walking them again."""
    with mjson.gc_paused():
        md, kinds, pending = _node_kinds(mjson.load(doc, key), key)
        return ZmetadataEntries(md, kinds, key), pending


class ZmetadataEntries(LazyEntries):
    """The nodes of a ``.zmetadata`` document, each parsed from its ``.zarray`` or ``.zgroup``
    (and ``.zattrs``) on first lookup, with the message an eager parse gave."""

    __slots__ = ("_md", "_key")

    def __init__(self, md: dict[str, Any], kinds: dict[str, int], key: str) -> None:
        super().__init__(kinds)
        self._md = md
        self._key = key

    def _parse(self, path: str) -> ArrayMeta | GroupMeta:
        prefix = f"{path}/" if path else ""
        attrs = self._md.get(prefix + ".zattrs")
        attrs = None if attrs is None else mjson.Loaded(attrs)
        name = prefix + (".zarray" if self._kinds[path] & ARRAY else ".zgroup")
        parse = parse_array_v2 if self._kinds[path] & ARRAY else parse_group_v2
        return parse(mjson.Loaded(self._md[name]), attrs, f'{self._key} metadata["{name}"]')


def zmetadata_nodes(d: dict[str, Any], key: str) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """The documents of a loaded ``.zmetadata`` by node path (``{path: {".zarray": ...}}``,
    not parsed), and its pending paths; the layout of the document checked."""
    md, paths, pending = _node_kinds(d, key)
    nodes: dict[str, dict[str, Any]] = {p: {} for p in paths}
    for name, value in md.items():
        path, _, base = name.rpartition("/")
        nodes[path][base] = value
    return nodes, pending


#: the bit of each document in the kind of a ``.zmetadata`` node (ARRAY, GROUP: lazy_entries')
_BITS = {".zarray": ARRAY, ".zgroup": GROUP, ".zattrs": 4}


def _node_kinds(d: dict[str, Any], key: str) -> tuple[dict[str, Any], dict[str, int], list[str]]:
    """The ``metadata`` object of a loaded ``.zmetadata``, the paths of its nodes (in the
    order of their first key) with the documents each has (:data:`_BITS`; a dict of ints,
    not one dict of documents per node, which took a fifth of the memory of parsing a
    document of 1,000,000 groups) and its pending paths; the layout of the document checked:
    each node is an array or a group, not both, not attributes alone."""
    loc = Loc(key)
    # record_size: the .zmetadata of a kerchunk reference set held in Parquet files (fsspec's
    # LazyReferenceMapper), which has no zarr_consolidated_format
    loc.keys(d, ("metadata",), ("zarr_consolidated_format", PENDING, "record_size"))
    pending = pending_paths(d.get(PENDING, []), loc / PENDING)
    fmt = d.get("zarr_consolidated_format", 1)
    if fmt != 1 or isinstance(fmt, bool):
        raise (loc / "zarr_consolidated_format").error("1", fmt)
    md = (loc / "metadata").obj(d["metadata"])
    kinds: dict[str, int] = {}
    bits = _BITS.get
    for name in md:
        path, _, base = name.rpartition("/")
        bit = bits(base)
        if bit is None:
            raise Loc(key, f'metadata["{name}"]').error(
                "a key ending in .zarray, .zgroup or .zattrs", name)
        had = kinds.get(path)
        if had is None:
            if path and not path_ok(path):
                check_path(path, Loc(key, f'metadata["{name}"]'))
            kinds[path] = bit
        else:
            kinds[path] = had | bit
    if not set(kinds.values()).issubset(_ONE_KIND):
        for path, kind in kinds.items():
            prefix = f"{path}/" if path else ""
            if kind & ARRAY and kind & GROUP:
                raise Loc(key, f'metadata["{prefix}.zgroup"]').fail(
                    "a node cannot be both an array and a group (.zarray is present too)",
                    ContainsArrayAndGroupError)
            if not kind & (ARRAY | GROUP):
                raise Loc(key, f'metadata["{prefix}.zattrs"]').fail(
                    "attributes without a .zarray or .zgroup for the same node")
    return md, kinds, list(pending)


#: the kinds of a well-formed node: an array or a group, with or without attributes
_ONE_KIND = frozenset((ARRAY, GROUP, ARRAY | 4, GROUP | 4))


def node_keys(path: str) -> list[str]:
    """The keys a ``.zmetadata`` document may hold for the node at ``path``."""
    prefix = f"{path.strip('/')}/" if path.strip("/") else ""
    return [prefix + name for name in _NAMES]


def entry_order(key: str, zarr_format: int) -> tuple[Any, ...]:
    """Where the entry ``key`` goes in a consolidated document: by node depth, then by node
    path ignoring case (:func:`~zarrx.metadata.v3.entry_key`; v2: then by document name), as
    zarr-python 3 writes them, and as engine "zarr" then lists a group's arrays. zarr-python
    looks for a group's children only among the neighbouring entries of one depth, so it
    misses some when entries of one group are not together (as when they are appended as
    nodes are created)."""
    if zarr_format == 3:
        return entry_key(key)
    path, _, name = key.rpartition("/")
    return entry_key(path) + (name,)


def serialize_zmetadata(entries: dict[str, ArrayMeta | GroupMeta],
                        pending: list[str] | tuple[str, ...] = ()) -> dict[str, Any]:
    """The ``.zmetadata`` object for ``{path: meta}`` (every node gets a ``.zattrs`` entry, as
    zarr-python writes it), listing ``pending`` paths when there are any."""
    meta_out: dict[str, Any] = {}
    for path in sorted(entries, key=lambda p: entry_key(p.strip("/"))):
        prefix = f"{path.strip('/')}/" if path.strip("/") else ""
        docs = serialize_v2(entries[path])
        for name, doc in docs.items():
            meta_out[prefix + name] = doc
        meta_out.setdefault(prefix + ".zattrs", {})
    out: dict[str, Any] = {"metadata": meta_out, "zarr_consolidated_format": 1}
    if pending:
        out[PENDING] = sorted(set(pending))
    return out


def with_consolidated(group: GroupMeta, entries: dict[str, ArrayMeta | GroupMeta]) -> GroupMeta:
    """``group`` carrying the v3 inline consolidated metadata of its descendants ``entries``
    (paths relative to the group, without the group itself)."""
    return dataclasses.replace(group, consolidated={p: m for p, m in entries.items() if p})


Meta = ArrayMeta | GroupMeta


class ConsolidatedIndex:
    """The consolidated ``entries`` of a hierarchy (paths relative to its root group), with each
    group's children listed once, on first use (O(n log n) for n entries)."""

    __slots__ = ("entries", "_children", "_sorted")

    def __init__(self, entries: Mapping[str, Meta]) -> None:
        self.entries = entries
        self._children: dict[str, list[str]] | None = None
        self._sorted: list[str] | None = None

    def children(self, prefix: str, keep: Callable[[str], bool] | None = None
                 ) -> list[tuple[str, Meta]]:
        """``(name, meta)`` of the direct children of the group at ``prefix``, sorted, each
        entry parsed (with the garbage collector paused, as the document was loaded: many
        objects, none in a cycle); only those whose name ``keep`` takes, when given."""
        join = f"{prefix}/" if prefix else ""
        entries = self.entries
        names = self.names(prefix, keep)
        with mjson.gc_paused():
            return [(n, entries[join + n]) for n in names]

    def kinds(self, prefix: str, keep: Callable[[str], bool] | None = None
              ) -> list[tuple[str, bool]]:
        """``(name, whether an array)`` of the direct children of the group at ``prefix``,
        sorted, parsing none of them (but an entry whose document does not say)."""
        join = f"{prefix}/" if prefix else ""
        entries = self.entries
        return [(n, entry_is_array(entries, join + n)) for n in self.names(prefix, keep)]

    def names(self, prefix: str, keep: Callable[[str], bool] | None = None) -> list[str]:
        """The names of the direct children of the group at ``prefix``, sorted (those
        ``keep`` takes, when given)."""
        if self._children is None:
            kids: dict[str, list[str]] = {}
            for path in self.entries:
                if path:
                    parent, _, name = path.rpartition("/")
                    kids.setdefault(parent, []).append(name)
            for names in kids.values():
                names.sort()
            self._children = kids
        names = self._children.get(prefix, [])
        return names if keep is None else [n for n in names if keep(n)]

    def below(self, prefix: str) -> list[str]:
        """Every path strictly below ``prefix``, sorted (bisected from one sorted list)."""
        if self._sorted is None:
            self._sorted = sorted(p for p in self.entries if p)
        if not prefix:
            return self._sorted
        start = prefix + "/"
        lo = bisect.bisect_left(self._sorted, start)
        hi = bisect.bisect_left(self._sorted, prefix + "0")     # "0" follows "/"
        return self._sorted[lo:hi]

    def view(self, prefix: str) -> ConsolidatedView:
        return ConsolidatedView(self, prefix)


class ConsolidatedView(Mapping):
    """The entries below the group at ``prefix`` of an index, keyed relative to that group:
    what ``GroupMeta.consolidated`` holds for a group opened through a consolidated parent."""

    __slots__ = ("index", "prefix")

    def __init__(self, index: ConsolidatedIndex, prefix: str) -> None:
        self.index = index
        self.prefix = prefix

    def _full(self, key: str) -> str:
        return f"{self.prefix}/{key}" if self.prefix else key

    def __getitem__(self, key: str) -> Meta:
        if not isinstance(key, str) or not key:
            raise KeyError(key)
        return self.index.entries[self._full(key)]

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and bool(key) and self._full(key) in self.index.entries

    def is_array(self, key: str) -> bool:
        """Whether the entry ``key`` is an array's, parsed only when its document does not
        say."""
        if not isinstance(key, str) or not key:
            raise KeyError(key)
        return entry_is_array(self.index.entries, self._full(key))

    def __iter__(self) -> Iterator[str]:
        cut = len(self.prefix) + 1 if self.prefix else 0
        return (p[cut:] for p in self.index.below(self.prefix))

    def __len__(self) -> int:
        return len(self.index.below(self.prefix))

    def __repr__(self) -> str:
        return f"<consolidated entries below {self.prefix or '/'!r}: {len(self)}>"
