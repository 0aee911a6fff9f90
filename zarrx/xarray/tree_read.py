"""The groups engine "zarrx" reads for ``open_groups`` and ``open_datatree``: a group and every
group below it, each listed once. Without consolidated metadata the listing that finds a
group's child groups also gives its arrays' metadata, which its data store takes as they are
(:class:`~zarrx.xarray.backend.ZarrxDataStore` ``arrays``): the group is not listed again for
its variables."""
from __future__ import annotations

from zarrx.group import Group
from zarrx.metadata.model import ArrayMeta
from zarrx.metadata.v3 import name_key

__all__ = ["groups_below", "tree_key"]

#: ``(path relative to the top group, the group, its arrays as (name, metadata), or None
#: when the group reads them from consolidated metadata)``
Node = tuple[str, Group, "list[tuple[str, ArrayMeta]] | None"]


def groups_below(top: Group) -> list[Node]:
    """``top`` and every group below it, group by group, each group's children by name
    ignoring case, as engine "zarr" walks a consolidated hierarchy (the arrays of a group by
    name ignoring case too, as :func:`~zarrx.xarray.backend.array_metas` gives them)."""
    found: list[Node] = []
    stack = [("", top)]
    while stack:
        rel, group = stack.pop()
        listed = group._consolidated() is None      # else its arrays come from the entries
        children = group._listing(True)
        arrays = [(k, m) for k, m in children if isinstance(m, ArrayMeta)]
        found.append((rel, group, sorted(arrays, key=lambda km: name_key(km[0]))
                      if listed else None))
        for name, meta in children:
            if not isinstance(meta, ArrayMeta):
                node = group._child(name, meta)
                if isinstance(node, Group):
                    stack.append((f"{rel}/{name}" if rel else name, node))
    return sorted(found, key=lambda n: [name_key(p) for p in n[0].split("/")] if n[0] else [])


def tree_key(rel: str, relative: bool) -> str:
    """A group's key in ``open_groups_as_dict``: its path from the root (``/a/b``), or, when
    a group was named, from that group (``.`` for itself)."""
    if relative:
        return rel or "."
    return "/" + rel
