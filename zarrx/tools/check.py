"""``zarrx.check``: read every stored object of a hierarchy and report what is wrong with it.

Every chunk is decoded (each inner chunk of each shard), so the codecs verify their checksums
(``crc32c``, zstd's) and every shard index is read and checked (its checksum, every entry's
range). What it finds, by kind:

- ``metadata``: a node's metadata document that does not parse, or that is missing: a node
  the consolidated metadata of a group names, or a group above a node found (readers listing
  the hierarchy stop there, and do not find the nodes below it); or a group's consolidated
  metadata out of step with the documents of the nodes below it (:mod:`.check_consolidated`);
- ``unsupported``: an array whose codecs zarrx does not implement (or whose implementation
  cannot be loaded), or whose codec configuration it refuses for the array's chunks: its
  chunks are not read, and never repaired;
- ``corrupt``: a chunk, inner chunk or shard index that does not decode or whose checksum
  does not match (a zip entry failing its CRC-32 too);
- ``torn``: a shard shorter than its own index says (a write cut short);
- ``orphaned``: an object no node owns: a chunk outside its array's grid (left by a shrink),
  an object under an array that is not one of its chunk keys, an object under a group that is
  not a node's document;
- ``stale``: data stored outside an array's shape inside an object straddling its edge (left
  by a shrink that did not clear it: zarr-python 3's, tensorstore's), which a grow would read
  back instead of the fill value: an inner chunk of a shard stored wholly outside the shape, or
  cells outside the shape that are not the fill value (:mod:`zarrx.tools.outside`);
- ``unreadable``: a stored object the store cannot hand over (no read permission, an I/O
  error, a failed request): its data may be sound, so unlike a ``corrupt`` one it is never
  repaired; or an entry below the node (local directories) that is a symbolic link, a named
  pipe, a socket or a device: never listed, and read as an error (a link) or as a missing key
  (the others), so data there is not what it seems; never repaired;
- ``temporary``: a temporary file a writer left behind (local directories: zarrx's, and
  zarr-python's ``<name>.<32 hex digits>.partial``, which an interrupted write of its
  ``LocalStore`` leaves), or the hidden folder a killed ``copy`` or ``convert --overwrite``
  left beside a node at the top of its store (:mod:`.check_beside`), older than ``temp_age``
  seconds (younger ones may belong to a writer still running: they are listed in
  :attr:`CheckReport.recent_temporary` and left alone).

``repair=True`` (the repair step is :mod:`zarrx.tools.repair`) removes chunks outside their
array's grid, clears the stale data outside each array's shape (as zarrx's shrinking ``resize``
does) and removes old temporary files; the other orphaned objects (strays) may be data whose
metadata is missing (a node whose document was lost, a chunk key encoding edited by hand), so a
repair removes them only with ``remove_strays=True``. With ``fill_corrupt=True`` it also rewrites
corrupt and torn chunks as the fill value (an inner chunk in place; a shard whose index is
unreadable as a whole). Metadata is never rewritten. Each finding keeps the generation (version)
of the object that was read; a repair removes an object only while it is still that version
(``delete_if``), so what a writer replaced since the check is left alone.
"""
from __future__ import annotations

import math
import os
import re
import threading
import time
from collections.abc import Iterator
from typing import Any

from zarrx.errors import checked_call
from zarrx.api import open_array
from zarrx.array import Array
from zarrx.chunk_io import codec_plan
from zarrx.codecs.registry import get_codec_class
from zarrx.errors import (ArgumentError, CodecError, ListingUnsupportedError, MetadataError,
                          StoreError, ZarrError)
from zarrx.group import Group
from zarrx.metadata import nodes
from zarrx.metadata._util import short
from zarrx.metadata.grid import grid_shape
from zarrx.metadata.model import ArrayMeta, GroupMeta, RegularGrid
from zarrx.store import LocalStore, Store, ZipStore
from zarrx.store.base import key_problem
from zarrx.store.chunks import parse_chunk_key
from zarrx.store.locallist import SWEEP_AGE
from zarrx.tools.check_consolidated import readable_entries, stale_nodes
from zarrx.tools.check_formats import ambiguous_nodes, below_array
from zarrx.tools.check_beside import check_beside
from zarrx.tools.check_report import KINDS, CheckReport, Finding, age_text, \
    not_handed_over
from zarrx.tools.local_entries import walk
from zarrx.tools.location import opened_here, open_node, resolve
from zarrx.tools.outside import edge_view, stored_outside, straddles
from zarrx.tools.parallel import run_parallel, tools_pool, workers_for
from zarrx.tools.progress import progress_for
from zarrx.tools.repair import repair as repair_findings
from zarrx.tools.shards import (classify_shard, get_shard, inner_blocks, object_blocks,
                                one_level, read_index, shard_reads_whole, stored_inner_blocks)
from zarrx.tools.unlisted import UNLISTED_NOTE, node_documents, node_keys

__all__ = ["check", "CheckReport", "Finding", "KINDS"]

_DOCS = frozenset(("zarr.json", ".zarray", ".zgroup", ".zattrs"))
_NODE_DOCS = frozenset(("zarr.json", ".zarray", ".zgroup"))
#: the temporary file zarr-python's LocalStore writes a value to before renaming it (the key's
#: name with its last suffix replaced): an interrupted write leaves it
_ZARR_PYTHON_TEMP = re.compile(r"\.[0-9a-f]{32}\.partial\Z")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


@checked_call
def check(location: Any, *, repair: bool = False, fill_corrupt: bool = False,
          remove_strays: bool = False, temp_age: float = SWEEP_AGE, workers: int | None = None,
          storage_options: dict | None = None, progress: Any = None) -> CheckReport:
    """Check the array or group at ``location`` and everything below it (see the module
    docstring for what is found). ``repair`` removes chunks outside their array's grid, clears
    stale data outside an array's shape and removes temporary files older than ``temp_age``
    seconds, and the other orphaned objects only with ``remove_strays`` (they may be data whose
    metadata is lost); ``fill_corrupt`` (with ``repair``) rewrites corrupt and torn chunks as
    the fill value. ``workers`` stored objects are read at a time (default: up to 4).
    """
    if fill_corrupt and not repair:
        raise ZarrError("check: fill_corrupt needs repair=True (--fill-corrupt needs --repair)")
    if remove_strays and not repair:
        raise ZarrError("check: remove_strays needs repair=True (--remove-strays needs "
                        "--repair)")
    if isinstance(temp_age, bool) or not isinstance(temp_age, (int, float)) or \
            not 0 <= temp_age < math.inf:
        raise ArgumentError(f"check: temp_age: expected a number of seconds, 0 or more, found "
                            f"{short(temp_age, 40)}")
    t0 = time.perf_counter()
    loc = resolve(location, "r+" if repair else "r", storage_options)
    bar = progress_for(progress)
    report = CheckReport(str(loc))
    try:
        node = None
        try:
            node = open_node(loc, "r")              # the node itself must be there
        except (MetadataError, StoreError) as exc:  # there, broken or unreadable: a finding
            if isinstance(exc, StoreError) and not not_handed_over(loc.store, exc):
                raise                               # (of the scan)
        run = _Check(loc.store, loc.path, report, workers_for(workers), bar, node)
        run.scan()
        run.local_entries(temp_age)
        if repair:
            repair_findings(loc.store, loc.path, report, run.arrays, run.chunk_keys,
                            fill_corrupt=fill_corrupt, temp_age=temp_age,
                            remove_strays=remove_strays)
        check_beside(loc, report, temp_age, repair)     # outside the store: its own repair
    finally:
        bar.close()
        if opened_here(location):
            loc.store.close()
    report.elapsed = time.perf_counter() - t0
    return report


class _Check:
    def __init__(self, store: Store, root: str, report: CheckReport, workers: int,
                 bar: Any, node: Array | Group | None) -> None:
        self.store, self.root, self.report, self.node = store, root, report, node
        self.workers, self.bar = workers, bar
        self.lock = threading.Lock()
        self.arrays: dict[str, ArrayMeta] = {}
        self.inside: dict[str, bool] = {}       # path -> whether below an array
        self.bad_nodes: set[str] = set()
        self.chunk_keys: dict[str, list[tuple[str, tuple[int, ...]]]] = {}
        #: the nodes the consolidated metadata of a group names:
        #: path -> (zarr_format, whether an array, the group's path)
        self.listed: dict[str, tuple[int, bool, str]] = {}
        #: the nodes whose metadata document is missing
        self.missing: set[str] = set()
        #: zarr-python's temporary files, listed as keys: key -> node
        self.partial: dict[str, str] = {}
        #: every node read (by path), and the consolidated metadata of each group holding one:
        #: path -> (its entries, the entries marked pending, the group's format)
        self.metas: dict[str, ArrayMeta | GroupMeta] = {}
        self.consolidated: dict[str, tuple[dict[str, Any], set[str], int]] = {}

    def add(self, finding: Finding) -> None:
        with self.lock:
            self.report.findings.append(finding)

    # -- the hierarchy -----------------------------------------------------------------------
    def scan(self) -> None:
        prefix = f"{self.root}/" if self.root else ""
        try:
            keys = sorted(self.store.list_prefix(prefix))
        except ListingUnsupportedError:
            # found from the metadata instead (a node whose metadata is broken: its documents)
            keys = node_keys(self.store, self.root, self.node, "check")[0] \
                if self.node is not None else node_documents(self.store, self.root)
            self.report.notes.append(UNLISTED_NOTE)
        paths = {self.root} | {k.rpartition("/")[0] for k in keys
                               if k.rpartition("/")[2] in _NODE_DOCS}
        node_paths = sorted(p for p in paths if p == self.root or p.startswith(prefix))
        owners = set()
        for path in node_paths:             # parents first: a "node" inside an array is none,
            if not self._in_array(path) and \
                    self.store.key_problem(nodes.join(path, "zarr.json")) is None:
                self._node(path)            # (its objects are the array's strays; a name the
                                            # store cannot address makes its objects strays)
                owners.add(path)
        self._missing_documents(set(paths), owners)
        for finding in ambiguous_nodes(keys, owners - self.missing):
            self.add(finding)
        self._stale_consolidated(owners)
        for key in keys:
            self._own(key, owners)
        self._chunks()

    def _in_array(self, path: str) -> bool:
        """Whether a directory above ``path`` is an array's (found already: parents first)."""
        return below_array(path, self.arrays, self.inside)

    def _node(self, path: str) -> None:
        try:
            meta = nodes.load_node(self.store, path)
        except ZarrError as exc:
            self.bad_nodes.add(path)        # (its objects are not strays: no repair takes them)
            self.add(_failed(self.store, exc, self._doc_key(path), "/" + path)
                     if not_handed_over(self.store, exc) else
                     Finding("metadata", nodes.broken_document(self.store, path), "/" + path,
                             exc.detail, named=isinstance(exc, (MetadataError, CodecError))))
            return
        if isinstance(meta, ArrayMeta):
            self.report.arrays += 1
            self.arrays[path] = meta
            self.chunk_keys[path] = []
        if meta is not None:
            self.metas[path] = meta
        if isinstance(meta, GroupMeta):
            self.report.groups += 1
            pending = set(meta.consolidated_pending)
            if meta.consolidated is not None:   # entries parse on use: a broken one is a finding
                listed = readable_entries(path, meta, pending, self.add)
                self.consolidated[path] = (listed, pending, meta.zarr_format)
                for rel, entry in listed.items():
                    if rel not in pending:
                        self.listed.setdefault(nodes.join(path, rel), (
                            entry.zarr_format, isinstance(entry, ArrayMeta), path))

    def _missing_documents(self, documented: set[str], found: set[str]) -> None:
        """A finding for each node whose metadata document is missing (``documented``: the
        paths holding one): a node the consolidated metadata of a group names, and a group
        above a node ``found`` below the checked node (readers listing the hierarchy stop
        there). Metadata is never repaired."""
        missing: dict[str, tuple[str, str]] = {}
        prefix = f"{self.root}/" if self.root else ""
        for path, (fmt, is_array, group) in sorted(self.listed.items()):
            if path in documented or not path.startswith(prefix) or self._in_array(path):
                continue
            what = "an array" if is_array else "a group"
            missing[path] = (_document(fmt, is_array),
                             f"missing: the consolidated metadata of /{group} names {what} "
                             f"here, but no metadata document is stored (the node opens only "
                             f"through the consolidated metadata)")
        walked: set[str] = set()        # each directory above a node is looked at once
        for path in sorted(found):
            fmt = self._format(path)
            above = path
            while above != self.root and above not in walked:
                walked.add(above)
                above = above.rpartition("/")[0]
                if above == self.root or above in documented or above in missing:
                    continue
                missing[above] = (_document(fmt, False),
                                  f"missing: the node /{path} below has a metadata document, "
                                  f"but no group document is stored here, so readers listing "
                                  f"the hierarchy do not find what is below /{above}")
        for path, (name, detail) in sorted(missing.items()):
            self.missing.add(path)
            self.add(Finding("metadata", nodes.join(path, name), "/" + path, detail))

    def _stale_consolidated(self, found: set[str]) -> None:
        """A finding for each consolidated document out of step with the documents of the
        nodes ``found`` below its group (an entry another than the node's document, a node it
        does not list)."""
        for group, (listed, pending, fmt) in sorted(self.consolidated.items()):
            below = sorted(p for p in found if p != group and p not in self.bad_nodes and
                           (not group or p.startswith(f"{group}/")))
            detail = stale_nodes(group, listed, pending, self.metas, below,
                                 isinstance(self.store, ZipStore))
            if detail is not None:
                key = nodes.join(group, "zarr.json" if fmt == 3 else ".zmetadata")
                self.add(Finding("metadata", key, "/" + group, detail))

    def _format(self, path: str) -> int:
        """The Zarr format of the documents of the node at ``path`` (3 unless only v2 ones)."""
        meta = self.metas.get(path)
        if meta is not None:
            return meta.zarr_format
        return 3 if self.store.exists(nodes.join(path, "zarr.json")) else 2     # broken

    def _doc_key(self, path: str) -> str:
        for name in ("zarr.json", ".zarray", ".zgroup"):
            key = nodes.join(path, name)
            if self.store.exists(key):
                return key
        return nodes.join(path, ".zattrs")

    def _own(self, key: str, owners: set[str]) -> None:
        owner = key
        while owner:                # the nearest node above the key (the checked node at last)
            owner = owner.rpartition("/")[0]
            if owner in owners:
                break
        rest = key[len(owner) + 1:] if owner else key
        meta = self.arrays.get(owner)
        if isinstance(self.store, LocalStore) and \
                _ZARR_PYTHON_TEMP.search(key.rpartition("/")[2]):
            self.partial[key] = owner
            return
        if owner in self.bad_nodes or rest in _DOCS or (rest == ".zmetadata" and meta is None):
            return                  # a group's consolidated metadata (any group's, v2)
        if meta is None:
            lost = next((p for p in self.missing if key.startswith(f"{p}/")), None)
            self._orphan(key, owner, "not a document of a node of the hierarchy" if lost is None
                         else f"below /{lost}, whose metadata document is missing")
            return
        coords = parse_chunk_key(rest, meta.key_encoding, meta.ndim)
        if coords is None:
            self._orphan(key, owner, "not a chunk key of the array")
            return
        grid = _object_grid(meta)
        if grid is not None and any(c >= n for c, n in zip(coords, grid)):
            self._orphan(key, owner, f"chunk {coords} lies outside the array's grid of {grid} "
                                     f"stored objects (shape {meta.shape})", stray=False)
            return
        self.chunk_keys[owner].append((key, coords))

    def _orphan(self, key: str, owner: str, detail: str, stray: bool = True) -> None:
        try:
            generation = self.store.generation(key)
        except StoreError as exc:       # a name the store cannot address (not UTF-8, say)
            why = key_problem(key) or exc.detail
            self.add(Finding("orphaned", _shown(key), "/" + owner,
                             f"{detail}; the store cannot address its name ({why}): remove it "
                             f"by hand", removable=False))
            return
        self.add(Finding("orphaned", key, "/" + owner, detail, generation=generation,
                         stray=stray))

    # -- the chunks --------------------------------------------------------------------------
    def _chunks(self) -> None:
        total = sum(len(v) for v in self.chunk_keys.values())
        self.bar.start(total, "check", unit="object")
        pool = tools_pool(self.workers)         # one set of threads for every array
        try:
            for path, items in self.chunk_keys.items():
                if not items:
                    continue
                if not self._supported(path, len(items)):
                    self.bar.advance(len(items))
                    continue
                arr = open_array(self.store, mode="r", path=path)
                view = edge_view(arr)

                def one(item: tuple[str, tuple[int, ...]], arr: Array = arr,
                        view: Array | None = view) -> None:
                    self._object(arr, view, *item)
                    self.bar.advance(1)

                run_parallel(one, items, self.workers, pool)
                self.report.objects += len(items)
        finally:
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)

    def _supported(self, path: str, n: int) -> bool:
        """Whether zarrx has every codec of the array at ``path`` and takes their configuration
        for its chunks; if not, one finding: its ``n`` stored objects are not read (they would
        all fail to decode, and are not corrupt: a repair must not remove them).
        """
        meta = self.arrays[path]
        specs = list(meta.layout.read_codecs)
        for level in meta.shard_levels:
            specs += [*level.outer_codecs, *level.object_codecs]
        try:
            for spec in specs:
                get_codec_class(spec.name, key=path)
            if meta.layout.read_shape is not None:
                codec_plan(meta, meta.layout.read_shape, path)
        except ZarrError as exc:
            self.add(Finding("unsupported", self._doc_key(path), "/" + path,
                             f"{exc.detail}; its {n} stored objects were not checked"))
            return False
        return True

    def _object(self, arr: Array, view: Array | None, key: str,
                coords: tuple[int, ...]) -> None:
        meta = arr.metadata
        blocks = object_blocks(meta, coords, arr.cdata_shape)
        if blocks is None:                  # an object wholly outside the array: nothing to read
            return
        if view is not None and straddles(meta, coords):    # what it stores outside the shape
            found, whole = stored_outside(arr, view, key, coords)
            for inner, detail in found:
                self.add(Finding("stale", key, arr.name, detail, inner))
            if whole:                       # a chunk, decoded from start to end
                return
        one = one_level(meta)               # then its inner chunks are checked over its index
        if one and shard_reads_whole(self.store, meta, arr.path, key):
            return
        error: ZarrError | None = None
        for _ in range(0 if one else 3):    # until one version was read from start to end
            before = self.store.generation(key)
            try:
                arr.get_block_selection(blocks)
                return
            except ZarrError as exc:
                error = exc
            if self.store.generation(key) == before:
                break
        node = arr.name
        if not meta.layout.sharded:
            assert error is not None
            self.add(_failed(self.store, error, key, node, generation=before))
            return
        try:
            got = get_shard(self.store, meta, arr.path, key)    # decoded when encoded whole
        except ZarrError as exc:    # too long, or a shard encoded whole that does not decode
            self.add(_failed(self.store, exc, key, node,
                              generation=self.store.generation(key)))
            return
        if got is None:
            return
        blob, gen = got
        kind, detail = classify_shard(blob, meta, key)
        if kind is not None:
            self.add(Finding(kind, key, node, detail or kind, generation=gen))
            return
        units = stored_inner_blocks(meta, coords, arr.cdata_shape, read_index(blob, meta)[0]) \
            if one else inner_blocks(meta, coords, arr.cdata_shape)
        for inner, sel in units:            # an inner chunk not stored reads as the fill value
            try:
                arr.get_block_selection(sel)
            except ZarrError as exc:
                self.add(_failed(self.store, exc, key, node, inner))

    # -- entries of a local directory beside the listing --------------------------------------
    def local_entries(self, temp_age: float) -> None:
        """On a LocalStore, one walk of the node's folders: old temporary files become
        findings (recent ones are listed), and so do links and entries that are neither files
        nor folders (``unreadable``): the store lists none of them, and reads a link as an
        error and a pipe, socket or device as a missing key, so a chunk there would otherwise
        go unnoticed."""
        if not isinstance(self.store, LocalStore):
            return
        temps, odd = walk(os.fspath(self.store.root), self.root)
        for rel, detail in odd:
            self.add(Finding("unreadable", rel, "/" + self.root, detail, removable=False))
        now = time.time()
        for key, owner in sorted(self.partial.items()):
            try:
                mtime = os.lstat(os.path.join(self.store.root, *key.split("/"))).st_mtime
                generation = self.store.generation(key)
            except (OSError, StoreError):
                continue                    # gone meanwhile: its writer finished
            if now - mtime >= temp_age:
                self.add(Finding("temporary", key, "/" + owner,
                                 f"a temporary file left by a zarr-python writer "
                                 f"{age_text(now - mtime)} ago", generation=generation))
            else:
                self.report.recent_temporary.append(key)
        for rel, mtime in temps:
            what = "folder (a node that copy or convert --overwrite was writing)" if \
                os.path.isdir(os.path.join(self.store.root, *rel.split("/"))) else "file"
            if now - mtime >= temp_age:
                self.add(Finding("temporary", rel, "/" + self.root, f"a temporary {what} "
                                 f"left by a writer {age_text(now - mtime)} ago"))
            else:
                self.report.recent_temporary.append(rel)


def _failed(store: Store, exc: ZarrError, key: str, node: str, inner: str | None = None,
            generation: Any = None) -> Finding:
    """The finding for the stored object ``key`` (its inner chunk ``inner``) that did not read:
    ``unreadable`` when the store could not hand over its bytes (a permission, an I/O error, a
    request that failed: the data may be sound, so no repair touches it), else ``corrupt``."""
    if not_handed_over(store, exc):
        return Finding("unreadable", key, node, f"the store cannot read it: {exc.detail} (its "
                       f"data was not checked, and no repair touches it)", inner,
                       generation=generation, removable=False)
    return Finding("corrupt", key, node, exc.detail, inner, generation=generation)


def _document(zarr_format: int, is_array: bool) -> str:
    """The name of the metadata document of a node of this format and type."""
    if zarr_format == 3:
        return "zarr.json"
    return ".zarray" if is_array else ".zgroup"


def _shown(key: str) -> str:
    """A key listed from file names that are not UTF-8 or hold control characters, printable:
    the bytes and the control characters escaped (``\\xff``, ``\\x1b``)."""
    try:
        text = key.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        text = key.encode("utf-8", "backslashreplace").decode("utf-8")
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _object_grid(meta: ArrayMeta) -> tuple[int, ...] | None:
    grid = meta.chunk_grid
    if isinstance(grid, RegularGrid):
        return grid_shape(grid, meta.shape)
    sizes = getattr(grid, "chunk_sizes", None)
    return None if sizes is None else tuple(len(s) for s in sizes)


