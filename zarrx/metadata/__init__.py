"""Zarr metadata: the version-blind model and the v2 / v3 documents it is read from and written to.

Parse functions take a document (bytes, text or an already parsed dict) and the store key it
came from; every malformed document raises ``MetadataError`` naming that key, the JSON path of
the field, what was found and what was expected.
"""
from __future__ import annotations

from zarrx.metadata.consolidated import parse_zmetadata, serialize_zmetadata, with_consolidated
from zarrx.metadata.dtype_input import resolve_dtype
from zarrx.metadata.dtypes import category, parse_dtype_v2, parse_dtype_v3
from zarrx.metadata.fill import default_fill, fill_json, parse_fill, same_fill
from zarrx.metadata.grid import chunk_edges, grid_shape
from zarrx.metadata.json import dumps, load
from zarrx.metadata.make import make_array_meta
from zarrx.metadata.model import (ArrayMeta, ChunkGrid, CodecSpec, DataType, GroupMeta,
                                  KeyEncoding, RectilinearGrid, RegularGrid, ShardLevel, V2Codecs)
from zarrx.metadata.v2 import parse_array_v2, parse_group_v2, serialize_v2
from zarrx.metadata.v3 import parse_array_v3, parse_group_v3, parse_v3, serialize_v3

__all__ = [
    "ArrayMeta", "GroupMeta", "DataType", "CodecSpec", "ChunkGrid", "RegularGrid",
    "RectilinearGrid", "KeyEncoding", "ShardLevel", "V2Codecs",
    "parse_array_v3", "parse_group_v3", "parse_v3", "serialize_v3",
    "parse_array_v2", "parse_group_v2", "serialize_v2",
    "parse_zmetadata", "serialize_zmetadata", "with_consolidated",
    "make_array_meta", "dumps", "load", "chunk_edges", "grid_shape",
    "parse_dtype_v3", "parse_dtype_v2", "resolve_dtype", "category",
    "parse_fill", "fill_json", "default_fill", "same_fill",
]
