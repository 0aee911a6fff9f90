"""``to_zarrx``: write an xarray Dataset as a Zarr group with xarray's Zarr encoding.

The result reads back identically with ``xr.open_zarr`` (engine "zarr") and with
``engine="zarrx"``. Variables are CF-encoded by xarray's coders; arrays are created and written
by zarrx. Dask-backed variables are written block by block with :func:`zarrx.dask.to_zarrx`
(blocks regrouped at shard boundaries: no lock, no shard written by two tasks).
"""
from __future__ import annotations

import os
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrx.api import consolidate_metadata, open_group
from zarrx.array import Array
from zarrx.chunk_io import check_value
from zarrx.creation import check_format, create_array, node_path
from zarrx.dask.graph import store_blocks
from zarrx.errors import (ArgumentError, ArgumentKeyError, ArgumentTypeError, MetadataError,
                          NodeExistsError, ZarrError)
from zarrx.group import Group
from zarrx.store.memory import MemoryStore
from zarrx.xarray.backend import array_metas, dims_and_attrs, variable_element
from zarrx.xarray.create_args import (ZARR_KEYS, asks_vlen_bytes as _asks_vlen_bytes,
                                      asks_vlen_utf8 as _asks_vlen_utf8,
                                      creation_kwargs as _creation_kwargs)
from zarrx.xarray.encoding import (DIMENSION_KEY, array_name, cf_encode, check_attrs,
                                   encode_attr, encode_fill_attr, storage_dtype)
from zarrx.xarray.region import existing_variable, resolve_region, stored_sizes

__all__ = ["to_zarrx"]

MODES = ("w", "w-", "a", "a-", "r+")
CF_KEYS = {"dtype", "_FillValue", "missing_value", "scale_factor", "add_offset", "units",
           "calendar", "_Encoding"}
#: what reading puts in a variable's encoding that says nothing about how to write it (xarray
#: drops these too, so an opened dataset's encoding can be passed back)
READ_ONLY_KEYS = {"preferred_chunks", "source", "original_shape"}


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

    if chunkmanager_store_kwargs is not None and not isinstance(chunkmanager_store_kwargs, Mapping):
        raise ArgumentTypeError(f"to_zarrx: chunkmanager_store_kwargs: expected a dict, found "
                                f"{type(chunkmanager_store_kwargs).__name__}")

    tree_type = getattr(xr, "DataTree", None)      # (in xarray 2024.10 and later)
    if tree_type is not None and isinstance(ds, tree_type):
        from zarrx.xarray.tree import tree_to_zarrx
        return tree_to_zarrx(to_zarrx, ds, store, mode, group, encoding,
                             write_inherited_coords=write_inherited_coords, compute=compute,
                             consolidated=consolidated, append_dim=append_dim, region=region,
                             storage_options=storage_options, zarr_format=zarr_format,
                             write_empty_chunks=write_empty_chunks, safe_chunks=safe_chunks,
                             align_chunks=align_chunks,
                             chunkmanager_store_kwargs=chunkmanager_store_kwargs)
    if isinstance(ds, xr.DataArray):
        ds = _as_dataset(ds)
    if not isinstance(ds, xr.Dataset):
        raise ArgumentTypeError(f"to_zarrx: expected an xarray.Dataset, DataArray or DataTree, "
                                f"found {type(ds).__name__}")
    check_format(zarr_format, none=True)
    for name in ds.variables:                # before anything is opened, as xarray checks
        if name is not None and (not isinstance(name, str) or not name):
            raise ArgumentTypeError(f"to_zarrx: invalid variable name {name!r}: expected a "
                                    "non-empty string or None, as xarray requires for zarr "
                                    "files")
        check_attrs(ds.variables[name].attrs, f"to_zarrx: variable {name!r}")
    check_attrs(ds.attrs, "to_zarrx: the dataset")
    mode = _mode(mode, append_dim, region)
    # modes "w" and "w-" create (or replace) the group only once every variable is checked and
    # encoded (below), so a refused write leaves the store as it was
    creating = mode in ("w", "w-")
    if mode == "w-":
        _refuse_existing(store, group, storage_options)
    # an append or a region write needs the stored group: opened without creating it, so that
    # one refused for a missing group leaves nothing behind
    grp = None if creating else _open(store, mode, group, zarr_format, storage_options,
                                      existing=append_dim is not None or region is not None)
    fmt = grp.zarr_format if grp is not None else zarr_format or 3
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
            hint = "; in Zarr v2 use _FillValue" if "fill_value" in bad and fmt == 2 else \
                "; use compressors" if "compressor" in bad else ""
            raise ArgumentError(f"to_zarrx: encoding of {name!r}: unexpected keys {sorted(bad)}"
                                f"{hint}")
    existing = set() if grp is None else {name for name, _ in array_metas(grp)}
    if mode in ("a", "a-", "r+"):
        for name in encoding:
            if array_name(name) in existing:
                raise ArgumentError(f"to_zarrx: variable {name!r} already exists, but encoding "
                                    f"was provided")
    if append_dim is not None:
        _check_append_dim(grp, ds, append_dim, existing)
    slices = resolve_region(ds, grp, region, existing) if region is not None else {}
    if region is not None:
        ds = _drop_for_region(ds, slices)
    variables, attrs = xr.conventions.encode_dataset_coordinates(ds)
    # Everything is checked and encoded before the store changes, so a refused write (a size
    # that does not fit, a value the stored type cannot hold, a bad codec) leaves it as it was.
    plans = []
    lengths = None if grp is None or mode == "w" else _lengths_after(grp, ds, append_dim)
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
            var = existing_variable(grp, key, var, append_dim, slices)
        elif lengths is not None:
            _check_new_variable(key, var, lengths)
        if is_new and name in encoding:
            var = var.copy(deep=False)
            var.encoding = dict(encoding[name])
        plans.append(_plan_variable(grp, key, var, is_new, fmt, append_dim, slices,
                                    write_empty_chunks, given=is_new and name in encoding))
    if grp is None:
        grp = _open(store, mode, group, zarr_format, storage_options)
    if mode in ("w", "w-", "a", "a-"):
        grp.attrs.put({str(k): encode_attr(v) for k, v in attrs.items()})
    if append_dim is not None:
        _claim_rows(grp, plans, str(append_dim))
    writes = [_apply(grp, plan) for plan in plans]
    delayed = [w for w in writes if w is not None]
    if consolidated is not False:       # the whole hierarchy, from the store's root
        consolidate_metadata(grp.store)
    if not delayed:
        return grp if compute else _nothing()
    import dask
    if compute:
        dask.compute(*delayed, **dict(chunkmanager_store_kwargs or {}))
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
    if mode is None:
        mode = "a" if append_dim is not None else "r+" if region is not None else "w-"
    if mode not in MODES:
        raise ArgumentError(f"to_zarrx: mode: expected one of {', '.join(MODES)}, found {mode!r}")
    if append_dim is not None and mode not in ("a", "a-"):
        raise ArgumentError(f"to_zarrx: append_dim needs mode 'a' or 'a-', found {mode!r}")
    if region is not None and mode not in ("a", "a-", "r+"):
        raise ArgumentError(f"to_zarrx: region needs mode 'r+', 'a' or 'a-', found {mode!r}")
    return mode


def _stored_node(store: Any, path: str, kw: dict) -> Any:
    """The array or group at ``path`` (of either Zarr format), or None."""
    from zarrx.api import open as open_node
    from zarrx.errors import NodeNotFoundError
    try:
        return open_node(store, mode="r", path=path, **kw)
    except NodeNotFoundError:
        return None


def _refuse_existing(store: Any, group: str | None, storage_options: dict | None) -> None:
    """Mode ``w-``: a node already at ``group`` is a ``NodeExistsError``."""
    if isinstance(store, os.PathLike):
        store = os.fspath(store)
    kw: dict[str, Any] = {} if storage_options is None else {"storage_options": storage_options}
    path = node_path(group, "to_zarrx", "group")
    if _stored_node(store, path, kw) is not None:
        raise NodeExistsError(f"to_zarrx: a node exists at {path or '/'!r} (mode 'w-' creates; "
                              f"use mode='w' to replace or mode='a' to add)")


def _open(store: Any, mode: str, group: str | None, fmt: int | None,
          storage_options: dict | None, *, existing: bool = False) -> Group:
    """The group to write: created or replaced (modes ``w-``, ``w``), else opened, and created
    in mode ``a`` / ``a-`` unless ``existing`` (the write needs a stored group)."""
    if isinstance(store, os.PathLike):
        store = os.fspath(store)
    kw: dict[str, Any] = {} if storage_options is None else {"storage_options": storage_options}
    path = node_path(group, "to_zarrx", "group")
    if mode == "w-":
        _refuse_existing(store, group, storage_options)
    if mode in ("w-", "w"):
        return open_group(store, mode=mode, path=path, zarr_format=fmt or 3, **kw)
    if fmt is not None:     # a node of the other format: opening it as this one would miss it
        node = _stored_node(store, path, kw)
        if node is not None and node.zarr_format != fmt:
            raise ArgumentError(f"to_zarrx: zarr_format={fmt}, but the node at {path or '/'!r} "
                                f"is Zarr v{node.zarr_format} (mode {mode!r} writes into it; "
                                f"leave zarr_format out or use mode='w' to replace it)")
    return open_group(store, mode="r+" if mode == "r+" or existing else "a", path=path,
                      zarr_format=fmt, use_consolidated=False, **kw)


def _check_append_dim(grp: Group, ds: Any, dim: Hashable, existing: set[str]) -> None:
    known = set(stored_sizes(grp, str(dim)))
    if dim not in known:
        raise ArgumentError(f"to_zarrx: append_dim={dim!r} is not a dimension of {grp.name!r} "
                            f"(found {sorted(known)})")
    if dim not in ds.dims:
        raise ArgumentError(f"to_zarrx: append_dim={dim!r} is not a dimension of the dataset")


def _lengths_after(grp: Group, ds: Any, append_dim: Hashable | None) -> dict[str, int]:
    """The length of each dimension of the stored group once the write is done: the longest
    stored array's (arrays still growing under another writer's append are shorter), and
    along ``append_dim`` with the appended rows. Arrays naming no dimensions are left out."""
    lengths: dict[str, int] = {}
    for name, meta in array_metas(grp):
        try:
            dims, _ = dims_and_attrs(meta, name)
        except MetadataError:
            continue                        # not an xarray variable: it has no say
        for dim, n in zip(dims, meta.shape):
            lengths[dim] = max(n, lengths.get(dim, 0))
    if append_dim is not None and str(append_dim) in lengths:
        lengths[str(append_dim)] += ds.sizes[append_dim]
    return lengths


def _check_new_variable(name: str, var: Any, lengths: dict[str, int]) -> None:
    """A variable added to a stored group (modes ``a``, ``a-``) has the group's length along
    each stored dimension: another length would make the group unreadable (xarray takes one
    length per dimension), as a new variable given only the appended rows or a region would."""
    for dim, n in zip(var.dims, var.shape):
        want = lengths.get(str(dim))
        if want is not None and n != want:
            raise ArgumentError(f"to_zarrx: variable {name!r} is not stored yet and has {n} "
                                f"elements along {dim!r}, but the stored group's {dim!r} has "
                                f"{want} once written; write the whole variable with mode='a' "
                                f"(no append_dim or region)")


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


@dataclass
class _Plan:
    """One variable's write, checked and encoded: the array to create (``create``, the
    arguments of ``create_array``) or the stored array's new shape (``grow``, on append), and
    the values for ``selection``."""
    name: str
    data: Any
    selection: tuple
    create: dict | None = None
    grow: tuple[int, ...] | None = None
    axis: int | None = None
    target: Array | None = None
    write_empty: bool | None = None


def _encode(var: Any, name: str, fmt: int, given: bool) -> Any:
    """``var`` CF-encoded by xarray's coders. What they refuse (an encoding the data cannot
    take: ``dtype="nope"``, a ``_FillValue`` of another type, text ASCII cannot hold) is an
    ArgumentTypeError or ArgumentError naming the variable. Keys of an encoding the user
    ``given`` that no coder used (``units`` for numbers) are refused, as xarray refuses them."""
    where = f"to_zarrx: variable {name!r}"
    try:
        encoded = cf_encode(var, name, fmt)
    except ZarrError:
        raise
    except TypeError as exc:
        raise ArgumentTypeError(f"{where}: xarray's CF encoding refused it "
                                f"({type(exc).__name__}: {exc})") from exc
    except ValueError as exc:
        raise ArgumentError(f"{where}: xarray's CF encoding refused it "
                            f"({type(exc).__name__}: {exc})") from exc
    # (a _FillValue of None stays there: it asks for no fill value)
    unused = sorted(set(encoded.encoding) & CF_KEYS - {"_FillValue"})
    if given and unused:
        raise ArgumentError(f"to_zarrx: encoding of {name!r}: unexpected keys {unused} (they "
                            f"apply to no data of dtype {var.dtype})")
    return encoded


def _plan_variable(grp: Group, name: str, var: Any, is_new: bool, fmt: int,
                   append_dim: Hashable | None, slices: dict,
                   write_empty: bool | None, given: bool = False) -> _Plan:
    where = f"to_zarrx: variable {name!r}"
    encoded = _encode(var, name, fmt, given)
    dtype, data = storage_dtype(encoded.data, encoded.dtype, fmt, where,
                                variable_text=is_new and _asks_vlen_utf8(encoded.encoding),
                                variable_bytes=is_new and _asks_vlen_bytes(encoded.encoding))
    attrs = dict(encoded.attrs)
    dims = tuple(str(d) for d in encoded.dims)
    if not is_new:
        arr = grp[name]
        assert isinstance(arr, Array)
        selection, grow = _target_selection(arr, dims, encoded.shape, append_dim, slices)
        axis = dims.index(str(append_dim)) if grow is not None else None
        return _Plan(name, _storable(arr, data, where), selection, grow=grow, axis=axis,
                     write_empty=write_empty)
    kw = _creation_kwargs(encoded, name, fmt, write_empty)
    fill = kw.pop("fill_value", None)
    if fmt == 2:
        fill = attrs.pop("_FillValue", None)
    else:
        np_dtype = np.dtype(dtype) if dtype is not str else np.dtype(object)
        if fill is None and np_dtype.kind == "f":
            fill = np.nan
        if attrs.get("_FillValue") is not None:
            attrs["_FillValue"] = encode_fill_attr(attrs["_FillValue"], np_dtype, where)
        else:
            attrs.pop("_FillValue", None)
    attrs = {k: encode_attr(v) for k, v in attrs.items()}
    if fmt == 2:
        attrs[DIMENSION_KEY] = list(dims)
    # a scalar has no dimension_names, as xarray's writer (zarr-python) leaves them out
    create = dict(shape=encoded.shape, dtype=dtype if dtype is not None else data.dtype,
                  fill_value=fill, attributes=attrs,
                  dimension_names=dims if fmt == 3 and dims else None, zarr_format=fmt, **kw)
    # the same arguments, tried on an empty memory store: every codec and setting is checked
    # (a refusal names the variable's array)
    try:
        scratch = create_array(MemoryStore(), **create)
    except ZarrError as exc:
        raise exc.at(array=name)
    return _Plan(name, _storable(scratch, data, where), (slice(None),) * encoded.ndim,
                 create=create)


def _storable(arr: Array, data: Any, where: str) -> Any:
    """``data`` checked against the array's type: numpy values converted (so that a value the
    type cannot hold is refused now), dask values by their dtype."""
    stored = arr.metadata.data_type
    text = stored.variable or stored.numpy.kind in "SU"
    given = np.dtype(getattr(data, "dtype", np.asarray(data).dtype))
    if text != (given.kind in "OSUT"):
        kind = "strings" if text else f"{stored.numpy} values"
        raise ArgumentTypeError(f"{where}: the stored array holds {kind}; cannot store values "
                                f"of dtype {given}")
    if stored.numpy.kind in "SU" and given.kind == stored.numpy.kind \
            and given.itemsize > stored.numpy.itemsize:
        raise ArgumentError(f"{where}: values of dtype {given} do not fit the stored "
                            f"array's {stored.numpy}; they would be cut")
    if _is_dask(data):
        return data
    values = check_value(data, np.shape(data), stored.numpy, where)
    if stored.variable and values.size:
        flat = values.reshape(-1)
        element = variable_element(stored)
        bad = next((v for v in flat if not isinstance(v, element)), None)
        if bad is not None:
            raise ArgumentTypeError(f"{where}: the stored array holds {element.__name__} "
                                    f"values; cannot store {type(bad).__name__} {bad!r}")
    return values


def _claim_rows(grp: Group, plans: list[_Plan], dim: str) -> None:
    """Place the appended rows so that concurrent appends to the dataset never share rows.

    The rows are claimed on one variable: the append dimension's coordinate when it is
    written, else the first appended variable by name (the same one for every writer of
    these variables). Its shape grows atomically from the shape as stored (as
    ``Array.append``), and the claimed rows are where every appended variable is written: the
    others grow to at least their end (never shrinking what another writer claimed further),
    and all are written through views reaching the end of the stored object holding their
    last row, so an object shared with another writer's rows is merged, never replaced."""
    growing = [p for p in plans if p.grow is not None]
    if not growing:
        return
    claim = min(growing, key=lambda p: (p.name != dim, p.name))
    arr = _stored_array(grp, claim)
    assert isinstance(arr, Array) and claim.axis is not None
    count = claim.selection[claim.axis].stop - claim.selection[claim.axis].start

    def claimed(shape: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(n + count if i == claim.axis else n for i, n in enumerate(shape))

    old, _ = arr._grow(claimed)
    start = old[claim.axis]
    for plan in growing:
        target = arr if plan is claim else _stored_array(grp, plan)
        assert isinstance(target, Array) and plan.axis is not None
        axis = plan.axis
        if plan is not claim:
            target._grow(lambda shape, axis=axis: tuple(  # type: ignore[misc]
                max(n, start + count) if i == axis else n for i, n in enumerate(shape)))
        plan.selection = tuple(slice(start, start + count) if i == axis else s
                               for i, s in enumerate(plan.selection))
        plan.grow = None
        plan.target = target._growing_view(axis)


def _apply(grp: Group, plan: _Plan) -> Any:
    """Create or grow the array, then write (or return a ``Delayed`` writing) its values."""
    if plan.create is not None:
        arr = grp.create_array(plan.name, overwrite=True, **plan.create)
    elif plan.target is not None:
        arr = plan.target
    else:
        arr = _stored_array(grp, plan)
        if plan.grow is not None:
            arr.resize(plan.grow)
    return _store(arr, plan.data, plan.selection)


def _stored_array(grp: Group, plan: _Plan) -> Array:
    """The stored array ``plan`` writes into, storing chunks that hold only the fill value as
    the write's ``write_empty_chunks`` says (when given: it is a setting of the write, not of
    the array)."""
    arr = grp[plan.name]
    assert isinstance(arr, Array)
    if plan.write_empty is None:
        return arr
    return Array(arr.store, arr.path, arr.metadata, write_empty_chunks=plan.write_empty)


def _target_selection(arr: Array, dims: tuple[str, ...], shape: tuple[int, ...],
                      append_dim: Hashable | None,
                      slices: dict) -> tuple[tuple, tuple[int, ...] | None]:
    """Where the values go in the stored array, and its new shape when they are appended."""
    sel = []
    grow = None
    for axis, d in enumerate(dims):
        if d in slices:
            sel.append(slices[d])
        elif append_dim is not None and d == append_dim:
            start = arr.shape[axis]
            grow = tuple(start + shape[axis] if i == axis else n
                         for i, n in enumerate(arr.shape))
            sel.append(slice(start, start + shape[axis]))
        else:
            sel.append(slice(0, arr.shape[axis]))
    want = tuple(s.stop - s.start for s in sel)
    if want != tuple(shape):
        raise ArgumentError(f"to_zarrx: variable {arr.basename!r} has shape {tuple(shape)}, but "
                            f"its place in the stored array {arr.shape if grow is None else grow}"
                            f" has shape {want}")
    return tuple(sel), grow


def _is_dask(data: Any) -> bool:
    try:
        import dask.array as da
    except ImportError:
        return False
    return isinstance(data, da.Array)


def _store(arr: Array, data: Any, selection: tuple) -> Any:
    if _is_dask(data):
        return store_blocks(data, arr, selection, compute=False)
    arr[selection] = data
    return None
