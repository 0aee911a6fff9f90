"""The xarray backend ``engine="zarrx"``: a zarrx group read as a Dataset (or a DataTree).

``xr.open_dataset(path, engine="zarrx")`` reads the group's arrays as variables: dimension
names from Zarr v3 ``dimension_names`` or the v2 ``_ARRAY_DIMENSIONS`` attribute (netCDF-C's
NCZarr ``dimrefs`` when it is missing), attributes
as stored, consolidated metadata when the group has it. Data stays lazy: a
:class:`ZarrxBackendArray` reads only what is indexed (basic, outer and vectorised indexing map
onto zarrx's basic, ``oindex`` and ``vindex`` reads; ``load_async`` reads in worker threads).
CF decoding is xarray's. With ``chunks=``, the preferred dask chunks are the arrays' shards (or
chunks when unsharded).
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
from zarrx.dask.chunks import bounded_block, object_shape
from zarrx.errors import checked_call
from zarrx.errors import (ArgumentError, ArgumentTypeError, DimensionNamesMissingError,
                          MetadataError, NodeMismatchError, ZarrError)
from zarrx.group import Group
from zarrx.metadata import nodes
from zarrx.codec_args import array_codecs
from zarrx.creation import check_format, node_path
from zarrx.metadata.model import ArrayMeta, CodecSpec, DataType, RegularGrid
from zarrx.metadata.parse_cache import handed_attributes
from zarrx.metadata.lazy_entries import entry_is_array
from zarrx.metadata.v2 import nczarr_dimension_names
from zarrx.metadata.v3 import name_key
from zarrx.store.base import Store
from zarrx.store.inputs import home_expanded
from zarrx.xarray.cf_checks import checked_dataset
from zarrx.xarray.encoding import DIMENSION_KEY, decode_fill_attr, vlen_dtype
from zarrx.xarray.indexers import empty_slices_forward
from zarrx.xarray.tree_read import groups_below, tree_key

__all__ = ["ZarrxBackendArray", "ZarrxDataStore", "ZarrxBackendEntrypoint", "open_store_group",
           "array_metas", "dims_and_attrs", "stored_dtype", "variable_element"]


class ZarrxBackendArray(BackendArray):
    """A lazily indexed zarrx array. The array handle is made on the first read (opening a
    dataset of many variables reads no data and builds no handle); it pickles as its store's
    spec and the array path."""

    __slots__ = ("store", "path", "meta", "shape", "dtype", "_array")

    def __init__(self, store: Store, path: str, meta: ArrayMeta) -> None:
        self.store, self.path, self.meta = store, path, meta
        self.shape = meta.shape
        dt = meta.data_type
        if not dt.variable:
            self.dtype = stored_dtype(meta)
        elif variable_element(dt) is str and native_strings():
            self.dtype = np.dtypes.StringDType()
        else:
            self.dtype = vlen_dtype(variable_element(dt))
        self._array: Array | None = None

    @property
    def array(self) -> Array:
        if self._array is None:
            self._array = Array(self.store, self.path, self.meta, read_only=True)
        return self._array

    def __reduce__(self) -> tuple:
        # with its metadata, as arrays pickle (see zarrx.Array.__reduce__)
        return (ZarrxBackendArray, (self.store, self.path, self.meta))

    def __getitem__(self, key: indexing.ExplicitIndexer) -> np.ndarray:
        arr = self.array
        if isinstance(key, indexing.VectorizedIndexer):
            read = arr.vindex.__getitem__
        elif isinstance(key, indexing.OuterIndexer):
            read = arr.oindex.__getitem__
        else:
            read = arr.__getitem__
        # Variable-length strings read as numpy's StringDType, which is what xarray gets (a
        # 0-d read included) where it keeps that dtype; older versions get objects.
        # A Zarr v2 big-endian array reads in its stored byte order, as with engine "zarr".
        want = object if self.dtype.kind == "O" else self.dtype \
            if self.dtype.kind == "T" or not self.dtype.isnative else None
        key = empty_slices_forward(key, self.shape)
        return indexing.explicit_indexing_adapter(
            key, self.shape, indexing.IndexingSupport.VECTORIZED,
            lambda k: np.asarray(read(k), dtype=want))

    async def async_getitem(self, key: indexing.ExplicitIndexer) -> np.ndarray:
        """The read of ``self[key]`` for ``load_async``: it runs in a worker thread, so that
        the variables (and objects) loaded together are read at once."""
        import asyncio
        return await asyncio.to_thread(self.__getitem__, key)


def native_strings() -> bool:
    """Whether this xarray keeps numpy's ``StringDType`` for variable-length strings, as its
    engine "zarr" then shows them (with zarr-python 3.1 and numpy 2); older versions present
    them as Python objects."""
    string_dtype = getattr(np.dtypes, "StringDType", None)
    if string_dtype is None:
        return False
    from xarray.coding import strings
    check = getattr(strings, "is_unicode_dtype", None)
    return bool(check is not None and check(string_dtype()))


def stored_dtype(meta: ArrayMeta) -> np.dtype:
    """The numpy dtype of a fixed-size array as engine "zarr" gives it: a Zarr v2 data type in
    its stored byte order (``">i2"``, as netCDF-3 data copied into Zarr keeps it), so that
    xarray's decoding keeps it in ``encoding["dtype"]`` and a later write stores it so; other
    types as zarrx reads them (native)."""
    dt = meta.data_type
    if meta.zarr_format == 2 and isinstance(dt.json, str) and dt.json[:1] == ">":
        try:
            stored = np.dtype(dt.json)
        except TypeError:
            return dt.numpy
        if stored.newbyteorder("=") == dt.numpy:
            return stored
    return dt.numpy


def variable_element(dt: DataType) -> type:
    """The Python type of a variable-length data type's elements: ``str`` or ``bytes``."""
    return bytes if dt.numpy.kind == "S" or dt.name == "bytes" else str


def _reopen(store: Store, path: str) -> ZarrxBackendArray:
    """What backend arrays pickled by zarrx 0.1 unpickle through: the metadata is read again."""
    meta = nodes.load_node(store, path)
    if not isinstance(meta, ArrayMeta):
        raise ZarrError(f"engine 'zarrx': no array at {path!r} in {store!r}")
    return ZarrxBackendArray(store, path, meta)


def array_metas(group: Group) -> list[tuple[str, ArrayMeta]]:
    """``(name, metadata)`` of the arrays in ``group``, from its consolidated metadata when it
    has some (no handle is made, nothing else is read), by name ignoring case."""
    entries = group.metadata.consolidated
    if entries is not None:
        # the arrays alone parsed (an entry is parsed when first looked up)
        children = [(k, entries[k]) for k in entries
                    if k and "/" not in k and entry_is_array(entries, k)]
    else:
        children = nodes.list_children(group.store, group.path, group.metadata.zarr_format)
    # (in the order engine "zarr" lists them: by name, ignoring case, as zarr-python sorts
    # consolidated metadata)
    return sorted(((k, m) for k, m in children if isinstance(m, ArrayMeta)),
                  key=lambda km: name_key(km[0]))


def dims_and_attrs(meta: ArrayMeta, where: str) -> tuple[tuple[str, ...], dict]:
    """An array's dimension names and its user attributes. As engine "zarr" does, Zarr v2 hides
    the ``_ARRAY_DIMENSIONS`` and netCDF-Zarr ``_nc*`` attributes (an array without
    ``_ARRAY_DIMENSIONS`` takes its names from NCZarr's ``dimrefs``); Zarr v3 names dimensions in
    ``dimension_names`` and shows every attribute as stored (an ``_ARRAY_DIMENSIONS`` attribute
    that older writers put in v3 arrays included, which names no dimension there)."""
    attrs = meta.attributes
    ndim = len(meta.shape)
    if meta.zarr_format == 3:
        dims = meta.dimension_names
        if dims is None and ndim == 0:
            dims = ()                       # zarr-python leaves them out for a scalar
        if dims is None:            # (a KeyError too, as engine "zarr" raises)
            raise DimensionNamesMissingError(
                f"{where}: expected dimension_names naming each of the {ndim} dimensions "
                f"(xarray needs them), found None")
        if len(dims) != ndim or any(d is None for d in dims):
            raise MetadataError(f"{where}: expected dimension_names naming each of the "
                                f"{ndim} dimensions (xarray needs them), found {dims!r}")
    else:
        dims, source = attrs.get(DIMENSION_KEY), f"the attribute {DIMENSION_KEY}"
        if dims is None and nczarr_dimension_names(meta) is not None:
            dims = nczarr_dimension_names(meta)
            field = "_NCZARR_ARRAY" if "_NCZARR_ARRAY" in meta.extra else "_nczarr_array"
            source = f"the .zarray field {field}.dimrefs"
        if dims is None and ndim == 0:
            dims = []
        if isinstance(dims, str) and dims and ndim == 1:
            dims = [dims]       # (one name, not a list of it, as some writers store it)
        # (xarray's writer stores an integer dimension name as a number, which its engine
        # reads back as that integer)
        if dims is None and DIMENSION_KEY not in attrs:     # (a KeyError too, as engine
            # "zarr" raises; an attribute stored as null is malformed: a MetadataError only)
            raise DimensionNamesMissingError(
                f"{where}: expected {source} to list the {ndim} dimension names, found None")
        if not isinstance(dims, list) or len(dims) != ndim or not all(
                isinstance(d, str) or isinstance(d, int) and not isinstance(d, bool)
                for d in dims):
            raise MetadataError(f"{where}: expected {source} to list the {ndim} dimension "
                                f"names, found {dims!r}")
        attrs = {k: v for k, v in attrs.items()
                 if k != DIMENSION_KEY and not k.lower().startswith("_nc")}
    # (a plain deep copy: the metadata's attributes are shared by the handles of the process,
    # and read-only where they come from consolidated metadata; a dataset's are its own)
    return tuple(dims), handed_attributes(dict(attrs))


def codec_encoding(meta: ArrayMeta) -> dict[str, Any]:
    """The ``compressors``, ``filters`` and (Zarr v3) ``serializer`` of an array's chunks (the
    inner chunks when sharded), the encoding keys engine "zarr" reads, as metadata dicts: Zarr
    v2 numcodecs objects (``{"id": "zstd", ...}``) as its ``.zarray`` holds them, Zarr v3
    ``{"name": ..., "configuration": ...}``; Zarr v2 codecs are numcodecs objects when numcodecs
    knows them, as with engine "zarr" (whose writer takes v2 filters only so). Both writers take
    them back, so a read-then-write round trip keeps the codecs."""
    if meta.zarr_format == 2 and meta.v2_codecs is not None:
        v2 = meta.v2_codecs
        comp = () if v2.compressor is None else (v2.compressor,)
        return {"compressors": tuple(_numcodecs(c) for c in comp),
                "filters": tuple(_numcodecs(f) for f in v2.filters or ())}
    codecs = array_codecs(meta)
    out: dict[str, Any] = {"compressors": tuple(_codec_dict(c) for c in codecs["compressors"]),
                           "filters": tuple(_codec_dict(c) for c in codecs["filters"])}
    if meta.zarr_format == 3:
        out["serializer"] = None if codecs["serializer"] is None \
            else _codec_dict(codecs["serializer"])
    return out


def _numcodecs(config: Any) -> Any:
    try:
        from numcodecs import get_codec
        return get_codec(dict(config))
    except Exception:   # noqa: BLE001 - numcodecs missing or the codec unknown to it: the dict
        return dict(config)


def _codec_dict(codec: Any) -> dict:
    if isinstance(codec, CodecSpec):
        return {"name": codec.name, "configuration": dict(codec.configuration)} \
            if codec.configuration else {"name": codec.name}
    return codec.to_dict()


class ZarrxDataStore(AbstractDataStore):
    """A zarrx group as an xarray data store (read side). The arrays named in ``skip`` (the
    ``drop_variables`` of a read) are left out: their dimensions are neither looked up nor
    checked, so an array xarray cannot read (no dimension names, a conflicting length) can be
    dropped. ``arrays``: the group's arrays (:func:`array_metas`), when known already."""

    def __init__(self, group: Group, *, mask_with_fill_value: bool | None = None,
                 skip: Iterable[str] = (),
                 arrays: list[tuple[str, ArrayMeta]] | None = None) -> None:
        self.group = group
        self.mask = (group.zarr_format == 2) if mask_with_fill_value is None \
            else bool(mask_with_fill_value)
        self.skip = frozenset(skip)
        #: the _FillValue attributes that do not decode, by variable (see open_variable)
        self.fill_problems: dict[str, MetadataError] = {}
        self._arrays: list[tuple[str, ArrayMeta]] | None = None
        if arrays is not None:      # (the group's arrays, listed already: see tree_read)
            self._arrays = [(k, m) for k, m in arrays if k not in self.skip]

    def _metas(self) -> list[tuple[str, ArrayMeta]]:
        # the group is listed once: xarray asks for the variables more than once
        if self._arrays is None:
            self._arrays = [(k, m) for k, m in array_metas(self.group) if k not in self.skip]
        return self._arrays

    def open_variable(self, name: str, meta: ArrayMeta) -> Any:
        from xarray import Variable

        path = nodes.join(self.group.path, name)
        dims, attrs = dims_and_attrs(meta, "/" + path)
        wrapper = ZarrxBackendArray(self.group.store, path, meta)
        data = indexing.LazilyIndexedArray(wrapper)
        layout = meta.layout
        shards = None
        if layout.sharded and isinstance(meta.chunk_grid, RegularGrid):
            shards = meta.chunk_grid.chunk_shape
        # (the stored objects' shape, as engine "zarr" gives it: not cut to the array's shape)
        preferred = meta.chunk_grid.chunk_shape if isinstance(meta.chunk_grid, RegularGrid) \
            else object_shape(meta)
        # (whole objects, at most MAX_BLOCKS blocks of them: chunks={} makes these blocks)
        preferred = bounded_block(preferred, meta.shape)
        codecs = codec_encoding(meta)
        # (the keys in engine "zarr"'s order)
        encoding: dict[str, Any] = {"chunks": layout.read_shape,
                                    "preferred_chunks": dict(zip(dims, preferred))}
        if wrapper.dtype.kind == "T":       # xarray's decoding keeps StringDType so marked
            encoding["dtype"] = wrapper.dtype
        encoding.update(compressors=codecs.pop("compressors"), filters=codecs.pop("filters"),
                        shards=shards, **codecs)
        if self.mask:
            # (records and raw bytes are never masked: CF masking compares elements with the
            # fill value, which xarray cannot do for them)
            if meta.fill_value is not None and wrapper.dtype.kind != "V":
                attrs["_FillValue"] = meta.fill_value
        else:
            if meta.zarr_format == 3:
                encoding["fill_value"] = meta.fill_value
            if "_FillValue" in attrs:
                try:
                    attrs["_FillValue"] = decode_fill_attr(attrs["_FillValue"], wrapper.dtype,
                                                           f"/{path} attributes")
                except MetadataError as exc:    # raised by a read that masks; raw otherwise
                    self.fill_problems[name] = exc
        return Variable(dims, data, attrs, encoding)

    def get_variables(self) -> dict:
        from xarray.core.utils import FrozenDict
        metas = self._metas()
        self._sizes(metas)                  # a Dataset needs one length per dimension
        return FrozenDict((name, self.open_variable(name, meta)) for name, meta in metas)

    def get_attrs(self) -> dict:
        return {k: v for k, v in self.group.attrs.items() if not k.lower().startswith("_nc")}

    def get_dimensions(self, growing: str | None = None) -> dict:
        return self._sizes(self._metas(), growing)

    def _sizes(self, metas: list[tuple[str, ArrayMeta]], growing: str | None = None
               ) -> dict[str, int]:
        """The length of each dimension of the arrays ``metas``; MetadataError naming both
        arrays when one name has two lengths. Along ``growing`` (appended to by writers, whose
        variables grow one after the other) the largest."""
        sizes: dict[str, tuple[int, str]] = {}
        for name, meta in metas:
            dims, _ = dims_and_attrs(meta, "/" + nodes.join(self.group.path, name))
            for d, n in zip(dims, meta.shape):
                if d == growing:
                    if n > sizes.get(d, (-1, ""))[0]:
                        sizes[d] = (n, name)
                    continue
                first, where = sizes.setdefault(d, (n, name))
                if first != n:
                    raise MetadataError(f"{self.group.name}: dimension {d!r} has length "
                                        f"{first} in array {where!r} and {n} in array "
                                        f"{name!r}; expected one length per dimension name")
        return {d: n for d, (n, _) in sizes.items()}

    def close(self) -> None:
        pass


def open_store_group(filename_or_obj: Any, *, group: str | None = None, mode: str = "r",
                     consolidated: bool | None = None, storage_options: dict | None = None,
                     zarr_format: int | None = None) -> Group:
    """The zarrx group to read: from a path, URL, zarrx Store or Group, or any store zarrx
    opens (a dict, an fsspec mapper, an obstore or zarr-python store), with ``mode`` ``r``,
    ``r+`` or ``a``: a read never empties the group (engine "zarr" takes ``w``)."""
    if mode not in ("r", "r+", "a"):
        raise ArgumentError(f"engine 'zarrx': mode: expected 'r', 'r+' or 'a', found {mode!r} "
                            f"('w' would empty the group before reading it, 'w-' only "
                            f"creates one)")
    if isinstance(filename_or_obj, Group):
        root = filename_or_obj
        path = node_path(group, "engine 'zarrx'", "group")
        return root[path] if path else root  # type: ignore[return-value]
    filename_or_obj = home_expanded(filename_or_obj)
    if filename_or_obj is None:         # (which zarrx would take for a new memory store)
        raise ArgumentTypeError("engine 'zarrx': expected a path, URL, store or Group, found "
                                "None")
    if zarr_format is not None:
        zarr_format = check_format(zarr_format)
    kw: dict[str, Any] = {} if storage_options is None else {"storage_options": storage_options}
    use = None if consolidated is None else bool(consolidated)
    path = node_path(group, "engine 'zarrx'", "group")
    if not path:
        return open_group(filename_or_obj, mode=mode, zarr_format=zarr_format,
                          use_consolidated=use, **kw)
    # a sub-group: reached from the root, whose consolidated metadata (v2 .zmetadata, v3
    # inline) serves it, as consolidate_metadata and xarray write it there
    root = open_group(filename_or_obj, mode=mode, zarr_format=zarr_format, use_consolidated=use,
                      **kw)
    node = root[path]
    if not isinstance(node, Group):
        raise NodeMismatchError(f"engine 'zarrx': {path!r} is an array, not a group")
    return node


class ZarrxBackendEntrypoint(BackendEntrypoint):
    """``engine="zarrx"``: Zarr v2 and v3 groups read through zarrx."""

    description = "Open Zarr v2 and v3 groups (.zarr) through zarrx"
    url = "https://github.com/zarrx/zarrx/blob/main/docs/guide/xarray.md"
    supports_groups = True
    open_dataset_parameters = ("filename_or_obj", "mask_and_scale", "decode_times",
                               "concat_characters", "decode_coords", "drop_variables",
                               "use_cftime", "decode_timedelta", "group", "mode", "consolidated",
                               "storage_options", "zarr_format", "use_zarr_fill_value_as_mask",
                               "store", "cache_members")

    def guess_can_open(self, filename_or_obj: Any) -> bool:
        if isinstance(filename_or_obj, (Group, Store)):
            return True
        if isinstance(filename_or_obj, (str, os.PathLike)):
            return os.path.splitext(os.fspath(filename_or_obj).rstrip("/"))[1] == ".zarr"
        return False

    @checked_call
    def open_dataset(self, filename_or_obj: Any, *, mask_and_scale: bool = True,
                     decode_times: Any = True, concat_characters: bool = True,
                     decode_coords: Any = True, drop_variables: str | Iterable[str] | None = None,
                     use_cftime: bool | None = None, decode_timedelta: Any = None,
                     group: str | None = None, mode: str = "r", consolidated: bool | None = None,
                     storage_options: dict | None = None, zarr_format: int | None = None,
                     use_zarr_fill_value_as_mask: bool | None = None, store: Any = None,
                     cache_members: bool = True) -> Any:
        # cache_members: zarrx lists a group's members once, when it is opened; nothing to turn
        # off. store: engine "zarr" takes an opened ZarrStore, which zarrx cannot read.
        _refuse_store(store)
        grp = open_store_group(filename_or_obj, group=group, mode=mode,
                               consolidated=consolidated, storage_options=storage_options,
                               zarr_format=zarr_format)
        store = ZarrxDataStore(grp, mask_with_fill_value=use_zarr_fill_value_as_mask,
                               skip=_dropped(drop_variables))
        return checked_dataset(store, mask_and_scale=mask_and_scale, decode_times=decode_times,
                               concat_characters=concat_characters, decode_coords=decode_coords,
                               drop_variables=drop_variables, use_cftime=use_cftime,
                               decode_timedelta=decode_timedelta)

    @checked_call
    def open_groups_as_dict(self, filename_or_obj: Any, *, mask_and_scale: bool = True,
                            decode_times: Any = True, concat_characters: bool = True,
                            decode_coords: Any = True,
                            drop_variables: str | Iterable[str] | None = None,
                            use_cftime: bool | None = None, decode_timedelta: Any = None,
                            group: str | None = None, mode: str = "r",
                            consolidated: bool | None = None,
                            storage_options: dict | None = None,
                            zarr_format: int | None = None,
                            use_zarr_fill_value_as_mask: bool | None = None, store: Any = None,
                            cache_members: bool = True) -> dict:
        """The group and every group below it, each as a Dataset, keyed as engine "zarr" keys
        them: ``{"/": ..., "/a": ..., "/a/b": ...}``, or, whenever ``group`` is given (``"/"``
        included), paths relative to it: ``{".": ..., "b": ...}``. The arguments are those of
        :meth:`open_dataset`."""
        _refuse_store(store)
        top = open_store_group(filename_or_obj, group=group, mode=mode,
                               consolidated=consolidated, storage_options=storage_options,
                               zarr_format=zarr_format)
        decode = dict(mask_and_scale=mask_and_scale, decode_times=decode_times,
                      concat_characters=concat_characters, decode_coords=decode_coords,
                      drop_variables=drop_variables, use_cftime=use_cftime,
                      decode_timedelta=decode_timedelta)
        # (each group listed once: its arrays found by the walk go to its data store)
        return {tree_key(rel, bool(group)):
                checked_dataset(ZarrxDataStore(node,
                                               mask_with_fill_value=use_zarr_fill_value_as_mask,
                                               skip=_dropped(drop_variables), arrays=arrays),
                                **decode)
                for rel, node, arrays in groups_below(top)}

    @checked_call
    def open_datatree(self, filename_or_obj: Any, *, mask_and_scale: bool = True,
                      decode_times: Any = True, concat_characters: bool = True,
                      decode_coords: Any = True,
                      drop_variables: str | Iterable[str] | None = None,
                      use_cftime: bool | None = None, decode_timedelta: Any = None,
                      group: str | None = None, mode: str = "r",
                      consolidated: bool | None = None, storage_options: dict | None = None,
                      zarr_format: int | None = None,
                      use_zarr_fill_value_as_mask: bool | None = None, store: Any = None,
                      cache_members: bool = True) -> Any:
        """The group and every group below it as a DataTree; the arguments are those of
        :meth:`open_dataset`."""
        from xarray import DataTree
        return DataTree.from_dict(self.open_groups_as_dict(
            filename_or_obj, mask_and_scale=mask_and_scale, decode_times=decode_times,
            concat_characters=concat_characters, decode_coords=decode_coords,
            drop_variables=drop_variables, use_cftime=use_cftime,
            decode_timedelta=decode_timedelta, group=group, mode=mode,
            consolidated=consolidated, storage_options=storage_options,
            zarr_format=zarr_format, use_zarr_fill_value_as_mask=use_zarr_fill_value_as_mask,
            store=store, cache_members=cache_members))


def _dropped(drop_variables: Any) -> frozenset[str]:
    """The array names of ``drop_variables`` (a name or an iterable of names; what is not a
    string is left to xarray, which names no array by it); an ArgumentTypeError (a TypeError,
    as xarray raises) for a value that is neither."""
    if drop_variables is None:
        return frozenset()
    if isinstance(drop_variables, str):
        return frozenset([drop_variables])
    try:
        return frozenset(v for v in drop_variables if isinstance(v, str))
    except TypeError:
        raise ArgumentTypeError(f"engine 'zarrx': drop_variables: expected a variable name or an "
                                f"iterable of names, found {type(drop_variables).__name__} "
                                f"{drop_variables!r}") from None


def _refuse_store(store: Any) -> None:
    if store is not None:
        raise ArgumentTypeError(f"engine 'zarrx': store= (an opened xarray ZarrStore) is "
                                f"not supported, found {type(store).__name__}; pass the "
                                f"path, URL, store or zarrx Group as filename_or_obj")
