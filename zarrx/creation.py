"""Creating arrays: ``create_array`` with zarr-python 3's argument names, chunk-shape
defaults, and the implicit parent groups a nested path needs (see :mod:`zarrx.node_paths`)."""
from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from zarrx.errors import checked_call
from zarrx import config as settings
from zarrx.array import Array
from zarrx.errors import (ArgumentError, ArgumentTypeError, ReadOnlyError, StoreArgumentError,
                          ZarrDeprecationWarning, ZarrError, ZarrFormatArgumentError, node_exists)
from zarrx.metadata import make_array_meta, nodes
from zarrx.metadata._util import short
from zarrx.metadata.leftovers import clear_leftovers
from zarrx.metadata.make import DEFAULT_FILL, attributes_arg
from zarrx.metadata.model import ArrayMeta
from zarrx.node import Node
from zarrx.node_paths import (Ancestors, ancestors_for, check_node_names, check_parents,
                              check_v3_names, inherited_format, make_parents, node_path,
                              save_parent, save_parents)
from zarrx.shape_args import auto_chunks, chunks_arg, create_chunks, shape_arg
from zarrx.store import Store, check_storage_options, make_store
from zarrx.store.call_stores import discards_on_failure
from zarrx.store.inputs import file_url_path

__all__ = ["create_array", "format_of", "auto_chunks", "prepare_node", "make_parents",
           "check_parents", "Ancestors", "ancestors_for", "save_parent", "save_parents",
           "inherited_format", "node_path", "check_v3_names", "exists_error",
           "check_format", "shape_arg", "create_chunks", "data_array",
           "check_node_names", "flag_arg", "named"]


def _store(store: Any, mode: str, storage_options: dict | None = None, *,
           path: Any = "", replacing: bool = True, what: str = "make_store") -> Store:
    """The store ``store`` names, opened for ``mode``. ``path`` and ``replacing``: the node a
    creating call (mode ``"w"``) makes there, and whether it replaces what is there (see
    :func:`_zip_mode`); ``what``, the function errors name."""
    check_storage_options(storage_options, store)
    if store is None:
        if storage_options:               # a TypeError, as zarr-python raises
            raise ArgumentTypeError("storage_options: given without a store URL")
        from zarrx.store import MemoryStore
        return MemoryStore()
    if isinstance(store, dict):           # zarr-python's zarr.open({}): the dict holds the keys
        if storage_options:
            raise StoreArgumentError(f"store: storage_options apply to URLs, not to a dict "
                                     f"(found {sorted(storage_options)!r})")
        from zarrx.storage import DictStore
        return DictStore(store, read_only=mode == "r")
    return make_store(store, _zip_mode(store, mode, path, replacing), storage_options,
                      _what=what)


def _zip_mode(store: Any, mode: str, path: Any, replacing: bool) -> str:
    """The mode to open ``store`` with for a call creating the node ``path`` in mode ``mode``:
    ``"a"`` (add to the archive) when ``store`` is the path of an existing zip archive, the
    mode is ``"w"`` and the call replaces less than the whole archive (a node below its root,
    or its root without overwrite), since a zip archive opened with ``"w"`` is written anew,
    without the other nodes it held; ``mode`` otherwise."""
    if mode != "w" or (replacing and (not isinstance(path, str) or not path.strip("/"))):
        return mode
    if not isinstance(store, (str, os.PathLike)):
        return mode
    text = os.fspath(store)
    if not isinstance(text, str):
        return mode
    local = file_url_path(text)
    text = text if local is None else local
    if "://" in text or not text.lower().endswith(".zip") or not os.path.isfile(text):
        return mode
    return "a"


def _where(store: Store, path: str) -> str:
    return f"{path or '/'!r} in {store!r}"


def exists_error(st: Store, path: str, mode: str, what: str) -> Callable[[Any], ZarrError]:
    """The error of creating a node where one exists (given the node found there)."""
    def error(found: Any) -> ZarrError:
        return node_exists(isinstance(found, ArrayMeta),
                           f"{what}: a node already exists at {_where(st, path)}"
                           + ("" if mode == "w-" else "; pass overwrite=True to replace it"))
    return error


def prepare_node(st: Store, path: str, overwrite: bool, mode: str, what: str, zarr_format: int,
                 found: Ancestors | None = None, base: str = "") -> None:
    """Check that a node can be created at ``path`` (nothing there, unless ``overwrite``;
    its parents, see :func:`check_parents`), then clear the place and create the missing
    parents. ``found``: the node and those above it, when the caller has read them already
    (:class:`Ancestors`); otherwise they are read here, in one batch. ``base``: a group of
    ``zarr_format`` above ``path`` that the caller holds (the groups above it not checked)."""
    if st.read_only:
        raise ReadOnlyError(f"{what}: the store {st!r} is read-only")
    if found is None:
        found = Ancestors(st, path, base=base)
    existing = found(path)
    if existing is not None and not overwrite:
        raise exists_error(st, path, mode, what)(existing)
    missing = check_parents(st, base, path, zarr_format, what, found) if path else []
    if existing is not None or overwrite:   # objects left without a node document go too
        nodes.delete_node(st, path, found.documents())   # consolidated documents read: known
    save_parents(st, missing, path, zarr_format, what, found)


def config_mapping(config: Any, what: str) -> Mapping | None:
    """zarr-python's per-array ``config`` as a mapping: a mapping as it is, an
    ``ArrayConfig`` (zarrx's or zarr-python's) as its ``to_dict()``; anything else is an
    :class:`~zarrx.errors.ArgumentTypeError`."""
    if config is None or isinstance(config, Mapping):
        return config
    if hasattr(config, "to_dict"):
        as_dict = config.to_dict()
        if isinstance(as_dict, Mapping):
            return as_dict
    raise ArgumentTypeError(f"{what}: config: expected a mapping or an ArrayConfig, found "
                            f"{type(config).__name__} {short(config)}")


def config_order(config: Any, what: str) -> str | None:
    """The ``order`` of zarr-python's per-array ``config`` (``"C"``/``"F"``), or None."""
    config = config_mapping(config, what)
    order = config.get("order") if config else None
    if order is not None and (not isinstance(order, str) or order not in ("C", "F")):
        raise ArgumentError(f"{what}: config: order: expected 'C' or 'F', found {order!r}")
    return order


def create_order(kwargs: dict, zarr_format: int, what: str) -> dict:
    """``kwargs`` of zarr-python's ``create`` family (``Group.zeros``, ...), whose Zarr v2
    array made without ``order=`` stores the ``order`` of ``config=``; ``zarr_format``, the
    format used unless ``kwargs`` names one."""
    if (kwargs.get("zarr_format") or zarr_format) == 2 and kwargs.get("order") is None:
        order = config_order(kwargs.get("config"), what)
        if order is not None:
            return {**kwargs, "order": order}
    return kwargs


def flag_arg(value: Any, what: str, name: str) -> bool:
    """A yes/no keyword as Python reads it (``overwrite=1`` is True, as in zarr-python); a
    value without one truth value (a numpy array of several items) is an
    :class:`~zarrx.errors.ArgumentTypeError`."""
    try:
        return bool(value)
    except (TypeError, ValueError) as exc:
        raise ArgumentTypeError(f"{what}: {name}: expected True or False, found "
                                f"{type(value).__name__} {short(value)}") from exc


def named(value: Any, *names: str) -> bool:
    """Whether an argument is one of the strings ``names`` (``"auto"``); another value may be
    a numpy array, which ``==`` would compare item by item."""
    return isinstance(value, str) and value in names


def check_format(zarr_format: Any, *, none: bool = False) -> Any:
    """``zarr_format`` as a Python int: 2 or 3, given as an int or a numpy integer (as
    zarr-python takes it; not a bool), or None, when ``none`` (auto-detect or the default).
    Any other value raises :class:`~zarrx.errors.ZarrFormatArgumentError` (an
    ``ArgumentError`` and a ``MetadataValidationError``, as zarr-python raises)."""
    if none and zarr_format is None:
        return None
    if not (type(zarr_format) is int or isinstance(zarr_format, np.integer)) \
            or zarr_format not in (2, 3):
        expected = "2, 3 or None" if none else "2 or 3"
        raise ZarrFormatArgumentError(f"zarr_format: expected {expected}, found "
                                      f"{zarr_format!r}")
    return int(zarr_format)


def format_of(zarr_format: Any, zarr_version: Any, what: str) -> Any:
    """``zarr_format``, or zarr-python's deprecated spelling ``zarr_version`` of it (with a
    ``ZarrDeprecationWarning``, a ``DeprecationWarning``, as zarr-python gives); both, when
    they differ, raise :class:`~zarrx.errors.ArgumentError`."""
    if zarr_version is None:
        return zarr_format
    if zarr_format is not None and str(zarr_format) != str(zarr_version):   # (arrays too)
        raise ArgumentError(f"{what}: zarr_format {zarr_format!r} and zarr_version "
                            f"{zarr_version!r} differ; pass zarr_format only")
    warnings.warn(f"{what}: zarr_version is deprecated, use zarr_format", ZarrDeprecationWarning,
                  stacklevel=3)
    return zarr_version


@discards_on_failure
@checked_call
def create_array(store: Any = None, *, name: str | None = None, shape: Any = None,
                 dtype: Any = None, chunks: Any = "auto", shards: Any = None,
                 filters: Any = "auto", compressors: Any = "auto", compressor: Any = "auto",
                 serializer: Any = "auto", fill_value: Any = DEFAULT_FILL,
                 order: str | None = None, zarr_format: int | None = None,
                 attributes: dict | None = None,
                 dimension_names: Sequence[str | None] | None = None,
                 chunk_key_encoding: Any = None, overwrite: bool = False,
                 write_empty_chunks: bool | None = None, data: Any = None, path: str | None = None,
                 config: Any = None, write_data: bool = True,
                 storage_options: dict | None = None, _mode: str = "w-",
                 _found: Ancestors | None = None, _base: str = "",
                 _what: str = "create_array") -> Array:
    """Create an array (zarr-python 3 argument names). ``store`` is as for
    :func:`zarrx.open`; ``name`` (or ``path``) the array's path in it. ``shape`` and ``dtype``
    (a numpy dtype or a Zarr v3 data type name) are needed unless ``data`` gives them;
    ``chunks`` is the chunk shape (``"auto"``: about 1 MiB inside a shard, else up to
    64 MiB), ``shards`` the shard shape (None: not sharded); ``compressors``, ``filters``
    and ``serializer`` take zarrx codecs (:mod:`zarrx.codecs`), zarr-python or numcodecs codec
    objects, or codec dicts (``"auto"``: zstd, no filters, the data type's serializer).
    ``overwrite=True`` replaces a node there; otherwise one is a
    :class:`~zarrx.errors.ContainsArrayError` / ``ContainsGroupError``. ``data``, if given,
    is written at once (unless ``write_data=False``). ``config`` is zarr-python's per-array
    configuration: ``{"write_empty_chunks": bool, "order": "C" | "F"}``; as there, its ``order`` is the memory
    layout reads from the returned handle hand out for a Zarr v3 array (nothing is stored),
    while ``order=`` is the order a Zarr v2 array stores. ``storage_options`` configure the
    backend of a store URL (``s3://...``). Without ``zarr_format``, the array takes the format
    of the group it goes into (:func:`inherited_format`; zarr-python makes Zarr v3).
    (Internal, not for callers: ``_found``, the node and those above it as a caller that
    checked them read them; ``_base``, a group of the array's format above it that the
    caller holds, see :func:`prepare_node`; ``_what``, the function its errors name.)"""
    from zarrx.codec_args import build_codecs

    config = config_mapping(config, _what)
    if dimension_names is not None:          # not str: a TypeError, as in zarr-python
        names = list(dimension_names) if isinstance(dimension_names, Iterable) and getattr(
            dimension_names, "ndim", 1) else [0]             # (a 0-d numpy array: no items)
        if not all(n is None or isinstance(n, str) for n in names):
            raise ArgumentTypeError(f"{_what}: dimension_names: expected a sequence of "
                                    f"str or None, found {short(dimension_names)}")
        dimension_names = names
    if config:
        unknown = sorted(set(config) - {"write_empty_chunks", "order"})
        if unknown:
            raise ArgumentError(f"{_what}: config: unknown setting {unknown[0]!r}; "
                                f"expected write_empty_chunks, order")
        if write_empty_chunks is None:
            write_empty_chunks = config.get("write_empty_chunks")
    if write_empty_chunks is not None and not isinstance(write_empty_chunks, (bool, np.bool_)):
        # refused before anything is written, as Array.with_config refuses it
        raise ArgumentTypeError(f"{_what}: write_empty_chunks: expected True or False, "
                                f"found {short(write_empty_chunks)}")
    attributes_arg(attributes, _what)       # named as create_group names them
    memory_order = config_order(config, _what)
    if order is not None and (not isinstance(order, str) or order not in ("C", "F")):
        raise ArgumentError(f"{_what}: order: expected 'C' or 'F', found {order!r}")

    overwrite = flag_arg(overwrite, _what, "overwrite")
    write_data = flag_arg(write_data, _what, "write_data")
    st = _store(store, "w", storage_options, path=path if name is None else name,
                replacing=overwrite, what=_what)
    path = node_path(path, _what, new=True)
    if name is not None:
        name_path = node_path(name, _what, "name", new=True)
        if name_path != path and path:  # path= is zarrx's other spelling of name=
            raise ArgumentError(f"{_what}: pass name= or path=, not both (found name="
                                f"{name!r}, path={path!r})")
        path = name_path
    if _found is None and _base and not overwrite:
        _found = Ancestors(st, path, base=_base)
    _found = ancestors_for(st, path, _found, replacing=overwrite)
    zarr_format = inherited_format(st, path, zarr_format, _found)
    zarr_format = check_format(zarr_format)
    if data is not None:
        data = data_array(data, _what)
        if shape is None:
            shape = data.shape
        elif shape_arg(shape) != data.shape:    # checked before anything is created
            raise ArgumentError(f"{_what}: shape= {shape_arg(shape)} differs from the shape "
                                f"{data.shape} of data= (give one of them)")
        if dtype is None:
            dtype = data_dtype(data, _what)
    if dtype is None:
        dtype = "float64"
    shape = shape_arg(shape)
    chunks = chunks_arg(chunks, shape, dtype, sharded=shards is not None, zarr_format=zarr_format)
    if not named(compressor, "auto"):
        if not named(compressors, "auto"):
            raise ArgumentError(f"{_what}: pass compressors= or compressor=, not both")
        compressors = compressor
    # zarr-python's array.order: the order a Zarr v2 array stores when order= is not given
    v2_order = settings.get("order") if zarr_format == 2 else "C"
    codec_kw, grid_chunks = build_codecs(
        dtype=dtype, shape=shape, chunks=chunks, shards=shards, filters=filters,
        serializer=serializer, compressors=compressors, zarr_format=zarr_format,
        order=order or v2_order, what=_what)
    meta = make_array_meta(shape, dtype, grid_chunks, fill_value=fill_value, **codec_kw,
                           zarr_format=zarr_format, chunk_key_encoding=chunk_key_encoding,
                           dimension_names=dimension_names, attributes=attributes,
                           order=order or v2_order)
    if any(c.name in ("scale_offset", "cast_value") for c in meta.layout.read_codecs):
        from zarrx.size_limits import check_fill
        check_fill(meta, path)      # the fill value through the value codecs, before storing
    # zarr-python: config's order is the layout reads hand out from this handle, on Zarr v3
    # (which stores no order); a Zarr v2 array keeps the order it stores
    arr = Array(st, path, meta, write_empty_chunks=write_empty_chunks,
                order=memory_order if zarr_format == 3 else None)
    if data is not None and write_data:     # data the dtype cannot take: nothing is written
        data = arr._as_stored(data)
    prepare_node(st, path, overwrite, _mode, _what, zarr_format, _found,
                 "" if overwrite else _base)
    if not overwrite:
        clear_leftovers(st, path)     # objects of a deleted array, read as its own
    nodes.save_node(st, path, meta, exists=None if overwrite
                    else exists_error(st, path, _mode, _what))
    if data is not None and write_data:
        arr[...] = data
    return arr


def data_array(data: Any, what: str) -> np.ndarray:
    """``np.asarray(data)``, or an :class:`~zarrx.errors.ArgumentError` naming ``what`` when
    numpy cannot make an array of it (a ragged nested list). A group is refused with an
    :class:`~zarrx.errors.ArgumentTypeError` (a ``TypeError``): numpy would make an array of
    its member names."""
    if _is_group(data):
        raise ArgumentTypeError(f"{what}: expected array data, found {type(data).__name__} "
                                f"{short(data, 60)}: a group holds no data of its own (create "
                                f"groups with create_group, copy them with zarrx.copy)")
    try:
        return np.asarray(data)
    except ValueError as exc:
        raise ArgumentError(f"{what}: data is not an array: {exc}") from None


def _is_group(data: Any) -> bool:
    """Whether ``data`` is a group: zarrx's, or zarr-python's (``Group``, ``AsyncGroup``)."""
    if isinstance(data, Node):
        return not isinstance(data, Array)
    cls = type(data)
    return cls.__name__ in ("Group", "AsyncGroup") and cls.__module__.startswith("zarr.")


def data_dtype(data: Any, what: str) -> Any:
    """The data type of an array made from ``data``: its dtype, or for numpy's object dtype
    the one its values give (:func:`object_data_dtype`)."""
    if isinstance(data, np.ndarray) and data.dtype.kind == "O":
        return object_data_dtype(data, what)
    return data.dtype


def object_data_dtype(data: np.ndarray, what: str) -> str:
    """The data type of an array made from ``data`` of numpy's object dtype: ``"string"``
    when every value is a ``str`` (and when there are none), ``"bytes"`` when every value is
    ``bytes``. Anything else is ambiguous (zarr-python refuses every object array): an
    :class:`~zarrx.errors.ArgumentError` asking for ``dtype=`` (for a value of another type,
    an :class:`~zarrx.errors.ArgumentTypeError`, a ``TypeError`` too, as zarr-python raises
    for data such as ``None`` given to ``g[name] = ...``)."""
    kinds: set[type] = set()
    for value in data.flat:
        kind = str if isinstance(value, str) else bytes if isinstance(value, bytes) else None
        if kind is None:
            raise ArgumentTypeError(
                f"{what}: data of numpy's object dtype holds a value of type "
                f"{type(value).__name__} ({short(value, 40)}); expected only str or only bytes "
                f"values: give dtype= to store anything else")
        kinds.add(kind)
    if len(kinds) > 1:
        raise ArgumentError(f"{what}: data of numpy's object dtype holds both str and bytes "
                            f"values; expected only one of them: give dtype=str or dtype=bytes")
    return "bytes" if kinds == {bytes} else "string"


def as_zarrx_array(a: Any) -> Any:
    """A zarr-python ``Array`` as the zarrx :class:`Array` over the same stored array (its
    store and path), so that copies and ``*_like`` keep its chunks, shards, codecs and fill
    value as they keep a zarrx array's; anything else as it is."""
    cls = type(a)
    if isinstance(a, Array) or cls.__name__ != "Array" or not cls.__module__.startswith("zarr."):
        return a
    try:
        store, path = a.store, a.path
    except AttributeError:
        return a
    st = make_store(store, "r")
    meta = nodes.load_node(st, path)
    return Array(st, path, meta, read_only=True) if isinstance(meta, ArrayMeta) else a
