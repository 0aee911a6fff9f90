"""The repair step of :func:`zarrx.tools.check.check`: what it may do with each finding of
the scan (remove an orphaned object, a chunk outside its array's grid, a temporary file; clear
the stale data stored outside an array's shape; with ``fill_corrupt``, rewrite a corrupt or
torn chunk as the fill value), each removal only of the version of the object that was
found."""
from __future__ import annotations

import os
import shutil
import time
from typing import Any

from zarrx.api import open_array
from zarrx.array import Array
from zarrx.errors import ConflictError, ShardError, ZarrError
from zarrx.metadata.model import ArrayMeta
from zarrx.store import LocalStore, Store
from zarrx.tools.check_report import FAILED, CheckReport, Finding
from zarrx.tools.local_entries import newest
from zarrx.tools.shards import inner_blocks

__all__ = ["repair"]


def repair(store: Store, root: str, report: CheckReport, arrays: dict[str, ArrayMeta],
           chunk_keys: dict[str, list[tuple[str, tuple[int, ...]]]], *, fill_corrupt: bool,
           temp_age: float, remove_strays: bool) -> None:
    """Repair what the check of the node at ``root`` found (``report.findings``; the arrays it
    read and their chunk keys), recording each action in ``report``: orphaned chunks outside
    their array's grid are removed, the other orphaned objects only with ``remove_strays``,
    what is stored outside an array's shape is cleared (as a shrinking ``resize`` clears it:
    the shape stored when the repair runs), temporary files older than ``temp_age`` seconds
    are swept, and with ``fill_corrupt`` corrupt and torn chunks are rewritten as the fill
    value."""
    _Repair(store, root, report, arrays, chunk_keys).run(fill_corrupt, temp_age, remove_strays)


class _Repair:
    def __init__(self, store: Store, root: str, report: CheckReport,
                 arrays: dict[str, ArrayMeta],
                 chunk_keys: dict[str, list[tuple[str, tuple[int, ...]]]]) -> None:
        self.store, self.root, self.report = store, root, report
        self.arrays, self.chunk_keys = arrays, chunk_keys
        self.cleared: dict[str, ZarrError | None] = {}

    def run(self, fill_corrupt: bool, temp_age: float, remove_strays: bool) -> None:
        rep = self.report
        for f in list(rep.findings):
            try:
                action = self._fix(f, fill_corrupt, remove_strays)
            except ZarrError as exc:
                rep.repairs.append(f"{FAILED}{f.key}: {exc}")
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
                if f.kind == "temporary" and f.key not in removed and f.generation is None:
                    self._remove_folder(f, temp_age)
                if f.kind != "temporary" or (f.key not in removed and f.generation is None):
                    continue
                if f.key not in removed:    # zarr-python's, listed as a key: that version
                    try:
                        self._delete(f)
                    except ZarrError as exc:
                        rep.repairs.append(f"{FAILED}{f.key}: {exc}")
                        continue
                rep.repaired.append(f)
                rep.repairs.append(f"removed the temporary file {f.key}")

    def _remove_folder(self, f: Finding, temp_age: float) -> None:
        """Remove the temporary folder of ``f`` (a node ``copy`` or ``convert --overwrite``
        was writing when it was killed) if nothing below it is newer than ``temp_age``."""
        path = os.path.join(os.fspath(self.store.root), *f.key.split("/"))  # type: ignore[attr-defined]
        try:
            if os.path.islink(path) or not os.path.isdir(path) or \
                    time.time() - newest(path) < temp_age:
                return
            shutil.rmtree(path)
        except OSError as exc:
            self.report.repairs.append(f"{FAILED}{f.key}: {exc.strerror or exc}")
            return
        self.report.repaired.append(f)
        self.report.repairs.append(f"removed the temporary folder {f.key}")

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
        if f.kind == "stale":
            return self._clear_outside(f)
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

    def _clear_outside(self, f: Finding) -> str:
        """Clear what the array of ``f`` stores outside its shape (once per array, for all its
        stale findings), as its shrinking ``resize`` would: the parts outside the shape of the
        objects straddling its edge set to the fill value by the ordinary partial write (each
        object read, merged and written conditionally, so a value written inside the shape
        meanwhile is kept), the objects wholly outside deleted."""
        path = f.node.lstrip("/")
        if path not in self.cleared:
            try:
                arr = open_array(self.store, mode="r+", path=path)
                arr._empty_outside(arr.metadata)
                self.cleared[path] = None
            except ZarrError as exc:
                self.cleared[path] = exc
        error = self.cleared[path]
        if error is not None:
            raise error
        inner = f" inner chunk {f.inner} of" if f.inner is not None else ""
        return (f"set what{inner} {f.key} stored outside the array's shape to the fill "
                f"value")

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
