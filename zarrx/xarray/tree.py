"""``to_zarrx`` of an ``xarray.DataTree``: each node of the tree is written as a group of the
hierarchy (its variables as arrays), as ``DataTree.to_zarr`` writes it, and read back by
``xr.open_datatree(..., engine="zarrx")`` or engine "zarr".
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from zarrx._compat import add_note
from zarrx.api import consolidate_metadata, open_group
from zarrx.creation import _store, node_path
from zarrx.errors import ArgumentError, ArgumentTypeError
from zarrx.xarray.sources import refuse_replaced_sources
from zarrx.xarray.write_plan import _is_dask, failed_state

__all__ = ["tree_to_zarrx"]


def tree_to_zarrx(prepare: Callable[..., Any], tree: Any, store: Any, mode: str | None,
                  group: str | None, encoding: Mapping | None, *, write_inherited_coords: bool,
                  compute: bool, consolidated: bool | None, append_dim: Any,
                  storage_options: dict | None, zarr_format: int | None,
                  **kwargs: Any) -> Any:
    """Write every node of ``tree``, each prepared with ``prepare``
    (:func:`zarrx.xarray.writer.prepare_write`; :func:`zarrx.xarray.to_zarrx` calls this for a
    DataTree), all before the first is written: the root at ``group`` (with its inherited
    coordinates, which are its own), each other node at its path below it (with the
    coordinates it inherits only when ``write_inherited_coords``). ``encoding`` is
    keyed by node path (``"/"``, ``"/a/b"``), then by variable. ``mode`` applies to every
    node (``w`` replaces the root group, and so the whole tree below it). ``kwargs`` are the
    other arguments of ``to_zarrx`` (``region``, ``write_empty_chunks``...), given to each
    node."""
    if append_dim is not None:      # (a NotImplementedError in xarray)
        raise ArgumentError("to_zarrx: append_dim is not supported for a DataTree; append to "
                            "each node's group with group=")
    if encoding is not None and not isinstance(encoding, Mapping):
        raise ArgumentTypeError(f"to_zarrx: encoding: expected a dict of node path -> dict of "
                                f"variable name -> dict, found {type(encoding).__name__}")
    encoding = dict(encoding or {})
    unknown = sorted(map(str, set(encoding) - set(tree.groups)))
    if unknown:
        raise ArgumentError(f"to_zarrx: encoding names groups {unknown}, which are not in the "
                            f"DataTree (expected node paths such as '/' or '/a/b')")
    top = node_path(group, "to_zarrx", "group")
    kw: dict[str, Any] = {} if storage_options is None else {"storage_options": storage_options}
    if mode == "w":     # the root's write replaces the whole tree before any node computes
        target = _store(store, "a", storage_options, what="to_zarrx")
        for _, node in tree.subtree_with_keys:
            ds = node.to_dataset(inherit=write_inherited_coords or node is tree)
            refuse_replaced_sources(ds.variables.items(), target, top, "to_zarrx")
    fmt = zarr_format
    prepared = []
    # every node is checked and planned before the store changes: a refused node leaves the
    # whole tree as it was
    for rel, node in tree.subtree_with_keys:
        at_root = node is tree
        path = top if at_root else "/".join(p for p in (top, rel) if p)
        prepared.append(prepare(node.to_dataset(inherit=write_inherited_coords or at_root),
                                store, mode, path or None, encoding.get(node.path),
                                compute=compute, consolidated=False, zarr_format=fmt,
                                append_dim=None, storage_options=storage_options, **kwargs))
        fmt = prepared[0].fmt           # the nodes below are of the root's format
    rplus = prepared[0].mode == "r+"    # (changes no metadata: see PreparedWrite._write)
    if rplus and consolidated:          # (as xarray's writer: read through it)
        open_group(prepared[0].grp.store, mode="r", use_consolidated=True, _what="to_zarrx")
    # (the root's write, and each node's, change what the next node's creation checks)
    writes = []
    # with compute, the nodes' dask values are computed together once every node is written,
    # as xarray's writer computes them: what several nodes share computes once
    pending: list | None = [] if compute else None
    for i, p in enumerate(prepared):
        try:
            writes.append(p.apply(reread=i > 0, defer=pending))
        except BaseException as exc:    # (the store failed: the nodes before it are written
            # but for their dask values, never computed; those after it not at all)
            add_note(exc, _tree_state(mode, [q.group or "/" for q in prepared], i,
                                      _lazy(prepared[:i])))
            raise
    try:
        root = open_group(store, mode="r+", path=top, use_consolidated=False, **kw)
        if consolidated is not False and not rplus:     # the whole hierarchy, from the root
            consolidate_metadata(root.store)
    except BaseException as exc:    # (before any dask value computes)
        lazy = _lazy(prepared)
        add_note(exc, f"to_zarrx: the DataTree's groups {[q.group or '/' for q in prepared]} "
                      f"are written" + (f" but for the values of their dask-backed variables "
                                        f"{lazy}, not computed" if lazy else "")
                 + "; its consolidated metadata is not; write the tree again")
        raise
    if compute:
        if pending:
            compute_together(pending, [q.group or "/" for q in prepared])
        return root
    import dask
    return dask.delayed(_all_written)(*writes)


def compute_together(pending: list, paths: list[str]) -> None:
    """Compute the dask writes of a DataTree's nodes (``pending``: what
    :meth:`PreparedWrite.apply` deferred, as ``(write, group, writes, gate)``), in one graph.
    On a failure no block write starts after it, and the error notes what each node with dask
    values holds, then that every group of ``paths`` is written but for those values."""
    import dask
    delayed = [w for _, _, writes, _ in pending for w in writes if w is not None]
    try:
        dask.compute(*delayed, **pending[0][0].dask_kwargs)
    except BaseException as exc:
        for _, _, _, gate in pending:   # every node's first: none starts while one waits
            gate.stop()
        for _, _, _, gate in pending:
            gate.close()
        for write, grp, writes, gate in pending:
            add_note(exc, failed_state(write.mode, grp.path, write.plans, writes, write.region,
                                       gate))
        add_note(exc, f"to_zarrx: the DataTree's dask-backed values (every node's, computed "
                      f"together) failed as they computed; the groups {paths} are written "
                      f"but for those values (see the notes above); write the tree again")
        raise


def _lazy(prepared: list) -> dict[str, list[str]]:
    """The dask-backed variables of the prepared writes ``prepared``, by group."""
    return {q.group or "/": names for q in prepared
            if (names := [pl.name for pl in q.plans if _is_dask(pl.data)])}


def _all_written(*_: Any) -> None:
    return None


def _tree_state(mode: str | None, paths: list[str], failed: int,
                lazy: dict[str, list[str]]) -> str:
    """What the store holds once the write of the node at ``paths[failed]`` failed: the nodes
    are written one after the other (``paths``: their groups, in that order), and the
    dask-backed variables of those before it (``lazy``: by group) were to be computed once
    all were written, so they were not."""
    done, left = paths[:failed], paths[failed + 1:]
    said = f"to_zarrx: the DataTree's write failed at the group {paths[failed]!r}"
    if done:
        said += f"; the groups {done} before it are written"
        if lazy:
            said += (f" but for the values of their dask-backed variables {lazy}, not "
                     f"computed (they hold the fill value, or in arrays stored before, "
                     f"their previous values)")
    if left:
        said += f"; the groups {left} after it are not" + \
            (" (mode 'w' replaced the whole tree first: they are missing)" if mode == "w"
             else "")
    return said + "; write the tree again"
