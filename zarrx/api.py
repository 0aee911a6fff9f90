"""Opening and creating nodes: ``open``, ``open_group``, ``open_array``, ``create_group``,
``create_array``, ``consolidate_metadata`` (zarr-python 3 names and modes).

Modes: ``r`` read only, must exist; ``r+`` read/write, must exist; ``a`` read/write, create if
missing (default); ``w`` create, replacing whatever is there; ``w-`` create, fail if it exists.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from zarrx.array import Array
from zarrx.errors import MetadataError, NodeExistsError, NodeNotFoundError, ZarrError
from zarrx.group import Group, _make_parents
from zarrx.metadata import make_array_meta, nodes
from zarrx.metadata.model import ArrayMeta, CodecSpec, GroupMeta
from zarrx.store import Store, make_store

__all__ = ["open", "open_group", "open_array", "create_group", "create_array", "group",
           "consolidate_metadata", "array", "zeros", "full", "empty", "save", "load"]

MODES = ("r", "r+", "a", "w", "w-")
StoreLike = Store | str | os.PathLike


def _check_mode(mode: str) -> None:
    if mode not in MODES:
        raise ZarrError(f"mode: expected one of {', '.join(MODES)}, found {mode!r}")


def _store(store: StoreLike | None, mode: str) -> Store:
    if store is None:
        from zarrx.store import MemoryStore
        return MemoryStore()
    return make_store(store, mode)


def _where(store: Store, path: str) -> str:
    return f"{path or '/'!r} in {store!r}"


def open(store: StoreLike | None = None, *, mode: str = "a", path: str = "",  # noqa: A001
         zarr_format: int | None = None, **kwargs: Any) -> Array | Group:
    """Open the array or group at ``path`` (v2 or v3, auto-detected); in modes ``a``/``w``/``w-``
    create it when missing (an array if ``shape`` is given, else a group)."""
    _check_mode(mode)
    st = _store(store, mode)
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
               use_consolidated: bool | None = None) -> Group:
    """Open (or, in modes a/w/w-, create) the group at ``path``."""
    _check_mode(mode)
    st = _store(store, mode)
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
               zarr_format: int | None = None, **kwargs: Any) -> Array:
    """Open (or, given ``shape`` in modes a/w/w-, create) the array at ``path``."""
    _check_mode(mode)
    st = _store(store, mode)
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


def _prepare(st: Store, path: str, overwrite: bool, mode: str, what: str, zarr_format: int) -> None:
    if st.read_only:
        raise ZarrError(f"{what}: the store {st!r} is read-only")
    existing = nodes.load_node(st, path)
    if existing is None:
        if path:
            _make_parents(st, "", path, zarr_format)
        return
    if not overwrite:
        raise NodeExistsError(f"{what}: a node already exists at {_where(st, path)}"
                              + ("" if mode == "w-" else "; pass overwrite=True to replace it"))
    nodes.delete_node(st, path)


def create_group(store: StoreLike | None = None, *, path: str = "", zarr_format: int = 3,
                 attributes: dict | None = None, overwrite: bool = False,
                 _mode: str = "w-") -> Group:
    """Create a group at ``path``."""
    st = _store(store, "w")
    path = path.strip("/")
    _check_format(zarr_format)
    _prepare(st, path, overwrite, _mode, "create_group", zarr_format)
    meta = GroupMeta(attributes=dict(attributes or {}), zarr_format=zarr_format)  # type: ignore[arg-type]
    nodes.save_node(st, path, meta)
    return Group(st, path, meta)


group = open_group


def _check_format(zarr_format: Any) -> None:
    if zarr_format not in (2, 3):
        raise ZarrError(f"zarr_format: expected 2 or 3, found {zarr_format!r}")


def create_array(store: StoreLike | None = None, *, name: str | None = None, shape: Any = None,
                 dtype: Any = None, chunks: Any = "auto", shards: Any = None,
                 filters: Any = "auto", compressors: Any = "auto", compressor: Any = "auto",
                 serializer: Any = "auto", fill_value: Any = None, order: str | None = None,
                 zarr_format: int | None = 3, attributes: dict | None = None,
                 dimension_names: Sequence[str | None] | None = None,
                 chunk_key_encoding: Any = None, overwrite: bool = False,
                 write_empty_chunks: bool = False, data: Any = None, path: str | None = None,
                 _mode: str = "w-") -> Array:
    """Create an array (zarr-python 3 argument names). ``data``, if given, is written at once."""
    from zarrx.codec_args import build_codecs

    st = _store(store, "w")
    path = (name if name is not None else path or "").strip("/")
    zarr_format = 3 if zarr_format is None else zarr_format
    _check_format(zarr_format)
    if data is not None:
        data = np.asarray(data)
        if shape is None:
            shape = data.shape
        if dtype is None:
            dtype = data.dtype
    if dtype is None:
        dtype = "float64"
    shape = _shape(shape)
    chunks = _chunks(chunks, shape, dtype)
    if compressor != "auto":
        if compressors != "auto":
            raise ZarrError("create_array: pass compressors= or compressor=, not both")
        compressors = compressor
    codecs, grid_chunks = build_codecs(
        dtype=dtype, shape=shape, chunks=chunks, shards=shards, filters=filters,
        serializer=serializer, compressors=compressors, zarr_format=zarr_format,
        order=order or "C")
    meta = make_array_meta(shape, dtype, grid_chunks, fill_value=fill_value, codecs=codecs,
                           zarr_format=zarr_format, chunk_key_encoding=chunk_key_encoding,
                           dimension_names=dimension_names, attributes=attributes,
                           order=order or "C")
    _prepare(st, path, overwrite, _mode, "create_array", zarr_format)
    nodes.save_node(st, path, meta)
    arr = Array(st, path, meta, write_empty_chunks=write_empty_chunks)
    if data is not None:
        arr[...] = data
    return arr


def _shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        out = tuple(int(s) for s in shape)
        ok = all(isinstance(s, (int, np.integer)) and not isinstance(s, bool) and s >= 0
                 for s in shape)
    except TypeError:
        ok = False
    if not ok:
        raise ZarrError(f"shape: expected a tuple of non-negative ints, found {shape!r}")
    return out


def _chunks(chunks: Any, shape: tuple[int, ...], dtype: Any) -> Any:
    if chunks is None or (isinstance(chunks, str) and chunks == "auto"):
        return auto_chunks(shape, np.dtype(dtype).itemsize if _is_numpy_dtype(dtype) else 16)
    if isinstance(chunks, (int, np.integer)) and not isinstance(chunks, bool):
        return tuple(min(int(chunks), max(s, 1)) if chunks > 0 else int(chunks) for s in shape)
    if isinstance(chunks, Sequence) and any(isinstance(c, Sequence) for c in chunks):
        return tuple(tuple(int(x) for x in c) if isinstance(c, Sequence) else int(c) for c in chunks)
    try:
        return tuple(int(c) if c not in (None, -1) else max(s, 1) for c, s in zip(chunks, shape)) \
            if len(chunks) == len(shape) else tuple(chunks)
    except TypeError as exc:
        raise ZarrError(f"chunks: expected a tuple of positive ints, found {chunks!r}") from exc


def _is_numpy_dtype(dtype: Any) -> bool:
    try:
        np.dtype(dtype)
        return True
    except TypeError:
        return False


def auto_chunks(shape: tuple[int, ...], itemsize: int, target: int = 1 << 20) -> tuple[int, ...]:
    """A chunk shape of about ``target`` bytes, halving the largest axis until it fits."""
    chunks = [max(s, 1) for s in shape]
    while chunks and np.prod(chunks, dtype=np.float64) * itemsize > target:
        i = int(np.argmax(chunks))
        if chunks[i] <= 1:
            break
        chunks[i] = -(-chunks[i] // 2)
    return tuple(chunks)


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


def save(store: StoreLike, arr: Any, **kwargs: Any) -> Array:
    return array(arr, store, overwrite=True, **kwargs)


def load(store: StoreLike, path: str = "") -> Any:
    node = open(store, mode="r", path=path)
    if isinstance(node, Array):
        return node[...]
    return {name: a[...] for name, a in node.arrays()}


def consolidate_metadata(store: StoreLike, path: str = "") -> Group:
    """Write consolidated metadata for the hierarchy under ``path`` (v2: ``.zmetadata``; v3:
    inline ``consolidated_metadata`` in the group's ``zarr.json``) and return the group."""
    st = _store(store, "r+")
    path = path.strip("/")
    meta = nodes.consolidate(st, path)
    return Group(st, path, meta)


