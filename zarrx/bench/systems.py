"""The systems under test behind one small interface.

Each adapter creates a fresh store (in memory, or a new directory on the local file system for
``--store local``), creates an array for a case, writes and reads selections and sums the
stored bytes. ``configure()`` runs once per process, before any I/O: ``single`` limits every
system to one thread, ``default`` leaves each at its defaults.

A store *handle* is what ``new_store`` returns and every other method takes: for a local store
the directory's path (each call opens it anew, so nothing is carried over from the writer to the
reader), in memory the store object itself (tensorstore: a context and a kvstore spec).
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from importlib import metadata
from typing import Any

import numpy as np

from zarrx.bench.local import dir_usage, fresh_dir, remove_dir
from zarrx.bench.workload import Case

__all__ = ["SYSTEMS", "LABELS", "System", "TsHandle", "get_system", "importable"]

LABELS = {"zarrx": "zarrx", "zarr": "zarr-python", "tensorstore": "tensorstore",
          "zarrx-none": "zarrx consistency=none"}
_MODULES = {"zarrx": "zarrx", "zarr": "zarr", "tensorstore": "tensorstore",
            "zarrx-none": "zarrx"}


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


Shape = tuple[int, ...]


class System:
    """One implementation. Subclasses fill in the abstract methods.

    ``store`` is ``memory`` or ``local``; ``root`` is the directory that local stores are made
    in (one fresh directory per ``new_store``)."""

    name = ""

    def __init__(self, config: str, store: str = "memory", root: str = "") -> None:
        self.config = config
        self.store_kind = store
        self.root = root

    @property
    def local(self) -> bool:
        return self.store_kind == "local"

    def configure(self) -> None: ...

    def version(self) -> str:
        return _version(_MODULES[self.name])

    def new_store(self) -> Any:
        """A handle on an empty store: a new directory's path, or a new memory store."""
        return fresh_dir(self.root, self.name) if self.local else self.memory_store()

    def memory_store(self) -> Any:
        raise NotImplementedError

    def store_obj(self, handle: Any, read_only: bool = False) -> Any:
        """The library's store object for ``handle`` (a new one for every local call)."""
        raise NotImplementedError

    def create(self, store: Any, case: Case, shape: Shape, chunks: Shape, shards: Shape) -> Any:
        """A new float32 array of ``case``'s codecs (``shards`` used only if it is sharded)."""
        raise NotImplementedError

    def open(self, store: Any, writable: bool = False) -> Any:
        raise NotImplementedError

    def write(self, arr: Any, sel: Any, value: Any) -> None:
        arr[sel] = value

    def read(self, arr: Any, sel: Any) -> np.ndarray:
        return np.asarray(arr[sel])

    def stored_bytes(self, store: Any) -> int:
        """The sum of the sizes of all stored values (files), metadata included."""
        return dir_usage(store)[0] if self.local else self.memory_bytes(store)

    def memory_bytes(self, store: Any) -> int:
        raise NotImplementedError

    def discard(self, store: Any) -> None:
        """Free a store once it is measured (a local store's directory is removed)."""
        if self.local:
            remove_dir(store)


class Zarrx(System):
    name = "zarrx"

    def configure(self) -> None:
        import zarrx
        if self.config == "single":
            zarrx.config.set(threads=1)

    def memory_store(self) -> Any:
        from zarrx.store import MemoryStore
        return MemoryStore()

    def store_obj(self, handle: Any, read_only: bool = False) -> Any:
        if not self.local:
            return handle
        from zarrx.store import LocalStore
        return LocalStore(handle, read_only=read_only)

    def create(self, store: Any, case: Case, shape: Shape, chunks: Shape, shards: Shape) -> Any:
        import zarrx
        from zarrx.codecs import Blosc, Crc32c, Gzip, Zstd
        compressors: Any = {
            "raw": lambda: None, "crc32c": Crc32c, "gzip": lambda: Gzip(level=case.level),
            "zstd": lambda: Zstd(level=case.level),
            "blosc-lz4": lambda: Blosc(cname="lz4", clevel=case.level, shuffle="shuffle"),
        }[case.codec]()
        return zarrx.create_array(self.store_obj(store), shape=shape, dtype="float32",
                                  chunks=chunks, shards=shards if case.sharded else None,
                                  compressors=compressors, fill_value=0, zarr_format=3)

    def open(self, store: Any, writable: bool = False) -> Any:
        import zarrx
        return zarrx.open_array(self.store_obj(store, read_only=not writable),
                                mode="r+" if writable else "r")

    def memory_bytes(self, store: Any) -> int:
        return sum(store.getsize(k) or 0 for k in list(store.list_prefix("")))


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

    def memory_store(self) -> Any:
        import zarr
        return zarr.storage.MemoryStore()

    def store_obj(self, handle: Any, read_only: bool = False) -> Any:
        if not self.local:
            return handle
        import zarr
        return zarr.storage.LocalStore(handle, read_only=read_only)

    def create(self, store: Any, case: Case, shape: Shape, chunks: Shape, shards: Shape) -> Any:
        import zarr
        from zarr import codecs as zc
        compressors: Any = {
            "raw": lambda: None, "crc32c": lambda: [zc.Crc32cCodec()],
            "gzip": lambda: [zc.GzipCodec(level=case.level)],
            "zstd": lambda: [zc.ZstdCodec(level=case.level)],
            "blosc-lz4": lambda: [zc.BloscCodec(cname="lz4", clevel=case.level,
                                                shuffle="shuffle", typesize=4)],
        }[case.codec]()
        return zarr.create_array(store=self.store_obj(store), shape=shape, dtype="float32",
                                 chunks=chunks, shards=shards if case.sharded else None,
                                 serializer=zc.BytesCodec(), compressors=compressors,
                                 fill_value=0, zarr_format=3)

    def open(self, store: Any, writable: bool = False) -> Any:
        import zarr
        return zarr.open_array(self.store_obj(store, read_only=not writable),
                               mode="r+" if writable else "r")

    def memory_bytes(self, store: Any) -> int:
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


@dataclass(frozen=True)
class TsHandle:
    """A tensorstore store: the context (which holds a memory kvstore's contents) and the
    kvstore spec of the store's root."""

    context: Any
    kvstore: dict

    def at(self, path: str) -> dict:
        """The kvstore spec of ``path`` below the root (a node's directory)."""
        base = self.kvstore.get("path", "")
        return {**self.kvstore, "path": f"{base}{path.strip('/')}/" if path else base}


class TensorStore(System):
    name = "tensorstore"

    def configure(self) -> None:
        import tensorstore  # noqa: F401 - fail early when missing

    def version(self) -> str:
        return _version("tensorstore")

    def context(self) -> Any:
        """A fresh context: a fresh memory kvstore, an empty cache pool. Files are not synced
        after writes (``file_io_sync``), like zarrx's and zarr-python's local stores."""
        import tensorstore as ts
        spec: dict = {"file_io_sync": False}
        if self.config == "single":
            spec |= {"data_copy_concurrency": {"limit": 1}, "file_io_concurrency": {"limit": 1}}
        return ts.Context(spec)

    def new_store(self) -> Any:
        if self.local:
            path = fresh_dir(self.root, self.name)
            return TsHandle(self.context(), {"driver": "file", "path": path + "/"})
        return TsHandle(self.context(), {"driver": "memory"})

    def create(self, store: Any, case: Case, shape: Shape, chunks: Shape, shards: Shape) -> Any:
        import tensorstore as ts
        codecs = _ts_codecs(case)
        grid = chunks
        if case.sharded:
            grid = shards
            codecs = [{"name": "sharding_indexed", "configuration": {
                "chunk_shape": list(chunks), "codecs": codecs,
                "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                 {"name": "crc32c"}],
                "index_location": "end"}}]
        meta = {"shape": list(shape), "data_type": "float32", "fill_value": 0,
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(grid)}},
                "chunk_key_encoding": {"name": "default"}, "codecs": codecs}
        spec = {"driver": "zarr3", "kvstore": store.kvstore, "metadata": meta}
        return ts.open(spec, create=True, context=store.context).result()

    def open(self, store: Any, writable: bool = False) -> Any:
        import tensorstore as ts
        spec = {"driver": "zarr3", "kvstore": store.kvstore}
        return ts.open(spec, open=True, read=True, write=writable,
                       context=store.context).result()

    def write(self, arr: Any, sel: Any, value: Any) -> None:
        arr[sel].write(value).result()

    def read(self, arr: Any, sel: Any) -> np.ndarray:
        return arr[sel].read().result()

    def stored_bytes(self, store: Any) -> int:
        if self.local:
            return dir_usage(store.kvstore["path"])[0]
        import tensorstore as ts
        kv = ts.KvStore.open(store.kvstore, context=store.context).result()
        return sum(len(kv.read(k).result().value) for k in kv.list().result())

    def discard(self, store: Any) -> None:
        if self.local:
            remove_dir(store.kvstore["path"])


class ZarrxNoChecks(Zarrx):
    """zarrx with ``consistency="none"`` (no generation checks on writes), run beside plain
    zarrx (``--systems zarrx,zarrx-none``) to measure what the consistency guarantees cost."""
    name = "zarrx-none"

    def configure(self) -> None:
        import zarrx
        super().configure()
        zarrx.config.set(consistency="none")


SYSTEMS: dict[str, type[System]] = {"zarrx": Zarrx, "zarr": ZarrPython, "tensorstore": TensorStore,
                                    "zarrx-none": ZarrxNoChecks}


def get_system(name: str, config: str, store: str = "memory", root: str = "") -> System:
    """The adapter of system ``name`` in configuration ``config`` on ``store`` stores."""
    return SYSTEMS[name](config, store, root)
