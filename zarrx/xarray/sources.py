"""Where the dask-backed variables of a Dataset read their values from: the arrays of the
stores opened by engine "zarrx" (or "zarr") that their dask graphs read lazily.

``to_zarrx(..., mode="w")`` replaces the group before the dask graphs compute, so a variable
read lazily from an array at or below that group would read the arrays written in its place
(the fill value where nothing is written yet): :func:`refuse_replaced_sources` refuses such a
write before the store changes."""
from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import Any

from zarrx.errors import ArgumentError, ZarrError
from zarrx.store.base import Store

__all__ = ["lazy_sources", "refuse_replaced_sources", "store_identity"]

#: how deep a task's arguments (nested tuples, lists, dicts, wrappers) are searched
_DEPTH = 64


def store_identity(store: Store) -> object:
    """What two stores naming the same objects have in common (a local store: its folder as
    the system resolves it, links followed)."""
    from zarrx.store.local import LocalStore
    from zarrx.store.locks import _identity
    if isinstance(store, LocalStore):
        return ("LocalStore", os.path.realpath(store._root))
    return _identity(store)


def _source(obj: Any) -> tuple[Store, str] | None:
    """The store and array path a backend array of engine "zarrx" (or "zarr") reads."""
    from zarrx.xarray.backend import ZarrxBackendArray
    if isinstance(obj, ZarrxBackendArray):
        return obj.store, obj.path
    if type(obj).__name__ == "ZarrArrayWrapper" and hasattr(obj, "_array"):
        from zarrx.store.zarrpy import is_zarr_store, wrap_zarr_store
        arr = obj._array
        zstore, path = getattr(arr, "store", None), getattr(arr, "path", None)
        if not is_zarr_store(zstore) or not isinstance(path, str):
            return None
        try:
            return wrap_zarr_store(zstore, read_only=True), path
        except (ZarrError, OSError):
            return None
    return None


def lazy_sources(data: Any) -> Iterator[tuple[Store, str]]:
    """``(store, array path)`` of every stored array the dask array ``data`` reads: backend
    arrays held in its graph, as values or among its tasks' arguments (``inline_array=True``),
    below xarray's lazy-indexing wrappers."""
    graph = getattr(data, "__dask_graph__", None)
    if graph is None:
        return
    seen: set[int] = set()
    todo: list[tuple[Any, int]] = [(v, 0) for v in _roots(graph())]
    while todo:
        obj, depth = todo.pop()
        if depth > _DEPTH or id(obj) in seen or isinstance(obj, (str, bytes, int, float)):
            continue
        seen.add(id(obj))
        found = _source(obj)
        if found is not None:
            yield found
            continue
        todo.extend((child, depth + 1) for child in _children(obj))


def _roots(graph: Any) -> Iterable[Any]:
    """The values of a dask graph, without building the tasks of its blockwise layers (one a
    block): of those, their task and the arguments they give every block."""
    layers = getattr(graph, "layers", None)
    if not isinstance(layers, dict):
        return dict(graph).values()
    roots: list[Any] = []
    for layer in layers.values():
        if hasattr(layer, "indices") and hasattr(layer, "task"):     # a Blockwise layer
            roots.append(layer.task)
            roots.extend(dep for dep, ind in layer.indices if ind is None)
        else:
            roots.extend(dict(layer).values())
    return roots


def _children(obj: Any) -> Iterable[Any]:
    """What ``obj`` holds that may hold a backend array: a task's arguments, a data node's
    value, a container's items, a lazy-indexing wrapper's array."""
    if isinstance(obj, (tuple, list, set, frozenset)):
        return obj
    if isinstance(obj, dict):
        return obj.values()
    mod = type(obj).__module__ or ""
    if mod.startswith("dask."):
        args, kwargs = getattr(obj, "args", None), getattr(obj, "kwargs", None)
        if isinstance(args, tuple):
            return (*args, *(kwargs.values() if isinstance(kwargs, dict) else ()))
        if hasattr(obj, "value"):                       # a DataNode
            return (obj.value,)
        return ()
    from xarray.core.indexing import ExplicitlyIndexed
    # xarray's indexing adapters and lazy CF decoders (zarrx's time guard among them)
    if (isinstance(obj, ExplicitlyIndexed) or mod.startswith("xarray.")) \
            and hasattr(obj, "array"):
        return (obj.array,)
    return ()


def refuse_replaced_sources(variables: Iterable[tuple[Any, Any]], store: Store, path: str,
                            where: str) -> None:
    """ArgumentError naming the first of ``variables`` (``(name, Variable)``) that reads
    lazily (dask) an array at or below ``path`` in ``store``: the group there is to be
    replaced, before the dask graphs compute."""
    target = store_identity(store)
    prefix = path.strip("/")
    for name, var in variables:
        data = getattr(var, "data", None)
        if getattr(data, "__dask_graph__", None) is None:
            continue
        for source, array_path in lazy_sources(data):
            array_path = array_path.strip("/")
            inside = not prefix or array_path == prefix or array_path.startswith(prefix + "/")
            if inside and store_identity(source) == target:
                raise ArgumentError(
                    f"{where}: variable {name!r} is read lazily (dask) from the array "
                    f"{'/' + array_path!r}, which mode 'w' replaces (with the group "
                    f"{'/' + prefix!r}) before the variable is computed: its values would be "
                    f"lost; load() it first, or write to another group or store")
