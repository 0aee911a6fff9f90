"""Writing a hierarchy of nodes from their metadata in one step: the work behind
:func:`zarrx.create_hierarchy` and :meth:`zarrx.Group.create_hierarchy`. Every node is checked
before anything is written; the implicit groups above the nodes are created too."""
from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any

from zarrx import config
from zarrx.chunk_io import chunk_shape_at, codec_plan
from zarrx.creation import Ancestors, check_format, check_parents, node_path
from zarrx.node_paths import parent_exists
from zarrx.errors import (ArgumentError, ArgumentTypeError, NodeExistsError, ZarrError,
                          node_exists)
from zarrx.metadata import nodes, parse_array_v2, parse_group_v2, parse_v3
from zarrx.metadata.leftovers import clear_leftovers
from zarrx.metadata.model import ArrayMeta, GroupMeta
from zarrx.store.base import Store

__all__ = ["write_hierarchy"]


def _as_meta(doc: Any, path: str) -> ArrayMeta | GroupMeta:
    """A node's metadata: a zarrx ``ArrayMeta``/``GroupMeta``, a metadata object with
    ``to_dict()`` (zarr-python's), or a metadata document as a dict."""
    if isinstance(doc, (ArrayMeta, GroupMeta)):
        return doc
    if hasattr(doc, "to_dict") and callable(doc.to_dict):
        doc = doc.to_dict()
    if not isinstance(doc, Mapping):
        raise ArgumentTypeError(f"create_hierarchy: nodes[{path!r}]: expected an ArrayMeta, a "
                                f"GroupMeta or a metadata document, found {type(doc).__name__}")
    doc = dict(doc)
    where = f"create_hierarchy nodes[{path!r}]"
    if doc.get("zarr_format") == 2:
        attrs = doc.pop("attributes", {}) or {}
        doc.pop("node_type", None)
        if "shape" in doc:
            return parse_array_v2(doc, attrs, where)
        return parse_group_v2({"zarr_format": 2}, attrs, where)
    return parse_v3(doc, where)


def _check_codecs(meta: ArrayMeta, path: str) -> None:
    """Refuse the array to be created at ``path`` when zarrx could neither read nor write its
    chunks (an unknown codec, a configuration its chunks cannot take), as ``create_array``
    refuses it, before anything is written."""
    shape = meta.layout.read_shape or chunk_shape_at(meta.chunk_grid, (0,) * len(meta.shape))
    codec_plan(meta, shape, path)


def _sorted_below(paths: Collection[str], keys: list[str]) -> dict[str, list[str]]:
    """The ``keys`` below each of ``paths`` (none below another), in their order."""
    below: dict[str, list[str]] = {path: [] for path in paths}
    for key in keys:
        node = key
        while "/" in node:
            node = node.rpartition("/")[0]
            if node in below:
                below[node].append(key)
                break
    return below


def write_hierarchy(st: Store, nodes_in: Mapping[Any, Any], *, overwrite: bool = False,
                    group: str | None = None, zarr_format: int | None = None,
                    keys_below: list[str] | None = None
                    ) -> list[tuple[str, ArrayMeta | GroupMeta]]:
    """Write every node of ``nodes_in`` (path -> metadata) and the missing groups above them,
    parents first; returns ``(path, metadata)`` of each node written. With ``group`` (the
    path of an existing group of Zarr format ``zarr_format``), the paths are below that group
    and the nodes must have its format. The nodes hold one Zarr format; an existing node is an
    error unless ``overwrite``. ``keys_below`` (with ``overwrite`` and ``group``): every key
    below ``group``, from one listing of it, which says what is below each node replaced
    (each is listed otherwise)."""
    if not isinstance(nodes_in, Mapping):
        raise ArgumentTypeError(f"create_hierarchy: nodes: expected a mapping of paths to "
                                f"metadata, found {type(nodes_in).__name__}")
    base = group or ""
    metas: dict[str, ArrayMeta | GroupMeta] = {}
    for key, doc in nodes_in.items():
        rel = node_path(key, "create_hierarchy", f"nodes key {key!r}", new=True)
        if group is not None and not rel:
            raise ArgumentError(f"create_hierarchy: nodes[{key!r}] is the group {group or '/'!r} "
                                f"itself, which exists; name its members relative to it")
        path = nodes.join(base, rel) if base else rel
        meta = metas[path] = _as_meta(doc, key)
        if isinstance(meta, ArrayMeta):
            _check_codecs(meta, path)
    formats = {m.zarr_format for m in metas.values()}
    if len(formats) > 1:
        v2 = sorted(p for p, m in metas.items() if m.zarr_format == 2)
        raise ArgumentError(f"create_hierarchy: nodes of both Zarr formats; Zarr v2 at {v2}, "
                            f"the rest Zarr v3: a hierarchy holds one format")
    fmt = formats.pop() if formats else (zarr_format or config.get("default_zarr_format"))
    fmt = check_format(fmt)
    if zarr_format is not None and fmt != zarr_format:
        raise ArgumentError(f"create_hierarchy: the nodes are Zarr v{fmt}, but the group "
                            f"{group or '/'!r} is Zarr v{zarr_format}: a hierarchy holds one "
                            f"format")
    implicit: dict[str, GroupMeta] = {}

    def exists(path: str) -> Callable[[Any], ZarrError]:
        def error(found: Any) -> ZarrError:
            is_array = isinstance(found, ArrayMeta)
            return node_exists(is_array, f"create_hierarchy: {'an array' if is_array else 'a group'} "
                                         f"already exists at {path or '/'!r} in {st!r}; pass "
                                         f"overwrite=True to replace it")
        return error

    # every node and every node above them (below ``group``; replacing, from the store root,
    # as those say which consolidated documents to keep in step): one batched read for all
    found = Ancestors(st, *metas, base="" if overwrite else base, replacing=overwrite)
    for path in sorted(metas, key=lambda p: (p.count("/"), p)):
        existing = found(path)
        if existing is not None and not overwrite:
            raise exists(path)(existing)
        for parent in (check_parents(st, base, path, fmt, "create_hierarchy", found)
                       if path else []):
            if isinstance(metas.get(parent), ArrayMeta):
                raise NodeExistsError(f"create_hierarchy: {path!r} is inside {parent!r}, which "
                                      f"nodes makes an array")
            if parent not in metas:
                implicit[parent] = GroupMeta(zarr_format=fmt)  # type: ignore[arg-type]
    # overwrite: the nodes there go, with everything below them (objects left without a node
    # document too), each subtree once; groups above the nodes inside one are made anew
    replaced = {p for p in metas if overwrite and not _inside(p, metas)}
    # deleted together: each consolidated document listing them drops their entries as it
    # lists them as pending, once, before any object goes, and save_nodes settles them with
    # the new nodes' entries (unless a node carries consolidated metadata, which lists those
    # below it: then the delete settles them, and each node is written alone)
    alone = any(isinstance(m, GroupMeta) and m.consolidated is not None for m in metas.values())
    listed = None if keys_below is None or group is None or not all(replaced) else \
        _sorted_below(replaced, keys_below)
    pending = nodes.delete_nodes(st, sorted(replaced), found.documents(), settle=alone,
                                 below=listed) if replaced else None
    for path in metas if replaced else ():
        above = path.rpartition("/")[0]
        while above and above not in metas and _inside(above, replaced):
            implicit[above] = GroupMeta(zarr_format=fmt)  # type: ignore[arg-type]
            above = above.rpartition("/")[0]
    if not overwrite:
        for path, meta in metas.items():
            if isinstance(meta, ArrayMeta):
                clear_leftovers(st, path)
    order = sorted({**implicit, **metas}, key=lambda p: (p.count("/") if p else -1, p))
    below = _first_below(implicit, metas)
    items = [(path, implicit[path], parent_exists(st, path, below[path], "create_hierarchy"))
             if path not in metas else (path, metas[path], None if overwrite else exists(path))
             for path in order]
    if alone:
        for item in items:
            nodes.save_nodes(st, [item])
    else:
        nodes.save_nodes(st, items, None if replaced else found.documents(), pending)
    return [(path, meta) for path, meta, _ in items]


def _inside(path: str, tops: Mapping[str, Any] | set[str]) -> bool:
    """Whether one of ``tops`` is above ``path``."""
    while path:
        path = path.rpartition("/")[0] if "/" in path else ""
        if path in tops:
            return True
    return False


def _first_below(implicit: Mapping[str, Any], metas: Mapping[str, Any]) -> dict[str, str]:
    """For each implicit group, the first (sorted) of the nodes below it: the node its
    creation is for, as its errors name it."""
    out: dict[str, str] = {}
    for path in sorted(metas):
        above = path
        while above:
            above = above.rpartition("/")[0] if "/" in above else ""
            if above in implicit and above not in out:
                out[above] = path
    return out
