"""The Group handle: a node holding arrays and other groups, with attributes.

A group opened from consolidated metadata answers ``members()``, ``g[name]`` and ``tree()``
from the consolidated entries, without reading the store. The entries are indexed once per
hierarchy (:class:`~zarrx.metadata.consolidated.ConsolidatedIndex`) and shared by every group
opened below, so walking the whole hierarchy takes time linear in its size. Array creation on a
group (``zeros``/``ones``/``full``/``empty``, their ``*_like`` forms, ``array``, the older
``create_dataset``/``require_dataset``) takes zarr-python's arguments.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import numpy as np

from zarrx.array import Array
from zarrx.creation import (Ancestors, check_node_names, create_array, create_order,
                             data_array, flag_arg, make_parents, shape_arg)
from zarrx.errors import (ArgumentError, ArgumentTypeError, GroupNotFoundError, NodeMismatchError,
                          NodeExistsError, NodeNotFoundError, StoreError, ZarrError, node_exists,
                          refuse_keywords)
from zarrx.group_get import TypedMembers
from zarrx.hierarchy import write_hierarchy
from zarrx.like import like_arguments
from zarrx.metadata import nodes
from zarrx.metadata.consolidated import ConsolidatedIndex, ConsolidatedView
from zarrx.metadata.json import gc_paused
from zarrx.metadata.make import attributes_arg
from zarrx.metadata.node_read import usable_child
from zarrx.metadata.model import ArrayMeta, GroupMeta
from zarrx.node import Node
from zarrx.store.base import Store

__all__ = ["Group"]


class Group(Node, TypedMembers):
    """A group in a store: ``g["a/b"]``, ``g.create_group``, ``g.create_array``, ``g.attrs``."""

    _kind = "group"

    def __init__(self, store: Store, path: str, meta: GroupMeta, *, read_only: bool = False) -> None:
        super().__init__(store, path, meta, read_only=read_only)
        self._cindex: ConsolidatedIndex | None = None

    # -- properties ---------------------------------------------------------------------------
    def _took(self, meta: GroupMeta) -> None:
        # the members stay answered from what the handle was opened with
        self._meta = dataclasses.replace(meta, consolidated=self._meta.consolidated)

    def __repr__(self) -> str:
        return f"<zarrx.Group {self.name!r}>"

    def __reduce__(self):
        # with its metadata, as arrays pickle (see Array.__reduce__)
        return (_rebuild, (self._store, self._path, self._shown_meta(), self._read_only))

    # -- children -----------------------------------------------------------------------------
    def _child_path(self, name: str) -> str:
        if not isinstance(name, str):
            raise ArgumentTypeError(f"group {self.name!r}: a member name is a str, found "
                                    f"{type(name).__name__} {name!r}")
        parts = [p for p in name.replace("\\", "/").split("/") if p]   # as node paths
        if not parts or any(p in (".", "..") for p in parts):
            raise ArgumentError(f"group {self.name!r}: invalid member name {name!r}")
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
        if isinstance(meta, GroupMeta):     # (a handle's attributes are its own: for_handle)
            meta = GroupMeta(attributes=meta.attributes, zarr_format=meta.zarr_format,
                             consolidated=index.view(full), extra=meta.extra, json=meta._json)
            return Group(self._store, path, meta, read_only=self._read_only)
        return Array(self._store, path, meta, read_only=self._read_only)

    def _lookup(self, name: str) -> Array | Group | None:
        if isinstance(name, str) and not name.strip("/"):     # "" or "/": this group itself
            return Group(self._store, self._path, self._meta, read_only=self._read_only)
        path = self._child_path(name)
        rel = path[len(self._path) + 1:] if self._path else path
        found = self._consolidated()
        if found is not None:
            index, prefix = found
            full = f"{prefix}/{rel}" if prefix else rel
            meta = index.entries.get(full)
            if meta is not None:
                return self._from_consolidated(index, full, path, meta)
        meta = nodes.load_node(self._store, path, self._meta.zarr_format)
        return None if meta is None else self._wrap(path, meta)

    def __getitem__(self, name: str) -> Array | Group:
        node = self._lookup(name)
        if node is None:
            raise NodeNotFoundError(f"group {self.name!r}: no member {name!r}")
        return node

    def get(self, path: str, default: Any = None) -> Any:
        """The array or group at ``path`` below this group, or ``default``."""
        node = self._lookup(path)
        return default if node is None else node

    def __contains__(self, name: object) -> bool:
        found = self._consolidated()
        if found is not None and isinstance(name, str) and name.strip("/"):
            path = self._child_path(name)       # listed: true without parsing the entry
            rel = path[len(self._path) + 1:] if self._path else path
            if (f"{found[1]}/{rel}" if found[1] else rel) in found[0].entries:
                return True
        return self._lookup(name) is not None    # type: ignore[arg-type]  # not a str: raises

    def _listing(self, parsed: bool = False) -> list[tuple[str, ArrayMeta | GroupMeta | None]]:
        """``(name, meta)`` of the children, sorted; from consolidated metadata ``(name,
        None)`` (an entry is parsed only when :meth:`_child` makes its node), or with
        ``parsed`` every child's entry parsed at once (:meth:`ConsolidatedIndex.children`)."""
        found = self._consolidated()
        if found is not None:
            index, prefix = found
            if parsed:
                return index.children(prefix, self._usable)     # type: ignore[return-value]
            return [(n, None) for n in index.names(prefix, self._usable)]
        return nodes.list_children(self._store, self._path, self._meta.zarr_format)  # type: ignore[return-value]

    def _kinds(self) -> list[tuple[str, bool]]:
        """``(name, whether an array)`` of the children, sorted; consolidated entries are not
        parsed."""
        found = self._consolidated()
        if found is not None:
            index, prefix = found
            return index.kinds(prefix, self._usable)
        return [(n, isinstance(m, ArrayMeta))
                for n, m in nodes.list_children(self._store, self._path, self._meta.zarr_format)]

    def _usable(self, name: str) -> bool:
        """Whether the store can address the child ``name`` a consolidated document lists;
        one it cannot (a name with a control character zarr-python wrote) is left out with
        a warning, as a listing of the store leaves it out."""
        return usable_child(self._store, nodes.join(self._path, name))

    def _child(self, name: str, meta: ArrayMeta | GroupMeta | None) -> Array | Group:
        """The node of the child ``name`` of a :meth:`_listing`."""
        path = f"{self._path}/{name}" if self._path else name
        found = self._consolidated()
        if found is None:
            return self._wrap(path, meta)   # type: ignore[arg-type]
        index, at = found
        full = f"{at}/{name}" if at else name
        return self._from_consolidated(index, full, path,
                                       index.entries[full] if meta is None else meta)

    def members(self, max_depth: int | None = 0, *, use_consolidated_for_children: bool = True
                ) -> tuple[tuple[str, Array | Group], ...]:
        """``(name, node)`` of the children, sorted, each group followed by its own members
        down to ``max_depth`` levels below the children (0: children only; None: the whole
        subtree). Names below the children are paths relative to this group. Each group is
        listed once: linear in the size of the hierarchy. ``use_consolidated_for_children`` is
        accepted for zarr-python's sake: a group opened from consolidated metadata lists its
        whole subtree from it either way."""
        if max_depth is not None and (not isinstance(max_depth, (int, np.integer)) or
                                      isinstance(max_depth, bool) or max_depth < 0):
            # another type: a TypeError, as in zarr-python (a negative int: a ValueError)
            cls = ArgumentError if isinstance(max_depth, (int, np.integer)) else \
                ArgumentTypeError
            raise cls(f"members: max_depth: expected None or an int >= 0, found {max_depth!r}")
        if self._consolidated() is None:
            return tuple(self._members(max_depth))
        with gc_paused():       # parsing entries makes many objects, none in a cycle
            return tuple(self._members(max_depth))

    def _members(self, max_depth: int | None) -> Iterator[tuple[str, Array | Group]]:
        stack = [(self, iter(self._listing(True)), "", 0)]
        while stack:
            group, children, prefix, depth = stack[-1]
            item = next(children, None)
            if item is None:
                stack.pop()
                continue
            name, meta = item
            node = group._child(name, meta)
            yield prefix + name, node
            if isinstance(node, Group) and (max_depth is None or depth < max_depth):
                stack.append((node, iter(node._listing(True)), f"{prefix}{name}/", depth + 1))

    def nmembers(self, max_depth: int | None = 0) -> int:
        """How many members ``members(max_depth)`` lists."""
        return len(self.members(max_depth))

    def keys(self) -> Iterator[str]:
        return (name for name, _ in self._listing())

    def __iter__(self) -> Iterator[str]:
        return self.keys()

    def __len__(self) -> int:
        return len(self._listing())

    def group_keys(self) -> Iterator[str]:
        return (n for n, is_array in self._kinds() if not is_array)

    def array_keys(self) -> Iterator[str]:
        return (n for n, is_array in self._kinds() if is_array)

    def groups(self) -> Iterator[tuple[str, Group]]:
        for n in list(self.group_keys()):
            yield n, self[n]  # type: ignore[misc]

    def arrays(self) -> Iterator[tuple[str, Array]]:
        for n in list(self.array_keys()):
            yield n, self[n]  # type: ignore[misc]

    def group_values(self) -> Iterator[Group]:
        return (g for _, g in self.groups())

    def array_values(self) -> Iterator[Array]:
        return (a for _, a in self.arrays())

    def tree(self, expand: bool | None = None, level: int | None = None, *,
             max_depth: int | None = None, max_nodes: int = 500, plain: bool = False) -> str:
        """A readable text tree of the hierarchy below this group: ``level`` levels of groups
        opened below the children (zarr-python's ``level``; ``max_depth`` counts the children
        too: ``max_depth = level + 1``), at most ``max_nodes`` nodes. ``expand`` and ``plain``
        are accepted for zarr-python's sake: the tree is always plain text."""
        from zarrx.info import tree
        for arg, v in (("level", level), ("max_depth", max_depth), ("max_nodes", max_nodes)):
            if (v is not None or arg == "max_nodes") and (
                    not isinstance(v, (int, np.integer)) or isinstance(v, bool)):
                raise ArgumentTypeError(f"tree: {arg}: expected an int"
                                        f"{'' if arg == 'max_nodes' else ' or None'}, found "
                                        f"{type(v).__name__} {v!r}")
        for arg, v in (("level", level), ("max_depth", max_depth), ("max_nodes", max_nodes)):
            if v is not None and v < 0:     # a ValueError, as zarr-python raises for level
                raise ArgumentError(f"tree: {arg}: expected an int >= 0, found {v}")
        return tree(self, max_depth if level is None else level + 1, max_nodes=int(max_nodes))

    @property
    def synchronizer(self) -> None:
        """Always None, as in zarr-python 3, which keeps the name from zarr-python 2 (whose
        synchronizers neither library takes)."""
        return None

    @property
    def info(self) -> str:
        """Name, type, Zarr format, read-only, store type."""
        from zarrx.info import group_info
        return group_info(self, complete=False)

    def info_complete(self) -> str:
        """``info`` plus the number of members, arrays and groups in the whole hierarchy."""
        from zarrx.info import group_info
        return group_info(self, complete=True)

    def update_attributes(self, new_attributes: dict[str, Any]) -> Group:
        """Merge ``new_attributes`` into the attributes (one metadata write); returns the group."""
        self.attrs.update(new_attributes)
        return self

    # -- creating children --------------------------------------------------------------------
    def create_group(self, name: str, *, attributes: dict | None = None,
                     overwrite: bool = False) -> Group:
        path = self._child_path(name)            # a name of another type: TypeError first
        self._check_writable("create a group")
        overwrite = flag_arg(overwrite, "create_group", "overwrite")
        check_node_names(name.replace("\\", "/").split("/"), name,
                         f"group {self.name!r}: create_group")
        # checked before anything is written: the groups above or the node replaced
        meta = GroupMeta(attributes=attributes_arg(attributes, "create_group"),
                         zarr_format=self._meta.zarr_format)
        # the new group and the nodes between: one batched read for the checks
        above = Ancestors(self._store, path, base=self._path)

        def exists(found: Any) -> ZarrError:
            return node_exists(isinstance(found, ArrayMeta),
                               f"group {self.name!r}: a node already exists at {name!r}")
        existing = above(path)
        if existing is not None and not overwrite:
            raise exists(existing)
        make_parents(self._store, self._path, path, self._meta.zarr_format, "create_group",
                     above)
        if existing is not None or overwrite:
            nodes.delete_node(self._store, path)
        nodes.save_node(self._store, path, meta, exists=None if overwrite else exists)
        self._forget_consolidated()
        return Group(self._store, path, meta)

    def require_group(self, name: str, *, overwrite: bool = False,
                      attributes: dict | None = None) -> Group:
        """The group ``name``, created (with ``attributes``) when missing, or replaced by an
        empty one with ``overwrite=True``; a ``NodeMismatchError`` (a ``TypeError``) when an
        array is there. Another keyword is a ``TypeError`` whether the group exists or not, as
        in zarr-python."""
        if flag_arg(overwrite, "require_group", "overwrite"):
            return self.create_group(name, overwrite=True, attributes=attributes)
        node = self._lookup(name)
        if node is None:
            try:
                return self.create_group(name, attributes=attributes)
            except NodeExistsError:     # another writer created it since it was looked for
                node = self._lookup(name)
                if node is None:
                    raise
        if not isinstance(node, Group):
            raise NodeMismatchError(f"group {self.name!r}: {name!r} is an array, not a group")
        return node

    def require_groups(self, *names: str) -> tuple[Group, ...]:
        return tuple(self.require_group(n) for n in names)

    def create_hierarchy(self, nodes: dict[str, Any], *, overwrite: bool = False
                         ) -> Iterator[tuple[str, Array | Group]]:
        """Create every node of ``nodes`` (path below this group -> metadata, of this group's
        Zarr format) and the groups between, as :func:`zarrx.create_hierarchy` does; returns
        an iterator of ``(path below this group, node)``, parents first."""
        self._check_writable("create a hierarchy")
        written = write_hierarchy(self._store, nodes, overwrite=overwrite, group=self._path,
                                  zarr_format=self._meta.zarr_format)
        self._forget_consolidated()
        cut = len(self._path) + 1 if self._path else 0
        return iter([(path[cut:], self._wrap(path, meta)) for path, meta in written])

    def create_array(self, name: str, **kwargs: Any) -> Array:
        # the array goes into this group's store, at name (zarr-python takes neither keyword)
        refuse_keywords("create_array", kwargs, ("store", "path"))
        path = self._child_path(name)          # parents: made by create_array, once all is checked
        self._check_writable("create an array")
        kwargs.setdefault("zarr_format", self._meta.zarr_format)
        # this group is there: the groups above it are not read again (as create_group does)
        same = kwargs["zarr_format"] == self._meta.zarr_format
        arr = create_array(self._store, name=path, _base=self._path if same else "", **kwargs)
        self._forget_consolidated()
        return arr

    def create(self, name: str, **kwargs: Any) -> Array:
        """zarr-python's other name of :meth:`create_array` (kept from zarr-python 2)."""
        return self.create_array(name, **kwargs)

    def require_array(self, name: str, *, shape: Any, dtype: Any = None, exact: bool = False,
                      **kwargs: Any) -> Array:
        """The array ``name``, created (with ``create_array``'s arguments) when missing. An
        existing one must have ``shape`` and a dtype ``dtype`` can be cast from (``exact``: the
        same dtype), else a ``NodeMismatchError`` (a ``TypeError``) says how it differs."""
        node = self._lookup(name)
        if node is None:
            try:
                return self.create_array(name, shape=shape, dtype=dtype, **kwargs)
            except NodeExistsError:     # another writer created it since it was looked for
                node = self._lookup(name)
                if node is None:
                    raise
        if not isinstance(node, Array):
            raise NodeMismatchError(f"group {self.name!r}: {name!r} is a group, not an array")
        want = shape_arg(shape)
        if want != node.shape:
            raise NodeMismatchError(f"group {self.name!r}: array {name!r} has shape "
                                    f"{node.shape}, not the required {want}")
        if dtype is not None:
            from zarrx.metadata.dtype_input import resolve_dtype
            dt = resolve_dtype(dtype, node.zarr_format)[0].numpy
            have = node.metadata.data_type.numpy
            if (have != dt) if exact else not np.can_cast(have, dt):
                raise NodeMismatchError(
                    f"group {self.name!r}: array {name!r} has dtype {node.dtype}, "
                    f"{'not' if exact else 'which does not cast safely to'} the required {dt}")
        return node

    # -- zarr-python's array creation on a group ------------------------------------------------
    def _new_array(self, what: str, name: str, kwargs: dict[str, Any], **own: Any) -> Array:
        """``create_array`` for the method ``what``, which sets the keywords ``own`` itself:
        given again, or ``store=`` / ``path=``, they are refused naming ``what``."""
        refuse_keywords(what, kwargs, ("store", "path", *own))
        return self.create_array(name, **own, **create_order(kwargs, self._meta.zarr_format, what))

    def zeros(self, *, name: str, shape: Any, **kwargs: Any) -> Array:
        return self._new_array("zeros", name, kwargs, shape=shape, fill_value=0)

    def ones(self, *, name: str, shape: Any, **kwargs: Any) -> Array:
        return self._new_array("ones", name, kwargs, shape=shape, fill_value=1)

    def full(self, *, name: str, shape: Any, fill_value: Any, **kwargs: Any) -> Array:
        return self._new_array("full", name, kwargs, shape=shape, fill_value=fill_value)

    def empty(self, *, name: str, shape: Any, **kwargs: Any) -> Array:
        return self._new_array("empty", name, kwargs, shape=shape)

    def zeros_like(self, *, name: str, data: Any, **kwargs: Any) -> Array:
        refuse_keywords("zeros_like", kwargs, ("store", "path", "fill_value"))
        return self.zeros(name=name, **like_arguments(data, kwargs, fill=False, into=self))

    def ones_like(self, *, name: str, data: Any, **kwargs: Any) -> Array:
        refuse_keywords("ones_like", kwargs, ("store", "path", "fill_value"))
        return self.ones(name=name, **like_arguments(data, kwargs, fill=False, into=self))

    def full_like(self, *, name: str, data: Any, **kwargs: Any) -> Array:
        """Like ``data``, every cell reading as ``fill_value`` (default: that of ``data``)."""
        refuse_keywords("full_like", kwargs, ("store", "path"))
        return self.create_array(name, **like_arguments(data, kwargs, fill=True, into=self))

    def empty_like(self, *, name: str, data: Any, **kwargs: Any) -> Array:
        refuse_keywords("empty_like", kwargs, ("store", "path"))
        return self.create_array(name, **like_arguments(data, kwargs, fill=True, into=self))

    def array(self, name: str, data: Any = None, **kwargs: Any) -> Array:
        """An array holding ``data`` (shape and dtype from it unless given)."""
        return self.create_dataset(name, data=data, **kwargs)

    def create_dataset(self, name: str, *, shape: Any = None, data: Any = None,
                       **kwargs: Any) -> Array:
        """The Zarr v2-era name of :meth:`create_array`; ``data`` alone gives the shape."""
        if data is not None and not isinstance(data, np.ndarray):
            data = data_array(data, f"group {self.name!r}: create_dataset({name!r})")
        if shape is None:
            if data is None:
                raise ArgumentError(f"group {self.name!r}: create_dataset({name!r}) needs "
                                    f"shape= or data=")
            shape = data.shape
        return self.create_array(name, shape=shape, data=data, **kwargs)

    def require_dataset(self, name: str, *, shape: Any, dtype: Any = None, exact: bool = False,
                        **kwargs: Any) -> Array:
        """The Zarr v2-era name of :meth:`require_array`."""
        return self.require_array(name, shape=shape, dtype=dtype, exact=exact, **kwargs)

    def __setitem__(self, name: str, value: Any) -> None:
        """``g[name] = data``: an array holding ``data``, replacing whatever is at ``name``."""
        self._child_path(name)                  # a name of another type: TypeError first
        data = value[...] if isinstance(value, Array) else \
            data_array(value, f"group {self.name!r}: setting member {name!r}")
        self.create_array(name, shape=data.shape, data=data, overwrite=True)

    def move(self, source: str, dest: str) -> None:
        """Move the member at ``source`` (with everything below it) to ``dest``, creating the
        groups above ``dest``; ``dest`` must not exist."""
        src, dst = self._child_path(source), self._child_path(dest)
        self._check_writable("move a member")
        check_node_names(dest.replace("\\", "/").split("/"), dest, f"group {self.name!r}: move")
        above = Ancestors(self._store, dst, base=self._path, also=(src,))   # one batched read
        if above(src) is None:
            raise NodeNotFoundError(f"group {self.name!r}: no member {source!r} to move")
        in_the_way = above(dst)
        if in_the_way is not None:
            raise node_exists(isinstance(in_the_way, ArrayMeta),
                              f"group {self.name!r}: cannot move {source!r} to {dest!r}: "
                              f"a node already exists there")
        if dst.startswith(src + "/"):
            raise ArgumentError(f"group {self.name!r}: cannot move {source!r} into itself "
                                f"({dest!r})")
        if not self._store.supports_deletes:
            # a move copies, then deletes the source: refused before anything is copied
            raise StoreError(f"group {self.name!r}: cannot move {source!r} to {dest!r}: "
                             f"{self._store!r} cannot delete objects, so the source would stay")
        make_parents(self._store, self._path, dst, self._meta.zarr_format, "move", above)
        nodes.move_node(self._store, src, dst)
        self._forget_consolidated()

    def __delitem__(self, name: str) -> None:
        path = self._child_path(name)
        self._check_writable("delete a member")
        if nodes.load_node(self._store, path) is None:
            raise NodeNotFoundError(f"group {self.name!r}: no member {name!r}")
        nodes.delete_node(self._store, path)
        self._forget_consolidated()

    def _forget_consolidated(self) -> None:
        """After a change made here: a group that answered from consolidated metadata reads
        its own again (writes keep it in step, see :mod:`zarrx.metadata.nodes`), or lists its
        members from the store when it has none (one opened through a consolidated parent)."""
        if self._meta.consolidated is not None:
            fresh = nodes.load_node(self._store, self._path, consolidated=True)
            self._meta = fresh if isinstance(fresh, GroupMeta) else \
                dataclasses.replace(self._meta, consolidated=None)


def _rebuild(store: Store, path: str, meta: GroupMeta, read_only: bool) -> Group:
    return Group(store, path, meta, read_only=read_only)


def _reopen(store: Store, path: str, read_only: bool, zarr_format: int | None = None) -> Group:
    """What groups pickled by zarrx 0.1 unpickle through: the metadata is read again."""
    meta = nodes.load_node(store, path, zarr_format)
    if not isinstance(meta, GroupMeta):
        raise GroupNotFoundError(f"no group at {path!r} in {store!r}")
    return Group(store, path, meta, read_only=read_only)
