"""zarrx: fast Zarr v2 and v3 arrays for Python."""
from zarrx.errors import (CodecError, IndexingError, MetadataError, NodeExistsError,
                          NodeNotFoundError, ReadOnlyError, ShardError, StoreError, ZarrError)

__version__ = "0.1.0"
__all__ = ["ZarrError", "MetadataError", "CodecError", "StoreError", "ShardError",
           "IndexingError", "NodeNotFoundError", "NodeExistsError", "ReadOnlyError"]
