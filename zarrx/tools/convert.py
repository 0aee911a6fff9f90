"""``zarrx.convert``: a copy of an array or a hierarchy in another form (Zarr v2 <-> v3, new
chunks or shards, new codecs, a new fill value), streamed block by block in bounded memory.

How it works: the destination's metadata is planned first (:mod:`zarrx.tools.target`) and
checked by creating it in memory, then the data is copied in blocks (:mod:`zarrx.tools.blocks`)
of whole destination objects, several blocks at a time. Every stored object is written once,
whole and atomically by the store, so after an interruption the objects that exist are complete:
``resume=True`` keeps them and writes only the others. A node's metadata documents are written
after its data (the groups' deepest first, the top node's last), so an interrupted conversion
leaves nothing that opens; meanwhile :mod:`zarrx.tools.pending` keeps what each unfinished node
is to be. ``verify=True`` then reads every block back from both sides and compares the values.
"""
from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from zarrx.errors import checked_call
from zarrx import config, layout
from zarrx.api import create_group, open_group
from zarrx.array import Array
from zarrx.creation import prepare_node
from zarrx.errors import ListingUnsupportedError, NodeExistsError, RemoteError, StoreError, \
    ZarrError
from zarrx.group import Group
from zarrx.info import human_bytes
from zarrx.metadata import nodes
from zarrx.metadata.model import ArrayMeta, GroupMeta, RegularGrid
from zarrx.store import MemoryStore, ZipStore
from zarrx.tools.blocks import DEFAULT_MAX_MEMORY, BlockPlan, itemsize_estimate, parse_size, \
    plan_blocks
from zarrx.tools.location import Location, check_overwrite_destination, \
    check_zip_destination, open_node, overlap, release, resolve, side_options, \
    writable_destination, writes_zip
from zarrx.tools import pending
from zarrx.tools.compare import fill_mismatch, mismatch as _mismatch, same_fill_of as _same_fill, \
    same_values
from zarrx.tools.parallel import run_parallel, tools_pool, workers_for
from zarrx.tools.progress import Progress, progress_for
from zarrx.tools.swap import existing_folder, rebased, replace_folder
from zarrx.tools.target import KEEP, SHAPES, Changes, for_rank, planned_array, \
    refused_changes, shape_rank

__all__ = ["convert", "ConvertReport", "ArrayConversion", "same_values"]

MAX_MISMATCHES = 20


@dataclass
class ArrayConversion:
    """One converted array: its path in the destination, the blocks written, the stored
    objects kept from an interrupted run, the bytes of data copied, and (after a verification)
    the blocks whose values differ."""

    path: str
    shape: tuple[int, ...]
    dtype: str
    blocks: int = 0
    kept: int = 0
    nbytes: int = 0
    verified: bool = False
    mismatches: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        text = (f"{self.path} {self.shape} {self.dtype}: {self.blocks} blocks, "
                f"{human_bytes(self.nbytes)}")
        if self.kept:
            text += f", {self.kept} stored objects kept from an earlier run"
        if self.verified:
            text += ", verified" if not self.mismatches else \
                f", {len(self.mismatches)} blocks DIFFER"
        return text


@dataclass
class ConvertReport:
    """What :func:`convert` did. ``ok`` is false when a verification found differences."""

    source: str
    destination: str
    zarr_format: int
    arrays: list[ArrayConversion] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    elapsed: float = 0.0

    @property
    def ok(self) -> bool:
        return not any(a.mismatches for a in self.arrays)

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.arrays)

    def __str__(self) -> str:
        rate = self.nbytes / self.elapsed if self.elapsed > 0 else 0.0
        lines = [f"converted {self.source} -> {self.destination} (Zarr v{self.zarr_format}): "
                 f"{len(self.arrays)} arrays, {len(self.groups)} groups, "
                 f"{human_bytes(self.nbytes)} in {self.elapsed:.1f} s "
                 f"({human_bytes(rate)}/s)"]
        lines += [f"  {a}" for a in self.arrays]
        for a in self.arrays:
            lines += [f"  mismatch: {m}" for m in a.mismatches]
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


@checked_call
def convert(source: Any, destination: Any, *, zarr_format: Any = KEEP, chunks: Any = KEEP,
            shards: Any = KEEP, compressors: Any = KEEP, filters: Any = KEEP,
            serializer: Any = KEEP, fill_value: Any = KEEP,
            max_memory: int | str = DEFAULT_MAX_MEMORY, workers: int | None = None,
            resume: bool = False, verify: bool = False, overwrite: bool = False,
            storage_options: dict | None = None,
            destination_storage_options: dict | None = None,
            progress: Any = None) -> ConvertReport:
    """Convert the array or group at ``source`` (with everything below it) into ``destination``.

    ``source`` and ``destination`` are locations (a directory, ``archive.zip/group/array``, a
    URL), stores, or (the source) an open Array or Group. Every change defaults to keeping what
    the source has: ``zarr_format`` (2 or 3), ``chunks`` (the chunk shape; the inner chunk
    shape when sharded), ``shards`` (the shard shape; None: no sharding), ``compressors``,
    ``filters``, ``serializer`` (as :func:`zarrx.create_array` takes them; ``compressors=None``
    stores chunks uncompressed) and ``fill_value``. Changes apply to every array of a group;
    a chunk or shard shape to those with its number of dimensions (the others keep theirs, and
    a note of the report names them; a shape no array has as many dimensions as is refused).

    ``max_memory`` bounds the memory the copy holds (bytes, or ``"512M"``, ``"2GiB"``);
    ``workers`` blocks are copied at a time (default: up to 4). ``resume`` continues an
    interrupted conversion into the same destination, keeping the stored objects that exist;
    ``overwrite`` replaces a destination node; ``verify`` compares every block afterwards.
    ``storage_options`` configure URLs (``destination_storage_options``, when given, the
    destination's). ``progress``: True draws a bar with throughput and ETA on standard error.
    """
    t0 = time.perf_counter()
    changes = Changes(zarr_format, chunks, shards, compressors, filters, serializer, fill_value)
    budget = parse_size(max_memory)
    workers = workers_for(workers)
    bar = progress_for(progress)
    src = resolve(source, "r", side_options(source, destination, storage_options))
    dst_opts = side_options(destination, source, storage_options) \
        if destination_storage_options is None else destination_storage_options
    if resume and writes_zip(destination):
        raise ZarrError(f"convert: --resume (resume=True) does not apply to the zip archive "
                        f"{destination}: a conversion into one that fails leaves it as it was, "
                        f"so there is nothing to finish; convert again without it")
    # a zip archive cannot replace entries: overwriting means a new archive
    replace = overwrite and writes_zip(destination)
    dst = None
    failed = True
    try:
        node = open_node(src)               # the source is there before the destination opens
        check_zip_destination(destination, src, replace, "convert")
        dst = resolve(destination, "w" if replace else "a", dst_opts)
        writable_destination(dst, "convert")
        how = overlap(src, dst)
        if how is not None:
            raise ZarrError(f"convert: the destination {dst} {how} {src}")
        if overwrite and not resume and not replace:
            check_overwrite_destination(dst, "convert")
        fmt = node.zarr_format if zarr_format is KEEP else zarr_format
        folder = None if resume or replace or not overwrite else \
            existing_folder(dst, destination)
        if folder is not None:              # written beside it, then swapped in
            report = replace_folder(dst, folder, lambda store: convert(
                node, store, zarr_format=zarr_format, chunks=chunks, shards=shards,
                compressors=compressors, filters=filters, serializer=serializer,
                fill_value=fill_value, max_memory=max_memory, workers=workers,
                verify=verify, progress=progress))
            return rebased(report, str(src), dst)
        report = ConvertReport(str(src), str(dst), fmt)
        job = _Job(changes, budget, workers, resume, verify, overwrite, bar, report)
        job.pool = tools_pool(workers)      # one set of threads for every array
        try:
            if isinstance(node, Array):
                job.array(node, dst.store, dst.path)
            else:
                job.hierarchy(node, dst, fmt)
        finally:
            if job.pool is not None:
                job.pool.shutdown(wait=True, cancel_futures=True)
        failed = False
    finally:
        bar.close()
        release(dst, destination, failed)
        release(src, source, False)
    report.elapsed = time.perf_counter() - t0
    return report


def _members_as_stored(root: Group) -> list[tuple[str, Array | Group]]:
    """The nodes below ``root`` as their own documents describe them. Consolidated metadata
    another writer left out of step (an array resized, a node added since) would convert an
    old shape or leave a node out, so it is walked only where the store cannot be listed."""
    if root.metadata.consolidated is not None:
        try:
            plain = open_group(root.store, path=root.path, mode="r", use_consolidated=False)
            return list(plain.members(max_depth=None))
        except ListingUnsupportedError:
            pass
    return list(root.members(max_depth=None))


class _Job:
    def __init__(self, changes: Changes, budget: int, workers: int, resume: bool, verify: bool,
                 overwrite: bool, bar: Progress, report: ConvertReport) -> None:
        self.changes, self.budget, self.workers = changes, budget, workers
        self.resume, self.verify, self.overwrite = resume, verify, overwrite
        self.bar, self.report = bar, report
        self._lock = threading.Lock()
        self.pool: Any = None         # the threads of every run_parallel (convert)

    # -- the nodes -----------------------------------------------------------------------------
    def hierarchy(self, root: Group, dst: Location, fmt: int) -> None:
        members = _members_as_stored(root)
        self._check_ranks(root, [node for _, node in members if isinstance(node, Array)])
        ready = {rel: self.prepare(node, self._for_rank(node))       # all checked first
                 for rel, node in members if isinstance(node, Array)}
        groups = {rel: self._group_meta(node, fmt) for rel, node in members
                  if not isinstance(node, Array)}
        top = self._group_meta(root, fmt)
        self.begin(dst.store, dst.path, top, f"convert {root.name}")
        finished: list[tuple[str, ArrayMeta | GroupMeta]] = []   # documents not yet written
        checks: list[Callable[[], None]] = []
        for rel, node in members:
            if isinstance(node, Array):
                path = f"{dst.path}/{rel}" if dst.path else rel
                self.array(node, dst.store, path, ready[rel], finished, checks)
        # the documents once all the data is written: the arrays', then the groups', the
        # deepest first and the top one at the very end (an interrupted conversion leaves no
        # hierarchy that opens), with one edit of the consolidated metadata above them
        for rel in sorted(groups, key=lambda r: -r.count("/")):
            path = f"{dst.path}/{rel}" if dst.path else rel
            finished.append((path, groups[rel]))
            self.report.groups.append("/" + path)
        finished.append((dst.path, top))
        pending.finish_many(dst.store, finished)
        self.report.groups.insert(0, "/" + dst.path)
        for check in checks:
            check()
        if root.metadata.consolidated is not None:
            if isinstance(dst.store, ZipStore):
                self.report.notes.append("the source's consolidated metadata was not written: "
                                         "a zip archive cannot replace the root group's "
                                         "document (run zarrx consolidate on a copy)")
            else:
                from zarrx.api import consolidate_metadata
                consolidate_metadata(dst.store, dst.path)

    def _check_ranks(self, root: Group, arrays: list[Array]) -> None:
        """Refuse a chunk or shard shape that no array of the hierarchy has as many dimensions
        as (it would change nothing), before anything is written."""
        ranks = sorted({a.ndim for a in arrays})
        for name in SHAPES:
            value = getattr(self.changes, name)
            n = shape_rank(value)
            if ranks and n is not None and n not in ranks:
                some = ", ".join(map(str, ranks[:-1]))
                exc = ZarrError(f"convert {root.name}: {name}: expected a shape of "
                                f"{some + ' or ' if some else ''}{ranks[-1]} dimensions (those "
                                f"of the arrays in the hierarchy), found {tuple(value)!r}")
                exc.arguments = (name,)
                raise exc

    def _for_rank(self, src: Array) -> Changes:
        """The changes for ``src`` in a hierarchy: a chunk or shard shape of another number of
        dimensions is not applied (a note says so)."""
        changes, other = for_rank(self.changes, src.ndim)
        if other:
            shapes = " or ".join(f"the {len(getattr(self.changes, name))} of {name} "
                                 f"{tuple(getattr(self.changes, name))!r}" for name in other)
            self.report.notes.append(
                f"{src.name} keeps its own {' and '.join(other)}: it has {src.ndim} "
                f"dimension{'s' if src.ndim != 1 else ''}, not {shapes}; convert it on its "
                f"own to change them")
        return changes

    @staticmethod
    def _group_meta(src: Group, fmt: int) -> GroupMeta:
        return create_group(MemoryStore(), zarr_format=fmt, attributes=dict(src.attrs)).metadata

    def begin(self, store: Any, path: str, meta: ArrayMeta | GroupMeta, where: str) -> None:
        """Before anything of the destination node at ``path`` is written: refuse a node there
        (unless ``overwrite``, which removes it, or ``resume``) and an interrupted conversion
        (unless ``overwrite`` or ``resume``); make the groups above it; record ``meta`` as
        what the node is to have (its documents are written last)."""
        if self.resume:
            found = nodes.load_node(store, path)
            if found is not None:
                self._same(found, meta, path, where)
                return
            self._same(pending.read_record(store, path), meta, path, where)
        else:
            if nodes.load_node(store, path) is not None and not self.overwrite:
                raise NodeExistsError(f"{where}: a node exists at /{path} in the destination; "
                                      f"pass --overwrite (overwrite=True) to replace it")
            if pending.recorded(store, path) and not self.overwrite:
                raise NodeExistsError(f"{where}: the destination holds at /{path} a node an "
                                      f"interrupted conversion left unfinished; pass --resume "
                                      f"(resume=True) to finish it, or --overwrite "
                                      f"(overwrite=True) to start again")
        prepare_node(store, path, self.overwrite and not self.resume, "a", where,
                     meta.zarr_format)
        pending.record(store, path, meta)

    @staticmethod
    def _same(found: ArrayMeta | GroupMeta | None, meta: ArrayMeta | GroupMeta, path: str,
              where: str) -> None:
        """Refuse to resume into a node that is (or is recorded to be) another one."""
        if found is None or found == meta:
            return
        if isinstance(found, GroupMeta) and isinstance(meta, GroupMeta) and \
                found.zarr_format == meta.zarr_format:
            return                          # a group's attributes are written again
        what = _summary(found) if isinstance(found, ArrayMeta) else \
            f"a v{found.zarr_format} group"
        planned = _summary(meta) if isinstance(meta, ArrayMeta) else \
            f"a v{meta.zarr_format} group"
        raise ZarrError(f"{where}: cannot resume into /{path}: the node there differs from what "
                        f"this conversion writes (expected {planned}, found {what})")

    def prepare(self, src: Array, changes: Changes | None = None
                ) -> tuple[dict, ArrayMeta, BlockPlan]:
        """The destination's ``create_array`` arguments, metadata and blocks, all checked
        (the array is made in memory): nothing is written when a change is not possible.
        ``changes``: those of this array (default: the conversion's)."""
        where = f"convert {src.name}"
        changes = self.changes if changes is None else changes
        try:
            kw, planned = planned_array(src, changes, where)
        except ZarrError as exc:                # name the changes the array cannot take
            exc.arguments = exc.arguments or refused_changes(src, changes, where)
            raise
        return kw, planned.metadata, self._plan(src, planned, where)

    def array(self, src: Array, store: Any, path: str,
              ready: tuple[dict, ArrayMeta, BlockPlan] | None = None,
              finished: list | None = None, checks: list | None = None) -> None:
        """Convert ``src`` into the array at ``path``: its chunks, then its documents (a node
        alone, ``ready`` not given, is checked first by :meth:`begin`). With ``finished`` (in
        a hierarchy), ``(path, metadata)`` of the documents to write is added to it instead,
        and the verification to run once they are written to ``checks``."""
        kw, planned, plan = ready or self.prepare(src)
        where = f"convert {src.name}"
        if ready is None:
            self.begin(store, path, planned, where)
        found = nodes.load_node(store, path) if self.resume else None
        complete = found is not None            # finished by an earlier run
        if ready is not None:                   # in a hierarchy, whose top begin() checked
            if self.resume:
                self._same(found or pending.read_record(store, path), planned, path, where)
            if not complete:
                pending.record(store, path, planned)
        dst = Array(store, path, planned)
        done = ArrayConversion("/" + path, dst.shape, str(dst.dtype))
        self.report.arrays.append(done)
        present = set(layout.stored_objects(layout.chunk_source(store, path, dst.metadata))) \
            if self.resume and isinstance(dst.metadata.chunk_grid, RegularGrid) else set()
        itemsize = itemsize_estimate(dst.dtype)

        def copy(sel: tuple[slice, ...]) -> None:
            data = src.read(sel)
            dst[sel] = data
            n = math.prod(s.stop - s.start for s in sel) * itemsize
            with self._lock:
                done.nbytes += n
                done.blocks += 1
            self.bar.advance(n)

        blocks = self._blocks(src, planned, plan)
        total = math.prod(dst.shape) if blocks is None else \
            sum(math.prod(s.stop - s.start for s in sel) for sel in blocks)
        self.bar.start(total * itemsize, f"convert {done.path}")
        run_parallel(copy, self._tasks(plan, blocks, present, done, itemsize), self.workers,
                     self.pool)
        if not complete:
            if finished is None:
                pending.finish(store, path, planned)
            else:
                finished.append((path, planned))

        def check() -> None:
            kept = kw["fill_value"] is src.metadata.fill_value
            wrong = fill_mismatch(store, path, src.metadata if kept else planned, done.path)
            if wrong:
                done.mismatches.append(wrong)
            self._verify(src, dst, plan, blocks, done)

        if self.verify and checks is not None:
            checks.append(check)
        elif self.verify:
            check()

    def _plan(self, src: Array, dst: Array, where: str) -> BlockPlan:
        meta = dst.metadata
        if isinstance(meta.chunk_grid, RegularGrid):
            unit = meta.chunk_grid.chunk_shape
        else:               # a rectilinear grid: its chunks do not tile blocks, so one block
            unit = tuple(max(1, s) for s in dst.shape)
        itemsize = itemsize_estimate(dst.dtype)
        src_unit = src.metadata.layout.read_shape
        src_bytes = math.prod(src_unit or (1,)) * itemsize
        threads = int(config.get("threads"))                 # type: ignore[arg-type]
        overhead = threads * (src_bytes + math.prod(unit) * itemsize)
        per_worker = (self.budget - overhead) // self.workers
        if self.verify:
            per_worker //= 2                                # both sides of a block at once
        whole = math.prod(unit) * itemsize
        if not isinstance(meta.chunk_grid, RegularGrid) \
                and (per_worker <= 0 or whole > per_worker):
            need = overhead + whole * self.workers * (2 if self.verify else 1)
            raise ZarrError(f"{where}: a rectilinear chunk grid is converted in one block, the "
                            f"whole array {dst.shape} ({human_bytes(whole)} in memory, "
                            f"{human_bytes(need)} with the buffers of {threads} threads), more "
                            f"than the memory budget of {human_bytes(self.budget)}; pass --chunks "
                            f"(chunks=) to convert it to a regular grid block by block, or raise "
                            f"--max-memory (max_memory=)")
        if per_worker <= 0:
            raise ZarrError(f"{where}: a memory budget of {human_bytes(self.budget)} does not "
                            f"cover the decoding buffers of {threads} threads "
                            f"({human_bytes(overhead)}); raise --max-memory (max_memory=) or "
                            f"set fewer threads (zarrx.config.set(threads=...))")
        grids = [g for g in (src_unit, dst.metadata.layout.read_shape) if g]
        return plan_blocks(dst.shape, unit, itemsize, per_worker, src_unit, where, grids)

    @staticmethod
    def _blocks(src: Array, planned: ArrayMeta, plan: BlockPlan) -> list | None:
        """The blocks holding data of ``src``: those meeting its stored objects, when what
        it has not stored reads in the destination as it does in the source (the same fill
        value); None for every block (the fill value changes, or the source cannot list its
        objects or has no regular grid)."""
        meta = src.metadata
        grid = meta.chunk_grid
        if not isinstance(grid, RegularGrid) or not _same_fill(meta, planned):
            return None
        try:
            stored = layout.stored_objects(layout.chunk_source(src.store, src.path, meta))
            unit = grid.chunk_shape
            return plan.meeting(tuple(slice(c * u, (c + 1) * u) for c, u in zip(coords, unit))
                                for coords in stored)
        except RemoteError:
            raise
        except StoreError:          # no listing (an HTTP server): every block is read
            return None

    def _tasks(self, plan: BlockPlan, blocks: list | None, present: set,
               done: ArrayConversion, itemsize: int) -> Iterator[tuple[slice, ...]]:
        for sel in plan.blocks() if blocks is None else blocks:
            if not present:
                yield sel
                continue
            objects = plan.objects(sel)
            missing = [c for c in objects if c not in present]
            done.kept += len(objects) - len(missing)
            if len(missing) == len(objects):
                yield sel
                continue
            for coords in objects:
                osel = plan.object_selection(coords)
                if coords in present:
                    self.bar.advance(math.prod(s.stop - s.start for s in osel) * itemsize)
                else:
                    yield osel

    def _verify(self, src: Array, dst: Array, plan: BlockPlan, blocks: list | None,
                done: ArrayConversion) -> None:
        itemsize = itemsize_estimate(dst.dtype)

        def compare(sel: tuple[slice, ...]) -> None:
            a, b = src.read(sel), dst.read(sel)
            if not same_values(a, b):
                with self._lock:
                    if len(done.mismatches) < MAX_MISMATCHES:
                        done.mismatches.append(_mismatch(done.path, sel, a, b))
            self.bar.advance(math.prod(s.stop - s.start for s in sel) * itemsize)

        total = math.prod(dst.shape) if blocks is None else \
            sum(math.prod(s.stop - s.start for s in sel) for sel in blocks)
        self.bar.start(total * itemsize, f"verify {done.path}")
        run_parallel(compare, plan.blocks() if blocks is None else blocks, self.workers,
                     self.pool)
        done.verified = True


def _summary(meta: ArrayMeta) -> str:
    grid = meta.chunk_grid
    shape = grid.chunk_shape if isinstance(grid, RegularGrid) else "rectilinear"
    return (f"v{meta.zarr_format} {meta.data_type.name} shape {meta.shape} grid {shape} "
            f"codecs {[c.name for c in meta.codecs]}")
