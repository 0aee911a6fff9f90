"""User attributes as a mutable mapping that persists every change to the node's metadata."""
from __future__ import annotations

from collections.abc import Callable, Iterator, MutableMapping
from typing import Any

from zarrx.errors import ArgumentKeyError, ArgumentTypeError, ReadOnlyError
from zarrx.metadata.json import check_attributes

__all__ = ["Attributes"]


class Attributes(MutableMapping[str, Any]):
    """``node.attrs``: reads come from the node's metadata as the node holds it now
    (``current()``), so a mapping taken earlier sees the changes made since through the node
    or another of its mappings, as in zarr-python; each change is written at once.

    A change is applied to the attributes as stored when it is written (a read-modify-write
    of the node's document, conditional on the version read: see
    :func:`zarrx.metadata.nodes.update_attributes`), so changes of other keys made meanwhile,
    by other handles, threads or processes, are kept; the node then holds (and this mapping
    shows) the attributes as that write left them. A key that is not there raises
    :class:`~zarrx.errors.ArgumentKeyError` (a ``KeyError``) naming the node (``owner``)."""

    def __init__(self, current: Callable[[], dict[str, Any]],
                 save: Callable[[Callable[[dict[str, Any]], dict[str, Any]]], dict[str, Any]], *,
                 read_only: bool = False, owner: str = "node", where: str = "") -> None:
        self._current = current
        self._save = save
        self._read_only = read_only
        self._owner = owner
        self._where = where        # appended to the read-only error: ", in <store>"

    def _commit(self, changed: dict[str, Any],
                edit: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        """Write ``edit(the stored attributes)``, ``changed`` (the values it sets) checked
        first."""
        if self._read_only:
            raise ReadOnlyError(f"attributes of {self._owner}: cannot change them: the node is "
                                f"open read-only{self._where}")
        check_attributes(changed, f"attributes of {self._owner}")
        self._save(edit)

    @property
    def _data(self) -> dict[str, Any]:
        return self._current()

    def __getitem__(self, key: str) -> Any:
        try:
            return self._data[key]
        except KeyError:
            raise self._missing(key) from None
        except TypeError:                       # a key that cannot be hashed
            raise self._not_a_key(key) from None

    def _not_a_key(self, key: Any) -> ArgumentTypeError:
        return ArgumentTypeError(f"attributes of {self._owner}: a key is a str, found "
                                 f"{type(key).__name__} {key!r}")

    def _missing(self, key: Any) -> ArgumentKeyError:
        return ArgumentKeyError(f"attributes of {self._owner}: no attribute {key!r}")

    def __setitem__(self, key: str, value: Any) -> None:
        try:
            changed = {key: value}
        except TypeError:                       # a key that cannot be hashed
            raise self._not_a_key(key) from None

        def edit(current: dict[str, Any]) -> dict[str, Any]:
            current[key] = value
            return current
        self._commit(changed, edit)

    def __delitem__(self, key: str) -> None:
        seen = key in self
        if self._read_only and not seen:        # a missing key first, as zarr-python and dict
            raise self._missing(key)

        def edit(current: dict[str, Any]) -> dict[str, Any]:
            # a key this mapping shows but gone already (another writer): nothing to do; one
            # it does not show is looked up as stored (another handle may have set it)
            if key not in current and not seen:
                raise self._missing(key)
            current.pop(key, None)
            return current
        self._commit({}, edit)

    def update(self, *args: Any, **kwargs: Any) -> None:  # one write for many keys
        changed = _as_dict(args, kwargs, "update")

        def edit(current: dict[str, Any]) -> dict[str, Any]:
            current.update(changed)
            return current
        self._commit(changed, edit)

    def put(self, d: dict[str, Any]) -> None:
        """Replace all attributes at once with those of ``d``."""
        new = _as_dict((d,), {}, "put")
        self._commit(new, lambda current: dict(new))

    def asdict(self) -> dict[str, Any]:
        return dict(self._data)

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"Attributes({self._data!r})"


def _as_dict(args: tuple, kwargs: dict[str, Any], what: str) -> dict[str, Any]:
    """``dict(*args, **kwargs)``, or ArgumentTypeError naming what was given instead of a
    mapping or of key-value pairs."""
    try:
        return dict(*args, **kwargs)
    except (TypeError, ValueError) as exc:
        found = type(args[0]).__name__ if len(args) == 1 else f"{len(args)} arguments"
        raise ArgumentTypeError(f"attributes {what}: expected a mapping or key-value pairs, "
                                f"found {found} ({exc})") from None
