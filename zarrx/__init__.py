"""zarrx: fast Zarr v2 and v3 arrays for Python.

    import zarrx
    z = zarrx.create_array("data.zarr", shape=(1000, 1000), dtype="f4", chunks=(100, 100))
    z[:10, :10] = 1.0
    zarrx.open("data.zarr", mode="r")[0, :5]
"""
from zarrx import config
from zarrx.api import (array, consolidate_metadata, create, create_array, create_group, empty,
                       empty_like, full, full_like, group, load, ones, ones_like, open,
                       open_array, open_consolidated, open_group, save, zeros, zeros_like)
from zarrx.array import Array
from zarrx.errors import (CodecError, IndexingError, MetadataError, NodeExistsError,
                          NodeNotFoundError, ReadOnlyError, ShardError, StoreError, ZarrError)
from zarrx.group import Group

__version__ = "0.1.0"
__all__ = [
    "Array", "Group", "config", "open", "open_array", "open_group", "create_array",
    "create_group", "group", "array", "create", "zeros", "ones", "full", "empty", "zeros_like",
    "ones_like", "full_like", "empty_like", "save", "load", "consolidate_metadata",
    "open_consolidated", "ZarrError", "MetadataError", "CodecError", "StoreError",
    "ShardError", "IndexingError", "NodeNotFoundError", "NodeExistsError", "ReadOnlyError",
    "convert", "copy", "check",
]
_TOOLS = ("convert", "copy", "check")


def __getattr__(name: str):
    if name in _TOOLS:                  # the toolbox loads on first use
        from zarrx import tools
        return getattr(tools, name)
    if name in ("codecs", "store", "storage"):
        import importlib
        return importlib.import_module(f"zarrx.{name}")
    raise AttributeError(name)
