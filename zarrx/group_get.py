"""``Group.get_array`` and ``Group.get_group``: a member of a required kind.

``g[name]`` returns an array or a group; these two return one kind only, and say what is at the
path otherwise, with zarr-python 3.3's exception classes: ``ArrayNotFoundError`` /
``GroupNotFoundError`` when nothing is there, ``ContainsGroupError`` / ``ContainsArrayError``
when the other kind is.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from zarrx.errors import (ArrayNotFoundError, ContainsArrayError, ContainsGroupError,
                          GroupNotFoundError)

if TYPE_CHECKING:
    from zarrx.array import Array
    from zarrx.group import Group

__all__ = ["TypedMembers"]


class TypedMembers:
    """The accessors of :class:`~zarrx.Group` that return one kind of member."""

    def get_array(self, path: str) -> Array:
        """The array at ``path`` below this group (``"sub/array"`` reaches into subgroups).

        Raises ``ArrayNotFoundError`` when no node is there and ``ContainsGroupError`` when
        the node there is a group."""
        return self._typed("get_array", path, "array", ArrayNotFoundError,
                           ContainsGroupError)

    def get_group(self, path: str) -> Group:
        """The group at ``path`` below this group (``"sub/subsub"`` reaches into subgroups).

        Raises ``GroupNotFoundError`` when no node is there and ``ContainsArrayError`` when
        the node there is an array."""
        return self._typed("get_group", path, "group", GroupNotFoundError,
                           ContainsArrayError)

    def _typed(self, call: str, path: str, kind: str, missing: type[Exception],
               other: type[Exception]) -> Any:
        node = self._lookup(path)     # type: ignore[attr-defined]
        where = f"{call}: group {self.name!r}"    # type: ignore[attr-defined]
        article, found = ("an", "a group") if kind == "array" else ("a", "an array")
        if node is None:
            raise missing(f"{where}: no {kind} at {path!r} (no node there)")
        if node._kind != kind:
            raise other(f"{where}: expected {article} {kind} at {path!r}, found {found}")
        return node
