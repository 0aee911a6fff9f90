"""``zarrx.check``: read every stored object of a hierarchy and report what is wrong with it.

Every chunk is decoded (each inner chunk of each shard), so the codecs verify their checksums
(``crc32c``, zstd's) and every shard index is read and checked (its checksum, every entry's
range). What it finds, by kind:

- ``metadata``: a node's metadata document that does not parse;
- ``unsupported``: an array whose codecs zarrx does not implement (or whose implementation
  cannot be loaded), or whose codec configuration it refuses for the array's chunks: its
  chunks are not read, and never repaired;
- ``corrupt``: a chunk, inner chunk or shard index that does not decode or whose checksum
  does not match;
- ``torn``: a shard shorter than its own index says (a write cut short);
- ``orphaned``: an object no node owns: a chunk outside its array's grid (left by a shrink),
  an object under an array that is not one of its chunk keys, an object under a group that is
  not a node's document;
- ``temporary``: a temporary file a writer left behind (local directories), older than
  ``temp_age`` seconds (younger ones may belong to a writer still running: they are listed in
  :attr:`CheckReport.recent_temporary` and left alone).

``repair=True`` removes chunks outside their array's grid and old temporary files; the other
orphaned objects (strays) may be data whose metadata is missing (a node whose document was lost,
a chunk key encoding edited by hand), so a repair removes them only with
``remove_strays=True``. With ``fill_corrupt=True`` it also rewrites corrupt and torn chunks as the fill value (an inner chunk in place; a shard whose
index is unreadable as a whole). Metadata is never rewritten. Each finding keeps the generation
(version) of the object that was read; a repair removes an object only while it is still that
version (``delete_if``), so what a writer replaced since the check is left alone.
"""
from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from zarrx.api import open_array
from zarrx.array import Array
from zarrx.chunk_io import codec_plan
from zarrx.codecs.registry import get_codec_class
from zarrx.errors import (ArgumentError, CodecError, ConflictError, ListingUnsupportedError,
                          MetadataError, ShardError, StoreError, ZarrError)
from zarrx.group import Group
from zarrx.metadata import nodes
from zarrx.metadata._util import short
from zarrx.metadata.model import ArrayMeta, RegularGrid
from zarrx.store import LocalStore, Store
from zarrx.store.base import key_problem
from zarrx.store.chunks import parse_chunk_key
from zarrx.store.localfs import is_temp_name, temp_owner
from zarrx.store.locallist import SWEEP_AGE
from zarrx.tools.location import opened_here, open_node, resolve
from zarrx.tools.parallel import run_parallel, tools_pool, workers_for
from zarrx.tools.progress import progress_for
from zarrx.shard_objects import encoded_objects
from zarrx.tools.shards import (classify_shard, inner_blocks, object_blocks, one_level,
                                read_index, shard_reads_whole, stored_inner_blocks)
from zarrx.tools.unlisted import UNLISTED_NOTE, node_documents, node_keys

__all__ = ["check", "CheckReport", "Finding", "KINDS"]

KINDS = ("metadata", "unsupported", "corrupt", "torn", "orphaned", "temporary")
_DOCS = frozenset(("zarr.json", ".zarray", ".zgroup", ".zattrs"))
_NODE_DOCS = frozenset(("zarr.json", ".zarray", ".zgroup"))


@dataclass(frozen=True)
class Finding:
    """One problem: its ``kind`` (see :data:`KINDS`), the store ``key`` (for a temporary file,
    its path below the store's root), the ``node`` it belongs to, the inner chunk (``inner``,
    for a problem inside a shard) and what is wrong (``detail``)."""

    kind: str
    key: str
    node: str
    detail: str
    inner: str | None = None
    #: the object's generation when it was found (a repair touches only that version)
    generation: Any = field(default=None, compare=False, repr=False)
    #: False for an object the store cannot address by its name (a file name that is not
    #: UTF-8, say): ``key`` shows the name escaped, and a repair leaves it alone
    removable: bool = field(default=True, compare=False, repr=False)
    #: True for an orphaned object that is not a chunk outside its array's grid: what no node
    #: names may still be data (a node whose metadata was lost), removed only on request
    stray: bool = field(default=False, compare=False, repr=False)
    #: True when ``detail`` names the key itself (a metadata document's parse error names the
    #: document), which the finding's text then does not repeat
    named: bool = field(default=False, compare=False, repr=False)

    def __str__(self) -> str:
        if self.named:
            return f"{self.kind}: {self.detail}"
        inner = f" inner chunk {self.inner}" if self.inner is not None else ""
        return f"{self.kind}: {self.key}{inner}: {self.detail}"


@dataclass
class CheckReport:
    """What :func:`check` found (``findings``) and, with ``repair``, did (``repairs``: one line
    per action; ``repaired``: the findings dealt with)."""

    location: str
    arrays: int = 0
    groups: int = 0
    objects: int = 0
    findings: list[Finding] = field(default_factory=list)
    repaired: list[Finding] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)
    recent_temporary: list[str] = field(default_factory=list)
    #: how the check went about it where that limits what it can find (a store that offers
    #: no listing)
    notes: list[str] = field(default_factory=list)
    elapsed: float = 0.0

    @property
    def ok(self) -> bool:
        """True when nothing was found."""
        return not self.findings

    @property
    def remaining(self) -> list[Finding]:
        """The findings not repaired."""
        done = set(map(id, self.repaired))
        return [f for f in self.findings if id(f) not in done]

    def counts(self) -> dict[str, int]:
        return {k: sum(f.kind == k for f in self.findings) for k in KINDS}

    def __str__(self) -> str:
        lines = [f"checked {self.location}: {self.groups} groups, {self.arrays} arrays, "
                 f"{self.objects} stored objects in {self.elapsed:.1f} s"]
        lines += [f"  note: {n}" for n in self.notes]
        lines += [f"  {f}" for f in self.findings]
        lines += [f"  left alone (recent, a writer may be running): temporary file {p}"
                  for p in self.recent_temporary]
        lines += [f"  repaired: {r}" for r in self.repairs]
        counts = ", ".join(f"{n} {k}" for k, n in self.counts().items() if n)
        if not self.findings:
            lines.append("no problems found")
        else:
            left = len(self.remaining)
            lines.append(f"found {counts}; " + (f"{left} not repaired" if left else
                                                 "all repaired"))
        return "\n".join(lines)


def check(location: Any, *, repair: bool = False, fill_corrupt: bool = False,
          remove_strays: bool = False, temp_age: float = SWEEP_AGE, workers: int | None = None,
          storage_options: dict | None = None, progress: Any = None) -> CheckReport:
    """Check the array or group at ``location`` and everything below it (see the module
    docstring for what is found). ``repair`` removes chunks outside their array's grid and
    temporary files older than ``temp_age`` seconds, and the other orphaned objects only with
    ``remove_strays`` (they may be data whose metadata is lost); ``fill_corrupt`` (with
    ``repair``) rewrites corrupt and torn chunks as the fill value. ``workers`` stored objects are read at a time (default: up to 4).
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
        except MetadataError:
            pass                                    # there, broken: a finding of the scan
        run = _Check(loc.store, loc.path, report, workers_for(workers), bar, node)
        run.scan()
        if repair:
            run.repair(fill_corrupt, temp_age, remove_strays)
        else:
            run.temporary(temp_age)
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
        self.bad_nodes: set[str] = set()
        self.chunk_keys: dict[str, list[tuple[str, tuple[int, ...]]]] = {}

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
        for path in node_paths:
            self._node(path)
        owners = set(node_paths)
        for key in keys:
            self._own(key, owners)
        self._chunks()

    def _node(self, path: str) -> None:
        try:
            meta = nodes.load_node(self.store, path)
        except ZarrError as exc:
            self.bad_nodes.add(path)
            self.add(Finding("metadata", nodes.broken_document(self.store, path), "/" + path,
                             exc.detail, named=isinstance(exc, (MetadataError, CodecError))))
            return
        if isinstance(meta, ArrayMeta):
            self.report.arrays += 1
            self.arrays[path] = meta
            self.chunk_keys[path] = []
        elif meta is not None:
            self.report.groups += 1

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
        if owner in self.bad_nodes or rest in _DOCS or (rest == ".zmetadata" and meta is None):
            return                  # a group's consolidated metadata (any group's, v2)
        if meta is None:
            self._orphan(key, owner, "not a document of a node of the hierarchy")
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

                def one(item: tuple[str, tuple[int, ...]], arr: Array = arr) -> None:
                    self._object(arr, *item)
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

    def _object(self, arr: Array, key: str, coords: tuple[int, ...]) -> None:
        meta = arr.metadata
        blocks = object_blocks(meta, coords, arr.cdata_shape)
        if blocks is None:                  # an object wholly outside the array: nothing to read
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
            self.add(Finding("corrupt", key, node, error.detail, generation=before))
            return
        shards = encoded_objects(self.store, meta, arr.path)   # decoded when encoded whole
        try:
            got = shards.get_versioned(key)
        except ZarrError as exc:                # a shard encoded whole that does not decode
            self.add(Finding("corrupt", key, node, exc.detail,
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
                self.add(Finding("corrupt", key, node, exc.detail, inner))

    # -- temporary files ---------------------------------------------------------------------
    def temporary(self, temp_age: float) -> list[str]:
        """Old temporary files become findings, recent ones are listed; returns the old."""
        if not isinstance(self.store, LocalStore):
            return []
        now = time.time()
        old = []
        for rel, mtime in _temp_files(self.store.root, self.root):
            if now - mtime >= temp_age:
                old.append(rel)
                self.add(Finding("temporary", rel, "/" + self.root,
                                 f"a temporary file left by a writer "
                                 f"{_age(now - mtime)} ago"))
            else:
                self.report.recent_temporary.append(rel)
        return old

    # -- repairs -----------------------------------------------------------------------------
    def repair(self, fill_corrupt: bool, temp_age: float, remove_strays: bool = False) -> None:
        self.temporary(temp_age)
        rep = self.report
        for f in list(rep.findings):
            try:
                action = self._fix(f, fill_corrupt, remove_strays)
            except ZarrError as exc:
                rep.repairs.append(f"could not repair {f.key}: {exc}")
                continue
            if action:
                rep.repaired.append(f)
                rep.repairs.append(action)
        kept = sum(f.kind == "orphaned" and f.stray and f.removable and f not in rep.repaired
                   for f in rep.findings)
        if kept and not remove_strays:
            rep.notes.append(f"{kept} orphaned object{'s' if kept > 1 else ''} kept: objects no "
                             "metadata names may be data of a node whose metadata is lost; "
                             "restore it, or repair with --remove-strays (remove_strays=True) "
                             "to remove them")
        if any(f.kind == "temporary" for f in rep.findings):
            assert isinstance(self.store, LocalStore)
            prefix = f"{self.root}/" if self.root else ""
            removed = set(self.store.sweep(prefix, older_than=temp_age))
            for f in rep.findings:
                if f.kind == "temporary" and f.key in removed:
                    rep.repaired.append(f)
                    rep.repairs.append(f"removed the temporary file {f.key}")

    def _delete(self, f: Finding) -> None:
        """Delete the object of ``f``, only in the version that was found (another writer may
        have replaced it since)."""
        if f.generation is None or not self.store.supports_conditional_writes:
            self.store.delete(f.key)
            return
        try:
            self.store.delete_if(f.key, f.generation)
        except ConflictError:
            raise ZarrError("it changed since it was checked; left alone") from None

    def _fix(self, f: Finding, fill_corrupt: bool, remove_strays: bool) -> str | None:
        if f.kind == "orphaned":
            if not f.removable or (f.stray and not remove_strays):
                return None
            self._delete(f)
            return f"removed the orphaned object {f.key}"
        if f.kind not in ("corrupt", "torn") or not fill_corrupt:
            return None
        path = f.node.lstrip("/")
        meta = self.arrays[path]
        if f.inner is None:
            self._delete(f)
            what = "shard" if meta.layout.sharded else "chunk"
            return f"removed the {f.kind} {what} {f.key}: its region reads as the fill value"
        arr = open_array(self.store, mode="r+", path=path)
        coords = self._coords(path, f.key)
        fill = arr.fill_value if arr.fill_value is not None else 0
        for inner, sel in inner_blocks(meta, coords, arr.cdata_shape):
            if inner == f.inner:
                try:
                    arr.set_block_selection(sel, fill)
                except ShardError:
                    if len(meta.layout.shards) < 2:
                        raise
                    return self._fill_inner_shard(arr, f, sel, fill)
                return f"rewrote inner chunk {f.inner} of {f.key} as the fill value"
        return None

    def _fill_inner_shard(self, arr: Array, f: Finding, sel: tuple[slice, ...],
                          fill: Any) -> str:
        """Rewrite as the fill value the innermost nested shard holding the read unit ``sel``
        whose parent's index is sound (the read unit could not be written alone: the index
        of a shard nested in ``f.key`` holding it is unreadable)."""
        per_level = arr.metadata.layout.shard_major or []
        error: ShardError | None = None
        for level in range(len(per_level) - 1, 0, -1):
            span = per_level[level]
            region = tuple(slice(s.start // n * n, min(s.start // n * n + n, c))
                           for s, n, c in zip(sel, span, arr.cdata_shape))
            try:
                arr.set_block_selection(region, fill)
            except ShardError as exc:
                error = exc
                continue
            return (f"rewrote the nested shard holding inner chunk {f.inner} of {f.key} as the "
                    f"fill value: its index is unreadable")
        assert error is not None
        raise error

    def _coords(self, path: str, key: str) -> tuple[int, ...]:
        return next(c for k, c in self.chunk_keys[path] if k == key)


def _shown(key: str) -> str:
    """A key listed from file names that are not UTF-8, printable: the bytes escaped."""
    try:
        return key.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return key.encode("utf-8", "backslashreplace").decode("utf-8")


def _object_grid(meta: ArrayMeta) -> tuple[int, ...] | None:
    grid = meta.chunk_grid
    if isinstance(grid, RegularGrid):
        return tuple(-(-s // c) for s, c in zip(meta.shape, grid.chunk_shape))
    sizes = getattr(grid, "chunk_sizes", None)
    return None if sizes is None else tuple(len(s) for s in sizes)


def _folders(start: str) -> Iterator[tuple[str, list[str], list[str]]]:
    """``os.walk(start)`` top down, never into links, with a stack of its own: ``os.walk``
    recurses (up to Python 3.11), so folders nested past the recursion limit would raise
    RecursionError. Pruning ``dirs`` prunes the walk, as there."""
    stack = [start]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError:
            continue
        dirs, files, links = [], [], set()
        for entry in entries:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            (dirs if is_dir else files).append(entry.name)
            if is_dir and entry.is_symlink():
                links.add(entry.name)
        yield folder, dirs, files
        stack.extend(os.path.join(folder, d) for d in reversed(dirs) if d not in links)


def _temp_files(root: str, node: str) -> list[tuple[str, float]]:
    """``(path relative to root, mtime)`` of the temporary files of keys below ``node``."""
    prefix = f"{node}/" if node else ""
    start = os.path.join(root, *node.split("/")) if node else root
    out = []
    for folder, dirs, files in _folders(start):
        rel_dir = os.path.relpath(folder, root).replace(os.sep, "/")
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        for name in files + [d for d in dirs if is_temp_name(d)]:
            if not is_temp_name(name) or not (rel_dir + temp_owner(name)).startswith(prefix):
                continue
            try:
                mtime = os.lstat(os.path.join(folder, name)).st_mtime
            except OSError:
                continue
            out.append((rel_dir + name, mtime))
        dirs[:] = [d for d in dirs if not is_temp_name(d)]
    return sorted(out)


def _age(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
