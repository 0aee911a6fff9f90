"""``Group.get_array`` and ``Group.get_group``: a member of a required kind.

``g[name]`` returns an array or a group; these two return one kind only, and say what is at the
path otherwise, with zarr-python 3.3's exception classes: ``ArrayNotFoundError`` /
``GroupNotFoundError`` when nothing is there, ``ContainsGroupError`` / ``ContainsArrayError``
when the other kind is.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

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
        node = self._lookup(path)     # type: ignore[attr-defined]
        where = f"get_array: group {self.name!r}"    # type: ignore[attr-defined]
        if node is None:
            raise ArrayNotFoundError(f"{where}: no array at {path!r} (no node there)")
        if node._kind != "array":
            raise ContainsGroupError(f"{where}: expected an array at {path!r}, found a group")
        return node

    def get_group(self, path: str) -> Group:
        """The group at ``path`` below this group (``"sub/subsub"`` reaches into subgroups).

        Raises ``GroupNotFoundError`` when no node is there and ``ContainsArrayError`` when
        the node there is an array."""
        node = self._lookup(path)     # type: ignore[attr-defined]
        where = f"get_group: group {self.name!r}"    # type: ignore[attr-defined]
        if node is None:
            raise GroupNotFoundError(f"{where}: no group at {path!r} (no node there)")
        if node._kind != "group":
            raise ContainsArrayError(f"{where}: expected a group at {path!r}, found an array")
        return node
