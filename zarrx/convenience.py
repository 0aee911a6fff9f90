"""Whole-array conveniences with zarr-python's names and signatures: ``save``, ``save_array``,
``save_group``, ``load``, ``from_array``, ``create_hierarchy`` and ``tree``.

    zarrx.save("data.zarr", np.arange(10))              # one array
    zarrx.save("data.zarr", a, b, temperature=t)        # a group: arr_0, arr_1, temperature
    zarrx.load("data.zarr")                             # a numpy array, or a dict of them
    zarrx.from_array(store, data=other)                 # copy, keeping chunks, shards, codecs
"""
from __future__ import annotations

import inspect
import math
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

from zarrx.errors import checked_call
from zarrx.api import _store, check_mode, create, open, open_group
from zarrx.array import Array
from zarrx.creation import (as_zarrx_array, check_format, create_array, data_array, data_dtype,
                             flag_arg, format_of, inherited_format, node_path)
from zarrx.errors import (ArgumentError, ArgumentTypeError, ReadOnlyError,
                          ZarrDeprecationWarning, refuse_keywords)
from zarrx.group import Group
from zarrx.hierarchy import write_hierarchy
from zarrx.like import kept_chunks
from zarrx.metadata import nodes
from zarrx.metadata.make import DEFAULT_FILL
from zarrx.metadata.model import ArrayMeta
from zarrx.store import MemoryStore
from zarrx.store.call_stores import discards_on_failure
from zarrx.store.locks import _identity as store_identity

__all__ = ["save", "save_array", "save_group", "load", "array", "from_array", "create_hierarchy",
           "tree"]

_KEEP = "keep"
#: bytes of source data copied per read by from_array (whole stored objects, at least one)
COPY_BYTES = 64 << 20


def _array_like(arr: Any) -> bool:
    return isinstance(arr, np.ndarray) or (
        hasattr(arr, "shape") and hasattr(arr, "dtype") and hasattr(arr, "__array__")
        and not np.isscalar(arr) and isinstance(arr.shape, tuple))


@discards_on_failure
def save_array(store: Any, arr: Any, *, zarr_format: int | None = None, path: str | None = None,
               storage_options: dict | None = None, zarr_version: int | None = None,
               _what: str = "save_array", **kwargs: Any) -> None:
    """Save one array at ``path``. ``mode`` (default ``a``: an existing node is an error) and
    the other keywords of :func:`~zarrx.create_array` are accepted. (``_what``: the function
    errors name, :func:`save` for one.)"""
    zarr_format = format_of(zarr_format, zarr_version, _what)
    refuse_keywords(_what, kwargs, ("name", "shape", "dtype", "data"))   # from arr
    if not _array_like(arr):
        raise ArgumentTypeError(f"{_what}: arr must be a numpy array (or an array with "
                                f"shape and dtype), found {type(arr).__name__}")
    zarr_format = check_format(zarr_format, none=True)
    node_path(path, _what, new=True)            # before the store is opened (or made)
    mode = kwargs.pop("mode", None)
    mode = "a" if mode is None else mode            # as create takes it
    check_mode(mode, _what)
    if mode == "r":
        raise ReadOnlyError(f"{_what}: mode 'r' opens read-only; an array cannot be saved "
                            "with it")
    overwrite = flag_arg(kwargs.pop("overwrite", None), _what, "overwrite") or mode == "w"
    chunks = kwargs.pop("chunks", None)
    if chunks is None:
        chunks = getattr(arr, "chunks", None)
        chunks = chunks if isinstance(chunks, tuple) else "auto"
    st = _store(store, "w", storage_options, path=path, replacing=overwrite, what=_what)
    create_array(st, name=path, shape=arr.shape,
                 dtype=data_dtype(np.asarray(arr), _what),
                 chunks=chunks, overwrite=overwrite,
                 zarr_format=zarr_format, data=np.asarray(arr), _what=_what, **kwargs)


@discards_on_failure
def save_group(store: Any, *args: Any, zarr_format: int | None = None, path: str | None = None,
               storage_options: dict | None = None, zarr_version: int | None = None,
               _what: str = "save_group", **kwargs: Any) -> None:
    """Save several arrays in a new group at ``path`` (replacing what is there): positional
    ones as ``arr_0``, ``arr_1``..., keyword ones under their names. (``_what``: the function
    errors name, :func:`save` for one.)"""
    zarr_format = format_of(zarr_format, zarr_version, _what)
    zarr_format = check_format(zarr_format, none=True)
    for i, arr in enumerate(args):
        if not _array_like(arr):
            raise ArgumentTypeError(f"{_what}: argument {i} must be a numpy array (or an "
                                    f"array with shape and dtype), found {type(arr).__name__}")
    for k, arr in kwargs.items():
        if not _array_like(arr):
            raise ArgumentTypeError(f"{_what}: keyword argument {k!r} must be a numpy array, "
                                    f"found {type(arr).__name__}")
    if not args and not kwargs:
        raise ArgumentError(f"{_what}: at least one array must be provided")
    at = node_path(path, _what, new=True)
    st = _store(store, "w", storage_options, path=path, what=_what)
    fmt = inherited_format(st, at, zarr_format)
    named = _member_names(_what, [(f"argument {i}", f"arr_{i}") for i in range(len(args))]
                          + [(f"keyword argument {k!r}", k) for k in kwargs])
    arrays = [np.asarray(a) for a in (*args, *kwargs.values())]
    items = [(nodes.join(at, k), a, data_dtype(a, _what)) for k, a in zip(named, arrays)]
    # mode "w" replaces what is at path: every array is made first where nothing is lost (a
    # memory store, without its data), so one that cannot be saved replaces nothing
    scratch = MemoryStore()
    made = [create_array(scratch, name=name, shape=arr.shape, dtype=dtype, zarr_format=fmt,
                         data=arr, write_data=False) for name, arr, dtype in items]
    for made_array, (_, arr, _) in zip(made, items):
        made_array._as_stored(arr)              # data the dtype cannot take: nothing replaced
    open_group(st, mode="w", path=at, zarr_format=fmt, _what=_what)
    # the arrays written as one hierarchy: the consolidated metadata above them is edited a
    # fixed number of times, not twice an array
    metas = dict(write_hierarchy(st, {rel: a.metadata for rel, a in zip(named, made)},
                                 group=at, zarr_format=fmt))
    for made_array, (name, arr, _) in zip(made, items):
        Array(st, name, metas[name])[...] = arr


def _member_names(what: str, given: list[tuple[str, str]]) -> list[str]:
    """The member paths of :func:`save_group`'s arrays (``given``: how each was passed, and its
    name), checked before anything is replaced: each names a member (not the group itself),
    no two the same one, none below another (an array has no children)."""
    names: dict[str, str] = {}
    for how, name in given:
        rel = node_path(name, what, how, new=True)
        if not rel:
            raise ArgumentError(f"{what}: {how}: expected the name of a member, found "
                                f"{name!r}, which names the group itself")
        if rel in names:
            raise ArgumentError(f"{what}: {names[rel]} and {how} both name the array "
                                f"{rel!r}")
        names[rel] = how
    for rel, how in names.items():
        above = ""
        for part in rel.split("/")[:-1]:
            above = f"{above}/{part}" if above else part
            if above in names:
                raise ArgumentError(f"{what}: {how} names {rel!r}, below the array "
                                    f"{above!r} of {names[above]} (an array has no children)")
    return list(names)


@discards_on_failure
def save(store: Any, *args: Any, zarr_format: int | None = None, path: str | None = None,
         storage_options: dict | None = None, zarr_version: int | None = None,
         **kwargs: Any) -> None:
    """:func:`save_array` for one positional array, else :func:`save_group`."""
    zarr_format = format_of(zarr_format, zarr_version, "save")
    if not args and not kwargs:
        raise ArgumentError("save: at least one array must be provided")
    if len(args) == 1 and not kwargs:
        save_array(store, args[0], zarr_format=zarr_format, path=path,
                   storage_options=storage_options, _what="save")
    else:
        save_group(store, *args, zarr_format=zarr_format, path=path,
                   storage_options=storage_options, _what="save", **kwargs)


@discards_on_failure
@checked_call
def load(store: Any, path: str | None = None, zarr_format: int | None = None,
         zarr_version: int | None = None, *, storage_options: dict | None = None) -> Any:
    """The array at ``path`` as a numpy array, or the arrays of the group there as a dict of
    numpy arrays by name (its direct children)."""
    zarr_format = format_of(zarr_format, zarr_version, "load")
    node = open(store, mode="r", path=path, zarr_format=zarr_format,
                storage_options=storage_options, _what="load")
    if isinstance(node, Array):
        return node[...]
    return {name: a[...] for name, a in node.arrays()}


# -- from_array --------------------------------------------------------------------------------
def _is_keep(value: Any) -> bool:
    """Whether an argument is ``"keep"`` (another value may be a numpy array, which ``==``
    would compare item by item)."""
    return isinstance(value, str) and value == _KEEP


def _kept(data: Any, zarr_format: int | None, chunks: Any, shards: Any, filters: Any,
          compressors: Any, serializer: Any, fill_value: Any, order: Any,
          chunk_key_encoding: Any, dimension_names: Any) -> dict[str, Any]:
    """zarr-python's ``"keep"`` rules: what a copy of ``data`` takes from it."""
    if not isinstance(data, Array):
        return {"chunks": "auto" if _is_keep(chunks) else chunks,
                "shards": None if _is_keep(shards) else shards,
                "zarr_format": zarr_format,     # None: the format of the group it goes into
                "filters": "auto" if _is_keep(filters) else filters,
                "compressors": "auto" if _is_keep(compressors) else compressors,
                "serializer": "auto" if _is_keep(serializer) else serializer,
                "fill_value": fill_value, "order": order,
                "chunk_key_encoding": chunk_key_encoding, "dimension_names": dimension_names}
    from zarrx.codec_args import array_codecs

    src = data.metadata
    fmt = zarr_format or src.zarr_format
    same = fmt == src.zarr_format
    codecs = array_codecs(src)
    return {
        "chunks": kept_chunks(data, data.shape, fmt) if _is_keep(chunks) else chunks,
        "shards": data.shards if _is_keep(shards) else shards,
        "zarr_format": fmt,
        "filters": (codecs["filters"] or None if same else "auto") if _is_keep(filters)
        else filters,
        "compressors": (codecs["compressors"] or None if same else "auto")
        if _is_keep(compressors) else compressors,
        "serializer": (codecs["serializer"] if fmt == 3 and same else "auto")
        if _is_keep(serializer) else serializer,
        "fill_value": data.fill_value if fill_value is None or fill_value is DEFAULT_FILL
        else fill_value,
        "order": order,
        "chunk_key_encoding": src.key_encoding if chunk_key_encoding is None and same
        else chunk_key_encoding,
        "dimension_names": src.dimension_names if dimension_names is None else dimension_names,
    }


@discards_on_failure
@checked_call
def from_array(store: Any = None, *, data: Any, write_data: bool = True, name: str | None = None,
               chunks: Any = _KEEP, shards: Any = _KEEP, filters: Any = _KEEP,
               compressors: Any = _KEEP, serializer: Any = _KEEP, fill_value: Any = DEFAULT_FILL,
               order: str | None = None, zarr_format: int | None = None,
               attributes: dict | None = None, chunk_key_encoding: Any = None,
               dimension_names: Any = None, overwrite: bool = False, config: dict | None = None,
               storage_options: dict | None = None) -> Array:
    """A new array holding a copy of ``data`` (a zarrx :class:`Array` or anything numpy
    takes). ``"keep"`` (the default for chunks, shards and codecs) takes them from a zarrx
    source, or picks the defaults for other data; the fill value, chunk key encoding and
    dimension names of a zarrx source are kept unless given (``fill_value=None`` keeps the
    source's too). Other data gets the type's default fill value, as ``create_array`` picks
    it; ``None`` is ``null`` in Zarr v2. A zarrx source is copied a block of whole stored
    objects at a time."""
    if data is None:
        raise ArgumentTypeError("from_array: data: expected an array, found None")
    zarr_format = check_format(zarr_format, none=True)
    data = as_zarrx_array(data)             # a zarr-python array: kept as a zarrx one is
    if not isinstance(data, Array) and not _array_like(data):
        data = data_array(data, "from_array")
    kw = _kept(data, zarr_format, chunks, shards, filters, compressors, serializer, fill_value,
               order, chunk_key_encoding, dimension_names)
    write_data = flag_arg(write_data, "from_array", "write_data")
    # the values of data that is no zarrx Array, before anything is written: a source that
    # fails to give them (a failing __array__) leaves no empty array behind
    values = None if isinstance(data, Array) or not write_data else np.asarray(data)
    store = _store(store, "w", storage_options, path=name,
                   replacing=overwrite is True, what="from_array")
    if isinstance(data, Array) and write_data and flag_arg(overwrite, "from_array",
                                                           "overwrite"):
        _refuse_replacing_source(store, node_path(name, "from_array", "name"), data)
    out = create_array(store, name=name, shape=data.shape, dtype=data_dtype(data, "from_array"),
                       attributes=attributes, overwrite=overwrite, config=config, **kw)
    if isinstance(data, Array) and write_data:
        _copy(data, out)
    elif values is not None:
        out[...] = values
    return out


def _refuse_replacing_source(store: Any, path: str, src: Array) -> None:
    """``from_array(..., overwrite=True)`` whose destination is the source array, or a group
    holding it: replacing it would delete the data before it is copied."""
    if store_identity(store) != store_identity(src.store):
        return
    if path == src.path or not path or src.path.startswith(path + "/"):
        what = "is the source array" if path == src.path else "holds the source array"
        raise ArgumentError(f"from_array: the destination {path or '/'!r} {what} "
                            f"{src.path or '/'!r} in {store!r}: overwrite=True would delete "
                            f"its data before it is copied; copy to another path first")


def _copy(src: Array, dst: Array) -> None:
    """Copy in slabs along the first axis, each a whole number of the target's stored objects
    (about ``COPY_BYTES`` of data), so neither array is held in memory whole."""
    if dst.ndim == 0:
        dst[...] = src[...]
        return
    # (a rectilinear grid has no one chunk length: slabs of whole rows then)
    unit = (dst.shards or dst.metadata.layout.read_shape or (1,))[0] or 1  # 0: axis of length 0
    row_bytes = math.prod(dst.shape[1:]) * max(dst.dtype.itemsize, 1) * unit
    step = unit * max(1, COPY_BYTES // max(row_bytes, 1))
    for start in range(0, dst.shape[0], step):
        dst[start:start + step] = src[start:start + step]


@discards_on_failure
def array(data: Any, store: Any = None, **kwargs: Any) -> Array:
    """Create an array holding ``data`` (in memory unless ``store`` is given) with the
    keywords of :func:`zarrx.create` (``mode=``, ``path=`` or ``name=``, ...); a zarrx
    :class:`Array` is copied as :func:`from_array` copies it."""
    if isinstance(data, Array):
        return from_array(store, data=data, **_from_array_keywords(kwargs))
    if data is None:
        raise ArgumentTypeError("array: data: expected an array or a nested sequence, found "
                                "None")
    data = data_array(data, "array")
    if "name" in kwargs:                 # create_array's spelling of path
        if "path" in kwargs:
            raise ArgumentTypeError("array: pass path= or name=, not both")
        kwargs["path"] = kwargs.pop("name")
    shape = kwargs.pop("shape", data.shape)   # create_array refuses another shape
    return create(shape, store=store, data=data, _what="array", **kwargs)


def _from_array_keywords(kwargs: dict[str, Any]) -> dict[str, Any]:
    """:func:`array`'s keywords (:func:`zarrx.create`'s) for copying a zarrx array with
    :func:`from_array`: ``path`` is ``name``, mode ``w`` is ``overwrite=True`` (``r`` is
    refused, as by ``create``); one that ``from_array`` has no counterpart for (``dtype``: the
    copy keeps the source's) is an ArgumentTypeError naming it."""
    kw = dict(kwargs)
    if "path" in kw:
        if "name" in kw:
            raise ArgumentTypeError("array: pass path= or name=, not both")
        kw["name"] = kw.pop("path")
    mode = kw.pop("mode", None)
    if mode is not None:
        check_mode(mode, "array")
        if mode == "r":
            raise ReadOnlyError("array: mode 'r' opens read-only; an array cannot be created "
                                "with it")
        if mode == "w":
            kw["overwrite"] = True
    taken = set(inspect.signature(from_array).parameters) - {"store", "data"}
    for key in kw:
        if key not in taken:
            raise ArgumentTypeError(f"array: {key}= is not taken when data is a zarrx Array, "
                                    f"which is copied as from_array copies it (keeping its "
                                    f"dtype, chunks and codecs unless given); pass data[...] "
                                    f"to create the array from its values instead")
    return kw


# -- create_hierarchy --------------------------------------------------------------------------
@discards_on_failure
@checked_call
def create_hierarchy(*, store: Any, nodes: dict[str, Any], overwrite: bool = False
                     ) -> Iterator[tuple[str, Array | Group]]:
    """Create every node of ``nodes`` (path -> metadata) and the groups above them, all of
    one Zarr format; returns an iterator of ``(path, node)`` for each node created, parents
    first. Everything is checked before anything is written, and everything is written before
    this returns: an existing node is an error unless ``overwrite``."""
    root = any(isinstance(p, str) and not p.strip("/") for p in nodes)
    st = _store(store, "w", path="" if root else "below", replacing=overwrite is True,
                what="create_hierarchy")
    return iter([(path, Array(st, path, meta) if isinstance(meta, ArrayMeta)
                  else Group(st, path, meta))
                 for path, meta in write_hierarchy(st, nodes, overwrite=overwrite)])



@checked_call
def tree(grp: Group, expand: bool | None = None, level: int | None = None) -> str:
    """``grp.tree(expand=expand, level=level)``: the hierarchy below ``grp`` as text.
    Deprecated in favour of :meth:`Group.tree`, as in zarr-python (a
    ``ZarrDeprecationWarning``)."""
    warnings.warn("zarrx.tree is deprecated. Use Group.tree instead.", ZarrDeprecationWarning,
                  stacklevel=2)
    if not isinstance(grp, Group):
        raise ArgumentTypeError(f"tree: expected a zarrx.Group, found {type(grp).__name__}")
    return grp.tree(expand=expand, level=level)
