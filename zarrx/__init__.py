"""zarrx: fast Zarr v2 and v3 arrays for Python.

    import zarrx
    z = zarrx.create_array("data.zarr", shape=(1000, 1000), dtype="f4", chunks=(100, 100))
    z[:10, :10] = 1.0
    zarrx.open("data.zarr", mode="r")[0, :5]
"""
from zarrx import config
from zarrx.api import (array, consolidate_metadata, create_array, create_group, empty, full,
                       group, load, open, open_array, open_group, save, zeros)
from zarrx.array import Array
from zarrx.errors import (CodecError, IndexingError, MetadataError, NodeExistsError,
                          NodeNotFoundError, ReadOnlyError, ShardError, StoreError, ZarrError)
from zarrx.group import Group

__version__ = "0.1.0"
__all__ = [
    "Array", "Group", "config", "open", "open_array", "open_group", "create_array",
    "create_group", "group", "array", "zeros", "full", "empty", "save", "load",
    "consolidate_metadata", "ZarrError", "MetadataError", "CodecError", "StoreError",
    "ShardError", "IndexingError", "NodeNotFoundError", "NodeExistsError", "ReadOnlyError",
]


def __getattr__(name: str):
    if name in ("codecs", "store"):
        import importlib
        return importlib.import_module(f"zarrx.{name}")
    raise AttributeError(name)
