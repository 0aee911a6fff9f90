"""Dask arrays read from and written to zarrx arrays (local threads, processes, distributed).

    import zarrx.dask
    x = zarrx.dask.from_zarrx("data.zarr")          # blocks aligned with shards, ~128 MiB
    zarrx.dask.to_zarrx(x * 2, "double.zarr", shards=(1024, 1024), chunks=(256, 256))

The names and arguments follow ``dask.array.from_zarr`` / ``to_zarr``; ``from_zarr`` and
``to_zarr`` are aliases. Everything reads and writes through zarrx; see ``docs/guide/dask.md``.
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np

from zarrx._compat import add_note
from zarrx.api import open_array
from zarrx.open_args import _ARRAY_KW
from zarrx.array import Array
from zarrx.dask.chunks import TARGET_BYTES, default_chunks, region_offset
from zarrx.dask.graph import array_to_dask, store_blocks
from zarrx.errors import (ArgumentError, ArgumentTypeError, ContainsArrayError, NodeExistsError,
                          unexpected_keyword)
from zarrx.store.call_stores import discards_on_failure
from zarrx.store.zip import ZipStore

__all__ = ["from_zarrx", "to_zarrx", "from_zarr", "to_zarr", "default_chunks", "TARGET_BYTES"]


def _store_kwargs(url: Any, storage_options: dict | None) -> dict:
    """``storage_options`` for opening ``url``; as in dask, they are ignored for a local path
    (a str or path without ``://``), so one call serves local and remote locations."""
    if storage_options is None:
        return {}
    if isinstance(url, (str, os.PathLike)):
        name = os.fspath(url)
        if isinstance(name, str) and "://" not in name:
            return {}
    return {"storage_options": storage_options}


def _check_location(url: Any, where: str) -> None:
    """Refuse what cannot name a store. Anything else (a path, a URL, a zarrx ``Store``, a
    dict, an fsspec mapper, an obstore or zarr-python store) is opened as
    :func:`zarrx.open_array` opens it, which names what it cannot use."""
    if url is None or isinstance(url, (bool, int, float, complex, bytes, list, tuple)):
        raise ArgumentTypeError(f"{where}: expected a path, URL, store or zarrx.Array, "
                                f"found {type(url).__name__}")


def _zarr_python_array(url: Any) -> bool:
    """Whether ``url`` is a zarr-python ``Array`` (which ``dask.array.from_zarr`` and
    ``to_zarr`` take): zarrx opens the array at its path in its store."""
    cls = type(url)
    return cls.__name__ == "Array" and cls.__module__.split(".")[0] == "zarr" \
        and hasattr(url, "store") and isinstance(getattr(url, "path", None), str)


def from_zarrx(url: Any, component: str | None = None, storage_options: dict | None = None,
               chunks: Any = None, name: str | None = None, inline_array: bool = False,
               **kwargs: Any) -> Any:
    """A dask array reading the zarrx array at ``url`` (a path or URL, a zarrx ``Store``,
    anything else :func:`zarrx.open_array` opens, such as a dict, an fsspec mapper or a
    zarr-python store, a :class:`zarrx.Array`, or a zarr-python ``Array``, read through zarrx
    at its path in its store); ``component`` is the array's path inside a group.

    ``chunks=None`` makes blocks of whole shards (or chunks when unsharded), merged up to about
    128 MiB; other values are what ``dask.array.from_array`` takes. ``kwargs`` go to
    :func:`zarrx.open_array` (``zarr_format=``...). ``storage_options`` go to the store of a
    URL and are ignored for a local path, as in dask."""
    if isinstance(url, Array):
        if component is not None:
            raise ArgumentError("from_zarrx: component= applies to a location, not to an Array")
        arr = url
    elif _zarr_python_array(url):
        if component is not None:
            raise ArgumentError("from_zarrx: component= applies to a location, not to an Array")
        kwargs.setdefault("mode", "r")
        arr = open_array(url.store, path=url.path, **kwargs)
    else:
        _check_location(url, "from_zarrx")
        kwargs.setdefault("mode", "r")
        arr = open_array(url, path=component or "", **_store_kwargs(url, storage_options),
                         **kwargs)
    return array_to_dask(arr, chunks, name=name, inline_array=inline_array)


@discards_on_failure
def to_zarrx(arr: Any, url: Any, component: str | None = None,
             storage_options: dict | None = None, region: Any = None, compute: bool = True,
             return_stored: bool = False, mode: str = "a", **create_array_kwargs: Any) -> Any:
    """Write the dask array ``arr`` to a zarrx array.

    ``url`` is a :class:`zarrx.Array` or a zarr-python ``Array`` (written in place through
    zarrx, optionally into ``region``, a tuple of slices), or a path, URL or store (anything :func:`zarrx.open_array` opens) where an
    array is created from ``arr``'s shape and dtype with ``create_array_kwargs``
    (``chunks``, ``shards``, ``compressors``,
    ``fill_value``, ``zarr_format``, ``dimension_names``...; by default the chunks are
    ``arr``'s block shape, as ``dask.array.to_zarr`` does). ``mode``: ``a`` or ``w-`` create
    (failing if an array exists), ``w`` replaces it, ``r+`` writes into an existing one;
    ``overwrite=True`` replaces it too, as in ``dask.array.to_zarr``.

    Blocks that do not align with the stored objects (shards, or chunks) are regrouped at their
    boundaries, so no two tasks write one object. Returns None, or a ``Delayed`` when
    ``compute=False``; ``return_stored=True`` returns a dask array reading what was written
    instead (the region only, in ``arr``'s chunks; written first unless ``compute=False``).
    A zip archive opened here (a path ending in ``.zip``) is put in place once written; when
    the write fails (a block that cannot be computed), it is discarded: the path stays as it
    was (with ``compute=False``, the Delayed's failure leaves the archive to be finished when
    it is collected)."""
    import dask.array as da

    if not isinstance(arr, da.Array):
        raise ArgumentTypeError(f"to_zarrx: expected a dask array, found {type(arr).__name__}")
    if any(np.isnan(s) for s in arr.shape):
        raise ArgumentError("to_zarrx: the dask array has unknown chunk sizes; call "
                            "compute_chunk_sizes() first")
    for key in create_array_kwargs:         # named as the function the caller called
        if key not in _ARRAY_KW | {"name", "overwrite"}:
            raise unexpected_keyword("to_zarrx", key, _ARRAY_KW | {
                "name", "overwrite", "component", "storage_options", "region", "compute",
                "return_stored", "mode"})
    if isinstance(url, Array) or _zarr_python_array(url):
        if component is not None or create_array_kwargs:
            raise ArgumentError("to_zarrx: component= and array-creation arguments apply to a "
                                "location, not to an existing Array")
        target = url if isinstance(url, Array) else \
            open_array(url.store, mode="r" if url.read_only else "r+", path=url.path)
    else:
        _check_location(url, "to_zarrx")
        target = _open_target(arr, url, component, storage_options, region, mode,
                              create_array_kwargs)
    result = store_blocks(arr, target, region, compute=compute)
    if not return_stored:
        if target is not url and isinstance(target.store, ZipStore) and \
                not target.store.read_only:
            # a zip archive opened here is put in place once written, not when the Delayed
            # holding it is dropped (with return_stored, the array returned reads from it)
            if not compute:
                return _then_close(result, target.store)
            target.store.close()
        return result
    # what was stored: the region, in blocks of arr's chunks (the blocks of the whole array
    # around it are cut at its edges, then left out)
    _, slices = region_offset(region, target.shape, "to_zarrx")
    blocks = tuple(tuple(([s.start] if s.start else []) + _spans(c, s.step)
                         + ([n - s.stop] if s.stop < n else [])) or (0,)
                   for n, s, c in zip(target.shape, slices, arr.chunks))
    if compute:
        return array_to_dask(target, blocks)[slices]
    return _read_after(target, blocks, result)[slices]


def _spans(counts: tuple[int, ...], step: int) -> list[int]:
    """Block sizes in the array under blocks of ``counts`` elements of a region taking every
    ``step``-th element: each block from its first element to its last, then the ``step - 1``
    elements up to the next block's first."""
    if step == 1:
        return list(counts)
    out: list[int] = []
    for c in counts:
        if c:
            if out:
                out.append(step - 1)
            out.append((c - 1) * step + 1)
    return out


def _read_after(target: Array, blocks: Any, write: Any) -> Any:
    """A dask array reading ``target`` whose every block waits for ``write`` (a Delayed)."""
    import itertools

    import dask.array as da
    from dask.highlevelgraph import HighLevelGraph

    from zarrx.dask.graph import BlockReader

    plain = array_to_dask(target, blocks)
    name = "stored-" + plain.name
    reader = BlockReader(target)
    starts = [np.concatenate(([0], np.cumsum(c)))[:-1].tolist() for c in plain.chunks]
    dsk = {}
    for idx in itertools.product(*(range(n) for n in plain.numblocks)):
        sel = tuple(slice(starts[a][i], starts[a][i] + plain.chunks[a][i])
                    for a, i in enumerate(idx))
        dsk[(name, *idx)] = (_read_block, write.key, reader, sel)
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=[write])
    return da.Array(graph, name, plain.chunks, meta=plain._meta)


def _then_close(write: Any, store: ZipStore) -> Any:
    """A Delayed that runs ``write`` (a Delayed), then closes ``store``."""
    from dask.delayed import Delayed
    from dask.highlevelgraph import HighLevelGraph

    name = "close-" + write.key
    graph = HighLevelGraph.from_collections(name, {name: (_close, write.key, store)},
                                            dependencies=[write])
    return Delayed(name, graph)


def _close(_: Any, store: ZipStore) -> None:
    store.close()


def _read_block(_: Any, reader: Any, selection: tuple) -> np.ndarray:
    return np.asarray(reader[selection])


def _open_target(arr: Any, url: Any, component: str | None, storage_options: dict | None,
                 region: Any, mode: str, kwargs: dict) -> Array:
    if component is not None and "name" in kwargs:
        raise ArgumentError(f"to_zarrx: component={component!r} and name={kwargs['name']!r} "
                            f"both give the array's path; pass only one")
    path = component if component is not None else kwargs.pop("name", None) or ""
    sk = _store_kwargs(url, storage_options)
    overwrite = kwargs.pop("overwrite", False)
    if not isinstance(overwrite, (bool, np.bool_)):
        raise ArgumentTypeError(f"to_zarrx: overwrite: expected True or False, found "
                                f"{overwrite!r}")
    if overwrite and mode in ("a", "w-"):       # dask's to_zarr: overwrite=True replaces
        mode = "w"
    if mode == "r":
        raise ArgumentError("to_zarrx: cannot use mode 'r' (read-only) to write; expected one "
                            "of a, w, w-, r+")
    if mode not in ("a", "w", "w-", "r+"):
        raise ArgumentError(f"to_zarrx: mode: expected one of a, w, w-, r+, found {mode!r}")
    if mode == "r+" or region is not None:
        if kwargs:
            raise ArgumentError(f"to_zarrx: writing into an existing array (mode {mode!r}"
                                f"{', region=' if region is not None else ''}) takes no creation "
                                f"arguments, found {sorted(kwargs)}")
        return open_array(url, mode="r+", path=path, **sk)
    kwargs.setdefault("shape", arr.shape)
    kwargs.setdefault("dtype", arr.dtype)
    if "chunks" not in kwargs:      # the block shape, as dask's to_zarr (also with shards=)
        kwargs["chunks"] = tuple(max(int(max(c, default=0)), 1) for c in arr.chunks)
    try:
        return open_array(url, mode="w" if mode == "w" else "w-", path=path, **sk, **kwargs)
    except NodeExistsError as exc:
        if mode == "w":
            raise
        into = ", or mode='r+' to write into it" if isinstance(exc, ContainsArrayError) else ""
        add_note(exc, f"to_zarrx: pass overwrite=True (or mode='w') to replace it{into}")
        raise


from_zarr = from_zarrx
to_zarr = to_zarrx
