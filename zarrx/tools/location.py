"""Where a node lives, as the tools name it: a store plus the node's path inside it.

A location is written the way a user points at data:

- a directory: ``data.zarr``, or a node inside it, ``data.zarr/group/array``. The store's root is
  the top of the hierarchy: the walk goes up from the named directory while the parent
  directory holds a Zarr group, so the node keeps its name in the hierarchy (``/group/array``);
  directories that do not exist yet are passed over, to become groups of the hierarchy above;
- a path inside a zip archive: ``archive.zip`` or ``archive.zip/group/array`` (the first path
  component ending in ``.zip`` that is not a directory is the archive);
- a URL (``s3://bucket/data.zarr``, ``https://...``), configured by ``storage_options``; the URL
  is the store's root; an fsspec chain ending at a local path (``zip::a.zip``) is the URL it
  means (``zip::file:///here/a.zip``), as for ``zarrx.open``;
- a :class:`~zarrx.store.Store` (its root), or an open :class:`~zarrx.Array` or
  :class:`~zarrx.Group`.
"""
from __future__ import annotations

import inspect
import json
import os
import zipfile
from dataclasses import dataclass
from typing import Any

from zarrx.array import Array
from zarrx.errors import ContainsArrayError, ListingUnsupportedError, NodeExistsError, \
    NodeNotFoundError, ReadOnlyError, StoreError, ZarrError
from zarrx.group import Group
from zarrx.metadata import nodes
from zarrx.metadata.json import document_range, max_document_bytes
from zarrx.store import Store, ZipStore, make_store
from zarrx.store.base import absolute_path
from zarrx.store.inputs import file_url_path, local_chain, one_slash_url
from zarrx.store.remote.urls import redact
from zarrx.tools.pending import RECORD, recorded

__all__ = ["Location", "resolve", "writable_destination", "open_node", "parse_storage_options",
           "overlaps", "overlap",
           "writes_zip", "check_overwrite_destination",
           "opened_here", "check_zip_destination", "release", "side_options",
           "interrupted_at", "node_holding"]

_MAX_WALK_UP = 64


@dataclass(frozen=True)
class Location:
    """A store and the path of a node in it (``""``: the store's root)."""

    store: Store
    path: str
    text: str            # as the user wrote it (a URL without credentials), for messages

    @property
    def name(self) -> str:
        return "/" + self.path

    def __str__(self) -> str:
        return self.text


def _is_url(text: str) -> bool:
    return "://" in text and file_url_path(text) is None


def side_options(where: Any, other: Any, storage_options: dict | None) -> dict | None:
    """The storage options of ``where``, one end of a copy or conversion whose other end is
    ``other``: a directory or a zip archive takes none when the other end is a URL (the
    options are the URL's), else ``storage_options``."""
    def url(obj: Any) -> bool:
        return isinstance(obj, str) and _is_url(obj)
    if storage_options and not url(where) and url(other) and isinstance(where, (str, os.PathLike)):
        return None
    return storage_options


def _store_for(obj: str, mode: str, storage_options: dict | None) -> Store:
    if not storage_options:
        return make_store(obj, mode)
    if "storage_options" not in inspect.signature(make_store).parameters:
        raise StoreError(f"{obj!r}: storage options apply to URLs, and this zarrx opens no "
                         f"remote stores")
    return make_store(obj, mode, storage_options=storage_options)  # type: ignore[call-arg]


def _is_group_dir(path: str) -> bool:
    """Whether the directory ``path`` holds a Zarr group document (v3 or v2)."""
    return _node_type(path) == "group"


def _node_type(path: str) -> str | None:
    """``"group"`` or ``"array"`` when the directory ``path`` holds a node's document."""
    for name, kind in ((".zgroup", "group"), (".zarray", "array")):
        if os.path.isfile(os.path.join(path, name)):
            return kind
    doc = os.path.join(path, "zarr.json")
    try:
        if os.path.getsize(doc) > max_document_bytes():     # not looked into
            return None
        with open(doc, "rb") as f:
            return _v3_kind(f.read())
    except OSError:
        return None


def _v3_kind(raw: bytes) -> str | None:
    """``"group"`` or ``"array"`` as the ``zarr.json`` bytes ``raw`` say (None: neither)."""
    try:
        head = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    kind = head.get("node_type") if isinstance(head, dict) else None
    return kind if kind in ("group", "array") else None


def _chunk_folder_name(name: str) -> bool:
    """Whether a folder named ``name`` can hold chunks of an array above it: the ``c`` of the
    default chunk key encoding, or a chunk index (``c/0/1``, v2's ``0/1``)."""
    return name == "c" or (name.isascii() and name.isdigit())


def _refuse_inside_array(root: str, text: str) -> None:
    """ContainsArrayError when ``root`` lies inside an array's directory: in it, in its chunk
    folders (``a/c/0``) or in folders still to be made there (``a/new``); a node written there
    would lie inside the array (an array has no children). The walk up stops at a group and at
    an existing folder that is no node and cannot be a chunk folder (``data``): the folders
    above it hold no array this node could lie in, so a stray metadata document far above
    (``/zarr.json``) refuses nothing below it. A ``root`` that is a group is written into as
    it is."""
    if _is_group_dir(root):
        return
    at = os.path.dirname(root)
    for _ in range(_MAX_WALK_UP):
        kind = _node_type(at)
        if kind == "array":
            raise ContainsArrayError(f"{text!r}: cannot write a node inside the array at "
                                     f"{at!r} (an array has no children)")
        if kind == "group" or os.path.dirname(at) == at or (
                os.path.lexists(at) and not _chunk_folder_name(os.path.basename(at))):
            return
        at = os.path.dirname(at)


def writable_destination(loc: Location, what: str) -> None:
    """A ReadOnlyError when the store of the destination ``loc`` cannot be written (an
    ``http(s)://`` URL, a read-only store), before anything is read from it."""
    if loc.store.read_only:
        raise ReadOnlyError(f"{what}: the destination {loc} is read-only ({loc.store!r})")


def node_holding(path: str) -> tuple[str, str] | None:
    """What holds the directory ``path`` (existing or still to be made) and all it would hold:
    ``("array", its directory)`` when ``path`` is or lies in an array's directory,
    ``("group", the hierarchy's root directory)`` when it is or lies in a group's (the
    topmost of the groups above one another), None when no directory above it holds a node's
    document."""
    at = os.path.abspath(path)
    for _ in range(_MAX_WALK_UP):
        kind = _node_type(at)
        if kind == "array":
            return kind, at
        if kind == "group":
            return kind, _hierarchy_root(at)[0]
        if os.path.dirname(at) == at:
            return None
        at = os.path.dirname(at)
    return None


def _refuse_inside_array_url(url: str, storage_options: dict | None) -> None:
    """The same for a URL (``s3://bucket/data.zarr/array/x``): each prefix above it, up to the
    bucket or the nearest group, is asked for an array's document. A URL the walk cannot take apart (a chain of
    protocols, a query) is not checked, and neither is a prefix the store refuses to read (a
    key outside the user's permissions): the write itself then says what is wrong."""
    scheme, _, rest = url.partition("://")
    if "::" in url or "?" in rest or "#" in rest or scheme.lower() in ("http", "https"):
        return                                          # (HTTP(S) stores are read-only)
    bucket, *names = rest.rstrip("/").split("/")
    names = [n for n in names if n][:_MAX_WALK_UP]
    if not bucket or not names:
        return
    keys = []
    for depth in range(len(names) - 1, -1, -1):
        above = "".join(n + "/" for n in names[:depth])
        keys += [above + ".zarray", above + "zarr.json", above + ".zgroup"]
    try:
        store = _store_for(f"{scheme}://{bucket}", "r", storage_options)
    except ZarrError:
        return
    try:
        try:
            found = store.get_many([(key, document_range()) for key in keys])  # nearest first
        except ZarrError:
            return
        for key, raw in zip(keys, found):
            if raw is None:
                continue
            kind = "group" if key.endswith(".zgroup") else "array" if \
                key.endswith(".zarray") else \
                _v3_kind(raw) if len(raw) <= max_document_bytes() else None
            if kind == "group":         # what lies above a group is no array's
                return
            if kind == "array":
                at = f"{scheme}://{bucket}/{key.rpartition('/')[0]}".rstrip("/")
                raise ContainsArrayError(f"{redact(url)!r}: cannot write a node inside the "
                                         f"array at {redact(at)!r} (an array has no children)")
    finally:
        store.close()


def _split_zip(path: str) -> tuple[str, str] | None:
    """``(archive, inner path)`` when a component of ``path`` names a zip archive."""
    parts = path.split(os.sep)
    for i, part in enumerate(parts):
        if part.lower().endswith(".zip"):
            archive = os.sep.join(parts[:i + 1]) or os.sep
            if not os.path.isdir(archive):
                return archive, "/".join(p for p in parts[i + 1:] if p)
    return None


def _hierarchy_root(path: str) -> tuple[str, str]:
    """``(root directory, node path)``: the directory of the topmost group above ``path``.
    Directories that do not exist yet between ``path`` and a group are groups to be made in
    it (``data.zarr/new/array`` names ``/new/array`` of ``data.zarr``)."""
    root = absolute_path(path)
    node: list[str] = []
    for _ in range(_MAX_WALK_UP):
        top, names = root, [os.path.basename(root)]
        parent = os.path.dirname(top)
        while parent != top and not os.path.lexists(parent) and len(names) < _MAX_WALK_UP:
            top, parent = parent, os.path.dirname(parent)       # a directory still to be made
            names.insert(0, os.path.basename(top))
        if parent == top or not _is_group_dir(parent):
            break
        node[:0] = names
        root = parent
    return root, "/".join(node)


def _refuse_file(path: str, text: str) -> None:
    """A StoreError when ``path``, or the nearest of its parents that exists, is a file: a
    store there is a directory (a file is one only as a ``*.zip`` archive)."""
    at = absolute_path(path)
    while not os.path.exists(at) and os.path.dirname(at) != at:
        at = os.path.dirname(at)
    if os.path.exists(at) and not os.path.isdir(at):
        where = "" if at == absolute_path(path) else f" ({at!r})"
        raise StoreError(f"{text!r}{where} is a file, not a directory: Zarr data is a directory "
                         f"or a zip archive named *.zip")


def resolve(where: Any, mode: str = "r", storage_options: dict | None = None) -> Location:
    """The :class:`Location` that ``where`` names (see the module docstring), its store opened
    for ``mode`` (``r``, ``r+``, ``a``, ``w``, ``w-``)."""
    if isinstance(where, (Array, Group)):
        return Location(where.store, where.path, f"{where.store!r}{where.name}")
    if isinstance(where, Store):
        return Location(_store_for(where, mode, storage_options), "", repr(where))  # type: ignore[arg-type]
    if where is None:
        raise ZarrError("expected a path, a URL, a store, an Array or a Group, found None")
    if not isinstance(where, (str, os.PathLike)):
        # a dict, an fsspec mapper or filesystem, an obstore store, a zarr-python store: what
        # the open and create functions take (anything else: an ArgumentTypeError)
        from zarrx.creation import _store
        store = _store(where, mode, storage_options)
        return Location(store, "", repr(store))
    text = os.fspath(where)
    if not isinstance(text, str):
        raise ZarrError(f"expected a str path, found bytes {text!r}")
    if (why := one_slash_url(text)) is not None:
        raise StoreError(why)           # s3:/bucket would be a local folder named s3:
    text = local_chain(text) or text    # zip::a.zip: zip::file:///here/a.zip, as zarrx.open
    if _is_url(text) or storage_options and file_url_path(text) is not None:
        # (a file:// URL given storage_options is fsspec's local filesystem, as zarrx.open
        # opens it)
        if mode in ("a", "w", "w-"):
            _refuse_inside_array_url(text, storage_options)
        # shown without the user name, password or query string (a token) it may carry
        return Location(_store_for(text, mode, storage_options), "", redact(text))
    local = file_url_path(text)
    path = text if local is None else local
    if not path:
        raise ZarrError("expected a path, found an empty string")
    zipped = _split_zip(path)
    if zipped is not None:
        archive, inner = zipped
        if mode == "r" and not os.path.lexists(archive):
            raise NodeNotFoundError(f"{text}: no array or group: no such zip archive "
                                    f"({absolute_path(archive)!r})")
        return Location(_store_for(archive, mode, storage_options), inner, text)
    _refuse_file(path, text)
    root, node = _hierarchy_root(path)
    if mode in ("a", "w", "w-"):
        _refuse_inside_array(root, text)
    return Location(_store_for(root, mode, storage_options), node, text)


def open_node(loc: Location, mode: str = "r") -> Array | Group:
    """The array or group at ``loc`` (NodeNotFoundError naming an interrupted conversion when
    that is why there is none)."""
    from zarrx.api import open as open_any
    try:
        return open_any(loc.store, mode=mode, path=loc.path)
    except NodeNotFoundError as exc:
        if not recorded(loc.store, loc.path):
            why = _why_no_node(loc)
            if why is None:
                raise
            raise NodeNotFoundError(f"{loc}: no array or group: {why}") from exc
    raise NodeNotFoundError(f"{loc}: no array or group yet: a conversion into it has not "
                            f"finished ({loc.path + '/' if loc.path else ''}{RECORD} records "
                            f"what it is to be); if it was interrupted, run it again with "
                            f"--resume to finish it")


def _why_no_node(loc: Location) -> str | None:
    """Why a local directory holds no node, when it can say: it does not exist, it is
    empty, or it holds entries but no metadata document (what a killed ``zarrx copy``, which
    writes the documents last, leaves)."""
    from zarrx.store import LocalStore
    if not isinstance(loc.store, LocalStore):
        return None
    root = os.fspath(loc.store.root)
    folder = os.path.join(root, *loc.path.split("/")) if loc.path else root
    try:
        with os.scandir(folder) as it:
            names = sorted(e.name for e in it)
    except FileNotFoundError:
        return f"no such directory ({folder!r})"
    except OSError:
        return None
    if not names:
        return "the directory is empty"
    shown = ", ".join(repr(n) for n in names[:3]) + (", ..." if len(names) > 3 else "")
    return (f"the directory holds {len(names)} entr{'y' if len(names) == 1 else 'ies'} "
            f"({shown}) but no metadata document (zarr.json, .zarray or .zgroup) of a node "
            f"(a zarrx copy interrupted before it wrote its documents leaves this: run the "
            f"copy again)")


def interrupted_at(where: Any, storage_options: dict | None = None) -> bool:
    """Whether the location ``where`` holds a node a conversion left unfinished (nothing that
    cannot be opened or read counts)."""
    try:
        loc = resolve(where, "r", storage_options)
    except ZarrError:
        return False
    try:
        return recorded(loc.store, loc.path)
    except ZarrError:
        return False
    finally:
        if opened_here(where):
            loc.store.close()


def parse_storage_options(items: list[str] | None) -> dict[str, Any]:
    """``["key=value", ...]`` as a dict; values are read as JSON when they parse (``true``,
    ``3``, ``{"a": 1}``), else kept as strings."""
    out: dict[str, Any] = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ZarrError(f"storage option {item!r}: expected key=value")
        try:
            out[key] = json.loads(value)
        except ValueError:
            out[key] = value
    return out


def _zip_parts(obj: Any) -> tuple[str, str] | None:
    """``(archive, inner path)`` when the location ``obj`` names a path inside a zip archive."""
    if not isinstance(obj, (str, os.PathLike)):
        return None
    text = os.fspath(obj)
    if not isinstance(text, str) or _is_url(text):
        return None
    local = file_url_path(text)
    return _split_zip(text if local is None else local)


def writes_zip(obj: Any) -> bool:
    """Whether the location ``obj`` names a path inside a zip archive."""
    return _zip_parts(obj) is not None


def check_zip_destination(destination: Any, source: Location, replace: bool,
                          what: str) -> None:
    """Refuse a zip destination that ``what`` (a copy, a conversion) must not write: an existing
    file that is not a zip archive, and, when ``replace`` (the archive is written anew, since
    zip entries cannot be replaced), an archive that holds the source or anything outside the
    destination node. Nothing is opened for writing."""
    parts = _zip_parts(destination)
    if parts is None:
        return
    archive, inner = parts
    if os.path.lexists(archive) and not (os.path.isfile(archive) and zipfile.is_zipfile(archive)):
        raise StoreError(f"{what}: {archive!r} exists and is not a zip archive; it is left "
                         f"alone: name another destination")
    if not replace or not os.path.exists(archive):
        return
    src = source.store
    if isinstance(src, ZipStore) and os.path.realpath(src.path) == os.path.realpath(archive):
        raise ZarrError(f"{what}: the source {source} is inside the destination archive "
                        f"{archive!r}, which --overwrite (overwrite=True) writes anew as a whole "
                        f"(zip entries cannot be replaced); write to another archive")
    if not inner:
        return
    with ZipStore(archive, "r") as held:
        others = sorted(k for k in held.list_prefix("") if not k.startswith(inner + "/"))
    if others:
        raise NodeExistsError(f"{what}: --overwrite (overwrite=True) writes the archive "
                              f"{archive!r} anew as a whole (zip entries cannot be replaced), "
                              f"and it holds {len(others)} objects outside /{inner}, such as "
                              f"{others[0]!r}; name the archive itself to replace all of it, or "
                              f"write to another archive")


def check_overwrite_destination(dst: Location, what: str) -> None:
    """Refuse to overwrite a destination that holds no node (no metadata document, no
    unfinished conversion) but other objects, such as a directory of other files named by
    mistake: replacing a node would remove them all. A store that cannot list is not asked."""
    try:
        if nodes.load_node(dst.store, dst.path) is not None or recorded(dst.store, dst.path):
            return
    except ZarrError:
        return                                  # a broken node: one to replace
    try:
        first = next(iter(dst.store.list_prefix(f"{dst.path}/" if dst.path else "")), None)
    except ListingUnsupportedError:
        return
    if first is not None:
        raise NodeExistsError(f"{what}: the destination {dst} holds no Zarr node, but other "
                              f"objects, such as {first!r}: --overwrite (overwrite=True) "
                              f"replaces a node, and would remove them; name another "
                              f"destination, or remove them first")


def release(loc: Location | None, obj: Any, failed: bool) -> None:
    """Close the store of ``loc`` when :func:`resolve` opened it from ``obj``; after a run that
    ``failed``, a zip archive being written is discarded, so the archive stays as it was (and
    a new one is not created)."""
    if loc is None or not opened_here(obj):
        return
    if failed and isinstance(loc.store, ZipStore):
        loc.store.discard()
    else:
        loc.store.close()


def opened_here(obj: Any) -> bool:
    """Whether the store of location ``obj`` is opened by :func:`resolve` (and so is the
    caller's to close) rather than handed in."""
    return isinstance(obj, (str, os.PathLike))


def overlaps(a: Location, b: Location) -> bool:
    """Whether one location lies inside the other (in the same store)."""
    return overlap(a, b) is not None


def overlap(src: Location, dst: Location) -> str | None:
    """How the destination ``dst`` overlaps the source ``src`` (in the same store): ``"is
    the source"``, ``"holds the source"`` or ``"lies inside the source"``; None when apart."""
    def where(store: Any) -> Any:   # views of one store (with_read_only) share an identity
        return getattr(store, "root", None) or getattr(store, "path", None) or \
            getattr(store, "shared_identity", None) or id(store)
    ra, rb = where(src.store), where(dst.store)
    if src.store is not dst.store and ra != rb:
        if not (isinstance(ra, (str, bytes, os.PathLike)) and
                isinstance(rb, (str, bytes, os.PathLike))):
            return None
        # two directories (or archives): one node inside the other on the file system
        pa = os.path.realpath(os.path.join(os.fsdecode(ra), src.path))
        pb = os.path.realpath(os.path.join(os.fsdecode(rb), dst.path))
        if os.path.commonpath([pa, pb]) not in (pa, pb):
            return None
        sep = os.sep
    else:
        pa, pb, sep = src.path.strip("/"), dst.path.strip("/"), "/"
    if pa == pb:
        return "is the source"
    if not pb or (pa + sep).startswith(pb + sep):   # the root holds every node of its store
        return "holds the source"
    if not pa or (pb + sep).startswith(pa + sep):
        return "lies inside the source"
    return None
