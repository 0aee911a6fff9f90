"""Strict JSON loading and zarr-python-style dumping of metadata documents.

``load`` bounds a document's size and nesting depth *before* parsing it, rejects duplicate
object keys, invalid UTF-8 and non-object top levels, and turns every failure into a
``MetadataError`` naming the document key. Every check is linear in the document's size: one
pass in C (:mod:`zarrx.metadata._jsonscan`) measures the bracket nesting outside string literals
(an unclosed string runs to the end of the document) and counts the object keys written. A
document is parsed into plain dicts first; only when that fails, or when its objects hold fewer
keys than the text writes (a repeated key), is it parsed again object by object, which words
the error.

Bare ``NaN``, ``Infinity`` and ``-Infinity`` are not strict JSON, but zarr-python and xarray
write them (in attributes and consolidated metadata), so ``load`` reads them anywhere as Python
floats, and ``dumps`` writes non-finite floats the same way, which is what those readers turn
back into floats. Fill values are not affected: the metadata layer spells them as the strings
``"NaN"``, ``"Infinity"``, ``"-Infinity"`` before they reach ``dumps``, as the spec says.

A JSON number past the range of a double (``1e400``) is read as an infinity of the class
:class:`OutOfRange`, a ``float``, so that a fill value can tell it (a number, which the spec
rounds to an infinity) from a bare ``Infinity`` (not a JSON number).
"""
from __future__ import annotations

import gc
import json as _json
import re
import sys
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from zarrx import _fork, config
from zarrx.errors import ArgumentError, ArgumentTypeError, MetadataError, ZarrError
from zarrx.metadata._jsonscan import scan, tree_keys
from zarrx.metadata._util import Loc, not_json, printable, short
from zarrx.store.base import ByteRange, Store

__all__ = ["load", "Loaded", "gc_paused", "dumps", "json_document", "check_tree", "check_attributes",
           "unencodable_text", "max_document_bytes", "document_range", "too_large",
           "MAX_DEPTH", "MAX_DOCUMENT_DEPTH", "OutOfRange"]

MAX_DEPTH = 64                          # nesting of the attributes zarrx writes
# nesting of a document read: a node document's attributes (up to MAX_DEPTH) plus the levels a
# consolidated document wraps node documents in (3 in Zarr v3, 2 in .zmetadata), with room to
# spare for other writers
MAX_DOCUMENT_DEPTH = 2 * MAX_DEPTH


class _Duplicate(Exception):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise _Duplicate(k)
        out[k] = v
    return out


class _NonFinite(Exception):
    pass


def _reject_constant(name: str) -> float:
    raise _NonFinite(name)


# the types of JSON values with nothing inside them (a subclass, such as OutOfRange, is looked at
# one value at a time)
_PLAIN = frozenset((str, int, float, bool, type(None)))


def max_document_bytes() -> int:
    """The largest metadata document read or written, in bytes: the setting
    ``zarrx.config.max_metadata_bytes`` (read at each use), at most ``sys.maxsize - 1`` so that
    one byte past it is still a size."""
    return min(config.get("max_metadata_bytes"), sys.maxsize - 1)   # type: ignore[type-var]


def document_range() -> ByteRange:
    """The byte range a metadata document is read with: up to one byte past the largest the
    parser takes, so that a larger object (a hostile multi-GB file at ``zarr.json``) costs no
    more than that to refuse."""
    return ByteRange.trusted(0, max_document_bytes() + 1)


def refuse_oversized(store: Any, keys: Iterable[str]) -> None:
    """On a store whose ranged reads may cost a whole object while its sizes cost nothing (a
    zip archive inflates an entry whole to check its CRC-32), refuse a document at ``keys``
    larger than the limit before reading any of it; elsewhere a ranged read costs the limit."""
    if not getattr(store, "ranges_read_whole", False):
        return
    keys = list(keys)
    limit = max_document_bytes()
    for key, size in zip(keys, store.getsize_many(keys)):
        if size is not None and size > limit:
            raise too_large(key, size, limit)


def too_large(key: str, size: int | None, limit: int) -> MetadataError:
    """The error refusing the document at ``key`` of ``size`` bytes (None: more than ``limit``,
    the store cannot tell how much)."""
    found = f"{size} bytes" if size is not None else f"more than {limit} bytes"
    return MetadataError(f"{key}: expected a document of at most {limit} bytes, found {found} "
                         f"(the setting zarrx.config max_metadata_bytes, or the environment "
                         f"variable ZARRX_MAX_METADATA_BYTES, raises the limit)")


def _max_values() -> int:
    """As many values as a document load takes can hold (a value and its comma take 2 bytes),
    so that every document read can be written back."""
    return max_document_bytes() // 2 + 1


def check_tree(value: Any, loc: Loc, limit: int = MAX_DEPTH) -> tuple[int, bool]:
    """Depth (at most ``limit`` levels), key types and value types of an already-built
    document (dict input). Returns the number of values in it, and whether any of them is a
    numpy scalar (which :func:`dumps` converts first)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    seen = 0
    most = _max_values()
    converted = False
    while stack:
        node, depth = stack.pop()
        seen += 1
        if seen > most:
            raise loc.found(f"a document of at most {most} JSON values", "more")
        if isinstance(node, dict):
            if depth > limit:
                raise loc.found(f"JSON nested at most {limit} levels deep", "deeper nesting")
            if set(map(type, node)) == {str} and set(map(type, node.values())) <= _PLAIN:
                seen += len(node)           # str keys, plain values: counted, not walked
                continue
            for k, v in node.items():
                if not isinstance(k, str):
                    raise loc.error("JSON object keys that are strings", k)
                stack.append((v, depth + 1))
        elif isinstance(node, (list, tuple)):
            if depth > limit:
                raise loc.found(f"JSON nested at most {limit} levels deep", "deeper nesting")
            if set(map(type, node)) <= _PLAIN:
                seen += len(node)           # a long array of numbers (a raw fill value)
                continue
            stack.extend((v, depth + 1) for v in node)
        elif node is None or isinstance(node, (str, bool, int, float)):
            continue
        elif isinstance(node, (np.bool_, np.integer, np.floating)):
            converted = True              # numpy scalars are written as plain JSON numbers
        else:
            raise loc.error("JSON values (object, array, string, number, bool, null)",
                            type(node).__name__)
    if seen > most:                         # counted in bulk at the end
        raise loc.found(f"a document of at most {most} JSON values", "more")
    return seen, converted


def check_attributes(values: dict[str, Any], what: str) -> None:
    """Refuse, with an ArgumentTypeError naming ``what`` (the attributes of which node, or
    of which call) and the key, user attributes that are not JSON as zarr-python takes them:
    values ``json.dumps`` refuses (numpy scalars other than ``numpy.float64``, a ``float``,
    arrays, bytes, sets), mapping keys that are not str at any depth (``json.dumps`` would
    turn 1 into "1"), and nesting deeper than a reader takes. Tuples are lists, and NaN and
    the infinities are stored as ``NaN`` / ``Infinity``, as zarr-python stores them. Text
    holding a lone surrogate (a key or a value, at any depth) is an ArgumentError: a metadata
    document is UTF-8, which cannot hold one (an escaped one, ``"\\udcff"``, is JSON that
    tensorstore refuses to open)."""
    node = what
    what = f"{what} must be JSON-serialisable"
    for key, value in values.items():
        try:
            text = _json.dumps(value, allow_nan=True, ensure_ascii=False, default=not_json)
        except RecursionError:
            continue                        # far too deep: check_tree words it below
        except (TypeError, ValueError) as exc:
            raise ArgumentTypeError(f"{what}: {key!r}: {exc}") from exc
        bad_text = unencodable_text(key) or (not text.isascii() and unencodable_text(value))
        if bad_text:
            raise ArgumentError(f"{node}: {key!r}: expected text that UTF-8 can encode (no "
                                f"lone surrogates), found {short(bad_text)}")
    bad = _keys_not_str(values)
    if bad:
        key = bad[0]
        raise ArgumentTypeError(f"{what}: keys must be str, found {type(key).__name__} {key!r}")
    check_tree(values, Loc("attributes"))   # the depth a reader takes


def unencodable_text(value: Any) -> str | None:
    """The first str (a mapping key or a value, nested in mappings and lists) in ``value``
    that UTF-8 cannot encode (one holding a lone surrogate), else None."""
    todo = [value]
    while todo:
        v = todo.pop()
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                return v
        elif isinstance(v, dict):
            todo.extend(v.values())
            todo.extend(v.keys())
        elif isinstance(v, (list, tuple)):
            todo.extend(v)
    return None


def _keys_not_str(value: Any) -> list:
    """``[key]`` for the first mapping key in ``value`` (nested in mappings and lists) that is
    not a str, else ``[]``."""
    todo = [value]
    while todo:
        v = todo.pop()
        if isinstance(v, dict):
            for k, item in v.items():
                if not isinstance(k, str):
                    return [k]
                todo.append(item)
        elif isinstance(v, (list, tuple)):
            todo.extend(v)
    return []


def _float_constant(name: str) -> float:
    return float(name)


class OutOfRange(float):
    """The infinity a JSON number past the range of a double (``1e400``) is read as."""

    __slots__ = ()


_INF = float("inf")


def _number(text: str) -> float:
    """A JSON number with a fraction or exponent (integers stay ``int``)."""
    f = float(text)
    return OutOfRange(f) if f == _INF or f == -_INF else f

# plain decoders, made once (``json.loads`` with keywords builds a decoder per call)
_DECODERS = {True: _json.JSONDecoder(parse_constant=_float_constant, parse_float=_number),
             False: _json.JSONDecoder(parse_constant=_reject_constant, parse_float=_number)}
_UNSURE = object()


def _parse_unique(text: str, keys: int, allow_nonfinite: bool) -> Any:
    """The parsed document when it parses and no object in it repeats a key (the ``keys``
    written in the text all held by the parsed objects), else ``_UNSURE``: the document is then
    parsed again by ``_parse_checked``, which words the error."""
    try:
        value = _DECODERS[allow_nonfinite].decode(text)
    except Exception:
        return _UNSURE
    return value if tree_keys(value) == keys else _UNSURE


def _parse_checked(text: str, loc: Loc, allow_nonfinite: bool) -> Any:
    """The document parsed object by object, a ``MetadataError`` for the first problem."""
    hook = _float_constant if allow_nonfinite else _reject_constant
    try:
        value = _json.loads(text, object_pairs_hook=_pairs, parse_constant=hook,
                            parse_float=_number)
    except _Duplicate as exc:
        raise loc.found("unique keys in every JSON object", f"key {exc.args[0]!r} twice") from None
    except _NonFinite as exc:
        raise loc.found('JSON numbers (non-finite values are the strings "NaN", "Infinity", '
                        '"-Infinity")', f"bare {exc.args[0]}") from None
    except _json.JSONDecodeError as exc:
        raise loc.found("valid JSON", f"{exc.msg}: line {exc.lineno} column {exc.colno}"
                        ) from None
    except (ValueError, RecursionError) as exc:   # e.g. integers with too many digits
        raise loc.found("valid JSON", short(str(exc))) from None
    return value


_gc_lock = threading.Lock()
_gc_pauses = 0
_gc_was_enabled = True


@contextmanager
def gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused for the block: parsing consolidated metadata
    allocates millions of objects (none of them in a cycle), and the collections that many
    allocations set off took about 40 % of the time of reading a large ``.zmetadata``."""
    global _gc_pauses, _gc_was_enabled
    with _gc_lock:                      # threads parsing at once: the first pauses, the last
        if _gc_pauses == 0:             # puts back what it found
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_pauses += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pauses -= 1
            if _gc_pauses == 0 and _gc_was_enabled:
                gc.enable()


def _forget_after_fork() -> None:
    """A child forked during a pause has none of the threads that paused: it collects again."""
    global _gc_lock, _gc_pauses
    _gc_lock, pauses, _gc_pauses = threading.Lock(), _gc_pauses, 0
    if pauses and _gc_was_enabled:
        gc.enable()


_fork.at_fork(_forget_after_fork)


class Loaded:
    """A value taken from a document :func:`load` has already checked (an entry of consolidated
    metadata): ``load`` takes it, when it is an object, without walking its tree again."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


def load(doc: bytes | bytearray | memoryview | str | dict | Loaded, key: str, *,
         allow_nonfinite: bool = True) -> dict[str, Any]:
    """Parse a metadata document (bytes, text or an already parsed dict) into a dict; bare
    non-finite numbers read as floats unless ``allow_nonfinite=False``."""
    if type(doc) is Loaded:
        doc = doc.value
        if type(doc) is dict:
            return doc
    loc = Loc(key)
    if isinstance(doc, dict):
        check_tree(doc, loc, MAX_DOCUMENT_DEPTH)
        return doc
    if isinstance(doc, str):
        data = doc.encode("utf-8", "surrogatepass")
    elif isinstance(doc, (bytes, bytearray, memoryview)):
        data = bytes(doc)
    else:
        raise loc.found("a JSON document (bytes, str or dict)", type(doc).__name__)
    limit = max_document_bytes()
    if len(data) > limit:
        raise too_large(key, len(data), limit)
    # a UTF-8 byte order mark (Windows editors write one) is skipped, as RFC 8259 allows
    data = data[3:] if data[:3] == b"\xef\xbb\xbf" else data  # (zarr-python, tensorstore too)
    depth, keys = scan(data)
    if depth > MAX_DOCUMENT_DEPTH:
        raise loc.found(f"JSON nested at most {MAX_DOCUMENT_DEPTH} levels deep",
                        f"{depth} levels")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise loc.found("UTF-8 encoded JSON", f"invalid byte at offset {exc.start}") from None
    value = _parse_unique(text, keys, allow_nonfinite)
    if value is _UNSURE:
        value = _parse_checked(text, loc, allow_nonfinite)
    if not isinstance(value, dict):
        raise loc.error("a JSON object at the top level", value)
    return value


def _clean(value: Any) -> Any:
    """Copy of ``value`` with numpy scalars as Python values."""
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    return value


#: documents of more values than this (large consolidated metadata) are indented only down to
#: :data:`INDENT_LEVELS` levels, each value below written on one line by the standard library's
#: C encoder (many times the speed of its indenting one), so that keeping consolidated metadata
#: in step stays cheap
INDENT_MAX_VALUES = 1024
INDENT_LEVELS = 3
_ONE_LINE = _json.JSONEncoder(allow_nan=True, separators=(", ", ": "))
# the types whose JSON text holds no ", " (a str may): an array of them is split on it
_NUMBERS = frozenset((int, float, bool, type(None)))
_quote = _json.encoder.encode_basestring_ascii
_COMPACT = _json.JSONEncoder(allow_nan=True, separators=(",", ":"))


def _count(value: Any, limit: int) -> int:
    """The number of values in ``value``, counted up to ``limit``."""
    stack, seen = [value], 0
    while stack and seen < limit:
        node = stack.pop()
        seen += 1
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return seen


def _shallow(value: Any, level: int) -> str:
    """``value`` as JSON indented 2 spaces per level down to :data:`INDENT_LEVELS` levels."""
    if level >= INDENT_LEVELS or not isinstance(value, (dict, list)) or not value:
        return _ONE_LINE.encode(value)
    pad = "\n" + "  " * (level + 1)
    if isinstance(value, dict):
        items = [pad + _quote(k) + ": " + (str(v) if type(v) is int else _shallow(v, level + 1))
                 for k, v in value.items()]             # ints spelled at once (10**5 fields)
        return "{" + ",".join(items) + "\n" + "  " * level + "}"
    types = set(map(type, value))
    if types <= _NUMBERS:       # each item on its own line, the array encoded in one call
        inner = _ONE_LINE.encode(value)[1:-1].replace(", ", "," + pad)
    elif types == {str}:
        inner = ("," + pad).join(map(_quote, value))
    else:
        inner = ",".join(pad + _shallow(v, level + 1) for v in value)[len(pad):]
    return "[" + pad + inner + "\n" + "  " * level + "]"


def checked(value: Any, levels_above: int) -> Any:
    """``value``, to be placed ``levels_above`` levels deep in a document, checked as
    :func:`dumps` checks a whole document (numpy scalars converted), for
    ``dumps(..., checked=True)``."""
    _, converted = check_tree(value, Loc("metadata"), MAX_DOCUMENT_DEPTH - levels_above)
    return _clean(value) if converted else value


def dumps(obj: Any, *, checked: bool = False) -> bytes:
    """JSON bytes the way zarr-python writes metadata: indent 2 (large documents: see
    :data:`INDENT_MAX_VALUES`), non-ASCII escaped, non-finite floats as bare ``NaN`` /
    ``Infinity`` / ``-Infinity``. ``checked``: every part of ``obj`` was loaded by :func:`load`
    or passed through :func:`checked` (the walk over the whole document is skipped)."""
    if checked:     # every part loaded by load() or passed through checked(): count only
        count, converted = _count(obj, INDENT_MAX_VALUES + 1), False
    else:           # iterative: no deep recursion
        count, converted = check_tree(obj, Loc("metadata"), MAX_DOCUMENT_DEPTH)
    try:
        obj = _clean(obj) if converted else obj
        text = _json.dumps(obj, indent=2, allow_nan=True) if count <= INDENT_MAX_VALUES \
            else _shallow(obj, 0)
        if len(text) > max_document_bytes():  # indenting a long array, a value a line, made it
            text = _COMPACT.encode(obj)     # larger than load takes: written without spaces
    except (TypeError, ValueError, RecursionError) as exc:
        raise MetadataError(f"cannot write metadata as JSON: {short(str(exc))}") from None
    return text.encode("ascii")


# the first byte (after white space) of any JSON text; 0xEF starts a UTF-8 byte order mark,
# which load() skips
_JSON_START = frozenset(b'{["-0123456789tfn\xef')
_TITLE = re.compile(rb"<title[^>]*>([^<]{1,200})</title", re.IGNORECASE)


def json_document(store: Any, key: str, doc: Any) -> Any:
    """``doc`` (the bytes read at ``key``) when it may be JSON; a MetadataError naming the
    store, the key, its address and what was found when it cannot be (an empty object, a web
    server's HTML login or error page, binary data), with the Content-Type when the store
    knows it. Malformed JSON is left to the parser, which says where it breaks."""
    if isinstance(doc, (dict, str)):
        return doc
    limit = max_document_bytes()
    if len(doc) > limit:                # read up to one byte past the limit: its whole size
        raise too_large(key, _whole_size(store, key, len(doc)), limit)
    head = bytes(memoryview(doc)[:4096]).lstrip(b" \t\r\n")
    blank = not head and len(doc) <= 4096
    if len(doc) and not blank and (not head or head[0] in _JSON_START):
        return doc
    ctype = store.content_type(key) if head else None
    if not len(doc):
        found = "an empty object"
    elif blank:
        found = "only white space"
    elif head[:1] == b"<" or (ctype is not None and "html" in ctype.lower()):
        title = _TITLE.search(head)
        found = "an HTML page" + (f" titled {title.group(1).decode('utf-8', 'replace').strip()!r}"
                                  if title else "")
    else:
        found = f"{len(doc)} bytes that are not JSON, starting {head[:24]!r}"
    if ctype is not None:
        found += f" (Content-Type {printable(ctype)})"     # a server's words
    where = store.address(key)
    raise MetadataError(f"{store!r}: {key}{f' ({where})' if where else ''}: expected a JSON "
                        f"metadata document, found {found}")


def _whole_size(store: Any, key: str, read: int) -> int | None:
    """The size of the object at ``key``, of which ``read`` bytes were read (the most a read
    of a document fetches), where the store tells it without reading the object; else None
    (or ``read`` when that was the whole object)."""
    if read != max_document_bytes() + 1:
        return read                     # read whole, not up to the limit
    if type(store).getsize is Store.getsize:
        return None                     # the default reads the whole object
    try:
        return store.getsize(key)
    except ZarrError:
        return None
