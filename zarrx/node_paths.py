"""Node paths and the groups above a new node: normalising a node path argument, reading a
new node's ancestors once (:class:`Ancestors`), checking them (no array in the way, one Zarr
format) and creating the implicit groups between (importable from :mod:`zarrx.creation`)."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from zarrx import config
from zarrx.errors import (ArgumentError, ArgumentTypeError, ContainsArrayError, MetadataError,
                          ZarrError)
from zarrx.metadata import nodes
from zarrx.metadata.model import ArrayMeta, GroupMeta
from zarrx.store import Store
from zarrx.store.base import ByteRange

__all__ = ["Ancestors", "ancestors_for", "node_path", "check_node_names", "check_v3_names",
           "inherited_format", "check_parents", "make_parents", "save_parents", "save_parent",
           "parent_exists"]

_FIRST_BYTE = ByteRange.trusted(0, 1)


def _ancestors(base: str, path: str) -> list[str]:
    parts = path[len(base):].strip("/").split("/")[:-1]
    return ([""] if not base else []) + [nodes.join(base, "/".join(parts[:i + 1]))
                                         for i in range(len(parts))]


class Ancestors:
    """The nodes at ``paths`` (those a call creates) and every node above them, below ``base``
    (from the store root when ``base`` is ""): what creating them checks (the format a new
    node inherits, an array in the way, a node already there). Their documents are read in
    one batch (:func:`~zarrx.metadata.nodes.load_nodes`: one round trip on a remote store)
    when one of them is first asked for, and each node is parsed when it is first asked for,
    so errors come where the checks look, in their order. ``also``: other paths read in that
    batch. ``found(path)`` is the node at ``path`` (None when there is none), as
    :func:`~zarrx.metadata.nodes.load_node` gives it; a path outside the set is read alone.
    ``consolidated_at``: paths whose v2 ``.zmetadata`` the batch reads too, so that
    ``found.node(path, zarr_format, consolidated)`` answers as ``load_node`` with those
    arguments (opening a node that mode ``a`` creates when it is missing). ``replacing``:
    the nodes at ``paths`` may be replaced (``overwrite``), which keeps the consolidated
    metadata above them in step: whether the groups between the root and each holds a v2
    ``.zmetadata`` is read in the batch too (its first byte; see :meth:`documents`)."""

    __slots__ = ("store", "_paths", "_batch", "_consolidated_at", "_raw")

    def __init__(self, store: Store, *paths: str, base: str = "",
                 also: Iterable[str] = (), consolidated_at: Iterable[str] = (),
                 replacing: bool = False) -> None:
        self.store = store
        # (``base`` itself too: a group the caller holds may have gone since it was read)
        wanted = [*([base] if base else []),
                  *(p for path in paths for p in (*_ancestors(base, path), path))]
        self._paths = list(dict.fromkeys([*wanted, *also]))
        self._consolidated_at = tuple(consolidated_at)
        groups = dict.fromkeys(p for path in paths if replacing
                               for p in _ancestors("", path) if p)
        self._raw = [(nodes.join(g, ".zmetadata"), _FIRST_BYTE) for g in groups]
        self._batch: nodes.NodeBatch | None = None

    def _read(self) -> nodes.NodeBatch:
        if self._batch is None:
            self._batch = nodes.load_nodes(self.store, self._paths,
                                           consolidated_at=self._consolidated_at, raw=self._raw)
        return self._batch

    def __call__(self, path: str) -> ArrayMeta | GroupMeta | None:
        batch = self._read()
        if path not in batch:
            return nodes.load_node(self.store, path)
        return batch.checked(path)

    def documents(self) -> dict[str, Any]:
        """The documents the batch read, by key (None when absent)."""
        return self._read().documents()

    def node(self, path: str, zarr_format: int | None = None,
             consolidated: bool | None = None) -> ArrayMeta | GroupMeta | None:
        """The node at ``path`` as ``load_node(store, path, zarr_format,
        consolidated=consolidated)`` gives it, from the batch."""
        return self._read().node(path, zarr_format, consolidated)


def ancestors_for(store: Store, path: str, found: Ancestors | None,
                  replacing: bool = False) -> Ancestors:
    """``found`` when a caller read it from ``store``, else the node at ``path`` and those
    above it, to be read (once, for every check of a creation)."""
    if found is not None and found.store is store:
        return found
    return Ancestors(store, path, replacing=replacing)


def node_path(path: Any, what: str, arg: str = "path", *, new: bool = False) -> str:
    """The node path argument ``path`` of ``what`` with backslashes as slashes, without its outer
    slashes and with repeated slashes as one, as the Zarr v2 specification and zarr-python
    normalise it ("" for None); ArgumentTypeError when it is
    not a ``str``, ArgumentError (a ValueError, as zarr-python raises) for a ``.`` or ``..``
    segment, which would name a node outside the path. ``new``: the path of a node to create,
    which no segment may name as a metadata document is named (:func:`check_node_names`)."""
    if path is None:
        return ""
    if not isinstance(path, str):
        raise ArgumentTypeError(f"{what}: {arg}: expected a str, found {type(path).__name__} "
                                f"{path!r}")
    parts = [p for p in path.replace("\\", "/").split("/") if p]
    if any(p in (".", "..") for p in parts):
        raise ArgumentError(f"{what}: {arg}: expected a node path without '.' or '..' segments, "
                            f"found {path!r}")
    if new:
        check_node_names(parts, path, f"{what}: {arg}")
    return "/".join(parts)


def check_node_names(parts: list[str], path: str, where: str) -> None:
    """ArgumentError for a segment of a node path that is a metadata document's name
    (``zarr.json``, ``.zarray``, ...): the node would sit where its parent's documents are;
    or that UTF-8 cannot encode (a lone surrogate, as ``os.fsdecode`` makes of bytes that
    are not UTF-8): metadata documents are UTF-8 JSON, and consolidated metadata names the
    node in them, as attributes are refused such text."""
    for p in parts:
        if p in nodes.DOCUMENT_NAMES:
            raise ArgumentError(f"{where}: expected a node path without metadata document "
                                f"names, found {p!r} in {path!r}")
        if not p.isascii():
            try:
                p.encode("utf-8")
            except UnicodeEncodeError:
                raise ArgumentError(f"{where}: expected node names that UTF-8 can encode (no "
                                    f"lone surrogates), found {p!r} in {path!r}") from None


def check_v3_names(paths: list[str], path: str, what: str) -> None:
    """ArgumentError when the last segment of one of ``paths`` (Zarr v3 nodes about to be
    created for ``path``) is a name the Zarr v3 specification forbids: one made only of
    periods (``"..."``), or one starting with ``"__zarr"``, which it reserves for core Zarr
    data. Other names starting with ``"__"`` (which it reserves too) are created: xarray
    stores an unnamed DataArray as ``__xarray_dataarray_variable__``, and zarr-python writes
    it (see docs/SPEC.md)."""
    for p in paths:
        name = p.rpartition("/")[2]
        if name and (name.strip(".") == "" or name.startswith("__zarr")):
            raise ArgumentError(f"{what}: cannot create {path!r}: expected Zarr v3 node names "
                                f"not made only of periods and not starting with '__zarr' "
                                f"(reserved by the Zarr v3 specification), found {name!r}")


def inherited_format(store: Store, path: str, zarr_format: int | None,
                     found: Ancestors | None = None) -> int:
    """``zarr_format``, or when it is None the format of the nearest existing node above
    ``path`` (a node created inside a Zarr v2 hierarchy is Zarr v2), else the setting
    ``default_zarr_format`` (3 unless changed). ``found``: the nodes above ``path`` as the
    caller's other checks read them (see :class:`Ancestors`)."""
    if zarr_format is not None:
        return zarr_format
    if found is None:
        found = Ancestors(store, path)
    for cur in reversed(_ancestors("", path)) if path else ():
        meta = found(cur)
        if meta is not None:
            return meta.zarr_format
    return config.get("default_zarr_format")


def check_parents(store: Store, base: str, path: str, zarr_format: int, what: str,
                  found: Ancestors | None = None) -> list[str]:
    """The groups to create between ``base`` and ``path``, after checking that no array is in
    the way and that the nearest existing group has ``zarr_format``: zarr-python lists only
    children of their parent's format, so a hierarchy never mixes the two. The names of the
    Zarr v3 nodes to create (``path`` and those groups) are checked (``check_v3_names``).
    ``found``: the nodes above ``path``, read once for all the checks (:class:`Ancestors`)."""
    if found is None:
        found = Ancestors(store, path, base=base)
    if base and not isinstance(found(base), GroupMeta):
        # the group the caller holds was deleted or replaced meanwhile: checked from the root
        # (the groups above it read one by one), so the node comes with its parents again
        base = ""
    missing, parent = [], None
    for cur in ([base] if base else []) + _ancestors(base, path):
        meta = found(cur)
        if meta is None:
            missing.append(cur)
        elif isinstance(meta, ArrayMeta):
            raise ContainsArrayError(f"{what}: cannot create {path!r}: {cur or '/'!r} is an "
                                     f"array in {store!r} (an array has no children)")
        else:
            parent = (cur, meta)
    if parent is not None and parent[1].zarr_format != zarr_format:
        fmt = parent[1].zarr_format
        hint = f"use zarr_format={fmt} or a separate store"
        if what == "copy":                  # a copy keeps the format: say what changes it
            hint = (f"convert it instead (zarrx convert --zarr-format {fmt}, "
                    f"zarrx.convert(zarr_format={fmt})), or copy it into a separate store")
        elif what.startswith("convert"):
            hint = (f"pass --zarr-format {fmt} (zarr_format={fmt}), or convert into a "
                    f"separate store")
        raise MetadataError(
            f"{what}: cannot create a Zarr v{zarr_format} node at {path!r} inside the Zarr "
            f"v{fmt} group {parent[0] or '/'!r} in {store!r}: a hierarchy holds one Zarr "
            f"format (readers do not list children of another format); {hint}")
    if zarr_format == 3:
        check_v3_names([*missing, path], path, what)
    return missing


def make_parents(store: Store, base: str, path: str, zarr_format: int,
                 what: str = "create", found: Ancestors | None = None) -> None:
    """Create the implicit groups between ``base`` and ``path`` (``g.create_group("a/b/c")``);
    from the store root (``base == ""``), the root group too, as zarr-python does. Checked
    first (see ``check_parents``), so nothing is written when the node cannot be created."""
    if found is None:
        found = Ancestors(store, path, base=base)
    save_parents(store, check_parents(store, base, path, zarr_format, what, found), path,
                 zarr_format, what, found)


def save_parents(store: Store, missing: list[str], path: str, zarr_format: int,
                 what: str = "create", found: Ancestors | None = None) -> None:
    """Create the implicit groups ``missing`` (parents first) above ``path``, each unless
    another writer made it meanwhile (then kept as it is: a group made at the same moment keeps
    its attributes), together (:func:`~zarrx.metadata.nodes.save_nodes`: a path ``n`` groups
    deep costs the store reads of one group, not ``n``). ``found``: the nodes above ``path``
    as the caller read them (their documents are not read again)."""
    nodes.save_nodes(store, [(cur, GroupMeta(zarr_format=zarr_format),  # type: ignore[arg-type]
                              parent_exists(store, cur, path, what)) for cur in missing],
                     None if found is None or found.store is not store else found.documents())


def parent_exists(store: Store, cur: str, path: str, what: str
                  ) -> Callable[[Any], ZarrError | None]:
    """The ``exists`` of the implicit group ``cur`` above ``path`` (see
    :func:`~zarrx.metadata.nodes.save_node`): a group made there meanwhile is kept, an array
    is a ContainsArrayError."""
    def error(found: Any) -> ZarrError | None:
        if isinstance(found, ArrayMeta):
            return ContainsArrayError(f"{what}: cannot create {path!r}: {cur or '/'!r} is "
                                      f"an array in {store!r} (an array has no children)")
        return None
    return error


def save_parent(store: Store, cur: str, path: str, zarr_format: int,
                what: str = "create") -> None:
    """Create the implicit group ``cur`` above ``path`` (see :func:`save_parents`)."""
    save_parents(store, [cur], path, zarr_format, what)
