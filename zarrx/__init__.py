"""zarrx: fast Zarr v2 and v3 arrays for Python.

    import zarrx
    z = zarrx.create_array("data.zarr", shape=(1000, 1000), dtype="f4", chunks=(100, 100))
    z[:10, :10] = 1.0
    zarrx.open("data.zarr", mode="r")[0, :5]
"""
from zarrx import config
from zarrx.api import (consolidate_metadata, create, create_array, create_group, empty,
                       empty_like, full, full_like, group, ones, ones_like, open, open_array,
                       open_consolidated, open_group, zeros, zeros_like)
from zarrx.array import Array
from zarrx.convenience import (array, create_hierarchy, from_array, load, save, save_array,
                               save_group, tree)
from zarrx.errors import (ArgumentDecodeError, ArgumentEncodeError, ArgumentError,
                          ArgumentKeyError, ArgumentOverflowError,
                          ArgumentTypeError, CodecError,
                          DataTypeError,
                          IndexingError, IndexingValueError, MetadataError, NodeExistsError, NodeMismatchError,
                          NodeNotFoundError, ReadOnlyError, SelectionSizeError, ShardError, StoreError,
                          ZarrError)
from zarrx.group import Group
from zarrx.info import print_debug_info

__version__ = "0.1.0"
__all__ = [
    "Array", "Group", "config", "open", "open_array", "open_group", "create_array",
    "create_group", "group", "array", "create", "zeros", "ones", "full", "empty", "zeros_like",
    "ones_like", "full_like", "empty_like", "save", "save_array", "save_group", "load",
    "from_array", "create_hierarchy", "consolidate_metadata", "open_consolidated", "tree",
    "print_debug_info",
    "ZarrError", "MetadataError", "CodecError", "StoreError", "ShardError", "IndexingError",
    "IndexingValueError", "SelectionSizeError", "NodeNotFoundError", "NodeExistsError", "NodeMismatchError", "ReadOnlyError",
    "ArgumentError", "ArgumentTypeError", "ArgumentKeyError", "ArgumentOverflowError",
    "ArgumentEncodeError", "ArgumentDecodeError",
    "DataTypeError",
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
