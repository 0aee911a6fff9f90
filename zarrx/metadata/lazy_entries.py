"""Consolidated entries parsed when they are used.

Opening a group whose consolidated metadata lists 10^5 or 10^6 nodes used to parse every
entry into an ``ArrayMeta``/``GroupMeta`` at once, which took several times as long as loading
the JSON document itself. :class:`LazyEntries` holds the entries as loaded (plain JSON) with
each node's kind (array or group, read from the document's layout), and parses an entry the
first time it is looked up: listing names and kinds costs no parse, and a malformed entry
raises the :class:`~zarrx.errors.MetadataError` that parsing it eagerly raised (same key, same
JSON path), when that node is used. The subclasses for ``.zmetadata`` and for v3 inline
consolidated metadata live beside their parsers.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, MutableMapping
from typing import Any

from zarrx.metadata.model import ArrayMeta, GroupMeta, frozen_entry, own_data_type

__all__ = ["LazyEntries", "entry_is_array", "parsed_entries", "ARRAY", "GROUP", "HandleEntries"]

Meta = ArrayMeta | GroupMeta
#: the bits of an entry's kind: an array's, a group's (neither: not known until parsed)
ARRAY, GROUP = 1, 2


class LazyEntries(MutableMapping):
    """``{path: meta}`` of consolidated metadata, each entry parsed on first lookup and kept.

    ``_kinds`` maps every path to its kind (:data:`ARRAY`, :data:`GROUP` or 0 when the
    document does not say, other bits as a subclass uses them); a subclass's ``_parse(path)`` makes
    the metadata of a path from the document it holds. Paths set after construction (a
    pending node read from its own documents) hold their metadata as given. Iterating, ``in``,
    ``len`` and :meth:`is_array` parse nothing; values, items and equality parse every entry
    they reach."""

    __slots__ = ("_kinds", "_parsed", "_sealed")

    def __init__(self, kinds: dict[str, int]) -> None:
        self._kinds = kinds
        self._parsed: dict[str, Meta] = {}
        self._sealed = False

    def seal(self) -> None:
        """Refuse every change from now on (the entries are a group's metadata, which handles
        share): a change is made to a :meth:`copy`."""
        self._sealed = True

    def _check_open(self, path: str, what: str) -> None:
        if getattr(self, "_sealed", True):
            from zarrx.metadata.frozen import _refused
            _refused(f"cannot {what} the consolidated entry {path!r}")

    def _parse(self, path: str) -> Meta:   # pragma: no cover - every subclass has its own
        raise NotImplementedError

    def __getitem__(self, path: str) -> Meta:
        meta = self._parsed.get(path)
        if meta is None:
            if path not in self._kinds:
                raise KeyError(path)
            meta = self._parsed[path] = frozen_entry(self._parse(path))
        return meta

    def __contains__(self, path: object) -> bool:
        return path in self._kinds

    def __iter__(self) -> Iterator[str]:
        return iter(self._kinds)

    def __len__(self) -> int:
        return len(self._kinds)

    def __setitem__(self, path: str, meta: Meta) -> None:
        self._check_open(path, "set")
        self._kinds[path] = ARRAY if isinstance(meta, ArrayMeta) else GROUP
        self._parsed[path] = frozen_entry(meta)

    def __delitem__(self, path: str) -> None:
        self._check_open(path, "delete")
        del self._kinds[path]
        self._parsed.pop(path, None)

    def is_array(self, path: str) -> bool:
        """Whether the entry at ``path`` is an array's (a KeyError when there is none),
        parsing it only when its document does not say (which then raises)."""
        kind = self._kinds[path]
        if kind & (ARRAY | GROUP):
            return bool(kind & ARRAY)
        return isinstance(self[path], ArrayMeta)

    def copy(self) -> LazyEntries:
        new = object.__new__(type(self))
        for cls in type(self).__mro__:
            for name in getattr(cls, "__slots__", ()):
                object.__setattr__(new, name, getattr(self, name))
        new._kinds = dict(self._kinds)
        new._parsed = dict(self._parsed)
        new._sealed = False
        return new

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Mapping):
            return NotImplemented
        return dict(self.items()) == dict(other.items())

    __hash__ = None     # type: ignore[assignment]  # a mapping that changes

    def __reduce__(self):
        state = {name: getattr(self, name) for cls in type(self).__mro__
                 for name in getattr(cls, "__slots__", ())}
        return (_rebuild, (type(self), state))

    def __repr__(self) -> str:
        return f"<{len(self)} consolidated entries, {len(self._parsed)} parsed>"


def _rebuild(cls: type, state: dict[str, Any]) -> LazyEntries:
    new = object.__new__(cls)
    for name, value in state.items():
        object.__setattr__(new, name, value)
    return new


def entry_is_array(entries: Mapping[str, Meta], path: str) -> bool:
    """Whether the consolidated entry at ``path`` is an array's; parsed only when ``entries``
    is a plain mapping of metadata."""
    is_array = getattr(entries, "is_array", None)     # LazyEntries, ConsolidatedView
    if is_array is not None:
        return is_array(path)
    return isinstance(entries[path], ArrayMeta)


def parsed_entries(entries: Mapping[str, Meta], paths: Iterable[str] | None = None
                   ) -> dict[str, Meta]:
    """``{path: meta}`` of every entry (or of ``paths``), each parsed: the first malformed
    one raises."""
    return {p: entries[p] for p in (entries if paths is None else paths)}


class HandleEntries(Mapping):
    """The consolidated entries of a group as one handle shows them (``metadata.consolidated``,
    ``metadata.consolidated_metadata``): the shared entries, but for those of struct arrays,
    each made the handle's own once looked up (numpy lets a struct dtype's field ``names`` be
    set: a rename through one handle must not rename another's, nor the arrays opened later
    from the entry). Read-only, as the shared entries are."""

    __slots__ = ("_shared", "_own")

    def __init__(self, shared: Mapping[str, Meta]) -> None:
        self._shared = shared
        self._own: dict[str, Meta] = {}

    def __getitem__(self, path: str) -> Meta:
        own = self._own.get(path)
        if own is not None:
            return own
        meta = self._shared[path]
        if type(meta) is ArrayMeta and meta.data_type.numpy.names is not None:
            meta = self._own.setdefault(path, own_data_type(meta))
        return meta

    def __contains__(self, path: object) -> bool:
        return path in self._shared

    def __iter__(self) -> Iterator[str]:
        return iter(self._shared)

    def __len__(self) -> int:
        return len(self._shared)

    def is_array(self, path: str) -> bool:
        return entry_is_array(self._shared, path)

    def __setitem__(self, path: str, meta: Meta) -> None:
        from zarrx.metadata.frozen import _refused
        _refused(f"cannot set the consolidated entry {path!r}")

    def __delitem__(self, path: str) -> None:
        from zarrx.metadata.frozen import _refused
        _refused(f"cannot delete the consolidated entry {path!r}")

    def copy(self) -> Any:
        """A mutable copy of the entries, those of struct arrays parsed already its own (as
        those it parses later are): a rename through it renames no handle's."""
        new = self._shared.copy()
        held = getattr(new, "_parsed", new)     # a LazyEntries's parsed entries, or a dict
        for path, meta in list(held.items()):
            if type(meta) is ArrayMeta and meta.data_type.numpy.names is not None:
                held[path] = own_data_type(meta)
        return new

    def __eq__(self, other: object) -> bool:
        return self._shared == (other._shared if isinstance(other, HandleEntries) else other)

    __hash__ = None     # type: ignore[assignment]

    def __reduce__(self) -> tuple:
        return (_same, (self._shared,))       # a pickle holds the shared entries

    def __repr__(self) -> str:
        return repr(self._shared)


def _same(value: Any) -> Any:
    return value

