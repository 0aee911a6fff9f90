"""Parsed metadata documents remembered by their bytes: reopening a node whose documents have
not changed skips the parse. The cache is bounded (``_CACHE_SIZE`` documents, none larger than
``_CACHE_MAX_DOC`` or than the parser takes now, and ``_CACHE_BYTES`` of memory: the documents'
bytes and an estimate of what their parse holds, :func:`_held`) and hands out attributes as
copies.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from zarrx import _fork
from zarrx.metadata._jsonscan import footprint
from zarrx.metadata.frozen import thaw_json
from zarrx.metadata.json import Loaded, max_document_bytes
from zarrx.metadata.model import ArrayMeta, GroupMeta, own_data_type, with_attributes

__all__ = ["cached_parse", "handed_attributes", "for_handle"]

Meta = ArrayMeta | GroupMeta

_CACHE_SIZE = 256                # parsed documents remembered
_CACHE_MAX_DOC = 16 << 20        # the largest document remembered (consolidated metadata)
_CACHE_BYTES = 64 << 20          # the memory the cache holds at most (estimated)
_NODE_BYTES = 4096               # the parsed model of a node (codecs, layout), beyond its JSON
_LOADED_HELD = 8                 # what loaded JSON holds, per byte of the document (at most)
_parsed: OrderedDict[tuple, tuple[Meta, int]] = OrderedDict()
_parsed_bytes = 0
_parsed_lock = threading.Lock()


@_fork.at_fork
def _after_fork() -> None:
    """A child forked while another thread changed the cache starts with it empty."""
    global _parsed_bytes
    if _fork.reinit(_parsed_lock):
        _parsed.clear()
        _parsed_bytes = 0


def cached_parse(parse: Callable[..., Meta], *docs: Any, loaded: dict[str, Any] | None = None
                 ) -> Meta:
    """``parse(*docs)``, remembered by the documents' bytes: reopening a node whose metadata
    has not changed skips the parse. The cache keeps the result as parsed, and every result
    handed out (the first one too) is that one with a new copy of its attributes, so no change
    a caller makes to the attributes it was handed reaches another. ``loaded``: the JSON of
    the first document, loaded (:func:`~zarrx.metadata.json.load`) from these very bytes
    before and kept by the caller (never to be changed): parsed instead of them (what the
    result holds then estimated from the bytes, not walked)."""
    global _parsed_bytes
    raw = docs[:-1]            # the last argument is the document key, for messages
    # a document larger than the parser takes now (max_metadata_bytes lowered since it was
    # remembered) is parsed, to be refused
    most = min(_CACHE_MAX_DOC, max_document_bytes())
    if loaded is not None and len(docs[0]) <= max_document_bytes():
        docs = (Loaded(loaded), *docs[1:])
    else:
        loaded = None
    if not all(d is None or (type(d) is bytes and len(d) <= most) for d in raw):
        return _handed_out(parse(*docs)) if loaded is not None else parse(*docs)
    ck = (parse, *raw)
    with _parsed_lock:
        hit = _parsed.get(ck)
        if hit is not None:
            _parsed.move_to_end(ck)
    if hit is None:
        meta = parse(*docs)
        # what a parse of loaded JSON holds is estimated from the bytes, not walked
        size = sum(len(d) for d in raw if d is not None) + (
            _held(meta) if loaded is None else _LOADED_HELD * len(raw[0]) + _nodes_held(meta))
        with _parsed_lock:
            if ck not in _parsed and size <= _CACHE_BYTES:
                _parsed[ck] = (meta, size)
                _parsed_bytes += size
            while len(_parsed) > _CACHE_SIZE or _parsed_bytes > _CACHE_BYTES:
                _parsed_bytes -= _parsed.popitem(last=False)[1][1]
    else:
        meta = hit[0]
    return _handed_out(meta)


def _handed_out(meta: Meta) -> Meta:
    """``meta`` as every caller, the first one too, gets it: the cache's own, never changed
    by zarrx (its attributes and a struct's numpy dtype are copied by a handle before it shows
    them, :func:`for_handle`; the rest is read-only, :mod:`zarrx.metadata.frozen`)."""
    return meta


def for_handle(meta: Meta) -> Meta:
    """``meta`` as a new handle holds it when other handles share it: with its own copy of the
    attributes (and its own numpy dtype where numpy lets it be changed in place: a struct
    array's, or one of a struct array a group's consolidated entries hold, made the handle's
    own when looked up, :class:`~zarrx.metadata.lazy_entries.HandleEntries`); the rest is
    read-only (:mod:`zarrx.metadata.frozen`)."""
    meta = with_attributes(meta, thaw_json(meta.attributes) if meta.attributes else {})
    if type(meta) is ArrayMeta:
        return meta if meta.data_type.numpy.names is None else own_data_type(meta)
    if meta.consolidated is not None:
        from zarrx.metadata.lazy_entries import HandleEntries
        object.__setattr__(meta, "consolidated", HandleEntries(meta.consolidated))
    return meta


def handed_attributes(attributes: dict[str, Any]) -> dict[str, Any]:
    """The attributes a new handle holds of shared metadata holding ``attributes``: a deep
    copy (a new empty dict too: the handle may change it)."""
    return thaw_json(attributes) if attributes else {}


def _held(meta: Meta) -> int:
    """An estimate of the memory ``meta`` holds: the JSON it was parsed from and its
    attributes (those of a v3 node hold the values of the JSON's: counted once), and the
    parsed model of it and of each node its consolidated metadata holds."""
    doc = meta._json
    v3 = type(doc) is dict and "attributes" in doc
    size = footprint(doc, "attributes" if v3 else None) + footprint(meta.attributes)
    return size + _nodes_held(meta)


def _nodes_held(meta: Meta) -> int:
    """An estimate of the memory the parsed model of ``meta`` and of each node its
    consolidated metadata holds takes (beyond their JSON)."""
    nodes = 1
    if type(meta) is GroupMeta and meta.consolidated:     # their JSON is part of ``doc``
        nodes += len(meta.consolidated)
    return nodes * _NODE_BYTES
