"""``zarrx.copy``: an array or a hierarchy copied from one store to another, byte for byte.

Every object below the node is copied as stored (chunks, shards, metadata documents,
attributes, consolidated metadata), so the copy is the same data in the same format. The
chunks go first and the metadata documents last, so a copy that is interrupted has no node
that would read its missing chunks as the fill value; run it again with ``overwrite=True``. A
zip archive is written in full when the copy ends: a copy into one that fails leaves the archive
as it was (and creates none).
"""
from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from zarrx.errors import checked_call
from zarrx.array import Array
from zarrx.creation import prepare_node
from zarrx.errors import NodeExistsError, ZarrError
from zarrx.info import human_bytes
from zarrx.metadata import nodes
from zarrx.metadata.leftovers import clear_leftovers
from zarrx.store import Store, ZipStore
from zarrx.tools.copy_limits import DOCUMENTS as _DOCS, ObjectLimits
from zarrx.tools.location import check_overwrite_destination, check_zip_destination, \
    open_node, overlap, release, resolve, side_options, writable_destination, \
    writes_zip
from zarrx.tools.parallel import run_parallel, workers_for
from zarrx.tools.progress import progress_for
from zarrx.tools.swap import existing_folder, replace_folder
from zarrx.tools.unlisted import node_keys

__all__ = ["copy", "CopyReport"]

BATCH = 16
#: the most bytes the objects of one batch add up to (an object larger is a batch of its own)
BATCH_BYTES = 32 << 20
#: keys whose sizes are asked for at once (one ``getsize_many``)
SIZED = 256


@dataclass
class CopyReport:
    """What :func:`copy` did: ``objects`` stored objects of ``nbytes`` bytes in all."""

    source: str
    destination: str
    objects: int = 0
    nbytes: int = 0
    elapsed: float = 0.0

    def __str__(self) -> str:
        rate = self.nbytes / self.elapsed if self.elapsed > 0 else 0.0
        return (f"copied {self.source} -> {self.destination}: {self.objects} objects, "
                f"{human_bytes(self.nbytes)} in {self.elapsed:.1f} s ({human_bytes(rate)}/s)")


@checked_call
def copy(source: Any, destination: Any, *, overwrite: bool = False, workers: int | None = None,
         storage_options: dict | None = None, destination_storage_options: dict | None = None,
         progress: Any = None) -> CopyReport:
    """Copy the array or group at ``source``, with everything below it, to ``destination``
    (locations as :func:`zarrx.convert` takes them). The destination node must not exist
    unless ``overwrite`` (then it is replaced); the groups above it are created as needed.
    ``workers`` batches of objects are copied at a time (a batch: up to 16 objects of up to 32
    MiB in all, or one larger object); ``progress=True`` draws a bar."""
    t0 = time.perf_counter()
    bar = progress_for(progress)
    src = resolve(source, "r", side_options(source, destination, storage_options))
    dst_opts = side_options(destination, source, storage_options) \
        if destination_storage_options is None else destination_storage_options
    # a zip archive cannot replace entries: overwriting means a new archive
    replace = overwrite and writes_zip(destination)
    dst = None
    failed = True
    try:
        node = open_node(src)               # the source is there before the destination opens
        check_zip_destination(destination, src, replace, "copy")
        dst = resolve(destination, "w" if replace else "a", dst_opts)
        writable_destination(dst, "copy")
        report = CopyReport(str(src), str(dst))
        how = overlap(src, dst)
        if how is not None:
            raise ZarrError(f"copy: the destination {dst} {how} {src}")
        if overwrite and not replace:
            check_overwrite_destination(dst, "copy")
            folder = existing_folder(dst, destination)
            if folder is not None:          # written beside it, then swapped in
                inner = replace_folder(dst, folder, lambda store: copy(
                    node, store, workers=workers, progress=progress))
                report.objects, report.nbytes = inner.objects, inner.nbytes
                failed = False
                return _done(report, t0)
        if not overwrite and nodes.load_node(dst.store, dst.path) is not None:
            raise NodeExistsError(f"copy: a node exists at /{dst.path} in the destination "
                                  f"{dst}; pass --overwrite (overwrite=True) to replace it")
        prepare_node(dst.store, dst.path, overwrite, "a", "copy", node.zarr_format)
        if not overwrite and isinstance(node, Array):
            # what a stopped delete left there, which the copy would read as its own chunks
            clear_leftovers(dst.store, dst.path)
        prefix = f"{src.path}/" if src.path else ""
        keys = node_keys(src.store, src.path, node, "copy")[0]
        data = [k for k in keys if k.rpartition("/")[2] not in _DOCS]
        # deepest first, the root's last; in each folder the document making the node
        # (.zarray, .zgroup) after the attributes, which alone are no node
        docs = sorted((k for k in keys if k.rpartition("/")[2] in _DOCS),
                      key=lambda k: (-k.count("/"), k.rpartition("/")[2] in nodes.NODE_KEYS))
        total = sum(src.store.getsize(k) or 0 for k in keys) \
            if progress not in (None, False) else 0
        bar.start(total, f"copy {src.name}")
        lock = threading.Lock()
        target = dst
        limits = ObjectLimits(src.store, node, keys)
        whole = src.store.reads_are_views           # (a whole object costs no more than a range)

        def move(batch: list[tuple[str, int | None]]) -> None:
            lims = [limits.limit(key) for key, _ in batch]
            longer = set()                          # shards readers take, read whole
            for (key, size), lim in zip(batch, lims):
                if lim is not None and size is not None and size > lim.nbytes:
                    limits.check_longer(key, size)  # refused unread, unless a shard readers take
                    longer.add(key)
            values = src.store.get_many([(key, None if lim is None or whole or key in longer
                                          else lim.head) for (key, _), lim in zip(batch, lims)])
            out = []
            for (key, size), lim, value in zip(batch, lims, values):
                if value is not None and lim is not None and len(value) > lim.nbytes \
                        and key not in longer:      # a size the store could not tell
                    limits.check_longer(key, size)
                    value = value if whole else src.store.get(key)
                if value is None:                   # removed since it was listed
                    continue
                rel = key[len(prefix):]
                out.append((f"{target.path}/{rel}" if target.path else rel, value))
            target.store.set_many(out)
            n = sum(len(v) for _, v in out)
            with lock:
                report.objects += len(out)
                report.nbytes += n
            bar.advance(n)

        def write() -> None:
            run_parallel(move, _batches(src.store, data), workers_for(workers))
            for doc in _batches(src.store, docs, 1):
                move(doc)

        if dst.path and not isinstance(dst.store, ZipStore):
            nodes.write_subtree(dst.store, dst.path, write)   # consolidated metadata in step
        else:           # (a zip archive cannot replace its consolidated metadata)
            write()
        failed = False
    finally:
        bar.close()
        release(dst, destination, failed)
        release(src, source, False)
    return _done(report, t0)


def _done(report: CopyReport, t0: float) -> CopyReport:
    report.elapsed = time.perf_counter() - t0
    return report


def _batches(store: Store, keys: list[str], most: int = BATCH
             ) -> Iterator[list[tuple[str, int | None]]]:
    """``keys``, each with its size (None: not asked for), in batches of at most ``most``
    objects adding up to at most ``BATCH_BYTES`` (an object larger is a batch of its own),
    drawn lazily, so the copy holds a few batches' bytes whatever the size of the objects. A
    store that tells a size only by reading the object (the base ``Store.getsize``) gets
    batches of ``most`` keys, their sizes not asked for."""
    if type(store).getsize is Store.getsize:
        for i in range(0, len(keys), most):
            yield [(k, None) for k in keys[i:i + most]]
        return
    batch: list[tuple[str, int | None]] = []
    held = 0
    for i in range(0, len(keys), SIZED):
        part = keys[i:i + SIZED]
        for key, size in zip(part, store.getsize_many(part)):
            if batch and (len(batch) == most or held + (size or 0) > BATCH_BYTES):
                yield batch
                batch, held = [], 0
            batch.append((key, size))
            held += size or 0
    if batch:
        yield batch
