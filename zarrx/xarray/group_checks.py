"""Checks of the group a ``to_zarrx`` write goes into, made before the store changes: what a
write would otherwise find only once the group is replaced or its variables written."""
from __future__ import annotations

from zarrx.api import open_group
from zarrx.creation import Ancestors
from zarrx.errors import ContainsGroupError
from zarrx.group import Group
from zarrx.metadata.model import GroupMeta
from zarrx.metadata.nodes import join
from zarrx.store import MemoryStore

__all__ = ["check_group_document", "refuse_replaced_groups"]


def check_group_document(attrs: dict, fmt: int) -> None:
    """The group's document with the dataset's attributes ``attrs``, made on an empty memory
    store: one a reader would refuse (larger than ``max_metadata_bytes``) is a MetadataError
    naming the document, before the store changes (the group is replaced, or its variables
    written, only after)."""
    open_group(MemoryStore(), mode="w", zarr_format=fmt, attributes=attrs)


def refuse_replaced_groups(grp: Group, names: list[str]) -> None:
    """A ContainsGroupError (as engine "zarr" raises) when one of the variables ``names`` to
    add to the stored group ``grp`` is named like a group stored in it: its array would
    replace that group and everything below it. Their places are read in one batch."""
    if not names:
        return
    places = Ancestors(grp.store, *[join(grp.path, name) for name in names], base=grp.path)
    for name in names:
        if isinstance(places(join(grp.path, name)), GroupMeta):
            raise ContainsGroupError(f"to_zarrx: variable {name!r}: a group is stored at "
                                     f"{join(grp.path, name)!r}, which its array would replace "
                                     f"with everything below it; rename the variable (or use "
                                     f"mode='w' to replace the whole group)")
