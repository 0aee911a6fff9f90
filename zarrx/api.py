"""Opening and creating nodes: ``open``, ``open_group``, ``open_array``, ``create_group``,
``create_array``, ``consolidate_metadata`` (zarr-python 3 names and modes).

Modes: ``r`` read only, must exist; ``r+`` read/write, must exist; ``a`` read/write, create if
missing (default); ``w`` create, replacing whatever is there; ``w-`` create, fail if it exists.
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np

from zarrx.array import Array
from zarrx.errors import MetadataError, NodeExistsError, NodeNotFoundError, ZarrError
from zarrx.creation import _store, _where, check_format, create_array, prepare_node
from zarrx.group import Group
from zarrx.metadata import nodes
from zarrx.metadata.model import ArrayMeta, GroupMeta
from zarrx.store import Store

__all__ = ["open", "open_group", "open_array", "create_group", "create_array", "group",
           "consolidate_metadata", "open_consolidated", "array", "create", "zeros", "ones",
           "full", "empty", "zeros_like", "ones_like", "full_like", "empty_like", "save", "load"]

MODES = ("r", "r+", "a", "w", "w-")
StoreLike = Store | str | os.PathLike


def _check_mode(mode: str) -> None:
    if mode not in MODES:
        raise ZarrError(f"mode: expected one of {', '.join(MODES)}, found {mode!r}")


def open(store: StoreLike | None = None, *, mode: str = "a", path: str = "",  # noqa: A001
         zarr_format: int | None = None, storage_options: dict | None = None,
         **kwargs: Any) -> Array | Group:
    """Open the array or group at ``path`` (v2 or v3, auto-detected); in modes ``a``/``w``/``w-``
    create it when missing (an array if ``shape`` is given, else a group). ``store`` may be a
    URL (``s3://bucket/data.zarr``), configured by ``storage_options``."""
    _check_mode(mode)
    st = _store(store, mode, storage_options)
    path = path.strip("/")
    if mode in ("r", "r+", "a"):
        meta = nodes.load_node(st, path, zarr_format)
        if meta is not None:
            return _wrap(st, path, meta, mode)
        if mode != "a":
            raise NodeNotFoundError(f"open: no array or group at {_where(st, path)}")
    if "shape" in kwargs:
        return create_array(st, name=path, zarr_format=zarr_format or 3,
                            overwrite=(mode == "w"), _mode=mode, **kwargs)
    return create_group(st, path=path, zarr_format=zarr_format or 3, overwrite=(mode == "w"),
                        attributes=kwargs.pop("attributes", None), _mode=mode)


def _wrap(st: Store, path: str, meta: ArrayMeta | GroupMeta, mode: str) -> Array | Group:
    ro = mode == "r"
    if isinstance(meta, ArrayMeta):
        return Array(st, path, meta, read_only=ro)
    return Group(st, path, meta, read_only=ro)


def open_group(store: StoreLike | None = None, *, mode: str = "a", path: str = "",
               zarr_format: int | None = None, attributes: dict | None = None,
               use_consolidated: bool | None = None,
               storage_options: dict | None = None) -> Group:
    """Open (or, in modes a/w/w-, create) the group at ``path``."""
    _check_mode(mode)
    st = _store(store, mode, storage_options)
    path = path.strip("/")
    if mode in ("r", "r+", "a"):
        meta = nodes.load_node(st, path, zarr_format)
        if isinstance(meta, GroupMeta):
            if use_consolidated is False and meta.consolidated is not None:
                meta = GroupMeta(attributes=meta.attributes, zarr_format=meta.zarr_format,
                                 extra=meta.extra)
            elif use_consolidated is True and meta.consolidated is None:
                raise MetadataError(f"open_group: the group at {_where(st, path)} has no "
                                    f"consolidated metadata")
            return Group(st, path, meta, read_only=mode == "r")
        if meta is not None:
            raise NodeExistsError(f"open_group: the node at {_where(st, path)} is an array")
        if mode != "a":
            raise NodeNotFoundError(f"open_group: no group at {_where(st, path)}")
    return create_group(st, path=path, zarr_format=zarr_format or 3, attributes=attributes,
                        overwrite=(mode == "w"), _mode=mode)


def open_array(store: StoreLike | None = None, *, mode: str = "a", path: str = "",
               zarr_format: int | None = None, storage_options: dict | None = None,
               **kwargs: Any) -> Array:
    """Open (or, given ``shape`` in modes a/w/w-, create) the array at ``path``."""
    _check_mode(mode)
    st = _store(store, mode, storage_options)
    path = path.strip("/")
    if mode in ("r", "r+", "a"):
        meta = nodes.load_node(st, path, zarr_format)
        if isinstance(meta, ArrayMeta):
            return Array(st, path, meta, read_only=mode == "r",
                         write_empty_chunks=kwargs.get("write_empty_chunks"))
        if meta is not None:
            raise NodeExistsError(f"open_array: the node at {_where(st, path)} is a group")
        if mode != "a" or "shape" not in kwargs:
            raise NodeNotFoundError(f"open_array: no array at {_where(st, path)}")
    if "shape" not in kwargs:
        raise ZarrError(f"open_array: mode {mode!r} creates an array and needs shape=")
    return create_array(st, name=path, zarr_format=zarr_format or 3, overwrite=(mode == "w"),
                        _mode=mode, **kwargs)


def create_group(store: StoreLike | None = None, *, path: str = "", zarr_format: int = 3,
                 attributes: dict | None = None, overwrite: bool = False,
                 storage_options: dict | None = None, _mode: str = "w-") -> Group:
    """Create a group at ``path``."""
    st = _store(store, "w", storage_options)
    path = path.strip("/")
    check_format(zarr_format)
    prepare_node(st, path, overwrite, _mode, "create_group", zarr_format)
    meta = GroupMeta(attributes=dict(attributes or {}), zarr_format=zarr_format)  # type: ignore[arg-type]
    nodes.save_node(st, path, meta)
    return Group(st, path, meta)


group = open_group


def array(data: Any, store: StoreLike | None = None, **kwargs: Any) -> Array:
    """Create an array holding ``data`` (in memory unless ``store`` is given)."""
    data = np.asarray(data)
    kwargs.setdefault("dtype", data.dtype)
    return create_array(store, shape=data.shape, data=data, **kwargs)


def zeros(shape: Any, store: StoreLike | None = None, **kwargs: Any) -> Array:
    kwargs.setdefault("fill_value", 0)
    return create_array(store, shape=shape, **kwargs)


def full(shape: Any, fill_value: Any, store: StoreLike | None = None, **kwargs: Any) -> Array:
    return create_array(store, shape=shape, fill_value=fill_value, **kwargs)


empty = zeros


def ones(shape: Any, store: StoreLike | None = None, **kwargs: Any) -> Array:
    """An array whose every cell reads as 1 (stored as the fill value: nothing is written)."""
    return create_array(store, shape=shape, fill_value=1, **kwargs)


def _like(a: Any, kwargs: dict) -> dict:
    kwargs.setdefault("shape", a.shape)
    kwargs.setdefault("dtype", a.dtype)
    if isinstance(a, Array):
        kwargs.setdefault("chunks", a.chunks)
    return kwargs


def zeros_like(a: Any, **kwargs: Any) -> Array:
    return zeros(**_like(a, kwargs))


def ones_like(a: Any, **kwargs: Any) -> Array:
    return ones(**_like(a, kwargs))


def full_like(a: Any, fill_value: Any, **kwargs: Any) -> Array:
    return full(fill_value=fill_value, **_like(a, kwargs))


empty_like = zeros_like


def create(shape: Any, *, store: StoreLike | None = None, path: str | None = None,
           chunks: Any = True, dtype: Any = None, compressor: Any = "auto",
           filters: Any = None, fill_value: Any = None, order: str | None = None,
           dimension_separator: str | None = None, zarr_format: int | None = None,
           overwrite: bool = False, **kwargs: Any) -> Array:
    """The older ``zarr.create`` signature (one ``compressor``, ``chunks=True`` for automatic
    chunks, ``dimension_separator``), mapped onto :func:`create_array`."""
    fmt = zarr_format or 3
    if dimension_separator is not None and "chunk_key_encoding" not in kwargs:
        kwargs["chunk_key_encoding"] = {"name": "default" if fmt == 3 else "v2",
                                        "separator": dimension_separator}
    return create_array(store, name=path, shape=shape, dtype=dtype,
                        chunks="auto" if chunks is True or chunks is None else chunks,
                        compressors=compressor if compressor != "default" else "auto",
                        filters="auto" if filters is None else filters, fill_value=fill_value,
                        order=order, zarr_format=fmt, overwrite=overwrite, **kwargs)


def open_consolidated(store: StoreLike | None = None, *, mode: str = "r", path: str = "",
                      zarr_format: int | None = None,
                      storage_options: dict | None = None) -> Group:
    """Open a group that must carry consolidated metadata (v2 ``.zmetadata`` or v3 inline)."""
    return open_group(store, mode=mode, path=path, zarr_format=zarr_format,
                      use_consolidated=True, storage_options=storage_options)


def save(store: StoreLike, arr: Any, **kwargs: Any) -> Array:
    return array(arr, store, overwrite=True, **kwargs)


def load(store: StoreLike, path: str = "", *, storage_options: dict | None = None) -> Any:
    node = open(store, mode="r", path=path, storage_options=storage_options)
    if isinstance(node, Array):
        return node[...]
    return {name: a[...] for name, a in node.arrays()}


def consolidate_metadata(store: StoreLike, path: str = "", *,
                         storage_options: dict | None = None) -> Group:
    """Write consolidated metadata for the hierarchy under ``path`` (v2: ``.zmetadata``; v3:
    inline ``consolidated_metadata`` in the group's ``zarr.json``) and return the group."""
    st = _store(store, "r+", storage_options)
    path = path.strip("/")
    meta = nodes.consolidate(st, path)
    return Group(st, path, meta)


