"""Checks of the group a ``to_zarrx`` write goes into, made before the store changes: what a
write would otherwise find only once the group is replaced or its variables written."""
from __future__ import annotations

import os
from collections.abc import Hashable
from typing import Any

from zarrx.api import open_group
from zarrx.creation import Ancestors, node_path
from zarrx.errors import ArgumentError, ContainsGroupError, MetadataError, NodeExistsError
from zarrx.group import Group
from zarrx.metadata.model import GroupMeta
from zarrx.metadata.nodes import join
from zarrx.store import MemoryStore
from zarrx.xarray.backend import dims_and_attrs

__all__ = ["check_group_document", "refuse_replaced_groups", "refuse_existing", "stored_node",
           "lengths_after", "check_new_variable"]


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


def stored_node(store: Any, path: str, kw: dict) -> Any:
    """The array or group at ``path`` (of either Zarr format), or None."""
    from zarrx.api import open as open_node
    from zarrx.errors import NodeNotFoundError
    try:
        return open_node(store, mode="r", path=path, **kw)
    except NodeNotFoundError:
        return None


def refuse_existing(store: Any, group: str | None, storage_options: dict | None,
                    found: Ancestors | None = None) -> None:
    """Mode ``w-``: a node already at ``group`` is a ``NodeExistsError``. ``found``: the
    node and those above it, read (one batch) with ``consolidated_at`` the node: nothing
    there is known without another read."""
    if isinstance(store, os.PathLike):
        store = os.fspath(store)
    kw: dict[str, Any] = {} if storage_options is None else {"storage_options": storage_options}
    path = node_path(group, "to_zarrx", "group")
    if found is not None and found.node(path, None, True) is None:
        return
    if stored_node(store, path, kw) is not None:
        raise NodeExistsError(f"to_zarrx: a node exists at {path or '/'!r} (mode 'w-' creates; "
                              f"use mode='w' to replace or mode='a' to add)")


def lengths_after(metas: list, ds: Any, append_dim: Hashable | None) -> dict[str, int]:
    """The length of each dimension of the stored group once the write is done: the longest
    stored array's (arrays still growing under another writer's append are shorter), and
    along ``append_dim`` with the appended rows. Arrays naming no dimensions are left out."""
    lengths: dict[str, int] = {}
    for name, meta in metas:
        try:
            dims, _ = dims_and_attrs(meta, name)
        except MetadataError:
            continue                        # not an xarray variable: it has no say
        for dim, n in zip(dims, meta.shape):
            lengths[dim] = max(n, lengths.get(dim, 0))
    if append_dim is not None and str(append_dim) in lengths:
        lengths[str(append_dim)] += ds.sizes[append_dim]
    return lengths


def check_new_variable(name: str, var: Any, lengths: dict[str, int]) -> None:
    """A variable added to a stored group (modes ``a``, ``a-``) has the group's length along
    each stored dimension: another length would make the group unreadable (xarray takes one
    length per dimension), as a new variable given only the appended rows or a region would."""
    for dim, n in zip(var.dims, var.shape):
        want = lengths.get(str(dim))
        if want is not None and n != want:
            raise ArgumentError(f"to_zarrx: variable {name!r} is not stored yet and has {n} "
                                f"elements along {dim!r}, but the stored group's {dim!r} has "
                                f"{want} once written; write the whole variable with mode='a' "
                                f"(no append_dim or region)")
