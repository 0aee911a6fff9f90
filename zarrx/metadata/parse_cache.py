"""Parsed metadata documents remembered by their bytes: reopening a node whose documents have
not changed skips the parse. The cache is bounded (``_CACHE_SIZE`` documents, ``_CACHE_BYTES``
of their bytes, none larger than ``_CACHE_MAX_DOC``) and hands out attributes as copies.
"""
from __future__ import annotations

import copy
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from zarrx.metadata.model import ArrayMeta, GroupMeta, with_attributes

__all__ = ["cached_parse"]

Meta = ArrayMeta | GroupMeta

_CACHE_SIZE = 256                # parsed documents remembered
_CACHE_MAX_DOC = 16 << 20        # the largest document remembered (consolidated metadata)
_CACHE_BYTES = 64 << 20          # the documents' bytes the cache holds at most
_parsed: OrderedDict[tuple, tuple[tuple[Meta, dict], int]] = OrderedDict()
_parsed_bytes = 0
_parsed_lock = threading.Lock()


def cached_parse(parse: Callable[..., Meta], *docs: Any) -> Meta:
    """``parse(*docs)``, remembered by the documents' bytes: reopening a node whose metadata
    has not changed skips the parse. The cache keeps the first result with a copy of its
    attributes, as parsed: every later result is that one with a new copy of them, so no
    change a caller makes to the attributes it was handed reaches another (the rest of a
    result is never modified)."""
    global _parsed_bytes
    raw = docs[:-1]            # the last argument is the document key, for messages
    if not all(d is None or (type(d) is bytes and len(d) <= _CACHE_MAX_DOC) for d in raw):
        return parse(*docs)
    ck = (parse, *raw)
    with _parsed_lock:
        hit = _parsed.get(ck)
        if hit is not None:
            _parsed.move_to_end(ck)
    if hit is not None:
        meta, attributes = hit[0]
        if attributes or meta.attributes:
            meta = with_attributes(meta, _copied(attributes))
        return meta
    meta = parse(*docs)
    size = sum(len(d) for d in raw if d is not None)
    entry = ((meta, _copied(meta.attributes)), size)
    with _parsed_lock:
        if ck not in _parsed:
            _parsed[ck] = entry
            _parsed_bytes += size
        while len(_parsed) > _CACHE_SIZE or _parsed_bytes > _CACHE_BYTES:
            _parsed_bytes -= _parsed.popitem(last=False)[1][1]
    return meta


def _copied(value: Any) -> Any:
    """A deep copy of ``value``, JSON values (dicts, lists, strings, numbers, booleans, null)
    copied directly, anything else by ``copy.deepcopy``."""
    t = type(value)
    if t is dict:
        return {k: _copied(v) for k, v in value.items()}
    if t is list:
        return [_copied(v) for v in value]
    if t is str or t is int or t is float or t is bool or value is None:
        return value
    return copy.deepcopy(value)
