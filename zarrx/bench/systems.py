"""The systems under test behind one small interface.

Each adapter creates a fresh in-memory store, creates an array for a case, writes and reads
selections and sums the stored bytes. ``configure(config)`` runs once per process, before any
I/O: ``single`` limits every system to one thread, ``default`` leaves each at its defaults.
"""
from __future__ import annotations

import importlib
from importlib import metadata
from typing import Any

import numpy as np

from zarrx.bench.workload import Case

__all__ = ["SYSTEMS", "LABELS", "System", "get_system", "importable"]

LABELS = {"zarrx": "zarrx", "zarr": "zarr-python", "tensorstore": "tensorstore"}
_MODULES = {"zarrx": "zarrx", "zarr": "zarr", "tensorstore": "tensorstore"}


def importable(name: str) -> str | None:
    """None when system ``name`` can be imported, else the reason it cannot."""
    try:
        importlib.import_module(_MODULES[name])
    except Exception as exc:  # noqa: BLE001 - any import failure means "skip this system"
        return f"{type(exc).__name__}: {exc}"
    return None


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        mod = importlib.import_module(dist)
        return str(getattr(mod, "__version__", "unknown"))


class System:
    """One implementation. Subclasses fill in the abstract methods."""

    name = ""

    def __init__(self, config: str) -> None:
        self.config = config

    def configure(self) -> None: ...

    def version(self) -> str:
        return _version(_MODULES[self.name])

    def new_store(self) -> Any:
        raise NotImplementedError

    def create(self, store: Any, case: Case, size: int, chunk: int, shard: int) -> Any:
        raise NotImplementedError

    def open(self, store: Any, writable: bool = False) -> Any:
        raise NotImplementedError

    def write(self, arr: Any, sel: Any, value: Any) -> None:
        arr[sel] = value

    def read(self, arr: Any, sel: Any) -> np.ndarray:
        return np.asarray(arr[sel])

    def stored_bytes(self, store: Any) -> int:
        raise NotImplementedError


class Zarrx(System):
    name = "zarrx"

    def configure(self) -> None:
        import zarrx
        if self.config == "single":
            zarrx.config.set(threads=1)

    def new_store(self) -> Any:
        from zarrx.store import MemoryStore
        return MemoryStore()

    def create(self, store: Any, case: Case, size: int, chunk: int, shard: int) -> Any:
        import zarrx
        from zarrx.codecs import Blosc, Crc32c, Gzip, Zstd
        compressors: Any = {
            "raw": lambda: None, "crc32c": Crc32c, "gzip": lambda: Gzip(level=case.level),
            "zstd": lambda: Zstd(level=case.level),
            "blosc-lz4": lambda: Blosc(cname="lz4", clevel=case.level, shuffle="shuffle"),
        }[case.codec]()
        return zarrx.create_array(store, shape=(size, size), dtype="float32",
                                  chunks=(chunk, chunk),
                                  shards=(shard, shard) if case.sharded else None,
                                  compressors=compressors, fill_value=0, zarr_format=3)

    def open(self, store: Any, writable: bool = False) -> Any:
        import zarrx
        return zarrx.open_array(store, mode="r+" if writable else "r")

    def stored_bytes(self, store: Any) -> int:
        return sum(len(store.get(k) or b"") for k in list(store.list_prefix("")))


class ZarrPython(System):
    name = "zarr"

    def configure(self) -> None:
        import zarr
        if self.config == "single":
            zarr.config.set({"threading.max_workers": 1, "async.concurrency": 1})
            try:                      # numcodecs' blosc keeps its own global thread count
                from numcodecs import blosc
                blosc.set_nthreads(1)
                blosc.use_threads = False
            except Exception:  # noqa: BLE001 - blosc support is optional in numcodecs
                pass

    def new_store(self) -> Any:
        import zarr
        return zarr.storage.MemoryStore()

    def create(self, store: Any, case: Case, size: int, chunk: int, shard: int) -> Any:
        import zarr
        from zarr import codecs as zc
        compressors: Any = {
            "raw": lambda: None, "crc32c": lambda: [zc.Crc32cCodec()],
            "gzip": lambda: [zc.GzipCodec(level=case.level)],
            "zstd": lambda: [zc.ZstdCodec(level=case.level)],
            "blosc-lz4": lambda: [zc.BloscCodec(cname="lz4", clevel=case.level,
                                                shuffle="shuffle", typesize=4)],
        }[case.codec]()
        return zarr.create_array(store=store, shape=(size, size), dtype="float32",
                                 chunks=(chunk, chunk),
                                 shards=(shard, shard) if case.sharded else None,
                                 serializer=zc.BytesCodec(), compressors=compressors,
                                 fill_value=0, zarr_format=3)

    def open(self, store: Any, writable: bool = False) -> Any:
        import zarr
        return zarr.open_array(store, mode="r+" if writable else "r")

    def stored_bytes(self, store: Any) -> int:
        return sum(len(v) for v in store._store_dict.values())


def _ts_codecs(case: Case) -> list[dict]:
    out: list[dict] = [{"name": "bytes", "configuration": {"endian": "little"}}]
    if case.codec == "crc32c":
        out.append({"name": "crc32c"})
    elif case.codec == "gzip":
        out.append({"name": "gzip", "configuration": {"level": case.level}})
    elif case.codec == "zstd":
        out.append({"name": "zstd", "configuration": {"level": case.level or 0}})
    elif case.codec == "blosc-lz4":
        out.append({"name": "blosc", "configuration": {
            "cname": "lz4", "clevel": case.level or 5, "shuffle": "shuffle", "typesize": 4,
            "blocksize": 0}})
    return out


class TensorStore(System):
    name = "tensorstore"

    def configure(self) -> None:
        import tensorstore  # noqa: F401 - fail early when missing

    def version(self) -> str:
        return _version("tensorstore")

    def new_store(self) -> Any:
        import tensorstore as ts
        spec: dict = {}
        if self.config == "single":
            spec = {"data_copy_concurrency": {"limit": 1}, "file_io_concurrency": {"limit": 1}}
        return ts.Context(spec)          # a fresh context holds a fresh memory kvstore

    def create(self, store: Any, case: Case, size: int, chunk: int, shard: int) -> Any:
        import tensorstore as ts
        codecs = _ts_codecs(case)
        grid = chunk
        if case.sharded:
            grid = shard
            codecs = [{"name": "sharding_indexed", "configuration": {
                "chunk_shape": [chunk, chunk], "codecs": codecs,
                "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                 {"name": "crc32c"}],
                "index_location": "end"}}]
        meta = {"shape": [size, size], "data_type": "float32", "fill_value": 0,
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [grid, grid]}},
                "chunk_key_encoding": {"name": "default"}, "codecs": codecs}
        spec = {"driver": "zarr3", "kvstore": {"driver": "memory"}, "metadata": meta}
        return ts.open(spec, create=True, context=store).result()

    def open(self, store: Any, writable: bool = False) -> Any:
        import tensorstore as ts
        spec = {"driver": "zarr3", "kvstore": {"driver": "memory"}}
        return ts.open(spec, open=True, read=True, write=writable, context=store).result()

    def write(self, arr: Any, sel: Any, value: Any) -> None:
        arr[sel].write(value).result()

    def read(self, arr: Any, sel: Any) -> np.ndarray:
        return arr[sel].read().result()

    def stored_bytes(self, store: Any) -> int:
        import tensorstore as ts
        kv = ts.KvStore.open({"driver": "memory"}, context=store).result()
        return sum(len(kv.read(k).result().value) for k in kv.list().result())


SYSTEMS: dict[str, type[System]] = {"zarrx": Zarrx, "zarr": ZarrPython, "tensorstore": TensorStore}


def get_system(name: str, config: str) -> System:
    return SYSTEMS[name](config)
