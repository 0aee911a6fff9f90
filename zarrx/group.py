"""The Group handle: a node holding arrays and other groups, with attributes.

A group opened from consolidated metadata answers ``members()``, ``g[name]`` and ``tree()``
from the consolidated entries, without reading the store. The entries are indexed once per
hierarchy (:class:`~zarrx.metadata.consolidated.ConsolidatedIndex`) and shared by every group
opened below, so walking the whole hierarchy takes time linear in its size.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

from zarrx.array import Array
from zarrx.creation import create_array, make_parents
from zarrx.errors import NodeExistsError, NodeNotFoundError, ZarrError
from zarrx.metadata import nodes
from zarrx.metadata.consolidated import ConsolidatedIndex, ConsolidatedView
from zarrx.metadata.model import ArrayMeta, GroupMeta
from zarrx.node import Node
from zarrx.store.base import Store

__all__ = ["Group"]


class Group(Node):
    """A group in a store: ``g["a/b"]``, ``g.create_group``, ``g.create_array``, ``g.attrs``."""

    _kind = "group"

    def __init__(self, store: Store, path: str, meta: GroupMeta, *, read_only: bool = False) -> None:
        super().__init__(store, path, meta, read_only=read_only)
        self._cindex: ConsolidatedIndex | None = None

    # -- properties ---------------------------------------------------------------------------
    def _save_attrs(self, attrs: dict) -> None:
        self._check_writable("change attributes")
        meta = dataclasses.replace(self._meta, attributes=dict(attrs))
        saved = dataclasses.replace(meta, consolidated=None) if meta.zarr_format == 2 else meta
        nodes.save_node(self._store, self._path, saved)
        self._meta = meta

    def __repr__(self) -> str:
        return f"<zarrx.Group {self.name!r}>"

    def __reduce__(self):
        return (_reopen, (self._store, self._path, self._read_only))

    # -- children -----------------------------------------------------------------------------
    def _child_path(self, name: str) -> str:
        parts = [p for p in str(name).split("/") if p]
        if not parts or any(p in (".", "..") for p in parts):
            raise ZarrError(f"group {self.name!r}: invalid member name {name!r}")
        return nodes.join(self._path, "/".join(parts))

    def _wrap(self, path: str, meta: ArrayMeta | GroupMeta) -> Array | Group:
        if isinstance(meta, ArrayMeta):
            return Array(self._store, path, meta, read_only=self._read_only)
        return Group(self._store, path, meta, read_only=self._read_only)

    def _consolidated(self) -> tuple[ConsolidatedIndex, str] | None:
        """The consolidated index this group answers from, and the group's path in it."""
        entries = self._meta.consolidated
        if entries is None:
            return None
        if isinstance(entries, ConsolidatedView):
            return entries.index, entries.prefix
        if self._cindex is None or self._cindex.entries is not entries:
            self._cindex = ConsolidatedIndex(entries)
        return self._cindex, ""

    def _from_consolidated(self, index: ConsolidatedIndex, full: str, path: str,
                           meta: ArrayMeta | GroupMeta) -> Array | Group:
        if isinstance(meta, GroupMeta):
            meta = GroupMeta(attributes=meta.attributes, zarr_format=meta.zarr_format,
                             consolidated=index.view(full), extra=meta.extra, json=meta.json)
            return Group(self._store, path, meta, read_only=self._read_only)
        return Array(self._store, path, meta, read_only=self._read_only)

    def _lookup(self, name: str) -> Array | Group | None:
        path = self._child_path(name)
        rel = path[len(self._path) + 1:] if self._path else path
        found = self._consolidated()
        if found is not None:
            index, prefix = found
            full = f"{prefix}/{rel}" if prefix else rel
            meta = index.entries.get(full)
            if meta is not None:
                return self._from_consolidated(index, full, path, meta)
        meta = nodes.load_node(self._store, path)
        return None if meta is None else self._wrap(path, meta)

    def __getitem__(self, name: str) -> Array | Group:
        node = self._lookup(name)
        if node is None:
            raise NodeNotFoundError(f"group {self.name!r}: no member {name!r}")
        return node

    def get(self, name: str, default: Any = None) -> Any:
        node = self._lookup(name)
        return default if node is None else node

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._lookup(name) is not None

    def _children(self) -> list[tuple[str, ArrayMeta | GroupMeta]]:
        found = self._consolidated()
        if found is not None:
            index, prefix = found
            return index.children(prefix)
        return nodes.list_children(self._store, self._path)

    def members(self, max_depth: int | None = 0) -> Iterator[tuple[str, Array | Group]]:
        """``(name, node)`` of the children, sorted; ``max_depth=None`` walks the whole subtree
        (names are then paths relative to this group), ``max_depth=n`` n levels below the
        children. Each group is listed once: linear in the size of the hierarchy."""
        stack = [(self, iter(self._children()), "", 0)]
        while stack:
            group, children, prefix, depth = stack[-1]
            item = next(children, None)
            if item is None:
                stack.pop()
                continue
            name, meta = item
            path = f"{group._path}/{name}" if group._path else name
            found = group._consolidated()
            if found is None:
                node = group._wrap(path, meta)
            else:
                index, at = found
                node = group._from_consolidated(index, f"{at}/{name}" if at else name, path,
                                                meta)
            yield prefix + name, node
            if isinstance(node, Group) and (max_depth is None or depth < max_depth):
                stack.append((node, iter(node._children()), f"{prefix}{name}/", depth + 1))

    def keys(self) -> Iterator[str]:
        return (name for name, _ in self._children())

    def __iter__(self) -> Iterator[str]:
        return self.keys()

    def __len__(self) -> int:
        return len(self._children())

    def group_keys(self) -> Iterator[str]:
        return (n for n, m in self._children() if isinstance(m, GroupMeta))

    def array_keys(self) -> Iterator[str]:
        return (n for n, m in self._children() if isinstance(m, ArrayMeta))

    def groups(self) -> Iterator[tuple[str, Group]]:
        for n in list(self.group_keys()):
            yield n, self[n]  # type: ignore[misc]

    def arrays(self) -> Iterator[tuple[str, Array]]:
        for n in list(self.array_keys()):
            yield n, self[n]  # type: ignore[misc]

    def tree(self, max_depth: int | None = None) -> str:
        """A readable text tree of the hierarchy below this group."""
        from zarrx.info import tree
        return tree(self, max_depth)

    # -- creating children --------------------------------------------------------------------
    def create_group(self, name: str, *, attributes: dict | None = None,
                     overwrite: bool = False) -> Group:
        self._check_writable("create a group")
        path = self._child_path(name)
        make_parents(self._store, self._path, path, self._meta.zarr_format)
        existing = nodes.load_node(self._store, path)
        if existing is not None:
            if not overwrite:
                raise NodeExistsError(f"group {self.name!r}: a node already exists at {name!r}")
            nodes.delete_node(self._store, path)
        meta = GroupMeta(attributes=dict(attributes or {}), zarr_format=self._meta.zarr_format)
        nodes.save_node(self._store, path, meta)
        self._forget_consolidated()
        return Group(self._store, path, meta)

    def require_group(self, name: str, **kwargs: Any) -> Group:
        node = self._lookup(name)
        if node is None:
            return self.create_group(name, **kwargs)
        if not isinstance(node, Group):
            raise NodeExistsError(f"group {self.name!r}: {name!r} is an array, not a group")
        return node

    def create_array(self, name: str, **kwargs: Any) -> Array:
        self._check_writable("create an array")
        path = self._child_path(name)          # parents: made by create_array, once all is checked
        kwargs.setdefault("zarr_format", self._meta.zarr_format)
        arr = create_array(self._store, name=path, **kwargs)
        self._forget_consolidated()
        return arr

    def require_array(self, name: str, **kwargs: Any) -> Array:
        node = self._lookup(name)
        if node is None:
            return self.create_array(name, **kwargs)
        if not isinstance(node, Array):
            raise NodeExistsError(f"group {self.name!r}: {name!r} is a group, not an array")
        return node

    def __delitem__(self, name: str) -> None:
        self._check_writable("delete a member")
        path = self._child_path(name)
        if nodes.load_node(self._store, path) is None:
            raise NodeNotFoundError(f"group {self.name!r}: no member {name!r}")
        nodes.delete_node(self._store, path)
        self._forget_consolidated()

    def _forget_consolidated(self) -> None:
        """After a change made here, list members from the store (v3 inline consolidated
        metadata is a snapshot; v2 .zmetadata is kept in step by save_node)."""
        if self._meta.consolidated is not None and self._meta.zarr_format == 3:
            self._meta = dataclasses.replace(self._meta, consolidated=None)
        elif self._meta.consolidated is not None:
            fresh = nodes.load_node(self._store, self._path) if not self._path else None
            self._meta = fresh if isinstance(fresh, GroupMeta) else \
                dataclasses.replace(self._meta, consolidated=None)


def _reopen(store: Store, path: str, read_only: bool) -> Group:
    meta = nodes.load_node(store, path)
    if not isinstance(meta, GroupMeta):
        raise NodeNotFoundError(f"no group at {path!r} in {store!r}")
    return Group(store, path, meta, read_only=read_only)
