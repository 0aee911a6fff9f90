"""``to_zarrx``: write an xarray Dataset as a Zarr group with xarray's Zarr encoding.

The result reads back identically with ``xr.open_zarr`` (engine "zarr") and with
``engine="zarrx"``. Variables are CF-encoded by xarray's coders; arrays are created and written
by zarrx. Dask-backed variables are written block by block with :func:`zarrx.dask.to_zarrx`
(blocks regrouped at shard boundaries: no lock, no shard written by two tasks).

This module checks the arguments and the stored group; the write of each variable, planned
before the store changes and then applied, is :mod:`zarrx.xarray.write_plan`.
"""
from __future__ import annotations

import difflib
import os
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrx._compat import add_note
from zarrx.api import consolidate_metadata, open_group
from zarrx.dask.graph import WriteGate
from zarrx.creation import (Ancestors, _store, check_format, check_v3_names, inherited_format,
                            node_path)
from zarrx.errors import checked_call
from zarrx.errors import (ArgumentError, ArgumentKeyError, ArgumentTypeError,
                          GroupNotFoundError, MetadataError)
from zarrx.group import Group
from zarrx.store.inputs import home_expanded
from zarrx.xarray.backend import ZarrxDataStore, array_metas, dims_and_attrs
from zarrx.xarray.create_args import ZARR_KEYS
from zarrx.xarray.encoding import array_name, check_attrs, check_name, encode_attr
from zarrx.xarray.group_checks import (check_group_document, check_new_variable,
                                       lengths_after, refuse_existing, refuse_replaced_groups,
                                       stored_node)
from zarrx.xarray.region import existing_variable, resolve_region
from zarrx.xarray.sources import refuse_replaced_sources
from zarrx.xarray.write_plan import (CF_KEYS, apply_plan, claim_rows, create_arrays,
                                     failed_state, plan_variable, refresh_stored,
                                     stored_arrays)
from zarrx.xarray.zip_target import write_zip, zip_archive

__all__ = ["to_zarrx", "prepare_write", "PreparedWrite"]

MODES = ("w", "w-", "a", "a-", "r+")
#: what reading puts in a variable's encoding that says nothing about how to write it (xarray
#: drops these too, so an opened dataset's encoding can be passed back)
READ_ONLY_KEYS = {"preferred_chunks", "source", "original_shape"}


@checked_call
def to_zarrx(ds: Any, store: Any, mode: str | None = None, group: str | None = None,
             encoding: Mapping | None = None, *, compute: bool = True,
             consolidated: bool | None = None, append_dim: Hashable | None = None,
             region: Mapping | str | None = None, storage_options: dict | None = None,
             zarr_format: int | None = None, write_empty_chunks: bool | None = None,
             safe_chunks: bool = True, align_chunks: bool = False,
             chunkmanager_store_kwargs: dict | None = None,
             write_inherited_coords: bool = False) -> Any:
    """Write ``ds`` (an ``xarray.Dataset``, or a ``DataArray`` as ``DataArray.to_zarr`` writes
    it, which ``xr.open_dataarray`` reads back) to the Zarr group at ``store`` / ``group``.
    A ``DataTree`` is written as ``DataTree.to_zarr`` writes it, one group per node (see
    :func:`zarrx.xarray.tree.tree_to_zarrx`; ``write_inherited_coords`` applies to it only).

    The arguments are those of ``Dataset.to_zarr``. ``mode``: ``w`` replace, ``w-`` create
    (fail if it exists; the default), ``a`` add or replace variables (the default with
    ``append_dim``), ``a-`` append only the variables along ``append_dim`` (without it, as
    ``a``), ``r+`` write into existing variables only (the default with ``region``).
    ``region``: ``{dim: slice}``, with ``"auto"`` for a dimension located by its index
    coordinate (or ``"auto"`` for all).
    ``encoding``: ``{name: {"chunks": ..., "shards": ..., "compressors": ..., "dtype": ...,
    "_FillValue": ..., "units": ...}}``. Consolidated metadata is written unless
    ``consolidated=False``. Returns the zarrx Group, or a ``Delayed`` writing the dask-backed
    variables when ``compute=False`` (everything else is written already).

    Dask blocks are always regrouped at shard (or chunk) boundaries, so no two tasks write one
    stored object: ``safe_chunks`` and ``align_chunks`` are accepted and have nothing left to
    do. ``chunkmanager_store_kwargs`` go to ``dask.compute`` (``scheduler=``...) when
    ``compute=True``."""
    import xarray as xr

    if write_empty_chunks is not None and not isinstance(write_empty_chunks, (bool, np.bool_)):
        # (not taken by its truth: "false" would be True; engine "zarr" refuses it too)
        raise ArgumentTypeError(f"to_zarrx: write_empty_chunks: expected True, False or None, "
                                f"found {type(write_empty_chunks).__name__} "
                                f"{write_empty_chunks!r}")
    if chunkmanager_store_kwargs is not None and not isinstance(chunkmanager_store_kwargs, Mapping):
        raise ArgumentTypeError(f"to_zarrx: chunkmanager_store_kwargs: expected a dict, found "
                                f"{type(chunkmanager_store_kwargs).__name__}")

    store = home_expanded(store)
    archive = zip_archive(store, storage_options)
    if archive is not None:     # entries cannot be replaced: written anew once written
        return write_zip(to_zarrx, ds, archive, group, compute, mode=mode,
                         encoding=encoding, consolidated=consolidated, append_dim=append_dim,
                         region=region, zarr_format=zarr_format,
                         write_empty_chunks=write_empty_chunks, safe_chunks=safe_chunks,
                         align_chunks=align_chunks,
                         chunkmanager_store_kwargs=chunkmanager_store_kwargs,
                         write_inherited_coords=write_inherited_coords)
    tree_type = getattr(xr, "DataTree", None)      # (in xarray 2024.10 and later)
    if tree_type is not None and isinstance(ds, tree_type):
        from zarrx.xarray.tree import tree_to_zarrx
        return tree_to_zarrx(prepare_write, ds, store, mode, group, encoding,
                             write_inherited_coords=write_inherited_coords, compute=compute,
                             consolidated=consolidated, append_dim=append_dim, region=region,
                             storage_options=storage_options, zarr_format=zarr_format,
                             write_empty_chunks=write_empty_chunks, safe_chunks=safe_chunks,
                             align_chunks=align_chunks,
                             chunkmanager_store_kwargs=chunkmanager_store_kwargs)
    return prepare_write(ds, store, mode, group, encoding, compute=compute,
                         consolidated=consolidated, append_dim=append_dim, region=region,
                         storage_options=storage_options, zarr_format=zarr_format,
                         write_empty_chunks=write_empty_chunks,
                         chunkmanager_store_kwargs=chunkmanager_store_kwargs).apply()


def prepare_write(ds: Any, store: Any, mode: str | None, group: str | None,
                  encoding: Mapping | None, *, compute: bool, consolidated: bool | None,
                  append_dim: Hashable | None, region: Mapping | str | None,
                  storage_options: dict | None, zarr_format: int | None,
                  write_empty_chunks: bool | None, chunkmanager_store_kwargs: dict | None,
                  **_: Any) -> PreparedWrite:
    """Everything :func:`to_zarrx` does to ``ds`` (a Dataset or DataArray) before the store
    changes: the arguments and the stored group checked, every variable encoded and its write
    planned. The store changes only when the result is applied, so that a DataTree's nodes are
    all checked before any is written. (Other keyword arguments of ``to_zarrx``, such as
    ``safe_chunks``, have nothing to do here.)"""
    import xarray as xr

    if isinstance(ds, xr.DataArray):
        ds = _as_dataset(ds)
    if not isinstance(ds, xr.Dataset):
        raise ArgumentTypeError(f"to_zarrx: expected an xarray.Dataset, DataArray or DataTree, "
                                f"found {type(ds).__name__}")
    zarr_format = check_format(zarr_format, none=True)
    for name in ds.variables:                # before anything is opened, as xarray checks
        if name is not None and (not isinstance(name, str) or not name):
            raise ArgumentTypeError(f"to_zarrx: invalid variable name {name!r}: expected a "
                                    "non-empty string or None, as xarray requires for zarr "
                                    "files")
        check_name(array_name(name), zarr_format)
        check_attrs(ds.variables[name].attrs, f"to_zarrx: variable {name!r}")
        for dim in ds.variables[name].dims:
            if not isinstance(dim, str):    # (str() of it would come back: another name)
                raise ArgumentTypeError(f"to_zarrx: variable {name!r}: invalid dimension name "
                                        f"{dim!r} ({type(dim).__name__}): expected a string "
                                        f"(what else is stored reads back as another name)")
        shape = ds.variables[name].shape
        if any(n != n for n in shape):          # (NaN: dask blocks of unknown sizes)
            raise ArgumentError(f"to_zarrx: variable {name!r} has dask blocks of unknown "
                                f"sizes (shape {shape}); call compute_chunk_sizes() on its "
                                f"dask array first")
    check_attrs(ds.attrs, "to_zarrx: the dataset")
    mode = _mode(mode, append_dim, region)
    # modes "w" and "w-" create (or replace) the group only once every variable is checked and
    # encoded (below), so a refused write leaves the store as it was
    creating = mode in ("w", "w-")
    # the stored group, opened without creating it: an append or a region write needs it, and
    # modes "a" / "a-" create a missing one only once everything is checked (the names Zarr v3
    # reserves are known once its format is), so a refused write leaves nothing behind
    grp = None if creating else _open(store, mode, group, zarr_format, storage_options,
                                      existing=True,
                                      missing_ok=mode in ("a", "a-") and append_dim is None
                                      and region is None)
    # (the nodes read to refuse an existing group and to decide the format are those the
    # group's creation checks in mode "w-": one batch; mode "w" reads them again to replace it)
    fmt, found = (grp.zarr_format, None) if grp is not None else \
        _new_format(store, mode, group, zarr_format, storage_options)
    if grp is None:     # the group's name, checked before anything is created (a DataTree's
        # nodes are all prepared before the first is written)
        path = node_path(group, "to_zarrx", "group", new=True)
        if fmt == 3:
            check_v3_names([path], path, "to_zarrx")
    if fmt == 3 and zarr_format is None:    # (the format found: Zarr v3's reserved names)
        for name in ds.variables:
            check_name(array_name(name), fmt)
    if mode == "w":     # (the group is replaced before dask-backed variables compute)
        refuse_replaced_sources(ds.variables.items(), found.store,
                                node_path(group, "to_zarrx", "group"), "to_zarrx")
    if encoding is not None and not isinstance(encoding, Mapping):
        raise ArgumentTypeError(f"to_zarrx: encoding: expected a dict of variable name -> dict, "
                                f"found {type(encoding).__name__} {encoding!r}")
    encoding = dict(encoding or {})
    for name, enc in encoding.items():
        if name not in ds.variables:        # (a KeyError, as xarray raises)
            raise ArgumentKeyError(f"to_zarrx: encoding names {name!r}, which is not a "
                                   f"variable")
        if not isinstance(enc, Mapping):
            raise ArgumentTypeError(f"to_zarrx: encoding of {name!r}: expected a dict, found "
                                    f"{type(enc).__name__} {enc!r}")
        bad = set(enc) - ZARR_KEYS - CF_KEYS - READ_ONLY_KEYS
        if fmt == 2 and "fill_value" in enc:
            bad.add("fill_value")
        if bad:
            close = [difflib.get_close_matches(k, sorted(ZARR_KEYS | CF_KEYS), n=1,
                                               cutoff=0.75) for k in sorted(bad)]
            hint = "; in Zarr v2 use _FillValue" if "fill_value" in bad and fmt == 2 else \
                "; use compressors" if "compressor" in bad else \
                next((f"; did you mean {c[0]!r}?" for c in close if c), "")
            raise ArgumentError(f"to_zarrx: encoding of {name!r}: unexpected keys {sorted(bad)}"
                                f"{hint}")
        if enc.get("_Unsigned") is not None and \
                enc.get("_FillValue", enc.get("missing_value")) is None:
            # (xarray's coders apply it with a fill value only; engine "zarr" then refuses it)
            raise ArgumentError(f"to_zarrx: encoding of {name!r}: _Unsigned "
                                f"{enc['_Unsigned']!r} needs a _FillValue (or missing_value), "
                                f"found none")
    if mode == "r+" and consolidated:       # (as xarray's writer: read through it)
        open_group(grp.store, mode="r", use_consolidated=True, _what="to_zarrx")
    # the stored arrays, listed once for every check below (nothing changes until apply)
    metas = [] if grp is None else array_metas(grp)
    existing = stored_arrays(grp, metas)      # (each array's metadata read once: by the listing)
    if mode in ("a", "a-", "r+"):
        for name in encoding:
            if array_name(name) in existing:
                raise ArgumentError(f"to_zarrx: variable {name!r} already exists, but encoding "
                                    f"was provided")
    if append_dim is not None:
        _check_append_dim(grp, ds, append_dim, metas)
    slices = resolve_region(ds, grp, region, existing, metas) if region is not None else {}
    if region is not None:
        ds = _drop_for_region(ds, slices)
    variables, attrs = xr.conventions.encode_dataset_coordinates(ds)
    attrs = {str(k): encode_attr(v) for k, v in attrs.items()}
    if mode in ("w", "w-", "a", "a-"):
        check_group_document(attrs, fmt)
    # Everything is checked and encoded before the store changes, so a refused write (a size
    # that does not fit, a value the stored type cannot hold, a bad codec) leaves it as it was.
    plans = []
    lengths = None if grp is None or mode == "w" else lengths_after(metas, ds, append_dim)
    for name, var in variables.items():
        key = array_name(name)
        is_new = mode == "w" or key not in existing
        if mode == "r+" and is_new:
            raise ArgumentError(f"to_zarrx: mode 'r+' writes only existing variables; {key!r} is "
                                f"not in {grp!r} (use mode='a' to add it)")
        # (without append_dim, mode "a-" writes as mode "a" does, as in xarray)
        if mode == "a-" and not is_new and append_dim is not None \
                and append_dim not in var.dims:
            continue
        if not is_new:
            var = existing_variable(grp, key, var, append_dim, slices, existing[key])
        elif lengths is not None:
            check_new_variable(key, var, lengths)
        if is_new and name in encoding:
            var = var.copy(deep=False)
            var.encoding = dict(encoding[name])
        plans.append(plan_variable(grp, key, var, is_new, fmt, append_dim, slices,
                                    write_empty_chunks, given=is_new and name in encoding,
                                    stored=existing.get(key)))
    if grp is not None:
        refuse_replaced_groups(grp, [p.name for p in plans if p.create is not None])
    return PreparedWrite(store=store, mode=mode, group=group, fmt=fmt, found=found, grp=grp,
                         storage_options=storage_options, attrs=attrs, append_dim=append_dim,
                         plans=plans, consolidated=consolidated, compute=compute, region=slices,
                         dask_kwargs=dict(chunkmanager_store_kwargs or {}))


@dataclass(kw_only=True)
class PreparedWrite:
    """A write :func:`prepare_write` checked and planned: :meth:`apply` makes it. ``fmt``: the
    Zarr format of the group written."""
    store: Any
    mode: str
    group: str | None
    fmt: int
    found: Ancestors | None     # the nodes read when the group's format was decided
    grp: Group | None           # the stored group written into (None: one to create)
    storage_options: dict | None
    attrs: Mapping
    append_dim: Hashable | None
    plans: list
    consolidated: bool | None
    compute: bool
    region: dict                # {dim: slice} of a region write
    dask_kwargs: dict

    def apply(self, *, reread: bool = False, defer: list | None = None) -> Any:
        """Write it: the group, then each variable. Returns the zarrx Group, or a ``Delayed``
        writing the dask-backed variables when not ``compute``. ``reread``: the store may have
        changed since the write was prepared (a DataTree's nodes written before this one), so
        the nodes read then are read again before the group is created. ``defer``: a list
        the dask writes go to (with ``compute``, no append), for :mod:`zarrx.xarray.tree`."""
        grp, mode = self.grp, self.mode
        if grp is None:
            grp = _open(self.store, mode, self.group, self.fmt, self.storage_options,
                        found=None if reread else self.found)
        claim = None
        if self.append_dim is not None:     # (before the attributes: a claim refused by
            # the stored arrays as found then leaves the group as it was)
            claim = claim_rows(grp, self.plans, str(self.append_dim))
        # a failure once rows are claimed (a dask block whose values the stored type cannot
        # hold, found only as it computes) shrinks the grown arrays back; the gate stops the
        # graph's writes still under way first (docs/guide/xarray.md, "When a write of dask
        # values fails")
        gate = WriteGate() if self.compute else None
        try:
            return self._write(grp, mode, gate, defer if claim is None else None)
        except BaseException as exc:
            if gate is not None:
                gate.close()
            if claim is not None:
                claim.give_back(exc, gate)
            raise

    def _write(self, grp: Group, mode: str, gate: WriteGate | None,
               defer: list | None = None) -> Any:
        if mode in ("w", "w-", "a", "a-"):
            grp.attrs.put(self.attrs)
        # the new variables' arrays, all together (their names hold no "/": check_name)
        create_arrays(grp, self.plans, new_group=mode in ("w", "w-"))
        refresh_stored(grp, self.plans)     # (another writer may have resized or replaced them)
        writes = [apply_plan(grp, plan, gate) for plan in self.plans]
        delayed = [w for w in writes if w is not None]
        if self.consolidated is not False and mode != "r+":
            # (the whole hierarchy, from the store's root; mode "r+" changes no metadata, and
            # any consolidated metadata stored is in step: a store kept without any stays so,
            # as with xarray's writer)
            consolidate_metadata(grp.store)
        if not delayed:
            return grp if self.compute else _nothing()
        import dask
        if self.compute and defer is not None:      # (computed with a DataTree's others)
            return defer.append((self, grp, writes, gate)) or grp
        if self.compute:
            try:
                dask.compute(*delayed, **self.dask_kwargs)
            except BaseException as exc:    # (an append gives its rows back: Claim)
                if self.append_dim is None:
                    add_note(exc, failed_state(mode, grp.path, self.plans, writes, self.region,
                                              gate))
                raise
            return grp
        return dask.delayed(_all_written)(*delayed)


def _as_dataset(da: Any) -> Any:
    """A DataArray as the one-variable Dataset ``DataArray.to_zarr`` writes, which
    ``xr.open_dataarray`` reads back: a DataArray without a name, or named like one of its
    coordinates or dimensions, is stored under xarray's generic variable name (and its name in
    a group attribute)."""
    from xarray.backends.api import DATAARRAY_NAME, DATAARRAY_VARIABLE

    if da.name is None:
        return da.to_dataset(name=DATAARRAY_VARIABLE)
    if da.name in da.coords or da.name in da.dims:
        ds = da.to_dataset(name=DATAARRAY_VARIABLE)
        ds.attrs[DATAARRAY_NAME] = da.name
        return ds
    return da.to_dataset()


def _all_written(*_: Any) -> None:
    return None


def _nothing() -> Any:
    import dask
    return dask.delayed(_all_written)()


def _mode(mode: str | None, append_dim: Any, region: Any) -> str:
    if append_dim is not None and region is not None:
        raise ArgumentError("to_zarrx: append_dim and region cannot be used together")
    if not isinstance(append_dim, Hashable):
        raise ArgumentTypeError(f"to_zarrx: append_dim: expected a dimension name, found "
                                f"{type(append_dim).__name__} {append_dim!r}")
    if mode is None:
        mode = "a" if append_dim is not None else "r+" if region is not None else "w-"
    if mode not in MODES:
        raise ArgumentError(f"to_zarrx: mode: expected one of {', '.join(MODES)}, found {mode!r}")
    if append_dim is not None and mode not in ("a", "a-"):
        raise ArgumentError(f"to_zarrx: append_dim needs mode 'a' or 'a-', found {mode!r}")
    if region is not None and mode not in ("a", "a-", "r+"):
        raise ArgumentError(f"to_zarrx: region needs mode 'r+', 'a' or 'a-', found {mode!r}")
    return mode


def _new_format(store: Any, mode: str, group: str | None, zarr_format: int | None,
                storage_options: dict | None) -> tuple[int, Ancestors]:
    """The format of the group modes ``w`` and ``w-`` create: ``zarr_format``, else that of the
    hierarchy it goes into (:func:`~zarrx.creation.inherited_format`), else 3; and the nodes
    read to find it (the group's and those above it, in one batch), which the refusal of an
    existing group (mode ``w-``, checked here first) and its creation check (mode ``w`` reads
    them again when it replaces the group, see :func:`_open`)."""
    if isinstance(store, os.PathLike):
        store = os.fspath(store)
    st = _store(store, "a", storage_options, what="to_zarrx")
    path = node_path(group, "to_zarrx", "group")
    found = Ancestors(st, path, consolidated_at=[path])
    if mode == "w-":
        refuse_existing(store, group, storage_options, found)
    return inherited_format(st, path, zarr_format, found), found


def _open(store: Any, mode: str, group: str | None, fmt: int | None,
          storage_options: dict | None, *, existing: bool = False, missing_ok: bool = False,
          found: Ancestors | None = None) -> Group | None:
    """The group to write: created or replaced (modes ``w-``, ``w``), else opened, and created
    in mode ``a`` / ``a-`` unless ``existing`` (the write needs a stored group; with
    ``missing_ok``, None when there is none, and nothing is created). ``found``:
    the nodes :func:`_new_format` read, with the store it opened (mode ``w-``: used again, not
    read again; mode ``w``: read again, as the consolidated documents it keeps in step may
    have appeared since)."""
    if isinstance(store, os.PathLike):
        store = os.fspath(store)
    kw: dict[str, Any] = {} if storage_options is None else {"storage_options": storage_options}
    path = node_path(group, "to_zarrx", "group")
    if mode == "w-" and found is None:
        refuse_existing(store, group, storage_options)
    if mode in ("w-", "w"):
        if found is not None:           # the store _new_format opened (storage_options applied)
            if mode == "w":
                # what the batch found before the variables were encoded may have changed
                # meanwhile (another writer's consolidation): the replacement reads the line
                # again, with the consolidated documents it keeps in step
                found = Ancestors(found.store, path, replacing=True)
            return open_group(found.store, mode=mode, path=path, zarr_format=fmt or 3,
                              _found=found)
        return open_group(store, mode=mode, path=path, zarr_format=fmt or 3, **kw)
    if fmt is not None:     # a node of the other format: opening it as this one would miss it
        node = stored_node(store, path, kw)
        if node is not None and node.zarr_format != fmt:
            raise ArgumentError(f"to_zarrx: zarr_format={fmt}, but the node at {path or '/'!r} "
                                f"is Zarr v{node.zarr_format} (mode {mode!r} writes into it; "
                                f"leave zarr_format out or use mode='w' to replace it)")
    try:
        return open_group(store, mode="r+" if mode == "r+" or existing else "a", path=path,
                          zarr_format=fmt, use_consolidated=False, **kw)
    except GroupNotFoundError:
        if missing_ok:
            return None
        raise


def _check_append_dim(grp: Group, ds: Any, dim: Hashable, metas: list) -> None:
    known = set(ZarrxDataStore(grp, arrays=metas).get_dimensions(str(dim)))
    if dim not in known:
        raise ArgumentError(f"to_zarrx: append_dim={dim!r} is not a dimension of {grp.name!r} "
                            f"(found {sorted(known)})")
    if dim not in ds.dims:
        raise ArgumentError(f"to_zarrx: append_dim={dim!r} is not a dimension of the dataset")
    if not ds.sizes[dim]:
        return
    # a stored variable along dim left out would stay shorter than the appended ones: the
    # group would no longer open (xarray's writer appends without it)
    given = {array_name(name) for name in ds.variables}
    left = []
    for name, meta in metas:
        try:
            dims, _ = dims_and_attrs(meta, name)
        except MetadataError:
            continue                        # not an xarray variable: it has no say
        if name not in given and str(dim) in dims:
            left.append(name)
    if left:
        raise ArgumentError(f"to_zarrx: append_dim={dim!r}: the stored variables {left} along "
                            f"{dim!r} are not in the dataset; appending without them would "
                            f"leave them shorter and the group unreadable (append them too)")


def _drop_for_region(ds: Any, slices: dict) -> Any:
    """Region writes touch only variables that have a dimension in the region (an empty
    region: every variable, whole), and never the index coordinates (as xarray: the stored ones
    locate the region and stay as they are)."""
    outside = [n for n, v in ds.variables.items() if not set(v.dims) & set(slices)]
    if outside and slices:      # (an empty region writes every variable whole, as xarray)
        raise ArgumentError(f"to_zarrx: region covers {sorted(map(str, slices))}, but variables "
                            f"{sorted(map(str, outside))} have none of these dimensions; drop them "
                            f"(ds.drop_vars) before writing a region")
    return ds.drop_vars(list(ds.indexes))
