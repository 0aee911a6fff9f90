"""Opening and creating nodes: ``open``, ``open_group``, ``open_array``, ``create_group``,
``create_array``, ``consolidate_metadata``, ``zeros``/``ones``/``full``/``empty`` and their
``*_like`` forms (zarr-python 3 names, signatures and modes). ``array``, ``save``, ``load``
and ``from_array`` are in :mod:`zarrx.convenience`.

Modes: ``r`` read only, must exist; ``r+`` read/write, must exist; ``a`` read/write, create if
missing (default); ``w`` create, replacing whatever is there; ``w-`` create, fail if it exists.
A store may be a path, a :class:`~zarrx.store.Store` or a ``dict`` (its keys hold the data).
An unknown keyword argument raises :class:`~zarrx.errors.ArgumentTypeError` (a ``TypeError``).
"""
from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from zarrx.array import Array
from zarrx.errors import (ArgumentError, ArgumentTypeError, ArrayNotFoundError,
                          ContainsArrayError, ContainsGroupError, GroupNotFoundError,
                          MetadataError, NodeExistsError, NodeNotFoundError, ReadOnlyError,
                          checked_call, node_exists, refuse_keywords)
from zarrx.creation import (Ancestors, _store, _where, ancestors_for, check_format, config_order,
                            create_array, create_chunks, exists_error, flag_arg,
                            format_of, inherited_format, named, node_path, prepare_node)
from zarrx.group import Group
from zarrx.like import like_arguments
from zarrx.metadata import nodes
from zarrx.node_hint import missing_at
from zarrx.open_args import (_ARRAY_KW, _OPEN_KW, MODES, _default_mode, _memory_order,
                              _write_empty_chunks, check_keywords, check_mode)
from zarrx.shape_args import separator_encoding
from zarrx.metadata.make import DEFAULT_FILL, attributes_arg
from zarrx.metadata.model import ArrayMeta, GroupMeta
from zarrx.storage import StoreLike
from zarrx.store import Store
from zarrx.store.call_stores import discards_on_failure

__all__ = ["open", "open_group", "open_array", "create_group", "create_array", "group",
           "consolidate_metadata", "open_consolidated", "create", "zeros", "ones",
           "full", "empty", "zeros_like", "ones_like", "full_like", "empty_like"]

@discards_on_failure
def open(store: StoreLike | None = None, *, mode: str | None = None,  # noqa: A001
         path: str | None = None, zarr_format: int | None = None,
         zarr_version: int | None = None, _what: str = "open", **kwargs: Any) -> Array | Group:
    """Open the array or group at ``path`` (v2 or v3, auto-detected); in modes ``a``/``w``/``w-``
    create it when missing (an array if ``shape`` is given, else a group). ``mode`` defaults to
    ``r`` for a read-only store, else ``a``. Other keywords: those of :func:`create` (used when
    an array is created, as :func:`create` reads them), ``attributes`` and
    ``use_consolidated``. ``store``: a local path (``str`` or ``pathlib.Path``, taken as
    written, ``~`` too; ending in ``.zip``, a zip archive), a URL (``file://``, ``s3://``,
    ``https://``... with ``storage_options=``), a zarrx store, a ``dict``, an fsspec mapper or
    a zarr-python store; None, a new memory store. ``mode``: ``r`` read only, ``r+`` read and
    write an existing node, ``a`` also create it when missing, ``w`` create, replacing what is
    there, ``w-`` create, failing if a node exists. (``_what``: the function errors name, for
    the functions built on this one.)"""
    zarr_format = format_of(zarr_format, zarr_version, _what)
    check_keywords(_what, kwargs, _OPEN_KW)
    zarr_format = check_format(zarr_format, none=True)
    storage_options = kwargs.pop("storage_options", None)
    mode = _default_mode(store, mode)
    check_mode(mode, _what)
    st = _store(store, mode, storage_options, path=path, what=_what)
    path = node_path(path, _what)
    use_consolidated = kwargs.pop("use_consolidated", None)
    found = None
    if mode in ("r", "r+", "a"):
        meta, found = _opened(st, path, zarr_format, use_consolidated, mode)
        if isinstance(meta, GroupMeta):
            extra = [k for k in kwargs if k != "attributes"]
            if extra:                        # zarr-python: open_group refuses them (TypeError)
                raise ArgumentTypeError(f"{_what}: {extra[0]}= is an array argument, but the node "
                                        f"at {_where(st, path)} is a group")
            return _group(st, path, meta, mode, use_consolidated, _what)
        if meta is not None:
            return Array(st, path, meta, read_only=mode == "r",
                         write_empty_chunks=_write_empty_chunks(kwargs, _what),
                         order=_memory_order(kwargs, meta, _what))
        _other_format(st, path, zarr_format, _what, mode,
                      ArrayNotFoundError if "shape" in kwargs else GroupNotFoundError, found)
        if mode != "a" and "shape" in kwargs:   # zarr-python: open_array's error
            raise ArrayNotFoundError(f"{_what}: no array at {missing_at(st, path)}")
        if mode != "a":
            raise GroupNotFoundError(f"{_what}: no array or group at {missing_at(st, path)}")
        _cannot_create(st, path, _what, "an array or group")
    if mode == "w-":
        _check_unused(st, path, _what)
    creating = dict(kwargs)
    try:
        if "shape" in creating:
            return create(store=st, path=path, zarr_format=zarr_format, overwrite=(mode == "w"),
                          _mode=mode, _found=found, _what=_what, **creating)
        attributes = creating.pop("attributes", None)
        if creating:
            raise ArgumentTypeError(f"{_what}: {next(iter(creating))}= is an array argument, but "
                                    f"no shape= was given, so {_what} would create a group at "
                                    f"{_where(st, path)}")
        return create_group(st, path=path, zarr_format=zarr_format, overwrite=(mode == "w"),
                            attributes=attributes, _mode=mode, _found=found, _what=_what)
    except NodeExistsError as exc:
        if mode != "a":
            raise
        created = exc
    return _reopen(created, lambda: open(st, mode="r+", path=path, zarr_format=zarr_format,
                                         use_consolidated=use_consolidated, _what=_what,
                                         **kwargs))


@discards_on_failure
@checked_call
def open_group(store: StoreLike | None = None, *, mode: str = "a", path: str | None = None,
               zarr_format: int | None = None, attributes: dict | None = None,
               use_consolidated: bool | None = None,
               storage_options: dict | None = None, zarr_version: int | None = None,
               _what: str = "open_group", _found: Ancestors | None = None) -> Group:
    """Open (or, in modes a/w/w-, create) the group at ``path``. ``use_consolidated=True``
    requires consolidated metadata in an existing group, ``False`` ignores it.
    ``storage_options`` configure the backend of a store URL (``s3://...``). ``store`` and
    ``mode``: as for :func:`open`. (Internal, not for callers: ``_what``, the function errors
    name, for the functions built on this one; ``_found``, the node and those above it as such
    a function read them, see :func:`create_group`.)"""
    zarr_format = format_of(zarr_format, zarr_version, _what)
    zarr_format = check_format(zarr_format, none=True)
    check_mode(mode, _what)
    st = _store(store, mode, storage_options, path=path, what=_what)
    path = node_path(path, _what)
    if mode in ("r", "r+", "a"):
        meta, found = _opened(st, path, zarr_format, use_consolidated, mode)
        _found = _found if _found is not None else found
        if isinstance(meta, GroupMeta):
            return _group(st, path, meta, mode, use_consolidated, _what)
        if meta is not None:
            raise ContainsArrayError(f"{_what}: the node at {_where(st, path)} is an array")
        _other_format(st, path, zarr_format, _what, mode, GroupNotFoundError, found)
        if mode != "a":
            raise GroupNotFoundError(f"{_what}: no group at {missing_at(st, path)}")
        _cannot_create(st, path, _what, "a group")
    if mode == "w-":
        _check_unused(st, path, _what)
    try:
        return create_group(st, path=path, zarr_format=zarr_format, attributes=attributes,
                            overwrite=(mode == "w"), _mode=mode, _found=_found, _what=_what)
    except NodeExistsError as exc:
        if mode != "a":
            raise
        created = exc
    return _reopen(created, lambda: open_group(st, mode="r+", path=path, zarr_format=zarr_format,
                                               use_consolidated=use_consolidated, _what=_what))


def _opened(st: Store, path: str, zarr_format: int | None, use_consolidated: bool | None,
            mode: str) -> tuple[ArrayMeta | GroupMeta | None, Ancestors | None]:
    """The node at ``path`` that ``open`` finds, and in mode ``a`` on a store whose requests
    wait on a network the nodes above it, read in the same batch for the creation that
    follows when there is none (one round trip, not two); elsewhere the node alone."""
    consolidated = use_consolidated is not False
    if mode != "a" or not st.latency_bound or st.read_only:
        return nodes.load_node(st, path, zarr_format, consolidated=consolidated), None
    found = Ancestors(st, path, consolidated_at=[path] if consolidated else ())
    return found.node(path, zarr_format, consolidated), found


def _other_format(st: Store, path: str, zarr_format: int | None, what: str, mode: str,
                  missing: type[NodeNotFoundError], found: Ancestors | None = None) -> None:
    """No node of ``zarr_format`` is at ``path``: when one of the other Zarr format is there,
    say so: mode ``a`` cannot create over it, and the others find nothing of that format
    (``missing``, the error of finding no node)."""
    if zarr_format is None:
        return
    meta = nodes.load_node(st, path, 5 - zarr_format, consolidated=False) if found is None \
        else found.node(path, 5 - zarr_format, False)
    if meta is None:
        return
    is_array = isinstance(meta, ArrayMeta)
    message = (f"{what}: the node at {_where(st, path)} is a Zarr v{meta.zarr_format} "
               f"{'array' if is_array else 'group'}, not Zarr v{zarr_format} as "
               f"zarr_format={zarr_format} asks")
    if mode == "a":
        raise node_exists(is_array, message)
    raise missing(message)


def _check_unused(st: Store, path: str, what: str) -> None:
    """Mode ``w-`` creates a node only where the store holds nothing: a node there, or objects
    below ``path`` without a node document there (the children of a group whose metadata is
    gone, or any other data), are in the way, as in zarr-python. Checked before the creation's
    arguments, as zarr-python checks: the node in the way is what is reported."""
    found = next(iter(st.list_prefix(f"{path}/" if path else "")), None)
    if found is None:
        return
    node = nodes.load_node(st, path)
    if node is not None:
        raise exists_error(st, path, "w-", what)(node)
    raise NodeExistsError(f"{what}: mode 'w-' creates a node at {_where(st, path)}, but "
                          f"the store holds {found!r} there (mode 'w' replaces it)")


def _reopen(created: NodeExistsError, reopen: Callable[[], Any]) -> Any:
    """Mode ``a`` found no node but could not create one: another writer made it meanwhile
    (open that), or something else is in the way (``created``, the creation's error)."""
    try:
        return reopen()
    except NodeNotFoundError:
        raise created from None


def _cannot_create(st: Store, path: str, what: str, node: str) -> None:
    """Mode ``a`` found no node: on a read-only store (an HTTP server's) it cannot make one."""
    if st.read_only:
        why = st.read_only_reason or "the store is read-only"
        raise ReadOnlyError(f"{what}: no {node.split(' ', 1)[1]} at {_where(st, path)}, and "
                            f"mode 'a' cannot create {node} there: {why}")


def _group(st: Store, path: str, meta: GroupMeta, mode: str,
           use_consolidated: bool | None, what: str = "open") -> Group:
    """The handle of an existing group; ``use_consolidated=True`` requires consolidated
    metadata, ``False`` ignores it."""
    if use_consolidated is False and meta.consolidated is not None:
        meta = GroupMeta(attributes=meta.attributes, zarr_format=meta.zarr_format,
                         extra=meta.extra)
    elif use_consolidated is True and meta.consolidated is None:
        raise MetadataError(f"{what}: the group at {_where(st, path)} has no consolidated "
                            f"metadata (write it with zarrx.consolidate_metadata)")
    return Group(st, path, meta, read_only=mode == "r")


@discards_on_failure
def open_array(store: StoreLike | None = None, *, mode: str | None = None,
               path: str | None = "", zarr_format: int | None = None,
               zarr_version: int | None = None, **kwargs: Any) -> Array:
    """Open (or, given ``shape`` in modes a/w/w-, create) the array at ``path``; other keywords
    are those of :func:`create`, which creates it. ``mode`` defaults to ``r`` for a read-only
    store, else ``a``. ``store`` and ``mode``: as for :func:`open`."""
    zarr_format = format_of(zarr_format, zarr_version, "open_array")
    check_keywords("open_array", kwargs, _ARRAY_KW | {"storage_options"})
    zarr_format = check_format(zarr_format, none=True)
    storage_options = kwargs.pop("storage_options", None)
    mode = _default_mode(store, mode)
    check_mode(mode, "open_array")
    st = _store(store, mode, storage_options, path=path, what="open_array")
    path = node_path(path, "open_array")
    if mode in ("r", "r+", "a"):
        meta = nodes.load_node(st, path, zarr_format)
        if isinstance(meta, ArrayMeta):
            return Array(st, path, meta, read_only=mode == "r",
                         write_empty_chunks=_write_empty_chunks(kwargs, "open_array"),
                         order=_memory_order(kwargs, meta, "open_array"))
        if meta is not None:
            raise ContainsGroupError(f"open_array: the node at {_where(st, path)} is a group")
        _other_format(st, path, zarr_format, "open_array", mode, ArrayNotFoundError)
        if mode != "a" or "shape" not in kwargs:
            raise ArrayNotFoundError(f"open_array: no array at {missing_at(st, path)}")
        _cannot_create(st, path, "open_array", "an array")
    if mode == "w-":
        _check_unused(st, path, "open_array")
    if "shape" not in kwargs:
        raise ArgumentTypeError(f"open_array: mode {mode!r} creates an array and needs shape=")
    try:
        return create(store=st, path=path, zarr_format=zarr_format,
                      overwrite=(mode == "w"), _mode=mode, _what="open_array", **kwargs)
    except NodeExistsError as exc:
        if mode != "a":
            raise
        created = exc
    return _reopen(created, lambda: open_array(st, mode="r+", path=path,
                                               zarr_format=zarr_format, **kwargs))


@discards_on_failure
@checked_call
def create_group(store: StoreLike | None = None, *, path: str | None = None,
                 zarr_format: int | None = None, attributes: dict | None = None,
                 overwrite: bool = False, storage_options: dict | None = None,
                 _mode: str = "w-", _found: Ancestors | None = None,
                 _what: str = "create_group") -> Group:
    """Create a group at ``path``; without ``zarr_format``, of the format of the group it goes
    into (:func:`~zarrx.creation.inherited_format`; zarr-python makes Zarr v3). (``_found``:
    the node and those above it, when a caller read them to decide the format; ``_what``: the
    function errors name, for the functions that create groups through this one.)"""
    overwrite = flag_arg(overwrite, _what, "overwrite")
    st = _store(store, "w", storage_options, path=path, replacing=overwrite, what=_what)
    path = node_path(path, _what, new=True)
    found = ancestors_for(st, path, _found, replacing=overwrite)
    zarr_format = inherited_format(st, path, zarr_format, found)
    zarr_format = check_format(zarr_format)
    # checked before anything is written: the groups above or the node replaced
    meta = GroupMeta(attributes=attributes_arg(attributes, _what), zarr_format=zarr_format)  # type: ignore[arg-type]
    prepare_node(st, path, overwrite, _mode, _what, zarr_format, found)
    nodes.save_node(st, path, meta, exists=None if overwrite
                    else exists_error(st, path, _mode, _what))
    return Group(st, path, meta)


@checked_call
def group(store: StoreLike | None = None, *, overwrite: bool = False, path: str | None = None,
          zarr_format: int | None = None, attributes: dict | None = None,
          storage_options: dict | None = None, zarr_version: int | None = None) -> Group:
    """Open the group at ``path``, creating it when missing (replacing whatever is there when
    ``overwrite``). ``storage_options`` configure the backend of a store URL."""
    zarr_format = format_of(zarr_format, zarr_version, "group")
    return open_group(store, mode="w" if flag_arg(overwrite, "group", "overwrite") else "a",
                      path=path,
                      zarr_format=zarr_format, attributes=attributes,
                      storage_options=storage_options, _what="group")


def zeros(shape: Any, store: StoreLike | None = None, *, _what: str = "zeros",
          **kwargs: Any) -> Array:
    """An array whose every cell reads as 0 (``create``'s keywords)."""
    refuse_keywords(_what, kwargs, ("fill_value",))
    return create(shape, store=store, fill_value=0, _what=_what, **kwargs)


def ones(shape: Any, store: StoreLike | None = None, *, _what: str = "ones",
          **kwargs: Any) -> Array:
    """An array whose every cell reads as 1 (stored as the fill value: nothing is written)."""
    refuse_keywords(_what, kwargs, ("fill_value",))
    return create(shape, store=store, fill_value=1, _what=_what, **kwargs)


def full(shape: Any, fill_value: Any, store: StoreLike | None = None, **kwargs: Any) -> Array:
    """An array whose every cell reads as ``fill_value`` (stored as the fill value: nothing is
    written; ``create``'s keywords)."""
    return create(shape, store=store, fill_value=fill_value, _what="full", **kwargs)


def empty(shape: Any, store: StoreLike | None = None, *, _what: str = "empty",
          **kwargs: Any) -> Array:
    """An array whose cells read as the fill value (``fill_value=``, default 0) until written."""
    return create(shape, store=store, _what=_what, **kwargs)


def zeros_like(a: Any, **kwargs: Any) -> Array:
    """``zeros`` with the shape, dtype, chunks, shards, codecs and Zarr format of ``a``;
    keywords override them."""
    refuse_keywords("zeros_like", kwargs, ("fill_value",))
    return zeros(**like_arguments(a, kwargs, fill=False), _what="zeros_like")


def ones_like(a: Any, **kwargs: Any) -> Array:
    """``ones`` with the shape, dtype, chunks, shards, codecs and Zarr format of ``a``;
    keywords override them."""
    refuse_keywords("ones_like", kwargs, ("fill_value",))
    return ones(**like_arguments(a, kwargs, fill=False), _what="ones_like")


_FROM_SOURCE = object()


def full_like(a: Any, fill_value: Any = _FROM_SOURCE, **kwargs: Any) -> Array:
    """An array like ``a`` whose cells read as ``fill_value``: by default the fill value of
    ``a`` when it is a zarrx :class:`Array` (required otherwise)."""
    if fill_value is not _FROM_SOURCE:
        kwargs["fill_value"] = fill_value
    elif not isinstance(a, Array):
        raise ArgumentTypeError(f"full_like: fill_value= is required when the source is not a "
                                f"zarrx Array (found {type(a).__name__})")
    return create(**like_arguments(a, kwargs, fill=True), _what="full_like")


def empty_like(a: Any, **kwargs: Any) -> Array:
    """An array like ``a`` whose cells read as its fill value (that of ``a`` when it is a zarrx
    :class:`Array`) until written."""
    return empty(**like_arguments(a, kwargs, fill=True), _what="empty_like")


# create's own ``path`` names the array (``name=`` is refused, as zarr-python refuses it)
_CREATE_ARRAY_KEYWORDS = (frozenset(inspect.signature(create_array).parameters)
                          - {"store", "name", "_found"})


@discards_on_failure
def create(shape: Any, *, store: StoreLike | None = None, path: str | None = None,
           chunks: Any = None, dtype: Any = None, compressor: Any = "auto",
           filters: Any = None, fill_value: Any = DEFAULT_FILL, order: str | None = None,
           dimension_separator: str | None = None, zarr_format: int | None = None,
           overwrite: bool = False, codecs: Any = None, chunk_shape: Any = None,
           zarr_version: int | None = None, _found: Ancestors | None = None,
           _what: str = "create", **kwargs: Any) -> Array:
    """The older ``zarr.create`` signature (one ``compressor``, ``chunks=None`` or ``True``
    for automatic chunks, ``dimension_separator``; Zarr v3 ``codecs`` and ``chunk_shape``),
    mapped onto :func:`create_array`, whose keywords it also takes. Without ``zarr_format``,
    the array takes the format of the group it goes into, as with :func:`create_array`."""
    from zarrx.codec_args import split_codecs

    zarr_format = format_of(zarr_format, zarr_version, _what)
    zarr_format = check_format(zarr_format, none=True)
    overwrite = flag_arg(overwrite, _what, "overwrite")
    mode = kwargs.pop("mode", None)
    mode = "a" if mode is None else mode
    check_mode(mode, _what)
    store = _store(store, "w", kwargs.pop("storage_options", None), path=path,
                   replacing=overwrite or mode == "w", what=_what)
    new_path = node_path(path, _what, "path", new=True)
    # read once, for the format and create_array's checks
    found = ancestors_for(store, new_path, _found,
                          replacing=overwrite or mode == "w")
    fmt = inherited_format(store, new_path, zarr_format, found)
    if dimension_separator is not None:
        kwargs["chunk_key_encoding"] = separator_encoding(
            dimension_separator, kwargs.get("chunk_key_encoding"), fmt)
    if chunk_shape is not None:
        chunks = chunk_shape
    if codecs is not None:
        if fmt != 3:
            raise ArgumentError(f"{_what}: codecs= is for Zarr v3; Zarr v2 arrays take "
                                "filters= and compressor=")
        if filters is not None or not named(compressor, "auto", "default") or \
                {"serializer", "compressors"} & set(kwargs):
            raise ArgumentError(f"{_what}: pass codecs= or filters=/serializer=/compressors=, "
                                "not both")
        parts = split_codecs(codecs, _what)
        filters, compressor = parts["filters"], parts["compressors"]
        kwargs["serializer"] = parts["serializer"]
    if mode == "r":
        raise ReadOnlyError(f"{_what}: mode 'r' opens read-only; an array cannot be created "
                            "with it")
    if mode == "w":
        overwrite = True
    unknown = sorted(set(kwargs) - _CREATE_ARRAY_KEYWORDS)
    if unknown:
        raise ArgumentTypeError(f"{_what}: unexpected keyword argument {unknown[0]!r} (zarrx "
                                f"takes create_array's keywords; see docs/guide/migrating.md)")
    if not named(compressor, "auto") and "compressors" in kwargs:
        raise ArgumentError(f"{_what}: pass compressors= or compressor=, not both")
    compressors = kwargs.pop("compressors", "auto") if named(compressor, "auto") else compressor
    if fmt == 2 and order is None:      # zarr-python's create: config's order is the stored one
        order = config_order(kwargs.get("config"), _what)
    return create_array(store, name=path, shape=shape, dtype=dtype,
                        chunks=create_chunks(chunks, shape),
                        compressors="auto" if named(compressors, "default") else compressors,
                        filters="auto" if filters is None else filters, fill_value=fill_value,
                        order=order, zarr_format=fmt, overwrite=overwrite, _found=found,
                        _what=_what, **kwargs)


def open_consolidated(store: StoreLike | None = None, *, mode: str = "a",
                      path: str | None = None, zarr_format: int | None = None,
                      use_consolidated: bool = True, **kwargs: Any) -> Group:
    """:func:`open_group` with ``use_consolidated=True``: an existing group must carry
    consolidated metadata (v2 ``.zmetadata`` or v3 inline); the default mode is ``a``, as in
    zarr-python."""
    if use_consolidated is not True:
        raise ArgumentTypeError("open_consolidated: use_consolidated must be True; use "
                                "open_group(use_consolidated=False) to ignore consolidated "
                                "metadata")
    check_keywords("open_consolidated", kwargs, {"attributes", "storage_options"})
    return open_group(store, mode=mode, path=path, zarr_format=zarr_format,
                      attributes=kwargs.get("attributes"), use_consolidated=True,
                      storage_options=kwargs.get("storage_options"), _what="open_consolidated")


@discards_on_failure
@checked_call
def consolidate_metadata(store: StoreLike, path: str | None = None,
                         zarr_format: int | None = None, *,
                         storage_options: dict | None = None) -> Group:
    """Write consolidated metadata for the hierarchy under ``path`` (v2: ``.zmetadata``; v3:
    inline ``consolidated_metadata`` in the group's ``zarr.json``) and return the group. With
    ``zarr_format``, the group must be of that format. Later metadata writes through the store
    keep it in step, at the store root or below it (:mod:`zarrx.metadata.nodes`)."""
    st = _store(store, "r+", storage_options, what="consolidate_metadata")
    path = node_path(path, "consolidate_metadata")
    zarr_format = check_format(zarr_format, none=True)
    if zarr_format is not None:
        node = nodes.load_node(st, path, zarr_format, consolidated=False)
        if isinstance(node, ArrayMeta):
            raise ContainsArrayError(f"consolidate_metadata: the node at {_where(st, path)} is "
                                     f"a Zarr v{zarr_format} array, not a group")
        if not isinstance(node, GroupMeta):
            raise GroupNotFoundError(f"consolidate_metadata: no Zarr v{zarr_format} group at "
                                    f"{_where(st, path)}")
    meta = nodes.consolidate(st, path, zarr_format)
    return Group(st, path, meta)
