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
  (:class:`DocumentView`, :class:`ListView`): nothing is walked when it is parsed. The views
  are a ``dict`` and a ``list`` too (``json.dumps`` writes them; ``isinstance`` holds), each
  holding a copy of one level of the document, its objects and arrays shown through views as
  they are looked up.

A change is refused with :class:`~zarrx.errors.FrozenMetadataError`; calling ``dict``'s or
``list``'s own methods by name (``dict.__setitem__(view, k, v)``) changes the items of that one
view, never the document held (nothing reaches them by accident: every method of the classes
refuses or shows views). A deep copy (``copy.deepcopy``, :func:`thaw_json`, ``to_dict()``) is
plain, mutable JSON; so is any copy of a view (``copy()``, ``copy.copy``). Attributes are not
frozen: every handle gets its own copy of them (as each zarr-python handle parses its own).
"""
from __future__ import annotations

from collections.abc import ItemsView, ValuesView
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
    """A read-only view of ``value`` (a dict or list of a document; anything else, and what is
    read-only already, as is)."""
    t = type(value)
    if t in _VIEWS or t is FrozenDict or t is FrozenList:
        return value
    if isinstance(value, dict):
        return DocumentView(value)
    if isinstance(value, list):
        return ListView(value)
    return value


def raw(value: Any) -> Any:
    """What a view shows (anything else as is)."""
    return value._raw if type(value) in _VIEWS else value



def _shown(value: Any) -> Any:
    """``value`` of a document as a view shows it: a dict or list of it through a view."""
    t = type(value)
    if t is dict:
        return DocumentView(value)
    if t is list:
        return ListView(value)
    return value


def _same_again(value: Any) -> Any:
    return view(value)


class DocumentView(dict):
    """A read-only view of an object of a stored metadata document: a ``dict`` (``json.dumps``
    writes it, ``isinstance(v, dict)`` holds) equal to the object, whose values are seen
    through views too. Its items are the object's, copied (not walked) when the view is made;
    a value that is an object or an array is shown through a view made when it is looked up
    (kept for the next lookup), so nothing below is walked until it is reached. Every change
    is refused (``dict.__setitem__(view, ...)`` called by name changes the view's own items,
    never the document). Any copy of it, ``copy()``, ``copy.copy``, ``copy.deepcopy`` and
    what ``dataclasses.asdict`` makes of it, is plain, mutable JSON."""

    __slots__ = ("_raw",)

    def __new__(cls, raw: Any = None) -> Any:
        if not isinstance(raw, dict):
            # ``type(view)(items)`` (``dataclasses.asdict``, ``astuple``) makes plain JSON of
            # what it walked: a copy to change, never a view of an iterator
            return dict(() if raw is None else raw)
        return dict.__new__(cls)

    def __init__(self, raw: Any) -> None:
        dict.__init__(self, raw)
        self._raw = raw

    def __getitem__(self, key: Any) -> Any:
        value = dict.__getitem__(self, key)
        t = type(value)
        if t is dict or t is list:
            value = _shown(value)
            dict.__setitem__(self, key, value)     # (the view's own item: the same JSON)
        return value

    def get(self, key: Any, default: Any = None) -> Any:
        return self[key] if dict.__contains__(self, key) else default

    # iterating over the keys through this method (not dict's) makes dict(view), {**view} and
    # view | {...} look each value up through the view (dict's own copy would take its items)
    def __iter__(self) -> Any:
        return dict.__iter__(self)

    def items(self) -> Any:
        return _Items(self)

    def values(self) -> Any:
        return _Values(self)

    def __eq__(self, other: object) -> bool:
        return self._raw == raw(other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None     # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self._raw)

    def __setitem__(self, key: Any, value: Any) -> NoReturn:
        _refused(f"cannot set {key!r} of a metadata document")

    def __delitem__(self, key: Any) -> NoReturn:
        _refused(f"cannot delete {key!r} of a metadata document")

    def _change(self, *args: Any, **kwargs: Any) -> NoReturn:
        _refused("cannot change a metadata document")

    clear = pop = popitem = setdefault = update = __ior__ = _change

    def copy(self) -> Any:
        """A plain, mutable deep copy of the object."""
        return thaw_json(self._raw)

    def __copy__(self) -> Any:
        return thaw_json(self._raw)

    def __deepcopy__(self, memo: dict) -> Any:
        return thaw_json(self._raw)

    def __reduce__(self) -> tuple:
        return (_same_again, (self._raw,))      # read-only again when unpickled


class _Items(ItemsView):
    """``DocumentView.items()``: each value through a view (made anew: a walk of the whole
    document, ``json.dumps``, keeps nothing)."""

    __slots__ = ()

    def __iter__(self) -> Any:
        for k, v in dict.items(self._mapping):
            yield k, _shown(v)


class _Values(ValuesView):
    __slots__ = ()

    def __iter__(self) -> Any:
        for v in dict.values(self._mapping):
            yield _shown(v)


class ListView(list):
    """A read-only view of an array of a stored metadata document: a ``list`` equal to it (see
    :class:`DocumentView`), whose own items are views of the array's objects and arrays from
    the start (an array of a document is short; ``list``'s copies of a list read its items as
    held), its scalars as they are."""

    __slots__ = ("_raw",)

    def __new__(cls, raw: Any = ()) -> Any:
        if not isinstance(raw, list):
            return list(raw)            # as DocumentView: plain JSON of what was walked
        return list.__new__(cls)

    def __init__(self, raw: Any) -> None:
        kinds = set(map(type, raw))
        if dict in kinds or list in kinds:
            # its objects and arrays through views at once: list's own copies of its items
            # (``[] + view`` by ``operator.concat``, ``list.__add__``) take them as held
            raw_items: Any = [_shown(v) for v in raw]
        else:
            raw_items = raw
        list.__init__(self, raw_items)
        self._raw = raw

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return ListView(self._raw[index])
        value = list.__getitem__(self, index)
        t = type(value)
        if t is dict or t is list:
            value = _shown(value)
            list.__setitem__(self, index, value)
        return value

    def __iter__(self) -> Any:
        for v in list.__iter__(self):
            yield _shown(v)

    def __reversed__(self) -> Any:
        for v in list.__reversed__(self):
            yield _shown(v)

    def __add__(self, other: Any) -> list:
        return list(self) + other

    def __radd__(self, other: Any) -> list:
        return other + list(self)

    def __mul__(self, n: Any) -> list:
        return list(self) * n

    __rmul__ = __mul__

    def __eq__(self, other: object) -> bool:
        return self._raw == raw(other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None     # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self._raw)

    def __setitem__(self, index: Any, value: Any) -> NoReturn:
        _refused(f"cannot set item {index!r} of a metadata document")

    def __delitem__(self, index: Any) -> NoReturn:
        _refused(f"cannot delete item {index!r} of a metadata document")

    def _change(self, *args: Any, **kwargs: Any) -> NoReturn:
        _refused("cannot change a metadata document")

    append = extend = insert = pop = remove = clear = sort = reverse = _change
    __iadd__ = __imul__ = _change

    copy = __copy__ = DocumentView.copy
    __deepcopy__ = DocumentView.__deepcopy__
    __reduce__ = DocumentView.__reduce__


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
    a read-only view, made when first shown and kept in the field in its place (a view is
    equal to what it shows); ``cls._json`` reads the document as held, for zarrx itself, and
    ``cls._json_slot`` is the field's slot. Setting the field (the dataclass's ``__init__``,
    ``dataclasses.replace``, unpickling) stores what a view shows."""
    slot = cls.__dict__["json"]

    def get(self: Any) -> Any:
        held = slot.__get__(self, cls)
        if type(held) is dict or type(held) is list:
            held = view(held)
            slot.__set__(self, held)        # (every thread makes an equal one: any is kept)
        return held

    def put(self: Any, value: Any) -> None:
        slot.__set__(self, raw(value))

    cls.json = property(get, put, doc="The JSON as read (a read-only view).")
    cls._json = property(lambda self: raw(slot.__get__(self, cls)),
                         doc="The JSON as read, as held (for zarrx itself).")
    cls._json_slot = slot
    # pickled as held (dataclasses' own state reads each field by name: a view)
    held = [cls._json if f.name == "json" else cls.__dict__[f.name] for f in fields(cls)]

    def __getstate__(self: Any) -> list:
        return [d.__get__(self, cls) for d in held]

    cls.__getstate__ = __getstate__
