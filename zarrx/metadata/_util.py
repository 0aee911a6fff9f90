"""Locations inside a document and the small ``parse_*`` helpers every metadata module uses.

Every error names the document key, the JSON path of the field, what was expected and what was
found (its repr cut to about 80 characters so huge inputs give short messages). A location raises
``MetadataError`` unless it is made with another error class (the codec validators raise
``CodecError`` for codec objects built in Python and for codec plans).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from zarrx.errors import MetadataError, ZarrError

__all__ = ["Loc", "short", "safe_repr", "few_names", "not_json", "INT64_MAX", "UINT64_MAX"]

INT64_MAX = 2**63 - 1
UINT64_MAX = 2**64 - 1
_MAX_REPR = 80


def short(obj: object, limit: int = _MAX_REPR) -> str:
    """``repr(obj)`` cut to about ``limit`` characters (big containers are summarised, not
    repr'd)."""
    if isinstance(obj, (list, tuple, dict)) and len(obj) > 20:
        kind = type(obj).__name__
        return f"<{kind} of {len(obj)} items>"
    if isinstance(obj, int) and not isinstance(obj, bool) and obj.bit_length() > 256:
        return f"<integer of {obj.bit_length()} bits>"
    if isinstance(obj, (str, bytes)) and len(obj) > limit:
        obj = obj[:limit]
        return repr(obj)[: limit - 3] + "..."
    try:
        text = safe_repr(obj)
    except RecursionError:  # deeply nested values built in Python, not parsed from JSON
        return f"<deeply nested {type(obj).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def safe_repr(obj: object) -> str:
    """``repr(obj)``, or for a unit-less numpy datetime64 holding an integer other than NaT,
    whose repr numpy refuses (``ValueError``), the integers it holds:
    ``np.datetime64(5) (no unit)``, also as a field of a structured value or an item of a
    tuple (another numpy value numpy cannot show: its type and bytes)."""
    try:
        return repr(obj)
    except ValueError:
        if isinstance(obj, (tuple, list)):     # a structured item's fields (a subarray)
            inner = ", ".join(safe_repr(v) for v in obj)
            if isinstance(obj, list):
                return f"[{inner}]"
            return f"({inner}{',' if len(obj) == 1 else ''})"
        if not isinstance(obj, (np.ndarray, np.generic)):
            raise
    if isinstance(obj, np.void) and obj.dtype.names is not None:
        fields = safe_repr(tuple(obj[name] for name in obj.dtype.names))
        return f"np.void({fields}, dtype={obj.dtype})"
    if obj.dtype.kind != "M":
        return f"<{type(obj).__name__} of {obj.dtype} holding {np.asarray(obj).tobytes()!r}>"
    ints = np.asarray(obj).view(np.int64)
    text = np.where(np.isnat(obj), "NaT", ints.astype(str))
    if isinstance(obj, np.generic):
        return f"np.datetime64({text[()]}) (no unit)"
    return f"array({text.tolist()}, dtype=datetime64) (no unit)".replace("'", "")


def few_names(names: Sequence[str], what: str = "fields", limit: int = 20) -> str:
    """``names`` as a list for an error message: the first ``limit`` and their count when there
    are more (a struct may have 100,000 fields)."""
    listed = ", ".join(map(repr, names[:limit]))
    return listed if len(names) <= limit else f"{listed}, ... ({len(names)} {what})"


def printable(name: str) -> str:
    """``name`` as printed to a terminal: itself, or quoted with its control characters
    escaped (``'b\\x1b[31m'``) when it holds any, so stored names never send escape
    sequences."""
    return name if name.isprintable() else repr(name)


def short_text(text: str) -> str:
    return text if len(text) <= _MAX_REPR else text[: _MAX_REPR - 3] + "..."


class Loc:
    """A document key plus a JSON path: ``Loc("a/zarr.json") / "codecs" / 2`` reads
    ``a/zarr.json codecs[2]``."""

    __slots__ = ("key", "_path", "_parent", "_part", "_err", "_type_err")

    def __init__(self, key: str, path: str = "", error: type[ZarrError] = MetadataError,
                 type_error: type[ZarrError] | None = None) -> None:
        self.key = key
        self._path: str | None = path
        self._parent: Loc | None = None
        self._part: str | int = ""
        self._err = error
        # raised by the typed readers for a value of another Python type (a str for an int):
        # a TypeError for arguments, as Python and zarr-python raise; documents keep ``error``
        self._type_err = type_error or error

    @property
    def path(self) -> str:
        """The JSON path, formatted only when a message needs it (parsing builds many)."""
        if self._path is None:
            base, part = self._parent.path, self._part  # type: ignore[union-attr]
            if isinstance(part, int):
                self._path = f"{base}[{part}]"
            else:
                self._path = f"{base}.{part}" if base else part
        return self._path

    def __truediv__(self, part: str | int) -> Loc:
        child = Loc.__new__(Loc)
        child.key = self.key
        child._path = None
        child._parent = self
        child._part = part
        child._err = self._err
        child._type_err = self._type_err
        return child

    def __str__(self) -> str:
        return f"{self.key} {self.path}" if self.path else self.key

    def error(self, want: str, got: object, cls: type[ZarrError] | None = None) -> ZarrError:
        """``cls`` (default: this location's error class): expected ``want``, found ``got``."""
        return (cls or self._err)(f"{self}: expected {want}, found {short(got)}")

    def found(self, want: str, text: str) -> ZarrError:
        """Like :meth:`error`, with ``text`` a description written as is (no repr)."""
        return self._err(f"{self}: expected {want}, found {short_text(text)}")

    def fail(self, message: str, cls: type[ZarrError] | None = None) -> ZarrError:
        return (cls or self._err)(f"{self}: {message}")

    # -- typed field readers ----------------------------------------------------------------
    def obj(self, value: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.error("a JSON object", value, self._type_err)
        return value

    def list(self, value: Any, what: str = "a JSON array") -> list[Any]:
        if not isinstance(value, (list, tuple)):
            raise self.error(what, value, self._type_err)
        return list(value)

    def str(self, value: Any, what: str = "a string") -> str:
        if not isinstance(value, str):
            raise self.error(what, value, self._type_err)
        return value

    def bool(self, value: Any) -> bool:
        if not isinstance(value, bool):
            raise self.error("true or false", value, self._type_err)
        return value

    def int(self, value: Any, lo: int | None = None, hi: int | None = None,
            what: str | None = None) -> int:
        ok = isinstance(value, (int, np.integer)) and not isinstance(value, bool)
        if ok and (lo is None or value >= lo) and (hi is None or value <= hi):
            return int(value)
        if not ok and self._err is MetadataError and type(value) is float \
                and value.is_integer() and abs(value) < 2**53:
            # a stored document's integral number written with a fraction part (``3.0``,
            # ``1e3``): JSON has one number type, numcodecs keeps a level passed as a float and
            # tensorstore reads it; exact below 2**53, where a double holds every integer
            # (arguments and codec objects, located with other error classes, stay strict;
            # one out of range is named as written: "found 300.0")
            ok = True
            if (lo is None or value >= lo) and (hi is None or value <= hi):
                return int(value)
        if what is None:
            if lo in (0, 1) and hi == INT64_MAX:
                what = f"a {'positive' if lo else 'non-negative'} integer below 2**63"
            elif lo is not None and hi is not None:
                what = f"an integer in [{lo}, {hi}]"
            elif lo is not None:
                what = "a positive integer" if lo == 1 else f"an integer >= {lo}"
            else:
                what = "an integer"
        raise self.error(what, value, None if ok else self._type_err)

    def number(self, value: Any) -> float | int:
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise self.error("a number", value, self._type_err)
        return value.item() if isinstance(value, np.generic) else value

    def choice(self, value: Any, choices: tuple[Any, ...], what: str | None = None) -> Any:
        """The one of ``choices`` equal to ``value`` (``True`` is not 1, ``"1"`` is not 1)."""
        for c in choices:
            if _same_kind(value, c) and value == c:
                return c
        if what is None:
            what = " or ".join(repr(c) for c in choices) if len(choices) <= 3 else \
                f"one of {', '.join(repr(c) for c in choices)}"
        kind = any(_same_kind(value, c) for c in choices)
        raise self.error(what, value, None if kind else self._type_err)

    def keys(self, doc: dict[str, Any], required: tuple[str, ...], optional: tuple[str, ...] = ()
             ) -> None:
        """Require ``required`` keys and reject any key outside ``required + optional``."""
        for name in required:
            if name not in doc:     # a missing keyword argument is a TypeError, as below
                raise self.fail(f"missing required field {name!r}", self._type_err)
        allowed = _ALLOWED.get((required, optional))
        if allowed is None:
            allowed = _ALLOWED[(required, optional)] = frozenset(required) | frozenset(optional)
        if allowed.issuperset(doc):
            return
        for name in doc:
            if name not in allowed:
                want = ", ".join(repr(k) for k in (*required, *optional)) or "no fields"
                # a type error where the Loc checks keyword arguments (an unexpected keyword
                # is a TypeError in Python); the Loc's error for a stored document
                raise (self / name).fail(f"unknown field; expected only {want}", self._type_err)


# the keys Loc.keys allows, by its (required, optional) arguments: tuples named in the code, so
# this stays as small as the number of places that check an object's keys
_ALLOWED: dict[tuple[tuple[str, ...], tuple[str, ...]], frozenset[str]] = {}


def name_and_configuration(obj: dict[str, Any], loc: Loc) -> tuple[str, dict[str, Any]]:
    """``name`` and ``configuration`` (``{}`` when absent) of an extension object
    ``{"name", "configuration"?, "must_understand"?}`` at ``loc``, both checked; an unknown
    key raises. ``must_understand`` is left to the caller."""
    loc.keys(obj, ("name",), ("configuration", "must_understand"))
    name = obj["name"]
    if not isinstance(name, str):
        (loc / "name").str(name)                    # raises
    conf = obj.get("configuration", {})
    if not isinstance(conf, dict):
        (loc / "configuration").obj(conf)           # raises
    return name, conf


def _same_kind(a: Any, b: Any) -> bool:
    if isinstance(a, (bool, np.bool_)) or isinstance(b, (bool, np.bool_)):
        return isinstance(a, (bool, np.bool_)) and isinstance(b, (bool, np.bool_))
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str)
    return isinstance(a, (int, np.integer)) and isinstance(b, (int, np.integer))


def is_finite_number(value: Any) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and (isinstance(value, int) or math.isfinite(value)))


def freeze(value: Any) -> Any:
    """JSON lists -> tuples, recursively (hashable structured descriptors)."""
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """Tuples -> JSON lists, recursively."""
    if isinstance(value, (list, tuple)):
        return [thaw(v) for v in value]
    return value


def not_json(obj: Any) -> Any:
    """``json.dumps``'s refusal of ``obj``, in its words, saying how to store a numpy value."""
    hint = "; store it as a Python value: .item() of a numpy scalar, .tolist() of an array" \
        if isinstance(obj, (np.generic, np.ndarray)) else ""
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable{hint}")
