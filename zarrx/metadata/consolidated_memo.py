"""The consolidated documents (a v2 ``.zmetadata``, a v3 group's ``zarr.json`` carrying
``consolidated_metadata``) this process last read or wrote, each kept with its parse, the
order of its entries and the JSON text of each entry, so that keeping one in step
(:func:`~zarrx.metadata.consolidated_edit.edit_consolidated`) costs little beyond moving its
bytes: an edit whose read finds the bytes this process last read or wrote there (compared
byte for byte, so exact whatever a store's generations are made of) parses nothing, puts new
entries in their place by bisection and writes the document by joining the entries' kept texts
around the new ones. The bytes written are those :func:`~zarrx.metadata.json.dumps` writes
for the edited document. Reading the document back (a group reopening its consolidated
metadata after a change) takes the parse kept here instead of parsing the bytes again
(:func:`parsed`).

What is kept is a cache of a pure function of the bytes (never of a generation), so a
document another writer changed is simply parsed again; nothing kept is ever changed in
place (an edit builds new top levels around the entries it kept). Kept per store object
(dropped with it: a weak reference) and per key, at most :data:`_KEYS` documents and
:data:`_BYTES` bytes of documents per store, each held with its parse and text (a few times
its size).
"""
from __future__ import annotations

import weakref
from bisect import bisect_left, insort
from collections.abc import Callable
from typing import Any

from zarrx.metadata._util import Loc
from zarrx.metadata.consolidated import PENDING, entry_order, zmetadata_nodes
from zarrx.metadata.json import (INDENT_MAX_VALUES, _count, _quote, _shallow, dumps, gc_paused,
                                 load, max_document_bytes)
from zarrx.metadata.v3 import consolidated_parts

__all__ = ["Remembered", "recall", "remember", "parsed", "for_check"]

_KEYS = 16                  # documents kept per store (all forgotten past it)
_BYTES = 64 << 20           # their bytes kept per store (the others forgotten past it)
#: the indent level of the ``metadata`` object of the consolidated document of each format
#: (v3: zarr.json > consolidated_metadata > metadata; v2: .zmetadata > metadata)
_LEVEL = {3: 2, 2: 1}
#: at most this many entries added or removed by one edit are put in place by bisection;
#: more are sorted with the others
_BISECT_MOST = 64
# a text no document holds twice: what the entries' text replaces in the text of the rest
_MARK = "\x00zarrx: the consolidated entries go here\x00"
_MARK_TEXT = _quote(_MARK)
_NOT_CONSOLIDATED = object()

Parts = tuple[dict[str, Any], list[str]]


class Remembered:
    """A consolidated document: its bytes ``raw`` and their parse ``doc`` (never changed),
    with what edits of it need, each worked out when first asked for: its entries and pending
    paths (:meth:`parts`), its entry keys in :func:`~zarrx.metadata.consolidated.entry_order`
    and the JSON text of each entry as :func:`~zarrx.metadata.json.dumps` writes it in a large
    document. What is written is never made from values a reader was handed (``shown``: the
    parse was, by :func:`parsed`; a caller may change the attributes of a node it opened in
    place), only from a parse of the bytes of its own, or from text made before."""

    __slots__ = ("raw", "doc", "shown", "_parts", "_order", "_texts")

    def __init__(self, raw: bytes, doc: dict[str, Any], parts: Any = None,
                 order: list[str] | None = None, texts: dict[str, str] | None = None,
                 shown: bool = False) -> None:
        self.raw = raw
        self.doc = doc
        self.shown = shown
        self._parts = parts
        self._order = order
        self._texts = texts

    def parts(self, zarr_format: int, key: str) -> Parts | None:
        """The entries of the document as stored (by node path: v3 its ``metadata`` object,
        v2 each node's documents by name) and its pending paths, the layout checked (a
        MetadataError when it is wrong); None for a ``zarr.json`` without consolidated
        metadata."""
        parts = self._parts
        if parts is None:
            if zarr_format == 3:
                parts = consolidated_parts(self.doc, Loc(key)) \
                    if self.doc.get("node_type") == "group" else None
            else:
                parts = zmetadata_nodes(self.doc, key)
            self._parts = parts = _NOT_CONSOLIDATED if parts is None else parts
        return None if parts is _NOT_CONSOLIDATED else parts

    def _own(self) -> dict[str, Any]:
        """The parse of the document no reader was handed: ``doc``, or a parse of ``raw``."""
        return load(self.raw, "consolidated metadata") if self.shown else self.doc

    def _sorted(self, zarr_format: int) -> list[str]:
        order = self._order
        if order is None:
            order = self._order = sorted(_entries(self.doc, zarr_format),
                                         key=_order_key(zarr_format))
        return order

    def _entry_texts(self, zarr_format: int) -> dict[str, str]:
        texts = self._texts
        if texts is None:
            level = _LEVEL[zarr_format]
            texts = self._texts = {k: _item_text(k, v, level)
                                   for k, v in _entries(self._own(), zarr_format).items()}
        return texts

    def replaced(self, zarr_format: int, gone: set[str], new: dict[str, Any],
                 pending: set[str]) -> Remembered:
        """The document with the entries at the keys of ``gone`` removed and those of ``new``
        (JSON values, checked as :func:`~zarrx.metadata.json.checked` checks them) put in,
        all in :func:`~zarrx.metadata.consolidated.entry_order`, and ``pending`` as its
        pending paths: its parse and the bytes :func:`~zarrx.metadata.json.dumps` writes for
        it (``raw``). The new entries are kept as a parse of their text gives them."""
        new = {k: load(dumps(v, checked=True), k) for k, v in new.items()}
        old = _entries(self.doc, zarr_format)
        removed = [k for k in gone if k in old and k not in new]
        added = [k for k in new if k not in old]
        order = self._sorted(zarr_format)
        if removed or added:
            order = _reordered(order, removed, added, _order_key(zarr_format))
        out = _with(self.doc, zarr_format, order, new, pending)
        entries = _entries(out, zarr_format)
        # dumps' shallow form (each entry is a value at least: not counted when that is enough)
        if len(entries) <= INDENT_MAX_VALUES and \
                _count(out, INDENT_MAX_VALUES + 1) <= INDENT_MAX_VALUES:
            if self.shown:          # a small document, written whole: from a parse of its own
                out = _with(self._own(), zarr_format, order, new, pending)
            v3_parts = (_entries(out, 3), list(out["consolidated_metadata"].get(PENDING, ()))
                        ) if zarr_format == 3 else None
            return Remembered(dumps(out, checked=True), out, v3_parts, order)
        texts = self._entry_texts(zarr_format)
        if new or removed:
            texts = dict(texts)
            for k in removed:
                del texts[k]
            level = _LEVEL[zarr_format]
            texts.update((k, _item_text(k, v, level)) for k, v in new.items())
        raw = _spliced(out, zarr_format, [texts[k] for k in order]) or dumps(out, checked=True)
        holder = out["consolidated_metadata"] if zarr_format == 3 else out
        pending_list = list(holder.get(PENDING, ()))
        if zarr_format == 3:
            parts = (entries, pending_list)
        else:       # each node's documents: those of the nodes the edit changed made anew
            nodes = dict(self.parts(2, "")[0])          # (parsed before the edit)
            for k in gone | new.keys():
                nodes.pop(k.rpartition("/")[0], None)
            for k, v in new.items():
                path, _, name = k.rpartition("/")
                nodes.setdefault(path, {})[name] = v
            parts = (nodes, pending_list)
        # the entries kept are those of ``doc``: shown, when it was
        return Remembered(raw, out, parts, order, texts, self.shown)


def _entries(doc: dict[str, Any], zarr_format: int) -> dict[str, Any]:
    """The ``metadata`` object of the consolidated document ``doc``."""
    return (doc["consolidated_metadata"] if zarr_format == 3 else doc)["metadata"]


def _with(doc: dict[str, Any], zarr_format: int, order: list[str], new: dict[str, Any],
          pending: set[str]) -> dict[str, Any]:
    """``doc`` (not changed) with the entries at the keys of ``order``, in that order, those
    of ``new`` from there and the others from ``doc``, and the ``pending`` paths."""
    old = _entries(doc, zarr_format)
    if new or len(old) != len(order) or list(old) != order:
        entries = {k: new[k] if k in new else old[k] for k in order}
    else:
        entries = old
    out = dict(doc)
    holder = out
    if zarr_format == 3:
        holder = out["consolidated_metadata"] = dict(out["consolidated_metadata"])
    holder["metadata"] = entries
    if pending:
        holder[PENDING] = sorted(pending)
    else:
        holder.pop(PENDING, None)
    return out


def _order_key(zarr_format: int) -> Callable[[str], tuple]:
    return lambda k: entry_order(k, zarr_format)


def _reordered(order: list[str], removed: list[str], added: list[str],
               key: Callable[[str], tuple]) -> list[str]:
    """``order`` (sorted by ``key``, which tells any two keys apart) without ``removed`` and
    with ``added``, sorted by ``key``."""
    if len(removed) + len(added) > _BISECT_MOST:
        gone = set(removed)
        return sorted([k for k in order if k not in gone] + added, key=key)
    order = list(order)
    for k in removed:
        del order[bisect_left(order, key(k), key=key)]
    for k in added:
        insort(order, k, key=key)
    return order


def _item_text(name: str, value: Any, level: int) -> str:
    """The text of the item ``name: value`` of an object at ``level`` as the shallow form of
    :func:`~zarrx.metadata.json.dumps` writes it (the object's items are joined with commas)."""
    return ("\n" + "  " * (level + 1) + _quote(name) + ": "
            + (str(value) if type(value) is int else _shallow(value, level + 1)))


def _spliced(doc: dict[str, Any], zarr_format: int, items: list[str]) -> bytes | None:
    """What :func:`~zarrx.metadata.json.dumps` writes for ``doc``, a document of more than
    its :data:`~zarrx.metadata.json.INDENT_MAX_VALUES` values, whose ``metadata`` object's
    items have the texts ``items``: the rest of the document written around them. None when
    the text would be larger than a reader takes (``dumps`` then writes it without spaces)."""
    level = _LEVEL[zarr_format]
    shell = dict(doc)
    if zarr_format == 3:
        shell["consolidated_metadata"] = {**doc["consolidated_metadata"], "metadata": _MARK}
    else:
        shell["metadata"] = _MARK
    rest = _shallow(shell, 0)
    if rest.count(_MARK_TEXT) != 1:     # the document holds that text itself
        return None
    body = "{" + ",".join(items) + "\n" + "  " * level + "}" if items else "{}"
    text = rest.replace(_MARK_TEXT, body)
    if len(text) > max_document_bytes():
        return None
    return text.encode("ascii")


#: per store object, by its id: a weak reference to it, and key -> the document kept there
_MEMO: dict[int, tuple[weakref.ref, dict[str, Remembered]]] = {}


def _kept(store: Any, make: bool) -> dict[str, Remembered] | None:
    """The documents kept for ``store`` (made when ``make``; None for a store that cannot be
    referenced weakly)."""
    at = id(store)
    found = _MEMO.get(at)
    if found is not None and found[0]() is store:
        return found[1]
    if not make:
        return None

    def forget(ref: weakref.ref, at: int = at) -> None:
        if _MEMO.get(at, (None,))[0] is ref:
            _MEMO.pop(at, None)
    try:
        ref = weakref.ref(store, forget)
    except TypeError:
        return None
    kept: dict[str, Remembered] = {}
    _MEMO[at] = (ref, kept)
    return kept


def parsed(store: Any, key: str, raw: Any) -> dict[str, Any] | None:
    """The parse of the document ``raw`` read at ``key`` of ``store`` when it is one kept
    (never to be changed), else None."""
    kept = _kept(store, False)
    if kept is None:
        return None
    hit = kept.get(key)
    if hit is None or not _same(hit.raw, raw):
        return None
    hit.shown = True
    return hit.doc


def for_check(store: Any, key: str, raw: Any) -> dict[str, Any]:
    """The parse of the document ``raw`` read at ``key`` of ``store`` (checked by
    :func:`~zarrx.metadata.json.json_document`), for a check that hands nothing made from it
    to a caller (the nodes above a node being created): the one kept when its bytes are
    those, else parsed, and kept (not shown) when it holds consolidated metadata, so that the
    edit keeping that document in step which follows takes this parse instead of parsing the
    bytes again."""
    kept = _kept(store, False)
    hit = None if kept is None else kept.get(key)
    if hit is not None and _same(hit.raw, raw):
        return hit.doc
    data = raw if type(raw) is bytes else bytes(raw)
    with gc_paused():
        doc = load(data, key)
    holder = doc.get("consolidated_metadata") if key.endswith("zarr.json") else doc
    if type(holder) is dict and type(holder.get("metadata")) is dict:
        remember(store, key, Remembered(data, doc))
    return doc


def _same(kept: bytes, raw: Any) -> bool:
    """Whether the bytes ``raw`` (bytes, or a buffer of them) are ``kept``."""
    if type(raw) is bytes:
        return kept == raw
    if not isinstance(raw, (bytearray, memoryview)):
        return False
    # (a copy compared as bytes: a memoryview compares item by item)
    return len(kept) == memoryview(raw).nbytes and kept == bytes(raw)


def recall(store: Any, key: str, raw: Any) -> Remembered:
    """The document ``raw`` (bytes read at ``key``, checked by
    :func:`~zarrx.metadata.json.json_document`): the one kept when its bytes are those, else
    parsed (:func:`~zarrx.metadata.json.load`) and kept."""
    data = raw if type(raw) is bytes else bytes(raw)
    kept = _kept(store, False)
    hit = None if kept is None else kept.get(key)
    if hit is not None and hit.raw == data:
        return hit
    found = Remembered(data, load(data, key))
    remember(store, key, found)
    return found


def remember(store: Any, key: str, doc: Remembered) -> None:
    """Keep ``doc``, now at ``key`` of ``store``."""
    kept = _kept(store, True)
    if kept is None or len(doc.raw) > _BYTES:
        return
    kept.pop(key, None)
    if len(kept) >= _KEYS or sum(len(d.raw) for d in list(kept.values())) + len(doc.raw) > _BYTES:
        kept.clear()
    kept[key] = doc
