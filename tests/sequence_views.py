"""What tests/test_parity_sequence_modes.py compares of two hierarchies, one written by zarrx
and one by zarr-python: plain values standing for nodes, items, fill values and codecs (NaN
equal to itself, -0.0 apart from 0.0), the objects a store holds, and what each library reads
of a store (a memory store's objects copied into a store of the reading library)."""
from __future__ import annotations

import json
import os
import random
import shutil
from typing import Any

import numpy as np
import pytest

import zarrx
from zarrx.store import MemoryStore

zarr = pytest.importorskip("zarr")
from zarr.core.buffer import default_buffer_prototype  # noqa: E402

BUILTINS = (KeyError, IndexError, TypeError, ValueError, OverflowError, FileNotFoundError,
            FileExistsError, NotImplementedError, PermissionError)
# zarr-python 3.1's group methods (create_array, require_array, ...) give a new Zarr v2 array
# this compressor; its create_array, create and zarrx give zstd (docs/guide/migrating.md)
GROUP_V2_BLOSC = {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}


def values(r: random.Random, dtype: Any, shape: tuple[int, ...]) -> np.ndarray:
    n = int(np.prod(shape))
    if dtype is str or dtype == "U3":
        v = np.array([r.choice(["", "x", "yz"]) for _ in range(n)], dtype="U3")
    elif dtype == "S2":
        v = np.array([r.choice([b"", b"p", b"qr"]) for _ in range(n)], "S2")
    elif dtype == "bool":
        v = np.array([r.random() < 0.5 for _ in range(n)], bool)
    elif np.dtype(dtype).kind in "mM":
        v = np.array([r.randint(0, 9) for _ in range(n)]).astype(dtype)
    else:
        v = np.array([r.choice([0, 1, 5, 7]) for _ in range(n)]).astype(dtype)
    return v.reshape(shape)


def classes(exc: BaseException) -> tuple[str, ...]:
    """The builtin exception classes ``exc`` is."""
    return tuple(sorted(b.__name__ for b in BUILTINS if isinstance(exc, b)))


def dtype_name(dt: Any) -> str:
    dt = dt.to_native_dtype() if hasattr(dt, "to_native_dtype") else np.dtype(dt)
    return "str" if dt.kind in "TO" else dt.str


def fill_view(f: Any) -> Any:
    a = np.asarray(f)
    if a.dtype.kind in "fc":
        c = complex(a.item())
        return ("f", repr(c.real), repr(c.imag))
    if a.dtype.kind in "mM":
        return ("t", str(a))
    if a.dtype.kind in "SUTO":
        return ("s", a.item() if isinstance(a.item(), bytes) else str(a.item()))
    return ("v", a.item())


def data_view(x: Any) -> Any:
    a = np.asarray(x)
    if a.dtype.kind in "TO":
        return ("str", a.shape, [str(v) for v in a.reshape(-1).tolist()])
    if a.dtype.kind in "SU":
        return (a.dtype.kind, a.shape, a.tolist())
    a = a.astype(a.dtype.newbyteorder("="))
    if a.dtype.kind in "fc":
        return (a.dtype.str, a.shape, [repr(v) for v in a.reshape(-1).tolist()])
    if a.dtype.kind in "mM":
        return (a.dtype.str, a.shape, a.astype("i8").tolist())
    return (a.dtype.str, a.shape, a.tolist())


def codecs_view(a: Any) -> Any:
    md = a.metadata.to_dict()
    if md["zarr_format"] == 2:
        comp = md.get("compressor")
        comp = {"id": "zstd", "level": 0} if comp == GROUP_V2_BLOSC else comp
        return ("v2", md.get("order"), json.dumps(comp, sort_keys=True),
                json.dumps(md.get("filters"), sort_keys=True), md.get("dimension_separator"))
    return ("v3", json.dumps(md.get("codecs"), sort_keys=True, default=str),
            json.dumps(md.get("chunk_key_encoding"), sort_keys=True, default=str))


def view(x: Any, deep: bool = True) -> Any:
    """A node as plain values (with its codecs and items when ``deep``), or another result."""
    if isinstance(x, (zarr.Array, zarrx.Array)):
        fmt = x.metadata.zarr_format
        names = x.metadata.dimension_names if fmt == 3 else None
        out = ("array", x.path, tuple(x.shape), tuple(x.chunks), x.shards, dtype_name(x.dtype),
               fill_view(x.fill_value), dict(x.attrs), fmt, names and tuple(names), x.order)
        deeper = (codecs_view(x), data_view(x[...]), x.nchunks_initialized) if deep else ()
        return out + deeper
    if isinstance(x, (zarr.Group, zarrx.Group)):
        return ("group", x.path, dict(x.attrs), x.metadata.zarr_format)
    if isinstance(x, (tuple, list)):
        return [view(v, deep) for v in x]
    if isinstance(x, dict):
        return sorted((k, view(v, deep)) for k, v in x.items())
    if isinstance(x, (np.ndarray, np.generic)):
        return data_view(x)
    return x


def snapshot(lib: Any, store: Any, use_consolidated: bool | None = False) -> Any:
    """Every node ``lib`` reads in ``store`` (by default without consolidated metadata),
    deeply."""
    try:
        g = lib.open_group(store, mode="r", use_consolidated=use_consolidated)
    except Exception as exc:  # noqa: BLE001 - compared
        try:
            return ("root array", view(lib.open_array(store, mode="r")))
        except Exception as exc2:  # noqa: BLE001 - compared
            return ("nothing", classes(exc), classes(exc2))
    return ("group", view(g), sorted((k, view(v)) for k, v in g.members(max_depth=None)))


def contents(store: Any) -> dict[str, bytes]:
    """The objects of a directory, a zarrx MemoryStore or a zarr-python MemoryStore."""
    if isinstance(store, str):
        out = {}
        for folder, _, files in os.walk(store):
            for name in files:
                full = os.path.join(folder, name)
                with open(full, "rb") as f:
                    out[os.path.relpath(full, store).replace(os.sep, "/")] = f.read()
        return out
    if isinstance(store, MemoryStore):
        return {k: bytes(store.get(k)) for k in store.list_prefix("")}
    return {k: v.to_bytes() for k, v in store._store_dict.items()}


def _zarr_python_memory(data: dict[str, bytes]) -> Any:
    make = default_buffer_prototype().buffer.from_bytes
    return zarr.storage.MemoryStore({k: make(v) for k, v in data.items()})


def reader_store(lib: Any, store: Any) -> Any:
    """What ``lib`` opens to read ``store``: the directory, or a copy of its objects."""
    if isinstance(store, str):
        return store
    data = contents(store)
    return MemoryStore(data) if lib is zarrx else _zarr_python_memory(data)


def replace_contents(dst: Any, src: Any) -> None:
    """Make ``dst`` (zarr-python's store) hold ``src``'s (zarrx's) objects."""
    if isinstance(dst, str):
        shutil.rmtree(dst)
        shutil.copytree(src, dst)
    else:
        dst._store_dict.clear()
        dst._store_dict.update(_zarr_python_memory(contents(src))._store_dict)


def tensorstore_differences(root: str, paths: list[str]) -> list[str]:
    """The arrays below the directory ``root`` (of numbers, unsharded) that tensorstore
    fails to open or reads otherwise than zarrx."""
    ts = pytest.importorskip("tensorstore")
    found = []
    for path in paths:
        a = zarrx.open_array(root, path=path, mode="r")
        if a.dtype.kind not in "biufc" or a.shards:
            continue
        spec = {"driver": "zarr3" if a.metadata.zarr_format == 3 else "zarr",
                "kvstore": {"driver": "file", "path": os.path.join(root, path)}}
        try:
            got = ts.open(spec, open=True).result().read().result()
        except Exception as exc:  # noqa: BLE001 - reported
            found.append(f"{path}: tensorstore cannot open it: {exc}")
            continue
        if data_view(got) != data_view(a[...]):
            found.append(f"{path}: tensorstore reads {data_view(got)}, zarrx "
                         f"{data_view(a[...])}")
    return found


def first_difference(a: Any, b: Any) -> str:
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        if len(a) == len(b) and type(a) is type(b) and isinstance(a, tuple):
            for x, y in zip(a, b):
                if x != y:
                    return first_difference(x, y)
        only_a = [x for x in a if x not in b]
        only_b = [x for x in b if x not in a]
        return f"zarr-python's has {only_a[:3]}, the other {only_b[:3]}"
    return f"zarr-python's {a!r}, the other {b!r}"
