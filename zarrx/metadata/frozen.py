"""Read-only metadata: what a handle shows is shared, so nothing of it changes in place.

Handles opened in one process on the same stored document share one parse (the parse cache,
:mod:`zarrx.metadata.parse_cache`; the consolidated documents kept with their parse,
:mod:`zarrx.metadata.consolidated_memo`; the codec lists the arrays of a hierarchy share). The
model is therefore frozen all the way down:

- the model's dataclasses refuse assignment to a field (:func:`refuse_assignment`);
- the JSON values they hold that are small (a codec's ``configuration`` and the object it
  was read from, a data type's or a rectilinear grid's JSON, the unknown fields ``extra``, a
  Zarr v2 array's ``filters`` and ``compressor``) are frozen once, when the model is made
  (:func:`freeze_json`): :class:`FrozenDict` and :class:`FrozenList` are ``dict`` and ``list``
  (equal to them, written as JSON as they are) that refuse every change;
- the document a node was read from (``ArrayMeta.json``, ``GroupMeta.json``), which may be a
  consolidated document of millions of nodes, is shown through views made when it is looked at
  (:class:`DocumentView`, :class:`ListView`): nothing is walked when it is parsed.

A change is refused with :class:`~zarrx.errors.FrozenMetadataError`. A deep copy
(``copy.deepcopy``, :func:`thaw_json`, ``to_dict()``) is plain, mutable JSON. Attributes are not
frozen: every handle gets its own copy of them (as each zarr-python handle parses its own).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import fields
from typing import Any, NoReturn

__all__ = ["FrozenDict", "FrozenList", "DocumentView", "ListView", "freeze_json", "thaw_json",
           "view", "refuse_assignment", "raw"]

_HOW = ("metadata a handle shows is read-only (it is shared by every handle opened on the "
        "same stored document): use to_dict() for a copy to change, and change an array or "
        "group through its API (attrs, update_attributes, resize)")


def _refused(what: str) -> NoReturn:
    from zarrx.errors import FrozenMetadataError
    raise FrozenMetadataError(f"{what}: {_HOW}")


class FrozenDict(dict):
    """A ``dict`` of metadata JSON that refuses every change. ``_src``: the JSON it was made
    from, which a pickle names instead of the items while they are equal (the document a node
    was read from holds it too: pickled once)."""

    __slots__ = ("_src",)

    def __setitem__(self, key: Any, value: Any) -> NoReturn:
        _refused(f"cannot set {key!r}")

    def __delitem__(self, key: Any) -> NoReturn:
        _refused(f"cannot delete {key!r}")

    def _change(self, *args: Any, **kwargs: Any) -> NoReturn:
        _refused("cannot change a metadata mapping")

    clear = pop = popitem = setdefault = update = __ior__ = _change

    def copy(self) -> dict:
        """A plain, mutable copy (its values as they are)."""
        return dict(self)

    def __reduce__(self) -> tuple:
        return _reduced(self, FrozenDict, dict)

    def __copy__(self) -> FrozenDict:
        return self

    def __deepcopy__(self, memo: dict) -> Any:
        return thaw_json(self)


class FrozenList(list):
    """A ``list`` of metadata JSON that refuses every change (``_src``: as for
    :class:`FrozenDict`)."""

    __slots__ = ("_src",)

    def __setitem__(self, index: Any, value: Any) -> NoReturn:
        _refused(f"cannot set item {index!r}")

    def __delitem__(self, index: Any) -> NoReturn:
        _refused(f"cannot delete item {index!r}")

    def _change(self, *args: Any, **kwargs: Any) -> NoReturn:
        _refused("cannot change a metadata list")

    append = extend = insert = pop = remove = clear = sort = reverse = _change
    __iadd__ = __imul__ = _change

    def copy(self) -> list:
        return list(self)

    def __reduce__(self) -> tuple:
        return _reduced(self, FrozenList, list)

    def __copy__(self) -> FrozenList:
        return self

    def __deepcopy__(self, memo: dict) -> Any:
        return thaw_json(self)


def _reduced(frozen: Any, cls: type, plain: type) -> tuple:
    src = getattr(frozen, "_src", None)
    if src is not None and type(src) is plain and src == frozen:
        return (freeze_json, (src,))
    return (freeze_json, (thaw_json(frozen),))


def freeze_json(value: Any) -> Any:
    """``value`` (JSON, or tuples of it) with every dict and list in it frozen (a new copy of
    each; what is frozen already is kept)."""
    t = type(value)
    if t is dict:
        if not value:
            return _EMPTY
        out = FrozenDict({k: freeze_json(v) for k, v in value.items()})
        out._src = value
        return out
    if t is list:
        out = FrozenList([freeze_json(v) for v in value])
        out._src = value
        return out
    if t is tuple:
        return tuple([freeze_json(v) for v in value])
    return value


_SCALARS = frozenset((str, int, float, bool, type(None)))


def thaw_json(value: Any) -> Any:
    """A plain, mutable deep copy of metadata JSON (frozen or not, or a view of a document);
    scalars are taken as they are, without a call each."""
    t = type(value)
    if t in _SCALARS:
        return value
    if t in _VIEWS:
        value = value._raw
        t = type(value)
    if t is dict or t is FrozenDict:
        return {k: v if type(v) in _SCALARS else thaw_json(v) for k, v in value.items()}
    if t is list or t is FrozenList:
        return [v if type(v) in _SCALARS else thaw_json(v) for v in value]
    if isinstance(value, dict):
        return {k: thaw_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [thaw_json(v) for v in value]
    if t is tuple:
        return tuple([thaw_json(v) for v in value])
    if isinstance(value, (str, int, float, bool)):
        return value
    import copy
    return copy.deepcopy(value)


def view(value: Any) -> Any:
    """A read-only view of ``value`` (a dict or list of a document; anything else as is)."""
    if isinstance(value, dict):
        return DocumentView(value)
    if isinstance(value, list):
        return ListView(value)
    return value


def raw(value: Any) -> Any:
    """What a view shows (anything else as is)."""
    return value._raw if type(value) in _VIEWS else value


def _same(value: Any) -> Any:
    return value


class _View:
    """What :class:`DocumentView` and :class:`ListView` share: the object of a document they
    show (``_raw``), equality with it, and the refusal of every change."""

    __slots__ = ("_raw",)
    _what = ""                      # the noun of an item in messages: "" or "item "

    def __init__(self, raw: Any) -> None:
        self._raw = raw

    def __eq__(self, other: object) -> bool:
        return self._raw == raw(other)

    __hash__ = None     # type: ignore[assignment]

    def __setitem__(self, key: Any, value: Any) -> NoReturn:
        _refused(f"cannot set {self._what}{key!r} of a metadata document")

    def __delitem__(self, key: Any) -> NoReturn:
        _refused(f"cannot delete {self._what}{key!r} of a metadata document")

    def _change(self, *args: Any, **kwargs: Any) -> NoReturn:
        _refused("cannot change a metadata document")

    def copy(self) -> Any:
        """A plain, mutable deep copy of the object."""
        return thaw_json(self._raw)

    def __repr__(self) -> str:
        return repr(self._raw)

    def __reduce__(self) -> tuple:
        return (_same, (self._raw,))

    def __deepcopy__(self, memo: dict) -> Any:
        return thaw_json(self._raw)


class DocumentView(_View, Mapping):
    """A read-only view of an object of a stored metadata document; what it holds is seen
    through views too. Equal to the object (and to its copies)."""

    __slots__ = ()

    def __getitem__(self, key: Any) -> Any:
        return view(self._raw[key])

    def __iter__(self) -> Any:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)

    def __contains__(self, key: object) -> bool:
        return key in self._raw

    __eq__ = _View.__eq__
    __hash__ = None     # type: ignore[assignment]
    clear = pop = popitem = setdefault = update = _View._change


class ListView(_View, Sequence):
    """A read-only view of an array of a stored metadata document (see
    :class:`DocumentView`)."""

    __slots__ = ()
    _what = "item "

    def __getitem__(self, index: Any) -> Any:
        return view(self._raw[index])

    def __len__(self) -> int:
        return len(self._raw)

    __eq__ = _View.__eq__
    __hash__ = None     # type: ignore[assignment]
    append = extend = insert = pop = remove = clear = sort = reverse = _View._change


_VIEWS = (DocumentView, ListView)
_EMPTY = FrozenDict()


def refuse_assignment(cls: type) -> type:
    """Make the frozen dataclass ``cls`` refuse field assignment and deletion with
    :class:`~zarrx.errors.FrozenMetadataError` (dataclasses' own ``FrozenInstanceError`` is
    not a ZarrError)."""
    name = cls.__name__

    def __setattr__(self: Any, field: str, value: Any) -> NoReturn:
        _refused(f"cannot assign to field {field!r} of {name}")

    def __delattr__(self: Any, field: str) -> NoReturn:
        _refused(f"cannot delete field {field!r} of {name}")

    cls.__setattr__ = __setattr__     # type: ignore[method-assign]
    cls.__delattr__ = __delattr__     # type: ignore[method-assign]
    return cls


def guard_document(cls: type) -> None:
    """Show the ``json`` field of the slotted dataclass ``cls`` (the document as read) through
    a read-only view; ``cls._json`` reads it as held, for zarrx itself. Setting the field (the
    dataclass's ``__init__``, ``dataclasses.replace``, unpickling) stores what a view shows."""
    slot = cls.__dict__["json"]

    def get(self: Any) -> Any:
        return view(slot.__get__(self, cls))

    def put(self: Any, value: Any) -> None:
        slot.__set__(self, raw(value))

    cls.json = property(get, put, doc="The JSON as read (a read-only view).")
    cls._json = slot
    # pickled as held (dataclasses' own state reads each field by name: a view)
    held = [slot if f.name == "json" else cls.__dict__[f.name] for f in fields(cls)]

    def __getstate__(self: Any) -> list:
        return [d.__get__(self, cls) for d in held]

    cls.__getstate__ = __getstate__
