"""The xarray backend ``engine="zarrx"``: a zarrx group read as a Dataset (or a DataTree).

``xr.open_dataset(path, engine="zarrx")`` reads the group's arrays as variables: dimension
names from Zarr v3 ``dimension_names`` or the v2 ``_ARRAY_DIMENSIONS`` attribute, attributes
as stored, consolidated metadata when the group has it. Data stays lazy: a
:class:`ZarrxBackendArray` reads only what is indexed (basic, outer and vectorised indexing map
onto zarrx's basic, ``oindex`` and ``vindex`` reads). CF decoding is xarray's. With ``chunks=``,
the preferred dask chunks are the arrays' shards (or chunks when unsharded).
"""
from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

import numpy as np
from xarray.backends import AbstractDataStore, BackendArray, BackendEntrypoint
from xarray.core import indexing

from zarrx.api import open_group
from zarrx.array import Array
from zarrx.dask.chunks import object_edges
from zarrx.errors import MetadataError, ZarrError
from zarrx.group import Group
from zarrx.store.base import Store
from zarrx.xarray.encoding import DIMENSION_KEY, decode_fill_attr, vlen_dtype

__all__ = ["ZarrxBackendArray", "ZarrxDataStore", "ZarrxBackendEntrypoint", "open_store_group"]


class ZarrxBackendArray(BackendArray):
    """A lazily indexed zarrx array (pickles as its store spec and path)."""

    __slots__ = ("array", "shape", "dtype")

    def __init__(self, array: Array) -> None:
        self.array = array
        self.shape = array.shape
        meta = array.metadata.data_type
        if meta.variable:
            self.dtype = vlen_dtype(bytes if meta.numpy.kind == "S" or meta.name == "bytes"
                                    else str)
        else:
            self.dtype = array.dtype

    def __getitem__(self, key: indexing.ExplicitIndexer) -> np.ndarray:
        if isinstance(key, indexing.VectorizedIndexer):
            read = self.array.vindex.__getitem__
        elif isinstance(key, indexing.OuterIndexer):
            read = self.array.oindex.__getitem__
        else:
            read = self.array.__getitem__
        return indexing.explicit_indexing_adapter(
            key, self.shape, indexing.IndexingSupport.VECTORIZED,
            lambda k: np.asarray(read(k)))


def dims_and_attrs(arr: Array) -> tuple[tuple[str, ...], dict]:
    """An array's dimension names and its user attributes (without ``_ARRAY_DIMENSIONS`` and
    netCDF-Zarr ``_nc*`` attributes, as engine "zarr" hides them)."""
    attrs = dict(arr.metadata.attributes)
    where = f"{arr.name}"
    if arr.zarr_format == 3:
        dims = arr.metadata.dimension_names
        if dims is None or len(dims) != arr.ndim or any(d is None for d in dims):
            raise MetadataError(f"{where}: expected dimension_names naming each of the "
                                f"{arr.ndim} dimensions (xarray needs them), found {dims!r}")
    else:
        dims = attrs.get(DIMENSION_KEY)
        if not isinstance(dims, list) or len(dims) != arr.ndim \
                or not all(isinstance(d, str) for d in dims):
            raise MetadataError(f"{where}: expected the attribute {DIMENSION_KEY} to list the "
                                f"{arr.ndim} dimension names, found {dims!r}")
    attrs = {k: v for k, v in attrs.items()
             if k != DIMENSION_KEY and not k.lower().startswith("_nc")}
    return tuple(dims), attrs


def object_shape(arr: Array) -> tuple[int, ...]:
    """The shape of one stored object (shard, or chunk when unsharded)."""
    return tuple(max((b - a for a, b in zip(e, e[1:])), default=0) or 1
                 for e in object_edges(arr.metadata))


class ZarrxDataStore(AbstractDataStore):
    """A zarrx group as an xarray data store (read side)."""

    def __init__(self, group: Group, *, mask_with_fill_value: bool | None = None) -> None:
        self.group = group
        self.mask = (group.zarr_format == 2) if mask_with_fill_value is None \
            else bool(mask_with_fill_value)

    def open_variable(self, name: str, arr: Array) -> Any:
        from xarray import Variable

        dims, attrs = dims_and_attrs(arr)
        wrapper = ZarrxBackendArray(arr)
        data = indexing.LazilyIndexedArray(wrapper)
        encoding: dict[str, Any] = {"preferred_chunks": dict(zip(dims, object_shape(arr))),
                                    "shards": arr.shards}
        try:
            encoding["chunks"] = arr.chunks
        except ZarrError:
            encoding["chunks"] = None
        if self.mask:
            if arr.fill_value is not None:
                attrs["_FillValue"] = arr.fill_value
        else:
            if arr.zarr_format == 3:
                encoding["fill_value"] = arr.fill_value
            if "_FillValue" in attrs:
                attrs["_FillValue"] = decode_fill_attr(attrs["_FillValue"], wrapper.dtype,
                                                       f"{arr.name} attributes")
        return Variable(dims, data, attrs, encoding)

    def get_variables(self) -> dict:
        from xarray.core.utils import FrozenDict
        return FrozenDict((name, self.open_variable(name, arr))
                          for name, arr in self.group.arrays())

    def get_attrs(self) -> dict:
        return {k: v for k, v in self.group.attrs.items() if not k.lower().startswith("_nc")}

    def get_dimensions(self) -> dict:
        sizes: dict[str, int] = {}
        for name, arr in self.group.arrays():
            dims, _ = dims_and_attrs(arr)
            for d, n in zip(dims, arr.shape):
                if sizes.setdefault(d, n) != n:
                    raise MetadataError(f"{self.group.name}: dimension {d!r} has length "
                                        f"{sizes[d]} and {n} (array {name!r})")
        return sizes

    def close(self) -> None:
        pass


def open_store_group(filename_or_obj: Any, *, group: str | None = None, mode: str = "r",
                     consolidated: bool | None = None, storage_options: dict | None = None,
                     zarr_format: int | None = None) -> Group:
    """The zarrx group to read: from a path, URL, zarrx Store or Group."""
    if isinstance(filename_or_obj, Group):
        root = filename_or_obj
        return root if not group else root[group.strip("/")]  # type: ignore[return-value]
    if isinstance(filename_or_obj, os.PathLike):
        filename_or_obj = os.fspath(filename_or_obj)
    if not isinstance(filename_or_obj, (str, Store)):
        raise ZarrError(f"engine 'zarrx': expected a path, URL, zarrx Store or Group, found "
                        f"{type(filename_or_obj).__name__}")
    kw: dict[str, Any] = {} if storage_options is None else {"storage_options": storage_options}
    use = None if consolidated is None else bool(consolidated)
    path = (group or "").strip("/")
    if use is not None or not path:
        return open_group(filename_or_obj, mode=mode, path=path, zarr_format=zarr_format,
                          use_consolidated=use, **kw)
    # a sub-group: reached from the root, so the root's consolidated metadata serves it
    root = open_group(filename_or_obj, mode=mode, zarr_format=zarr_format, **kw)
    node = root[path]
    if not isinstance(node, Group):
        raise ZarrError(f"engine 'zarrx': {path!r} is an array, not a group")
    return node


class ZarrxBackendEntrypoint(BackendEntrypoint):
    """``engine="zarrx"``: Zarr v2 and v3 groups read through zarrx."""

    description = "Open Zarr v2 and v3 groups (.zarr) through zarrx"
    url = "https://github.com/zarrx/zarrx/blob/main/docs/guide/xarray.md"
    supports_groups = True
    open_dataset_parameters = ("filename_or_obj", "mask_and_scale", "decode_times",
                               "concat_characters", "decode_coords", "drop_variables",
                               "use_cftime", "decode_timedelta", "group", "mode", "consolidated",
                               "storage_options", "zarr_format", "use_zarr_fill_value_as_mask")

    def guess_can_open(self, filename_or_obj: Any) -> bool:
        if isinstance(filename_or_obj, (Group, Store)):
            return True
        if isinstance(filename_or_obj, (str, os.PathLike)):
            return os.path.splitext(os.fspath(filename_or_obj).rstrip("/"))[1] == ".zarr"
        return False

    def open_dataset(self, filename_or_obj: Any, *, mask_and_scale: bool = True,
                     decode_times: Any = True, concat_characters: bool = True,
                     decode_coords: Any = True, drop_variables: str | Iterable[str] | None = None,
                     use_cftime: bool | None = None, decode_timedelta: Any = None,
                     group: str | None = None, mode: str = "r", consolidated: bool | None = None,
                     storage_options: dict | None = None, zarr_format: int | None = None,
                     use_zarr_fill_value_as_mask: bool | None = None) -> Any:
        grp = open_store_group(filename_or_obj, group=group, mode=mode,
                               consolidated=consolidated, storage_options=storage_options,
                               zarr_format=zarr_format)
        store = ZarrxDataStore(grp, mask_with_fill_value=use_zarr_fill_value_as_mask)
        return _decode(store, mask_and_scale=mask_and_scale, decode_times=decode_times,
                       concat_characters=concat_characters, decode_coords=decode_coords,
                       drop_variables=drop_variables, use_cftime=use_cftime,
                       decode_timedelta=decode_timedelta)

    def open_groups_as_dict(self, filename_or_obj: Any, *, group: str | None = None,
                            mode: str = "r", consolidated: bool | None = None,
                            storage_options: dict | None = None,
                            zarr_format: int | None = None, **decode: Any) -> dict:
        """``{"/": Dataset, "/a": Dataset, "/a/b": Dataset, ...}`` for the group and every group
        below it."""
        top = open_store_group(filename_or_obj, group=group, mode=mode,
                               consolidated=consolidated, storage_options=storage_options,
                               zarr_format=zarr_format)
        fill_mask = decode.pop("use_zarr_fill_value_as_mask", None)
        out = {"/": _decode(ZarrxDataStore(top, mask_with_fill_value=fill_mask), **decode)}
        for rel, node in top.members(max_depth=None):
            if isinstance(node, Group):
                out["/" + rel] = _decode(ZarrxDataStore(node, mask_with_fill_value=fill_mask),
                                         **decode)
        return out

    def open_datatree(self, filename_or_obj: Any, **kwargs: Any) -> Any:
        from xarray import DataTree
        return DataTree.from_dict(self.open_groups_as_dict(filename_or_obj, **kwargs))


def _decode(store: ZarrxDataStore, **decode: Any) -> Any:
    from xarray.backends import StoreBackendEntrypoint
    return StoreBackendEntrypoint().open_dataset(store, **decode)
