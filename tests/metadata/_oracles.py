"""Helpers that make zarr-python and tensorstore write (and read) metadata, for interop tests."""
from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

zarr = pytest.importorskip("zarr")
ts = pytest.importorskip("tensorstore")

META_NAMES = ("zarr.json", ".zarray", ".zgroup", ".zattrs", ".zmetadata")


def zarr_docs(**kwargs: Any) -> dict[str, bytes]:
    """Metadata documents zarr-python writes for ``zarr.create_array(**kwargs)``."""
    d: dict = {}
    store = zarr.storage.MemoryStore(store_dict=d)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        arr = zarr.create_array(store=store, **kwargs)
    return {k: v.to_bytes() for k, v in d.items() if k.rsplit("/", 1)[-1] in META_NAMES}, arr


def zarr_tree(zarr_format: int) -> dict[str, bytes]:
    """A consolidated hierarchy written by zarr-python."""
    d: dict = {}
    store = zarr.storage.MemoryStore(store_dict=d)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = zarr.open_group(store, mode="w", zarr_format=zarr_format, attributes={"title": "t"})
        g.create_array("temperature", shape=(100,), dtype="i4", chunks=(10,),
                       attributes={"units": "K"})
        sub = g.create_group("measurements")
        sub.create_array("humidity", shape=(5, 6), dtype="f8", chunks=(2, 3),
                         fill_value=float("nan"))
        sub.create_array("scalar", shape=(), dtype="c16", fill_value=1 + 2j)
        zarr.consolidate_metadata(store)
    return {k: v.to_bytes() for k, v in d.items() if k.rsplit("/", 1)[-1] in META_NAMES}


def ts_docs(spec: dict[str, Any]) -> dict[str, bytes]:
    """Metadata documents tensorstore writes when creating ``spec`` in a memory kvstore."""
    full = {"kvstore": {"driver": "memory"}, **spec}
    t = ts.open(full, create=True).result()
    kv = t.kvstore
    return {k.decode(): kv.read(k).result().value for k in kv.list().result()
            if k.decode().rsplit("/", 1)[-1] in META_NAMES}


def write_tree(root: Path, docs: dict[str, Any]) -> None:
    for key, doc in docs.items():
        p = root / key
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(doc if isinstance(doc, bytes) else json.dumps(doc).encode())


def ts_open(root: Path, driver: str):
    return ts.open({"driver": driver, "kvstore": {"driver": "file", "path": str(root) + "/"}},
                   open=True).result()


def zarr_open(root: Path, zarr_format: int):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return zarr.open_array(zarr.storage.LocalStore(root), mode="r", zarr_format=zarr_format)
